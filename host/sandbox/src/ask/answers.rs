//! The client's answers, checked and turned into what the plugin receives.
//!
//! The client is no more trusted than the plugin: an answer must be the MCP
//! result of its request's method, and an accepted form must match the
//! schema the plugin asked with, so that a plugin can rely on what it is
//! given. Anything else is `ask-error::failed`, naming the request.
//!
//! What reaches the plugin's memory is bounded per answer (an accepted
//! form's content to 64 KiB of JSON text, a sampled text or medium to
//! 4 MiB, roots to 1,000 of 4 KiB URIs and names) and per ask, all answers
//! together, to [`super::MAX_ANSWER_BYTES`] (16 MiB), counted with
//! [`guest_bytes`]. The answers as the client sent them were parsed before
//! they got here: how large those may be is the protocol layer's bound.

use base64::Engine as _;
use serde_json::{Map, Value};

use super::form::Form;
use super::requests::Expected;
use crate::bindings::client;
use crate::bindings::types::Role;
use crate::schema::OverBudget;

/// Roots one answer may list.
pub const MAX_ROOTS: usize = 1_000;

/// The longest root URI or name, in bytes.
pub const MAX_ROOT_TEXT: usize = 4 * 1024;

/// The largest sampled text, or decoded image or audio, in bytes.
pub const MAX_SAMPLED_BYTES: usize = 4 << 20;

/// The longest model name or stop reason, in bytes.
const MAX_LABEL: usize = 256;

/// The largest accepted form content, as JSON text: a form is a few
/// primitive fields, and the text is copied into the plugin's memory.
pub const MAX_FORM_CONTENT: usize = 64 * 1024;

/// Checks `answer`, the client's answer to the request `key`, against what
/// the request `expected`; checking a form's content takes at most `budget`
/// work units.
pub fn convert(
    key: &str,
    expected: &Expected,
    answer: Map<String, Value>,
    budget: u64,
) -> Result<client::InputResponse, String> {
    let converted = match expected {
        Expected::Form(form) => elicitation(answer, Some(form), budget),
        Expected::Url => elicitation(answer, None, budget),
        Expected::Sample => sampled(answer).map(client::InputResponse::Sampling),
        Expected::Roots => roots(answer).map(client::InputResponse::Roots),
    };
    converted.map_err(|err| format!("the answer to `{key}` {err}"))
}

fn elicitation(
    mut answer: Map<String, Value>,
    form: Option<&Form>,
    budget: u64,
) -> Result<client::InputResponse, String> {
    let action = answer.get("action").and_then(Value::as_str);
    let answer = match action {
        Some("decline") => client::ElicitationAnswer::Decline,
        Some("cancel") => client::ElicitationAnswer::Cancel,
        Some("accept") => match form {
            // URL mode: nothing passes through the client but consent.
            None => client::ElicitationAnswer::Accept("{}".into()),
            Some(form) => {
                let content = answer
                    .remove("content")
                    .unwrap_or_else(|| Value::Object(Map::new()));
                // Measured first: checking costs work units per value, not
                // per byte, so one long string would pass for cheap.
                let text = json_within(&content, MAX_FORM_CONTENT)
                    .ok_or("has `content` longer than 64 KiB as JSON")?;
                check_content(&content, form, budget)?;
                client::ElicitationAnswer::Accept(text)
            }
        },
        _ => return Err("has no `action` of \"accept\", \"decline\" or \"cancel\"".into()),
    };
    Ok(client::InputResponse::Elicitation(answer))
}

