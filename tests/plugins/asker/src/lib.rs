//! A plugin that asks its client for input in every way the contract
//! allows, to prove the host's side of `client`: each tool returns what it
//! was answered (or the error) as text. Written against the raw bindings
//! (no SDK) to exercise the contract itself.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

use corral::plugin::client::{
    self, AskError, ElicitationAnswer, FormElicitation, InputRequest, InputResponse, Request,
    SamplingContent, SamplingMessage, SamplingRequest, UrlElicitation,
};
use corral::plugin::types::{Content, Role, TextContent};
use exports::corral::plugin::tools::{CallResult, Guest, Tool};

const NO_ARGS: &str = r#"{"type":"object","additionalProperties":false}"#;
const NAME_FORM: &str = r#"{"type":"object","properties":{"name":{"type":"string","minLength":2,"default":"Ann"}},"required":["name"]}"#;

struct Asker;

fn tool(name: &str) -> Tool {
    Tool {
        name: name.into(),
        title: None,
        description: Some(format!("Test fixture tool {name}")),
        input_schema: NO_ARGS.into(),
        output_schema: None,
        annotations: None,
        icons: vec![],
        task_support: None,
    }
}

fn text(text: String) -> CallResult {
    CallResult {
        content: vec![Content::Text(TextContent {
            text,
            annotations: None,
        })],
        structured_content: None,
        is_error: false,
    }
}

fn form(key: &str, schema: &str) -> InputRequest {
    InputRequest {
        key: key.into(),
        request: Request::ElicitForm(FormElicitation {
            message: "What is your name?".into(),
            requested_schema: schema.into(),
        }),
    }
}

fn error(err: &AskError) -> String {
    match err {
        AskError::Undeclared(capability) => format!("undeclared: {capability}"),
        AskError::Failed(message) => format!("failed: {message}"),
        AskError::TimedOut => "timed-out".into(),
        AskError::Invalid(message) => format!("invalid: {message}"),
    }
}

fn response(response: &InputResponse) -> String {
    match response {
        InputResponse::Elicitation(ElicitationAnswer::Accept(content)) => {
            format!("accept {content}")
        }
        InputResponse::Elicitation(ElicitationAnswer::Decline) => "decline".into(),
        InputResponse::Elicitation(ElicitationAnswer::Cancel) => "cancel".into(),
        InputResponse::Sampling(sampled) => {
            let content = match &sampled.content {
                SamplingContent::Text(text) => text.clone(),
                SamplingContent::Image(media) | SamplingContent::Audio(media) => {
                    format!("{} bytes of {}", media.data.len(), media.mime_type)
                }
            };
            format!("sampled {content} by {}", sampled.model)
        }
        InputResponse::Roots(roots) => {
            let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
            format!("roots {}", uris.join(" "))
        }
    }
}

/// Asks `requests` and describes the outcome: one line per answer, or the error.
fn ask(requests: Vec<InputRequest>) -> String {
    match client::ask(&requests) {
        Ok(responses) => responses
            .iter()
            .map(response)
            .collect::<Vec<_>>()
            .join("\n"),
        Err(err) => error(&err),
    }
}

/// Burns CPU for about `millis` of wall-clock time.
fn spin(millis: u64) -> u64 {
    let start = std::time::Instant::now();
    let mut x = 0u64;
    while start.elapsed().as_millis() < u128::from(millis) {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
    x
}

impl Guest for Asker {
    fn list() -> Vec<Tool> {
        [
            "elicit",
            "several",
            "twice",
            "invalid_schema",
            "capabilities",
            "url",
            "spin_wait_spin",
            "too_many_asks",
            "five_samples",
        ]
        .into_iter()
        .map(tool)
        .collect()
    }

    fn call(name: String, _arguments: String) -> CallResult {
        match name.as_str() {
            "elicit" => text(ask(vec![form("user_name", NAME_FORM)])),
            "several" => text(ask(vec![
                form("user_name", NAME_FORM),
                InputRequest {
                    key: "sample".into(),
                    request: Request::Sample(SamplingRequest {
                        messages: vec![SamplingMessage {
                            role: Role::User,
                            content: SamplingContent::Text("Say hi".into()),
                        }],
                        system_prompt: Some("Be brief".into()),
                        max_tokens: 100,
                        temperature: None,
                        stop_sequences: vec![],
                        model_preferences: None,
                        include_context: None,
                    }),
                },
                InputRequest {
                    key: "roots".into(),
                    request: Request::ListRoots,
                },
            ])),
            // Five requests whose answers may each be large.
            "five_samples" => text(ask((0..5)
                .map(|i| InputRequest {
                    key: format!("s{i}"),
                    request: Request::Sample(SamplingRequest {
                        messages: vec![SamplingMessage {
                            role: Role::User,
                            content: SamplingContent::Text("Say a lot".into()),
                        }],
                        system_prompt: None,
                        max_tokens: 1_000_000,
                        temperature: None,
                        stop_sequences: vec![],
                        model_preferences: None,
                        include_context: None,
                    }),
                })
                .collect())),
            "twice" => {
                let first = ask(vec![form("first", NAME_FORM)]);
                let second = ask(vec![form("second", NAME_FORM)]);
                text(format!("{first}\n{second}"))
            }
            "invalid_schema" => text(ask(vec![form(
                "bad",
                r#"{"type":"object","properties":{"nested":{"type":"object"}}}"#,
            )])),
            "capabilities" => {
                let caps = client::capabilities();
                text(format!(
                    "form={} url={} sampling={} roots={}",
                    caps.elicitation_form, caps.elicitation_url, caps.sampling, caps.roots
                ))
            }
            "url" => text(ask(vec![InputRequest {
                key: "login".into(),
                request: Request::ElicitUrl(UrlElicitation {
                    message: "Log in".into(),
                    url: "https://example.com/login".into(),
                    elicitation_id: "e-1".into(),
                }),
            }])),
            // Computes, waits for the client, computes again: each compute
            // phase fits the timeout, the whole call does not.
            "spin_wait_spin" => {
                let a = spin(150);
                let answer = ask(vec![form("user_name", NAME_FORM)]);
                let b = spin(150);
                text(format!("{answer}\nspun {}", a ^ b != 1))
            }
            "too_many_asks" => {
                let mut last = String::new();
                for i in 0..40 {
                    last = ask(vec![form(&format!("k{i}"), NAME_FORM)]);
                    if last.starts_with("invalid") {
                        return text(format!("ask {}: {last}", i + 1));
                    }
                }
                text(last)
            }
            other => text(format!("no tool {other}")),
        }
    }
}

export!(Asker);
