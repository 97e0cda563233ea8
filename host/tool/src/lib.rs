//! What a tool, a resource, a prompt and a completion are and what calling
//! them returns, independent of both the wire protocol and WebAssembly, and
//! the [`ToolHost`] port between the two.
//!
//! The sandbox (`corral-sandbox`) produces these from validated plugin
//! output; the protocol (`corral-mcp`) shapes them into JSON for the
//! negotiated revision and serves whatever implements [`ToolHost`]; the
//! `corral` crate plugs one into the other.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};

pub mod client;
pub mod completion;
pub mod header_param;
pub mod principal;
pub mod prompt;
pub mod resource;
pub mod secret_page;
pub mod task;

pub use client::{
    Answers, AskError, AskFuture, CallContext, Client, ClientCapabilities, InputKind, InputRequest,
};
pub use completion::{
    CompleteError, CompletionRef, CompletionRequest, Completions, MAX_COMPLETION_VALUES,
};
pub use principal::{Principal, Scopes, Target, same_secret};
pub use prompt::{
    ArgumentProblem, PromptArgument, PromptDef, PromptError, PromptMessage, PromptOutput,
};
pub use resource::{ReadError, ResourceDef, ResourceItem, ResourceTemplateDef};
pub use secret_page::{OwnSecretSaved, SecretPage};
pub use task::{
    MemoryTaskStore, StoreFuture, TASKS_EXTENSION, TaskPolicy, TaskRecord, TaskStatus, TaskStore,
    TaskStoreError,
};

/// A tool as served to clients, after validation.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// The name clients call it by (see the catalog's collision rule).
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// A JSON Schema object describing the arguments.
    pub input_schema: Value,
    /// A JSON Schema object describing `structuredContent`, if the tool has one.
    pub output_schema: Option<Value>,
    pub annotations: Option<ToolAnnotations>,
    pub icons: Vec<Icon>,
    /// What the tool declares; `None`: the server decides (a call of a
    /// client that can take a task may become one, see [`TaskPolicy`]).
    pub task_support: Option<TaskSupport>,
    /// When its calls become tasks, and how long those are kept.
    pub task: TaskPolicy,
    /// Bytes of host memory one copy of this definition takes (its schemas
    /// as JSON values, its text): what each `tools/list` answer that carries
    /// it costs, counted against the answer's budget.
    pub held_bytes: usize,
}

/// Behaviour hints (MCP `ToolAnnotations`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolAnnotations {
    pub title: Option<String>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

/// An icon for display (MCP `Icon`).
#[derive(Debug, Clone, PartialEq)]
pub struct Icon {
    pub src: String,
    pub mime_type: Option<String>,
    pub sizes: Vec<String>,
    pub theme: Option<String>,
}

/// Whether a tool supports task-augmented execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSupport {
    Forbidden,
    Optional,
    Required,
}

impl TaskSupport {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// The outcome of a tool call (MCP `CallToolResult`).
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    pub content: Vec<Content>,
    /// Any JSON value (2026-07-28 allows every kind; older revisions get
    /// an object only), already validated against the tool's output schema
    /// when it has one. The protocol layer adds it as JSON text only to a
    /// result without a text item of its own (see
    /// [`CallOutput::with_structured_as_text`] for a plugin that wants it
    /// always).
    pub structured: Option<Value>,
    /// A tool execution error: the content tells the model what went wrong.
    pub is_error: bool,
    /// The error is the host's, not the tool's: the call hit a limit or
    /// crashed. A task whose call ends so is `failed`, not `completed`.
    pub failed: bool,
}

impl CallOutput {
    /// A tool execution error with one text item.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            structured: None,
            is_error: true,
            failed: false,
        }
    }

    /// A tool execution error of the host's (see [`CallOutput::failed`]).
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            failed: true,
            ..Self::error(message)
        }
    }

    /// Whether a text item is among the content: text the tool wrote for
    /// the model and for clients that cannot read `structuredContent`.
    pub fn has_text(&self) -> bool {
        self.content
            .iter()
            .any(|item| matches!(item, Content::Text { .. }))
    }

    /// The result with its structured content also as a last text item of
    /// JSON, unless a text item already holds that JSON (spaced any way):
    /// what a plugin gets whose manifest asks for the JSON text beside its
    /// own (`[results] mirror-structured`), where the protocol layer adds
    /// it only to a result with no text at all. A result without
    /// structured content is returned as it is.
    pub fn with_structured_as_text(mut self) -> Self {
        if let Some(structured) = &self.structured
            && !self.holds_as_text(structured)
        {
            let text = structured.to_string();
            self.content.push(Content::text(text));
        }
        self
    }

    /// Whether a text item of the content is `structured` as JSON text.
    /// Text that is not JSON fails at its first characters; text that is
    /// costs one parse, within the plugin's output limit.
    fn holds_as_text(&self, structured: &Value) -> bool {
        self.content.iter().any(|item| match item {
            Content::Text { text, .. } => {
                serde_json::from_str::<Value>(text).is_ok_and(|value| value == *structured)
            }
            _ => false,
        })
    }
}

