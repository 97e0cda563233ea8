//! What plugin authors and models read: errors that name tools as clients
//! see them and suggest the right name, load failures that say what to do
//! and fail `corral list`, and a log level that shows plugins' own logs.
//! Each through the real binary and real plugins.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;
use support::{Server, example, folder_with, test_cache_dir};

/// Runs `corral ARGS`, with the tests' compile cache.
fn corral(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(args)
        .arg(dir)
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .env_remove("RUST_LOG")
        .env_remove("CORRAL_LOG")
        .output()
        .unwrap()
}

/// Runs `corral call --log-level LEVEL DIR TOOL_AND_ARGUMENTS...`, with the
/// tests' compile cache.
fn corral_call(dir: &Path, level: &str, tool_and_arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(["call", "--log-level", level])
        .arg(dir)
        .args(tool_and_arguments)
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A folder with calc twice: every tool is served with its plugin's prefix.
fn two_calcs() -> tempfile::TempDir {
    folder_with(&[
        ("calc.wasm", &example("calc")),
        ("abacus.wasm", &example("calc")),
    ])
}

/// `corral componentize`, the fix named above, says what a module lacks:
/// here the contract's first export, with the world it was checked against.
#[test]
fn componentize_names_the_export_a_module_lacks_and_the_world() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(["componentize", "core.wasm", "out.wasm"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("cannot make a component of core.wasm")
            && text.contains("it does not implement the world `plugin` (`--world` names another)")
            && text.contains("`corral:plugin/tools@0.3.0` function `list`"),
        "{text}"
    );
    assert!(!dir.path().join("out.wasm").exists());
}

#[test]
fn a_core_module_is_named_as_one_with_the_command_that_fixes_it_and_fails_list() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    // The smallest core module: the magic number and version 1.
    std::fs::write(dir.path().join("core.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let output = corral(&["list"], dir.path());
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("core WebAssembly module, not a component")
            && text.contains("corral componentize MODULE.wasm COMPONENT.wasm"),
        "{text}"
    );
    assert!(
        text.contains("1 plugin(s) failed to load: core.wasm"),
        "{text}"
    );
    // The plugins that load are still listed.
    assert!(String::from_utf8_lossy(&output.stdout).contains("add"));
    // A folder where everything loads lists with status 0.
    std::fs::remove_file(dir.path().join("core.wasm")).unwrap();
    let output = corral(&["list"], dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
}

/// A file that is not WebAssembly at all (text, a download's error page, an
/// empty file) is told in one line by `list`, `call` and `serve`, where the
/// parser's own message ran over a dozen lines of pretty-printed bytes.
#[test]
fn a_file_that_is_not_a_component_is_reported_in_one_line() {
    const ONE_LINE: &str =
        "not a valid WebAssembly component: it does not start with the wasm magic bytes (\\0asm)";
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    std::fs::write(
        dir.path().join("notes.wasm"),
        "# my notes\nnot wasm at all\n",
    )
    .unwrap();

    let output = corral(&["list"], dir.path());
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| line.contains(ONE_LINE))
        .collect();
    assert!(
        lines.len() == 1 && lines[0].contains("notes.wasm"),
        "{text}"
    );
    assert!(
        !text.contains("0x61") && !text.contains("magic header"),
        "{text}"
    );

    let output = corral_call(dir.path(), "off", &["note", "{}"]);
    let text = stderr(&output);
    assert!(
        text.contains(&format!("  notes.wasm: {ONE_LINE}")) && !text.contains("0x61"),
        "{text}"
    );

    // Served, the other plugins answer and the log says it once, in a line.
    let mut server = Server::initialized(dir.path(), "2025-11-25");
    let tools = server.request("tools/list", json!({}));
    assert!(
        tools["result"]["tools"].to_string().contains("\"add\""),
        "{tools}"
    );
    support::wait_for_stderr(&server, ONE_LINE, 1);
    let log = server.stderr();
    assert!(
        !log.contains("0x61") && !log.contains("magic header"),
        "{log}"
    );
}

#[test]
fn an_unknown_tool_on_the_command_line_suggests_the_served_names() {
    let dir = two_calcs();
    let output = corral_call(dir.path(), "error", &["add", r#"{"a": 1, "b": 2}"#]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains(
            "unknown tool `add` (2 plugins offer a tool `add`, so each is served with its plugin's name in front: `abacus_add`, `calc_add`)"
        ),
        "{text}"
    );
}

/// A tool that is missing because its plugin failed to load: the error
/// says which plugin failed and why, not only that the tool is unknown.
#[test]
fn an_unknown_tool_names_the_plugins_that_failed_to_load_and_why() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    std::fs::write(dir.path().join("files.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let output = corral_call(
        dir.path(),
        "off",
        &["read_file", r#"{"path": "notes.txt"}"#],
    );
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains(
            "unknown tool `read_file`; it may be one of the 1 plugin(s) that failed to load:\n  files.wasm: "
        ) && text.contains("core WebAssembly module, not a component"),
        "{text}"
    );
}

/// `corral compile` is a build's load check before it installs a file, so
/// a machine with no compile cache still gets the check, and is told the
/// code was not kept.
#[test]
fn compile_without_a_cache_still_checks_the_plugin() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    std::fs::write(dir.path().join("broken.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let compile = |file: &str| {
        Command::new(env!("CARGO_BIN_EXE_corral"))
            .args(["compile", "--no-cache"])
            .arg(dir.path().join(file))
            .output()
            .unwrap()
    };
    let good = compile("calc.wasm");
    let text = stderr(&good);
    assert!(good.status.success(), "{text}");
    assert!(
        text.contains("calc.wasm (6 tool(s))") && text.contains("it loads; with no compile cache"),
        "{text}"
    );
    let bad = compile("broken.wasm");
    let text = stderr(&bad);
    assert_eq!(bad.status.code(), Some(1), "{text}");
    assert!(text.contains("broken.wasm would not load"), "{text}");
}

/// Over MCP too: a client that connects to a folder where a plugin failed
/// to load hears which and why in its log, with no log level set (the
/// failure came before it could set one), and calling that plugin's tool
/// names it and the reason rather than only "Unknown tool".
#[test]
fn a_client_hears_which_plugin_failed_to_load_and_why() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    std::fs::write(dir.path().join("files.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let mut server = Server::initialized(dir.path(), "2025-11-25");
    let response = server.request(
        "tools/call",
        json!({ "name": "read_file", "arguments": { "path": "notes.txt" } }),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Unknown tool: read_file; it may be one of the 1 plugin(s) that failed to load:\n  files.wasm: "
        ) && message.contains("core WebAssembly module, not a component"),
        "{message}"
    );
    let logged: Vec<&serde_json::Value> = server
        .notifications
        .iter()
        .filter(|note| note["method"] == "notifications/message")
        .collect();
    assert_eq!(logged.len(), 1, "{:?}", server.notifications);
    let params = &logged[0]["params"];
    assert_eq!(params["level"], "error", "{params}");
    let data = params["data"].as_str().unwrap();
    assert!(
        data.starts_with("1 plugin file(s) failed to load:\n  files.wasm: ")
            && data.contains("core WebAssembly module, not a component"),
        "{data}"
    );
    // The others serve.
    let sum = server.call("add", json!({ "a": 1, "b": 2 }));
    assert_eq!(sum["isError"], false, "{sum}");

    // Once the file loads, it is no longer named.
    std::fs::copy(example("textstats"), dir.path().join("files.wasm")).unwrap();
    support::expect_notification(&mut server, "notifications/tools/list_changed");
    let response = server.request(
        "tools/call",
        json!({ "name": "read_file", "arguments": {} }),
    );
    assert_eq!(
        response["error"]["message"], "Unknown tool: read_file",
        "{response}"
    );
}

/// A client that calls a tool by the name several plugins give it hears
/// every served name and why the tools were renamed.
#[test]
fn a_client_calling_a_name_several_plugins_offer_hears_every_served_name() {
    let dir = two_calcs();
    let mut server = Server::initialized(dir.path(), "2025-06-18");
    let response = server.request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 2 } }),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(
        response["error"]["message"],
        "Unknown tool: add (2 plugins offer a tool `add`, so each is served with its plugin's name in front: `abacus_add`, `calc_add`)",
        "{response}"
    );
}

