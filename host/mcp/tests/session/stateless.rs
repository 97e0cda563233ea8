//! The stateless revision 2026-07-28: `_meta` on every request instead of a
//! handshake (and the errors when it is missing or names an unsupported
//! version), `server/discover`, `resultType` and the server's name on every
//! result, caching hints on `server/discover` and `tools/list`, tools and
//! results as the final text has them, the log level and progress token per
//! request, `subscriptions/listen` streams (and how the session ends them),
//! and both eras on one session.

use serde_json::{Value, json};

use crate::support::{
    Client, FakeHost, NOTHING, STATELESS, add, cancel, complete, completed, echo, error, fixed,
    forecast, liftoff, listed, log_message, notification, progress, request, result, server_info,
    stateless, text, watching,
};
use corral_mcp::ServerOptions;

const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// A stateless client of a server serving `add` and `forecast`.
async fn client_of_add_and_forecast(options: ServerOptions) -> Client {
    Client::start(FakeHost::serving(vec![add(), forecast()]), options).await
}

/// `result` with the fields a stateless `tools/list` adds: caching hints
/// for a server that does (`watching`) or does not announce list changes,
/// `resultType` and the server's name.
fn stateless_list(mut result: Value, watching: bool) -> Value {
    result["ttlMs"] = json!(if watching { 60_000 } else { 3_600_000 });
    result["cacheScope"] = json!("public");
    completed(result)
}

/// The tools/list result a 2025-11-25 session gets for `add` and
/// `forecast`, without `execution`, which the final 2026-07-28 `Tool` lacks.
async fn listed_without_execution() -> Value {
    let mut list = listed(vec![add(), forecast()], "2025-11-25").await;
    for tool in list["tools"].as_array_mut().unwrap() {
        tool.as_object_mut().unwrap().remove("execution");
    }
    list
}

fn call(id: impl Into<Value>, tool: &str, meta: Value) -> Value {
    stateless(
        id,
        "tools/call",
        json!({ "name": tool, "arguments": {}, "_meta": meta }),
    )
}

fn listen(id: &str, params: Value) -> Value {
    stateless(id, "subscriptions/listen", params)
}

fn acknowledged(id: &str, honoured: Value) -> Value {
    notification(
        "notifications/subscriptions/acknowledged",
        json!({ "notifications": honoured, "_meta": { SUBSCRIPTION_ID: id } }),
    )
}

/// What a listen stream `id` gets when the server ends it: the
/// cancellation page's notice that the server tears it down, then the
/// subscriptions page's graceful closure, the listen request's response.
fn ended_by_the_server(id: &str) -> [Value; 2] {
    [
        notification(
            "notifications/cancelled",
            json!({
                "requestId": id,
                "reason": "the server is ending this subscription: the session is over",
                "_meta": { SUBSCRIPTION_ID: id },
            }),
        ),
        complete(result(id, json!({ "_meta": { SUBSCRIPTION_ID: id } }))),
    ]
}

fn list_changed_for(id: &str) -> Value {
    notification(
        "notifications/tools/list_changed",
        json!({ "_meta": { SUBSCRIPTION_ID: id } }),
    )
}

#[tokio::test]
async fn discover_states_versions_capabilities_server_info_and_caching_hints() {
    for (options, list_changed) in [(watching(), true), (fixed(), false)] {
        let client = Client::start(FakeHost::new(), options).await;
        assert_eq!(
            client
                .exchange(stateless("d", "server/discover", json!({})))
                .await,
            [result(
                "d",
                json!({
                    "supportedVersions": [STATELESS],
                    "capabilities": {
                        "tools": { "listChanged": list_changed },
                        "logging": {},
                        "extensions": { "io.modelcontextprotocol/tasks": {} },
                    },
                    "serverInfo": server_info(),
                    "ttlMs": 3_600_000,
                    "cacheScope": "public",
                    "_meta": { "io.modelcontextprotocol/serverInfo": server_info() },
                    "resultType": "complete",
                })
            )]
        );
    }
}

#[tokio::test]
async fn methods_only_the_stateless_revision_has_need_its_meta() {
    let client = Client::new().await;
    for method in ["server/discover", "subscriptions/listen"] {
        let message = format!(
            "Invalid params: {method} needs `_meta` with \"{PROTOCOL_VERSION}\" and \"{CLIENT_CAPABILITIES}\" (protocol revision 2026-07-28 has no initialize handshake)"
        );
        assert_eq!(
            client.exchange(request(1, method, json!({}))).await,
            [error(1, -32602, &message)],
            "{method}"
        );
    }
}