/// Who content is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// Content annotations (MCP `Annotations`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Annotations {
    pub audience: Vec<Role>,
    pub priority: Option<f64>,
    pub last_modified: Option<String>,
}

/// One item of a result's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text {
        text: String,
        annotations: Option<Annotations>,
    },
    Image {
        data: Vec<u8>,
        mime_type: String,
        annotations: Option<Annotations>,
    },
    Audio {
        data: Vec<u8>,
        mime_type: String,
        annotations: Option<Annotations>,
    },
    ResourceLink {
        uri: String,
        name: String,
        title: Option<String>,
        description: Option<String>,
        mime_type: Option<String>,
        size: Option<u64>,
        annotations: Option<Annotations>,
    },
    Resource {
        uri: String,
        mime_type: Option<String>,
        contents: ResourceContents,
        annotations: Option<Annotations>,
    },
}

impl Content {
    /// Plain text content without annotations.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text {
            text: text.into(),
            annotations: None,
        }
    }
}

/// The body of an embedded resource.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceContents {
    Text(String),
    Blob(Vec<u8>),
}

/// Log severity, as in RFC 5424 and MCP logging; ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    pub fn parse(level: &str) -> Option<LogLevel> {
        Self::ALL.into_iter().find(|l| l.as_str() == level)
    }
}

/// Something a plugin reports while a call runs.
#[derive(Debug, Clone, PartialEq)]
pub enum CallEvent {
    Log {
        level: LogLevel,
        message: String,
    },
    Progress {
        done: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// The out-of-band interaction of the call's URL-mode elicitation `id`
    /// is over (the user entered what the page asked): MCP 2025-11-25's
    /// `notifications/elicitation/complete`, told only to the call's client.
    ElicitationComplete {
        id: String,
    },
}

/// Where a running call's events go. The protocol layer decides what reaches
/// the client (progress only with a progress token, logs only at the client's
/// level); the plugin layer has already logged them to stderr.
pub type EventSink = Arc<dyn Fn(CallEvent) + Send + Sync>;

/// The named tool does not exist (a JSON-RPC `-32602` error, unlike every
/// other call problem, which is a tool execution error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownTool;

impl std::fmt::Display for UnknownTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("unknown tool")
    }
}

impl std::error::Error for UnknownTool {}

/// A plugin file of the served folder that failed to load, and why: told
/// to a client that calls a tool it does not know (the tool may be that
/// plugin's) and to its log when it connects, since the failure happened
/// before any client could ask for log messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotLoaded {
    /// The file's name, as `notes.wasm` (never its folder's path).
    pub file: String,
    /// Why it failed, cut to [`NOT_LOADED_REASON_CHARS`].
    pub reason: String,
    /// An earlier version of the file loaded and still serves.
    pub previous_serves: bool,
}

/// The most characters of a [`NotLoaded`] reason kept (the whole reason is
/// on the server's stderr).
pub const NOT_LOADED_REASON_CHARS: usize = 300;

impl NotLoaded {
    /// `reason` cut to [`NOT_LOADED_REASON_CHARS`], with `…` where it was cut.
    pub fn new(file: String, reason: &str, previous_serves: bool) -> Self {
        let mut kept: String = reason.chars().take(NOT_LOADED_REASON_CHARS).collect();
        if kept.len() < reason.len() {
            kept.push('…');
        }
        NotLoaded {
            file,
            reason: kept,
            previous_serves,
        }
    }
}

/// The plugins that failed to load, a line each with why (`  notes.wasm:
/// reason`), for an unknown tool's error and the log: at most five, then
/// how many more.
pub fn not_loaded_lines(failed: &[NotLoaded]) -> String {
    const SHOWN: usize = 5;
    let mut lines: Vec<String> = failed
        .iter()
        .take(SHOWN)
        .map(|failure| {
            let serving = if failure.previous_serves {
                " (its previous version still serves)"
            } else {
                ""
            };
            format!("  {}{serving}: {}", failure.file, failure.reason)
        })
        .collect();
    if failed.len() > SHOWN {
        lines.push(format!("  and {} more", failed.len() - SHOWN));
    }
    lines.join("\n")
}