/// `value` as JSON text, or `None` when that is longer than `max` bytes
/// (serializing stops there).
fn json_within(value: &Value, max: usize) -> Option<String> {
    struct Capped(Vec<u8>, usize);
    impl std::io::Write for Capped {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.0.len() + bytes.len() > self.1 {
                return Err(std::io::ErrorKind::FileTooLarge.into());
            }
            self.0.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut capped = Capped(Vec::new(), max);
    serde_json::to_writer(&mut capped, value).ok()?;
    String::from_utf8(capped.0).ok()
}

/// The bytes of text and data `response` hands the plugin.
pub fn guest_bytes(response: &client::InputResponse) -> usize {
    match response {
        client::InputResponse::Elicitation(client::ElicitationAnswer::Accept(text)) => text.len(),
        client::InputResponse::Elicitation(_) => 0,
        client::InputResponse::Sampling(sampled) => {
            let content = match &sampled.content {
                client::SamplingContent::Text(text) => text.len(),
                client::SamplingContent::Image(media) | client::SamplingContent::Audio(media) => {
                    media.data.len() + media.mime_type.len()
                }
            };
            content + sampled.model.len() + sampled.stop_reason.as_ref().map_or(0, String::len)
        }
        client::InputResponse::Roots(roots) => roots
            .iter()
            .map(|root| root.uri.len() + root.name.as_ref().map_or(0, String::len))
            .sum(),
    }
}

/// An accepted form's content: an object of the requested properties only,
/// valid against the requested schema.
fn check_content(content: &Value, form: &Form, budget: u64) -> Result<(), String> {
    let fields = content
        .as_object()
        .ok_or("has `content` that is not an object")?;
    if let Some(extra) = fields.keys().find(|k| !form.properties.contains(*k)) {
        return Err(format!(
            "has `{}`, which the requested schema does not ask for",
            extra.chars().take(64).collect::<String>()
        ));
    }
    let cost = form
        .compiled
        .cost(content, budget)
        .map_err(|OverBudget| "would take more than the validation budget to check")?;
    form.compiled
        .check(content, cost)
        .map_err(|violations| format!("does not match the requested schema:\n{violations}"))
}

fn sampled(answer: Map<String, Value>) -> Result<client::Sampled, String> {
    let role = match answer.get("role").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        _ => return Err("has no `role` of \"user\" or \"assistant\"".into()),
    };
    // MCP 2025-11-25 allows an array of content blocks; one is what the
    // contract carries.
    let content = match answer.get("content") {
        Some(Value::Array(items)) if items.len() == 1 => &items[0],
        Some(content @ Value::Object(_)) => content,
        _ => return Err("has no `content`: one text, image or audio block".into()),
    };
    let content = sampling_content(content)?;
    let model = label(&answer, "model")?.ok_or("has no `model`")?;
    let stop_reason = label(&answer, "stopReason")?;
    Ok(client::Sampled {
        role,
        content,
        model,
        stop_reason,
    })
}

fn sampling_content(content: &Value) -> Result<client::SamplingContent, String> {
    let field = |key: &str| content.get(key).and_then(Value::as_str);
    match field("type") {
        Some("text") => {
            let text = field("text").ok_or("has a text block without `text`")?;
            if text.len() > MAX_SAMPLED_BYTES {
                return Err("has a text longer than 4 MiB".into());
            }
            Ok(client::SamplingContent::Text(text.to_owned()))
        }
        Some(kind @ ("image" | "audio")) => {
            let data =
                field("data").ok_or_else(|| format!("has an {kind} block without `data`"))?;
            if data.len() / 4 * 3 > MAX_SAMPLED_BYTES {
                return Err(format!("has an {kind} larger than 4 MiB"));
            }
            let data = base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|_| format!("has an {kind} whose `data` is not base64"))?;
            let mime_type = field("mimeType")
                .filter(|m| m.len() <= MAX_LABEL)
                .ok_or_else(|| format!("has an {kind} block without a `mimeType`"))?
                .to_owned();
            let media = client::Media { data, mime_type };
            Ok(if kind == "image" {
                client::SamplingContent::Image(media)
            } else {
                client::SamplingContent::Audio(media)
            })
        }
        _ => Err("has content that is not a text, image or audio block".into()),
    }
}

