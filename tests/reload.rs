//! Hot reload and the compile cache, through the real binary: plugins added,
//! replaced, deleted and broken while a client is connected, and what the
//! client is told about it.

mod support;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use support::{
    Server, example, expect_notification, expect_silence, first_text, folder_with, plugins_dir,
    wait_for_stderr,
};

/// How long a notification that must not come is waited for.
const QUIET_WINDOW: Duration = Duration::from_millis(1500);

const LIST_CHANGED: &str = "notifications/tools/list_changed";

const CALC_TOOLS: [&str; 6] = ["add", "subtract", "multiply", "divide", "power", "sqrt"];
const TEXTSTATS_TOOLS: [&str; 2] = ["analyze_text", "text_report"];

/// A compile cache shared by this file's tests (which also exercises
/// several servers writing one cache at once).
fn cache_dir() -> PathBuf {
    plugins_dir()
        .parent()
        .unwrap()
        .join("test-cache")
        .join("reload")
}

/// `corral serve DIR` with the shared cache, initialized for 2025-06-18,
/// once its first load is done (the first `tools/list` waits for it), so
/// that later changes are changes to a running server.
fn serve(dir: &Path, extra: &[&str]) -> Server {
    let cache = cache_dir();
    let mut args = vec!["--cache-dir", cache.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut server = Server::start_with(dir, &args);
    server.initialize("2025-06-18");
    server.result("tools/list", json!({}));
    server
}

/// Writes `bytes` to a temporary name in the same folder, then renames it
/// to `path`: how build tools put a file in place atomically.
fn replace_by_rename(path: &Path, bytes: &[u8]) {
    let temporary = path.with_extension("wasm.partial");
    std::fs::write(&temporary, bytes).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

/// A byte-different build of the same component: a custom section appended.
fn with_custom_section(component: &[u8], payload: &[u8]) -> Vec<u8> {
    fn leb128(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let name = b"corral-test";
    let mut content = Vec::new();
    leb128(name.len(), &mut content);
    content.extend_from_slice(name);
    content.extend_from_slice(payload);
    let mut out = component.to_vec();
    out.push(0); // custom section id
    leb128(content.len(), &mut out);
    out.extend_from_slice(&content);
    out
}

fn add(server: &mut Server, a: i64, b: i64) -> Value {
    server.call("add", json!({ "a": a, "b": b }))
}

#[test]
fn a_watching_server_declares_list_changed() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server =
        Server::start_with(dir.path(), &["--cache-dir", cache_dir().to_str().unwrap()]);
    let result = server.initialize("2025-06-18");
    assert_eq!(
        result["capabilities"]["tools"]["listChanged"], true,
        "{result}"
    );
}

#[test]
fn the_first_list_waits_for_the_initial_load() {
    // A cold cache of its own: the first load takes a while.
    let cache = tempfile::tempdir().unwrap();
    let mut server = Server::start_with(
        &plugins_dir(),
        &["--cache-dir", cache.path().to_str().unwrap()],
    );
    // ping and initialize do not wait for the load...
    assert_eq!(server.result("ping", json!({})), json!({}));
    server.initialize("2025-06-18");
    // ...and the very first list already holds every plugin.
    let listed = server.tool_names();
    for tool in CALC_TOOLS.iter().chain(&TEXTSTATS_TOOLS) {
        assert!(
            listed.iter().any(|t| t == tool),
            "{tool} missing from {listed:?}"
        );
    }
    assert_eq!(
        server.call("add", json!({ "a": 1, "b": 2 }))["content"][0]["text"],
        "3"
    );
}

#[test]
fn adding_a_plugin_notifies_and_lists_it() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    assert_eq!(server.tool_names(), CALC_TOOLS);

    std::fs::copy(example("textstats"), dir.path().join("textstats.wasm")).unwrap();
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(
        server.tool_names(),
        [CALC_TOOLS.as_slice(), &TEXTSTATS_TOOLS].concat()
    );
    let report = server.call("analyze_text", json!({ "text": "one two" }));
    assert_eq!(report["isError"], false, "{report}");
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
}

#[test]
fn replacing_a_plugin_with_different_tools_notifies() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    assert_eq!(server.tool_names(), CALC_TOOLS);

    std::fs::copy(example("textstats"), dir.path().join("calc.wasm")).unwrap();
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(server.tool_names(), TEXTSTATS_TOOLS);
    let gone = server.request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 2 } }),
    );
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
}

#[test]
fn replacing_a_plugin_with_identical_tools_does_not_notify() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    let before = server.all_tools();
    let calc = dir.path().join("calc.wasm");

    // The same file copied again: reloaded, but nothing visible changed.
    std::fs::copy(example("calc"), &calc).unwrap();
    wait_for_stderr(&server, "reloaded", 1);
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);

    // A rebuild that differs only in bytes, renamed into place.
    let rebuilt = with_custom_section(&std::fs::read(example("calc")).unwrap(), b"rebuild");
    replace_by_rename(&calc, &rebuilt);
    wait_for_stderr(&server, "reloaded", 2);
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);

    // Touched.
    let file = std::fs::File::options().append(true).open(&calc).unwrap();
    file.set_modified(std::time::SystemTime::now()).unwrap();
    drop(file);
    wait_for_stderr(&server, "reloaded", 3);
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);

    assert_eq!(server.all_tools(), before);
    assert_eq!(first_text(&add(&mut server, 2, 3)), "5");
}

