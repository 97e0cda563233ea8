//! Secrets (issue 44), end to end through the real binary: values set with
//! `corral secret set`, read from a folder of files and from the
//! environment, in the operator's order, reach the hostile fixture
//! (`tests/plugins/hostile-secrets`), which tries every way out with them;
//! what a client receives, and everything Corral prints (its logs,
//! `corral state list`, `corral inspect`, `corral secret list`), never holds
//! a value. Every test secret is `corral-test-secret-` and a random tail, so
//! that a scan of what was captured finds any copy (and the suite's scan,
//! scripts/check-captures, too).

mod support;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::{Server, fixture, write_file};

use support::SECRET_MARK;

/// A recognisable value no other test uses.
fn secret_value() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // Always the same length: the tests tell values apart by the padding
    // they add.
    format!(
        "{SECRET_MARK}{:016x}{:04}{:08}",
        nanos as u64,
        n % 10_000,
        std::process::id() % 100_000_000
    )
}

/// A test secret's value, `extra` bytes longer than [`secret_value`]'s, so
/// that the fixture's `length` tells which value it read.
fn secret_value_longer_by(extra: usize) -> String {
    format!("{}{}", secret_value(), "x".repeat(extra))
}

/// Fails if `text` (`what` was captured) holds a test secret's value, or
/// any copy of the mark they all start with.
fn assert_no_secret(what: &str, text: &str) {
    assert!(
        !text.contains(SECRET_MARK),
        "{what} holds a test secret's value:\n{text}"
    );
}

/// The fixture's manifest: `TOKEN` required, `OPTIONAL` not, a state
/// store it may try to keep its secret in.
const MANIFEST: &str = r#"
[secrets]
TOKEN = { description = "The token the fixture tries to leak", required = true }
OPTIONAL = { description = "An optional second secret" }

[state]
buckets = ["default"]
"#;

/// A plugin folder with the fixture as `hostile-secrets.wasm`, its own
/// store of secrets, state file and secrets folder.
struct Setup {
    root: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("plugins");
        std::fs::create_dir(&dir).unwrap();
        std::fs::copy(fixture("hostile-secrets"), dir.join("hostile-secrets.wasm")).unwrap();
        write_file(&dir, "hostile-secrets.toml", MANIFEST);
        std::fs::create_dir(root.path().join("run-secrets")).unwrap();
        Setup { root }
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("plugins")
    }

    fn store_file(&self) -> PathBuf {
        self.root.path().join("config/corral/secrets.toml")
    }

    fn secrets_folder(&self) -> PathBuf {
        self.root.path().join("run-secrets")
    }

    fn state_flag(&self) -> String {
        format!("sqlite:{}", self.root.path().join("state.sqlite").display())
    }

    /// `corral ARGS` with this setup's store of secrets, state and cache,
    /// `env` besides; `stdin` piped in.
    fn corral_with(&self, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_corral"))
            .args(args)
            .env("CORRAL_SECRETS_FILE", self.store_file())
            .env("CORRAL_STATE", self.state_flag())
            .env("CORRAL_CACHE_DIR", support::test_cache_dir())
            .env("CORRAL_LOG", "debug")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        // What Corral printed, for the suite's scan.
        support::capture(&text(&output));
        output
    }

    fn corral(&self, args: &[&str]) -> Output {
        self.corral_with(args, &[], "")
    }

    /// `corral secret set hostile-secrets NAME`, the value piped in (with
    /// the newline `echo` would add).
    fn set(&self, name: &str, value: &str) {
        let output = self.corral_with(
            &["secret", "set", "hostile-secrets", name],
            &[],
            &format!("{value}\n"),
        );
        assert!(output.status.success(), "{}", text(&output));
        assert_no_secret("`corral secret set`", &text(&output));
    }

    /// `corral serve` on the folder with `--secrets SOURCES`, `env` besides.
    fn serve(&self, sources: &str, env: &[(&str, &str)]) -> Server {
        let store = self.store_file();
        let mut all = vec![("CORRAL_SECRETS_FILE", store.to_str().unwrap())];
        all.extend_from_slice(env);
        let state = self.state_flag();
        let mut server = Server::start_with_env(
            &self.dir(),
            &[
                "--secrets",
                sources,
                "--state",
                &state,
                "--log-level",
                "debug",
            ],
            &all,
        );
        server.initialize("2025-11-25");
        server
    }
}

