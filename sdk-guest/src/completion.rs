//! Completion: suggested values for a prompt's arguments and a resource
//! template's variables, as the user types them.

use std::borrow::Cow;
use std::collections::BTreeMap;

/// At most this many values are sent (the MCP bound).
pub const MAX_COMPLETIONS: usize = 100;

/// A completion function, as [`Prompt::complete`](crate::Prompt::complete)
/// and [`ResourceTemplate::complete`](crate::ResourceTemplate::complete)
/// store it.
pub(crate) type Completer = Box<dyn Fn(&str, &BTreeMap<String, String>) -> Completions>;

/// Suggested values: a list of strings (`Vec<String>` or `Vec<&str>`
/// converts into it), with how many there are in all when more than
/// `values` exist.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completions {
    /// The suggestions, best first; at most 100 are sent.
    pub values: Vec<String>,
    /// How many there are in all, if known.
    pub total: Option<u32>,
    /// There are more than `values`.
    pub has_more: bool,
}

impl Completions {
    /// `values`, cut to 100 with `has_more` (and `total`, if not set)
    /// saying so.
    pub(crate) fn bounded(mut self) -> Self {
        if self.values.len() > MAX_COMPLETIONS {
            let all = self.values.len();
            self.values.truncate(MAX_COMPLETIONS);
            self.has_more = true;
            self.total = self.total.or(u32::try_from(all).ok());
        }
        self
    }
}

impl From<Vec<String>> for Completions {
    fn from(values: Vec<String>) -> Self {
        Completions {
            values,
            total: None,
            has_more: false,
        }
    }
}

impl From<Vec<&str>> for Completions {
    fn from(values: Vec<&str>) -> Self {
        values
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
            .into()
    }
}

/// The `candidates` that start with what was typed, `typed`, ignoring
/// ASCII case, in their order: the usual completion of a fixed set.
///
/// ```
/// let values = corral_sdk::complete_prefix(["intro", "install", "usage"], "In");
/// assert_eq!(values, ["intro", "install"]);
/// ```
pub fn complete_prefix<I, S>(candidates: I, typed: &str) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let typed = typed.to_ascii_lowercase();
    candidates
        .into_iter()
        .filter(|candidate| candidate.as_ref().to_ascii_lowercase().starts_with(&typed))
        .map(|candidate| candidate.as_ref().to_string())
        .collect()
}

/// Runs the completer of `name` among `completers` (empty values when none).
pub(crate) fn run(
    completers: &[(Cow<'static, str>, Completer)],
    name: &str,
    value: &str,
    context: &BTreeMap<String, String>,
) -> Completions {
    crate::client::start_call();
    crate::state::start_call();
    completers
        .iter()
        .find(|(argument, _)| argument == name)
        .map(|(_, complete)| complete(value, context).bounded())
        .unwrap_or_default()
}
