//! `tools/call` in the legacy era: results shaped for each revision (text,
//! structured content, every content type, and what a revision lacks turned
//! into text), tool execution errors, protocol errors, ids, and calls running
//! side by side.

use serde_json::{Value, json};

use corral_mcp::ServerOptions;

use crate::support::{Client, FakeHost, LEGACY, NOTHING, cancel, error, request, result, text};

/// The answers to calling `tool` with `arguments` (request id 1) in a session
/// initialized with `revision`.
async fn call_in(revision: &str, tool: &str, arguments: Value) -> Vec<Value> {
    let client = Client::initialized(revision).await;
    client
        .exchange(request(
            1,
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        ))
        .await
}

#[tokio::test]
async fn text_results_are_the_same_in_every_revision() {
    for revision in LEGACY {
        assert_eq!(
            call_in(revision, "echo", json!({ "text": "hi" })).await,
            [result(
                1,
                json!({ "content": [text(r#"{"text":"hi"}"#)], "isError": false })
            )],
            "{revision}"
        );
    }
}

#[tokio::test]
async fn structured_content_arrives_in_2025_06_18_beside_its_text() {
    for revision in LEGACY {
        let mut expected = json!({ "content": [text(r#"{"sum":5}"#)], "isError": false });
        if revision >= "2025-06-18" {
            expected["structuredContent"] = json!({ "sum": 5 });
        }
        assert_eq!(
            call_in(revision, "add", json!({ "a": 2, "b": 3 })).await,
            [result(1, expected)],
            "{revision}"
        );
    }
}

#[tokio::test]
async fn structured_content_is_not_copied_as_json_beside_the_tools_own_text() {
    // The tool's own text is prose: it is what clients without
    // structuredContent get, and the model is not shown the data twice.
    for revision in LEGACY {
        let mut expected = json!({
            "content": [text("Partly cloudy, 22.5 °C")],
            "isError": false,
        });
        if revision >= "2025-06-18" {
            expected["structuredContent"] =
                json!({ "conditions": "Partly cloudy", "temperature": 22.5 });
        }
        assert_eq!(
            call_in(revision, "forecast", json!({})).await,
            [result(1, expected)],
            "{revision}"
        );
    }
}

#[tokio::test]
async fn structured_content_without_text_reaches_every_revision_as_json_text() {
    // No text of the tool's own: its JSON is the text, for clients before
    // 2025-06-18 (which have nothing else) and after (the spec's advice).
    for revision in LEGACY {
        let mut expected = json!({
            "content": [text(r#"{"level":1.25}"#)],
            "isError": false,
        });
        if revision >= "2025-06-18" {
            expected["structuredContent"] = json!({ "level": 1.25 });
        }
        assert_eq!(
            call_in(revision, "gauge", json!({})).await,
            [result(1, expected)],
            "{revision}"
        );
    }
}

#[tokio::test]
async fn structured_content_that_is_not_an_object_is_only_the_tools_text_before_2026_07_28() {
    // Every legacy revision defines structuredContent as an object: an
    // array has no place there, and the tool's own text is what they get.
    for revision in LEGACY {
        assert_eq!(
            call_in(revision, "roster", json!({})).await,
            [result(
                1,
                json!({
                    "content": [text("Two people: Ada and Bob")],
                    "isError": false,
                })
            )],
            "{revision}"
        );
    }
}

/// The image, the embedded resources (text and blob) and the image's
/// annotations, as every revision has them.
fn image() -> Value {
    json!({
        "type": "image",
        "data": "iVBORw==",
        "mimeType": "image/png",
        "annotations": { "audience": ["user"], "priority": 0.9 },
    })
}

fn embedded_text() -> Value {
    json!({
        "type": "resource",
        "resource": { "uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hello" },
    })
}

fn embedded_blob() -> Value {
    json!({ "type": "resource", "resource": { "uri": "file:///data.bin", "blob": "AQID" } })
}

#[tokio::test]
async fn every_content_type_in_2025_06_18_and_later() {
    for revision in ["2025-06-18", "2025-11-25"] {
        assert_eq!(
            call_in(revision, "media", json!({})).await,
            [result(
                1,
                json!({
                    "content": [
                        image(),
                        { "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav" },
                        {
                            "type": "resource_link",
                            "uri": "file:///project/src/main.rs",
                            "name": "main.rs",
                            "title": "Main",
                            "description": "Primary application entry point",
                            "mimeType": "text/x-rust",
                            "size": 42,
                            "annotations": {
                                "audience": ["user", "assistant"],
                                "priority": 0.5,
                                "lastModified": "2025-05-03T14:30:00Z",
                            },
                        },
                        embedded_text(),
                        embedded_blob(),
                    ],
                    "isError": false,
                })
            )],
            "{revision}"
        );
    }
}

/// A resource link as text, for revisions before 2025-06-18, its
/// annotations without `lastModified` (also a 2025-06-18 field).
fn link_as_text() -> Value {
    json!({
        "type": "text",
        "text": "Resource link: Main <file:///project/src/main.rs>: Primary application entry point",
        "annotations": { "audience": ["user", "assistant"], "priority": 0.5 },
    })
}

#[tokio::test]
async fn in_2025_03_26_a_resource_link_becomes_text_and_audio_stays() {
    assert_eq!(
        call_in("2025-03-26", "media", json!({})).await,
        [result(
            1,
            json!({
                "content": [
                    image(),
                    { "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav" },
                    link_as_text(),
                    embedded_text(),
                    embedded_blob(),
                ],
                "isError": false,
            })
        )]
    );
}

#[tokio::test]
async fn in_2024_11_05_audio_and_resource_links_become_text() {
    assert_eq!(
        call_in("2024-11-05", "media", json!({})).await,
        [result(
            1,
            json!({
                "content": [
                    image(),
                    text("[audio content (audio/wav, 4 bytes) omitted: protocol revision 2024-11-05 has no audio content]"),
                    link_as_text(),
                    embedded_text(),
                    embedded_blob(),
                ],
                "isError": false,
            })
        )]
    );
}

#[tokio::test]
async fn a_tool_execution_error_is_a_result_with_is_error() {
    for revision in LEGACY {
        assert_eq!(
            call_in(revision, "fail", json!({})).await,
            [result(
                1,
                json!({ "content": [text("the disk is full")], "isError": true })
            )],
            "{revision}"
        );
    }
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params() {
    assert_eq!(
        call_in("2025-11-25", "nope", json!({})).await,
        [error(1, -32602, "Unknown tool: nope")]
    );
}

#[tokio::test]
async fn an_unknown_tool_suggests_the_served_names_close_to_it() {
    let client = Client::initialized("2025-06-18").await;
    assert_eq!(
        client
            .exchange(request(
                1,
                "tools/call",
                json!({ "name": "ad", "arguments": {} })
            ))
            .await,
        [error(1, -32602, "Unknown tool: ad (did you mean `add`?)")]
    );
}

/// A tool may be missing because its plugin failed to load: the error
/// says which plugins did, and why, in every era.
#[tokio::test]
async fn an_unknown_tool_names_the_plugins_that_failed_to_load() {
    let host = FakeHost::new().with_not_loaded(&[("files.wasm", "not a valid component")]);
    let client = Client::start(host, ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    assert_eq!(
        client
            .exchange(request(
                1,
                "tools/call",
                json!({ "name": "read_file", "arguments": {} })
            ))
            .await,
        [error(
            1,
            -32602,
            "Unknown tool: read_file; it may be one of the 1 plugin(s) that failed to load:\n  \
             files.wasm: not a valid component"
        )]
    );
}

#[tokio::test]
async fn a_call_without_a_string_name_is_invalid_params() {
    let client = Client::initialized("2025-11-25").await;
    for params in [json!({ "arguments": {} }), json!({ "name": 7 })] {
        assert_eq!(
            client.exchange(request(1, "tools/call", params)).await,
            [error(
                1,
                -32602,
                "Invalid params: tools/call needs a string `name`"
            )]
        );
    }
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_invalid_params() {
    for arguments in [json!([1, 2]), json!("a=1")] {
        assert_eq!(
            call_in("2025-11-25", "echo", arguments).await,
            [error(
                1,
                -32602,
                "Invalid params: `arguments` must be an object"
            )]
        );
    }
}

#[tokio::test]
async fn missing_or_null_arguments_are_an_empty_object() {
    let client = Client::initialized("2025-11-25").await;
    let empty = json!({ "content": [text("{}")], "isError": false });
    assert_eq!(
        client
            .exchange(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#)
            .await,
        [result(1, empty.clone())]
    );
    assert_eq!(
        client
            .exchange(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":null}}"#)
            .await,
        [result(2, empty)]
    );
}

#[tokio::test]
async fn ids_come_back_exactly_as_sent() {
    let client = Client::initialized("2025-11-25").await;
    for id in [
        json!(0),
        json!("0"),
        json!(-3),
        json!("request-é"),
        json!(u64::MAX),
    ] {
        let call = request(
            id.clone(),
            "tools/call",
            json!({ "name": "add", "arguments": { "a": 1, "b": 1 } }),
        );
        assert_eq!(
            client.exchange(call).await,
            [result(
                id,
                json!({ "content": [text(r#"{"sum":2}"#)], "structuredContent": { "sum": 2 }, "isError": false })
            )]
        );
    }
}

#[tokio::test]
async fn a_running_call_delays_neither_a_ping_nor_another_call() {
    let client = Client::initialized("2025-11-25").await;
    let waiting = client
        .send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"wait"}}"#);
    client.host.wait_started().await;
    assert_eq!(
        client
            .exchange(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
            .await,
        [result(2, json!({}))]
    );
    assert_eq!(
        client
            .exchange(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail"}}"#)
            .await,
        [result(
            3,
            json!({ "content": [text("the disk is full")], "isError": true })
        )]
    );
    assert_eq!(client.exchange(cancel("slow")).await, NOTHING);
    assert_eq!(waiting.all().await, NOTHING);
}
