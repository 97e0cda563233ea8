//! Tools that ask the client (elicitation, sampling, roots), in both eras:
//! in a legacy session the server sends the client requests during the call
//! and waits for its responses; a stateless call ends with `input_required`
//! and a sealed `requestState`, and is run again when the client retries
//! with the answers. And everything that can go wrong on the way.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{
    Client, FakeHost, NOTHING, asking, cancel, error, initialize_request, notification, request,
    result, server_info, sorted_by_id, stateless, text, watching,
};
use corral_mcp::ServerOptions;

/// A session serving the asking tools, initialized with `revision` by a
/// client declaring `capabilities`.
async fn legacy(revision: &str, capabilities: Value) -> Client {
    let client = Client::start(FakeHost::serving(asking()), watching()).await;
    let mut initialize = initialize_request("init", revision);
    initialize["params"]["capabilities"] = capabilities;
    let answers = client.exchange(initialize).await;
    assert_eq!(
        answers[0]["result"]["protocolVersion"], revision,
        "{answers:?}"
    );
    client
}

fn legacy_call(id: i64, tool: &str) -> Value {
    request(id, "tools/call", json!({ "name": tool, "arguments": {} }))
}

fn tool_result(id: i64, text_: &str, is_error: bool) -> Value {
    result(id, json!({ "content": [text(text_)], "isError": is_error }))
}

fn accepted(field: &str, value: &str) -> Value {
    json!({ "action": "accept", "content": { field: value } })
}

// ---- legacy era --------------------------------------------------------------

#[tokio::test]
async fn a_legacy_call_asks_the_client_on_its_own_line_and_uses_the_answer() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut call = client.send(legacy_call(1, "greet"));
    let asked = call.next().await;
    assert_eq!(
        asked,
        json!({
            "jsonrpc": "2.0",
            "id": "corral-1",
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": { "name": { "type": "string" } },
                    "required": ["name"],
                },
            },
        })
    );
    assert_eq!(client.requests_to_client(), 1);
    // The response is a message of its own, answered with nothing.
    let answer = result("corral-1", accepted("name", "Ada"));
    assert_eq!(client.exchange(answer).await, NOTHING);
    assert_eq!(call.all().await, [tool_result(1, "Hello, Ada!", false)]);
    assert_eq!(client.requests_to_client(), 0);
}

