//! What every test module shares: the fake host, the client that drives a
//! session with raw lines, and builders for the messages sent and expected.

mod client;
mod host;

pub use client::Client;
pub use host::{FakeHost, Features, add, asking, catalog, echo, features, forecast};

use corral_mcp::ServerOptions;
use corral_tool::ToolDef;
use serde_json::{Value, json};

/// The revisions negotiated by `initialize`, oldest first.
pub const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless revision, named in every request's `_meta`.
pub const STATELESS: &str = "2026-07-28";

/// What a line that must not be answered gets.
pub const NOTHING: [Value; 0] = [];

/// The server's version, as `serverInfo` states it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A server that watches its tools, so announces list changes, with the
/// default page size.
pub fn watching() -> ServerOptions {
    ServerOptions {
        list_changed: true,
        ..ServerOptions::default()
    }
}

/// A server whose tools never change, with the default page size.
pub fn fixed() -> ServerOptions {
    ServerOptions {
        list_changed: false,
        ..ServerOptions::default()
    }
}

/// The `tools/list` result a session initialized with `revision` gets from
/// a host serving `tools`.
pub async fn listed(tools: Vec<ToolDef>, revision: &str) -> Value {
    let client = Client::start(FakeHost::serving(tools), watching()).await;
    client.initialize(revision).await;
    client
        .result_of(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#)
        .await
}

/// A request (legacy era: no stateless `_meta`).
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id.into(), "method": method, "params": params })
}

/// An `initialize` request asking for `version`.
pub fn initialize_request(id: impl Into<Value>, version: &str) -> Value {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": { "name": "session-tests", "version": "1.0.0" },
        }),
    )
}

/// The `_meta` every request of the stateless revision carries.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A request of the stateless revision: `params` with [`stateless_meta`]
/// merged into its `_meta` (keys already there win).
pub fn stateless(id: impl Into<Value>, method: &str, mut params: Value) -> Value {
    let Value::Object(mut meta) = stateless_meta() else {
        unreachable!("the stateless _meta is an object")
    };
    if let Some(Value::Object(own)) = params.get_mut("_meta") {
        meta.append(own);
    }
    params["_meta"] = Value::Object(meta);
    request(id, method, params)
}

/// `notifications/cancelled` for the request `id`.
pub fn cancel(id: impl Into<Value>) -> Value {
    notification("notifications/cancelled", json!({ "requestId": id.into() }))
}

/// What a 2025-11-25 server declares of its experimental tasks.
pub fn tasks_capability() -> Value {
    json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } })
}

/// A successful response.
pub fn result(id: impl Into<Value>, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id.into(), "result": result })
}

/// An error response without data.
pub fn error(id: impl Into<Value>, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id.into(), "error": { "code": code, "message": message } })
}

/// A notification (the client's or the server's).
pub fn notification(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// `notifications/progress` of `countdown` (whose total is 3).
pub fn progress(token: impl Into<Value>, done: f64, message: &str) -> Value {
    notification(
        "notifications/progress",
        json!({
            "progressToken": token.into(),
            "progress": done,
            "total": 3.0,
            "message": message,
        }),
    )
}

/// `notifications/message`: a log message.
pub fn log_message(level: &str, logger: &str, data: &str) -> Value {
    notification(
        "notifications/message",
        json!({ "level": level, "logger": logger, "data": data }),
    )
}

/// A text content item.
pub fn text(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// The response to the `countdown` call `id`.
pub fn liftoff(id: impl Into<Value>) -> Value {
    result(
        id,
        json!({ "content": [text("liftoff")], "isError": false }),
    )
}

/// The server as it names itself (`serverInfo`, and in the `_meta` of
/// every stateless result).
pub fn server_info() -> Value {
    json!({ "name": "corral", "title": "Corral", "version": VERSION })
}

/// `result` as the stateless revision has it: marked `resultType:
/// "complete"`, and naming the server in its `_meta` (beside what its
/// `_meta` holds already).
pub fn completed(mut result: Value) -> Value {
    result["resultType"] = json!("complete");
    result["_meta"]["io.modelcontextprotocol/serverInfo"] = server_info();
    result
}

/// `response` as the stateless revision has it: its result [`completed`].
pub fn complete(mut response: Value) -> Value {
    response["result"] = completed(response["result"].take());
    response
}

/// `notifications/tools/list_changed` as a legacy client gets it.
pub fn list_changed() -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" })
}

/// `messages` in the order of their ids' JSON text: the order of the
/// responses in a batch's answer is the server's choice.
pub fn sorted_by_id(mut messages: Vec<Value>) -> Vec<Value> {
    messages.sort_by_key(|message| message["id"].to_string());
    messages
}