#[test]
fn deleting_a_plugin_notifies_and_unlists_it() {
    let dir = folder_with(&[
        ("calc.wasm", &example("calc")),
        ("textstats.wasm", &example("textstats")),
    ]);
    let mut server = serve(dir.path(), &[]);
    assert_eq!(server.tool_names().len(), 8);

    std::fs::remove_file(dir.path().join("textstats.wasm")).unwrap();
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(server.tool_names(), CALC_TOOLS);
    let gone = server.request(
        "tools/call",
        json!({ "name": "analyze_text", "arguments": { "text": "x" } }),
    );
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
}

#[test]
fn the_collision_rule_is_reapplied_on_every_change() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    assert_eq!(server.tool_names(), CALC_TOOLS);

    // A second plugin declaring the same names: both get prefixed.
    std::fs::copy(example("calc"), dir.path().join("abacus.wasm")).unwrap();
    expect_notification(&mut server, LIST_CHANGED);
    let listed = server.tool_names();
    assert!(listed.contains(&"abacus_add".to_string()), "{listed:?}");
    assert!(listed.contains(&"calc_add".to_string()), "{listed:?}");
    assert!(!listed.contains(&"add".to_string()), "{listed:?}");
    assert_eq!(
        first_text(&server.call("calc_add", json!({ "a": 1, "b": 1 }))),
        "2"
    );

    // Gone again: the plain names come back.
    std::fs::remove_file(dir.path().join("abacus.wasm")).unwrap();
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(server.tool_names(), CALC_TOOLS);
}

#[test]
fn a_slowly_copied_file_is_loaded_once_and_complete() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    assert_eq!(server.tool_names(), CALC_TOOLS);

    // Written in 10 chunks over about 500 ms, as a slow copy would.
    let bytes = std::fs::read(example("textstats")).unwrap();
    let mut file = std::fs::File::create(dir.path().join("textstats.wasm")).unwrap();
    for chunk in bytes.chunks(bytes.len().div_ceil(10)) {
        file.write_all(chunk).unwrap();
        file.flush().unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(file);

    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(
        server.tool_names(),
        [CALC_TOOLS.as_slice(), &TEXTSTATS_TOOLS].concat()
    );
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
    let stderr = server.stderr();
    assert_eq!(
        stderr.matches("reloaded").count(),
        1,
        "one load, once complete:\n{stderr}"
    );
    // Where the platform reports when a writer closes the file, the
    // half-written file is not even tried.
    if cfg!(target_os = "linux") {
        assert!(!stderr.contains("failed to load"), "{stderr}");
    }
}

#[test]
fn reloads_are_logged_to_clients_that_asked_for_info() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    server.all_tools();
    server.result("logging/setLevel", json!({ "level": "info" }));
    std::fs::copy(example("textstats"), dir.path().join("textstats.wasm")).unwrap();
    let log = expect_notification(&mut server, "notifications/message");
    assert_eq!(log["params"]["level"], "info", "{log}");
    assert!(
        log["params"]["data"]
            .as_str()
            .unwrap()
            .contains("textstats reloaded"),
        "{log}"
    );
    std::fs::remove_file(dir.path().join("textstats.wasm")).unwrap();
    let log = expect_notification(&mut server, "notifications/message");
    assert!(
        log["params"]["data"]
            .as_str()
            .unwrap()
            .contains("textstats removed"),
        "{log}"
    );
}

#[test]
fn a_truncated_file_leaves_the_previous_version_serving() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    assert_eq!(
        server.result("logging/setLevel", json!({ "level": "error" })),
        json!({})
    );
    let before = server.all_tools();

    let bytes = std::fs::read(example("calc")).unwrap();
    std::fs::write(dir.path().join("calc.wasm"), &bytes[..bytes.len() / 2]).unwrap();

    // Reported on stderr and to the client's log...
    let log = expect_notification(&mut server, "notifications/message");
    assert_eq!(log["params"]["level"], "error", "{log}");
    let text = log["params"]["data"].as_str().unwrap();
    assert!(text.contains("calc.wasm"), "{text}");
    assert!(text.contains("previous version"), "{text}");
    server.stderr_containing("failed to load");
    // ...while the old version keeps answering, and nothing changed.
    assert_eq!(first_text(&add(&mut server, 2, 3)), "5");
    assert_eq!(server.all_tools(), before);
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);

    // The complete file, written later, is picked up.
    std::fs::copy(example("textstats"), dir.path().join("calc.wasm")).unwrap();
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(server.tool_names(), TEXTSTATS_TOOLS);
}

#[test]
fn a_broken_new_plugin_is_reported_and_not_served() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    std::fs::write(dir.path().join("junk.wasm"), b"\0asm but not really").unwrap();
    wait_for_stderr(&server, "failed to load", 1);
    assert!(server.stderr().contains("junk.wasm"));
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
    assert_eq!(server.tool_names(), CALC_TOOLS);
}

