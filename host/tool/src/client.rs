//! What a running tool may ask of the client: the [`Client`] port.
//!
//! A tool asks the user to fill in fields or visit a URL (elicitation), the
//! client's model for a completion (sampling), or the client for its roots.
//! The requests and answers are MCP's own params and results as JSON: the
//! sandbox builds them from what a plugin asks and checks the answers before
//! the plugin sees them; the protocol layer carries them, in each protocol
//! era its own way (see `corral-mcp`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

/// What kind of request, which decides its MCP method and the client
/// capability it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// `elicitation/create` in form mode.
    ElicitForm,
    /// `elicitation/create` in URL mode.
    ElicitUrl,
    /// `sampling/createMessage`.
    Sample,
    /// `roots/list`.
    ListRoots,
}

impl InputKind {
    /// The MCP method of the request.
    pub fn method(self) -> &'static str {
        match self {
            InputKind::ElicitForm | InputKind::ElicitUrl => "elicitation/create",
            InputKind::Sample => "sampling/createMessage",
            InputKind::ListRoots => "roots/list",
        }
    }

    /// The client capability the request needs, as the plugin contract
    /// names it (`ask-error::undeclared`): "elicitation",
    /// "elicitation.url", "sampling" or "roots".
    pub fn capability(self) -> &'static str {
        match self {
            InputKind::ElicitForm => "elicitation",
            InputKind::ElicitUrl => "elicitation.url",
            InputKind::Sample => "sampling",
            InputKind::ListRoots => "roots",
        }
    }
}

/// One request of the client, as MCP defines the params of its method.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    /// The plugin's name for the request, unique within one ask: the key
    /// of `inputRequests` and `inputResponses` in the stateless era.
    pub key: String,
    pub kind: InputKind,
    /// The request's MCP params (for `elicitation/create`, with `mode`).
    pub params: Map<String, Value>,
}

/// What the client declared it can answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCapabilities {
    pub elicitation_form: bool,
    pub elicitation_url: bool,
    pub sampling: bool,
    pub roots: bool,
}

impl ClientCapabilities {
    /// Whether the client can answer a request of `kind`.
    pub fn allows(self, kind: InputKind) -> bool {
        match kind {
            InputKind::ElicitForm => self.elicitation_form,
            InputKind::ElicitUrl => self.elicitation_url,
            InputKind::Sample => self.sampling,
            InputKind::ListRoots => self.roots,
        }
    }

    /// Reads MCP `ClientCapabilities` (from `initialize`, or a stateless
    /// request's `_meta`). `elicitation: {}` alone means form mode (as
    /// before URL mode existed); `{"url": {}}` alone, URL mode only.
    pub fn from_json(capabilities: &Value) -> ClientCapabilities {
        let elicitation = capabilities.get("elicitation").filter(|e| e.is_object());
        let (form, url) = match elicitation {
            None => (false, false),
            Some(modes) => {
                let form = modes.get("form").is_some_and(Value::is_object);
                let url = modes.get("url").is_some_and(Value::is_object);
                (form || !url, url)
            }
        };
        ClientCapabilities {
            elicitation_form: form,
            elicitation_url: url,
            sampling: capabilities.get("sampling").is_some_and(Value::is_object),
            roots: capabilities.get("roots").is_some_and(Value::is_object),
        }
    }
}

/// Why an [`Client::ask`] brought no answers.
#[derive(Debug, Clone, PartialEq)]
pub enum AskError {
    /// The client did not declare the capability a request needs (its
    /// [`InputKind::capability`] name). Never sent to the client.
    Undeclared(&'static str),
    /// The client answered one of the requests with an error.
    Failed(String),
    /// The client is gone, or will never answer (it cannot receive
    /// requests): the tool gets a typed error and may go on without.
    Unavailable(String),
    /// The run must end here and now; the protocol layer answers for it
    /// (stateless era: `input_required` with the requests, or the error for
    /// an undeclared capability). The sandbox ends the run without letting
    /// the plugin see this.
    Suspended,
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::Undeclared(capability) => write!(
                f,
                "the client did not declare the `{capability}` capability"
            ),
            AskError::Failed(message) => write!(f, "the client answered with an error: {message}"),
            AskError::Unavailable(message) => f.write_str(message),
            AskError::Suspended => f.write_str("the call waits for the client's input"),
        }
    }
}

impl std::error::Error for AskError {}

/// The answers to one [`Client::ask`], in the order of its requests: each
/// the MCP result of its request's method.
pub type Answers = Vec<Map<String, Value>>;

/// A boxed future, as [`Client::ask`] returns.
pub type AskFuture<'a> = Pin<Box<dyn Future<Output = Result<Answers, AskError>> + Send + 'a>>;

/// The client of one call, as the protocol layer offers it to a tool.
pub trait Client: Send + Sync {
    /// What the client declared it can answer.
    fn capabilities(&self) -> ClientCapabilities;

    /// Asks every request at once and waits for every answer. The caller
    /// bounds the wait; dropping the future forgets the requests.
    fn ask(&self, requests: Vec<InputRequest>) -> AskFuture<'_>;

    /// Whether [`Client::ask`] resolves without waiting for anyone (the
    /// stateless era's client answers from what the request carries, or
    /// ends the run). Such a client holds no waiting slot of the plugin.
    fn answers_at_once(&self) -> bool {
        false
    }

    /// The keys of what the next [`Client::ask`] was asked before, when the
    /// client answers it from a record (the stateless era's retry: the
    /// rounds its state holds, then the round its answers are for). A run
    /// must ask again what it asked then, even what it no longer needs, or
    /// its later asks meet answers meant for other questions.
    fn replays_next(&self) -> Option<Vec<String>> {
        None
    }
}

/// What a call may use besides its arguments.
#[derive(Clone, Default)]
pub struct CallContext {
    /// Where the call's events go (`None`: nowhere).
    pub events: Option<crate::EventSink>,
    /// The client to ask for input (`None`: a caller that can answer
    /// nothing, such as `corral call`).
    pub client: Option<Arc<dyn Client>>,
    /// The call may become a task: it runs under its plugin's
    /// `task-timeout` instead of `timeout`.
    pub as_task: bool,
    /// Who is calling, over authorized HTTP; `None`: no authorization
    /// (stdio, or a server with one shared token).
    pub principal: Option<Arc<crate::Principal>>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("events", &self.events.is_some())
            .field("client", &self.client.as_ref().map(|c| c.capabilities()))
            .field("principal", &self.principal)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn elicitation_without_modes_means_form_mode() {
        let caps = ClientCapabilities::from_json(&json!({ "elicitation": {} }));
        assert!(caps.elicitation_form && !caps.elicitation_url);
        let caps = ClientCapabilities::from_json(&json!({ "elicitation": { "url": {} } }));
        assert!(!caps.elicitation_form && caps.elicitation_url);
        let caps =
            ClientCapabilities::from_json(&json!({ "elicitation": { "form": {}, "url": {} } }));
        assert!(caps.elicitation_form && caps.elicitation_url);
        let caps = ClientCapabilities::from_json(&json!({ "sampling": {}, "roots": {} }));
        assert_eq!(
            caps,
            ClientCapabilities {
                sampling: true,
                roots: true,
                ..Default::default()
            }
        );
        assert_eq!(
            ClientCapabilities::from_json(&json!({ "sampling": true })),
            ClientCapabilities::default()
        );
    }
}
