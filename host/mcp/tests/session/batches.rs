//! JSON-RPC batches: answered as one array in 2025-03-26, the only revision
//! that has them, and refused as a whole in every other revision and before
//! `initialize`. Nothing in a batch may hold its answer without bound: a
//! request of the stateless era (a `subscriptions/listen` stream above all)
//! is refused on its own, and the rest of the batch answered at once. (A
//! call in a batch asks the client nothing: see `asks`.)

use serde_json::{Value, json};

use crate::support::{
    Client, LEGACY, NOTHING, cancel, error, request, result, sorted_by_id, stateless, text,
};

/// The responses in a batch's answer (which must be one array), in the
/// order of their ids.
fn batch_answer(answers: Vec<Value>) -> Vec<Value> {
    match <[Value; 1]>::try_from(answers) {
        Ok([Value::Array(responses)]) => sorted_by_id(responses),
        other => panic!("not one array: {other:?}"),
    }
}

/// A request, a notification, a request, a request for an unknown method
/// and something that is not a message.
fn mixed_batch() -> Value {
    json!([
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": { "name": "add", "arguments": { "a": 1, "b": 1 } },
        },
        { "jsonrpc": "2.0", "method": "notifications/initialized" },
        { "jsonrpc": "2.0", "id": "two", "method": "ping" },
        { "jsonrpc": "2.0", "id": 3, "method": "nope" },
        17,
    ])
}

#[tokio::test]
async fn in_2025_03_26_a_batch_is_answered_with_one_array_of_every_response() {
    let client = Client::initialized("2025-03-26").await;
    let sum = json!({ "content": [text(r#"{"sum":2}"#)], "isError": false });
    assert_eq!(
        batch_answer(client.exchange(mixed_batch()).await),
        sorted_by_id(vec![
            result(1, sum),
            result("two", json!({})),
            error(3, -32601, "Method not found: nope"),
            error(
                Value::Null,
                -32600,
                "Invalid Request: a message must be a JSON object"
            ),
        ])
    );
}

#[tokio::test]
async fn an_empty_batch_is_one_invalid_request() {
    let client = Client::initialized("2025-03-26").await;
    assert_eq!(
        client.exchange("[]").await,
        [error(Value::Null, -32600, "Invalid Request: empty batch")]
    );
}

#[tokio::test]
async fn a_batch_of_notifications_and_responses_gets_no_answer() {
    let client = Client::initialized("2025-03-26").await;
    let batch = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":9,"result":{}}]"#;
    assert_eq!(client.exchange(batch).await, NOTHING);
}

#[tokio::test]
async fn initialize_inside_a_batch_is_refused() {
    let client = Client::initialized("2025-03-26").await;
    let batch = r#"[{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-03-26"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    assert_eq!(
        batch_answer(client.exchange(batch).await),
        sorted_by_id(vec![
            result(2, json!({})),
            error(
                "i",
                -32600,
                "Invalid Request: initialize must not be part of a batch"
            ),
        ])
    );
}

#[tokio::test]
async fn a_cancelled_request_is_left_out_of_its_batchs_answer() {
    let client = Client::initialized("2025-03-26").await;
    let batch = r#"[{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    let answer = client.send(batch);
    client.host.wait_started().await;
    assert_eq!(client.exchange(cancel("w")).await, NOTHING);
    assert_eq!(batch_answer(answer.all().await), [result(2, json!({}))]);
}

#[tokio::test]
async fn a_batch_of_more_than_256_messages_is_refused() {
    let client = Client::initialized("2025-03-26").await;
    let pings: Vec<Value> = (0..257)
        .map(|id| json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }))
        .collect();
    assert_eq!(
        client.exchange(Value::Array(pings)).await,
        [error(
            Value::Null,
            -32600,
            "Invalid Request: a batch may hold at most 256 messages; this one holds 257"
        )]
    );
}

#[tokio::test]
async fn every_other_revision_refuses_batches_as_a_whole() {
    for revision in LEGACY.into_iter().filter(|&r| r != "2025-03-26") {
        let client = Client::initialized(revision).await;
        let message = format!(
            "Invalid Request: JSON-RPC batches are not part of protocol revision {revision}"
        );
        assert_eq!(
            client.exchange(mixed_batch()).await,
            [error(Value::Null, -32600, &message)],
            "{revision}"
        );
    }
}

#[tokio::test]
async fn a_batch_before_initialize_is_refused() {
    let client = Client::new().await;
    assert_eq!(
        client
            .exchange(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
            .await,
        [error(
            Value::Null,
            -32600,
            "Invalid Request: JSON-RPC batches need protocol revision 2025-03-26, negotiated by a prior initialize"
        )]
    );
}

/// The refusal of a stateless-only `method` (`subscriptions/listen`,
/// `server/discover`) in a batch.
fn refused_in_batch(id: impl Into<Value>, method: &str) -> Value {
    let message = format!(
        "Invalid Request: {method} belongs to protocol revision 2026-07-28, and JSON-RPC batches to 2025-03-26: send it on its own, outside a batch"
    );
    error(id, -32600, &message)
}

#[tokio::test]
async fn a_listen_stream_inside_a_batch_is_refused_and_the_rest_answered_at_once() {
    let client = Client::initialized("2025-03-26").await;
    // The wire fuzzer's batch: without the refusal the stream would open
    // (acknowledged) and hold the ping's answer until the session ended.
    let batch = json!([
        request(1, "ping", json!({})),
        stateless(
            2,
            "subscriptions/listen",
            json!({ "notifications": { "toolsListChanged": true } })
        ),
    ]);
    assert_eq!(
        batch_answer(client.exchange(batch).await),
        [
            result(1, json!({})),
            refused_in_batch(2, "subscriptions/listen")
        ]
    );
}

#[tokio::test]
async fn every_request_of_the_stateless_era_inside_a_batch_is_refused_on_its_own() {
    let client = Client::initialized("2025-03-26").await;
    let meta_refusal = "Invalid Request: a request whose `_meta` carries \"io.modelcontextprotocol/protocolVersion\" is of the stateless era (protocol revision 2026-07-28), and JSON-RPC batches belong to 2025-03-26: send it on its own, outside a batch";
    let mut unsupported = request("future", "tools/list", json!({}));
    unsupported["params"]["_meta"] =
        json!({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" });
    let batch = json!([
        // Methods only the stateless era has, with or without their `_meta`.
        stateless("discover", "server/discover", json!({})),
        request("bare", "subscriptions/listen", json!({})),
        // Requests whose `_meta` names a revision, valid or not.
        stateless(
            "call",
            "tools/call",
            json!({ "name": "add", "arguments": { "a": 1, "b": 2 } })
        ),
        stateless("ping", "ping", json!({})),
        unsupported,
        // Other `io.modelcontextprotocol/` keys select nothing: served.
        request(
            "legacy",
            "tools/call",
            json!({
                "name": "add",
                "arguments": { "a": 2, "b": 2 },
                "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "t" } },
            })
        ),
    ]);
    let sum = json!({ "content": [text(r#"{"sum":4}"#)], "isError": false });
    assert_eq!(
        batch_answer(client.exchange(batch).await),
        sorted_by_id(vec![
            refused_in_batch("discover", "server/discover"),
            refused_in_batch("bare", "subscriptions/listen"),
            error("call", -32600, meta_refusal),
            error("ping", -32600, meta_refusal),
            error("future", -32600, meta_refusal),
            result("legacy", sum),
        ])
    );
}
