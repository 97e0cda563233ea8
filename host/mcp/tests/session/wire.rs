//! JSON-RPC 2.0 on the wire: lines that are not JSON, JSON that is not a
//! valid message, unknown methods, and what is never answered (notifications
//! and the client's own responses).

use serde_json::{Value, json};

use crate::support::{Client, NOTHING, error, result};

#[tokio::test]
async fn a_line_that_is_not_json_is_a_parse_error_with_a_null_id() {
    let client = Client::initialized("2025-11-25").await;
    for line in [
        "{not json",
        "\"unterminated",
        r#"{"jsonrpc":"2.0","id":1,"#,
        "",
    ] {
        let reason = serde_json::from_str::<Value>(line).unwrap_err();
        assert_eq!(
            client.exchange(line).await,
            [error(
                Value::Null,
                -32700,
                &format!("Parse error: {reason}")
            )],
            "{line}"
        );
    }
    // The session goes on.
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    assert_eq!(client.exchange(ping).await, [result(1, json!({}))]);
}

#[tokio::test]
async fn json_that_is_not_a_valid_request_is_an_invalid_request() {
    let client = Client::initialized("2025-11-25").await;
    let not_2_0 = r#"Invalid Request: "jsonrpc" must be "2.0""#;
    let bad_id = r#"Invalid Request: "id" must be a string or an integer"#;
    let cases = [
        (
            "42",
            Value::Null,
            "Invalid Request: a message must be a JSON object",
        ),
        (r#"{"id":5,"method":"ping"}"#, json!(5), not_2_0),
        (
            r#"{"jsonrpc":"1.0","id":"v","method":"ping"}"#,
            json!("v"),
            not_2_0,
        ),
        (
            r#"{"jsonrpc":"2.0","id":6}"#,
            json!(6),
            r#"Invalid Request: missing "method""#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":12}"#,
            json!(7),
            r#"Invalid Request: "method" must be a string"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":12}"#,
            Value::Null,
            r#"Invalid Request: "method" must be a string"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"ping","params":"x"}"#,
            json!(8),
            r#"Invalid Request: "params" must be an object"#,
        ),
        // MCP ids are strings or integers, never null.
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
            bad_id,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            Value::Null,
            bad_id,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}"#,
            Value::Null,
            bad_id,
        ),
    ];
    for (line, id, message) in cases {
        assert_eq!(
            client.exchange(line).await,
            [error(id, -32600, message)],
            "{line}"
        );
    }
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found_before_and_after_initialize() {
    let unknown = r#"{"jsonrpc":"2.0","id":1,"method":"tools/frobnicate","params":{}}"#;
    let resources = r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#;
    for client in [Client::new().await, Client::initialized("2024-11-05").await] {
        assert_eq!(
            client.exchange(unknown).await,
            [error(1, -32601, "Method not found: tools/frobnicate")]
        );
        // The server declares tools and logging only.
        assert_eq!(
            client.exchange(resources).await,
            [error(2, -32601, "Method not found: resources/list")]
        );
    }
}

#[tokio::test]
async fn notifications_are_never_answered() {
    let client = Client::initialized("2025-11-25").await;
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
        // A method the server would answer, sent as a notification.
        r#"{"jsonrpc":"2.0","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
    ] {
        assert_eq!(client.exchange(line).await, NOTHING, "{line}");
    }
}

#[tokio::test]
async fn responses_from_the_client_are_ignored() {
    let client = Client::initialized("2025-11-25").await;
    for line in [
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found"}}"#,
    ] {
        assert_eq!(client.exchange(line).await, NOTHING, "{line}");
    }
}

#[tokio::test]
async fn an_error_response_with_a_null_id_is_ignored() {
    // What a client sends when it could not read the id of something the
    // server sent: a response like any other, never answered.
    let client = Client::initialized("2025-11-25").await;
    let line = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    assert_eq!(client.exchange(line).await, NOTHING);
}
