//! Messages that are valid JSON but hold a value serde_json cannot hold as a
//! [`Value`]: a number beyond the range of a 64-bit float (`1e400`), or a
//! string with a lone UTF-16 surrogate (`"\ud83d"`, which JavaScript's
//! `JSON.stringify` writes for a string cut in the middle of an emoji).
//! RFC 8259 allows both, so the client did send a request: it is answered
//! with its own id, and the error names the value, instead of a parse error
//! with a null id that the client can match to nothing.
//!
//! The text is scanned again with every member kept as raw text (serde_json's
//! [`RawValue`]: the grammar is checked, but no number is converted and no
//! escape decoded), then each member is read on its own, so that the id is
//! recovered and the member that cannot be read is found; within `params`,
//! one level further, to name it. Every byte is thus scanned at most four
//! more times, whatever the nesting: the work stays a small multiple of one
//! parse.
//!
//! What is made of the message then:
//! - an unreadable `id`: the request cannot be answered by its id, so the
//!   error has a null one (as for any id that is not a string or an integer);
//! - an unreadable `jsonrpc` or `method`: `-32600` with the id;
//! - unreadable `params` of a request: `-32602` with the id, naming the
//!   member of `params` that holds the value;
//! - unreadable `params` of a notification: it cannot be answered, so what
//!   can be read of it is acted on (the members of `params` that can be read);
//! - any other member (a response's `result` or `error`, a member the
//!   protocol does not define) is never looked into anyway: it is kept as
//!   `null`, and the message is served as usual.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Frame, Incoming, RpcError, classify, is_valid_id};

/// The frame in `text`, when `text` is valid JSON that serde_json could not
/// read as a [`Value`]; `None` when it is not JSON at all.
pub(super) fn frame(text: &str) -> Option<Frame> {
    match text.trim_start().as_bytes().first() {
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            Some(Frame::Batch(items.into_iter().map(element).collect()))
        }
        Some(b'{') => {
            let members: Members = serde_json::from_str(text).ok()?;
            Some(Frame::Single(message(members)))
        }
        _ => {
            // A lone scalar: valid JSON if it scans, but never a message.
            let _: &RawValue = serde_json::from_str(text).ok()?;
            Some(Frame::Single(classify(Value::Null)))
        }
    }
}

/// One element of a batch, scanned already.
fn element(raw: &RawValue) -> Incoming {
    let text = raw.get();
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return classify(value);
    }
    match serde_json::from_str::<Members>(text) {
        Ok(members) => message(members),
        // An array or a scalar holding the value: not a message in any case.
        Err(_) => classify(Value::Null),
    }
}

/// The members of a JSON object, names and values as raw text, in order.
struct Members<'a>(Vec<(&'a RawValue, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<&RawValue, &RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// A member that could not be read, and why.
struct Unreadable<'a> {
    text: &'a str,
    error: serde_json::Error,
}

