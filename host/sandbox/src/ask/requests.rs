//! A plugin's requests, checked and turned into the MCP params the client
//! receives.
//!
//! Everything is checked before anything is sent: a malformed ask is the
//! plugin's bug (`ask-error::invalid`), and the client should never see
//! it. Sizes are bounded so that one call cannot make the host hold, nor
//! the client receive, more than [`MAX_ASK_BYTES`] of requests at a time.

use std::collections::BTreeSet;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use corral_tool::{InputKind, InputRequest};

use super::form::{self, Form};
use crate::bindings::client;
use crate::bindings::types::Role;
use crate::units::human_bytes;

/// Requests in one ask.
pub const MAX_REQUESTS: usize = 16;

/// Bytes of one request (its text and media, base64 counted), as sent.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// Bytes of all the requests of one ask.
pub const MAX_ASK_BYTES: usize = 256 * 1024;

/// The longest key.
pub const MAX_KEY: usize = 64;

/// What an answer will be checked against: the kind of its request, and
/// for a form the schema.
pub enum Expected {
    Form(Form),
    Url,
    Sample,
    Roots,
}

/// Checks `requests` and builds their MCP params; on failure, the message
/// for `ask-error::invalid`.
pub fn build(
    requests: Vec<client::InputRequest>,
) -> Result<(Vec<InputRequest>, Vec<Expected>), String> {
    match requests.len() {
        0 => return Err("an ask needs at least one request".into()),
        n if n > MAX_REQUESTS => {
            return Err(format!(
                "an ask has at most {MAX_REQUESTS} requests, not {n}"
            ));
        }
        _ => {}
    }
    // The plugin's bytes are already in the host (lifted from its memory);
    // this bounds what is built from them, base64 and JSON included.
    let mut total = 0usize;
    for request in &requests {
        let size = raw_size(&request.request);
        if size > MAX_REQUEST_BYTES {
            return Err(format!(
                "request `{}` is {}; a request is at most {}",
                printable(&request.key),
                human_bytes(size),
                human_bytes(MAX_REQUEST_BYTES)
            ));
        }
        total += size;
    }
    if total > MAX_ASK_BYTES {
        return Err(format!(
            "the requests are {} in all; an ask is at most {}",
            human_bytes(total),
            human_bytes(MAX_ASK_BYTES)
        ));
    }
    let mut keys = BTreeSet::new();
    let mut built = Vec::with_capacity(requests.len());
    let mut expected = Vec::with_capacity(requests.len());
    for client::InputRequest { key, request } in requests {
        check_key(&key)?;
        if !keys.insert(key.clone()) {
            return Err(format!("two requests have the key `{key}`"));
        }
        let (kind, params, expects) =
            params(request).map_err(|err| format!("request `{key}`: {err}"))?;
        built.push(InputRequest { key, kind, params });
        expected.push(expects);
    }
    Ok((built, expected))
}

/// 1-64 characters of `[A-Za-z0-9_.-]`: the rule of `input-request.key`
/// in wit/plugin.wit, which the guest SDK checks too (its own copy, in
/// sdk-guest/src/client/questions.rs: a guest cannot depend on the host).
fn check_key(key: &str) -> Result<(), String> {
    let valid = (1..=MAX_KEY).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "the key `{}` is not 1-{MAX_KEY} characters of [A-Za-z0-9_.-]",
            printable(key)
        ))
    }
}

/// A key fit for a message: at most 64 characters, controls escaped.
fn printable(key: &str) -> String {
    key.chars()
        .take(MAX_KEY)
        .flat_map(char::escape_debug)
        .collect()
}

