//! Clients nobody here wrote: the official MCP SDKs and the MCP Inspector
//! drive the real binary.
//!
//! Each client is installed, pinned, under `target/clients/` by a setup script
//! in `tests/clients/` (idempotent: marker files), at most once per run.

#[path = "support/http.rs"]
mod http;
mod support;

use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;
use support::{example, folder_with, plugins_dir, repo_root, run_setup};

/// Runs a setup script from `tests/clients/` once per test binary and returns
/// the lines it prints (the paths the clients run from).
fn setup(script: &str, done: &'static OnceLock<Vec<String>>) -> Vec<String> {
    done.get_or_init(|| run_setup(&format!("tests/clients/{script}")))
        .clone()
}

/// The Python of a virtualenv holding the official MCP Python SDK.
fn python() -> String {
    static DONE: OnceLock<Vec<String>> = OnceLock::new();
    setup("setup-python", &DONE)[0].clone()
}

/// The npm prefix holding the official MCP TypeScript client.
fn node_prefix() -> String {
    static DONE: OnceLock<Vec<String>> = OnceLock::new();
    setup("setup-node", &DONE)[0].clone()
}

/// The node binary to run the MCP Inspector with, and its entry script.
fn inspector() -> (String, String) {
    static DONE: OnceLock<Vec<String>> = OnceLock::new();
    let lines = setup("setup-inspector", &DONE);
    (lines[0].clone(), lines[1].clone())
}

fn script(name: &str) -> String {
    repo_root()
        .join("tests/clients")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn plugins() -> String {
    plugins_dir().to_str().unwrap().to_string()
}

/// Runs a client, with the server's environment set, and returns its output.
fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("CORRAL_LOG", "warn")
        .env("CORRAL_CACHE_DIR", support::test_cache_dir())
        // No __pycache__ next to the scripts in tests/clients.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|err| panic!("running {program}: {err}"))
}