#[test]
fn argument_errors_name_the_tool_as_served() {
    let dir = two_calcs();
    let mut server = Server::initialized(dir.path(), "2025-06-18");
    let result = server.call("abacus_add", json!({ "a": "one", "b": 2 }));
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text.starts_with("Invalid arguments for tool `abacus_add`:"),
        "{text}"
    );
}

#[test]
fn a_plain_log_level_shows_plugin_logs_and_a_plugin_filter_shows_them_alone() {
    let dir = folder_with(&[("ticker.wasm", &example("ticker"))]);
    let run = |level: &str| {
        let output = corral_call(dir.path(), level, &["log_levels"]);
        assert!(output.status.success(), "{}", stderr(&output));
        stderr(&output)
    };
    let debug = run("debug");
    assert!(debug.contains("ticker: a debug message"), "{debug}");
    assert!(debug.contains("loaded"), "{debug}");
    let plugin_only = run("plugin=debug");
    assert!(
        plugin_only.contains("ticker: a debug message"),
        "{plugin_only}"
    );
    assert!(!plugin_only.contains("loaded"), "{plugin_only}");
}

/// The texts of a `tools/call` result's content, from `corral call`'s
/// stdout (the MCP result, whatever its exit status).
fn content_texts(output: &Output) -> Vec<String> {
    let result: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("corral call printed no result ({err}): {}", stderr(output)));
    assert_eq!(result["isError"], true, "{result}");
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["text"].as_str().unwrap().to_owned())
        .collect()
}

