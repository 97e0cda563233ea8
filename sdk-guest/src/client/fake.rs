//! A fake client for unit tests (native targets only): it declares what a
//! test says and answers each request from a queue of answers by key.
//!
//! ```
//! use corral_sdk::client::{self, fake, Capabilities, Elicitation};
//!
//! fake::set(
//!     fake::FakeClient::new()
//!         .answer("elicit-1", fake::Answer::accept(serde_json::json!({"confirm": true}))),
//! );
//! assert!(client::confirm("Go ahead?").unwrap());
//! assert_eq!(fake::asked()[0].method, "elicitation/create");
//!
//! // A client that declares nothing: what a tool's fallback sees.
//! fake::set(fake::FakeClient::new().capabilities(Capabilities::NONE));
//! assert!(matches!(client::confirm("Go ahead?"), Err(client::AskError::Undeclared(_))));
//! ```
//!
//! The fake is per thread (Rust runs each test in its own thread), and
//! [`set`] starts the automatic keys from 1, as a new call does.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value, json};

use super::{AskError, Capabilities, Root};
use crate::bindings::corral::plugin::client as wit;

/// What a [`FakeClient`] answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The user accepted a form with these fields (a JSON object), or a URL.
    Accept(Value),
    /// The user declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
    /// The model replied with text.
    Sampled {
        /// The reply.
        text: String,
        /// The model that replied.
        model: String,
    },
    /// The client's roots.
    Roots(Vec<Root>),
}

impl Answer {
    /// Accepts a form with `fields`, e.g. `json!({"name": "Alice"})`.
    pub fn accept(fields: Value) -> Self {
        Answer::Accept(fields)
    }

    /// Declines.
    pub fn decline() -> Self {
        Answer::Decline
    }

    /// Dismisses.
    pub fn cancel() -> Self {
        Answer::Cancel
    }

    /// A model's text reply, from `fake-model`.
    pub fn text(text: impl Into<String>) -> Self {
        Answer::Sampled {
            text: text.into(),
            model: "fake-model".into(),
        }
    }

    /// The client's roots.
    pub fn roots(roots: impl IntoIterator<Item = Root>) -> Self {
        Answer::Roots(roots.into_iter().collect())
    }
}

/// A client for tests: what it declares, and its answers by key.
#[derive(Debug, Clone)]
pub struct FakeClient {
    capabilities: Capabilities,
    answers: HashMap<String, VecDeque<Answer>>,
    error: Option<AskError>,
}

impl Default for FakeClient {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeClient {
    /// A client that declares every capability and has no answers yet.
    pub fn new() -> Self {
        Self {
            capabilities: Capabilities::ALL,
            answers: HashMap::new(),
            error: None,
        }
    }

    /// Sets what the client declares; asking anything else fails with
    /// [`AskError::Undeclared`], as with a real client.
    pub fn capabilities(mut self, capabilities: Capabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Queues `answer` for the next request with `key`. Answers for one key
    /// are used in the order they were queued, one per request. A request
    /// with no answer left fails the ask with [`AskError::Failed`].
    pub fn answer(mut self, key: impl Into<String>, answer: Answer) -> Self {
        self.answers
            .entry(key.into())
            .or_default()
            .push_back(answer);
        self
    }

    /// Makes every ask fail with `error` (e.g. [`AskError::TimedOut`]).
    pub fn fail(mut self, error: AskError) -> Self {
        self.error = Some(error);
        self
    }
}

/// One request a tool made of the fake client, as the MCP request it
/// becomes.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The request's key.
    pub key: String,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: &'static str,
    /// The MCP params, e.g. `{"message", "requestedSchema"}` of a form.
    pub params: Value,
}

#[derive(Default)]
struct State {
    client: Option<FakeClient>,
    asked: Vec<Asked>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Installs `client` for this thread, forgets what was asked before, and
/// starts the automatic keys from 1.
pub fn set(client: FakeClient) {
    STATE.with(|state| {
        *state.borrow_mut() = State {
            client: Some(client),
            asked: Vec::new(),
        }
    });
    super::start_call();
}

/// Removes the fake: the client declares nothing again.
pub fn clear() {
    STATE.with(|state| *state.borrow_mut() = State::default());
}

/// Every request asked since [`set`], in order.
pub fn asked() -> Vec<Asked> {
    STATE.with(|state| state.borrow().asked.clone())
}

pub(super) fn capabilities() -> Capabilities {
    STATE.with(|state| {
        state
            .borrow()
            .client
            .as_ref()
            .map_or(Capabilities::NONE, |client| client.capabilities)
    })
}

pub(super) fn ask(requests: Vec<wit::InputRequest>) -> Result<Vec<wit::InputResponse>, AskError> {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        let declared = state
            .client
            .as_ref()
            .map_or(Capabilities::NONE, |client| client.capabilities);
        // The host checks capabilities before it asks anything.
        for request in &requests {
            if let Some(capability) = undeclared(&request.request, declared) {
                return Err(AskError::Undeclared(capability.into()));
            }
        }
        for request in &requests {
            let (method, params) = mcp(&request.request);
            state.asked.push(Asked {
                key: request.key.clone(),
                method,
                params,
            });
        }
        let Some(client) = state.client.as_mut() else {
            unreachable!("no capability is declared without a client");
        };
        if let Some(error) = &client.error {
            return Err(error.clone());
        }
        requests
            .iter()
            .map(|request| {
                let answer = client
                    .answers
                    .get_mut(&request.key)
                    .and_then(VecDeque::pop_front)
                    .ok_or_else(|| {
                        AskError::Failed(format!(
                            "the fake client has no answer left for `{}`",
                            request.key
                        ))
                    })?;
                to_wit(answer, &request.key)
            })
            .collect()
    })
}