/// What follows an unknown tool's name and hint in its error when some
/// plugins failed to load: which, and why. Empty when none did.
pub fn unknown_tool_not_loaded(failed: &[NotLoaded]) -> String {
    if failed.is_empty() {
        return String::new();
    }
    format!(
        "; it may be one of the {} plugin(s) that failed to load:\n{}",
        failed.len(),
        not_loaded_lines(failed)
    )
}

/// What the server offers besides tools: the capabilities it declares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offers {
    /// Some resource or resource template is served.
    pub resources: bool,
    /// Some prompt is served.
    pub prompts: bool,
    /// Some plugin that serves a prompt or a template completes their
    /// arguments.
    pub completions: bool,
}

/// What the protocol layer needs from the rest of the server: its tools,
/// resources, prompts and completion. Everything but tools has a default
/// of "none", so that a host of tools alone implements only those.
pub trait ToolHost: Send + Sync + 'static {
    /// The tools to list, in a deterministic order.
    fn tools(&self) -> Arc<[ToolDef]>;

    /// Runs a tool. Problems with the call itself (bad arguments, limits,
    /// traps) are tool execution errors inside the output. The tool's
    /// events go to `context.events`; it may ask `context.client` for input.
    fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> impl Future<Output = Result<CallOutput, UnknownTool>> + Send;

    /// Resolves once the first tool list is known (and with it the
    /// resources, prompts and what is offered). Every request that lists,
    /// calls, reads, gets or completes waits for it, so that no client sees
    /// an empty list while the server is still starting, and so do
    /// `initialize` and `server/discover`, whose capabilities depend on
    /// [`ToolHost::offers`]; only `ping` does not.
    fn ready(&self) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }

    /// The resources to list, in a deterministic order.
    fn resources(&self) -> Arc<[ResourceDef]> {
        Arc::new([])
    }

    /// The resource templates to list, in a deterministic order.
    fn resource_templates(&self) -> Arc<[ResourceTemplateDef]> {
        Arc::new([])
    }

    /// The prompts to list, in a deterministic order.
    fn prompts(&self) -> Arc<[PromptDef]> {
        Arc::new([])
    }

    /// What is offered besides tools, for the capabilities to declare.
    fn offers(&self) -> Offers {
        Offers {
            resources: !self.resources().is_empty() || !self.resource_templates().is_empty(),
            prompts: !self.prompts().is_empty(),
            completions: false,
        }
    }

    /// Reads the resource at `uri`. Its plugin's events go to
    /// `context.events`; it may ask `context.client` for input.
    fn read_resource(
        &self,
        uri: &str,
        context: CallContext,
    ) -> impl Future<Output = Result<Vec<ResourceItem>, ReadError>> + Send {
        let _ = (uri, context);
        std::future::ready(Err(ReadError::NotFound))
    }

    /// The messages of prompt `name` for `arguments`. Its plugin's events
    /// go to `context.events`; it may ask `context.client` for input.
    fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        context: CallContext,
    ) -> impl Future<Output = Result<PromptOutput, PromptError>> + Send {
        let _ = (arguments, context);
        std::future::ready(Err(PromptError::Unknown(format!(
            "unknown prompt `{name}`"
        ))))
    }

    /// Suggestions for `request`; at most [`MAX_COMPLETION_VALUES`].
    fn complete(
        &self,
        request: CompletionRequest,
        context: CallContext,
    ) -> impl Future<Output = Result<Completions, CompleteError>> + Send {
        let _ = context;
        std::future::ready(Err(CompleteError::UnknownReference(format!(
            "nothing to complete for {:?}",
            request.reference
        ))))
    }

    /// The plugin files that failed to load and are not served as they
    /// are now, in a deterministic order.
    fn not_loaded(&self) -> Arc<[NotLoaded]> {
        Arc::new([])
    }

    /// The scopes a caller's token must grant to see or reach `target`
    /// over authorized HTTP (see [`Principal`]). Empty, the default: any
    /// caller signed in. Not consulted without authorization.
    fn required_scopes(&self, target: Target<'_>) -> Scopes {
        let _ = target;
        Scopes::default()
    }

    /// What a session passes on to its client while it runs: list changes,
    /// updated resources and server log messages. `None`: nothing changes.
    fn subscribe(&self) -> Option<HostEvents> {
        None
    }
}

