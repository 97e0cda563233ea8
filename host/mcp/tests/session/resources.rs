//! Resources and resource templates in both eras: the capabilities that
//! declare them, their fields per revision, pagination, reads (text, blob,
//! not found per revision, failures, reads that ask), subscriptions and the
//! notifications of changes.

use serde_json::{Value, json};

use crate::support::{
    Client, FakeHost, Features, LEGACY, NOTHING, STATELESS, VERSION, catalog, complete, error,
    features, fixed, initialize_request, notification, request, result, stateless,
    tasks_capability, watching,
};
use corral_mcp::ServerOptions;

/// A session serving the catalog and [`features`], initialized with
/// `revision` by a client declaring `capabilities`.
async fn legacy(revision: &str, capabilities: Value) -> Client {
    let client = Client::start(FakeHost::new().with_features(), watching()).await;
    let mut initialize = initialize_request("init", revision);
    initialize["params"]["capabilities"] = capabilities;
    let answers = client.exchange(initialize).await;
    assert_eq!(answers[0]["result"]["protocolVersion"], revision);
    client
}

async fn modern(options: ServerOptions) -> Client {
    Client::start(FakeHost::new().with_features(), options).await
}

fn read(id: i64, uri: &str) -> Value {
    request(id, "resources/read", json!({ "uri": uri }))
}

/// `doc://readme` as `revision` lists it.
fn readme(revision: &str) -> Value {
    let mut readme = json!({
        "uri": "doc://readme",
        "name": "readme",
        "description": "Start here",
        "mimeType": "text/markdown",
        "size": 12,
        "annotations": { "audience": ["user"], "priority": 0.5 },
    });
    if revision >= "2025-06-18" {
        readme["title"] = json!("Read me");
        readme["annotations"]["lastModified"] = json!("2025-05-03T14:30:00Z");
    }
    if revision >= "2025-11-25" {
        readme["icons"] = json!([{ "src": "https://example.com/doc.png" }]);
    }
    readme
}

fn plain(uri: &str, name: &str, mime: &str) -> Value {
    json!({ "uri": uri, "name": name, "mimeType": mime })
}

#[tokio::test]
async fn initialize_declares_resources_prompts_and_completions_only_when_offered() {
    for revision in LEGACY {
        let client = Client::start(FakeHost::new().with_features(), watching()).await;
        let answer = client.exchange(initialize_request(1, revision)).await;
        let mut expected = json!({
            "tools": { "listChanged": true },
            "logging": {},
            "resources": { "subscribe": true, "listChanged": true },
            "prompts": { "listChanged": true },
        });
        if revision >= "2025-03-26" {
            expected["completions"] = json!({});
        }
        if revision == "2025-11-25" {
            expected["tasks"] = tasks_capability();
        }
        assert_eq!(answer[0]["result"]["capabilities"], expected, "{revision}");
    }
    // Resources alone, no completion.
    let only_resources = Features {
        prompts: features().prompts[..0].into(),
        completions: false,
        ..features()
    };
    let client = Client::start(FakeHost::new().with(only_resources), fixed()).await;
    let answer = client.exchange(initialize_request(1, "2025-11-25")).await;
    assert_eq!(
        answer[0]["result"]["capabilities"],
        json!({
            "tools": { "listChanged": false },
            "logging": {},
            "resources": { "subscribe": true, "listChanged": false },
            "tasks": tasks_capability(),
        })
    );
}

#[tokio::test]
async fn resources_and_templates_carry_the_fields_of_each_revision() {
    for revision in LEGACY {
        let client = legacy(revision, json!({})).await;
        let listed = client
            .result_of(request(1, "resources/list", json!({})))
            .await;
        assert_eq!(
            listed,
            json!({ "resources": [
                readme(revision),
                plain("doc://logo", "logo", "image/png"),
                plain("doc://secret", "secret", "text/plain"),
                plain("doc://broken", "broken", "text/plain"),
            ] }),
            "{revision}"
        );
        let mut notes = json!({
            "uriTemplate": "doc://notes/{topic}",
            "name": "notes",
            "description": "Notes by topic",
            "mimeType": "text/plain",
        });
        if revision >= "2025-06-18" {
            notes["title"] = json!("Notes");
        }
        assert_eq!(
            client
                .result_of(request(2, "resources/templates/list", json!({})))
                .await,
            json!({ "resourceTemplates": [notes] }),
            "{revision}"
        );
    }
}