#[test]
fn a_manifest_change_reloads_its_plugin() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    let manifest = dir.path().join("calc.toml");

    // A manifest that does not parse: the plugin keeps its previous version.
    std::fs::write(&manifest, "this is = = not toml [").unwrap();
    wait_for_stderr(&server, "failed to load", 1);
    assert!(server.stderr().contains("calc.wasm"));
    assert_eq!(first_text(&add(&mut server, 2, 3)), "5");

    // Removing it reloads the plugin with the defaults.
    std::fs::remove_file(&manifest).unwrap();
    wait_for_stderr(&server, "reloaded", 1);
    assert_eq!(first_text(&add(&mut server, 2, 3)), "5");
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
}

#[test]
fn replacing_a_plugin_twenty_times_under_load_fails_no_call() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = serve(dir.path(), &[]);
    let original = std::fs::read(example("calc")).unwrap();
    let rebuilt = with_custom_section(&original, b"second build");
    let calc = dir.path().join("calc.wasm");

    let replacer = std::thread::spawn(move || {
        for round in 0..20 {
            let bytes = if round % 2 == 0 { &rebuilt } else { &original };
            replace_by_rename(&calc, bytes);
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let mut calls = 0;
    while !replacer.is_finished() {
        let result = add(&mut server, calls, 1);
        assert_eq!(result["isError"], false, "call {calls} failed: {result}");
        assert_eq!(first_text(&result), (calls + 1).to_string());
        calls += 1;
        // A busy client, but within the per-tool rate limit.
        std::thread::sleep(Duration::from_millis(3));
    }
    replacer.join().unwrap();
    // The last replacement is applied too, and every reload kept the tools.
    std::thread::sleep(Duration::from_millis(500));
    let result = add(&mut server, 40, 2);
    assert_eq!(first_text(&result), "42");
    let reloads = server.stderr().matches("reloaded").count();
    assert!(reloads >= 5, "only {reloads} reloads:\n{}", server.stderr());
    assert!(calls > 20, "only {calls} calls ran during the replacements");
    assert!(
        !server.stderr().contains("failed to load"),
        "{}",
        server.stderr()
    );
    expect_silence(&mut server, LIST_CHANGED, Duration::from_millis(100));
}

#[test]
fn no_watch_serves_the_folder_as_it_was() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let mut server = Server::start_with(
        dir.path(),
        &["--no-watch", "--cache-dir", cache_dir().to_str().unwrap()],
    );
    let result = server.initialize("2025-06-18");
    assert_eq!(
        result["capabilities"]["tools"]["listChanged"], false,
        "{result}"
    );
    // The first list waits for the initial load, which runs in the
    // background: only a file added after it is one the server must not see.
    assert_eq!(server.tool_names(), CALC_TOOLS);
    std::fs::copy(example("textstats"), dir.path().join("textstats.wasm")).unwrap();
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
    assert_eq!(server.tool_names(), CALC_TOOLS);
}

/// Every cached artifact under `dir` (in its engine folders: beside them
/// is the function cache, `functions.sqlite`).
fn artifacts(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for folder in std::fs::read_dir(dir).unwrap() {
        let folder = folder.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(folder).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "cwasm") {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn the_compile_cache_is_written_reused_and_never_trusted_blindly() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let cache = tempfile::tempdir().unwrap();
    let cache_arg = cache.path().to_str().unwrap();
    let start = || {
        let mut server = Server::start_with(dir.path(), &["--cache-dir", cache_arg]);
        server.initialize("2025-06-18");
        server
    };

    let mut cold = start();
    assert_eq!(cold.tool_names(), CALC_TOOLS);
    drop(cold);
    let written = artifacts(cache.path());
    assert_eq!(written.len(), 1, "{written:?}");
    let good = std::fs::read(&written[0]).unwrap();

    let mut warm = start();
    assert_eq!(warm.tool_names(), CALC_TOOLS);
    assert!(
        !warm.stderr().contains("compile cache"),
        "{}",
        warm.stderr()
    );
    drop(warm);

    // A corrupt entry is detected, recompiled and overwritten.
    let mut corrupt = good.clone();
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 0x55;
    std::fs::write(&written[0], &corrupt).unwrap();
    let mut recovered = start();
    assert_eq!(recovered.tool_names(), CALC_TOOLS);
    assert_eq!(first_text(&add(&mut recovered, 1, 1)), "2");
    assert!(
        recovered.stderr().contains("discarding"),
        "{}",
        recovered.stderr()
    );
    drop(recovered);
    assert_eq!(std::fs::read(&written[0]).unwrap(), good);
}

#[test]
fn no_cache_writes_nothing() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    let cache = tempfile::tempdir().unwrap();
    let mut server = Server::start_with(
        dir.path(),
        &["--no-cache", "--cache-dir", cache.path().to_str().unwrap()],
    );
    server.initialize("2025-06-18");
    assert_eq!(server.tool_names(), CALC_TOOLS);
    drop(server);
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}
