//! A plugin whose tool list follows its store says so with
//! `host.tools-changed` (contract 0.3.0), through the real binary: the
//! server lists it again, serves the new list and tells clients (legacy
//! `list_changed` over stdio, and 2026-07-28 listen streams over HTTP); a
//! plugin saying it in a loop costs at most one re-list a second; a re-list
//! that fails leaves the previous tools serving; plugins of contracts 0.1.0
//! and 0.2.0 are served beside it as before.
//!
//! The fixtures: tests/plugins/shifty (modes that change its list, and a
//! tool that says it N times), tests/plugins/conformance (the official
//! suite's `test_trigger_tool_change`), tests/plugins/contract-v0-1 and
//! contract-v0-2.

#[path = "support/http.rs"]
mod http;
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use http::{HttpServer, stateless_request};
use support::{
    Server, conformance_folder, expect_notification, expect_silence, first_text, fixture,
    folder_with, take, wait_for_stderr, write_file,
};

const LIST_CHANGED: &str = "notifications/tools/list_changed";

/// The line the server logs for each re-list it makes.
const RELISTED: &str = "listed again";

/// How long a notification that must not come is waited for.
const QUIET_WINDOW: Duration = Duration::from_millis(1500);

/// The grant shifty needs for its one setting.
const SHIFTY_MANIFEST: &str = "[state]\nbuckets = [\"default\"]\n";

/// A folder serving shifty (with its grant) beside `others`.
fn shifty_folder(others: &[(&str, &Path)]) -> tempfile::TempDir {
    let shifty = fixture("shifty");
    let mut plugins = vec![("shifty.wasm", shifty.as_path())];
    plugins.extend_from_slice(others);
    let folder = folder_with(&plugins);
    write_file(folder.path(), "shifty.toml", SHIFTY_MANIFEST);
    folder
}

/// `corral serve DIR` with its own store file, initialized for 2025-06-18,
/// its first load done.
fn serve(dir: &Path, extra: &[&str]) -> Server {
    let store = format!("sqlite:{}", dir.join("state.sqlite").display());
    let mut args = vec!["--state", store.as_str()];
    args.extend_from_slice(extra);
    let mut server = Server::start_with(dir, &args);
    server.initialize("2025-06-18");
    server.result("tools/list", json!({}));
    server
}

fn call_ok(server: &mut Server, tool: &str, arguments: Value) -> String {
    let result = server.call(tool, arguments);
    assert_eq!(result["isError"], false, "{tool}: {result}");
    first_text(&result).to_owned()
}

fn sorted_names(server: &mut Server) -> Vec<String> {
    let mut names = server.tool_names();
    names.sort();
    names
}

#[test]
fn a_plugin_that_says_its_tools_changed_is_listed_again_and_clients_are_told() {
    let folder = shifty_folder(&[]);
    let mut server = serve(folder.path(), &[]);
    assert_eq!(sorted_names(&mut server), ["set_mode", "spin"]);

    call_ok(&mut server, "set_mode", json!({ "mode": "extra" }));
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(sorted_names(&mut server), ["extra", "set_mode", "spin"]);
    assert_eq!(
        call_ok(&mut server, "extra", json!({})),
        "extra is listed",
        "the new tool is served, not only listed"
    );

    // Past the interval, the next word is heard at once, and the tool goes.
    std::thread::sleep(Duration::from_millis(1100));
    call_ok(&mut server, "set_mode", json!({ "mode": "plain" }));
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(sorted_names(&mut server), ["set_mode", "spin"]);
    let gone = server.request("tools/call", json!({ "name": "extra", "arguments": {} }));
    assert_eq!(gone["error"]["code"], -32602, "{gone}");

    // Saying it without changing anything lists again, and tells nobody.
    std::thread::sleep(Duration::from_millis(1100));
    call_ok(&mut server, "spin", json!({ "times": 1 }));
    wait_for_stderr(&server, RELISTED, 3);
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
}

#[test]
fn a_listen_stream_hears_of_a_change_a_plugin_made_to_its_own_list() {
    let folder = conformance_folder("");
    let store = format!("sqlite:{}", folder.path().join("state.sqlite").display());
    let server = HttpServer::start(folder.path(), &["--state", &store]);
    let client = server.client();
    let listen = serde_json::to_vec(&stateless_request(
        1,
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true } }),
    ))
    .unwrap();
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    let (status, _, mut stream) = client.open_stream("POST", &headers, &listen);
    assert_eq!(status, 200);
    let acknowledged = stream.next_within(Duration::from_secs(10)).expect("ack");
    assert_eq!(
        acknowledged["method"],
        "notifications/subscriptions/acknowledged"
    );

    let mut caller = server.client();
    let names = |caller: &mut http::Client| -> Vec<String> {
        let listed = caller.stateless("tools/list", json!({})).answer();
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!names(&mut caller).contains(&"test_added_tool".to_owned()));
    let called = caller.stateless(
        "tools/call",
        json!({ "name": "test_trigger_tool_change", "arguments": {} }),
    );
    assert_eq!(
        called.answer()["result"]["isError"],
        false,
        "{}",
        called.text()
    );

    // Within the conformance suite's patience (1.5 s from the stream's start).
    let changed = stream
        .next_within(Duration::from_millis(1500))
        .expect("list_changed on the listen stream");
    assert_eq!(changed["method"], LIST_CHANGED, "{changed}");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    assert!(names(&mut caller).contains(&"test_added_tool".to_owned()));
}

