//! Asking the client while a tool runs: the user (elicitation), the
//! client's model (sampling) and the client's roots.
//!
//! ```rust,no_run
//! use corral_sdk::client::{self, Elicitation};
//! use corral_sdk::{NoArgs, ToolError};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Branch {
//!     /// The branch to delete
//!     name: String,
//! }
//!
//! fn delete_branch(_: NoArgs) -> Result<String, ToolError> {
//!     let branch = match client::elicit::<Branch>("Which branch should I delete?")? {
//!         Elicitation::Accepted(branch) => branch,
//!         Elicitation::Declined | Elicitation::Cancelled => return Ok("Nothing deleted.".into()),
//!     };
//!     if !client::confirm(format!("Delete branch {}? This cannot be undone.", branch.name))? {
//!         return Ok("Nothing deleted.".into());
//!     }
//!     // Only now, with every answer in hand, act.
//!     Ok(format!("Deleted {}.", branch.name))
//! }
//! ```
//!
//! # Ask before you act: a call may be run again
//!
//! Clients of MCP 2026-07-28 are stateless: when a tool asks something, the
//! host does not keep the running instance waiting. It answers the client
//! "input required" with the requests, and when the client calls again with
//! the answers, the host runs the tool **again from the start**, answering
//! each ask from the answers so far, in order, until the tool asks something
//! new or finishes. (Older clients are asked while the call waits, and the
//! tool runs once; a tool cannot tell the two apart and need not.) So:
//!
//! - **ask before you act**: do nothing with an effect outside the call
//!   (write, delete, send, pay) until every question is answered, or it
//!   happens once per round;
//! - **ask the same things in the same order** given the same arguments and
//!   answers: the host checks each re-run's requests against the ones it
//!   answered and fails the call if they differ. Don't put the time, a
//!   random number or anything else that changes between runs into a
//!   question.
//! - ask several things at once with [`ask`] when they don't depend on each
//!   other: each ask is a round trip to the user.
//!
//! # Keys
//!
//! Every request has a key, unique within one ask, which clients of
//! 2026-07-28 see as its name in `inputRequests`. The SDK numbers requests
//! in the order a call makes them (`elicit-1`, `elicit-2`, `sample-1`,
//! `url-1`, `roots-1`): stable from one run to the next, as the rules above
//! require. Name a request yourself with `.key("user_name")` when a client
//! or a test expects a particular key.
//!
//! # Capabilities
//!
//! A client declares what it can answer; asking anything else fails with
//! [`AskError::Undeclared`] (and a client of 2026-07-28 gets an error
//! instead of a result). Check [`capabilities`] first when a tool can do
//! without the answer, e.g. go ahead without confirmation when the arguments
//! say so explicitly, or explain in its result what it needs.
//!
//! # Unit tests
//!
//! On native targets (`cargo test`) the requests go to a fake client that
//! tests set with [`fake::set`]; without one, the client declares nothing
//! and every ask fails with [`AskError::Undeclared`].

mod form;
mod questions;
mod transport;

#[cfg(not(target_arch = "wasm32"))]
pub mod fake;

use std::fmt;

pub use questions::{
    Confirm, Form, IncludeContext, ListRoots, OpenUrl, Questions, Sampled, Sampling,
    SamplingContent,
};

use crate::result::ToolError;

/// What the client of the current call declared it can answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// Form-mode elicitation: the user fills in fields ([`elicit`], [`confirm`]).
    pub elicitation_form: bool,
    /// URL-mode elicitation: the user visits a URL ([`open_url`]).
    pub elicitation_url: bool,
    /// Sampling: the client's model completes a conversation ([`sample`]).
    pub sampling: bool,
    /// The client lists its roots ([`roots`]).
    pub roots: bool,
}

impl Capabilities {
    /// Every capability: a client that can answer anything.
    pub const ALL: Self = Self {
        elicitation_form: true,
        elicitation_url: true,
        sampling: true,
        roots: true,
    };

    /// No capability: a client that can answer nothing.
    pub const NONE: Self = Self {
        elicitation_form: false,
        elicitation_url: false,
        sampling: false,
        roots: false,
    };
}

/// What the client of the current call can answer.
///
/// On native targets: what the [`fake`] client declares ([`Capabilities::NONE`]
/// when no fake is set).
pub fn capabilities() -> Capabilities {
    transport::capabilities()
}

/// Why an ask brought no answers.
///
/// It converts into [`ToolError`], so `?` in a tool returning
/// `Result<_, ToolError>` ends the call with a message the model can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskError {
    /// The client did not declare a capability a request needs: names it,
    /// `"elicitation"`, `"elicitation.url"`, `"sampling"` or `"roots"`.
    Undeclared(String),
    /// The client answered with an error, or with an answer that breaks the
    /// protocol, the requested schema or a size bound; or it cannot be
    /// asked (any more): it is gone, too many requests wait for it, or too
    /// many calls of this plugin wait for their clients. The text says which.
    Failed(String),
    /// No answer in time: the call has waited for its client as long as the
    /// plugin's `input-wait` limit allows, in all its asks together.
    TimedOut,
    /// The requests themselves are malformed: a type no form can hold, an
    /// invalid key, too many or too large requests.
    Invalid(String),
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::Undeclared(capability) => write!(
                f,
                "the client cannot be asked: it did not declare the `{capability}` capability"
            ),
            AskError::Failed(message) => write!(f, "the client's answer failed: {message}"),
            AskError::TimedOut => f.write_str("the client did not answer in time"),
            AskError::Invalid(message) => write!(f, "invalid request to the client: {message}"),
        }
    }
}

