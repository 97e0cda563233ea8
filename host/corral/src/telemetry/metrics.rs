//! Metrics in the Prometheus text format: the recorder the layers' `metrics`
//! macros feed, the families it knows (with their help texts), the cap on
//! label sets, and the process's own figures, read at each scrape.
//!
//! Labels only ever hold values from bounded sets (plugins, their tools and
//! prompts, outcomes, methods the server knows, budgets, statuses), never a
//! principal, session, argument or URI. A family holds at most
//! [`MAX_SERIES_PER_FAMILY`] label sets all the same: past that, new ones
//! are folded into one whose every label says `_overflow`, and
//! `corral_metric_series_overflow_total` counts them. So a plugin that
//! renames its tools at every call cannot grow the server's memory.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::{Result, anyhow};
use metrics::{
    Counter, Gauge, Histogram, Key, KeyName, Label, Metadata, Recorder, SharedString, Unit,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// The most label sets one family holds (see the module's docs).
pub const MAX_SERIES_PER_FAMILY: usize = 10_000;

/// How often histogram samples are folded into their buckets between
/// scrapes, so that samples never pile up when nobody scrapes.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Bucket bounds of every `_seconds` histogram: from half a millisecond (a
/// warm call of a small plugin) to five minutes (a long task's step).
const SECONDS_BUCKETS: [f64; 17] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 300.0,
];

/// Bucket bounds of every `_bytes` histogram: 64 KiB (one wasm page) to
/// 4 GiB (a 32-bit memory's whole), by fours.
const BYTES_BUCKETS: [f64; 9] = [
    65536.0,
    262144.0,
    1048576.0,
    4194304.0,
    16777216.0,
    67108864.0,
    268435456.0,
    1073741824.0,
    4294967296.0,
];

/// What kind of family a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Counter,
    Gauge,
    Histogram,
}

/// Every family the layers record, with its help text (docs/observability.md
/// describes each; tests/observability/metrics.rs checks that every family a
/// running server exposes has its HELP line and its row there).
pub const FAMILIES: &[(&str, Family, &str)] = &[
    // Calls: each tool call, resource read, prompt get and completion.
    (
        "corral_calls_total",
        Family::Counter,
        "Calls of plugins (tool calls, resource reads, prompt gets, completions) by plugin, kind, tool or prompt name, and outcome.",
    ),
    (
        "corral_call_duration_seconds",
        Family::Histogram,
        "How long calls of plugins took, from admission to answer, waits for the client included.",
    ),
    (
        "corral_call_fuel_total",
        Family::Counter,
        "Fuel (wasm instructions, roughly) burned by calls of plugins.",
    ),
    (
        "corral_call_memory_peak_bytes",
        Family::Histogram,
        "The linear memory a call's instance had grown to when it ended.",
    ),
    (
        "corral_instantiation_duration_seconds",
        Family::Histogram,
        "How long instantiating a plugin for a call took.",
    ),
    // Plugins.
    (
        "corral_plugin_loads_total",
        Family::Counter,
        "Plugin loads (at startup and at each reload) by outcome: loaded or failed.",
    ),
    (
        "corral_compile_cache_total",
        Family::Counter,
        "Compile cache lookups at plugin load by result: hit or miss.",
    ),
    ("corral_plugins", Family::Gauge, "Plugins served now."),
    ("corral_tools", Family::Gauge, "Tools served now."),
    (
        "corral_asks_total",
        Family::Counter,
        "What plugins asked of the client (elicitation, url, sampling, roots) by outcome.",
    ),
    // State.
    (
        "corral_state_operations_total",
        Family::Counter,
        "Operations on the state backend by backend, operation and outcome.",
    ),
    (
        "corral_state_operation_duration_seconds",
        Family::Histogram,
        "How long operations on the state backend took.",
    ),
    // Tasks and authorization.
    (
        "corral_tasks_total",
        Family::Counter,
        "Tasks entering each status.",
    ),
    (
        "corral_authorization_refusals_total",
        Family::Counter,
        "HTTP requests refused by authorization, by reason.",
    ),
    // The host.
    (
        "corral_sessions",
        Family::Gauge,
        "MCP sessions open now (legacy HTTP sessions, or the stdio client).",
    ),
    (
        "corral_requests_in_flight",
        Family::Gauge,
        "MCP requests being served now.",
    ),
    (
        "corral_requests_total",
        Family::Counter,
        "MCP requests answered, by method (a known one, or other) and outcome: ok, error or cancelled.",
    ),
    (
        "mcp_server_operation_duration_seconds",
        Family::Histogram,
        "MCP request duration as observed on the server (OpenTelemetry's mcp.server.operation.duration).",
    ),
    (
        "corral_budget_refusals_total",
        Family::Counter,
        "Work refused because a host budget was reached, by budget.",
    ),
    (
        "corral_http_responses_total",
        Family::Counter,
        "HTTP responses by status code.",
    ),
    (
        "corral_build_info",
        Family::Gauge,
        "Always 1: the running Corral's version.",
    ),
    // Telemetry itself.
    (
        "corral_trace_spans_exported_total",
        Family::Counter,
        "Trace spans the OTLP endpoint accepted.",
    ),
    (
        "corral_trace_spans_dropped_total",
        Family::Counter,
        "Trace spans dropped because the export queue was full.",
    ),
    (
        "corral_trace_export_failures_total",
        Family::Counter,
        "Exports of trace spans that failed.",
    ),
    (
        "corral_metric_series_overflow_total",
        Family::Counter,
        "Label sets folded into a family's _overflow series because it held the most allowed.",
    ),
];

