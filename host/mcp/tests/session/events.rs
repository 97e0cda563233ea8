//! What reaches a legacy client besides responses: progress notifications
//! for a progress token, log messages at the level set by
//! `logging/setLevel` (from tools and from the host), cancellation (no
//! response, the work stopped), and `notifications/tools/list_changed`.

use corral_tool::LogLevel;
use serde_json::{Value, json};

use crate::support::{
    Client, FakeHost, LEGACY, NOTHING, add, cancel, echo, error, fixed, liftoff, list_changed,
    listed, log_message, notification, progress, request, result, text, watching,
};

/// `countdown` called with `meta` as its `_meta`, request id 1.
fn countdown_with(meta: Value) -> Value {
    request(
        1,
        "tools/call",
        json!({ "name": "countdown", "arguments": {}, "_meta": meta }),
    )
}

fn set_level(level: &str) -> Value {
    request("level", "logging/setLevel", json!({ "level": level }))
}

#[tokio::test]
async fn progress_follows_the_progress_token_and_only_ever_increases() {
    let client = Client::initialized("2025-11-25").await;
    assert_eq!(
        client
            .exchange(countdown_with(json!({ "progressToken": "tok" })))
            .await,
        [
            progress("tok", 1.0, "step 1"),
            progress("tok", 2.0, "step 2"),
            progress("tok", 3.0, "step 3"),
            liftoff(1),
        ]
    );
    // Integer tokens too.
    assert_eq!(
        client
            .exchange(countdown_with(json!({ "progressToken": 7 })))
            .await,
        [
            progress(7, 1.0, "step 1"),
            progress(7, 2.0, "step 2"),
            progress(7, 3.0, "step 3"),
            liftoff(1),
        ]
    );
}

#[tokio::test]
async fn without_a_progress_token_there_is_no_progress() {
    let client = Client::initialized("2025-11-25").await;
    assert_eq!(
        client.exchange(countdown_with(json!({}))).await,
        [liftoff(1)]
    );
}

#[tokio::test]
async fn progress_messages_arrived_in_2025_03_26() {
    let client = Client::initialized("2024-11-05").await;
    let bare = |done: f64| {
        notification(
            "notifications/progress",
            json!({ "progressToken": "tok", "progress": done, "total": 3.0 }),
        )
    };
    assert_eq!(
        client
            .exchange(countdown_with(json!({ "progressToken": "tok" })))
            .await,
        [bare(1.0), bare(2.0), bare(3.0), liftoff(1)]
    );
}

#[tokio::test]
async fn set_level_answers_an_empty_result_in_every_legacy_revision() {
    for revision in LEGACY {
        let client = Client::initialized(revision).await;
        assert_eq!(
            client.exchange(set_level("debug")).await,
            [result("level", json!({}))],
            "{revision}"
        );
    }
}

#[tokio::test]
async fn a_tool_logs_nothing_until_a_level_is_set_then_at_or_above_it() {
    let client = Client::initialized("2025-11-25").await;
    assert_eq!(
        client.exchange(countdown_with(json!({}))).await,
        [liftoff(1)]
    );
    client.exchange(set_level("warning")).await;
    assert_eq!(
        client.exchange(countdown_with(json!({}))).await,
        [
            log_message("warning", "countdown", "wobbling"),
            log_message("error", "countdown", "lost a fin"),
            liftoff(1),
        ]
    );
}

#[tokio::test]
async fn progress_and_logs_arrive_in_the_order_the_tool_reports_them_before_its_result() {
    let client = Client::initialized("2025-11-25").await;
    client.exchange(set_level("debug")).await;
    assert_eq!(
        client
            .exchange(countdown_with(json!({ "progressToken": "tok" })))
            .await,
        [
            progress("tok", 1.0, "step 1"),
            log_message("debug", "countdown", "ignition"),
            progress("tok", 2.0, "step 2"),
            log_message("info", "countdown", "engines running"),
            log_message("warning", "countdown", "wobbling"),
            progress("tok", 3.0, "step 3"),
            log_message("error", "countdown", "lost a fin"),
            liftoff(1),
        ]
    );
}

#[tokio::test]
async fn an_unknown_log_level_is_invalid_params() {
    let client = Client::initialized("2025-11-25").await;
    let message = "Invalid params: `level` must be one of debug, info, notice, warning, error, critical, alert, emergency";
    assert_eq!(
        client.exchange(set_level("loud")).await,
        [error("level", -32602, message)]
    );
    assert_eq!(
        client
            .exchange(request("level", "logging/setLevel", json!({})))
            .await,
        [error("level", -32602, message)]
    );
}

