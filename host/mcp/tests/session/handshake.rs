//! The legacy era's `initialize`: version negotiation, the capabilities and
//! server info each revision gets, a second `initialize`, and `ping`.

use serde_json::{Value, json};

use crate::support::{
    Client, FakeHost, LEGACY, STATELESS, VERSION, catalog, error, fixed, initialize_request,
    listed, result, tasks_capability,
};

/// The result of an `initialize` that negotiated `revision`, on a server
/// that does or does not announce list changes.
fn initialize_result(revision: &str, list_changed: bool) -> Value {
    // serverInfo.title arrived in 2025-06-18.
    let server_info = if revision >= "2025-06-18" {
        json!({ "name": "corral", "title": "Corral", "version": VERSION })
    } else {
        json!({ "name": "corral", "version": VERSION })
    };
    let mut capabilities = json!({ "tools": { "listChanged": list_changed }, "logging": {} });
    // 2025-11-25's experimental tasks.
    if revision == "2025-11-25" {
        capabilities["tasks"] = tasks_capability();
    }
    json!({
        "protocolVersion": revision,
        "capabilities": capabilities,
        "serverInfo": server_info,
    })
}

#[tokio::test]
async fn initialize_answers_each_legacy_revision_with_that_revision() {
    for revision in LEGACY {
        let client = Client::new().await;
        assert_eq!(
            client.exchange(initialize_request(1, revision)).await,
            [result(1, initialize_result(revision, true))],
            "{revision}"
        );
    }
}

#[tokio::test]
async fn initialize_with_an_unknown_version_answers_the_newest_legacy_revision() {
    for asked in ["2099-12-31", "2024-01-01", "1.0"] {
        let client = Client::new().await;
        assert_eq!(
            client.exchange(initialize_request(1, asked)).await,
            [result(1, initialize_result("2025-11-25", true))],
            "{asked}"
        );
    }
}

#[tokio::test]
async fn initialize_never_negotiates_the_stateless_revision() {
    let client = Client::new().await;
    assert_eq!(
        client.exchange(initialize_request(1, STATELESS)).await,
        [result(1, initialize_result("2025-11-25", true))]
    );
}

#[tokio::test]
async fn a_server_that_does_not_watch_its_tools_declares_no_list_changes() {
    let client = Client::start(FakeHost::new(), fixed()).await;
    assert_eq!(
        client.exchange(initialize_request(1, "2025-03-26")).await,
        [result(1, initialize_result("2025-03-26", false))]
    );
}

#[tokio::test]
async fn a_second_initialize_is_refused_and_the_first_revision_stays() {
    let client = Client::initialized("2024-11-05").await;
    assert_eq!(
        client.exchange(initialize_request(2, "2025-06-18")).await,
        [error(
            2,
            -32600,
            "Invalid Request: the session is already initialized"
        )]
    );
    let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    assert_eq!(
        client.exchange(list).await,
        [result(3, listed(catalog(), "2024-11-05").await)]
    );
}

#[tokio::test]
async fn ping_answers_an_empty_result_before_and_after_initialize() {
    let client = Client::new().await;
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    assert_eq!(client.exchange(ping).await, [result("p", json!({}))]);
    for revision in LEGACY {
        let client = Client::initialized(revision).await;
        assert_eq!(client.exchange(ping).await, [result("p", json!({}))]);
    }
}