/// The installed recorder's side that renders.
pub struct Metrics {
    handle: PrometheusHandle,
}

impl Metrics {
    /// Installs the process's recorder (once: later calls return the same
    /// one) and starts folding histogram samples in the background.
    pub fn install() -> Result<Arc<Metrics>> {
        static INSTALLED: OnceLock<Arc<Metrics>> = OnceLock::new();
        if let Some(metrics) = INSTALLED.get() {
            return Ok(metrics.clone());
        }
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &SECONDS_BUCKETS)
            .and_then(|builder| {
                builder.set_buckets_for_metric(Matcher::Suffix("_bytes".into()), &BYTES_BUCKETS)
            })
            .map_err(|err| anyhow!("configuring the metrics: {err}"))?
            .build_recorder();
        let handle = recorder.handle();
        metrics::set_global_recorder(Capped::new(recorder))
            .map_err(|err| anyhow!("installing the metrics recorder: {err}"))?;
        for (name, family, help) in FAMILIES {
            match family {
                Family::Counter => metrics::describe_counter!(*name, *help),
                Family::Gauge => metrics::describe_gauge!(*name, *help),
                Family::Histogram => metrics::describe_histogram!(*name, *help),
            }
        }
        metrics::gauge!("corral_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);
        let metrics = Arc::new(Metrics { handle });
        let upkeep = metrics.handle.clone();
        std::thread::Builder::new()
            .name("metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP_EVERY);
                    upkeep.run_upkeep();
                }
            })?;
        Ok(INSTALLED.get_or_init(|| metrics).clone())
    }

    /// Everything, in the Prometheus text format (0.0.4): the families
    /// recorded so far, then the process's figures.
    pub fn render(&self) -> String {
        let mut text = self.handle.render();
        process::render(&mut text);
        text
    }
}

/// A recorder that holds each family to [`MAX_SERIES_PER_FAMILY`] label
/// sets, in front of the Prometheus one.
struct Capped<R> {
    inner: R,
    series: Mutex<Series>,
}

#[derive(Default)]
struct Series {
    /// Every label set admitted. Whole keys, not their hashes: `metrics`
    /// hashes keys cheaply, and short label values collide often enough
    /// (one in a hundred, among ten thousand) that a set of hashes would
    /// let a colliding label set past the cap.
    #[allow(clippy::mutable_key_type)] // Key's hash does not change (see its docs).
    known: HashSet<Key>,
    /// How many each family holds.
    per_family: HashMap<String, usize>,
}

impl<R: Recorder> Capped<R> {
    fn new(inner: R) -> Self {
        Capped {
            inner,
            series: Mutex::default(),
        }
    }

    /// `key`, or its family's overflow series when the family is full.
    fn admit<'k>(&self, key: &'k Key) -> std::borrow::Cow<'k, Key> {
        if key.labels().len() == 0 {
            return std::borrow::Cow::Borrowed(key);
        }
        let mut series = self.series.lock().unwrap_or_else(|e| e.into_inner());
        if series.known.contains(key) {
            return std::borrow::Cow::Borrowed(key);
        }
        let held = series.per_family.entry(key.name().to_owned()).or_default();
        if *held < MAX_SERIES_PER_FAMILY {
            *held += 1;
            series.known.insert(key.to_retained());
            return std::borrow::Cow::Borrowed(key);
        }
        drop(series);
        let overflow = Key::from_static_name("corral_metric_series_overflow_total");
        self.inner
            .register_counter(&overflow, &metadata())
            .increment(1);
        let labels: Vec<Label> = key
            .labels()
            .map(|label| Label::new(label.key().to_owned(), "_overflow"))
            .collect();
        std::borrow::Cow::Owned(Key::from_parts(key.name().to_owned(), labels))
    }
}

fn metadata() -> Metadata<'static> {
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()))
}

impl<R: Recorder> Recorder for Capped<R> {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.inner.describe_counter(key, unit, description)
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.inner.describe_gauge(key, unit, description)
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.inner.describe_histogram(key, unit, description)
    }

    fn register_counter(&self, key: &Key, metadata: &Metadata<'_>) -> Counter {
        self.inner.register_counter(&self.admit(key), metadata)
    }

    fn register_gauge(&self, key: &Key, metadata: &Metadata<'_>) -> Gauge {
        self.inner.register_gauge(&self.admit(key), metadata)
    }

    fn register_histogram(&self, key: &Key, metadata: &Metadata<'_>) -> Histogram {
        self.inner.register_histogram(&self.admit(key), metadata)
    }
}

