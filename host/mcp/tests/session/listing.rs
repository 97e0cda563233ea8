//! `tools/list` in the legacy era: the fields each revision defines and no
//! others, the host's order, pagination with cursors, and bad cursors.

use serde_json::{Value, json};

use crate::support::{
    Client, FakeHost, add, catalog, error, forecast, listed, request, result, watching,
};
use corral_mcp::ServerOptions;

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

fn add_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "required": ["a", "b"],
    })
}

fn add_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "sum": { "type": "integer" } },
        "required": ["sum"],
    })
}

fn forecast_input_schema() -> Value {
    json!({ "type": "object", "properties": { "location": { "type": "string" } } })
}

fn forecast_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "conditions": { "type": "string" },
            "temperature": { "type": "number" },
        },
    })
}

fn forecast_annotations() -> Value {
    json!({
        "title": "Forecast",
        "readOnlyHint": true,
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": true,
    })
}

#[tokio::test]
async fn in_2024_11_05_tools_have_a_name_a_description_and_an_input_schema_only() {
    assert_eq!(
        listed(vec![add(), forecast()], "2024-11-05").await,
        json!({ "tools": [
            {
                "name": "add",
                "description": "Adds two integers",
                "inputSchema": add_input_schema(),
            },
            {
                "name": "forecast",
                "description": "Forecasts the weather",
                "inputSchema": forecast_input_schema(),
            },
        ] })
    );
}

#[tokio::test]
async fn in_2025_03_26_tools_gain_annotations() {
    assert_eq!(
        listed(vec![add(), forecast()], "2025-03-26").await,
        json!({ "tools": [
            {
                "name": "add",
                "description": "Adds two integers",
                "inputSchema": add_input_schema(),
            },
            {
                "name": "forecast",
                "description": "Forecasts the weather",
                "inputSchema": forecast_input_schema(),
                "annotations": forecast_annotations(),
            },
        ] })
    );
}

#[tokio::test]
async fn in_2025_06_18_tools_gain_titles_and_output_schemas() {
    assert_eq!(
        listed(vec![add(), forecast()], "2025-06-18").await,
        json!({ "tools": [
            {
                "name": "add",
                "description": "Adds two integers",
                "inputSchema": add_input_schema(),
                "outputSchema": add_output_schema(),
            },
            {
                "name": "forecast",
                "title": "Weather Forecast",
                "description": "Forecasts the weather",
                "inputSchema": forecast_input_schema(),
                "outputSchema": forecast_output_schema(),
                "annotations": forecast_annotations(),
            },
        ] })
    );
}

#[tokio::test]
async fn in_2025_11_25_tools_gain_icons_and_execution() {
    assert_eq!(
        listed(vec![add(), forecast()], "2025-11-25").await,
        json!({ "tools": [
            {
                "name": "add",
                "description": "Adds two integers",
                "inputSchema": add_input_schema(),
                "outputSchema": add_output_schema(),
            },
            {
                "name": "forecast",
                "title": "Weather Forecast",
                "description": "Forecasts the weather",
                "inputSchema": forecast_input_schema(),
                "outputSchema": forecast_output_schema(),
                "annotations": forecast_annotations(),
                "icons": [{
                    "src": "https://example.com/sun.png",
                    "mimeType": "image/png",
                    "sizes": ["48x48"],
                    "theme": "light",
                }],
                "execution": { "taskSupport": "optional" },
            },
        ] })
    );
}

#[tokio::test]
async fn the_list_is_the_hosts_in_its_order_every_time() {
    let client = Client::initialized("2025-11-25").await;
    let first = client.exchange(LIST).await;
    let names: Vec<&Value> = first[0]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| &tool["name"])
        .collect();
    assert_eq!(
        names,
        [
            "add",
            "echo",
            "media",
            "forecast",
            "fail",
            "countdown",
            "wait",
            "roster",
            "gauge"
        ]
    );
    assert_eq!(first[0]["result"].get("nextCursor"), None);
    assert_eq!(client.exchange(LIST).await, first);
}

#[tokio::test]
async fn an_empty_catalog_lists_no_tools() {
    assert_eq!(listed(vec![], "2025-11-25").await, json!({ "tools": [] }));
}

#[tokio::test]
async fn pages_follow_their_cursors_through_every_tool_once() {
    let unpaged = listed(catalog(), "2025-11-25").await;
    let everything = unpaged["tools"].as_array().unwrap();
    assert_eq!(everything.len(), catalog().len());
    let paged = Client::start(
        FakeHost::new(),
        ServerOptions {
            page_size: 3,
            ..watching()
        },
    )
    .await;
    paged.initialize("2025-11-25").await;

    let first = paged.exchange(LIST).await;
    let cursor = first[0]["result"]["nextCursor"].clone();
    assert!(cursor.is_string(), "{first:?}");
    assert_eq!(
        first,
        [result(
            1,
            json!({ "tools": everything[0..3], "nextCursor": cursor })
        )]
    );

    let second = paged
        .exchange(request(2, "tools/list", json!({ "cursor": cursor })))
        .await;
    let cursor = second[0]["result"]["nextCursor"].clone();
    assert!(cursor.is_string(), "{second:?}");
    assert_eq!(
        second,
        [result(
            2,
            json!({ "tools": everything[3..6], "nextCursor": cursor })
        )]
    );

    let last = paged
        .exchange(request(3, "tools/list", json!({ "cursor": cursor })))
        .await;
    assert_eq!(last, [result(3, json!({ "tools": everything[6..] }))]);
}

#[tokio::test]
async fn an_invalid_cursor_is_invalid_params() {
    let client = Client::initialized("2025-11-25").await;
    assert_eq!(
        client
            .exchange(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"not-a-cursor"}}"#)
            .await,
        [error(1, -32602, "Invalid cursor: not-a-cursor")]
    );
    assert_eq!(
        client
            .exchange(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":7}}"#)
            .await,
        [error(
            2,
            -32602,
            "Invalid params: `cursor` must be a string"
        )]
    );
}
