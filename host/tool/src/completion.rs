//! Completion: suggested values for a prompt's arguments and a resource
//! template's variables (MCP `completion/complete`).

use std::collections::BTreeMap;

/// The most values one answer carries (the spec's bound).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// An argument of the prompt served under this name.
    Prompt(String),
    /// A variable of the resource template with this exact `uriTemplate`.
    ResourceTemplate(String),
}

/// One `completion/complete` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    pub reference: CompletionRef,
    /// The argument or variable being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// The other arguments already chosen.
    pub context: BTreeMap<String, String>,
}

/// Suggestions (MCP `CompleteResult.completion`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completions {
    /// At most [`MAX_COMPLETION_VALUES`].
    pub values: Vec<String>,
    pub total: Option<u64>,
    pub has_more: bool,
}

/// Why `completion/complete` has no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompleteError {
    /// The reference names no served prompt or template, or no argument of
    /// it (invalid params); the text says which.
    UnknownReference(String),
    /// The plugin failed: an internal error whose text says why.
    Failed(String),
}

impl std::fmt::Display for CompleteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompleteError::UnknownReference(message) | CompleteError::Failed(message) => {
                f.write_str(message)
            }
        }
    }
}

impl std::error::Error for CompleteError {}
