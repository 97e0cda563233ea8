//! Prompts and completion in both eras: prompt fields per revision, their
//! messages shaped as tool content is, argument checks, unknown prompts,
//! failures, gets that ask and report, and completion's checks and cut.

use serde_json::{Value, json};

use crate::support::{
    Client, FakeHost, LEGACY, NOTHING, STATELESS, complete, error, initialize_request, request,
    result, stateless, watching,
};

async fn legacy(revision: &str, capabilities: Value) -> Client {
    let client = Client::start(FakeHost::new().with_features(), watching()).await;
    let mut initialize = initialize_request("init", revision);
    initialize["params"]["capabilities"] = capabilities;
    let answers = client.exchange(initialize).await;
    assert_eq!(answers[0]["result"]["protocolVersion"], revision);
    client
}

fn get(id: i64, name: &str, arguments: Value) -> Value {
    request(
        id,
        "prompts/get",
        json!({ "name": name, "arguments": arguments }),
    )
}

fn greeting(revision: &str) -> Value {
    let mut name = json!({ "name": "name", "description": "The name", "required": true });
    if revision >= "2025-06-18" {
        name["title"] = json!("Name");
    }
    let mut greeting = json!({
        "name": "greeting",
        "description": "The greeting prompt",
        "arguments": [
            name,
            { "name": "style", "description": "The style", "required": false },
        ],
    });
    if revision >= "2025-06-18" {
        greeting["title"] = json!("Greeting");
    }
    if revision >= "2025-11-25" {
        greeting["icons"] =
            json!([{ "src": "https://example.com/wave.png", "mimeType": "image/png" }]);
    }
    greeting
}

fn bare(name: &str) -> Value {
    json!({ "name": name, "description": format!("The {name} prompt") })
}

#[tokio::test]
async fn prompts_carry_the_fields_of_each_revision() {
    for revision in LEGACY {
        let client = legacy(revision, json!({})).await;
        assert_eq!(
            client
                .result_of(request(1, "prompts/list", json!({})))
                .await,
            json!({ "prompts": [
                greeting(revision),
                bare("showcase"),
                bare("confirm"),
                bare("broken"),
            ] }),
            "{revision}"
        );
    }
    let client = Client::start(FakeHost::new().with_features(), watching()).await;
    let listed = client
        .result_of(stateless(1, "prompts/list", json!({})))
        .await;
    assert_eq!(listed["prompts"][0], greeting(STATELESS));
    assert_eq!(listed["ttlMs"], 60_000);
    assert_eq!(listed["cacheScope"], "public");
}

#[tokio::test]
async fn a_prompt_is_got_with_its_arguments_and_reports_as_a_call_does() {
    let client = legacy("2025-11-25", json!({})).await;
    assert_eq!(
        client
            .exchange(request(0, "logging/setLevel", json!({ "level": "info" })))
            .await
            .len(),
        1
    );
    let mut line = get(1, "greeting", json!({ "name": "Ada", "style": "warmly" }));
    line["params"]["_meta"] = json!({ "progressToken": "p" });
    assert_eq!(
        client.exchange(line).await,
        [
            json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": "p", "progress": 1.0, "total": 1.0, "message": "greeting",
            } }),
            json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": {
                "level": "info", "logger": "greeting", "data": "greeting Ada",
            } }),
            result(
                1,
                json!({
                    "description": "The greeting prompt",
                    "messages": [
                        { "role": "user", "content": { "type": "text", "text": "Say hello to Ada, warmly" } },
                    ],
                })
            ),
        ]
    );
}

#[tokio::test]
async fn prompt_messages_are_shaped_per_revision_as_tool_content_is() {
    let old = legacy("2024-11-05", json!({})).await;
    let messages = old.result_of(get(1, "showcase", json!({}))).await["messages"].clone();
    let kinds: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"]["type"].as_str().unwrap())
        .collect();
    // Audio and resource links did not exist yet: text in their place.
    assert_eq!(kinds, ["image", "text", "text", "resource", "resource"]);
    assert_eq!(messages[0]["role"], "assistant");
    assert_eq!(
        messages[4]["content"]["resource"],
        json!({ "uri": "file:///data.bin", "blob": "AQID" })
    );
    let new = legacy("2025-06-18", json!({})).await;
    let messages = new.result_of(get(1, "showcase", json!({}))).await["messages"].clone();
    let kinds: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["image", "audio", "resource_link", "resource", "resource"]
    );
}

#[tokio::test]
async fn bad_prompt_requests_are_invalid_params_and_failures_internal_errors() {
    let client = legacy("2025-11-25", json!({})).await;
    for (id, name, arguments, message) in [
        (
            1,
            "greting",
            json!({}),
            "Unknown prompt: greting (did you mean `greeting`?)",
        ),
        (
            2,
            "greeting",
            json!({}),
            "Invalid params: prompt `greeting` needs the argument `name`",
        ),
        (
            3,
            "greeting",
            json!({ "name": 7 }),
            "Invalid params: `arguments` \"name\" must be a string",
        ),
        (
            4,
            "greeting",
            json!({ "name": "Ada", "mood": "x" }),
            "Invalid params: prompt `greeting` has no argument `mood`",
        ),
    ] {
        assert_eq!(
            client.exchange(get(id, name, arguments)).await,
            [error(id, -32602, message)]
        );
    }
    assert_eq!(
        client.exchange(get(5, "broken", json!({}))).await,
        [error(5, -32603, "Internal error: the template is gone")]
    );
}