/// One session's subscription to a [`ToolHost`]'s events.
#[derive(Debug)]
pub struct HostEvents {
    /// Marked changed each time the tool list visibly changes (several
    /// changes before the session looks may count as one).
    pub tools_changed: watch::Receiver<u64>,
    /// As `tools_changed`, for the resources and resource templates.
    pub resources_changed: watch::Receiver<u64>,
    /// As `tools_changed`, for the prompts.
    pub prompts_changed: watch::Receiver<u64>,
    /// The URI of each resource whose contents changed (a plugin said
    /// `host.resource-updated`), for the sessions subscribed to it.
    pub resource_updated: broadcast::Receiver<String>,
    /// Messages for the client's log, such as a plugin that failed to reload.
    pub logs: broadcast::Receiver<HostLog>,
}

/// A server log message for clients (`notifications/message`).
#[derive(Debug, Clone, PartialEq)]
pub struct HostLog {
    pub level: LogLevel,
    /// The MCP `logger` field, naming what the message is about.
    pub logger: String,
    pub message: String,
}

/// Served tool names close to `name`, best first, at most `most`: for an
/// unknown tool's error, so that a model or an author that used a
/// plugin's own name (`convert`, served as `units_convert` beside another
/// plugin's `convert`) or mistyped one learns the right name. A name
/// matches when it ends with `_name` or starts with `name_` (the collision
/// rule's prefix), equals it but for case, or is within two edits of it.
/// Cheap for any list: a name over 128 bytes is not compared at all, a
/// candidate whose length differs by more than two is skipped, and the
/// edit distance stops at the first row past the bound.
pub fn close_names<'a>(
    name: &str,
    served: impl IntoIterator<Item = &'a str>,
    most: usize,
) -> Vec<&'a str> {
    const MAX_EDITS: usize = 2;
    if name.is_empty() || name.len() > 128 {
        return Vec::new();
    }
    let mut close: Vec<(usize, &str)> = served
        .into_iter()
        .filter_map(|candidate| {
            let prefixed = candidate
                .strip_suffix(name)
                .is_some_and(|head| head.ends_with('_'))
                || candidate
                    .strip_prefix(name)
                    .is_some_and(|tail| tail.starts_with('_'));
            if prefixed || candidate.eq_ignore_ascii_case(name) {
                return Some((0, candidate));
            }
            edits_within(name, candidate, MAX_EDITS).map(|edits| (edits, candidate))
        })
        .collect();
    close.sort();
    close.into_iter().take(most).map(|(_, name)| name).collect()
}

/// What follows "unknown tool `name`" in its error: when several plugins
/// offer a tool called `name`, so that each is served with its plugin's
/// name in front, all of those names (at most 20) and why; otherwise the
/// served names closest to it (at most 3), or nothing.
pub fn unknown_tool_hint<'a>(name: &str, served: impl IntoIterator<Item = &'a str>) -> String {
    unknown_name_hint("tool", name, served)
}

/// [`unknown_tool_hint`] for names of any `kind` ("tool", "prompt"): both
/// follow the same collision rule.
pub fn unknown_name_hint<'a>(
    kind: &str,
    name: &str,
    served: impl IntoIterator<Item = &'a str>,
) -> String {
    const MOST_RENAMED: usize = 20;
    let served: Vec<&str> = served.into_iter().collect();
    let renamed: Vec<&str> = if name.is_empty() || name.len() > 128 {
        Vec::new()
    } else {
        served
            .iter()
            .copied()
            .filter(|candidate| {
                candidate
                    .strip_suffix(name)
                    .is_some_and(|head| head.len() > 1 && head.ends_with('_'))
            })
            .collect()
    };
    if renamed.len() > 1 {
        let mut renamed = renamed;
        renamed.sort_unstable();
        let count = renamed.len();
        renamed.truncate(MOST_RENAMED);
        let more = match count - renamed.len() {
            0 => String::new(),
            more => format!(" and {more} more"),
        };
        return format!(
            " ({count} plugins offer a {kind} `{name}`, so each is served with its plugin's name in front: `{}`{more})",
            renamed.join("`, `")
        );
    }
    match close_names(name, served, 3).as_slice() {
        [] => String::new(),
        close => format!(" (did you mean `{}`?)", close.join("`, `")),
    }
}

