//! Nothing of one call is visible to the next, in every language: a fixture
//! plugin in each (`tests/plugins/isolation-{rust,python,js,c,go}`) keeps
//! what its tool `visit` was called with in module-level state (a counter,
//! a list, the last mark) and answers with all of it. Through the real
//! `corral serve`, each of several calls in a row must find that state as
//! the component left it: one call, its own mark, no last mark.
//!
//! Each fixture also logs its mark: the log message must reach the client
//! once, with its own call, and no other. A Python plugin is slow to
//! instantiate (about half a millisecond), so the host makes each of its
//! instances ahead of its call (`host/sandbox/src/spare.rs`), without
//! the call's client: these tests show that such an instance is as fresh as
//! any, and that the call's events are handed over to it.
//!
//! The Python, JavaScript, C and Go fixtures are built by the scripts that
//! build the examples of their language (`plugins/build-LANG --out DIR
//! PROJECT`), each into a folder of its own, one build at a time; the Rust
//! one by `plugins/build`, with the other Rust fixtures.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use support::{Server, first_text, take};

/// How long the first `tools/list` may take: it waits for the plugin to
/// load, and a Python component (18 MB) compiles for 10-45 s cold on a
/// 2-core machine.
const FIRST_LOAD_BOUND: Duration = Duration::from_secs(300);

/// Calls made in a row of each fixture.
const CALLS: usize = 6;

/// Builds `tests/plugins/isolation-LANGUAGE` with `plugins/build-SCRIPT`,
/// and returns its folder.
fn build(script: &str, language: &str) -> PathBuf {
    support::build_fixture(script, &format!("isolation-{language}")).0
}

/// Serves the plugin `name` in `folder` and calls `visit` [`CALLS`] times,
/// each with its own mark; returns the server, still serving.
fn each_call_finds_the_component_as_it_was(folder: &Path, name: &str) -> Server {
    let mut server = Server::start_with_env(
        folder,
        &["--no-watch"],
        &[("CORRAL_LOG", "info,corral_sandbox=debug")],
    );
    server.initialize("2025-11-25");
    server.result("logging/setLevel", json!({ "level": "info" }));
    let id = server.send_request("tools/list", json!({}));
    let listed = server.response_within(&id, FIRST_LOAD_BOUND);
    let tools = &listed["result"]["tools"];
    assert_eq!(tools[0]["name"], "visit", "{listed}\n{}", server.stderr());

    for call in 0..CALLS {
        let mark = format!("m{call}");
        let result = server.call("visit", json!({ "mark": mark }));
        assert_eq!(result["isError"], false, "{name}, call {call}: {result}");
        let seen: Value = serde_json::from_str(first_text(&result))
            .unwrap_or_else(|err| panic!("{name}, call {call}: {err}: {result}"));
        assert_eq!(
            seen,
            json!({ "calls": 1, "marks": [mark], "last": null }),
            "{name}, call {call}: what an earlier call left is visible"
        );
        // Its log message came with it, before its answer; none of another.
        let logged: Vec<String> = take(&mut server, "notifications/message")
            .iter()
            .filter_map(|note| note["params"]["data"].as_str().map(str::to_owned))
            .filter(|data| data.contains("visited by"))
            .collect();
        assert_eq!(
            logged,
            [format!("visited by {mark}")],
            "{name}, call {call}: the call's log messages"
        );
    }
    server
}

/// What the sandbox logs of a call that ran in an instance made ahead.
const RAN_IN_A_SPARE: &str = "runs in the instance made ahead of it";

#[test]
fn a_rust_plugin_finds_its_statics_as_the_component_left_them() {
    let folder =
        support::folder_with(&[("isolation-rust.wasm", &support::fixture("isolation-rust"))]);
    each_call_finds_the_component_as_it_was(folder.path(), "isolation-rust");
}

/// The Python fixture is slow to instantiate: the calls after the first
/// run in instances made ahead of them (as long as each instantiation
/// stays slow, which on these machines it does), and find them as fresh as
/// any.
#[test]
fn a_python_plugin_finds_its_module_as_the_component_left_it() {
    let folder = build("python", "python");
    let stderr = each_call_finds_the_component_as_it_was(&folder, "isolation-python").stderr();
    assert!(
        stderr.contains(RAN_IN_A_SPARE),
        "no call ran in a spare instance: {stderr}"
    );
}

/// The JavaScript build also runs code in componentize-js's glue realm
/// before the snapshot, creating its built-in classes once rather than in
/// every call (plugins/build-js.d/componentize.mjs): the calls still find
/// the plugin's module as the component left it, and the fixture's `glue`
/// tool finds the mark the build leaves when it reached that realm (which
/// a change in componentize-js could silently stop) and its exports plain
/// properties again. That the warm-up still creates what the glue uses is
/// for the profile bench to show (docs/benchmarks.md).
#[test]
fn a_javascript_plugin_finds_its_module_as_the_component_left_it() {
    let folder = build("js", "js");
    let mut server = each_call_finds_the_component_as_it_was(&folder, "isolation-js");
    let result = server.call("glue", json!({}));
    assert_eq!(
        first_text(&result),
        r#"{"warmed":true,"plain":true}"#,
        "the build did not reach the glue's realm: {result}"
    );
}

#[test]
fn a_c_plugin_finds_its_statics_as_the_component_left_them() {
    let folder = build("c", "c");
    each_call_finds_the_component_as_it_was(&folder, "isolation-c");
}

#[test]
fn a_go_plugin_finds_its_package_as_the_component_left_it() {
    let folder = build("go", "go");
    each_call_finds_the_component_as_it_was(&folder, "isolation-go");
}