/// The message made of `members`, some of which cannot be read.
fn message(members: Members<'_>) -> Incoming {
    let mut object = Map::new();
    let (mut id, mut header, mut params) = (None, None, None);
    for (name, value) in members.0 {
        // A name that cannot be read is no member the protocol defines.
        let Ok(name) = serde_json::from_str::<String>(name.get()) else {
            continue;
        };
        let error = match serde_json::from_str::<Value>(value.get()) {
            Ok(value) => {
                object.insert(name, value);
                continue;
            }
            Err(error) => error,
        };
        let unreadable = Unreadable {
            text: value.get(),
            error,
        };
        match name.as_str() {
            "id" => id = Some(unreadable),
            "jsonrpc" | "method" => header = Some((name, unreadable)),
            "params" => params = Some(unreadable),
            // Never looked into: a response's result or error, or a member
            // the protocol does not define.
            _ => {
                object.insert(name, Value::Null);
            }
        }
    }
    if let Some(unreadable) = id {
        return invalid_request(Value::Null, "\"id\"", &unreadable);
    }
    let id = object.get("id").filter(|id| is_valid_id(id)).cloned();
    if let Some((name, unreadable)) = header {
        let what = format!("\"{name}\"");
        return invalid_request(id.unwrap_or(Value::Null), &what, &unreadable);
    }
    let Some(unreadable) = params else {
        return classify(Value::Object(object));
    };
    let Ok(members) = serde_json::from_str::<Members>(unreadable.text) else {
        // Params that are not an object are refused whatever they hold: an
        // empty array stands in for them, which `classify` refuses so.
        object.insert("params".into(), Value::Array(Vec::new()));
        return classify(Value::Object(object));
    };
    let (readable, unreadable_member) = read_members(members);
    match (id, unreadable_member) {
        // A notification cannot be answered: what can be read of it is
        // acted on (`notifications/cancelled` still cancels when only its
        // `reason` is unreadable).
        (None, _) => {
            object.insert("params".into(), Value::Object(readable));
            classify(Value::Object(object))
        }
        (Some(id), Some((name, unreadable))) => Incoming::Invalid {
            id,
            error: RpcError::invalid_params(format!(
                "Invalid params: `{name}` holds {}",
                describe(&unreadable)
            )),
        },
        // Its name could not be read: the params as a whole are named.
        (Some(id), None) => Incoming::Invalid {
            id,
            error: RpcError::invalid_params(format!("Invalid params: {}", describe(&unreadable))),
        },
    }
}

/// The members of an object that can be read, and the first one that
/// cannot (when its name can be), each read once.
fn read_members(members: Members<'_>) -> (Map<String, Value>, Option<(String, Unreadable<'_>)>) {
    let mut readable = Map::new();
    let mut unreadable = None;
    for (name, value) in members.0 {
        let Ok(name) = serde_json::from_str::<String>(name.get()) else {
            continue;
        };
        match serde_json::from_str::<Value>(value.get()) {
            Ok(value) => {
                readable.insert(name, value);
            }
            Err(error) if unreadable.is_none() => {
                let text = value.get();
                unreadable = Some((name, Unreadable { text, error }));
            }
            Err(_) => {}
        }
    }
    (readable, unreadable)
}

fn invalid_request(id: Value, what: &str, unreadable: &Unreadable<'_>) -> Incoming {
    Incoming::Invalid {
        id,
        error: RpcError::invalid_request(format!(
            "Invalid Request: {what} holds {}",
            describe(unreadable)
        )),
    }
}

/// The bytes of a value shown before the point where it could not be read.
const EXCERPT_BYTES: usize = 24;

/// What the server cannot read in `unreadable`, and where: "a number out of
/// range for this server (near `"n":1e400`)".
fn describe(unreadable: &Unreadable<'_>) -> String {
    let reason = unreadable.error.to_string();
    // serde_json says "<what> at line L column C"; the place is shown as text.
    let reason = reason.split(" at line ").next().unwrap_or_default();
    let what = if reason.contains("number") {
        "a number out of range for this server (beyond a 64-bit float)".to_string()
    } else if reason.contains("escape") || reason.contains("surrogate") {
        // The text scanned as JSON, so its escapes are well formed: what
        // fails is a UTF-16 surrogate without its pair.
        "a string with a lone UTF-16 surrogate (half of a character), which this server cannot read"
            .to_string()
    } else {
        format!("a value this server cannot read ({reason})")
    };
    format!("{what} (near `{}`)", excerpt(unreadable))
}