/// The texts of a failed call of `tool` of the plugins in `dir` with
/// `{"name": name}`, by `corral call`.
fn failed_with(dir: &Path, tool: &str, name: &str) -> Vec<String> {
    let arguments = json!({ "name": name }).to_string();
    content_texts(&corral_call(dir, "off", &[tool, &arguments]))
}

const NO_DIRECTORY: &str = "has no directory granted, so it sees no files. To grant one, add to";

/// A plugin without a `[[dirs]]` grant that opens a path fails with its
/// runtime's words (`os error 44`); after them comes what to write in which
/// manifest. Through `corral call` and through a client, for Rust
/// (`std::fs`) and Python (`open`).
#[test]
fn opening_a_file_without_a_directory_grant_is_answered_with_the_grant_that_is_missing() {
    let dir = folder_with(&[
        ("hostile.wasm", &support::fixture("hostile")),
        ("python-notes.wasm", &example("python-notes")),
    ]);
    let rust = content_texts(&corral_call(
        dir.path(),
        "off",
        &["read_file", r#"{"path": "/etc/passwd"}"#],
    ));
    assert_eq!(rust.len(), 2, "{rust:?}");
    assert!(rust[0].contains("No such file or directory"), "{rust:?}");
    assert!(
        rust[1].starts_with(&format!(
            "Plugin `hostile` {NO_DIRECTORY} hostile.toml, beside hostile.wasm:"
        )) && rust[1].contains("[[dirs]]\nhost = ")
            && rust[1].contains("guest = \"/data\"")
            && rust[1].contains("mode = \"ro\""),
        "{rust:?}"
    );

    let mut server = Server::initialized(dir.path(), "2025-06-18");
    let python = server.call("list_notes", json!({}));
    assert_eq!(python["isError"], true, "{python}");
    let hint = python["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        hint.starts_with(&format!(
            "Plugin `python-notes` {NO_DIRECTORY} python-notes.toml"
        )),
        "{python}"
    );
}