/// The Levenshtein distance between `a` and `b` (bytes), if at most `max`.
fn edits_within(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > max || a.len() > 128 || b.len() > 128 {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, &x) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(x != y);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        if current.iter().all(|&edits| edits > max) {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    Some(previous[b.len()]).filter(|&edits| edits <= max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_find_prefixed_and_mistyped_names() {
        let served = [
            "units_convert",
            "calc_convert",
            "add",
            "sha256_hash",
            "Echo",
        ];
        assert_eq!(
            close_names("convert", served, 3),
            ["calc_convert", "units_convert"]
        );
        assert_eq!(close_names("ad", served, 3), ["add"]);
        assert_eq!(close_names("echo", served, 3), ["Echo"]);
        assert_eq!(close_names("sha265_hash", served, 3), ["sha256_hash"]);
        assert!(close_names("weather", served, 3).is_empty());
        assert_eq!(close_names("convert", served, 1), ["calc_convert"]);
    }

    #[test]
    fn an_unknown_name_several_plugins_offer_lists_them_all_and_why() {
        let served = ["rs_convert", "py_convert", "js_convert", "c_convert", "add"];
        assert_eq!(
            unknown_tool_hint("convert", served),
            " (4 plugins offer a tool `convert`, so each is served with its plugin's name in front: `c_convert`, `js_convert`, `py_convert`, `rs_convert`)"
        );
        assert_eq!(unknown_tool_hint("ad", served), " (did you mean `add`?)");
        assert_eq!(
            unknown_name_hint("prompt", "convert", ["a_convert", "b_convert"]),
            " (2 plugins offer a prompt `convert`, so each is served with its plugin's name in front: `a_convert`, `b_convert`)"
        );
        assert_eq!(unknown_tool_hint("weather", served), "");
        let many: Vec<String> = (0..25).map(|i| format!("p{i:02}_convert")).collect();
        let hint = unknown_tool_hint("convert", many.iter().map(String::as_str));
        assert!(
            hint.starts_with(" (25 plugins offer a tool `convert`")
                && hint.ends_with("`p19_convert` and 5 more)"),
            "{hint}"
        );
    }

    fn output(content: Vec<Content>, structured: Option<Value>) -> CallOutput {
        CallOutput {
            content,
            structured,
            is_error: false,
            failed: false,
        }
    }

    #[test]
    fn structured_content_as_text_follows_prose_but_never_repeats_its_json() {
        let n = serde_json::json!({ "n": 1 });
        let prose = output(vec![Content::text("n is 1")], Some(n.clone()));
        assert!(prose.has_text());
        assert_eq!(
            prose.with_structured_as_text().content,
            [Content::text("n is 1"), Content::text("{\"n\":1}")]
        );
        // The same JSON spaced otherwise is already there: nothing added.
        let spaced = output(vec![Content::text("{ \"n\": 1 }")], Some(n.clone()));
        assert_eq!(spaced.clone().with_structured_as_text(), spaced);
        // No text at all: the JSON is the only text.
        let bare = output(vec![], Some(n));
        assert!(!bare.has_text());
        assert_eq!(
            bare.with_structured_as_text().content,
            [Content::text("{\"n\":1}")]
        );
        // Nothing structured: nothing to add.
        let plain = output(vec![Content::text("hi")], None);
        assert_eq!(plain.clone().with_structured_as_text(), plain);
    }

    /// A plugin's load error may be as long as it likes: a client is told
    /// 300 characters of each, of five files at most.
    #[test]
    fn what_a_client_is_told_of_failed_plugins_is_bounded() {
        let long = "é".repeat(1000);
        let cut = NotLoaded::new("big.wasm".into(), &long, false);
        assert_eq!(cut.reason.chars().count(), NOT_LOADED_REASON_CHARS + 1);
        assert!(cut.reason.ends_with('…'));
        let short = NotLoaded::new("a.wasm".into(), "not a component", true);
        assert_eq!(short.reason, "not a component");

        let mut failed = vec![short.clone()];
        failed.extend((0..6).map(|i| NotLoaded::new(format!("p{i}.wasm"), "bad", false)));
        let lines = not_loaded_lines(&failed);
        assert_eq!(
            lines,
            "  a.wasm (its previous version still serves): not a component\n  \
             p0.wasm: bad\n  p1.wasm: bad\n  p2.wasm: bad\n  p3.wasm: bad\n  and 2 more"
        );
        assert_eq!(unknown_tool_not_loaded(&[]), "");
        assert_eq!(
            unknown_tool_not_loaded(&[short]),
            "; it may be one of the 1 plugin(s) that failed to load:\n  \
             a.wasm (its previous version still serves): not a component"
        );
    }
}