/// The request's size once sent: its text, its media in base64, and a
/// little for the JSON around each piece.
fn raw_size(request: &client::Request) -> usize {
    const FIELD: usize = 32;
    match request {
        client::Request::ElicitForm(form) => {
            form.message.len() + form.requested_schema.len() + FIELD
        }
        client::Request::ElicitUrl(url) => {
            url.message.len() + url.url.len() + url.elicitation_id.len() + FIELD
        }
        client::Request::Sample(sample) => {
            let messages: usize = sample
                .messages
                .iter()
                .map(|m| {
                    FIELD
                        + match &m.content {
                            client::SamplingContent::Text(text) => text.len(),
                            client::SamplingContent::Image(media)
                            | client::SamplingContent::Audio(media) => {
                                media.data.len().div_ceil(3) * 4 + media.mime_type.len()
                            }
                        }
                })
                .sum();
            let hints: usize = sample
                .model_preferences
                .iter()
                .flat_map(|p| &p.hints)
                .map(|h| h.len() + FIELD)
                .sum();
            let stops: usize = sample.stop_sequences.iter().map(|s| s.len() + FIELD).sum();
            messages + hints + stops + sample.system_prompt.as_ref().map_or(0, String::len) + FIELD
        }
        client::Request::ListRoots => FIELD,
    }
}

fn params(request: client::Request) -> Result<(InputKind, Map<String, Value>, Expected), String> {
    match request {
        client::Request::ElicitForm(request) => {
            let form = form::check(&request.requested_schema)?;
            let params = json!({
                "mode": "form",
                "message": request.message,
                "requestedSchema": form.schema,
            });
            Ok((InputKind::ElicitForm, object(params), Expected::Form(form)))
        }
        client::Request::ElicitUrl(request) => {
            check_url(&request.url)?;
            if request.elicitation_id.is_empty() {
                return Err("the elicitation id is empty".into());
            }
            let params = json!({
                "mode": "url",
                "message": request.message,
                "url": request.url,
                "elicitationId": request.elicitation_id,
            });
            Ok((InputKind::ElicitUrl, object(params), Expected::Url))
        }
        client::Request::Sample(request) => {
            Ok((InputKind::Sample, sampling(request)?, Expected::Sample))
        }
        client::Request::ListRoots => Ok((InputKind::ListRoots, Map::new(), Expected::Roots)),
    }
}

/// An absolute `http:` or `https:` URL with a host, and no spaces or
/// control characters.
fn check_url(url: &str) -> Result<(), String> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &url[8..]
    } else if lower.starts_with("http://") {
        &url[7..]
    } else {
        return Err("the URL must be an http: or https: URL".into());
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the URL must be an absolute http(s) URL with a host and no spaces".into());
    }
    Ok(())
}

fn sampling(request: client::SamplingRequest) -> Result<Map<String, Value>, String> {
    if request.messages.is_empty() {
        return Err("a sampling request needs at least one message".into());
    }
    if request.max_tokens == 0 {
        return Err("`max-tokens` must be positive".into());
    }
    let base64 = base64::engine::general_purpose::STANDARD;
    let messages: Vec<Value> = request
        .messages
        .into_iter()
        .map(|message| {
            let content = match message.content {
                client::SamplingContent::Text(text) => json!({"type": "text", "text": text}),
                client::SamplingContent::Image(media) => json!({
                    "type": "image", "data": base64.encode(&media.data), "mimeType": media.mime_type,
                }),
                client::SamplingContent::Audio(media) => json!({
                    "type": "audio", "data": base64.encode(&media.data), "mimeType": media.mime_type,
                }),
            };
            json!({"role": role(message.role), "content": content})
        })
        .collect();
    let mut params = Map::new();
    params.insert("messages".into(), Value::Array(messages));
    params.insert("maxTokens".into(), request.max_tokens.into());
    if let Some(prompt) = request.system_prompt {
        params.insert("systemPrompt".into(), prompt.into());
    }
    if let Some(temperature) = request.temperature {
        params.insert("temperature".into(), finite(temperature, "temperature")?);
    }
    if !request.stop_sequences.is_empty() {
        params.insert("stopSequences".into(), request.stop_sequences.into());
    }
    if let Some(preferences) = request.model_preferences {
        let mut object = Map::new();
        let hints: Vec<Value> = preferences
            .hints
            .into_iter()
            .map(|name| json!({"name": name}))
            .collect();
        object.insert("hints".into(), hints.into());
        for (key, priority) in [
            ("costPriority", preferences.cost_priority),
            ("speedPriority", preferences.speed_priority),
            ("intelligencePriority", preferences.intelligence_priority),
        ] {
            if let Some(priority) = priority {
                if !(0.0..=1.0).contains(&priority) {
                    return Err(format!("`{key}` must be between 0 and 1"));
                }
                object.insert(key.into(), finite(priority, key)?);
            }
        }
        params.insert("modelPreferences".into(), object.into());
    }
    if let Some(context) = request.include_context {
        let context = match context {
            client::IncludeContext::None => "none",
            client::IncludeContext::ThisServer => "thisServer",
            client::IncludeContext::AllServers => "allServers",
        };
        params.insert("includeContext".into(), context.into());
    }
    Ok(params)
}