fn undeclared(request: &wit::Request, declared: Capabilities) -> Option<&'static str> {
    match request {
        wit::Request::ElicitForm(_) if !declared.elicitation_form => Some("elicitation"),
        wit::Request::ElicitUrl(_) if !declared.elicitation_url => Some("elicitation.url"),
        wit::Request::Sample(_) if !declared.sampling => Some("sampling"),
        wit::Request::ListRoots if !declared.roots => Some("roots"),
        _ => None,
    }
}

fn to_wit(answer: Answer, key: &str) -> Result<wit::InputResponse, AskError> {
    Ok(match answer {
        Answer::Accept(fields) if fields.is_object() => {
            wit::InputResponse::Elicitation(wit::ElicitationAnswer::Accept(fields.to_string()))
        }
        Answer::Accept(_) => {
            return Err(AskError::Failed(format!(
                "the fake answer for `{key}` accepts with fields that are not an object"
            )));
        }
        Answer::Decline => wit::InputResponse::Elicitation(wit::ElicitationAnswer::Decline),
        Answer::Cancel => wit::InputResponse::Elicitation(wit::ElicitationAnswer::Cancel),
        Answer::Sampled { text, model } => wit::InputResponse::Sampling(wit::Sampled {
            role: wit::Role::Assistant,
            content: wit::SamplingContent::Text(text),
            model,
            stop_reason: Some("endTurn".into()),
        }),
        Answer::Roots(roots) => wit::InputResponse::Roots(
            roots
                .into_iter()
                .map(|root| wit::Root {
                    uri: root.uri,
                    name: root.name,
                })
                .collect(),
        ),
    })
}

/// The MCP method and params a request becomes (as the host builds them).
fn mcp(request: &wit::Request) -> (&'static str, Value) {
    match request {
        wit::Request::ElicitForm(form) => {
            let schema = serde_json::from_str::<Value>(&form.requested_schema)
                .unwrap_or_else(|_| Value::String(form.requested_schema.clone()));
            (
                "elicitation/create",
                json!({"mode": "form", "message": form.message, "requestedSchema": schema}),
            )
        }
        wit::Request::ElicitUrl(url) => (
            "elicitation/create",
            json!({"mode": "url", "message": url.message, "url": url.url,
                   "elicitationId": url.elicitation_id}),
        ),
        wit::Request::Sample(sampling) => ("sampling/createMessage", sampling_params(sampling)),
        wit::Request::ListRoots => ("roots/list", json!({})),
    }
}

fn sampling_params(sampling: &wit::SamplingRequest) -> Value {
    let role = |role: &wit::Role| match role {
        wit::Role::User => "user",
        wit::Role::Assistant => "assistant",
    };
    let content = |content: &wit::SamplingContent| match content {
        wit::SamplingContent::Text(text) => json!({"type": "text", "text": text}),
        wit::SamplingContent::Image(media) => {
            json!({"type": "image", "mimeType": media.mime_type, "bytes": media.data.len()})
        }
        wit::SamplingContent::Audio(media) => {
            json!({"type": "audio", "mimeType": media.mime_type, "bytes": media.data.len()})
        }
    };
    let messages: Vec<Value> = sampling
        .messages
        .iter()
        .map(|m| json!({"role": role(&m.role), "content": content(&m.content)}))
        .collect();
    let mut params = Map::new();
    params.insert("messages".into(), messages.into());
    params.insert("maxTokens".into(), sampling.max_tokens.into());
    if let Some(system) = &sampling.system_prompt {
        params.insert("systemPrompt".into(), system.clone().into());
    }
    if let Some(temperature) = sampling.temperature {
        params.insert("temperature".into(), temperature.into());
    }
    if !sampling.stop_sequences.is_empty() {
        params.insert(
            "stopSequences".into(),
            sampling.stop_sequences.clone().into(),
        );
    }
    if let Some(preferences) = &sampling.model_preferences {
        let hints: Vec<Value> = preferences
            .hints
            .iter()
            .map(|name| json!({"name": name}))
            .collect();
        let mut p = Map::new();
        p.insert("hints".into(), hints.into());
        for (key, value) in [
            ("costPriority", preferences.cost_priority),
            ("speedPriority", preferences.speed_priority),
            ("intelligencePriority", preferences.intelligence_priority),
        ] {
            if let Some(value) = value {
                p.insert(key.into(), value.into());
            }
        }
        params.insert("modelPreferences".into(), p.into());
    }
    if let Some(context) = &sampling.include_context {
        let context = match context {
            wit::IncludeContext::None => "none",
            wit::IncludeContext::ThisServer => "thisServer",
            wit::IncludeContext::AllServers => "allServers",
        };
        params.insert("includeContext".into(), context.into());
    }
    Value::Object(params)
}