#[tokio::test]
async fn elicitation_has_no_mode_before_2025_11_25_and_does_not_exist_before_2025_06_18() {
    let client = legacy("2025-06-18", json!({ "elicitation": {} })).await;
    let mut call = client.send(legacy_call(1, "greet"));
    let asked = call.next().await;
    assert_eq!(asked["method"], "elicitation/create");
    assert!(asked["params"].get("mode").is_none(), "{asked}");
    client
        .exchange(result(asked["id"].clone(), accepted("name", "Bo")))
        .await;
    assert_eq!(call.all().await, [tool_result(1, "Hello, Bo!", false)]);
    // URL mode arrived in 2025-11-25.
    let client = legacy("2025-06-18", json!({ "elicitation": { "url": {} } })).await;
    assert_eq!(
        client.exchange(legacy_call(2, "visit")).await,
        [tool_result(2, r#"Undeclared("elicitation.url")"#, true)]
    );
    let client = legacy("2025-03-26", json!({ "elicitation": {} })).await;
    assert_eq!(
        client.exchange(legacy_call(3, "greet")).await,
        [tool_result(3, r#"Undeclared("elicitation")"#, true)]
    );
}

#[tokio::test]
async fn a_capability_the_client_did_not_declare_is_never_asked() {
    let client = legacy("2025-11-25", json!({ "sampling": {} })).await;
    // Nothing but the result goes out.
    assert_eq!(
        client.exchange(legacy_call(1, "greet")).await,
        [tool_result(1, r#"Undeclared("elicitation")"#, true)]
    );
    assert_eq!(
        client.exchange(legacy_call(2, "context")).await,
        [tool_result(2, r#"Undeclared("roots")"#, true)]
    );
    assert_eq!(
        client.exchange(legacy_call(3, "capabilities")).await,
        [tool_result(
            3,
            "ClientCapabilities { elicitation_form: false, elicitation_url: false, sampling: true, roots: false }",
            false
        )]
    );
    assert_eq!(client.requests_to_client(), 0);
}

#[tokio::test]
async fn one_ask_of_several_requests_sends_them_all_and_answers_in_order() {
    // 2025-03-26: the last revision with batches.
    let client = legacy("2025-03-26", json!({ "sampling": {}, "roots": {} })).await;
    let mut call = client.send(legacy_call(1, "context"));
    let sampling = call.next().await;
    let roots = call.next().await;
    assert_eq!(sampling["method"], "sampling/createMessage");
    assert_eq!(sampling["params"]["maxTokens"], 100);
    assert_eq!(roots["method"], "roots/list");
    assert_eq!(roots["params"], json!({}));
    assert_ne!(sampling["id"], roots["id"]);
    // Answered out of order, and both in one batch.
    let roots_answer = json!({ "roots": [{ "uri": "file:///r", "name": "R" }] });
    let sampled = json!({ "role": "assistant", "content": { "type": "text", "text": "Paris" }, "model": "m" });
    let batch = json!([
        result(roots["id"].clone(), roots_answer.clone()),
        result(sampling["id"].clone(), sampled.clone())
    ]);
    assert_eq!(client.exchange(batch).await, NOTHING);
    let expected = Value::Array(vec![sampled, roots_answer]).to_string();
    assert_eq!(call.all().await, [tool_result(1, &expected, false)]);
}

#[tokio::test]
async fn an_error_response_or_a_result_that_is_no_object_is_a_failure() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut first = client.send(legacy_call(1, "greet"));
    let asked = first.next().await;
    client
        .exchange(error(asked["id"].clone(), -1, "User rejected"))
        .await;
    assert_eq!(
        first.all().await,
        [tool_result(1, r#"Failed("User rejected")"#, true)]
    );
    let mut second = client.send(legacy_call(2, "greet"));
    let asked = second.next().await;
    client.exchange(result(asked["id"].clone(), json!(7))).await;
    let answers = second.all().await;
    assert_eq!(answers[0]["result"]["isError"], true, "{answers:?}");
    assert!(
        answers[0].to_string().contains("not an object"),
        "{answers:?}"
    );
}

#[tokio::test]
async fn an_answer_past_6_mib_is_a_failure_and_is_not_handed_to_the_tool() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut call = client.send(legacy_call(1, "greet"));
    let asked = call.next().await;
    let huge = "x".repeat(6 << 20);
    client
        .exchange(result(asked["id"].clone(), accepted("name", &huge)))
        .await;
    let answers = call.all().await;
    assert_eq!(answers[0]["result"]["isError"], true);
    let text = answers[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Failed(") && text.contains("6 MiB"),
        "{text}"
    );
    assert!(text.len() < 200, "{text}");
    // Just under the bound is an answer like any other.
    let mut call = client.send(legacy_call(2, "greet"));
    let asked = call.next().await;
    let large = "y".repeat((6 << 20) - 100);
    client
        .exchange(result(asked["id"].clone(), accepted("name", &large)))
        .await;
    let answers = call.all().await;
    assert_eq!(answers[0]["result"]["isError"], false);
}

#[tokio::test]
async fn the_answers_of_one_ask_hold_at_most_16_mib_together() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut call = client.send(legacy_call(1, "crowd"));
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(call.next().await["id"].clone());
    }
    // Five answers of 3.5 MiB each: each within its own bound, 17.5 MiB together.
    let large = "z".repeat(7 << 19);
    for id in ids {
        client.exchange(result(id, accepted("x", &large))).await;
    }
    let answers = call.all().await;
    assert_eq!(answers.len(), 1, "{} messages", answers.len());
    assert_eq!(answers[0]["result"]["isError"], true);
    let text = answers[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Failed(") && text.contains("16 MiB"),
        "{text}"
    );
    assert_eq!(client.requests_to_client(), 0);
    // Within the bound, five answers are five answers.
    let mut call = client.send(legacy_call(2, "crowd"));
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(call.next().await["id"].clone());
    }
    for id in ids {
        client.exchange(result(id, accepted("x", "ok"))).await;
    }
    assert_eq!(call.all().await, [tool_result(2, "5 answered", false)]);
}

#[tokio::test]
async fn a_clients_error_message_is_cut_short_for_the_tool() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut call = client.send(legacy_call(1, "greet"));
    let asked = call.next().await;
    let long = "no".repeat(100_000);
    client.exchange(error(asked["id"].clone(), -1, &long)).await;
    let answers = call.all().await;
    let text = answers[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with(r#"Failed("nonono"#), "{text}");
    assert!(text.ends_with(r#"...")"#) && text.len() < 300, "{text}");
}

#[tokio::test]
async fn responses_to_nothing_waiting_are_ignored() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    for id in [json!("corral-99"), json!(5)] {
        assert_eq!(client.exchange(result(id, json!({}))).await, NOTHING);
    }
    // An error about a request whose id the client could not read.
    let unreadable = error(Value::Null, -32600, "Invalid Request");
    assert_eq!(client.exchange(unreadable).await, NOTHING);
    let mut call = client.send(legacy_call(1, "greet"));
    let asked = call.next().await;
    // Another id, or the right one as a number: not this request.
    client
        .exchange(result("corral-2", accepted("name", "X")))
        .await;
    call.assert_unanswered().await;
    client
        .exchange(result(asked["id"].clone(), accepted("name", "Y")))
        .await;
    assert_eq!(call.all().await, [tool_result(1, "Hello, Y!", false)]);
}

#[tokio::test]
async fn cancelling_a_call_that_waits_forgets_its_requests_and_tells_the_client() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut call = client.send(legacy_call(1, "greet"));
    let asked = call.next().await;
    assert_eq!(client.requests_to_client(), 1);
    assert_eq!(client.exchange(cancel(1)).await, NOTHING);
    // No response to the call: only the cancellation of its request.
    assert_eq!(
        call.all().await,
        [notification(
            "notifications/cancelled",
            json!({ "requestId": asked["id"], "reason": "the tool no longer waits for this answer" }),
        )]
    );
    assert_eq!(client.requests_to_client(), 0);
    // A late answer changes nothing.
    assert_eq!(
        client
            .exchange(result(asked["id"].clone(), accepted("name", "Z")))
            .await,
        NOTHING
    );
}

#[tokio::test]
async fn when_the_session_ends_a_call_waiting_for_the_client_hears_so_at_once() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut call = client.send(legacy_call(1, "greet"));
    call.next().await;
    client.finish().await;
    let answers = call.all().await;
    assert_eq!(answers[0]["result"]["isError"], true, "{answers:?}");
    assert!(
        answers[0].to_string().contains("Unavailable"),
        "{answers:?}"
    );
    // And nothing is asked any more.
    let answers = client.exchange(legacy_call(2, "greet")).await;
    assert!(
        answers[0].to_string().contains("Unavailable"),
        "{answers:?}"
    );
}

#[tokio::test]
async fn a_session_holds_at_most_64_requests_for_the_client() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut waiting = Vec::new();
    for id in 0..64 {
        let mut call = client.send(legacy_call(id, "greet"));
        call.next().await;
        waiting.push(call);
    }
    assert_eq!(client.requests_to_client(), 64);
    let answers = client.exchange(legacy_call(64, "greet")).await;
    assert_eq!(answers[0]["result"]["isError"], true, "{answers:?}");
    assert!(
        answers[0].to_string().contains("Unavailable"),
        "{answers:?}"
    );
    assert!(answers[0].to_string().contains("64"), "{answers:?}");
}

#[tokio::test]
async fn a_call_inside_a_batch_asks_the_client_nothing_and_the_batch_is_answered_at_once() {
    // 2025-03-26, the only revision with batches, asks for sampling and roots.
    let client = legacy("2025-03-26", json!({ "sampling": {}, "roots": {} })).await;
    let batch = json!([request("p", "ping", json!({})), legacy_call(1, "context")]);
    let answers = client.exchange(batch).await;
    // The batch's answer alone: no request to the client went before it,
    // and none waits for its answer.
    assert_eq!(answers.len(), 1, "{answers:?}");
    let unavailable = "Unavailable(\"this call came in a JSON-RPC batch, whose answer waits for every request in it, so it may not wait for the client: send the call on its own to be asked\")";
    assert_eq!(
        sorted_by_id(answers[0].as_array().cloned().unwrap_or_default()),
        sorted_by_id(vec![
            result("p", json!({})),
            tool_result(1, unavailable, true)
        ])
    );
    assert_eq!(client.requests_to_client(), 0);
    // What the client did not declare is still undeclared, in a batch too.
    let batch = json!([legacy_call(2, "greet")]);
    assert_eq!(
        client.exchange(batch).await,
        [json!([tool_result(
            2,
            r#"Undeclared("elicitation")"#,
            true
        )])]
    );
    // The same call on its own asks.
    let mut call = client.send(legacy_call(3, "context"));
    assert_eq!(call.next().await["method"], "sampling/createMessage");
}

#[tokio::test]
async fn a_stateless_request_never_makes_a_request_to_the_client() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let answers = client
        .exchange(stateless(
            1,
            "tools/call",
            json!({ "name": "greet", "arguments": {}, "_meta": { CAPABILITIES: { "elicitation": {} } } }),
        ))
        .await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["result"]["resultType"], "input_required");
    assert_eq!(client.requests_to_client(), 0);
}

#[tokio::test]
async fn sampling_audio_is_never_sent_to_a_client_of_2024_11_05() {
    let client = legacy("2024-11-05", json!({ "sampling": {} })).await;
    // Nothing goes out but the tool's result.
    let answers = client.exchange(legacy_call(1, "hear")).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["result"]["isError"], true);
    let text = answers[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Failed(")
            && text.contains("audio needs protocol revision 2025-03-26 or later"),
        "{text}"
    );
    assert_eq!(client.requests_to_client(), 0);
    // From 2025-03-26 on, audio is sent as asked.
    let client = legacy("2025-03-26", json!({ "sampling": {} })).await;
    let mut call = client.send(legacy_call(1, "hear"));
    let asked = call.next().await;
    assert_eq!(asked["method"], "sampling/createMessage");
    assert_eq!(asked["params"]["messages"][0]["content"]["type"], "audio");
}

/// The sampling request a legacy client of `revision` declaring
/// `capabilities` is sent for `recall` (which asks for "thisServer").
async fn recall_request(revision: &str, capabilities: Value) -> Value {
    let client = legacy(revision, capabilities).await;
    let mut call = client.send(legacy_call(1, "recall"));
    let asked = call.next().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    asked["params"].clone()
}

#[tokio::test]
async fn include_context_is_left_out_from_2025_11_25_unless_the_client_declared_sampling_context() {
    let params = recall_request("2025-11-25", json!({ "sampling": {} })).await;
    assert!(params.get("includeContext").is_none(), "{params}");
    assert_eq!(params["maxTokens"], 100);
    let declared = json!({ "sampling": { "context": {} } });
    let params = recall_request("2025-11-25", declared).await;
    assert_eq!(params["includeContext"], "thisServer");
    // Before 2025-11-25 there was no such capability to declare.
    let params = recall_request("2025-06-18", json!({ "sampling": {} })).await;
    assert_eq!(params["includeContext"], "thisServer");
}

// ---- stateless era -----------------------------------------------------------

const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

fn every_capability() -> Value {
    json!({ "elicitation": {}, "sampling": {}, "roots": {} })
}

async fn stateless_client(options: ServerOptions) -> Client {
    Client::start(FakeHost::serving(asking()), options).await
}

/// A stateless `tools/call` of `tool` declaring `capabilities`, with the
/// params `extra` (inputResponses, requestState, arguments).
fn modern_call(id: i64, tool: &str, capabilities: Value, extra: Value) -> Value {
    let mut params =
        json!({ "name": tool, "arguments": {}, "_meta": { CAPABILITIES: capabilities } });
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    stateless(id, "tools/call", params)
}

/// The one answer to `line`.
async fn answer(client: &Client, line: Value) -> Value {
    let answers = client.exchange(line).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    answers.into_iter().next().unwrap()
}

/// The `input_required` result of `response`, with its state.
fn input_required(response: &Value) -> (Value, String) {
    let result = &response["result"];
    assert_eq!(result["resultType"], "input_required", "{response}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        server_info()
    );
    let state = result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_string();
    (result["inputRequests"].clone(), state)
}

fn completed_text(response: &Value) -> String {
    let result = &response["result"];
    assert_eq!(result["resultType"], "complete", "{response}");
    result["content"][0]["text"].as_str().unwrap().to_string()
}

fn invalid_params(response: &Value, says: &str) {
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains(says), "{says}: {response}");
}

#[tokio::test]
async fn a_stateless_call_that_asks_is_answered_input_required_then_completes_on_the_retry() {
    let client = stateless_client(watching()).await;
    let first = answer(
        &client,
        modern_call(1, "greet", every_capability(), json!({})),
    )
    .await;
    let (requests, state) = input_required(&first);
    assert_eq!(
        requests,
        json!({
            "user_name": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "name": { "type": "string" } },
                        "required": ["name"],
                    },
                },
            },
        })
    );
    assert_eq!(
        first["result"].as_object().unwrap().len(),
        4,
        "resultType, inputRequests, requestState, _meta: {first}"
    );
    let retry = modern_call(
        2,
        "greet",
        every_capability(),
        json!({ "inputResponses": { "user_name": accepted("name", "Alice") }, "requestState": state }),
    );
    assert_eq!(
        completed_text(&answer(&client, retry).await),
        "Hello, Alice!"
    );
}

