//! What each call of a plugin leaves behind for its operator: the audit
//! line (info level), the same figures as metrics (the `metrics` facade:
//! `corral_calls_total` and its siblings), and the call's span (tracing
//! target `corral_otel`). A call whose future is dropped before it ends (a
//! cancelled request) is counted as `cancelled` by its [`Underway`] guard.
//!
//! Labels come from bounded sets only: the plugin, the kind, the tool or
//! prompt as served (never a URI: a resource's or a completion's name
//! label is empty), the outcome.

use std::sync::Arc;

use metrics::Label;
use serde_json::Value;

/// What a call called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Resource,
    Prompt,
    Complete,
}

impl Kind {
    /// The `kind` label.
    fn label(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Prompt => "prompt",
            Kind::Complete => "completion",
        }
    }

    /// The `name` label of a call named `name`: tools and prompts are
    /// the plugin's (bounded); URIs and completion targets are not.
    fn name_label(self, name: &str) -> String {
        match self {
            Kind::Tool | Kind::Prompt => name.to_owned(),
            Kind::Resource | Kind::Complete => String::new(),
        }
    }
}

/// The span of one call of `plugin`, a child of the request's: its parts
/// (instantiate, run, validate), state operations, HTTP requests and asks
/// are its children. Its outcome and fuel are recorded as it ends.
pub(crate) fn call_span(plugin: &str, kind: Kind) -> tracing::Span {
    tracing::info_span!(
        target: "corral_otel",
        "corral.plugin.call",
        "corral.plugin" = plugin,
        "corral.kind" = kind.label(),
        "corral.outcome" = tracing::field::Empty,
        "corral.fuel" = tracing::field::Empty,
        "otel.status_code" = tracing::field::Empty,
    )
}

/// The span of a check of what crossed into or out of the sandbox
/// (`arguments`, `output`) against a schema.
pub(crate) fn validate_span(what: &'static str) -> tracing::Span {
    tracing::info_span!(
        target: "corral_otel",
        "corral.plugin.validate",
        "corral.validated" = what,
    )
}

/// A call under way: dropped before [`Underway::ended`], it was cancelled.
pub(crate) struct Underway {
    plugin: Arc<str>,
    kind: Kind,
    name: String,
    ended: bool,
}

impl Underway {
    pub(crate) fn start(plugin: &Arc<str>, kind: Kind, name: &str) -> Underway {
        Underway {
            plugin: plugin.clone(),
            kind,
            name: kind.name_label(name),
            ended: false,
        }
    }

    /// The call ended (its audit line will count it).
    pub(crate) fn ended(mut self) {
        self.ended = true;
    }
}

impl Drop for Underway {
    fn drop(&mut self) {
        if !self.ended {
            metrics::counter!(
                "corral_calls_total",
                "plugin" => self.plugin.clone(),
                "kind" => self.kind.label(),
                "name" => std::mem::take(&mut self.name),
                "outcome" => "cancelled",
            )
            .increment(1);
        }
    }
}

/// One call's line in the audit log, and its metrics.
pub(crate) struct Audit {
    pub(crate) plugin: Arc<str>,
    pub(crate) kind: Kind,
    /// The tool or prompt as served, the URI read, or what was completed
    /// (`prompt:NAME/ARGUMENT`, `template:TEMPLATE/VARIABLE`).
    pub(crate) name: String,
    pub(crate) elapsed_us: u64,
    pub(crate) fuel: u64,
    pub(crate) outcome: &'static str,
    /// Only when the server logs arguments (they may be private).
    pub(crate) arguments: Option<Value>,
    /// Who called, over authorized HTTP
    /// ([`corral_tool::Principal::describe`]: subject and issuer, never a
    /// token); `None` otherwise.
    pub(crate) principal: Option<String>,
    /// Occurrences of the plugin's secrets replaced in what the call sent
    /// out; left out of the line when none.
    pub(crate) redacted: Option<usize>,
    /// The linear memory its instance had grown to, if it ran.
    pub(crate) memory_bytes: Option<usize>,
    /// How long instantiating took, if it got that far.
    pub(crate) instantiate_us: Option<u64>,
}

impl Audit {
    /// Records the call's metrics, then logs its line.
    pub(crate) fn log(self) {
        self.record();
        let Audit {
            plugin,
            kind,
            name,
            elapsed_us,
            fuel,
            outcome,
            arguments,
            principal,
            redacted,
            memory_bytes,
            instantiate_us,
        } = self;
        // Recorded as a string field (escaped by the log's formatter: a
        // subject is the issuer's text), and left out when absent.
        let principal = principal.as_deref();
        match (kind, arguments) {
            (Kind::Tool, Some(arguments)) => {
                tracing::info!(plugin = %plugin, tool = %name, elapsed_us, fuel, outcome, principal, redacted, memory_bytes, instantiate_us, %arguments, "call")
            }
            (Kind::Tool, None) => {
                tracing::info!(plugin = %plugin, tool = %name, elapsed_us, fuel, outcome, principal, redacted, memory_bytes, instantiate_us, "call")
            }
            (Kind::Prompt, Some(arguments)) => {
                tracing::info!(plugin = %plugin, prompt = %name, elapsed_us, fuel, outcome, principal, redacted, memory_bytes, instantiate_us, %arguments, "call")
            }
            (Kind::Prompt, None) => {
                tracing::info!(plugin = %plugin, prompt = %name, elapsed_us, fuel, outcome, principal, redacted, memory_bytes, instantiate_us, "call")
            }
            (Kind::Resource, _) => {
                tracing::info!(plugin = %plugin, resource = %name, elapsed_us, fuel, outcome, principal, redacted, memory_bytes, instantiate_us, "call")
            }
            (Kind::Complete, _) => {
                tracing::info!(plugin = %plugin, complete = %name, elapsed_us, fuel, outcome, principal, redacted, memory_bytes, instantiate_us, "call")
            }
        }
    }

    /// The call's figures as metrics.
    fn record(&self) {
        let plugin = self.plugin.clone();
        let kind = self.kind.label();
        let name = self.kind.name_label(&self.name);
        metrics::counter!(
            "corral_calls_total",
            "plugin" => plugin.clone(),
            "kind" => kind,
            "name" => name.clone(),
            "outcome" => self.outcome,
        )
        .increment(1);
        let labels = vec![
            Label::new("plugin", plugin.clone()),
            Label::new("kind", kind),
            Label::new("name", name),
        ];
        metrics::histogram!("corral_call_duration_seconds", labels.clone())
            .record(self.elapsed_us as f64 / 1e6);
        metrics::counter!("corral_call_fuel_total", labels.clone()).increment(self.fuel);
        if let Some(bytes) = self.memory_bytes {
            metrics::histogram!("corral_call_memory_peak_bytes", labels).record(bytes as f64);
        }
        if let Some(us) = self.instantiate_us {
            metrics::histogram!("corral_instantiation_duration_seconds", "plugin" => plugin)
                .record(us as f64 / 1e6);
        }
    }
}