/// Standard output and error of a command, together.
fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Everything a server sent and logged, for the scan.
fn captured(server: &Server, answers: &[Value]) -> String {
    let mut all = server.stderr();
    for answer in answers {
        all.push_str(&answer.to_string());
    }
    for notification in &server.notifications {
        all.push_str(&notification.to_string());
    }
    all
}

// What the fixture offers (tests/plugins/hostile-secrets): `leak` logs
// TOKEN, sends it as progress, prints it and returns it as text and
// structured content; `throw` fails with it, `crash` panics with it,
// `store` keeps it in its state store; `length` tells a secret's length.

/// `leak`, with a progress token so that its progress is sent too.
fn call_leak(server: &mut Server) -> Value {
    server.result(
        "tools/call",
        json!({ "name": "leak", "arguments": {}, "_meta": { "progressToken": "leak" } }),
    )
}

/// The length of the secret `name` as the plugin read it (`N bytes`).
fn length(server: &mut Server, name: &str) -> String {
    let result = server.call("length", json!({ "name": name }));
    assert_ne!(result["isError"], json!(true), "{result}");
    result["content"][0]["text"].as_str().unwrap().to_string()
}

fn bytes(value: &str) -> String {
    format!("{} bytes", value.len())
}

/// The marker that stands for `name`'s value.
fn marker(name: &str) -> String {
    format!("[redacted secret {name}]")
}

#[test]
fn a_value_set_with_corral_secret_set_reaches_the_plugin_and_never_the_client() {
    let setup = Setup::new();
    let token = secret_value();
    setup.set("TOKEN", &token);
    let mut server = setup.serve("store", &[]);
    assert_eq!(length(&mut server, "TOKEN"), bytes(&token));
    let result = call_leak(&mut server);
    // The marker stands where the plugin put the exact value: it was read.
    assert_eq!(
        result["structuredContent"]["token"],
        json!(marker("TOKEN")),
        "{result}"
    );
    assert_ne!(result["isError"], json!(true), "{result}");
    let all = captured(&server, &[result]);
    assert_no_secret("the server's answers and logs", &all);
    // The audit line says something was redacted.
    assert!(all.contains("redacted"), "{all}");
}

#[test]
fn the_folder_and_the_environment_are_sources_and_the_order_decides() {
    let setup = Setup::new();
    let (from_store, from_folder, from_env) = (
        secret_value_longer_by(1),
        secret_value_longer_by(2),
        secret_value_longer_by(3),
    );
    setup.set("TOKEN", &from_store);
    let folder = setup.secrets_folder();
    std::fs::write(folder.join("TOKEN"), format!("{from_folder}\n")).unwrap();
    let env = [("TEST_SECRET_TOKEN", from_env.as_str())];
    let folder_spec = format!("folder:{}", folder.display());
    // Which source answers shows in `corral secret list DIR`; that the
    // plugin gets that source's value shows in the call: the values differ
    // in length, which the fixture tells.
    for (order, expected, source) in [
        (
            format!("store,{folder_spec},env:TEST_SECRET_"),
            &from_store,
            "store ",
        ),
        (
            format!("{folder_spec},store,env:TEST_SECRET_"),
            &from_folder,
            "folder ",
        ),
        (
            format!("env:TEST_SECRET_,{folder_spec},store"),
            &from_env,
            "environment TEST_SECRET_*",
        ),
    ] {
        let dir = setup.dir();
        let listed = setup.corral_with(
            &["secret", "list", dir.to_str().unwrap(), "--secrets", &order],
            &env,
            "",
        );
        let listed = text(&listed);
        assert_no_secret("`corral secret list`", &listed);
        let row = listed
            .lines()
            .find(|line| line.contains(" TOKEN "))
            .unwrap_or_else(|| panic!("{listed}"));
        assert!(row.contains(source), "{order}: {listed}");

        let mut server = setup.serve(&order, &env);
        assert_eq!(length(&mut server, "TOKEN"), bytes(expected), "{order}");
        assert_no_secret("the server's answers and logs", &captured(&server, &[]));
    }
    // A plugin's own file comes before the shared one.
    let own = secret_value_longer_by(5);
    std::fs::create_dir(folder.join("hostile-secrets")).unwrap();
    std::fs::write(folder.join("hostile-secrets/TOKEN"), &own).unwrap();
    let mut server = setup.serve(&folder_spec, &[]);
    assert_eq!(length(&mut server, "TOKEN"), bytes(&own));
    assert_no_secret("the server's answers and logs", &captured(&server, &[]));
}