/// Whoever has a directory grant keeps its own answer about a missing
/// file (a file tool's "not found" is its business), and an error that
/// never touched a file gets no hint.
#[test]
fn errors_that_lack_no_grant_are_left_as_the_plugin_wrote_them() {
    let dir = folder_with(&[
        ("hostile.wasm", &support::fixture("hostile")),
        ("python-dates.wasm", &example("python-dates")),
    ]);
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hostile.toml"),
        format!(
            "[[dirs]]\nhost = \"{}\"\nguest = \"/data\"\nmode = \"ro\"\n",
            data.path().display()
        ),
    )
    .unwrap();
    let granted = content_texts(&corral_call(
        dir.path(),
        "off",
        &["read_file", r#"{"path": "/data/missing.txt"}"#],
    ));
    assert_eq!(granted.len(), 1, "{granted:?}");
    assert!(
        granted[0].contains("No such file or directory"),
        "{granted:?}"
    );

    let untouched = content_texts(&corral_call(
        dir.path(),
        "off",
        &["date_add", r#"{"date": "9999-12-31", "days": 5}"#],
    ));
    assert_eq!(untouched.len(), 1, "{untouched:?}");

    // A panic that touched no file: the trap's message alone.
    let panic = content_texts(&corral_call(dir.path(), "off", &["panic", "{}"]));
    assert_eq!(panic.len(), 1, "{panic:?}");
}

/// A plugin that opens a socket is told that plugins get none, and which
/// grant gives outgoing HTTP instead.
#[test]
fn opening_a_socket_is_answered_with_the_http_grant() {
    let dir = folder_with(&[("hostile.wasm", &support::fixture("hostile"))]);
    let texts = content_texts(&corral_call(
        dir.path(),
        "off",
        &["open_socket", r#"{"addr": "127.0.0.1:9"}"#],
    ));
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[1].starts_with(
            "Plugin `hostile` opened a socket or looked up a name, and plugins get no sockets."
        ) && texts[1].contains(
            "hostile.toml, beside hostile.wasm:\n\n[http]\nallow = [\"api.example.com\"]"
        ),
        "{texts:?}"
    );
}

/// A project from `corral new LANGUAGE NAME` whose `file` (the tool,
/// apart from the contract's glue) is `source`, built by its own `./build`
/// with the toolchains `plugins/build` installs (as tests/authoring.rs
/// builds its projects). The project folder, which serves the plugin.
fn scaffold(language: &str, name: &str, file: &str, source: &str) -> tempfile::TempDir {
    support::all_plugins_dir();
    let parent = tempfile::tempdir().unwrap();
    let new = Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(["new", language, name, "--dir"])
        .arg(parent.path())
        .output()
        .unwrap();
    assert!(new.status.success(), "corral new: {}", stderr(&new));
    let project = parent.path().join(name);
    std::fs::write(project.join(file), source).unwrap();
    let target = support::target_dir();
    let built = support::user_command(project.join("build"))
        .current_dir(&project)
        .env("CORRAL", env!("CARGO_BIN_EXE_corral"))
        .env("CORRAL_TOOLCHAINS", target.join("toolchains"))
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .env("GOCACHE", target.join("toolchains/go-env/cache"))
        .env("GOPATH", target.join("toolchains/go-env/path"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{language} ./build: {}",
        stderr(&built)
    );
    // The project's folder alone, holding NAME.wasm.
    let folder = tempfile::tempdir().unwrap();
    std::fs::copy(
        project.join(format!("{name}.wasm")),
        folder.path().join(format!("{name}.wasm")),
    )
    .unwrap();
    folder
}

/// The scaffold's tool (tool.py) failing four ways: a bug, a bug opening a
/// missing file (both caught by app.py's `except Exception`, which logs the
/// traceback and answers "internal error"), bad input, and a missing file
/// told as bad input.
const PYTHON_FAILURES: &str = r#"
class ToolFailure(Exception):
    pass


def greet(name: str) -> str:
    if name == "bug":
        raise ValueError("the widget is broken")
    if name == "open":
        with open("/data/names.txt") as names:
            return names.read()
    if name == "told":
        try:
            open("/data/names.txt")
        except OSError:
            raise ToolFailure("the list of names cannot be read") from None
    raise ToolFailure("`name` must not be blank")
"#;

/// Formatting a traceback makes CPython look for its directories (it reads
/// the frames' source files), so a Python tool's error after one is no sign
/// that the tool opened a file: the scaffold's own "internal error" branch
/// gets no grant hint unless the traceback it logged is about a missing
/// file. A tool that opened a file and told its own words still gets it.
#[test]
fn a_python_error_gets_the_directory_grant_only_when_the_tool_opened_a_file() {
    let dir = scaffold("python", "py-fails", "tool.py", PYTHON_FAILURES);
    let call = |name: &str| failed_with(dir.path(), "py-fails", name);
    let bug = call("bug");
    assert_eq!(
        bug,
        ["internal error in py-fails; see the server log"],
        "{bug:?}"
    );
    let blank = call(" ");
    assert_eq!(blank, ["`name` must not be blank"], "{blank:?}");

    for name in ["open", "told"] {
        let texts = call(name);
        assert_eq!(texts.len(), 2, "{name}: {texts:?}");
        assert!(
            texts[1].starts_with(&format!(
                "Plugin `py-fails` {NO_DIRECTORY} py-fails.toml, beside py-fails.wasm:"
            )),
            "{name}: {texts:?}"
        );
    }
}

/// The scaffold's tool (tool.go) failing in the ways a Go plugin can: a
/// bug (a panic), a file opened without a grant (told, and a panic with
/// the error), the network (Go's net, whose dials and name lookups fail
/// inside the plugin), and bad input.
const GO_FAILURES: &str = r#"package tool

import (
	"net/http"
	"os"
)

type Failure struct{ Message string }

func (f *Failure) Error() string { return f.Message }

func Greet(name string) (string, error) {
	switch name {
	case "bug":
		var greetings map[string]string
		greetings[name] = "hello"
	case "open":
		if _, err := os.ReadFile("/data/names.txt"); err != nil {
			return "", &Failure{err.Error()}
		}
	case "open-panics":
		if _, err := os.ReadFile("/data/names.txt"); err != nil {
			return "", err
		}
	case "fetch":
		if _, err := http.Get("http://example.com/"); err != nil {
			return "", &Failure{err.Error()}
		}
	}
	return "", &Failure{"`name` must not be blank"}
}
"#;

/// Go resolves paths itself, against the directories its runtime read as
/// it started: with none granted, `open` fails inside the plugin ("Bad file
/// number") without reaching the host, and the hint comes from those words.
/// A panic reads as Go's message and trace, without the trap. Go's network
/// fails inside the plugin too, and is answered with the HTTP grant.
#[test]
fn a_go_plugin_is_told_the_grant_it_lacks_and_its_panics_read_as_go_wrote_them() {
    let dir = scaffold("go", "go-fails", "tool.go", GO_FAILURES);
    let call = |name: &str| failed_with(dir.path(), "go-fails", name);
    let bug = call("bug");
    assert_eq!(bug.len(), 1, "{bug:?}");
    assert!(
        bug[0].starts_with(
            "Tool `go-fails` failed: the plugin panicked: assignment to entry in nil map\n\n\
             goroutine 1 [running]:\ncorral.plugin/go-fails.Greet("
        ) && bug[0].contains("tool.go:")
            && !bug[0].contains("trap")
            && !bug[0].contains("unreachable")
            && !bug[0].contains("wit_exports.go"),
        "{bug:?}"
    );
    let blank = call(" ");
    assert_eq!(blank, ["`name` must not be blank"], "{blank:?}");

    let told = call("open");
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(told[0], "open /data/names.txt: Bad file number");
    assert!(
        told[1].starts_with(&format!(
            "Plugin `go-fails` {NO_DIRECTORY} go-fails.toml, beside go-fails.wasm:"
        )),
        "{told:?}"
    );
    let panicked = call("open-panics");
    assert_eq!(panicked.len(), 2, "{panicked:?}");
    assert!(
        panicked[0].starts_with(
            "Tool `go-fails` failed: the plugin panicked: open /data/names.txt: Bad file number\n\n"
        ),
        "{panicked:?}"
    );
    assert!(panicked[1].contains(NO_DIRECTORY), "{panicked:?}");

    let fetched = call("fetch");
    assert_eq!(fetched.len(), 2, "{fetched:?}");
    assert!(
        fetched[1].starts_with(
            "Plugin `go-fails` opened a socket or looked up a name, and plugins get no sockets."
        ) && fetched[1].contains("[http]\nallow = ")
            && fetched[1].contains("Go's net/http"),
        "{fetched:?}"
    );
}

/// `corral list DIR | head -1`: the reader leaves early, and corral ends
/// as Unix tools do (SIGPIPE), without a panic on the author's terminal.
#[test]
fn a_listing_piped_into_head_ends_without_a_panic() {
    use std::os::unix::process::ExitStatusExt as _;
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut listing = Command::new(env!("CARGO_BIN_EXE_corral"))
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .args(["list", "--json"])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes before reading anything.
    drop(listing.stdout.take());
    let output = listing.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.signal(), Some(libc::SIGPIPE), "{stderr}");
}