#[tokio::test]
async fn resources_are_paged_with_cursors() {
    let options = ServerOptions {
        page_size: 3,
        ..watching()
    };
    let client = Client::start(FakeHost::new().with_features(), options).await;
    client.initialize("2025-11-25").await;
    let first = client
        .result_of(request(1, "resources/list", json!({})))
        .await;
    assert_eq!(first["resources"].as_array().unwrap().len(), 3);
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = client
        .result_of(request(2, "resources/list", json!({ "cursor": cursor })))
        .await;
    assert_eq!(
        second,
        json!({ "resources": [plain("doc://broken", "broken", "text/plain")] })
    );
    assert_eq!(
        client
            .exchange(request(3, "resources/list", json!({ "cursor": "bogus" })))
            .await,
        [error(3, -32602, "Invalid cursor: bogus")]
    );
}

#[tokio::test]
async fn reads_answer_text_and_base64_blobs_and_templates_match() {
    let client = legacy("2025-11-25", json!({})).await;
    assert_eq!(
        client.result_of(read(1, "doc://readme")).await,
        json!({ "contents": [
            { "uri": "doc://readme", "mimeType": "text/markdown", "text": "# Read me" },
        ] })
    );
    assert_eq!(
        client.result_of(read(2, "doc://logo")).await,
        json!({ "contents": [{ "uri": "doc://logo", "mimeType": "image/png", "blob": "AAEC" }] })
    );
    assert_eq!(
        client.result_of(read(3, "doc://notes/rust")).await,
        json!({ "contents": [
            { "uri": "doc://notes/rust", "mimeType": "text/plain", "text": "Notes on rust" },
        ] })
    );
}

#[tokio::test]
async fn an_unknown_resource_is_32002_before_2026_07_28_and_32602_after_with_its_uri() {
    for revision in LEGACY {
        let client = legacy(revision, json!({})).await;
        for (id, uri) in [(1, "doc://nowhere"), (2, "doc://notes/missing")] {
            assert_eq!(
                client.exchange(read(id, uri)).await,
                [json!({ "jsonrpc": "2.0", "id": id, "error": {
                    "code": -32002,
                    "message": format!("Resource not found: {uri}"),
                    "data": { "uri": uri },
                } })],
                "{revision}"
            );
        }
    }
    let client = modern(watching()).await;
    let uri = "test://nonexistent-resource-for-conformance-testing";
    assert_eq!(
        client
            .exchange(stateless(1, "resources/read", json!({ "uri": uri })))
            .await,
        [json!({ "jsonrpc": "2.0", "id": 1, "error": {
            "code": -32602,
            "message": format!("Resource not found: {uri}"),
            "data": { "uri": uri },
        } })]
    );
}

#[tokio::test]
async fn a_failed_read_is_an_internal_error_and_bad_uris_are_invalid_params() {
    let client = legacy("2025-11-25", json!({})).await;
    assert_eq!(
        client.exchange(read(1, "doc://broken")).await,
        [error(1, -32603, "Internal error: the disk is full")]
    );
    assert_eq!(
        client
            .exchange(request(2, "resources/read", json!({ "uri": 7 })))
            .await,
        [error(
            2,
            -32602,
            "Invalid params: resources/read needs a string `uri`"
        )]
    );
    let long = format!("doc://{}", "x".repeat(2048));
    let answer = client.exchange(read(3, &long)).await;
    assert_eq!(answer[0]["error"]["code"], -32602, "{answer:?}");
    assert!(
        answer[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 2048 bytes")
    );
}

#[tokio::test]
async fn without_resources_their_methods_are_not_found() {
    let client = Client::initialized("2025-11-25").await;
    for (id, method) in [
        (1, "resources/list"),
        (2, "resources/templates/list"),
        (3, "resources/read"),
        (4, "resources/subscribe"),
        (5, "prompts/list"),
        (6, "prompts/get"),
        (7, "completion/complete"),
    ] {
        assert_eq!(
            client
                .exchange(request(id, method, json!({ "uri": "doc://readme" })))
                .await,
            [error(id, -32601, &format!("Method not found: {method}"))]
        );
    }
    let host = FakeHost::serving(catalog());
    let client = Client::start(host, watching()).await;
    assert_eq!(
        client
            .exchange(stateless(1, "resources/list", json!({})))
            .await,
        [error(1, -32601, "Method not found: resources/list")]
    );
}

#[tokio::test]
async fn a_legacy_read_asks_the_client_and_uses_the_answer() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut reading = client.send(read(1, "doc://secret"));
    let asked = reading.next().await;
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["message"], "The passphrase?");
    let id = asked["id"].clone();
    let answer = result(
        id,
        json!({ "action": "accept", "content": { "word": "swordfish" } }),
    );
    assert_eq!(client.exchange(answer).await, NOTHING);
    assert_eq!(
        reading.all().await,
        [result(
            1,
            json!({ "contents": [
                { "uri": "doc://secret", "mimeType": "text/plain", "text": "the secret is swordfish" },
            ] })
        )]
    );
}