impl std::error::Error for AskError {}

impl From<AskError> for ToolError {
    fn from(error: AskError) -> Self {
        ToolError::new(error)
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user filled in the form (or agreed to visit the URL).
    Accepted(T),
    /// The user declined explicitly.
    Declined,
    /// The user dismissed the request without choosing.
    Cancelled,
}

impl<T> Elicitation<T> {
    /// The answer, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accepted(value) => Some(value),
            Elicitation::Declined | Elicitation::Cancelled => None,
        }
    }

    /// True if the user accepted.
    pub fn is_accepted(&self) -> bool {
        matches!(self, Elicitation::Accepted(_))
    }

    /// Maps an accepted answer.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Elicitation<U> {
        match self {
            Elicitation::Accepted(value) => Elicitation::Accepted(f(value)),
            Elicitation::Declined => Elicitation::Declined,
            Elicitation::Cancelled => Elicitation::Cancelled,
        }
    }
}

/// A root the client works in: a directory or another resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// A `file://` URI in practice.
    pub uri: String,
    /// A name for display.
    pub name: Option<String>,
}

impl Root {
    /// A root at `uri`, unnamed.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
        }
    }

    /// Names the root.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Asks the user to fill in a form that `T` deserializes from, and waits.
///
/// The form is `T`'s JSON Schema, flattened into what MCP elicitation
/// allows: a struct whose fields are strings, numbers, integers, booleans,
/// unit-variant enums (single choices) or `Vec`s of them (multiple
/// choices); `Option` fields are optional, doc comments become the fields'
/// descriptions, and `#[serde(default)]` / `#[schemars(default = ...)]`
/// values are offered as defaults. Anything else fails with
/// [`AskError::Invalid`] naming the field. For a schema by hand, use
/// [`Form::with_schema`] with [`ask`].
pub fn elicit<T>(message: impl Into<String>) -> Result<Elicitation<T>, AskError>
where
    T: schemars::JsonSchema + serde::de::DeserializeOwned,
{
    ask(Form::<T>::new(message))
}

/// Asks the user a yes-or-no question and waits: true only if the user
/// accepted and ticked yes. Declining or dismissing the question is a no.
pub fn confirm(message: impl Into<String>) -> Result<bool, AskError> {
    ask(Confirm::new(message))
}

/// Asks the user to visit `url` (to sign in, to pay, to grant access): the
/// answer says whether the user agreed to go, not what happened there, and
/// nothing the user enters there passes through the client.
pub fn open_url(
    message: impl Into<String>,
    url: impl Into<String>,
) -> Result<Elicitation<()>, AskError> {
    ask(OpenUrl::new(message, url))
}

/// Asks the client's model to continue a conversation and waits for its
/// reply.
///
/// ```rust,no_run
/// use corral_sdk::client::{self, Sampling};
/// let reply = client::sample(
///     Sampling::prompt("Summarise in one line: ...")
///         .system("You are terse.")
///         .max_tokens(60),
/// )?;
/// println!("{} said {:?}", reply.model, reply.text());
/// # Ok::<(), corral_sdk::client::AskError>(())
/// ```
pub fn sample(request: Sampling) -> Result<Sampled, AskError> {
    ask(request)
}

/// Lists the client's roots (the directories or resources it works in).
pub fn roots() -> Result<Vec<Root>, AskError> {
    ask(ListRoots::new())
}

/// Asks several things in one round and waits for every answer.
///
/// `questions` is one request ([`Form`], [`Confirm`], [`OpenUrl`],
/// [`Sampling`], [`ListRoots`]), a tuple of up to eight, or a `Vec` of one
/// kind; the answers come back in the same shape, typed.
///
/// ```rust,no_run
/// use corral_sdk::client::{self, Form, ListRoots, Sampling};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Name {
///     name: String,
/// }
///
/// let (name, greeting, roots) = client::ask((
///     Form::<Name>::new("What is your name?").key("user_name"),
///     Sampling::prompt("Generate a greeting").max_tokens(50).key("greeting"),
///     ListRoots::new().key("client_roots"),
/// ))?;
/// # Ok::<(), corral_sdk::client::AskError>(())
/// ```
pub fn ask<Q: Questions>(questions: Q) -> Result<Q::Answers, AskError> {
    questions::ask(questions)
}

/// Starts a new call: the automatic keys count from 1 again. Called by
/// [`Tool::call`](crate::Tool::call) so that every run of a call numbers
/// its requests alike.
pub(crate) fn start_call() {
    questions::reset_keys();
}
