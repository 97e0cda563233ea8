//! The stateless 2026-07-28 protocol revision over stdio, raw wire, against
//! the real binary and the example plugins: no `initialize`, `_meta` on every
//! request, `server/discover`, `resultType` and the server's name on every
//! result, caching hints, listen streams (and how shutdown ends them), and
//! both eras served by one process.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{MODERN, PATIENCE, Server, example, first_text, folder_with, plugins_dir};

/// How long a message that must not come is waited for.
const QUIET_WINDOW: Duration = Duration::from_millis(1500);

const LIST_CHANGED: &str = "notifications/tools/list_changed";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The notifications named `method` received so far.
fn received<'a>(server: &'a Server, method: &str) -> Vec<&'a Value> {
    server
        .notifications
        .iter()
        .filter(|n| n["method"] == method)
        .collect()
}

/// Waits for a notification named `method` (keeping any others), failing on
/// any response.
fn expect_notification(server: &mut Server, method: &str) -> Value {
    if let Some(i) = server
        .notifications
        .iter()
        .position(|n| n["method"] == method)
    {
        return server.notifications.remove(i);
    }
    let deadline = Instant::now() + PATIENCE;
    while let Some(message) = server.recv_within(deadline.saturating_duration_since(Instant::now()))
    {
        assert!(message.get("id").is_none(), "unexpected response {message}");
        if message["method"] == method {
            return message;
        }
        server.notifications.push(message);
    }
    panic!(
        "no {method} within {PATIENCE:?}; stderr:\n{}",
        server.stderr()
    );
}

/// Asserts that nothing but notifications other than `method` arrives
/// within `window`.
fn expect_silence(server: &mut Server, method: &str, window: Duration) {
    assert!(received(server, method).is_empty(), "early {method}");
    let deadline = Instant::now() + window;
    while let Some(message) = server.recv_within(deadline.saturating_duration_since(Instant::now()))
    {
        assert!(message.get("id").is_none(), "unexpected response {message}");
        assert_ne!(message["method"], method, "unexpected {message}");
        server.notifications.push(message);
    }
}

fn names(tools: &Value) -> Vec<String> {
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn discover_answers_versions_capabilities_and_server_info() {
    let mut server = Server::start(&plugins_dir());
    let result = server.modern_result("server/discover", json!({}));
    assert_eq!(result["resultType"], "complete", "{result}");
    let versions = result["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!(MODERN)), "{result}");
    // A watching server (the default) announces list changes.
    assert_eq!(
        result["capabilities"]["tools"]["listChanged"], true,
        "{result}"
    );
    assert_eq!(result["serverInfo"]["name"], "corral");
    assert!(result["serverInfo"]["version"].is_string(), "{result}");
    // Where the final text has servers name themselves, on every result.
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"], result["serverInfo"],
        "{result}"
    );
    // A cacheable result: what it says is fixed for the process's life.
    assert_eq!(result["ttlMs"], 3_600_000, "{result}");
    assert_eq!(result["cacheScope"], "public", "{result}");

    let mut fixed = Server::start_with(&plugins_dir(), &["--no-watch"]);
    let result = fixed.modern_result("server/discover", json!({}));
    assert_eq!(
        result["capabilities"]["tools"]["listChanged"], false,
        "{result}"
    );
}

#[test]
fn list_carries_result_type_and_caching_hints() {
    let mut server = Server::start(&plugins_dir());
    let list = server.modern_result("tools/list", json!({}));
    assert_eq!(list["resultType"], "complete", "{list}");
    assert!(list["ttlMs"].as_u64().is_some(), "{list}");
    assert!(list["cacheScope"].is_string(), "{list}");
    let tools = names(&list);
    assert_eq!(tools.first().map(String::as_str), Some("add"), "{tools:?}");
    // Shaped with everything 2025-11-25 has.
    let analyze = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "analyze_text")
        .unwrap();
    assert_eq!(analyze["outputSchema"]["type"], "object", "{analyze}");
    assert!(analyze["annotations"].is_object(), "{analyze}");
    let mandelbrot = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mandelbrot")
        .unwrap();
    assert!(mandelbrot["title"].is_string(), "{mandelbrot}");
    // The same list, in the same order, as a 2025-11-25 session gets.
    let mut legacy = Server::initialized(&plugins_dir(), "2025-11-25");
    assert_eq!(
        legacy.all_tools(),
        *list["tools"].as_array().unwrap(),
        "shaped as in 2025-11-25 (no example declares task support, the `execution` 2026-07-28 lacks)"
    );
    // Pagination works statelessly too.
    let mut paged = Server::start_with(&plugins_dir(), &["--page-size", "4"]);
    let first = paged.modern_result("tools/list", json!({}));
    assert_eq!(first["tools"].as_array().unwrap().len(), 4);
    let second = paged.modern_result("tools/list", json!({ "cursor": first["nextCursor"] }));
    assert_eq!(second["resultType"], "complete");
    assert_eq!(names(&second)[0], tools[4]);
}

