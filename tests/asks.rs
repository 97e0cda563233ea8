//! Plugins that ask the client (elicitation, sampling, roots) over stdio,
//! raw wire, against the real binary and a real plugin (the conformance
//! fixture, tests/plugins/conformance, whose tools ask as the official
//! suite's scenarios expect): in the legacy era the server sends the client
//! a request and waits; in the stateless era (2026-07-28) it answers
//! `input_required` with a sealed `requestState` and runs the tool again on
//! the retry. And what goes wrong: undeclared capabilities, errors, a client
//! that never answers, cancellation while waiting, forged, altered, foreign
//! or replayed state, each a clear answer while every other call is served.

#[path = "support/http.rs"]
mod http;
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{PATIENCE, Server, conformance_folder, first_text};

/// A folder serving the conformance fixture, with `limits` added to the
/// `[limits]` of its `conformance.toml` when given.
fn fixture_folder(manifest: Option<&str>) -> tempfile::TempDir {
    conformance_folder(manifest.unwrap_or_default())
}

/// `initialize` with the given client capabilities.
fn initialize_with(server: &mut Server, capabilities: Value) {
    server.result(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": { "name": "corral-tests", "version": "0" }
        }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
}

fn legacy_server(dir: &Path, capabilities: Value) -> Server {
    let mut server = Server::start(dir);
    initialize_with(&mut server, capabilities);
    server
}

/// The next request the server sends the client (keeping notifications),
/// failing on any response.
fn server_request(server: &mut Server) -> Value {
    let deadline = Instant::now() + PATIENCE;
    while let Some(message) = server.recv_within(deadline.saturating_duration_since(Instant::now()))
    {
        match (message.get("id"), message.get("method")) {
            (Some(_), Some(_)) => return message,
            (None, Some(_)) => server.notifications.push(message),
            _ => panic!("a response where a server request was expected: {message}"),
        }
    }
    panic!(
        "no server request within {PATIENCE:?}; stderr:\n{}",
        server.stderr()
    );
}

/// Answers the server's request `request` with `result`.
fn answer(server: &mut Server, request: &Value, result: Value) {
    server.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }));
}

/// A 2026-07-28 `tools/call` with the client capabilities `capabilities`
/// and the extra params `extra` (inputResponses, requestState; arguments
/// other than none).
fn stateless_call(server: &mut Server, tool: &str, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": {},
        "_meta": { "io.modelcontextprotocol/clientCapabilities": capabilities },
    });
    if let Value::Object(extra) = extra {
        for (key, value) in extra {
            params[key] = value;
        }
    }
    server.modern("tools/call", params)
}

fn every_capability() -> Value {
    json!({ "elicitation": {}, "sampling": {}, "roots": {} })
}

/// The `input_required` result of `response`, failing on anything else.
fn input_required(response: &Value) -> &Value {
    let result = &response["result"];
    assert_eq!(result["resultType"], "input_required", "{response}");
    assert!(
        result["requestState"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "no requestState: {response}"
    );
    result
}

/// The complete result of `response`, failing on anything else.
fn complete(response: &Value) -> &Value {
    let result = &response["result"];
    assert_eq!(result["resultType"], "complete", "{response}");
    result
}

/// The error of `response`, failing on a result.
fn error(response: &Value) -> &Value {
    response
        .get("error")
        .unwrap_or_else(|| panic!("expected an error, got {response}"))
}

/// The key of the first request an `input_required` result asks.
fn first_key(asked: &Value) -> String {
    asked["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next())
        .unwrap_or_else(|| panic!("no input requests in {asked}"))
        .clone()
}

fn elicited_name(name: &str) -> Value {
    json!({ "user_name": { "action": "accept", "content": { "name": name } } })
}

// ---- legacy era --------------------------------------------------------------

#[test]
fn a_legacy_call_sends_the_client_an_elicitation_and_uses_its_answer() {
    let folder = fixture_folder(None);
    let mut server = legacy_server(folder.path(), json!({ "elicitation": {} }));
    let call = server.send_request(
        "tools/call",
        json!({ "name": "test_elicitation", "arguments": { "message": "Who are you?" } }),
    );
    let request = server_request(&mut server);
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(request["params"]["message"], "Who are you?", "{request}");
    assert_eq!(request["params"]["requestedSchema"]["type"], "object");
    answer(
        &mut server,
        &request,
        json!({ "action": "accept", "content": { "username": "ada", "email": "ada@example.com" } }),
    );
    let response = server.response_to(&call);
    let result = &response["result"];
    assert_eq!(result["isError"], false, "{response}");
    assert!(first_text(result).contains("ada"), "{response}");
}

#[test]
fn a_legacy_client_without_the_capability_is_never_asked_and_the_tool_hears_why() {
    let folder = fixture_folder(None);
    let mut server = legacy_server(folder.path(), json!({}));
    let response = server.request(
        "tools/call",
        json!({ "name": "test_elicitation", "arguments": { "message": "Who are you?" } }),
    );
    let result = &response["result"];
    assert_eq!(result["isError"], true, "{response}");
    assert!(first_text(result).contains("elicitation"), "{response}");
}

#[test]
fn a_legacy_client_error_reaches_the_tool_as_a_failure() {
    let folder = fixture_folder(None);
    let mut server = legacy_server(folder.path(), json!({ "sampling": {} }));
    let call = server.send_request(
        "tools/call",
        json!({ "name": "test_sampling", "arguments": { "prompt": "Say hi" } }),
    );
    let request = server_request(&mut server);
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    assert_eq!(request["params"]["maxTokens"], 100, "{request}");
    server.send(&json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "error": { "code": -1, "message": "User rejected sampling request" },
    }));
    let response = server.response_to(&call);
    let result = &response["result"];
    assert_eq!(result["isError"], true, "{response}");
    assert!(
        first_text(result).contains("User rejected sampling request"),
        "{response}"
    );
}