#[tokio::test]
async fn host_logs_reach_the_client_at_or_above_its_level() {
    let mut client = Client::initialized("2025-11-25").await;
    // Before the client sets a level: the server's reports from notice up
    // (a failed load, a dev build's outcome), not its routine ones.
    client
        .host
        .log(LogLevel::Info, "reload", "calc.wasm reloaded");
    client
        .host
        .log(LogLevel::Notice, "dev", "./build succeeded");
    assert_eq!(
        client.settled_notices().await,
        [log_message("notice", "dev", "./build succeeded")]
    );
    client.exchange(set_level("error")).await;
    client
        .host
        .log(LogLevel::Warning, "reload", "calc.wasm is slow to load");
    client
        .host
        .log(LogLevel::Critical, "reload", "calc.wasm failed to load");
    assert_eq!(
        client.settled_notices().await,
        [log_message(
            "critical",
            "reload",
            "calc.wasm failed to load"
        )]
    );
}

/// Until the client says it is initialized it hears no report (the spec
/// would allow log messages earlier; a client in its handshake has
/// nowhere to show them), and it hears later what failed meanwhile.
#[tokio::test]
async fn host_logs_wait_for_the_client_to_be_initialized() {
    let mut client = Client::new().await;
    client
        .host
        .log(LogLevel::Error, "reload", "calc.wasm failed to load");
    assert_eq!(client.settled_notices().await, NOTHING);
    client.initialize("2025-11-25").await;
    client
        .host
        .log(LogLevel::Error, "reload", "calc.wasm failed again");
    assert_eq!(
        client.settled_notices().await,
        [log_message("error", "reload", "calc.wasm failed again")]
    );
}

/// Plugins failed to load before any client connected: a client hears
/// which, and why, in its log once it is initialized, with no level set.
#[tokio::test]
async fn a_client_hears_which_plugins_failed_to_load_when_it_connects() {
    let host = FakeHost::new().with_not_loaded(&[
        ("files.wasm", "not a valid WebAssembly component"),
        ("notes.wasm", "notes.toml:3: unknown key `limit`"),
    ]);
    let mut client = Client::start(host, watching()).await;
    client.initialize("2025-11-25").await;
    assert_eq!(
        client.settled_notices().await,
        [log_message(
            "error",
            "corral",
            "2 plugin file(s) failed to load:\n  \
             files.wasm: not a valid WebAssembly component\n  \
             notes.wasm: notes.toml:3: unknown key `limit`"
        )]
    );
}

#[tokio::test]
async fn a_cancelled_call_stops_and_gets_no_response() {
    let client = Client::initialized("2025-11-25").await;
    let waiting =
        client.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}"#);
    client.host.wait_started().await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user pressed stop"}}"#;
    assert_eq!(client.exchange(cancel).await, NOTHING);
    client.host.wait_stopped().await;
    assert_eq!(waiting.all().await, NOTHING);
    // The session goes on.
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    assert_eq!(client.exchange(ping).await, [result(1, json!({}))]);
}

#[tokio::test]
async fn cancellation_names_a_request_by_its_exact_id() {
    let client = Client::initialized("2025-11-25").await;
    let mut waiting =
        client.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}"#);
    client.host.wait_started().await;
    // The id "1" is not the id 1.
    assert_eq!(client.exchange(cancel("1")).await, NOTHING);
    waiting.assert_unanswered().await;
    assert_eq!(client.exchange(cancel(1)).await, NOTHING);
    client.host.wait_stopped().await;
    assert_eq!(waiting.all().await, NOTHING);
}

#[tokio::test]
async fn cancelling_a_request_that_has_answered_changes_nothing() {
    let client = Client::initialized("2025-11-25").await;
    let call =
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let answered = [result(
        5,
        json!({ "content": [text("{}")], "isError": false }),
    )];
    assert_eq!(client.exchange(call).await, answered);
    assert_eq!(client.exchange(cancel(5)).await, NOTHING);
    // The same id may be used again once its request has answered.
    assert_eq!(client.exchange(call).await, answered);
}

#[tokio::test]
async fn an_initialized_client_hears_of_list_changes_and_lists_the_new_tools() {
    for revision in LEGACY {
        let mut client = Client::initialized(revision).await;
        client.host.set_tools(vec![add(), echo()]);
        assert_eq!(client.next_notice().await, list_changed(), "{revision}");
        let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert_eq!(
            client.exchange(list).await,
            [result(1, listed(vec![add(), echo()], revision).await)],
            "{revision}"
        );
        let gone = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"media"}}"#;
        assert_eq!(
            client.exchange(gone).await,
            [error(2, -32602, "Unknown tool: media")]
        );
    }
}

#[tokio::test]
async fn no_list_changes_for_a_server_that_did_not_declare_them() {
    let mut client = Client::start(FakeHost::new(), fixed()).await;
    client.initialize("2025-11-25").await;
    client.host.set_tools(vec![add()]);
    assert_eq!(client.settled_notices().await, NOTHING);
}

#[tokio::test]
async fn no_list_changes_before_initialize() {
    let mut client = Client::new().await;
    client.host.set_tools(vec![add()]);
    assert_eq!(client.settled_notices().await, NOTHING);
}