#[test]
fn saying_it_in_a_loop_costs_at_most_one_relist_a_second_and_the_last_word_is_heard() {
    let folder = shifty_folder(&[]);
    let mut server = serve(folder.path(), &[]);
    let started = Instant::now();
    // A million words in one call, then a burst of calls that each say it
    // (sequential, so that the last one's mode is known), for about 2.5 s.
    call_ok(&mut server, "spin", json!({ "times": 1_000_000 }));
    let mut calls = 1;
    let mut mode = "plain";
    while started.elapsed() < Duration::from_millis(2500) {
        mode = if mode == "plain" { "extra" } else { "plain" };
        call_ok(&mut server, "set_mode", json!({ "mode": mode }));
        call_ok(&mut server, "spin", json!({ "times": 100 }));
        calls += 2;
        // Well under each tool's rate limit (1,000 calls a second).
        std::thread::sleep(Duration::from_millis(5));
    }
    // The very last word, after every other: one trailing re-list must
    // follow it, whatever the ones before it listed.
    mode = if mode == "plain" { "extra" } else { "plain" };
    call_ok(&mut server, "set_mode", json!({ "mode": mode }));
    calls += 1;
    let last_word = started.elapsed();
    assert!(
        calls > 20,
        "the burst was too short to mean anything: {calls} calls"
    );

    // The trailing re-list comes within the interval (and a little).
    let expected: &[&str] = if mode == "extra" {
        &["extra", "set_mode", "spin"]
    } else {
        &["set_mode", "spin"]
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while sorted_names(&mut server) != expected {
        assert!(
            Instant::now() < deadline,
            "the last word was lost: still {:?}, expected {expected:?}",
            sorted_names(&mut server)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Then quiet: nothing more was said.
    std::thread::sleep(Duration::from_millis(1200));
    let relists = server.stderr().matches(RELISTED).count();
    let window = started.elapsed();
    // One at once, then at most one per started second since.
    let allowed = 1 + window.as_secs_f64().ceil() as usize;
    assert!(
        (1..=allowed).contains(&relists),
        "{calls} calls over {last_word:?} (a million words in the first) cost {relists} re-lists in {window:?}; at most {allowed} allowed"
    );
}

#[test]
fn a_relist_that_fails_leaves_the_previous_tools_serving() {
    let folder = shifty_folder(&[]);
    let mut server = serve(folder.path(), &[]);
    server.result("logging/setLevel", json!({ "level": "error" }));
    call_ok(&mut server, "set_mode", json!({ "mode": "extra" }));
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(sorted_names(&mut server), ["extra", "set_mode", "spin"]);

    // Its list now names `set_mode` twice: refused, as at load.
    std::thread::sleep(Duration::from_millis(1100));
    call_ok(&mut server, "set_mode", json!({ "mode": "broken" }));
    let logged = expect_notification(&mut server, "notifications/message");
    let message = logged["params"]["data"].as_str().unwrap_or_default();
    assert!(
        message.contains("plugin shifty said its tools changed, but listing them again failed (its previous tools keep serving)")
            && message.contains("set_mode"),
        "{logged}"
    );
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
    assert_eq!(sorted_names(&mut server), ["extra", "set_mode", "spin"]);

    // Fixed, and said again: served again.
    call_ok(&mut server, "set_mode", json!({ "mode": "plain" }));
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(sorted_names(&mut server), ["set_mode", "spin"]);
}

#[test]
fn plugins_of_contracts_0_1_and_0_2_are_served_beside_one_that_changes_its_list() {
    let v0_1 = fixture("contract-v0-1");
    let v0_2 = fixture("contract-v0-2");
    let folder = shifty_folder(&[("v0-1.wasm", &v0_1), ("v0-2.wasm", &v0_2)]);
    let mut server = serve(folder.path(), &[]);
    assert_eq!(
        sorted_names(&mut server),
        ["echo", "echo2", "set_mode", "spin"]
    );
    assert_eq!(
        call_ok(&mut server, "echo", json!({ "a": 1 })),
        r#"{"a":1}"#
    );
    assert_eq!(
        call_ok(&mut server, "echo2", json!({ "b": 2 })),
        r#"{"b":2} (sampling: false)"#
    );

    call_ok(&mut server, "set_mode", json!({ "mode": "extra" }));
    expect_notification(&mut server, LIST_CHANGED);
    assert_eq!(
        sorted_names(&mut server),
        ["echo", "echo2", "extra", "set_mode", "spin"]
    );
    // The older plugins were not listed again, and serve as before. (The
    // relist's log line may follow the notification: wait for it first.)
    wait_for_stderr(&server, RELISTED, 1);
    assert_eq!(server.stderr().matches(RELISTED).count(), 1);
    assert_eq!(
        call_ok(&mut server, "echo", json!({ "a": 3 })),
        r#"{"a":3}"#
    );
    let inspected = std::process::Command::new(env!("CARGO_BIN_EXE_corral"))
        .arg("inspect")
        .arg(folder.path().join("v0-2.wasm"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&inspected.stdout);
    assert!(report.contains("contract corral:plugin@0.2.0"), "{report}");
}

#[test]
fn with_no_watch_the_list_stays_as_it_was_at_startup() {
    let folder = shifty_folder(&[]);
    let mut server = serve(folder.path(), &["--no-watch"]);
    call_ok(&mut server, "set_mode", json!({ "mode": "extra" }));
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
    assert_eq!(sorted_names(&mut server), ["set_mode", "spin"]);
    assert_eq!(server.stderr().matches(RELISTED).count(), 0);
    assert!(take(&mut server, LIST_CHANGED).is_empty());
}