#[tokio::test]
async fn answers_for_round_one_need_no_state_and_extra_keys_are_ignored() {
    let client = stateless_client(watching()).await;
    let call = modern_call(
        1,
        "greet",
        every_capability(),
        json!({ "inputResponses": {
            "user_name": accepted("name", "Alice"),
            "unknown_extra_key": accepted("foo", "bar"),
        } }),
    );
    assert_eq!(
        completed_text(&answer(&client, call).await),
        "Hello, Alice!"
    );
}

#[tokio::test]
async fn a_missing_answer_is_asked_again() {
    let client = stateless_client(watching()).await;
    let wrong = json!({ "inputResponses": { "wrong_key": accepted("data", "x") } });
    let response = answer(&client, modern_call(1, "greet", every_capability(), wrong)).await;
    let (requests, state) = input_required(&response);
    assert!(requests.get("user_name").is_some(), "{response}");
    // Also with a state: the same round is asked again, with a new state.
    let again = json!({ "inputResponses": {}, "requestState": state });
    let response = answer(&client, modern_call(2, "greet", every_capability(), again)).await;
    let (requests, newer) = input_required(&response);
    assert!(requests.get("user_name").is_some(), "{response}");
    assert_ne!(newer, state);
}

#[tokio::test]
async fn rounds_are_told_apart_by_their_state() {
    let client = stateless_client(watching()).await;
    let caps = every_capability;
    let r1 = answer(&client, modern_call(1, "survey", caps(), json!({}))).await;
    let (requests, s1) = input_required(&r1);
    assert!(requests.get("step1").is_some(), "{r1}");
    let r2 = answer(
        &client,
        modern_call(
            2,
            "survey",
            caps(),
            json!({ "inputResponses": { "step1": accepted("name", "Alice") }, "requestState": s1 }),
        ),
    )
    .await;
    let (requests, s2) = input_required(&r2);
    assert!(
        requests.get("step2").is_some() && requests.get("step1").is_none(),
        "{r2}"
    );
    assert_ne!(s1, s2);
    // Only the second round's answer: the first is in the state.
    let r3 = answer(
        &client,
        modern_call(
            3,
            "survey",
            caps(),
            json!({ "inputResponses": { "step2": accepted("color", "blue") }, "requestState": s2 }),
        ),
    )
    .await;
    assert_eq!(completed_text(&r3), "Alice likes blue");
    // The first state still answers the first round (it may be sent again).
    let again = answer(
        &client,
        modern_call(
            4,
            "survey",
            caps(),
            json!({ "inputResponses": { "step1": accepted("name", "Bob") }, "requestState": s1 }),
        ),
    )
    .await;
    input_required(&again);
}

