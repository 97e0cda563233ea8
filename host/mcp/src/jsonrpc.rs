//! JSON-RPC 2.0 messages: classifying what arrives, building what leaves.
//!
//! Incoming lines are parsed into [`Incoming`] without trusting their shape:
//! anything that is JSON but not a valid JSON-RPC message becomes an
//! [`Incoming::Invalid`] carrying the error to answer with, so the dispatcher
//! never has to look at raw JSON. Valid JSON holding a value serde_json
//! cannot represent is read as far as it can be (the private module
//! `unreadable`), so that a request is still answered by its id.

mod unreadable;

use serde_json::{Map, Value, json};

/// Where messages for the client go. Called from any thread; it must not
/// block for long (a transport queues, or writes to a pipe). A session
/// hands one to each request; the legacy client sends its requests there.
pub type Outbox = std::sync::Arc<dyn Fn(Value) + Send + Sync>;

/// Standard JSON-RPC error codes used by the server.
pub mod code {
    /// The line was not valid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON was not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist (or does not exist in the negotiated revision).
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The parameters were wrong: a missing field, an unknown tool, a bad cursor.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Something failed inside the server.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP 2026-07-28: the request's `_meta` names a protocol version the
    /// server does not speak statelessly; `data.supported` lists those it does.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// A request: a method call that expects exactly one response.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id exactly as the client sent it (a string or a number, 0 included).
    pub id: Value,
    pub method: String,
    /// The params object; absent params are an empty object.
    pub params: Map<String, Value>,
}

/// A notification: a method call that expects no response.
#[derive(Debug, Clone)]
pub struct Notification {
    pub method: String,
    pub params: Map<String, Value>,
}

/// One classified JSON-RPC message from the client.
#[derive(Debug)]
pub enum Incoming {
    Request(Request),
    Notification(Notification),
    /// A response to a request the server sent (asking the client for
    /// input on behalf of a running tool).
    Response(Response),
    /// Valid JSON that is not a valid message. `id` is the message's id when
    /// one could be read, so the error can be correlated.
    Invalid {
        id: Value,
        error: RpcError,
    },
}

/// A response from the client to a request of the server's.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the server's request, as the client echoes it (null when
    /// the client could not read the request's id).
    pub id: Value,
    /// The result, or the client's error.
    pub outcome: Result<Value, RpcError>,
}

impl Response {
    /// The response in `object` (a message with `result` or `error`).
    fn of(id: Value, mut object: Map<String, Value>) -> Response {
        let outcome = match object.remove("error") {
            None => Ok(object.remove("result").unwrap_or(Value::Null)),
            Some(error) => {
                let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
                let message = match error.get("message") {
                    Some(Value::String(message)) => message.clone(),
                    _ => "(the error has no message)".to_string(),
                };
                let mut failure = RpcError::new(code, message);
                failure.data = error.get("data").cloned();
                Err(failure)
            }
        };
        Response { id, outcome }
    }
}

/// One line from the wire: a single message or a batch of them.
#[derive(Debug)]
pub enum Frame {
    Single(Incoming),
    /// A JSON array. Elements are classified one by one; an empty array is
    /// invalid as a whole.
    Batch(Vec<Incoming>),
    /// The line was not JSON at all.
    Unparseable(RpcError),
}

/// Parses one line of input.
pub fn parse_frame(line: &str) -> Frame {
    match serde_json::from_str::<Value>(line) {
        Err(err) => unreadable::frame(line).unwrap_or_else(|| {
            Frame::Unparseable(RpcError::new(
                code::PARSE_ERROR,
                format!("Parse error: {err}"),
            ))
        }),
        Ok(Value::Array(items)) => Frame::Batch(items.into_iter().map(classify).collect()),
        Ok(value) => Frame::Single(classify(value)),
    }
}

/// Classifies one JSON value as a JSON-RPC message.
pub fn classify(value: Value) -> Incoming {
    let Value::Object(mut object) = value else {
        return invalid(Value::Null, "a message must be a JSON object");
    };
    let id = object.remove("id");
    let id_for_errors = match &id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return invalid(id_for_errors, "\"jsonrpc\" must be \"2.0\"");
    }
    if let Some(id) = &id
        && !is_valid_id(id)
    {
        // JSON-RPC's error response to a message whose id could not be read
        // carries a null id: a response, ignored like the others.
        if id.is_null() && !object.contains_key("method") && object.contains_key("error") {
            return Incoming::Response(Response::of(Value::Null, object));
        }
        return invalid(Value::Null, "\"id\" must be a string or an integer");
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return invalid(id_for_errors, "\"method\" must be a string"),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            let id = id.expect("checked above");
            return Incoming::Response(Response::of(id, object));
        }
        None => return invalid(id_for_errors, "missing \"method\""),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        // JSON-RPC allows params by position; MCP names every one, so an
        // array is a valid request with parameters this server cannot take.
        Some(Value::Array(_)) => {
            return Incoming::Invalid {
                id: id_for_errors,
                error: RpcError::invalid_params(
                    "Invalid params: MCP takes params by name (an object), not by position (an array)",
                ),
            };
        }
        Some(_) => return invalid(id_for_errors, "\"params\" must be an object"),
    };
    match id {
        Some(id) => Incoming::Request(Request { id, method, params }),
        None => Incoming::Notification(Notification { method, params }),
    }
}

