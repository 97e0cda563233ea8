//! Prompts: conversations a user picks from the client, filled in from
//! arguments (MCP `prompts/*`).

use std::collections::BTreeMap;

use crate::{Content, Icon, Role};

/// A prompt as served to clients, after validation.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptDef {
    /// The name clients get it by (the tools' collision rule applies).
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
    pub icons: Vec<Icon>,
    /// As [`crate::ToolDef::held_bytes`], for `prompts/list`.
    pub held_bytes: usize,
}

impl PromptDef {
    /// What is wrong with `arguments` for this prompt, if anything: the
    /// first required argument missing, else the first one it does not
    /// declare. The protocol checks a request with it, and the sandbox
    /// again what it passes its plugin (the contract's promise).
    pub fn argument_problem<'a, V>(
        &'a self,
        arguments: &'a BTreeMap<String, V>,
    ) -> Option<ArgumentProblem<'a>> {
        if let Some(missing) = self
            .arguments
            .iter()
            .find(|argument| argument.required && !arguments.contains_key(&argument.name))
        {
            return Some(ArgumentProblem::Missing(&missing.name));
        }
        arguments
            .keys()
            .find(|name| !self.arguments.iter().any(|a| &a.name == *name))
            .map(|name| ArgumentProblem::Undeclared(name))
    }
}

/// Why arguments do not fit a prompt (see [`PromptDef::argument_problem`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentProblem<'a> {
    /// This required argument is missing.
    Missing(&'a str),
    /// The prompt declares no argument of this name.
    Undeclared(&'a str),
}

/// One argument of a prompt (its value is a string).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptArgument {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// One message of a prompt's conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    pub role: Role,
    pub content: Content,
}

/// What `prompts/get` returns (MCP `GetPromptResult`).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptOutput {
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
}

/// Why `prompts/get` has no messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    /// No prompt is served by that name (invalid params); the text says
    /// which names are close.
    Unknown(String),
    /// The arguments do not fit the prompt: a required one is missing, one
    /// is not declared, or the plugin refused them (invalid params).
    InvalidArguments(String),
    /// The plugin failed (it said so, trapped, or hit a limit): an
    /// internal error whose text says why.
    Failed(String),
}

impl std::fmt::Display for PromptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PromptError::Unknown(message)
            | PromptError::InvalidArguments(message)
            | PromptError::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for PromptError {}