#[tokio::test]
async fn several_requests_of_every_kind_in_one_round() {
    let client = stateless_client(watching()).await;
    let first = answer(
        &client,
        modern_call(1, "context", every_capability(), json!({})),
    )
    .await;
    let (requests, state) = input_required(&first);
    assert_eq!(requests["question"]["method"], "sampling/createMessage");
    assert_eq!(
        requests["client_roots"],
        json!({ "method": "roots/list", "params": {} })
    );
    let sampled = json!({ "role": "assistant", "content": { "type": "text", "text": "Paris" }, "model": "m" });
    let roots = json!({ "roots": [{ "uri": "file:///test/root", "name": "Test Root" }] });
    let retry = json!({
        "inputResponses": { "question": sampled, "client_roots": roots },
        "requestState": state,
    });
    let done = answer(
        &client,
        modern_call(2, "context", every_capability(), retry),
    )
    .await;
    assert_eq!(completed_text(&done), json!([sampled, roots]).to_string());
}

#[tokio::test]
async fn altered_truncated_forged_or_foreign_state_is_refused() {
    let client = stateless_client(watching()).await;
    let first = answer(
        &client,
        modern_call(1, "survey", every_capability(), json!({})),
    )
    .await;
    let (_, state) = input_required(&first);
    let answers = json!({ "step1": accepted("name", "Alice") });
    for forged in [
        format!("{state}-TAMPERED"),
        state[..state.len() / 2].to_string(),
        format!("x{}", &state[1..]),
        "bm90IGEgc3RhdGU".to_string(),
        String::new(),
    ] {
        let retry = json!({ "inputResponses": answers, "requestState": forged });
        let response = answer(&client, modern_call(2, "survey", every_capability(), retry)).await;
        invalid_params(
            &response,
            "requestState was altered or was not issued by this server",
        );
    }
    let retry = json!({ "inputResponses": answers, "requestState": state });
    let other_tool = answer(
        &client,
        modern_call(3, "greet", every_capability(), retry.clone()),
    )
    .await;
    invalid_params(&other_tool, "another tool");
    let mut other_arguments = retry.clone();
    other_arguments["arguments"] = json!({ "x": 1 });
    let response = answer(
        &client,
        modern_call(4, "survey", every_capability(), other_arguments),
    )
    .await;
    invalid_params(&response, "other arguments");
    // A server with another key: not its state.
    let other = stateless_client(ServerOptions {
        state_key: corral_mcp::StateKey::new([9; 32]),
        ..watching()
    })
    .await;
    let response = answer(
        &other,
        modern_call(5, "survey", every_capability(), retry.clone()),
    )
    .await;
    invalid_params(&response, "not issued by this server");
    // A state that is not a string.
    let response = answer(
        &client,
        modern_call(
            6,
            "survey",
            every_capability(),
            json!({ "requestState": 5 }),
        ),
    )
    .await;
    invalid_params(&response, "requestState");
    // The true one still works.
    input_required(&answer(&client, modern_call(7, "survey", every_capability(), retry)).await);
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let client = stateless_client(ServerOptions {
        state_ttl: Duration::ZERO,
        ..watching()
    })
    .await;
    let first = answer(
        &client,
        modern_call(1, "greet", every_capability(), json!({})),
    )
    .await;
    let (_, state) = input_required(&first);
    let retry =
        json!({ "inputResponses": { "user_name": accepted("name", "A") }, "requestState": state });
    let response = answer(&client, modern_call(2, "greet", every_capability(), retry)).await;
    invalid_params(&response, "requestState has expired");
}