#[test]
fn calls_carry_result_type() {
    let mut server = Server::start(&plugins_dir());
    let sum = server.modern_result(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 2, "b": 3 } }),
    );
    assert_eq!(sum["resultType"], "complete", "{sum}");
    assert_eq!(sum["isError"], false);
    assert_eq!(first_text(&sum), "5");
    assert_eq!(
        sum["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "corral",
        "{sum}"
    );

    let stats = server.modern_result(
        "tools/call",
        json!({ "name": "analyze_text", "arguments": { "text": "One fish. Two fish!" } }),
    );
    assert_eq!(stats["resultType"], "complete", "{stats}");
    assert_eq!(stats["structuredContent"]["words"], 4, "{stats}");
    // The plugin's own text is that JSON: the host adds no second copy.
    let text: Value = serde_json::from_str(first_text(&stats)).unwrap();
    assert_eq!(text, stats["structuredContent"]);
    assert_eq!(stats["content"].as_array().unwrap().len(), 1, "{stats}");

    // Tool execution errors are results too.
    let failed = server.modern_result(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": "two" } }),
    );
    assert_eq!(failed["resultType"], "complete", "{failed}");
    assert_eq!(failed["isError"], true, "{failed}");
    // Protocol errors stay errors.
    let unknown = server.modern("tools/call", json!({ "name": "nope", "arguments": {} }));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn requests_without_the_stateless_meta_are_invalid_params() {
    let mut server = Server::start(&plugins_dir());
    // server/discover exists only statelessly: without _meta it is refused.
    let bare = server.request("server/discover", json!({}));
    assert_eq!(bare["error"]["code"], -32602, "{bare}");
    let message = bare["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("io.modelcontextprotocol/protocolVersion"),
        "{message}"
    );

    let no_version = server.request(
        "server/discover",
        json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": {} } }),
    );
    assert_eq!(no_version["error"]["code"], -32602, "{no_version}");
    assert!(
        no_version["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion")
    );
    // Only the protocol version makes another method stateless: with client
    // capabilities alone, tools/list is a legacy request.
    let legacy = server.request(
        "tools/list",
        json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": {} } }),
    );
    assert!(legacy["result"]["tools"].is_array(), "{legacy}");
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");

    let no_capabilities = server.request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 1 },
                "_meta": { "io.modelcontextprotocol/protocolVersion": MODERN } }),
    );
    assert_eq!(
        no_capabilities["error"]["code"], -32602,
        "{no_capabilities}"
    );
    assert!(
        no_capabilities["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );

    let listen = server.request("subscriptions/listen", json!({}));
    assert_eq!(listen["error"]["code"], -32602, "{listen}");

    let bad_level = server.modern(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 1 },
                "_meta": { "io.modelcontextprotocol/logLevel": "loud" } }),
    );
    assert_eq!(bad_level["error"]["code"], -32602, "{bad_level}");
}

#[test]
fn unsupported_versions_get_32022_with_the_supported_list() {
    let mut server = Server::start(&plugins_dir());
    // Legacy revisions need initialize; they cannot be named per request.
    for asked in ["2099-01-01", "2025-11-25", "garbage"] {
        let response = server.modern(
            "tools/list",
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": asked } }),
        );
        assert_eq!(response["error"]["code"], -32022, "{asked}: {response}");
        let supported = response["error"]["data"]["supported"].as_array().unwrap();
        assert!(supported.contains(&json!(MODERN)), "{response}");
        assert!(response.get("result").is_none());
    }
}