/// Runs a client script and fails with its output when it fails.
fn run_client(program: &str, args: &[&str]) {
    let output = run(program, args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{program} {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    println!("{stdout}");
}

#[test]
fn official_python_sdk_lists_and_calls_every_example_tool() {
    let plugins = plugins();
    run_client(
        &python(),
        &[
            &script("python_sdk.py"),
            env!("CARGO_BIN_EXE_corral"),
            &plugins,
        ],
    );
}

/// The Python SDK's high-level `Client` in one `mode` doing one part of
/// `tests/clients/python_client.py` ("calls" or "list-changed").
fn python_client(mode: &str, part: &str) {
    let plugins = plugins();
    run_client(
        &python(),
        &[
            &script("python_client.py"),
            mode,
            part,
            env!("CARGO_BIN_EXE_corral"),
            &plugins,
        ],
    );
}

#[test]
fn official_python_client_in_auto_mode_calls_every_example_tool_with_progress() {
    python_client("auto", "calls");
}

#[test]
fn official_python_client_pinned_to_2026_07_28_calls_every_example_tool_with_progress() {
    python_client("2026-07-28", "calls");
}

#[test]
fn official_python_client_in_legacy_mode_hears_the_tool_list_change() {
    python_client("legacy", "list-changed");
}

#[test]
fn official_python_client_in_auto_mode_hears_the_tool_list_change() {
    python_client("auto", "list-changed");
}

#[test]
fn official_python_client_pinned_to_2026_07_28_hears_the_tool_list_change() {
    python_client("2026-07-28", "list-changed");
}

/// The official TypeScript client in one `versionNegotiation` mode doing one
/// part of `tests/clients/ts_client.mjs` ("calls" or "list-changed").
fn ts_client(mode: &str, part: &str) {
    let prefix = node_prefix();
    let plugins = plugins();
    run_client(
        "node",
        &[
            &script("ts_client.mjs"),
            &prefix,
            mode,
            part,
            env!("CARGO_BIN_EXE_corral"),
            &plugins,
        ],
    );
}

#[test]
fn official_typescript_client_in_legacy_mode_lists_and_calls_tools() {
    ts_client("legacy", "calls");
}

#[test]
fn official_typescript_client_in_auto_mode_lists_and_calls_tools() {
    ts_client("auto", "calls");
}

#[test]
fn official_typescript_client_pinned_to_2026_07_28_lists_and_calls_tools() {
    ts_client("2026-07-28", "calls");
}

#[test]
fn official_typescript_client_in_legacy_mode_hears_the_tool_list_change() {
    ts_client("legacy", "list-changed");
}

#[test]
fn official_typescript_client_pinned_to_2026_07_28_hears_the_tool_list_change_on_a_listen_stream() {
    ts_client("2026-07-28", "list-changed");
}

/// Runs the MCP Inspector CLI against the example plugins in `era`, invoking
/// `method` with `extra` arguments, and returns its JSON result and the
/// server's log.
fn inspect(era: &str, method: &str, extra: &[&str]) -> (Value, String) {
    let (node, entry) = inspector();
    // The inspector keeps a catalog and client config under $HOME: give it its own.
    let home = tempfile::tempdir().unwrap();
    let cache = format!("CORRAL_CACHE_DIR={}", support::test_cache_dir().display());
    let plugins = plugins();
    let mut args = vec![
        entry.as_str(),
        "--cli",
        "--protocol-era",
        era,
        "--format",
        "json",
        "--method",
        method,
    ];
    args.extend_from_slice(extra);
    // The inspector passes the server only the environment named with -e.
    args.extend_from_slice(&["-e", &cache, "-e", "CORRAL_LOG=info", "--"]);
    args.extend_from_slice(&[env!("CARGO_BIN_EXE_corral"), "serve", &plugins]);
    let output = Command::new(&node)
        .args(&args)
        .env("HOME", home.path())
        .current_dir(home.path())
        .output()
        .unwrap_or_else(|err| panic!("running the inspector with {node}: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success(),
        "inspector {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let json: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|err| panic!("inspector printed no JSON ({err}):\n{stdout}\n{stderr}"));
    println!("{stdout}");
    (json, stderr)
}

/// `tools/list` and `tools/call` through the inspector in `era`; returns the
/// server's log of both runs.
fn inspector_lists_and_calls(era: &str) -> String {
    let (listed, list_log) = inspect(era, "tools/list", &[]);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {listed}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for name in ["add", "analyze_text", "mandelbrot", "countdown"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let (called, call_log) = inspect(
        era,
        "tools/call",
        &["--tool-name", "add", "--tool-args-json", r#"{"a":2,"b":3}"#],
    );
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(called["result"]["content"][0]["text"], "5", "{called}");
    list_log + &call_log
}

#[test]
fn mcp_inspector_cli_in_the_legacy_era_lists_and_calls_tools() {
    let log = inspector_lists_and_calls("legacy");
    assert!(
        log.contains("initialized: protocol"),
        "no initialize seen:\n{log}"
    );
}

#[test]
fn mcp_inspector_cli_in_the_modern_era_lists_and_calls_tools() {
    let log = inspector_lists_and_calls("modern");
    assert!(
        !log.contains("initialized: protocol"),
        "the modern era initialized:\n{log}"
    );
}

// ---- plugins that ask the user ---------------------------------------------

/// A served folder holding `plugin` (an example that asks) with a manifest
/// granting it a scratch directory as `guest`, and that directory (which
/// holds `a.tmp`, `b.tmp` and `keep.txt`).
struct AskingFolder {
    served: tempfile::TempDir,
    scratch: tempfile::TempDir,
}

impl AskingFolder {
    fn new(plugin: &str, guest: &str) -> AskingFolder {
        let served = folder_with(&[(&format!("{plugin}.wasm"), &example(plugin))]);
        let scratch = tempfile::tempdir().unwrap();
        for name in ["a.tmp", "b.tmp", "keep.txt"] {
            std::fs::write(scratch.path().join(name), "x").unwrap();
        }
        let manifest = format!(
            "[[dirs]]\nhost = {:?}\nguest = {guest:?}\nmode = \"rw\"\n",
            scratch.path().to_str().unwrap()
        );
        std::fs::write(served.path().join(format!("{plugin}.toml")), manifest).unwrap();
        AskingFolder { served, scratch }
    }

    fn stdio(&self) -> String {
        format!(
            "stdio:{}:{}",
            env!("CARGO_BIN_EXE_corral"),
            self.served.path().display()
        )
    }

    fn left(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.scratch.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// What a user answers `sweep` called without a pattern: the pattern, then
/// yes.
const SWEEP_ANSWERS: &str = r#"[{"action": "accept", "content": {"pattern": "*.tmp"}},
    {"action": "accept", "content": {"confirm": true}}]"#;

/// An official client in `mode` calls `sweep` with no pattern through
/// `server`: it is asked for the pattern and for consent, and the files go.
fn sweep_through(client: &str, mode: &str, folder: &AskingFolder, server: &str) {
    let expect = "Deleted";
    match client {
        "python" => run_client(
            &python(),
            &[
                &script("python_asks.py"),
                mode,
                server,
                "sweep_files",
                "{}",
                SWEEP_ANSWERS,
                expect,
            ],
        ),
        _ => run_client(
            "node",
            &[
                &script("ts_asks.mjs"),
                &node_prefix(),
                mode,
                server,
                "sweep_files",
                "{}",
                SWEEP_ANSWERS,
                expect,
            ],
        ),
    }
    assert_eq!(folder.left(), ["keep.txt"], "{client} {mode} via {server}");
}

fn sweep_over_stdio(client: &str, mode: &str) {
    let folder = AskingFolder::new("sweep", "/files");
    sweep_through(client, mode, &folder, &folder.stdio());
}

fn sweep_over_http(client: &str, mode: &str) {
    let folder = AskingFolder::new("sweep", "/files");
    let server = http::HttpServer::start(folder.served.path(), &[]);
    let url = format!("http://{}/mcp", server.addr);
    sweep_through(client, mode, &folder, &url);
}

#[test]
fn official_python_client_answers_a_legacy_elicitation_over_stdio() {
    sweep_over_stdio("python", "legacy");
}

#[test]
fn official_python_client_answers_input_required_over_stdio() {
    sweep_over_stdio("python", "2026-07-28");
}

#[test]
fn official_python_client_answers_a_legacy_elicitation_over_http() {
    sweep_over_http("python", "legacy");
}

#[test]
fn official_python_client_answers_input_required_over_http() {
    sweep_over_http("python", "2026-07-28");
}

#[test]
fn official_typescript_client_answers_a_legacy_elicitation_over_stdio() {
    sweep_over_stdio("ts", "legacy");
}

#[test]
fn official_typescript_client_answers_input_required_over_stdio() {
    sweep_over_stdio("ts", "2026-07-28");
}

#[test]
fn official_typescript_client_answers_a_legacy_elicitation_over_http() {
    sweep_over_http("ts", "legacy");
}

#[test]
fn official_typescript_client_answers_input_required_over_http() {
    sweep_over_http("ts", "2026-07-28");
}

/// The TypeScript example's typed question: `semver_bump` without `part`
/// asks which part (a form whose answer type tsc derived from its schema),
/// and the official TypeScript client answers it as a user would, over
/// stdio in `mode`.
fn ts_semver_bump_asks(mode: &str) {
    let served = folder_with(&[("ts-semver.wasm", &example("ts-semver"))]);
    let server = format!(
        "stdio:{}:{}",
        env!("CARGO_BIN_EXE_corral"),
        served.path().display()
    );
    run_client(
        "node",
        &[
            &script("ts_asks.mjs"),
            &node_prefix(),
            mode,
            &server,
            "semver_bump",
            r#"{"version": "2.0.0-rc.3"}"#,
            r#"[{"action": "accept", "content": {"part": "prerelease"}}]"#,
            r#""to":"2.0.0-rc.4","part":"prerelease","asked":true"#,
        ],
    );
}

#[test]
fn official_typescript_client_answers_a_typescript_plugin_in_the_legacy_era() {
    ts_semver_bump_asks("legacy");
}

#[test]
fn official_typescript_client_answers_a_typescript_plugin_with_input_required() {
    ts_semver_bump_asks("2026-07-28");
}

/// The Python example asks which note to delete (its choices are the
/// notes there are) and then for consent, in both eras.
fn python_notes_delete(mode: &str) {
    let folder = AskingFolder::new("python-notes", "/notes");
    for name in ["groceries.md", "ideas.md"] {
        std::fs::write(folder.scratch.path().join(name), "x").unwrap();
    }
    let answers = r#"[{"action": "accept", "content": {"title": "ideas"}},
        {"action": "accept", "content": {"confirm": true}}]"#;
    run_client(
        &python(),
        &[
            &script("python_asks.py"),
            mode,
            &folder.stdio(),
            "delete_note",
            "{}",
            answers,
            "ideas",
        ],
    );
    let left = folder.left();
    assert!(left.contains(&"groceries.md".to_string()), "{left:?}");
    assert!(!left.contains(&"ideas.md".to_string()), "{left:?}");
}

#[test]
fn a_python_plugin_asks_which_note_and_for_consent_in_the_legacy_era() {
    python_notes_delete("legacy");
}

#[test]
fn a_python_plugin_asks_which_note_and_for_consent_in_the_stateless_era() {
    python_notes_delete("2026-07-28");
}

// ---- tasks (the io.modelcontextprotocol/tasks extension, 2026-07-28) -------

/// `corral serve --http` over the conformance fixture, whose calls become
/// tasks for a client that takes them once they have run half a second;
/// its URL.
struct TaskServer {
    _folder: tempfile::TempDir,
    server: http::HttpServer,
    url: String,
}

impl TaskServer {
    fn start() -> TaskServer {
        let folder = support::conformance_folder("");
        let server = http::HttpServer::start(folder.path(), &[]);
        let url = format!("http://{}/mcp", server.addr);
        TaskServer {
            _folder: folder,
            server,
            url,
        }
    }
}

/// The npm prefix holding `@modelcontextprotocol/ext-tasks`, the MCP
/// project's task API for the TypeScript client: the MCP Inspector's
/// install, which depends on it and runs its calls through it.
fn ext_tasks_prefix() -> String {
    let (_, entry) = inspector();
    let marker = "/node_modules/@modelcontextprotocol/inspector/";
    let prefix = &entry[..entry
        .find(marker)
        .unwrap_or_else(|| panic!("no npm prefix in {entry}"))];
    let package = format!("{prefix}/node_modules/@modelcontextprotocol/ext-tasks/package.json");
    assert!(
        std::path::Path::new(&package).exists(),
        "the inspector's install has no @modelcontextprotocol/ext-tasks ({package})"
    );
    prefix.to_string()
}

/// One part of `tests/clients/ts_tasks.mjs` against a fresh server.
fn ts_tasks(part: &str) {
    let server = TaskServer::start();
    run_client(
        "node",
        &[
            &script("ts_tasks.mjs"),
            &node_prefix(),
            &ext_tasks_prefix(),
            &server.url,
            part,
        ],
    );
}

#[test]
fn official_typescript_client_alone_cannot_take_a_task() {
    ts_tasks("bare");
}

#[test]
fn official_typescript_task_api_runs_a_slow_tool_as_a_task_to_completion() {
    ts_tasks("slow");
}

#[test]
fn official_typescript_task_api_answers_a_question_inside_a_task() {
    ts_tasks("confirm");
}

#[test]
fn official_typescript_task_api_cancels_a_task() {
    ts_tasks("cancel");
}

/// One part of `tests/clients/python_tasks.py` against a fresh server.
fn python_tasks(part: &str) {
    let server = TaskServer::start();
    run_client(&python(), &[&script("python_tasks.py"), &server.url, part]);
}

#[test]
fn official_python_client_alone_cannot_take_a_task() {
    python_tasks("bare");
}

#[test]
fn official_python_client_runs_a_slow_tool_as_a_task_through_its_extension_api() {
    python_tasks("slow");
}

#[test]
fn official_python_client_answers_a_question_inside_a_task_through_its_extension_api() {
    python_tasks("confirm");
}

/// A forwarder in front of an HTTP server that notes each request's body
/// and the response to it: what a client really sent. One upstream
/// connection per request (`Connection: close`).
struct Recorder {
    addr: std::net::SocketAddr,
    exchanges: std::sync::Arc<std::sync::Mutex<Vec<(Value, String)>>>,
}

impl Recorder {
    fn start(upstream: std::net::SocketAddr) -> Recorder {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let exchanges = std::sync::Arc::default();
        let noted = std::sync::Arc::clone(&exchanges);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let noted = std::sync::Arc::clone(&noted);
                std::thread::spawn(move || Recorder::serve(client, upstream, &noted));
            }
        });
        Recorder { addr, exchanges }
    }

    fn serve(
        client: std::net::TcpStream,
        upstream: std::net::SocketAddr,
        noted: &std::sync::Mutex<Vec<(Value, String)>>,
    ) {
        use std::io::{BufRead, BufReader, Read, Write};
        let mut reader = BufReader::new(client.try_clone().unwrap());
        let mut client = client;
        loop {
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(value) = lower.strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap();
                }
                if !lower.starts_with("connection:") {
                    head.push_str(&line);
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let mut server = std::net::TcpStream::connect(upstream).unwrap();
            server
                .write_all(format!("{head}connection: close\r\n\r\n").as_bytes())
                .unwrap();
            server.write_all(&body).unwrap();
            // Passed on as it comes (a listen stream's acknowledgement
            // must reach the client while the stream stays open), noted
            // once the server has ended it.
            let mut response = Vec::new();
            let mut chunk = [0; 8192];
            let mut client_left = false;
            loop {
                let read = server.read(&mut chunk).unwrap_or(0);
                if read == 0 {
                    break;
                }
                response.extend_from_slice(&chunk[..read]);
                if client.write_all(&chunk[..read]).is_err() {
                    client_left = true;
                    break;
                }
            }
            let request = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let text = String::from_utf8_lossy(&response).into_owned();
            noted.lock().unwrap().push((request, text));
            if client_left {
                return;
            }
        }
    }

    /// The responses to the requests of `method`, in order.
    fn responses(&self, method: &str) -> Vec<String> {
        self.exchanges
            .lock()
            .unwrap()
            .iter()
            .filter(|(request, _)| request["method"] == method)
            .map(|(_, response)| response.clone())
            .collect()
    }
}

/// The MCP Inspector CLI in the modern era calls every tool through
/// ext-tasks, declaring the extension: `slow_compute` becomes a task, which
/// it polls to its result. (It has no way to answer a question inside a
/// task: it declares no elicitation in the CLI.)
#[test]
fn mcp_inspector_cli_runs_a_slow_tool_as_a_task_to_completion() {
    let server = TaskServer::start();
    let recorder = Recorder::start(server.server.addr);
    let (node, entry) = inspector();
    let home = tempfile::tempdir().unwrap();
    let url = format!("http://{}/mcp", recorder.addr);
    let args = [
        entry.as_str(),
        "--cli",
        "--protocol-era",
        "modern",
        "--format",
        "json",
        "--method",
        "tools/call",
        "--tool-name",
        "slow_compute",
        "--tool-args-json",
        r#"{"seconds": 3, "label": "inspector"}"#,
        &url,
    ];
    let output = Command::new(&node)
        .args(args)
        .env("HOME", home.path())
        .current_dir(home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "inspector {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let json: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|err| panic!("inspector printed no JSON ({err}):\n{stdout}\n{stderr}"));
    assert_eq!(
        json["result"]["content"][0]["text"], "computed inspector after 3 s",
        "{json}"
    );
    let calls = recorder.responses("tools/call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        calls[0].contains(r#""resultType":"task""#),
        "the call was not answered with a task: {}",
        calls[0]
    );
    let polls = recorder.responses("tasks/get");
    let last = polls.last().expect("the inspector never polled the task");
    assert!(last.contains(r#""status":"completed""#), "{polls:?}");
    println!(
        "inspector: tools/call answered with a task, then {} tasks/get:\n{last}",
        polls.len()
    );
}