/// MCP ids are strings or integers; null is not allowed.
fn is_valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

fn invalid(id: Value, message: &str) -> Incoming {
    Incoming::Invalid {
        id,
        error: RpcError::invalid_request(format!("Invalid Request: {message}")),
    }
}

/// A successful response.
pub fn response(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response.
pub fn error_response(id: Value, error: &RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() })
}

/// A notification from the server.
/// Whether `message` is a notification a transport may drop when its
/// client is not reading: progress and log messages, which a running call
/// may send any number of, and resource updates, which plugins may send
/// for each of up to 1,000 URIs a second to each of a session's listen
/// streams (responses and list changes are never dropped).
pub fn is_droppable(message: &Value) -> bool {
    matches!(
        message.get("method").and_then(Value::as_str),
        Some(
            "notifications/progress" | "notifications/message" | "notifications/resources/updated"
        )
    )
}

/// Bytes of `value` as JSON, counted without writing them anywhere.
pub fn serialized_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).expect("a JSON value always serializes");
    count.0
}

pub fn notification(method: &str, params: Option<Value>) -> Value {
    match params {
        Some(params) => json!({ "jsonrpc": "2.0", "method": method, "params": params }),
        None => json!({ "jsonrpc": "2.0", "method": method }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(line: &str) -> Incoming {
        match parse_frame(line) {
            Frame::Single(message) => message,
            other => panic!("expected a single message, got {other:?}"),
        }
    }

    #[test]
    fn only_notifications_that_can_come_without_bound_are_droppable() {
        for method in [
            "notifications/progress",
            "notifications/message",
            "notifications/resources/updated",
        ] {
            assert!(is_droppable(&notification(method, None)), "{method}");
        }
        for method in [
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
            "notifications/prompts/list_changed",
        ] {
            assert!(!is_droppable(&notification(method, None)), "{method}");
        }
        assert!(!is_droppable(&response(json!(1), json!({}))));
    }

    #[test]
    fn requests_keep_their_id_verbatim() {
        for id in ["0", "\"abc\"", "-7", "18446744073709551615"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let Incoming::Request(request) = single(&line) else {
                panic!("not a request: {line}");
            };
            assert_eq!(request.id.to_string(), id);
            assert!(request.params.is_empty());
        }
    }

    #[test]
    fn notifications_have_no_id() {
        let message = single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(
            matches!(message, Incoming::Notification(n) if n.method == "notifications/initialized")
        );
    }

    #[test]
    fn responses_from_the_client_are_recognised() {
        let message = single(r#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#);
        let Incoming::Response(response) = message else {
            panic!("not a response: {message:?}");
        };
        assert_eq!(response.id, json!(3));
        assert_eq!(response.outcome, Ok(json!({ "a": 1 })));
        let message = single(
            r#"{"jsonrpc":"2.0","id":"corral-1","error":{"code":-1,"message":"User rejected"}}"#,
        );
        let Incoming::Response(response) = message else {
            panic!("not a response: {message:?}");
        };
        assert_eq!(response.id, json!("corral-1"));
        assert_eq!(response.outcome, Err(RpcError::new(-1, "User rejected")));
    }

    #[test]
    fn malformed_messages_are_invalid_requests() {
        let cases = [
            (r#"5"#, Value::Null),
            (r#"{"id":1,"method":"ping"}"#, json!(1)),
            (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, json!(1)),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":"x","method":7}"#, json!("x")),
            (r#"{"jsonrpc":"2.0","id":"x"}"#, json!("x")),
        ];
        for (line, expected_id) in cases {
            match single(line) {
                Incoming::Invalid { id, error } => {
                    assert_eq!(id, expected_id, "{line}");
                    assert_eq!(error.code, code::INVALID_REQUEST, "{line}");
                }
                other => panic!("{line} classified as {other:?}"),
            }
        }
    }

    #[test]
    fn params_by_position_are_invalid_params() {
        match single(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}"#) {
            Incoming::Invalid { id, error } => {
                assert_eq!(id, json!(2));
                assert_eq!(error.code, code::INVALID_PARAMS);
            }
            other => panic!("classified as {other:?}"),
        }
    }

    #[test]
    fn unparseable_lines_are_parse_errors() {
        assert!(matches!(
            parse_frame("{not json"),
            Frame::Unparseable(RpcError {
                code: code::PARSE_ERROR,
                ..
            })
        ));
    }

    #[test]
    fn batches_classify_each_element() {
        let Frame::Batch(items) = parse_frame(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, 3]"#)
        else {
            panic!("not a batch");
        };
        assert!(matches!(items[0], Incoming::Request(_)));
        assert!(matches!(items[1], Incoming::Invalid { .. }));
    }
}