#[test]
fn ping_and_set_level_do_not_exist_statelessly_but_legacy_ping_does() {
    let mut server = Server::start(&plugins_dir());
    let ping = server.modern("ping", json!({}));
    assert_eq!(ping["error"]["code"], -32601, "{ping}");
    let set_level = server.modern("logging/setLevel", json!({ "level": "debug" }));
    assert_eq!(set_level["error"]["code"], -32601, "{set_level}");
    let unknown = server.modern("tools/frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    let mut legacy = Server::initialized(&plugins_dir(), "2025-11-25");
    assert_eq!(legacy.result("ping", json!({})), json!({}));
}

#[test]
fn progress_follows_the_progress_token() {
    let mut server = Server::start(&plugins_dir());
    let id = server.send_modern(
        "tools/call",
        json!({ "name": "countdown", "arguments": { "steps": 3, "delay_ms": 1 },
                "_meta": { "progressToken": "tok-m" } }),
    );
    let response = server.response_to(&id);
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    let progress = received(&server, "notifications/progress");
    assert_eq!(progress.len(), 3, "{:?}", server.notifications);
    for (i, note) in progress.iter().enumerate() {
        assert_eq!(note["params"]["progressToken"], "tok-m");
        assert_eq!(note["params"]["progress"], (i + 1) as f64);
        assert_eq!(note["params"]["total"], 3.0);
    }
    server.notifications.clear();
    server.modern_result(
        "tools/call",
        json!({ "name": "countdown", "arguments": { "steps": 2, "delay_ms": 1 } }),
    );
    assert!(received(&server, "notifications/progress").is_empty());
}

#[test]
fn logs_only_for_requests_that_carry_a_log_level() {
    let mut server = Server::start(&plugins_dir());
    server.modern_result(
        "tools/call",
        json!({ "name": "log_levels", "arguments": {} }),
    );
    assert!(
        received(&server, "notifications/message").is_empty(),
        "{:?}",
        server.notifications
    );
    server.modern_result(
        "tools/call",
        json!({ "name": "log_levels", "arguments": {},
                "_meta": { "io.modelcontextprotocol/logLevel": "info" } }),
    );
    let levels: Vec<&str> = received(&server, "notifications/message")
        .iter()
        .map(|n| n["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["info", "warning", "error"]);
    // The level is the request's own: the next request without one gets none.
    server.notifications.clear();
    server.modern_result(
        "tools/call",
        json!({ "name": "log_levels", "arguments": {} }),
    );
    assert!(received(&server, "notifications/message").is_empty());
}

#[test]
fn a_cancelled_call_gets_no_response() {
    let mut server = Server::start(&plugins_dir());
    let id = server.send_modern(
        "tools/call",
        json!({ "name": "sleep", "arguments": { "ms": 20000 } }),
    );
    std::thread::sleep(Duration::from_millis(300));
    server.send(
        &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": { "requestId": id, "reason": "user pressed stop" } }),
    );
    let next = server.send_modern(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 1 } }),
    );
    let response = server.recv();
    assert_eq!(
        response["id"], next,
        "only the second call answers: {response}"
    );
    assert_eq!(response["result"]["resultType"], "complete");
    assert!(
        server.recv_within(Duration::from_millis(500)).is_none(),
        "the cancelled call answered"
    );
}