#[tokio::test]
async fn a_stateless_request_without_a_protocol_version_is_invalid_params() {
    let client = Client::new().await;
    let no_version = request(
        1,
        "server/discover",
        json!({ "_meta": { CLIENT_CAPABILITIES: {} } }),
    );
    assert_eq!(
        client.exchange(no_version).await,
        [error(
            1,
            -32602,
            &format!(
                "Invalid params: `_meta` must carry \"{PROTOCOL_VERSION}\" (such as \"2026-07-28\"); without an initialize handshake every request names its protocol version"
            )
        )]
    );
    let not_a_string = stateless(
        2,
        "tools/list",
        json!({ "_meta": { PROTOCOL_VERSION: 2026 } }),
    );
    assert_eq!(
        client.exchange(not_a_string).await,
        [error(
            2,
            -32602,
            &format!(
                "Invalid params: `_meta` \"{PROTOCOL_VERSION}\" must be a string, such as \"2026-07-28\""
            )
        )]
    );
}

#[tokio::test]
async fn a_stateless_request_without_client_capabilities_is_invalid_params() {
    let client = Client::new().await;
    let message = format!(
        "Invalid params: `_meta` must carry \"{CLIENT_CAPABILITIES}\" (an object, possibly empty) on every request of protocol revision 2026-07-28"
    );
    let missing = request(
        1,
        "tools/list",
        json!({ "_meta": { PROTOCOL_VERSION: STATELESS } }),
    );
    assert_eq!(client.exchange(missing).await, [error(1, -32602, &message)]);
    let not_an_object = stateless(
        2,
        "tools/list",
        json!({ "_meta": { CLIENT_CAPABILITIES: [] } }),
    );
    assert_eq!(
        client.exchange(not_an_object).await,
        [error(2, -32602, &message)]
    );
}

#[tokio::test]
async fn an_unsupported_version_is_32022_with_the_supported_versions() {
    let client = Client::new().await;
    // Legacy revisions are negotiated by initialize, never named per request.
    for asked in ["2099-01-01", "2025-11-25", "garbage"] {
        let list = stateless(
            1,
            "tools/list",
            json!({ "_meta": { PROTOCOL_VERSION: asked } }),
        );
        assert_eq!(
            client.exchange(list).await,
            [json!({
                "jsonrpc": "2.0",
                "id": 1,
                "error": {
                    "code": -32022,
                    "message": format!("Unsupported protocol version: {asked} (supported without initialize: 2026-07-28)"),
                    "data": { "supported": [STATELESS], "requested": asked },
                },
            })],
            "{asked}"
        );
    }
}

#[tokio::test]
async fn tools_list_is_shaped_as_in_2025_11_25_but_for_execution_with_caching_hints() {
    let newest = listed_without_execution().await;
    for (options, watching) in [(watching(), true), (fixed(), false)] {
        let client = client_of_add_and_forecast(options).await;
        assert_eq!(
            client.exchange(stateless(1, "tools/list", json!({}))).await,
            [result(1, stateless_list(newest.clone(), watching))]
        );
    }
}

#[tokio::test]
async fn tools_list_pages_follow_their_cursors() {
    let newest = listed_without_execution().await;
    let client = client_of_add_and_forecast(ServerOptions {
        page_size: 1,
        ..watching()
    })
    .await;
    let first = client.exchange(stateless(1, "tools/list", json!({}))).await;
    let cursor = first[0]["result"]["nextCursor"].clone();
    assert!(cursor.is_string(), "{first:?}");
    assert_eq!(
        first,
        [result(
            1,
            stateless_list(
                json!({ "tools": [newest["tools"][0]], "nextCursor": cursor }),
                true
            )
        )]
    );
    let second = stateless(2, "tools/list", json!({ "cursor": cursor }));
    assert_eq!(
        client.exchange(second).await,
        [result(
            2,
            stateless_list(json!({ "tools": [newest["tools"][1]] }), true)
        )]
    );
    let bad = stateless(3, "tools/list", json!({ "cursor": "not-a-cursor" }));
    assert_eq!(
        client.exchange(bad).await,
        [error(3, -32602, "Invalid cursor: not-a-cursor")]
    );
}

