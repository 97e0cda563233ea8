//! JSON-RPC 2.0 on the wire: lines that are not JSON, JSON holding values
//! the server cannot read, JSON that is not a valid message, unknown
//! methods, and what is never answered (notifications and the client's own
//! responses).

use serde_json::{Value, json};

use crate::support::{Client, NOTHING, error, request, result, text};

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
async fn params_by_position_are_invalid_params() {
    let client = Client::new().await;
    assert_eq!(
        client
            .exchange(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}"#)
            .await,
        [error(
            4,
            -32602,
            "Invalid params: MCP takes params by name (an object), not by position (an array)"
        )]
    );
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

/// The message of the error for `arguments` holding an unreadable value,
/// shown up to where it could not be read.
fn unreadable_arguments(what: &str, near: &str) -> String {
    format!("Invalid params: `arguments` holds {what} (near `{near}`)")
}

const OUT_OF_RANGE: &str = "a number out of range for this server (beyond a 64-bit float)";
const LONE_SURROGATE: &str =
    "a string with a lone UTF-16 surrogate (half of a character), which this server cannot read";

#[tokio::test]
async fn valid_json_with_values_the_server_cannot_read_is_answered_by_its_id() {
    let client = Client::initialized("2025-11-25").await;
    // A number beyond f64, and a string cut in the middle of an emoji as
    // JavaScript writes it: both valid JSON.
    let huge = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"n":1e400}}}"#;
    assert_eq!(
        client.exchange(huge).await,
        [error(
            7,
            -32602,
            &unreadable_arguments(OUT_OF_RANGE, r#"{"n":1e400"#)
        )]
    );
    let cut = r#"{"jsonrpc":"2.0","id":"cut","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi \ud83d"}}}"#;
    assert_eq!(
        client.exchange(cut).await,
        [error(
            "cut",
            -32602,
            &unreadable_arguments(LONE_SURROGATE, r#"{"text":"hi \ud83d""#)
        )]
    );
    // An id that cannot be read cannot be answered by.
    let bad_id = r#"{"jsonrpc":"2.0","id":"\ud83d","method":"ping"}"#;
    assert_eq!(
        client.exchange(bad_id).await,
        [error(
            Value::Null,
            -32600,
            &format!(r#"Invalid Request: "id" holds {LONE_SURROGATE} (near `"\ud83d"`)"#)
        )]
    );
    // A member the server never looks into does not matter.
    let extra = r#"{"jsonrpc":"2.0","id":8,"method":"ping","trace":1e400}"#;
    assert_eq!(client.exchange(extra).await, [result(8, json!({}))]);
    // Nor in a response from the client, ignored as ever.
    let response = r#"{"jsonrpc":"2.0","id":9,"result":{"n":1e400}}"#;
    assert_eq!(client.exchange(response).await, NOTHING);
    // The session goes on, and reads a whole emoji, escaped as a pair.
    let fine = r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi \ud83d\ude00"}}}"#;
    assert_eq!(
        client.exchange(fine).await,
        [result(
            10,
            json!({ "content": [text("{\"text\":\"hi \u{1F600}\"}")], "isError": false })
        )]
    );
}

#[tokio::test]
async fn a_notification_with_an_unreadable_value_is_acted_on_as_far_as_it_reads() {
    let client = Client::initialized("2025-11-25").await;
    let waiting = client.send(request("w", "tools/call", json!({ "name": "wait" })));
    client.host.wait_started().await;
    // Its reason cut mid-emoji: the cancellation still names its request.
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"user left \ud83d"}}"#;
    assert_eq!(client.exchange(cancel).await, NOTHING);
    client.host.wait_stopped().await;
    assert_eq!(waiting.all().await, NOTHING);
}

#[tokio::test]
async fn a_huge_line_with_an_unreadable_value_costs_a_few_parses() {
    // 2 MiB of numbers and, last, one that cannot be read: answered with
    // the id, in a small multiple of the time one parse of the line takes
    // (the bound is loose: other work on the machine skews either timing).
    let client = Client::initialized("2025-11-25").await;
    let numbers = vec!["1"; 1 << 20].join(",");
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"list":[{numbers}],"last":1e400}}}}}}"#
    );
    let started = std::time::Instant::now();
    let parse = serde_json::from_str::<Value>(&line.replace("1e400", "1"));
    let one_parse = started.elapsed();
    assert!(parse.is_ok());
    let started = std::time::Instant::now();
    let answers = client.exchange(&line).await;
    let answering = started.elapsed();
    assert_eq!(
        answers,
        [error(
            1,
            -32602,
            &unreadable_arguments(OUT_OF_RANGE, r#",1,1,1,1,1],"last":1e400"#)
        )]
    );
    assert!(
        answering < one_parse * 10,
        "answering took {answering:?}, one parse {one_parse:?}"
    );
}
