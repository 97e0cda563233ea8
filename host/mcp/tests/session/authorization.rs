//! A session under authorization: its transport sets the caller (a
//! principal with scopes) and the host says what each item needs. Lists
//! show only what the caller's scopes reach (and say so to caches, in the
//! stateless era), a request for anything else is refused even when the
//! transport did not refuse it first, and without a caller everything is
//! served as before.

use std::collections::BTreeSet;

use corral_tool::Principal;
use serde_json::{Value, json};

use crate::support::{Client, FakeHost, STATELESS, request, stateless, watching};

fn principal(scopes: &[&str]) -> Principal {
    Principal {
        issuer: "https://login.example.com".into(),
        subject: "alice".into(),
        scopes: scopes
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>(),
    }
}

/// `admin` is needed for the tool `echo`, the prompt `greeting`, the
/// resource `doc://secret` and the template `doc://notes/{topic}`.
async fn scoped_host_session() -> Client {
    let host = FakeHost::new().with_features().with_scope(
        "admin",
        &[
            "tool:echo",
            "prompt:greeting",
            "resource:doc://secret",
            "template:doc://notes/{topic}",
        ],
    );
    let client = Client::start(host, watching()).await;
    client.initialize("2025-11-25").await;
    client
}

fn names(result: &Value, list: &str, key: &str) -> Vec<String> {
    result[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {result}"))
        .iter()
        .map(|item| item[key].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn lists_show_a_caller_only_what_its_scopes_reach() {
    let client = scoped_host_session().await;
    client.set_caller(Some(principal(&["files:read"])));
    let tools = client.result_of(request(1, "tools/list", json!({}))).await;
    let tools = names(&tools, "tools", "name");
    assert!(tools.contains(&"add".to_string()) && !tools.contains(&"echo".to_string()));
    let prompts = client
        .result_of(request(2, "prompts/list", json!({})))
        .await;
    assert!(!names(&prompts, "prompts", "name").contains(&"greeting".to_string()));
    let resources = client
        .result_of(request(3, "resources/list", json!({})))
        .await;
    let uris = names(&resources, "resources", "uri");
    assert!(
        uris.contains(&"doc://logo".to_string()) && !uris.contains(&"doc://secret".to_string())
    );
    let templates = client
        .result_of(request(4, "resources/templates/list", json!({})))
        .await;
    assert!(names(&templates, "resourceTemplates", "uriTemplate").is_empty());

    // The same caller with the scope sees everything.
    client.set_caller(Some(principal(&["admin"])));
    let tools = client.result_of(request(5, "tools/list", json!({}))).await;
    assert!(names(&tools, "tools", "name").contains(&"echo".to_string()));
    let templates = client
        .result_of(request(6, "resources/templates/list", json!({})))
        .await;
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["doc://notes/{topic}"]
    );
}

#[tokio::test]
async fn what_a_caller_cannot_see_it_cannot_reach() {
    let client = scoped_host_session().await;
    client.set_caller(Some(principal(&[])));
    let attempts = [
        request(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
        request(
            2,
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "x"}}),
        ),
        request(3, "resources/read", json!({"uri": "doc://secret"})),
        request(4, "resources/subscribe", json!({"uri": "doc://secret"})),
        request(
            5,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greeting"},
                   "argument": {"name": "name", "value": "a"}}),
        ),
    ];
    for attempt in attempts {
        let answers = client.exchange(&attempt).await;
        let error = &answers[0]["error"];
        assert_eq!(error["code"], -32602, "{attempt}: {answers:?}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("lacks the scope(s) admin"), "{message}");
    }
    // What needs no scope is served.
    let added = client
        .result_of(request(
            6,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        ))
        .await;
    assert_eq!(added["structuredContent"]["sum"], 5, "{added}");
}

#[tokio::test]
async fn a_stateless_list_under_a_caller_is_private_to_it() {
    let host = FakeHost::new().with_scope("admin", &["tool:echo"]);
    let client = Client::start(host, watching()).await;
    let public = client
        .result_of(stateless(1, "tools/list", json!({})))
        .await;
    assert_eq!(public["cacheScope"], "public");
    assert!(names(&public, "tools", "name").contains(&"echo".to_string()));

    client.set_caller(Some(principal(&[])));
    let private = client
        .result_of(stateless(2, "tools/list", json!({})))
        .await;
    assert_eq!(private["cacheScope"], "private", "{STATELESS}");
    assert!(!names(&private, "tools", "name").contains(&"echo".to_string()));
}

#[tokio::test]
async fn a_listen_stream_honours_only_the_resources_its_caller_may_read() {
    let host = FakeHost::new()
        .with_features()
        .with_scope("admin", &["resource:doc://secret"]);
    let client = Client::start(host, watching()).await;
    client.set_caller(Some(principal(&[])));
    let mut stream = client.send(stateless(
        "s",
        "subscriptions/listen",
        json!({ "notifications": { "resourceSubscriptions": ["doc://secret", "doc://readme"] } }),
    ));
    let acknowledged = stream.next().await;
    assert_eq!(
        acknowledged["params"]["notifications"],
        json!({ "resourceSubscriptions": ["doc://readme"] }),
        "{acknowledged}"
    );
    client.finish().await;
}