fn finite(value: f64, key: &str) -> Result<Value, String> {
    serde_json::Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| format!("`{key}` must be a finite number"))
}

pub fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("built as an object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use client::{FormElicitation, Request, SamplingContent, SamplingMessage, SamplingRequest};

    fn form(key: &str, schema: &str) -> client::InputRequest {
        client::InputRequest {
            key: key.into(),
            request: Request::ElicitForm(FormElicitation {
                message: "?".into(),
                requested_schema: schema.into(),
            }),
        }
    }

    const NAME: &str = r#"{"type":"object","properties":{"name":{"type":"string"}}}"#;

    #[test]
    fn keys_are_checked_and_unique() {
        assert!(build(vec![form("user_name", NAME)]).is_ok());
        let err = build(vec![form("a b", NAME)]).err().unwrap();
        assert!(err.contains("[A-Za-z0-9_.-]"), "{err}");
        let err = build(vec![form("a", NAME), form("a", NAME)]).err().unwrap();
        assert!(err.contains("two requests have the key `a`"), "{err}");
        let err = build(vec![]).err().unwrap();
        assert!(err.contains("at least one"), "{err}");
        let many = (0..17).map(|i| form(&format!("k{i}"), NAME)).collect();
        assert!(build(many).err().unwrap().contains("at most 16"));
    }

    #[test]
    fn sizes_are_bounded() {
        let big = format!(
            r#"{{"type":"object","properties":{{"a":{{"type":"string","description":"{}"}}}}}}"#,
            "x".repeat(MAX_REQUEST_BYTES)
        );
        assert!(
            build(vec![form("a", &big)])
                .err()
                .unwrap()
                .contains("a request is at most")
        );
        let medium = format!(
            r#"{{"type":"object","properties":{{"a":{{"type":"string","description":"{}"}}}}}}"#,
            "x".repeat(MAX_REQUEST_BYTES / 2)
        );
        let many = (0..9).map(|i| form(&format!("k{i}"), &medium)).collect();
        assert!(build(many).err().unwrap().contains("an ask is at most"));
    }

    #[test]
    fn sampling_params_are_mcps() {
        let request = client::InputRequest {
            key: "s".into(),
            request: Request::Sample(SamplingRequest {
                messages: vec![SamplingMessage {
                    role: Role::User,
                    content: SamplingContent::Text("hi".into()),
                }],
                system_prompt: None,
                max_tokens: 100,
                temperature: Some(0.5),
                stop_sequences: vec![],
                model_preferences: Some(client::ModelPreferences {
                    hints: vec!["claude".into()],
                    cost_priority: None,
                    speed_priority: Some(1.0),
                    intelligence_priority: None,
                }),
                include_context: Some(client::IncludeContext::ThisServer),
            }),
        };
        let (built, _) = build(vec![request]).unwrap();
        assert_eq!(built[0].kind, InputKind::Sample);
        assert_eq!(
            Value::Object(built[0].params.clone()),
            json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 100,
                "temperature": 0.5,
                "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 1.0},
                "includeContext": "thisServer",
            })
        );
    }

    #[test]
    fn urls_must_be_http() {
        assert!(check_url("https://example.com/login?x=1").is_ok());
        assert!(check_url("HTTP://example.com").is_ok());
        assert!(check_url("javascript:alert(1)").is_err());
        assert!(check_url("https:///path").is_err());
        assert!(check_url("https://exa mple.com").is_err());
    }
}