#[test]
fn a_changed_value_takes_effect_at_the_next_call() {
    let setup = Setup::new();
    let (first, second) = (secret_value(), secret_value_longer_by(7));
    setup.set("TOKEN", &first);
    let mut server = setup.serve("store", &[]);
    assert_eq!(length(&mut server, "TOKEN"), bytes(&first));
    setup.set("TOKEN", &second);
    assert_eq!(length(&mut server, "TOKEN"), bytes(&second));
    // And the new value is the one redacted.
    let result = call_leak(&mut server);
    assert_eq!(
        result["structuredContent"]["token"],
        json!(marker("TOKEN")),
        "{result}"
    );
    assert_no_secret(
        "the server's answers and logs",
        &captured(&server, &[result]),
    );
}

#[test]
fn a_missing_required_secret_fails_calls_with_the_command_that_sets_it_while_tools_still_list() {
    let setup = Setup::new();
    let mut server = setup.serve("store", &[]);
    let tools = server.tool_names();
    for tool in ["leak", "throw", "crash", "store", "length"] {
        assert!(tools.contains(&tool.to_string()), "{tools:?}");
    }
    let result = call_leak(&mut server);
    assert_eq!(result["isError"], json!(true), "{result}");
    let message = result["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("TOKEN"), "{message}");
    assert!(
        message.contains("corral secret set hostile-secrets TOKEN"),
        "{message}"
    );
    // The same in `corral secret list` and `corral inspect`.
    let dir = setup.dir();
    let listed = text(&setup.corral(&[
        "secret",
        "list",
        dir.to_str().unwrap(),
        "--secrets",
        "store",
    ]));
    assert!(
        listed.contains("missing (required): `corral secret set hostile-secrets TOKEN`"),
        "{listed}"
    );
    let wasm = dir.join("hostile-secrets.wasm");
    let inspected = text(&setup.corral(&["inspect", wasm.to_str().unwrap(), "--secrets", "store"]));
    assert!(
        inspected.contains("TOKEN (required): The token the fixture tries to leak"),
        "{inspected}"
    );
    assert!(
        inspected.contains("corral secret set hostile-secrets TOKEN"),
        "{inspected}"
    );
}

#[test]
fn every_leak_path_is_redacted_in_what_the_client_receives() {
    let setup = Setup::new();
    let token = secret_value();
    setup.set("TOKEN", &token);
    let mut server = setup.serve("store", &[]);
    let redacted = marker("TOKEN");
    // The plugin's log messages reach the client too.
    server.result("logging/setLevel", json!({ "level": "debug" }));

    // Text, structured content, a log message, progress, stdout, stderr.
    let leaked = call_leak(&mut server);
    assert_ne!(leaked["isError"], json!(true), "{leaked}");
    assert_eq!(
        leaked["content"][0]["text"],
        json!(format!("the token is {redacted}, twice: {redacted}")),
        "{leaked}"
    );
    assert_eq!(
        leaked["structuredContent"]["token"],
        json!(redacted),
        "{leaked}"
    );
    let said = |server: &Server, method: &str, field: &str| -> String {
        let found: Vec<String> = server
            .notifications
            .iter()
            .filter(|n| n["method"] == method)
            .map(|n| n["params"][field].to_string())
            .collect();
        assert!(!found.is_empty(), "no {method}: {:?}", server.notifications);
        found.join("\n")
    };
    let logged = said(&server, "notifications/message", "data");
    assert!(
        logged.contains(&format!("the token is {redacted}")),
        "{logged}"
    );
    let progress = said(&server, "notifications/progress", "message");
    assert!(
        progress.contains(&format!("using {redacted}")),
        "{progress}"
    );
    let stderr = server.stderr_containing("stderr: ");
    assert!(stderr.contains(&format!("stdout: {redacted}")), "{stderr}");
    assert!(stderr.contains(&format!("stderr: {redacted}")), "{stderr}");

    // An error's message, and a panic's crash report.
    let thrown = server.call("throw", json!({}));
    assert_eq!(thrown["isError"], json!(true), "{thrown}");
    assert!(
        thrown["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("cannot use token {redacted}")),
        "{thrown}"
    );
    let crashed = server.call("crash", json!({}));
    assert_eq!(crashed["isError"], json!(true), "{crashed}");
    assert!(
        crashed.to_string().contains(&redacted) || server.stderr().contains(&redacted),
        "the crash's message shows no marker: {crashed}"
    );

    let all = captured(&server, &[leaked, thrown, crashed]);
    assert_no_secret("the server's answers, notifications and logs", &all);
    // The audit lines count what was replaced.
    assert!(all.contains("redacted"), "{all}");
}

#[test]
fn what_corral_prints_about_a_folder_never_holds_a_value() {
    let setup = Setup::new();
    let (token, optional) = (secret_value(), secret_value());
    setup.set("TOKEN", &token);
    let env = [("CORRAL_SECRET_OPTIONAL", optional.as_str())];
    // The fixture keeps its secret in its state store.
    let mut server = setup.serve("store,env:CORRAL_SECRET_", &env);
    let stored = server.call("store", json!({}));
    assert_ne!(stored["isError"], json!(true), "{stored}");
    let mut all = captured(&server, &[stored]);
    drop(server);

    let dir = setup.dir();
    let dir = dir.to_str().unwrap();
    let wasm = setup.dir().join("hostile-secrets.wasm");
    let sources = ["--secrets", "store,env:CORRAL_SECRET_"];
    let state_list = setup.corral_with(
        &[&["state", "list", dir, "hostile-secrets"][..], &sources[..]].concat(),
        &env,
        "",
    );
    let state_list = text(&state_list);
    assert!(state_list.contains(&marker("TOKEN")), "{state_list}");
    for args in [
        vec!["inspect", wasm.to_str().unwrap()],
        vec!["secret", "list"],
        vec!["secret", "list", dir],
        vec!["list", dir],
    ] {
        let output = setup.corral_with(&[&args[..], &sources[..]].concat(), &env, "");
        all.push_str(&text(&output));
    }
    all.push_str(&state_list);
    assert_no_secret("what Corral printed", &all);
    // And what it printed says where each comes from.
    assert!(all.contains("environment CORRAL_SECRET_*"), "{all}");
    assert!(
        all.contains(&format!("store {}", setup.store_file().display())),
        "{all}"
    );
}

#[test]
fn corral_secret_set_list_and_remove_keep_a_private_file() {
    use std::os::unix::fs::PermissionsExt as _;
    let setup = Setup::new();
    let value = secret_value();
    setup.set("TOKEN", &value);
    let file = setup.store_file();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    // The trailing newline of the piped value was dropped.
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains(&format!("\"{value}\"")),
        "the store does not hold the value as set"
    );
    let listed = text(&setup.corral(&["secret", "list"]));
    assert!(listed.contains("hostile-secrets  TOKEN"), "{listed}");
    assert_no_secret("`corral secret list`", &listed);

    // A store others can read is refused, with the fix.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = setup.corral(&["secret", "list"]);
    assert!(!refused.status.success());
    let refused = text(&refused);
    assert!(
        refused.contains(&format!("chmod 600 {}", file.display())),
        "{refused}"
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();

    // Errors name what to do.
    let bad = text(&setup.corral(&["secret", "set", "hostile-secrets", "token"]));
    assert!(bad.contains("upper-case letters"), "{bad}");
    let empty = text(&setup.corral(&["secret", "set", "hostile-secrets", "TOKEN"]));
    assert!(empty.contains("the value is empty"), "{empty}");
    let removed = setup.corral(&["secret", "remove", "hostile-secrets", "TOKEN"]);
    assert!(removed.status.success(), "{}", text(&removed));
    let again = text(&setup.corral(&["secret", "remove", "hostile-secrets", "TOKEN"]));
    assert!(
        again.contains("`corral secret list` shows what it holds"),
        "{again}"
    );
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains(SECRET_MARK)
    );
}

/// `corral secret set` at a terminal (a pseudo-terminal that
/// tests/secrets/prompt.py drives): the value typed is not echoed, and the
/// terminal echoes again afterwards, whether Enter or Ctrl-C ended it.
#[test]
fn the_prompt_does_not_echo_and_puts_the_terminal_back_after_enter_or_ctrl_c() {
    let python = support::system_program("python3", "python3");
    let script = support::repo_root().join("tests/secrets/prompt.py");
    let folder = tempfile::tempdir().unwrap();
    let store = folder.path().join("secrets.toml");
    for (mode, exit, kept) in [("interrupt", "130", false), ("type", "0", true)] {
        let value = secret_value();
        let output = Command::new(&python)
            .arg(&script)
            .arg(env!("CARGO_BIN_EXE_corral"))
            .arg(&store)
            .arg(&value)
            .arg(mode)
            .output()
            .unwrap();
        let report = text(&output);
        assert!(output.status.success(), "{report}");
        assert!(
            report.contains("echo while asking: False"),
            "{mode}: {report}"
        );
        assert!(report.contains("echo after: True"), "{mode}: {report}");
        assert!(
            report.contains(&format!("exit: {exit}\n")),
            "{mode}: {report}"
        );
        assert!(
            report.contains("value of hostile-secrets TOKEN (not echoed)"),
            "{report}"
        );
        assert_no_secret("the terminal", &report);
        let held = std::fs::read_to_string(&store).unwrap_or_default();
        assert_eq!(held.contains(&value), kept, "{mode}");
    }
}

#[test]
fn a_log_filter_that_asks_for_everything_still_gets_no_secret() {
    // WASI's streams log at debug what a plugin writes; a filter of the
    // operator's own (not one of the plain levels) asks for all of it.
    let setup = Setup::new();
    let token = secret_value();
    setup.set("TOKEN", &token);
    let store = setup.store_file();
    let state = setup.state_flag();
    let mut server = Server::start_with_env(
        &setup.dir(),
        &[
            "--secrets",
            "store",
            "--state",
            &state,
            "--log-level",
            "trace,wasmtime_wasi=trace,wasmtime_wasi_http=trace",
        ],
        &[("CORRAL_SECRETS_FILE", store.to_str().unwrap())],
    );
    server.initialize("2025-11-25");
    let leaked = call_leak(&mut server);
    assert_ne!(leaked["isError"], json!(true), "{leaked}");
    let all = captured(&server, &[leaked]);
    assert!(
        all.contains("TRACE"),
        "the filter was not taken: {all:.2000}"
    );
    assert_no_secret("a server logging at trace", &all);
}

/// A test secret's value with what JSON and `corral state list` escape:
/// quotes, a backslash, a newline, a tab and a non-ASCII letter.
fn escaped_secret_value() -> String {
    format!("{}-\"q\"\\b\n\té", secret_value())
}

#[test]
fn corral_state_get_and_list_show_a_stored_secret_as_its_marker_even_escaped() {
    for token in [secret_value(), escaped_secret_value()] {
        let setup = Setup::new();
        setup.set("TOKEN", &token);
        let mut server = setup.serve("store", &[]);
        // The fixture keeps its secret in its state store; its structured
        // content and every other way out are redacted however it escapes.
        let stored = server.call("store", json!({}));
        assert_eq!(stored["content"][0]["text"], "stored", "{stored}");
        let leaked = call_leak(&mut server);
        assert_eq!(
            leaked["structuredContent"]["token"],
            json!(marker("TOKEN")),
            "{leaked}"
        );
        let mut all = captured(&server, &[stored, leaked]);
        drop(server);

        let dir = setup.dir();
        let dir = dir.to_str().unwrap();
        let got = setup.corral(&["state", "get", dir, "hostile-secrets", "token"]);
        assert!(got.status.success(), "{}", text(&got));
        assert_eq!(
            String::from_utf8_lossy(&got.stdout),
            marker("TOKEN"),
            "{}",
            text(&got)
        );
        let listed = text(&setup.corral(&["state", "list", dir, "hostile-secrets"]));
        assert!(
            listed.contains(&format!("default/token  {}", marker("TOKEN"))),
            "{listed}"
        );
        all.push_str(&text(&got));
        all.push_str(&listed);
        assert_no_secret("what Corral printed of the stored secret", &all);
    }
}

#[test]
fn a_tasks_status_message_never_holds_a_secret() {
    // `slow` works past task-after (2 s), sends its secret as progress and
    // works on: the progress message is the task's statusMessage meanwhile.
    let setup = Setup::new();
    setup.set("TOKEN", &escaped_secret_value());
    let mut server = setup.serve("store", &[]);
    let takes_tasks = json!({
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": { "io.modelcontextprotocol/tasks": {} }
        }
    });
    let created = server.modern_result(
        "tools/call",
        json!({ "name": "slow", "arguments": { "ms": 2500 }, "_meta": takes_tasks }),
    );
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut seen = vec![created];
    loop {
        let task = server.modern_result("tasks/get", json!({ "taskId": id, "_meta": takes_tasks }));
        let done = task["status"] == "completed" || task["status"] == "failed";
        seen.push(task);
        if done {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the task did not end: {seen:#?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let messages: Vec<&str> = seen
        .iter()
        .filter_map(|task| task["statusMessage"].as_str())
        .collect();
    assert!(
        messages.contains(&format!("slowly using {}", marker("TOKEN")).as_str()),
        "{messages:?}"
    );
    assert_eq!(seen.last().unwrap()["status"], "completed", "{seen:#?}");
    assert_no_secret("the task and the server's logs", &captured(&server, &seen));
}

#[test]
fn concurrent_corral_secret_sets_lose_no_update() {
    use std::os::unix::fs::PermissionsExt as _;
    let setup = Setup::new();
    let values: Vec<(String, String)> =
        (0..24).map(|i| (format!("S{i}"), secret_value())).collect();
    // All started before any is waited for: each reads the store, adds
    // its own and replaces the file, at once.
    let children: Vec<_> = values
        .iter()
        .map(|(name, value)| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_corral"))
                .args(["secret", "set", "hostile-secrets", name])
                .env("CORRAL_SECRETS_FILE", setup.store_file())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            (child, stdin.write_all(value.as_bytes()).map(|()| stdin))
        })
        .collect();
    // Closing each stdin lets them all go together.
    let children: Vec<_> = children
        .into_iter()
        .map(|(child, stdin)| {
            drop(stdin.unwrap());
            child
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output));
        assert_no_secret("`corral secret set`", &text(&output));
    }
    let file = setup.store_file();
    let held = std::fs::read_to_string(&file).unwrap();
    let lost: Vec<&str> = values
        .iter()
        .filter(|(_, value)| !held.contains(&format!("\"{value}\"")))
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(lost.is_empty(), "updates lost: {lost:?}");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Nothing left behind but the store and its lock.
    let mut files: Vec<String> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, [".secrets.toml.lock", "secrets.toml"]);
}