#[tokio::test]
async fn call_results_carry_result_type_and_protocol_errors_do_not() {
    let client = Client::new().await;
    let sum = stateless(
        1,
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 2, "b": 3 } }),
    );
    assert_eq!(
        client.exchange(sum).await,
        [result(
            1,
            json!({
                "content": [text(r#"{"sum":5}"#)],
                "structuredContent": { "sum": 5 },
                "isError": false,
                "resultType": "complete",
                "_meta": { "io.modelcontextprotocol/serverInfo": server_info() },
            })
        )]
    );
    assert_eq!(
        client.exchange(call(2, "fail", json!({}))).await,
        [complete(result(
            2,
            json!({ "content": [text("the disk is full")], "isError": true })
        ))]
    );
    assert_eq!(
        client.exchange(call(3, "nope", json!({}))).await,
        [error(3, -32602, "Unknown tool: nope")]
    );
}

#[tokio::test]
async fn ping_and_set_level_are_not_part_of_the_stateless_revision() {
    let client = Client::new().await;
    for method in ["ping", "logging/setLevel"] {
        assert_eq!(
            client
                .exchange(stateless(1, method, json!({ "level": "debug" })))
                .await,
            [error(
                1,
                -32601,
                &format!("Method not found: {method} is not part of protocol revision 2026-07-28")
            )]
        );
    }
    assert_eq!(
        client
            .exchange(stateless(2, "tools/frobnicate", json!({})))
            .await,
        [error(2, -32601, "Method not found: tools/frobnicate")]
    );
}

#[tokio::test]
async fn a_request_logs_at_the_level_its_meta_names_and_only_that_request() {
    let client = Client::new().await;
    assert_eq!(
        client
            .exchange(call(
                1,
                "countdown",
                json!({ "io.modelcontextprotocol/logLevel": "warning" })
            ))
            .await,
        [
            log_message("warning", "countdown", "wobbling"),
            log_message("error", "countdown", "lost a fin"),
            complete(liftoff(1)),
        ]
    );
    assert_eq!(
        client.exchange(call(2, "countdown", json!({}))).await,
        [complete(liftoff(2))]
    );
    assert_eq!(
        client
            .exchange(call(
                3,
                "countdown",
                json!({ "io.modelcontextprotocol/logLevel": "loud" })
            ))
            .await,
        [error(
            3,
            -32602,
            "Invalid params: `_meta` \"io.modelcontextprotocol/logLevel\" must be one of debug, info, notice, warning, error, critical, alert, emergency"
        )]
    );
}

#[tokio::test]
async fn progress_follows_the_progress_token_statelessly_too() {
    let client = Client::new().await;
    assert_eq!(
        client
            .exchange(call(1, "countdown", json!({ "progressToken": "tok" })))
            .await,
        [
            progress("tok", 1.0, "step 1"),
            progress("tok", 2.0, "step 2"),
            progress("tok", 3.0, "step 3"),
            complete(liftoff(1)),
        ]
    );
}

#[tokio::test]
async fn a_cancelled_stateless_call_stops_and_gets_no_response() {
    let client = Client::new().await;
    let waiting = client.send(call("w", "wait", json!({})));
    client.host.wait_started().await;
    assert_eq!(client.exchange(cancel("w")).await, NOTHING);
    client.host.wait_stopped().await;
    assert_eq!(waiting.all().await, NOTHING);
}

#[tokio::test]
async fn a_listen_stream_hears_of_list_changes_until_cancelled_and_never_answers() {
    let mut client = Client::new().await;
    let mut stream = client.send(listen(
        "s",
        json!({ "notifications": { "toolsListChanged": true } }),
    ));
    assert_eq!(
        stream.next().await,
        acknowledged("s", json!({ "toolsListChanged": true }))
    );
    client.host.set_tools(vec![add()]);
    assert_eq!(stream.next().await, list_changed_for("s"));
    // The session was never initialized: no legacy notification.
    assert_eq!(client.settled_notices().await, NOTHING);
    assert_eq!(client.exchange(cancel("s")).await, NOTHING);
    assert_eq!(stream.all().await, NOTHING);
    // Cancelled streams hear of no more changes (nor does anyone else).
    client.host.set_tools(vec![add(), echo()]);
    assert_eq!(client.settled_notices().await, NOTHING);
}

#[tokio::test]
async fn a_listen_stream_that_did_not_ask_hears_of_no_list_changes() {
    let client = Client::new().await;
    let mut quiet = client.send(listen("quiet", json!({ "notifications": {} })));
    assert_eq!(quiet.next().await, acknowledged("quiet", json!({})));
    // A stream that asked, on the same session: once it has heard of the
    // change, the quiet one would have too.
    let mut asking = client.send(listen(
        "asking",
        json!({ "notifications": { "toolsListChanged": true } }),
    ));
    assert_eq!(
        asking.next().await,
        acknowledged("asking", json!({ "toolsListChanged": true }))
    );
    client.host.set_tools(vec![add()]);
    assert_eq!(asking.next().await, list_changed_for("asking"));
    client.exchange(cancel("quiet")).await;
    assert_eq!(quiet.all().await, NOTHING);
}

#[tokio::test]
async fn a_server_that_does_not_announce_list_changes_acknowledges_none() {
    let client = Client::start(FakeHost::new(), fixed()).await;
    let mut stream = client.send(listen(
        "s",
        json!({ "notifications": { "toolsListChanged": true } }),
    ));
    assert_eq!(stream.next().await, acknowledged("s", json!({})));
    client.host.set_tools(vec![add()]);
    stream.assert_unanswered().await;
}

#[tokio::test]
async fn the_session_ending_ends_listen_streams_with_their_completion_result() {
    let client = Client::new().await;
    let mut stream = client.send(listen(
        "s",
        json!({ "notifications": { "toolsListChanged": true } }),
    ));
    assert_eq!(
        stream.next().await,
        acknowledged("s", json!({ "toolsListChanged": true }))
    );
    client.finish().await;
    assert_eq!(stream.all().await, ended_by_the_server("s"));
}

#[tokio::test]
async fn a_stream_ended_by_shutdown_alone_ends_the_same_and_others_go_on() {
    let client = Client::new().await;
    let mut stream = client.send(listen("s", json!({})));
    assert_eq!(stream.next().await, acknowledged("s", json!({})));
    client.end_listen_streams();
    assert_eq!(stream.all().await, ended_by_the_server("s"));
    assert_eq!(
        client.exchange(call(1, "countdown", json!({}))).await,
        [complete(liftoff(1))]
    );
}

#[tokio::test]
async fn every_stateless_result_names_the_server_in_its_meta() {
    let client = Client::new().await;
    for line in [
        stateless(1, "server/discover", json!({})),
        stateless(2, "tools/list", json!({})),
        call(3, "echo", json!({})),
        call(4, "fail", json!({})),
    ] {
        let result = client.result_of(&line).await;
        assert_eq!(
            result["_meta"],
            json!({ "io.modelcontextprotocol/serverInfo": server_info() }),
            "{line}"
        );
    }
    // Errors have no `_meta`; legacy results neither.
    assert_eq!(
        client.exchange(call(5, "nope", json!({}))).await,
        [error(5, -32602, "Unknown tool: nope")]
    );
    client.initialize("2025-11-25").await;
    assert_eq!(
        client
            .exchange(request(6, "tools/call", json!({ "name": "echo" })))
            .await,
        [result(
            6,
            json!({ "content": [text("{}")], "isError": false })
        )]
    );
}

#[tokio::test]
async fn structured_content_of_any_kind_is_structured_content() {
    let client = Client::new().await;
    assert_eq!(
        client.exchange(call(1, "roster", json!({}))).await,
        [complete(result(
            1,
            json!({
                "content": [text("Two people: Ada and Bob")],
                "structuredContent": ["Ada", "Bob"],
                "isError": false,
            })
        ))]
    );
}

#[tokio::test]
async fn structured_content_without_text_is_its_json_text_too() {
    let client = Client::new().await;
    assert_eq!(
        client.exchange(call(1, "gauge", json!({}))).await,
        [complete(result(
            1,
            json!({
                "content": [text(r#"{"level":1.25}"#)],
                "structuredContent": { "level": 1.25 },
                "isError": false,
            })
        ))]
    );
}

#[tokio::test]
async fn other_protocol_meta_keys_leave_a_request_in_the_legacy_era() {
    let client = Client::initialized("2025-11-25").await;
    // `related-task` is a 2025-11-25 key; client capabilities alone name no
    // revision. Only the protocol version makes a request stateless.
    for meta in [
        json!({ "io.modelcontextprotocol/related-task": { "taskId": "t-1" } }),
        json!({ CLIENT_CAPABILITIES: {} }),
    ] {
        let list = request(1, "tools/call", json!({ "name": "echo", "_meta": meta }));
        assert_eq!(
            client.exchange(&list).await,
            [result(
                1,
                json!({ "content": [text("{}")], "isError": false })
            )],
            "{list}"
        );
        // ... where ping exists.
        let ping = request(2, "ping", json!({ "_meta": meta }));
        assert_eq!(
            client.exchange(&ping).await,
            [result(2, json!({}))],
            "{ping}"
        );
    }
}

#[tokio::test]
async fn both_eras_are_served_on_one_session_each_in_its_own_revision() {
    let stateless_list_of_2025_11_25 = stateless_list(listed_without_execution().await, true);
    let list_of_2025_03_26 = listed(vec![add(), forecast()], "2025-03-26").await;
    let client = client_of_add_and_forecast(watching()).await;
    let legacy = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let modern = stateless(1, "tools/list", json!({}));
    // A stateless request before initialize does not initialize the session...
    assert_eq!(
        client.exchange(&modern).await,
        [result(1, stateless_list_of_2025_11_25.clone())]
    );
    client.initialize("2025-03-26").await;
    // ... nor does initialize change what a stateless request gets.
    assert_eq!(
        client.exchange(legacy).await,
        [result(1, list_of_2025_03_26)]
    );
    assert_eq!(
        client.exchange(&modern).await,
        [result(1, stateless_list_of_2025_11_25)]
    );
}