#[test]
fn list_changes_go_only_to_listen_streams_that_asked() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    // One server with a listen stream asking for tool list changes ...
    let mut listening = Server::start(dir.path());
    assert_eq!(
        names(&listening.modern_result("tools/list", json!({}))),
        ["add", "subtract", "multiply", "divide", "power", "sqrt"]
    );
    let stream = listening.send_modern(
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true } }),
    );
    let ack = expect_notification(&mut listening, "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], stream, "{ack}");
    // The acknowledgement states the filter the server honours.
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true }),
        "{ack}"
    );
    // ... and one with no stream asking for them: a stream without
    // toolsListChanged, and stateless requests.
    let mut quiet = Server::start(dir.path());
    quiet.modern_result("tools/list", json!({}));
    let other = quiet.send_modern("subscriptions/listen", json!({ "notifications": {} }));
    let ack = expect_notification(&mut quiet, "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], other, "{ack}");
    assert_eq!(ack["params"]["notifications"], json!({}), "{ack}");

    std::fs::copy(example("textstats"), dir.path().join("textstats.wasm")).unwrap();
    let changed = expect_notification(&mut listening, LIST_CHANGED);
    assert_eq!(
        changed["params"]["_meta"][SUBSCRIPTION_ID], stream,
        "{changed}"
    );
    let tools = names(&listening.modern_result("tools/list", json!({})));
    assert!(tools.contains(&"analyze_text".to_string()), "{tools:?}");
    expect_silence(&mut quiet, LIST_CHANGED, QUIET_WINDOW);
    let tools = names(&quiet.modern_result("tools/list", json!({})));
    assert!(tools.contains(&"analyze_text".to_string()), "{tools:?}");

    // Cancelling the stream ends it without a response; closing the input
    // with a stream open ends that stream as a server tearing it down does
    // (notifications/cancelled naming it, then its completion result), and
    // the process exits cleanly.
    listening.send(
        &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": { "requestId": stream } }),
    );
    listening.modern_result("server/discover", json!({}));
    std::fs::remove_file(dir.path().join("textstats.wasm")).unwrap();
    expect_silence(&mut listening, LIST_CHANGED, QUIET_WINDOW);
    quiet.close_stdin();
    let cancelled = quiet.recv_within(PATIENCE).expect("the stream's end");
    assert_eq!(
        cancelled,
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {
                "requestId": other,
                "reason": "the server is ending this subscription: the session is over",
                "_meta": { SUBSCRIPTION_ID: other },
            },
        })
    );
    let closed = quiet.recv_within(PATIENCE).expect("the stream's response");
    assert_eq!(closed["id"], other, "{closed}");
    assert_eq!(closed["result"]["resultType"], "complete", "{closed}");
    assert_eq!(
        closed["result"]["_meta"][SUBSCRIPTION_ID], other,
        "{closed}"
    );
    assert!(
        quiet.recv_within(QUIET_WINDOW).is_none(),
        "more after the end"
    );
    assert!(quiet.wait_exit(Duration::from_secs(10)).success());
}

#[test]
fn one_process_serves_both_eras() {
    // Legacy on one server, stateless on another.
    let mut legacy = Server::initialized(&plugins_dir(), "2025-06-18");
    let mut modern = Server::start(&plugins_dir());
    assert_eq!(
        first_text(&legacy.call("add", json!({ "a": 1, "b": 2 }))),
        "3"
    );
    assert!(
        legacy
            .call("add", json!({ "a": 1, "b": 2 }))
            .get("resultType")
            .is_none()
    );
    let sum = modern.modern_result(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 2 } }),
    );
    assert_eq!(first_text(&sum), "3");
    assert_eq!(sum["resultType"], "complete");

    // initialize never negotiates the stateless revision.
    let mut asks_modern = Server::start(&plugins_dir());
    let result = asks_modern.initialize(MODERN);
    assert_eq!(result["protocolVersion"], "2025-11-25", "{result}");
}

#[test]
fn eras_mix_per_request_on_one_connection() {
    // The era is chosen per request by its _meta; initialize affects only
    // requests without the stateless _meta.
    let mut server = Server::start(&plugins_dir());
    let discovered = server.modern_result("server/discover", json!({}));
    assert_eq!(discovered["resultType"], "complete");
    // A stateless request does not initialize the session.
    let result = server.initialize("2025-03-26");
    assert_eq!(result["protocolVersion"], "2025-03-26", "{result}");
    // Legacy requests: 2025-03-26 shapes (no titles, no resultType), ping.
    let legacy_list = server.result("tools/list", json!({}));
    assert!(legacy_list.get("resultType").is_none(), "{legacy_list}");
    assert!(legacy_list.get("ttlMs").is_none(), "{legacy_list}");
    assert!(
        legacy_list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("title").is_none() && t.get("outputSchema").is_none())
    );
    assert_eq!(server.result("ping", json!({})), json!({}));
    // Stateless requests after the initialize: still 2026-07-28.
    let modern_list = server.modern_result("tools/list", json!({}));
    assert_eq!(modern_list["resultType"], "complete");
    assert!(
        modern_list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.get("outputSchema").is_some())
    );
    assert_eq!(server.modern("ping", json!({}))["error"]["code"], -32601);
    let stats = server.modern_result(
        "tools/call",
        json!({ "name": "analyze_text", "arguments": { "text": "a b" } }),
    );
    assert_eq!(stats["structuredContent"]["words"], 2, "{stats}");
    let old_stats = server.call("analyze_text", json!({ "text": "a b" }));
    assert!(old_stats.get("structuredContent").is_none(), "{old_stats}");
}