#[test]
fn the_suites_scan_of_its_captures_finds_a_planted_leak() {
    // What this binary's servers wrote is captured: a server's audit line
    // reaches this binary's capture file.
    let setup = Setup::new();
    setup.set("TOKEN", &secret_value());
    let mut server = setup.serve("store", &[]);
    let planted = format!("capture-probe-{}", secret_value().len());
    server.call("length", json!({ "name": "TOKEN" }));
    support::wait_for_stderr(&server, "tool=length", 1);
    drop(server);
    let captures = support::target_dir().join("test-captures");
    let ours = captures.join(format!("secrets-{}.log", std::process::id()));
    let held = std::fs::read_to_string(&ours).unwrap_or_default();
    assert!(
        held.contains("tool=length"),
        "{}: {held:.2000}",
        ours.display()
    );

    // The scan passes on clean captures and fails on one holding a test
    // secret's value, naming the file and the line.
    let check = support::repo_root().join("scripts/check-captures");
    let folder = tempfile::tempdir().unwrap();
    write_file(
        folder.path(),
        "clean-1.log",
        "a line\n[redacted secret TOKEN]\n",
    );
    let clean = Command::new(&check).arg(folder.path()).output().unwrap();
    assert!(clean.status.success(), "{}", text(&clean));
    // Built here, so that this file's text holds no whole value.
    let leak = format!("{SECRET_MARK}{planted}");
    write_file(
        folder.path(),
        "leaky-2.log",
        &format!("first\n{{\"text\":\"the token is {leak}\"}}\n"),
    );
    let caught = Command::new(&check).arg(folder.path()).output().unwrap();
    assert!(!caught.status.success(), "{}", text(&caught));
    let said = text(&caught);
    assert!(said.contains("leaky-2.log:2:"), "{said}");
    assert!(!said.contains("clean-1.log"), "{said}");
}