#[tokio::test]
async fn a_legacy_get_asks_the_client_and_a_get_in_a_batch_asks_nothing() {
    let client = legacy("2025-11-25", json!({ "elicitation": {} })).await;
    let mut getting = client.send(get(1, "confirm", json!({})));
    let asked = getting.next().await;
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(
        asked["params"]["message"],
        "What context should the prompt use?"
    );
    let answer = result(
        asked["id"].clone(),
        json!({ "action": "accept", "content": { "context": "tests" } }),
    );
    assert_eq!(client.exchange(answer).await, NOTHING);
    let answers = getting.all().await;
    assert_eq!(
        answers[0]["result"]["messages"][0]["content"]["text"],
        "tests"
    );

    let client = legacy("2025-03-26", json!({ "elicitation": {} })).await;
    let batch = client
        .exchange(json!([
            get(1, "confirm", json!({})),
            request(2, "prompts/list", json!({})),
        ]))
        .await;
    let answers = crate::support::sorted_by_id(batch[0].as_array().unwrap().clone());
    assert_eq!(answers[0]["error"]["code"], -32603, "{answers:?}");
    assert_eq!(answers[1]["result"]["prompts"][0]["name"], "greeting");
    assert_eq!(client.requests_to_client(), 0);
}

const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The conformance suite's `input-required-result-non-tool-request`: a
/// prompt that asks, got without state, then with the answers (and the
/// state the server issued).
#[tokio::test]
async fn a_stateless_get_that_asks_is_input_required_then_completes() {
    let client = Client::start(FakeHost::new().with_features(), watching()).await;
    let meta = json!({ CAPABILITIES: { "elicitation": {} } });
    let first = client
        .exchange(stateless(
            1,
            "prompts/get",
            json!({ "name": "confirm", "_meta": meta }),
        ))
        .await;
    let result_ = &first[0]["result"];
    assert_eq!(result_["resultType"], "input_required", "{first:?}");
    assert_eq!(
        result_["inputRequests"]["user_context"]["params"]["message"],
        "What context should the prompt use?"
    );
    let state = result_["requestState"].as_str().unwrap();
    let answers =
        json!({ "user_context": { "action": "accept", "content": { "context": "test context" } } });
    let retry = stateless(
        2,
        "prompts/get",
        json!({ "name": "confirm", "_meta": meta, "requestState": state, "inputResponses": answers }),
    );
    assert_eq!(
        client.exchange(retry).await,
        [complete(result(
            2,
            json!({
                "description": "The confirm prompt",
                "messages": [
                    { "role": "assistant", "content": { "type": "text", "text": "test context" } },
                ],
            })
        ))]
    );
    // The state of one prompt is no other's.
    let other = stateless(
        3,
        "prompts/get",
        json!({ "name": "showcase", "_meta": meta, "requestState": state, "inputResponses": answers }),
    );
    assert_eq!(client.exchange(other).await[0]["error"]["code"], -32602);
}

fn completion(id: i64, reference: Value, name: &str, value: &str) -> Value {
    request(
        id,
        "completion/complete",
        json!({ "ref": reference, "argument": { "name": name, "value": value } }),
    )
}

#[tokio::test]
async fn completion_suggests_at_most_100_values() {
    let client = legacy("2025-11-25", json!({})).await;
    let prompt = json!({ "type": "ref/prompt", "name": "greeting" });
    assert_eq!(
        client.result_of(completion(1, prompt, "name", "A")).await,
        json!({ "completion": { "values": ["Ada", "Alan"], "total": 2, "hasMore": false } })
    );
    let template = json!({ "type": "ref/resource", "uri": "doc://notes/{topic}" });
    let cut = client
        .result_of(completion(2, template, "topic", "t"))
        .await;
    assert_eq!(cut["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(cut["completion"]["values"][99], "t099");
    assert_eq!(cut["completion"]["hasMore"], true);
    assert_eq!(cut["completion"]["total"], 150);
    let modern = client
        .exchange(stateless(
            3,
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "greeting" }, "argument": { "name": "name", "value": "B" } }),
        ))
        .await;
    assert_eq!(
        modern,
        [complete(result(
            3,
            json!({ "completion": { "values": ["Bob"], "total": 1, "hasMore": false } })
        ))]
    );
}

#[tokio::test]
async fn bad_completion_requests_are_invalid_params_and_failures_internal_errors() {
    let client = legacy("2025-11-25", json!({})).await;
    for (id, params) in [
        (1, json!({ "argument": { "name": "name", "value": "" } })),
        (
            2,
            json!({ "ref": { "type": "ref/tool", "name": "x" }, "argument": { "name": "n", "value": "" } }),
        ),
        (
            3,
            json!({ "ref": { "type": "ref/prompt", "name": "greeting" }, "argument": { "name": "name" } }),
        ),
        (
            4,
            json!({ "ref": { "type": "ref/prompt", "name": "greeting" }, "argument": { "name": "name", "value": 1 } }),
        ),
        (
            5,
            json!({ "ref": { "type": "ref/prompt", "name": "greeting" }, "argument": { "name": "name", "value": "" }, "context": { "arguments": { "style": 3 } } }),
        ),
        (
            6,
            json!({ "ref": { "type": "ref/prompt", "name": "nope" }, "argument": { "name": "name", "value": "" } }),
        ),
    ] {
        let answer = client
            .exchange(request(id, "completion/complete", params))
            .await;
        assert_eq!(answer[0]["error"]["code"], -32602, "{id}: {answer:?}");
    }
    assert_eq!(
        client
            .exchange(completion(
                7,
                json!({ "type": "ref/prompt", "name": "broken" }),
                "x",
                ""
            ))
            .await,
        [error(7, -32603, "Internal error: the template is gone")]
    );
}