/// An optional short string field.
fn label(answer: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match answer.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() <= MAX_LABEL => Ok(Some(s.clone())),
        Some(_) => Err(format!(
            "has a `{key}` that is not a string of at most {MAX_LABEL} bytes"
        )),
    }
}

fn roots(answer: Map<String, Value>) -> Result<Vec<client::Root>, String> {
    let roots = answer
        .get("roots")
        .and_then(Value::as_array)
        .ok_or("has no `roots` array")?;
    if roots.len() > MAX_ROOTS {
        return Err(format!("lists more than {MAX_ROOTS} roots"));
    }
    roots
        .iter()
        .map(|root| {
            let text = |key: &str| match root.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.len() <= MAX_ROOT_TEXT => Ok(Some(s.clone())),
                Some(_) => Err(format!(
                    "has a root whose `{key}` is not a string of at most 4 KiB"
                )),
            };
            Ok(client::Root {
                uri: text("uri")?.ok_or("has a root without `uri`")?,
                name: text("name")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn form() -> Expected {
        let schema = r#"{"type":"object","properties":{"name":{"type":"string","minLength":2},"n":{"type":"integer"}},"required":["name"]}"#;
        Expected::Form(super::super::form::check(schema).unwrap())
    }

    #[test]
    fn accepted_forms_must_match_the_schema() {
        let ok = convert(
            "k",
            &form(),
            map(json!({"action": "accept", "content": {"name": "Al"}})),
            10_000,
        );
        assert!(
            matches!(ok, Ok(client::InputResponse::Elicitation(client::ElicitationAnswer::Accept(text))) if text == r#"{"name":"Al"}"#)
        );
        let short = convert(
            "k",
            &form(),
            map(json!({"action": "accept", "content": {"name": "A"}})),
            10_000,
        );
        assert!(
            short
                .unwrap_err()
                .contains("does not match the requested schema")
        );
        let missing = convert("k", &form(), map(json!({"action": "accept"})), 10_000);
        assert!(missing.unwrap_err().contains("does not match"));
        let extra = convert(
            "k",
            &form(),
            map(json!({"action": "accept", "content": {"name": "Al", "x": 1}})),
            10_000,
        );
        assert!(extra.unwrap_err().contains("has `x`"));
        // One long string costs one work unit: its size is bounded apart.
        let long = convert(
            "k",
            &form(),
            map(json!({"action": "accept", "content": {"name": "a".repeat(MAX_FORM_CONTENT)}})),
            10_000,
        );
        assert!(long.unwrap_err().contains("longer than 64 KiB"));
        let declined = convert("k", &form(), map(json!({"action": "decline"})), 10_000);
        assert!(matches!(
            declined,
            Ok(client::InputResponse::Elicitation(
                client::ElicitationAnswer::Decline
            ))
        ));
        let bad = convert("k", &form(), map(json!({"action": "maybe"})), 10_000);
        assert!(
            bad.unwrap_err()
                .starts_with("the answer to `k` has no `action`")
        );
    }

    #[test]
    fn sampling_and_roots_answers() {
        let answer = map(
            json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}], "model": "m", "stopReason": "endTurn"}),
        );
        let Ok(client::InputResponse::Sampling(sampled)) =
            convert("s", &Expected::Sample, answer, 0)
        else {
            panic!("sampling answer refused")
        };
        assert!(matches!(sampled.content, client::SamplingContent::Text(t) if t == "hi"));
        assert_eq!(sampled.stop_reason.as_deref(), Some("endTurn"));
        let no_model = map(json!({"role": "assistant", "content": {"type": "text", "text": "hi"}}));
        assert!(convert("s", &Expected::Sample, no_model, 0).is_err());
        let roots = map(json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}));
        let Ok(client::InputResponse::Roots(roots)) = convert("r", &Expected::Roots, roots, 0)
        else {
            panic!("roots refused")
        };
        assert_eq!(roots[0].name.as_deref(), Some("Test Root"));
        assert!(convert("r", &Expected::Roots, map(json!({"roots": [{}]})), 0).is_err());
    }
}