#[test]
fn a_client_that_never_answers_costs_the_tool_its_input_wait_not_the_server() {
    // The compute timeout is shorter than the wait: waiting is not compute.
    let folder = fixture_folder(Some("timeout = \"1 s\"\ninput-wait = \"2 s\"\n"));
    let mut server = legacy_server(folder.path(), json!({ "elicitation": {} }));
    let started = Instant::now();
    let call = server.send_request(
        "tools/call",
        json!({ "name": "test_elicitation", "arguments": { "message": "Anyone?" } }),
    );
    let request = server_request(&mut server);
    assert_eq!(request["method"], "elicitation/create");
    // Never answered; the server serves others meanwhile.
    let ping = server.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
    let response = server.response_to(&call);
    let waited = started.elapsed();
    let result = &response["result"];
    assert_eq!(result["isError"], true, "{response}");
    let text = first_text(result);
    assert!(
        text.contains("in time") || text.contains("input-wait"),
        "{response}"
    );
    assert!(
        waited >= Duration::from_secs(2),
        "the tool heard of the timeout after {waited:?}, before its 2 s input-wait"
    );
    // A late answer is ignored.
    answer(&mut server, &request, json!({ "action": "decline" }));
    let ping = server.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
}

#[test]
fn cancelling_a_call_that_waits_for_the_client_ends_it_without_an_answer() {
    let folder = fixture_folder(None);
    let mut server = legacy_server(folder.path(), json!({ "elicitation": {} }));
    let call = server.send_request(
        "tools/call",
        json!({ "name": "test_elicitation", "arguments": { "message": "Cancel me" } }),
    );
    let request = server_request(&mut server);
    server.send(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": { "requestId": call, "reason": "the user gave up" },
    }));
    // The answer to the forgotten request changes nothing.
    answer(
        &mut server,
        &request,
        json!({ "action": "accept", "content": { "username": "x", "email": "x@example.com" } }),
    );
    let ping_id = server.send_request("ping", json!({}));
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut pinged = false;
    while let Some(message) = server.recv_within(deadline.saturating_duration_since(Instant::now()))
    {
        assert_ne!(
            message["id"], call,
            "a cancelled call was answered: {message}"
        );
        if message["id"] == ping_id {
            pinged = true;
        }
    }
    assert!(pinged, "ping unanswered; stderr:\n{}", server.stderr());
}

#[test]
fn a_call_whose_http_connection_closes_while_it_waits_hears_it_at_once() {
    // The wait is long: only the closed connection can end it soon.
    let folder = fixture_folder(Some("input-wait = \"60 s\"\n"));
    let server = http::HttpServer::start(folder.path(), &[]);
    let mut client = server.client();
    client.initialize_with("2025-11-25", json!({ "elicitation": {} }));
    let session = client.session.clone().unwrap();
    let call = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": "test_elicitation", "arguments": { "message": "Still there?" } },
    });
    let (status, _, mut stream) = client.open_stream(
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        call.to_string().as_bytes(),
    );
    assert_eq!(status, 200);
    let request = stream
        .next_within(PATIENCE)
        .expect("the elicitation request");
    assert_eq!(request["method"], "elicitation/create", "{request}");
    let closed = Instant::now();
    drop(stream);
    // The call ends (its audit line is written) long before its input-wait.
    let log = server.server.stderr_containing("outcome=\"error\"");
    assert!(log.contains("test_elicitation"), "{log}");
    assert!(
        closed.elapsed() < Duration::from_secs(20),
        "the call waited {:?} after its connection closed",
        closed.elapsed()
    );
    // The session goes on.
    let ping = client.legacy("ping", json!({}));
    assert_eq!(ping.status, 200, "{}", ping.text());
}