/// Up to [`EXCERPT_BYTES`] of the text before the place of the error.
fn excerpt<'a>(unreadable: &Unreadable<'a>) -> &'a str {
    let text = unreadable.text;
    let (line, column) = (unreadable.error.line(), unreadable.error.column());
    let line_start = match line {
        0 | 1 => 0,
        _ => text
            .match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(at, _)| at + 1),
    };
    let end = text.floor_char_boundary(line_start.saturating_add(column).min(text.len()));
    let start = text.ceil_char_boundary(end.saturating_sub(EXCERPT_BYTES));
    text[start..end].trim_start()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{code, parse_frame};
    use serde_json::json;

    fn invalid(line: &str) -> (Value, RpcError) {
        match parse_frame(line) {
            Frame::Single(Incoming::Invalid { id, error }) => (id, error),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn a_request_with_unreadable_params_keeps_its_id() {
        let (id, error) = invalid(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"n":1e400}}}"#,
        );
        assert_eq!(id, 7);
        assert_eq!(error.code, code::INVALID_PARAMS);
        assert_eq!(
            error.message,
            "Invalid params: `arguments` holds a number out of range for this server (beyond a 64-bit float) (near `{\"n\":1e400`)"
        );
        let (id, error) = invalid(
            "{\"jsonrpc\":\"2.0\",\"id\":\"cut\",\"method\":\"tools/call\",\n\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"I \\ud83d\"}}}",
        );
        assert_eq!(id, "cut");
        assert_eq!(error.code, code::INVALID_PARAMS);
        assert_eq!(
            error.message,
            "Invalid params: `arguments` holds a string with a lone UTF-16 surrogate (half of a character), which this server cannot read (near `{\"text\":\"I \\ud83d\"`)"
        );
    }

    #[test]
    fn an_unreadable_id_or_method_is_an_invalid_request() {
        let (id, error) = invalid(r#"{"jsonrpc":"2.0","id":"\udc00","method":"ping"}"#);
        assert_eq!(id, Value::Null);
        assert_eq!(error.code, code::INVALID_REQUEST);
        assert!(
            error
                .message
                .starts_with("Invalid Request: \"id\" holds a string with a lone UTF-16 surrogate"),
            "{}",
            error.message
        );
        let (id, error) = invalid(r#"{"jsonrpc":"2.0","id":3,"method":"ping\ud800"}"#);
        assert_eq!(id, 3);
        assert_eq!(error.code, code::INVALID_REQUEST);
        assert!(
            error
                .message
                .starts_with("Invalid Request: \"method\" holds"),
            "{}",
            error.message
        );
    }

    #[test]
    fn members_never_looked_into_do_not_matter() {
        let Frame::Single(Incoming::Request(request)) =
            parse_frame(r#"{"jsonrpc":"2.0","id":1,"method":"ping","x-trace":1e999}"#)
        else {
            panic!("not a request");
        };
        assert_eq!((request.id, request.method.as_str()), (json!(1), "ping"));
        assert!(matches!(
            parse_frame(r#"{"jsonrpc":"2.0","id":2,"result":{"n":-1e400}}"#),
            Frame::Single(Incoming::Response(response)) if response.outcome == Ok(Value::Null)
        ));
    }

    #[test]
    fn a_notification_keeps_what_can_be_read_of_its_params() {
        let Frame::Single(Incoming::Notification(cancel)) = parse_frame(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"\ud83d"}}"#,
        ) else {
            panic!("not a notification");
        };
        assert_eq!(Value::Object(cancel.params), json!({ "requestId": 5 }));
    }

    #[test]
    fn batches_recover_each_element() {
        let Frame::Batch(items) = parse_frame(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":[1e400]}},1e400]"#,
        ) else {
            panic!("not a batch");
        };
        assert!(matches!(&items[0], Incoming::Request(r) if r.id == 1));
        assert!(
            matches!(&items[1], Incoming::Invalid { id, error } if *id == 2 && error.code == code::INVALID_PARAMS)
        );
        assert!(
            matches!(&items[2], Incoming::Invalid { id, error } if id.is_null() && error.code == code::INVALID_REQUEST)
        );
    }

    #[test]
    fn text_that_is_not_json_stays_a_parse_error() {
        for line in [
            r#"{"id":1,"n":1e400"#,
            r#"{"id":1,"s":"\u12"}"#,
            r#"[1e400,"#,
        ] {
            assert!(matches!(parse_frame(line), Frame::Unparseable(_)), "{line}");
        }
    }
}