#[tokio::test]
async fn input_responses_must_be_an_object_of_objects() {
    let client = stateless_client(watching()).await;
    for bad in [
        json!(null),
        json!([]),
        json!("x"),
        json!({ "user_name": 12345 }),
    ] {
        let call = modern_call(
            1,
            "greet",
            every_capability(),
            json!({ "inputResponses": bad }),
        );
        let response = answer(&client, call).await;
        invalid_params(&response, "inputResponses");
    }
}

#[tokio::test]
async fn an_undeclared_capability_is_error_32021_naming_it() {
    let client = stateless_client(watching()).await;
    let response = answer(
        &client,
        modern_call(401, "context", json!({ "roots": {} }), json!({})),
    )
    .await;
    assert_eq!(response["id"], 401);
    assert_eq!(response["error"]["code"], -32021, "{response}");
    assert_eq!(
        response["error"]["data"],
        json!({ "requiredCapabilities": { "sampling": {} } })
    );
    let response = answer(&client, modern_call(2, "greet", json!({}), json!({}))).await;
    assert_eq!(
        response["error"]["data"],
        json!({ "requiredCapabilities": { "elicitation": {} } })
    );
    let response = answer(
        &client,
        modern_call(3, "visit", json!({ "elicitation": {} }), json!({})),
    )
    .await;
    assert_eq!(
        response["error"]["data"],
        json!({ "requiredCapabilities": { "elicitation": { "url": {} } } })
    );
    // Declared: asked.
    let response = answer(
        &client,
        modern_call(
            4,
            "visit",
            json!({ "elicitation": { "url": {} } }),
            json!({}),
        ),
    )
    .await;
    let (requests, _) = input_required(&response);
    assert_eq!(requests["visit"]["params"]["mode"], "url");
    // A tool may look first.
    let response = answer(
        &client,
        modern_call(5, "capabilities", json!({ "sampling": {} }), json!({})),
    )
    .await;
    assert!(
        completed_text(&response).contains("sampling: true"),
        "{response}"
    );
}