// ---- stateless era -----------------------------------------------------------

#[test]
fn a_stateless_call_asks_with_input_required_and_completes_on_the_retry() {
    let folder = fixture_folder(None);
    let mut server = Server::start(folder.path());
    let tool = "test_input_required_result_elicitation";
    let first = stateless_call(&mut server, tool, every_capability(), json!({}));
    let asked = input_required(&first);
    let request = &asked["inputRequests"]["user_name"];
    assert_eq!(request["method"], "elicitation/create", "{first}");
    assert!(request.get("id").is_none() && request.get("jsonrpc").is_none());
    assert_eq!(
        asked["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "corral"
    );
    let state = asked["requestState"].clone();
    let retry = stateless_call(
        &mut server,
        tool,
        every_capability(),
        json!({ "inputResponses": elicited_name("Alice"), "requestState": state }),
    );
    let result = complete(&retry);
    assert!(first_text(result).contains("Alice"), "{retry}");
    // No request ever went to the client: the stateless era asks in results.
    assert!(
        server.notifications.iter().all(|n| n.get("id").is_none()),
        "{:?}",
        server.notifications
    );
}

#[test]
fn rounds_are_told_apart_by_their_state() {
    let folder = fixture_folder(None);
    let mut server = Server::start(folder.path());
    let tool = "test_input_required_result_multi_round";
    let r1 = stateless_call(&mut server, tool, every_capability(), json!({}));
    let r1 = input_required(&r1).clone();
    let step1 = first_key(&r1);
    let r2 = stateless_call(
        &mut server,
        tool,
        every_capability(),
        json!({
            "inputResponses": { step1: { "action": "accept", "content": { "name": "Alice" } } },
            "requestState": r1["requestState"],
        }),
    );
    let r2 = input_required(&r2).clone();
    assert_ne!(r1["requestState"], r2["requestState"]);
    let step2 = first_key(&r2);
    let r3 = stateless_call(
        &mut server,
        tool,
        every_capability(),
        json!({
            "inputResponses": { step2: { "action": "accept", "content": { "color": "blue" } } },
            "requestState": r2["requestState"],
        }),
    );
    let text = first_text(complete(&r3)).to_string();
    assert!(text.contains("Alice") && text.contains("blue"), "{r3}");
}

#[test]
fn altered_forged_or_foreign_state_is_refused_with_a_clear_error() {
    let folder = fixture_folder(None);
    let mut server = Server::start(folder.path());
    let tool = "test_input_required_result_multi_round";
    let first = stateless_call(&mut server, tool, every_capability(), json!({}));
    let state = input_required(&first)["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let answers = json!({ "step1": { "action": "accept", "content": { "name": "Alice" } } });
    let mut flipped = state.clone().into_bytes();
    let middle = flipped.len() / 2;
    flipped[middle] = if flipped[middle] == b'A' { b'B' } else { b'A' };
    let cases = [
        ("tampered", format!("{state}-TAMPERED")),
        ("truncated", state[..state.len() / 2].to_string()),
        ("flipped", String::from_utf8(flipped).unwrap()),
        ("forged", "bm90IGEgc3RhdGUgb2YgdGhpcyBzZXJ2ZXI".to_string()),
    ];
    for (case, forged) in cases {
        let response = stateless_call(
            &mut server,
            tool,
            every_capability(),
            json!({ "inputResponses": answers, "requestState": forged }),
        );
        let error = error(&response);
        assert_eq!(error["code"], -32602, "{case}: {response}");
        assert!(
            error["message"].as_str().unwrap().contains("requestState"),
            "{case}: {response}"
        );
    }
    // The state of one tool is no key to another.
    let other = stateless_call(
        &mut server,
        "test_input_required_result_request_state",
        every_capability(),
        json!({ "inputResponses": answers, "requestState": state }),
    );
    assert_eq!(error(&other)["code"], -32602, "{other}");
    // Nor is it to the same tool with other arguments.
    let elicit = "test_elicitation";
    let with_message = |message: &str, extra: Value| {
        let mut extra = extra;
        extra["arguments"] = json!({ "message": message });
        extra
    };
    let first = stateless_call(
        &mut server,
        elicit,
        every_capability(),
        with_message("one", json!({})),
    );
    let state = input_required(&first)["requestState"].clone();
    let key = first_key(input_required(&first));
    let reply = json!({ key: { "action": "accept", "content": { "username": "u", "email": "u@example.com" } } });
    let retry = json!({ "inputResponses": reply, "requestState": state });
    let moved = stateless_call(
        &mut server,
        elicit,
        every_capability(),
        with_message("two", retry.clone()),
    );
    assert_eq!(error(&moved)["code"], -32602, "{moved}");
    // And the server goes on serving.
    let fine = stateless_call(
        &mut server,
        elicit,
        every_capability(),
        with_message("one", retry),
    );
    assert_eq!(complete(&fine)["isError"], false, "{fine}");
}

#[test]
fn state_sealed_by_one_key_is_refused_by_a_server_with_another() {
    let folder = fixture_folder(None);
    let key_a = "11".repeat(32);
    let key_b = "22".repeat(32);
    let mut a = Server::start_with(folder.path(), &["--state-key", &key_a]);
    let mut a_twin = Server::start_with(folder.path(), &["--state-key", &key_a]);
    let mut b = Server::start_with(folder.path(), &["--state-key", &key_b]);
    let tool = "test_input_required_result_multi_round";
    let first = stateless_call(&mut a, tool, every_capability(), json!({}));
    let state = input_required(&first)["requestState"].clone();
    let answers = json!({ "step1": { "action": "accept", "content": { "name": "Alice" } } });
    let retry = json!({ "inputResponses": answers, "requestState": state });
    // A replica sharing the key takes the state over.
    let twin = stateless_call(&mut a_twin, tool, every_capability(), retry.clone());
    input_required(&twin);
    let foreign = stateless_call(&mut b, tool, every_capability(), retry);
    assert_eq!(error(&foreign)["code"], -32602, "{foreign}");
}

#[test]
fn a_state_key_that_is_not_32_bytes_is_refused_at_start() {
    let folder = fixture_folder(None);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_corral"))
        .args([
            "serve",
            folder.path().to_str().unwrap(),
            "--state-key",
            "abc",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("state-key") || stderr.contains("state key"),
        "{stderr}"
    );
}

#[test]
fn missing_answers_are_asked_again_and_answers_to_nothing_asked_are_ignored() {
    let folder = fixture_folder(None);
    let mut server = Server::start(folder.path());
    let tool = "test_input_required_result_elicitation";
    let wrong = stateless_call(
        &mut server,
        tool,
        every_capability(),
        json!({ "inputResponses": { "wrong_key": { "action": "accept", "content": { "data": "x" } } } }),
    );
    assert!(
        input_required(&wrong)["inputRequests"]
            .get("user_name")
            .is_some(),
        "{wrong}"
    );
    let extra = stateless_call(
        &mut server,
        tool,
        every_capability(),
        json!({ "inputResponses": {
            "user_name": { "action": "accept", "content": { "name": "Bob" } },
            "never_asked": { "action": "accept", "content": { "foo": "bar" } },
        } }),
    );
    assert!(first_text(complete(&extra)).contains("Bob"), "{extra}");
    let null = stateless_call(
        &mut server,
        tool,
        every_capability(),
        json!({ "inputResponses": null }),
    );
    assert_eq!(error(&null)["code"], -32602, "{null}");
    let not_object = stateless_call(
        &mut server,
        tool,
        every_capability(),
        json!({ "inputResponses": { "user_name": 12345 } }),
    );
    assert!(
        not_object.get("error").is_some() || not_object["result"]["resultType"] == "input_required",
        "{not_object}"
    );
}

#[test]
fn asking_for_an_undeclared_capability_is_error_32021_naming_it() {
    let folder = fixture_folder(None);
    let mut server = Server::start(folder.path());
    let response = stateless_call(&mut server, "test_missing_capability", json!({}), json!({}));
    let error = error(&response);
    assert_eq!(error["code"], -32021, "{response}");
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({ "sampling": {} }),
        "{response}"
    );
    // A tool that checks first asks only for what was declared.
    let sampling_only = stateless_call(
        &mut server,
        "test_input_required_result_capabilities",
        json!({ "sampling": {} }),
        json!({}),
    );
    let requests = input_required(&sampling_only)["inputRequests"]
        .as_object()
        .unwrap()
        .clone();
    assert!(!requests.is_empty());
    assert!(
        requests
            .values()
            .all(|r| r["method"] == "sampling/createMessage"),
        "{sampling_only}"
    );
}