/// The process's own figures, with the names every Prometheus client
/// library uses, read from /proc at each scrape.
mod process {
    use super::*;

    pub(super) fn render(text: &mut String) {
        let page = page_size();
        if let Ok(statm) = std::fs::read_to_string("/proc/self/statm") {
            let mut fields = statm.split_whitespace().map(|f| f.parse::<u64>().ok());
            let virtual_pages = fields.next().flatten();
            let resident_pages = fields.next().flatten();
            if let Some(pages) = virtual_pages {
                gauge(
                    text,
                    "process_virtual_memory_bytes",
                    "Virtual memory size in bytes.",
                    (pages * page) as f64,
                );
            }
            if let Some(pages) = resident_pages {
                gauge(
                    text,
                    "process_resident_memory_bytes",
                    "Resident memory size in bytes.",
                    (pages * page) as f64,
                );
            }
        }
        if let Some((cpu_seconds, start_time)) = stat() {
            counter(
                text,
                "process_cpu_seconds_total",
                "Total user and system CPU time spent in seconds.",
                cpu_seconds,
            );
            gauge(
                text,
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                start_time,
            );
        }
        if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
            gauge(
                text,
                "process_open_fds",
                "Number of open file descriptors.",
                entries.count() as f64,
            );
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            gauge(
                text,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                limit.rlim_cur as f64,
            );
        }
    }

    fn page_size() -> u64 {
        // SAFETY: sysconf reads a constant of the system.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if size > 0 { size as u64 } else { 4096 }
    }

    /// CPU seconds used, and when the process started (Unix seconds).
    fn stat() -> Option<(f64, f64)> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The command's name (field 2) may hold spaces: fields are counted
        // from after its closing parenthesis, which is field 3 (state).
        let after = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        // SAFETY: sysconf reads a constant of the system.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let utime: f64 = fields.get(14 - 3)?.parse().ok()?;
        let stime: f64 = fields.get(15 - 3)?.parse().ok()?;
        let start_ticks: f64 = fields.get(22 - 3)?.parse().ok()?;
        let boot = std::fs::read_to_string("/proc/stat").ok()?;
        let boot_time: f64 = boot
            .lines()
            .find_map(|line| line.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        Some(((utime + stime) / ticks, boot_time + start_ticks / ticks))
    }

    fn gauge(text: &mut String, name: &str, help: &str, value: f64) {
        let _ = write!(
            text,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
        );
    }

    fn counter(text: &mut String, name: &str, help: &str, value: f64) {
        let _ = write!(
            text,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}\n"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metrics_util::debugging::DebuggingRecorder;

    #[test]
    fn a_family_past_its_cap_folds_new_label_sets_into_one_overflow_series() {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let capped = Capped::new(recorder);
        metrics::with_local_recorder(&capped, || {
            for n in 0..MAX_SERIES_PER_FAMILY + 500 {
                metrics::counter!("corral_calls_total", "name" => n.to_string()).increment(1);
            }
            // A label set admitted before the cap still counts as itself.
            metrics::counter!("corral_calls_total", "name" => "7").increment(1);
        });
        let snapshot = snapshotter.snapshot().into_vec();
        let calls: Vec<_> = snapshot
            .iter()
            .filter(|(key, ..)| key.key().name() == "corral_calls_total")
            .collect();
        assert_eq!(calls.len(), MAX_SERIES_PER_FAMILY + 1);
        let value = |name: &str| {
            calls
                .iter()
                .find(|(key, ..)| key.key().labels().any(|l| l.value() == name))
                .map(|(_, _, _, value)| format!("{value:?}"))
        };
        assert_eq!(value("_overflow").as_deref(), Some("Counter(500)"));
        assert_eq!(value("7").as_deref(), Some("Counter(2)"));
        let overflowed = snapshot
            .iter()
            .find(|(key, ..)| key.key().name() == "corral_metric_series_overflow_total")
            .map(|(_, _, _, value)| format!("{value:?}"));
        assert_eq!(overflowed.as_deref(), Some("Counter(500)"));
    }

    #[test]
    fn the_process_figures_are_read() {
        // Enough work for the CPU time to pass one clock tick.
        let busy = std::time::Instant::now();
        let mut spin = 0u64;
        while busy.elapsed() < Duration::from_millis(50) {
            spin = std::hint::black_box(spin.wrapping_add(1));
        }
        let mut text = String::new();
        process::render(&mut text);
        for name in [
            "process_resident_memory_bytes",
            "process_cpu_seconds_total",
            "process_start_time_seconds",
            "process_open_fds",
        ] {
            let value: f64 = text
                .lines()
                .find_map(|line| line.strip_prefix(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no {name} in {text}"))
                .parse()
                .unwrap();
            assert!(value > 0.0, "{name} is {value}");
        }
    }
}
