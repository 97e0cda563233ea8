//! What each call of a plugin leaves behind for its operator: the audit
//! line (info level), the same figures as metrics (the `metrics` facade:
//! `corral_calls_total` and its siblings), and the call's span (tracing
//! target `corral_otel`). A call whose future is dropped before it ends (a
//! cancelled request) is counted as `cancelled` by its [`Underway`] guard.
//!
//! Labels come from bounded sets only: the plugin, the kind, the tool or
//! prompt as served (never a URI: a resource's or a completion's name
//! label is empty), the outcome.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use metrics::{Counter, Histogram, Label};
use serde_json::Value;

/// The most tools and prompts of one kind a plugin has series of: calls
/// of any further name (a plugin that renames its tools at each re-list)
/// are counted under the name [`OTHER_NAMES`]. So one plugin cannot crowd
/// the others out of the recorder's cap on a family's label sets.
const MAX_KEPT_METERS: usize = 1024;

/// The `name` label of calls past a plugin's [`MAX_KEPT_METERS`] names.
const OTHER_NAMES: &str = "_other";

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
    fn name_label(self, name: &str) -> &str {
        match self {
            Kind::Tool | Kind::Prompt => name,
            Kind::Resource | Kind::Complete => "",
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
pub(crate) struct Underway<'a> {
    meters: &'a Meters,
    kind: Kind,
    name: &'a str,
    ended: bool,
}

impl<'a> Underway<'a> {
    pub(crate) fn start(meters: &'a Meters, kind: Kind, name: &'a str) -> Underway<'a> {
        Underway {
            meters,
            kind,
            name,
            ended: false,
        }
    }

    /// The call ended (its audit line will count it).
    pub(crate) fn ended(mut self) {
        self.ended = true;
    }
}

impl Drop for Underway<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.meters.cancelled(self.kind, self.name);
        }
    }
}

/// A plugin's meters: each tool's or prompt's handles, registered with the
/// recorder at its first call and kept, so that a call records with a few
/// atomic operations rather than building and looking up keys. (Handles
/// are the recorder's at their first call: Corral installs it before any
/// plugin loads.)
pub(crate) struct Meters {
    plugin: Arc<str>,
    by_kind: Mutex<HashMap<&'static str, HashMap<String, NameMeters>>>,
    instantiation: Histogram,
}

/// The handles of one tool's or prompt's calls.
struct NameMeters {
    duration: Histogram,
    fuel: Counter,
    memory: Histogram,
    /// By outcome, registered as each first happens.
    outcomes: Vec<(&'static str, Counter)>,
}

impl NameMeters {
    fn register(plugin: &Arc<str>, kind: &'static str, name: &str) -> NameMeters {
        let labels = vec![
            Label::new("plugin", plugin.clone()),
            Label::new("kind", kind),
            Label::new("name", name.to_owned()),
        ];
        NameMeters {
            duration: metrics::histogram!("corral_call_duration_seconds", labels.clone()),
            fuel: metrics::counter!("corral_call_fuel_total", labels.clone()),
            memory: metrics::histogram!("corral_call_memory_peak_bytes", labels),
            outcomes: Vec::new(),
        }
    }

    fn outcome(
        &mut self,
        plugin: &Arc<str>,
        kind: &'static str,
        name: &str,
        outcome: &'static str,
    ) -> &Counter {
        let index = match self
            .outcomes
            .iter()
            .position(|(known, _)| *known == outcome)
        {
            Some(index) => index,
            None => {
                let counter = metrics::counter!(
                    "corral_calls_total",
                    "plugin" => plugin.clone(),
                    "kind" => kind,
                    "name" => name.to_owned(),
                    "outcome" => outcome,
                );
                self.outcomes.push((outcome, counter));
                self.outcomes.len() - 1
            }
        };
        &self.outcomes[index].1
    }
}

impl Meters {
    pub(crate) fn new(plugin: &Arc<str>) -> Meters {
        Meters {
            plugin: plugin.clone(),
            by_kind: Mutex::default(),
            instantiation: metrics::histogram!(
                "corral_instantiation_duration_seconds",
                "plugin" => plugin.clone()
            ),
        }
    }

    /// Records `audit`'s figures.
    fn record(&self, audit: &Audit) {
        if let Some(us) = audit.instantiate_us {
            self.instantiation.record(us as f64 / 1e6);
        }
        self.with(audit.kind, &audit.name, |meters, plugin, kind, name| {
            audit.record_with(meters, plugin, kind, name)
        });
    }

    /// Counts a call of `kind` named `name` that was cancelled.
    fn cancelled(&self, kind: Kind, name: &str) {
        self.with(kind, name, |meters, plugin, kind, name| {
            meters.outcome(plugin, kind, name, "cancelled").increment(1)
        });
    }

    /// Runs `work` on the meters of `kind` named `name` (as served).
    fn with(
        &self,
        kind: Kind,
        name: &str,
        work: impl FnOnce(&mut NameMeters, &Arc<str>, &'static str, &str),
    ) {
        let mut name = kind.name_label(name);
        let kind = kind.label();
        let mut by_kind = self.by_kind.lock().unwrap_or_else(|e| e.into_inner());
        let names = by_kind.entry(kind).or_default();
        if !names.contains_key(name) && names.len() >= MAX_KEPT_METERS {
            name = OTHER_NAMES;
        }
        let meters = match names.get_mut(name) {
            Some(meters) => meters,
            None => names
                .entry(name.to_owned())
                .or_insert_with(|| NameMeters::register(&self.plugin, kind, name)),
        };
        work(meters, &self.plugin, kind, name);
    }
}

/// One call's line in the audit log, and its metrics.
pub(crate) struct Audit {
    pub(crate) meters: Arc<Meters>,
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
        self.meters.record(&self);
        let Audit {
            meters: _,
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

    /// The call's figures on `meters`, its tool's or prompt's.
    fn record_with(
        &self,
        meters: &mut NameMeters,
        plugin: &Arc<str>,
        kind: &'static str,
        name: &str,
    ) {
        meters
            .outcome(plugin, kind, name, self.outcome)
            .increment(1);
        meters.duration.record(self.elapsed_us as f64 / 1e6);
        meters.fuel.increment(self.fuel);
        if let Some(bytes) = self.memory_bytes {
            meters.memory.record(bytes as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metrics_util::debugging::DebuggingRecorder;

    #[test]
    fn a_plugin_past_its_names_counts_further_ones_under_other() {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::with_local_recorder(&recorder, || {
            let meters = Arc::new(Meters::new(&Arc::from("renamer")));
            for n in 0..MAX_KEPT_METERS + 50 {
                let audit = Audit {
                    meters: meters.clone(),
                    plugin: Arc::from("renamer"),
                    kind: Kind::Tool,
                    name: format!("tool{n}"),
                    elapsed_us: 10,
                    fuel: 1,
                    outcome: "ok",
                    arguments: None,
                    principal: None,
                    redacted: None,
                    memory_bytes: None,
                    instantiate_us: None,
                };
                meters.record(&audit);
            }
        });
        let calls: Vec<_> = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .filter(|(key, ..)| key.key().name() == "corral_calls_total")
            .collect();
        assert_eq!(calls.len(), MAX_KEPT_METERS + 1);
        let other = calls
            .iter()
            .find(|(key, ..)| key.key().labels().any(|l| l.value() == OTHER_NAMES))
            .map(|(_, _, _, value)| format!("{value:?}"));
        assert_eq!(other.as_deref(), Some("Counter(50)"));
    }
}