#[tokio::test]
async fn a_tool_that_asks_differently_when_run_again_gets_an_error_not_the_answers() {
    let client = stateless_client(watching()).await;
    let first = answer(
        &client,
        modern_call(1, "moody", every_capability(), json!({})),
    )
    .await;
    let (_, state) = input_required(&first);
    let retry = json!({ "inputResponses": { "mood": accepted("x", "y") }, "requestState": state });
    let response = answer(&client, modern_call(2, "moody", every_capability(), retry)).await;
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(
        response
            .to_string()
            .contains("the tool asked differently when run again"),
        "{response}"
    );
}

#[tokio::test]
async fn a_call_asks_at_most_8_rounds_and_a_state_holds_at_most_256_kib() {
    let client = stateless_client(watching()).await;
    let mut state = None;
    for round in 1..=8 {
        let mut extra = json!({});
        if let Some(state) = &state {
            let key = format!("r{}", round - 1);
            extra = json!({ "inputResponses": { key: accepted("x", "y") }, "requestState": state });
        }
        let response = answer(
            &client,
            modern_call(round, "marathon", every_capability(), extra),
        )
        .await;
        let (requests, next) = input_required(&response);
        assert!(requests.get(format!("r{round}")).is_some(), "{response}");
        state = Some(next);
    }
    let last = json!({ "inputResponses": { "r8": accepted("x", "y") }, "requestState": state });
    let response = answer(
        &client,
        modern_call(9, "marathon", every_capability(), last),
    )
    .await;
    let text = completed_text(&response);
    assert!(text.starts_with("8 answered, then Unavailable"), "{text}");
    assert!(text.contains("8 times"), "{text}");

    // An answer too large to carry into the next round.
    let big = accepted("name", &"x".repeat(300 * 1024));
    let response = answer(
        &client,
        modern_call(
            10,
            "survey",
            every_capability(),
            json!({ "inputResponses": { "step1": big } }),
        ),
    )
    .await;
    assert_eq!(response["result"]["isError"], true, "{response}");
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("Unavailable") && text.contains("256 KiB"),
        "{text}"
    );
    // And a state larger than any issued is refused unread.
    let huge = json!({ "requestState": "A".repeat(256 * 1024 + 1) });
    let response = answer(&client, modern_call(11, "survey", every_capability(), huge)).await;
    invalid_params(&response, "larger than 256 KiB");
}

#[tokio::test]
async fn a_stateless_client_is_asked_include_context_only_if_it_declared_sampling_context() {
    let client = stateless_client(watching()).await;
    let first = answer(
        &client,
        modern_call(1, "recall", json!({ "sampling": {} }), json!({})),
    )
    .await;
    let (requests, state) = input_required(&first);
    assert!(
        requests["recall"]["params"].get("includeContext").is_none(),
        "{requests}"
    );
    // The retry is answered: the state holds what the tool asked.
    let sampled = json!({ "role": "assistant", "content": { "type": "text", "text": "Nothing yet" }, "model": "m" });
    let retry = json!({ "requestState": state, "inputResponses": { "recall": sampled } });
    let done = answer(
        &client,
        modern_call(2, "recall", json!({ "sampling": {} }), retry),
    )
    .await;
    assert_eq!(completed_text(&done), sampled.to_string());
    let declared = json!({ "sampling": { "context": {} } });
    let first = answer(&client, modern_call(3, "recall", declared, json!({}))).await;
    let (requests, _) = input_required(&first);
    assert_eq!(requests["recall"]["params"]["includeContext"], "thisServer");
}