#[tokio::test]
async fn a_read_in_a_batch_asks_nothing() {
    let client = legacy("2025-03-26", json!({ "elicitation": {} })).await;
    let batch = json!([read(1, "doc://readme"), read(2, "doc://secret")]);
    let answers =
        crate::support::sorted_by_id(client.exchange(batch).await[0].as_array().unwrap().clone());
    assert_eq!(answers[0]["result"]["contents"][0]["text"], "# Read me");
    assert_eq!(answers[1]["error"]["code"], -32603, "{answers:?}");
    assert_eq!(client.requests_to_client(), 0);
}

const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

#[tokio::test]
async fn a_stateless_read_that_asks_is_input_required_then_completes_and_its_state_fits_no_other_request()
 {
    let client = modern(watching()).await;
    let meta = json!({ CAPABILITIES: { "elicitation": {} } });
    let first = client
        .exchange(stateless(
            1,
            "resources/read",
            json!({ "uri": "doc://secret", "_meta": meta }),
        ))
        .await;
    let result = &first[0]["result"];
    assert_eq!(result["resultType"], "input_required", "{first:?}");
    assert_eq!(
        result["inputRequests"]["passphrase"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().unwrap().to_string();
    // The state belongs to this read: not to a prompt, a tool or another URI.
    let answers = json!({ "passphrase": { "action": "accept", "content": { "word": "w" } } });
    for (id, method, params) in [
        (2, "resources/read", json!({ "uri": "doc://readme" })),
        (3, "prompts/get", json!({ "name": "confirm" })),
        (4, "tools/call", json!({ "name": "echo", "arguments": {} })),
    ] {
        let mut params = params;
        params["requestState"] = json!(state);
        params["inputResponses"] = answers.clone();
        params["_meta"] = meta.clone();
        let refused = client.exchange(stateless(id, method, params)).await;
        assert_eq!(refused[0]["error"]["code"], -32602, "{method}: {refused:?}");
        assert!(
            refused[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("belongs to another request"),
            "{refused:?}"
        );
    }
    let retry = stateless(
        5,
        "resources/read",
        json!({ "uri": "doc://secret", "_meta": meta, "requestState": state, "inputResponses": answers }),
    );
    assert_eq!(
        client.exchange(retry).await,
        [complete(result_with_cache(
            5,
            json!({ "contents": [
                { "uri": "doc://secret", "mimeType": "text/plain", "text": "the secret is w" },
            ] }),
            0,
            "private"
        ))]
    );
}

fn result_with_cache(id: i64, mut body: Value, ttl: u64, scope: &str) -> Value {
    body["ttlMs"] = json!(ttl);
    body["cacheScope"] = json!(scope);
    result(id, body)
}

#[tokio::test]
async fn stateless_lists_and_reads_are_cacheable_results() {
    for (options, ttl) in [(watching(), 60_000), (fixed(), 3_600_000)] {
        let client = modern(options).await;
        let listed = client
            .exchange(stateless(1, "resources/list", json!({})))
            .await;
        assert_eq!(listed[0]["result"]["ttlMs"], ttl);
        assert_eq!(listed[0]["result"]["cacheScope"], "public");
        assert_eq!(
            listed[0]["result"]["resources"][0],
            readme(STATELESS),
            "shaped as 2025-11-25"
        );
        let templates = client
            .exchange(stateless(2, "resources/templates/list", json!({})))
            .await;
        assert_eq!(templates[0]["result"]["ttlMs"], ttl);
        assert_eq!(templates[0]["result"]["cacheScope"], "public");
    }
    let client = modern(watching()).await;
    assert_eq!(
        client
            .exchange(stateless(
                1,
                "resources/read",
                json!({ "uri": "doc://readme" })
            ))
            .await,
        [complete(result_with_cache(
            1,
            json!({ "contents": [
                { "uri": "doc://readme", "mimeType": "text/markdown", "text": "# Read me" },
            ] }),
            0,
            "private"
        ))]
    );
}

#[tokio::test]
async fn subscribe_is_gone_in_2026_07_28_and_discover_declares_what_is_offered() {
    let client = modern(watching()).await;
    for (id, method) in [(1, "resources/subscribe"), (2, "resources/unsubscribe")] {
        assert_eq!(
            client
                .exchange(stateless(id, method, json!({ "uri": "doc://readme" })))
                .await,
            [error(
                id,
                -32601,
                &format!("Method not found: {method} is not part of protocol revision {STATELESS}")
            )]
        );
    }
    let discovered = client
        .result_of(stateless(3, "server/discover", json!({})))
        .await;
    assert_eq!(
        discovered["capabilities"],
        json!({
            "tools": { "listChanged": true },
            "logging": {},
            "resources": { "subscribe": true, "listChanged": true },
            "prompts": { "listChanged": true },
            "completions": {},
            "extensions": { "io.modelcontextprotocol/tasks": {} },
        })
    );
    assert_eq!(discovered["serverInfo"]["version"], VERSION);
}

#[tokio::test]
async fn a_legacy_client_hears_of_updates_to_what_it_subscribed_to_only() {
    let mut client = legacy("2025-11-25", json!({})).await;
    assert_eq!(
        client
            .result_of(request(
                1,
                "resources/subscribe",
                json!({ "uri": "doc://readme" })
            ))
            .await,
        json!({})
    );
    client.host.update("doc://readme");
    client.host.update("doc://logo");
    let updated = notification(
        "notifications/resources/updated",
        json!({ "uri": "doc://readme" }),
    );
    assert_eq!(client.settled_notices().await, [updated]);
    client
        .result_of(request(
            2,
            "resources/unsubscribe",
            json!({ "uri": "doc://readme" }),
        ))
        .await;
    client.host.update("doc://readme");
    assert_eq!(client.settled_notices().await, NOTHING);
}

#[tokio::test]
async fn a_session_holds_at_most_1000_subscriptions() {
    let client = legacy("2025-11-25", json!({})).await;
    for i in 0..1000 {
        let uri = format!("doc://notes/{i}");
        client
            .result_of(request(i, "resources/subscribe", json!({ "uri": uri })))
            .await;
    }
    // Subscribing again to one it has is no new subscription.
    client
        .result_of(request(
            1000,
            "resources/subscribe",
            json!({ "uri": "doc://notes/7" }),
        ))
        .await;
    let refused = client
        .exchange(request(
            1001,
            "resources/subscribe",
            json!({ "uri": "doc://readme" }),
        ))
        .await;
    assert_eq!(refused[0]["error"]["code"], -32602, "{refused:?}");
    assert!(
        refused[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 1000 resources")
    );
}

#[tokio::test]
async fn list_changes_of_resources_and_prompts_reach_legacy_clients_that_were_told_of_them() {
    let mut client = legacy("2025-11-25", json!({})).await;
    client.host.touch_resources();
    client.host.touch_prompts();
    // In either order: the session follows the two in no set order.
    let mut notices = client.settled_notices().await;
    notices.sort_by_key(|notice| notice["method"].to_string());
    assert_eq!(
        notices,
        [
            json!({ "jsonrpc": "2.0", "method": "notifications/prompts/list_changed" }),
            json!({ "jsonrpc": "2.0", "method": "notifications/resources/list_changed" }),
        ]
    );
    // A client told of tools only is not told of resources or prompts.
    let mut client = Client::initialized("2025-11-25").await;
    client.host.set_features(features());
    assert_eq!(client.settled_notices().await, NOTHING);
}

#[tokio::test]
async fn a_listen_stream_gets_what_it_asked_for_and_the_server_honours() {
    let client = modern(watching()).await;
    let mut stream = client.send(stateless(
        "s",
        "subscriptions/listen",
        json!({ "notifications": {
            "resourcesListChanged": true,
            "promptsListChanged": true,
            "resourceSubscriptions": ["doc://readme", "doc://notes/rust"],
        } }),
    ));
    let tag = json!({ "io.modelcontextprotocol/subscriptionId": "s" });
    assert_eq!(
        stream.next().await,
        notification(
            "notifications/subscriptions/acknowledged",
            json!({
                "notifications": {
                    "resourcesListChanged": true,
                    "promptsListChanged": true,
                    "resourceSubscriptions": ["doc://notes/rust", "doc://readme"],
                },
                "_meta": tag,
            })
        )
    );
    // One event at a time: the session follows the host's several kinds
    // of events in no set order.
    client.host.update("doc://logo");
    client.host.update("doc://notes/rust");
    assert_eq!(
        stream.next().await,
        notification(
            "notifications/resources/updated",
            json!({ "uri": "doc://notes/rust", "_meta": tag })
        )
    );
    client.host.touch_prompts();
    assert_eq!(
        stream.next().await,
        notification(
            "notifications/prompts/list_changed",
            json!({ "_meta": tag })
        )
    );
    client.host.touch_resources();
    assert_eq!(
        stream.next().await,
        notification(
            "notifications/resources/list_changed",
            json!({ "_meta": tag })
        )
    );
    stream.assert_unanswered().await;
    client.finish().await;
}

#[tokio::test]
async fn a_listen_stream_is_acknowledged_only_what_is_offered_and_bounded() {
    let client = Client::start(FakeHost::new(), watching()).await;
    let mut stream = client.send(stateless(
        "s",
        "subscriptions/listen",
        json!({ "notifications": {
            "toolsListChanged": true,
            "resourcesListChanged": true,
            "promptsListChanged": true,
            "resourceSubscriptions": ["doc://readme"],
        } }),
    ));
    assert_eq!(
        stream.next().await["params"]["notifications"],
        json!({ "toolsListChanged": true })
    );
    client.finish().await;

    let client = modern(watching()).await;
    let many: Vec<String> = (0..1001).map(|i| format!("doc://notes/{i}")).collect();
    let refused = client
        .exchange(stateless(
            1,
            "subscriptions/listen",
            json!({ "notifications": { "resourceSubscriptions": many } }),
        ))
        .await;
    assert_eq!(refused[0]["error"]["code"], -32602, "{refused:?}");
    let long = format!("doc://{}", "x".repeat(2048));
    let refused = client
        .exchange(stateless(
            2,
            "subscriptions/listen",
            json!({ "notifications": { "resourceSubscriptions": [long] } }),
        ))
        .await;
    assert_eq!(refused[0]["error"]["code"], -32602, "{refused:?}");
}

#[tokio::test]
async fn initialize_and_discover_wait_until_the_host_is_ready_and_declare_what_it_offers_then() {
    let client = Client::start(FakeHost::new().starting(), watching()).await;
    let mut initializing = client.send(initialize_request(1, "2025-11-25"));
    let mut discovering = client.send(stateless(2, "server/discover", json!({})));
    initializing.assert_unanswered().await;
    discovering.assert_unanswered().await;
    // Ping does not wait.
    assert_eq!(
        client.exchange(request(3, "ping", json!({}))).await,
        [result(3, json!({}))]
    );
    client.host.set_features(features());
    client.host.finish_starting();
    let initialized = initializing.next().await;
    assert_eq!(
        initialized["result"]["capabilities"]["resources"],
        json!({ "subscribe": true, "listChanged": true })
    );
    let discovered = discovering.next().await;
    assert_eq!(
        discovered["result"]["capabilities"]["completions"],
        json!({})
    );
}

#[tokio::test]
async fn a_stateless_get_reports_progress_and_logs_at_the_level_its_meta_asks_for() {
    let client = modern(watching()).await;
    let line = stateless(
        1,
        "prompts/get",
        json!({
            "name": "greeting",
            "arguments": { "name": "Ada" },
            "_meta": { "progressToken": 9, "io.modelcontextprotocol/logLevel": "info" },
        }),
    );
    let answers = client.exchange(line).await;
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["method"], "notifications/progress");
    assert_eq!(answers[0]["params"]["progressToken"], 9);
    assert_eq!(
        answers[1],
        notification(
            "notifications/message",
            json!({ "level": "info", "logger": "greeting", "data": "greeting Ada" })
        )
    );
    assert_eq!(answers[2]["result"]["resultType"], "complete");
    // At warning, the info message is not sent.
    let quieter = stateless(
        2,
        "prompts/get",
        json!({
            "name": "greeting",
            "arguments": { "name": "Ada" },
            "_meta": { "io.modelcontextprotocol/logLevel": "warning" },
        }),
    );
    assert_eq!(client.exchange(quieter).await.len(), 1);
}
