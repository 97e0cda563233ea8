//! The log: what goes to stderr (never stdout, which is the protocol), as
//! lines for a person or as JSON objects for a collector, and, when traces
//! are exported, the OTLP layer beside it.

use std::io::IsTerminal as _;

use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

use super::otlp::{self, OtlpConfig, OtlpGuard};

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line per event, for a person (colored on a terminal).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `message`,
    /// and each of the event's fields as a key of its own (an audit line's
    /// `plugin`, `tool`, `elapsed_us`, `fuel`, `outcome`, ...).
    Json,
}

/// Corral's own log targets, plugins' included: a plain level applies to
/// these, while the libraries underneath (wasmtime, cranelift, hyper, the
/// watcher) log warnings and errors only, so that `--log-level debug`
/// shows Corral and its plugins, not the engine's internals. A full filter
/// (`--log-level wasmtime=debug`, or RUST_LOG) reaches anything.
const OWN_LOG_TARGETS: [&str; 6] = [
    "corral",
    "corral_mcp",
    "corral_registry",
    "corral_sandbox",
    "corral_tool",
    corral_sandbox::PLUGIN_TARGET,
];

/// Libraries whose debug and trace events carry a plugin's own bytes.
const GUEST_DATA_TARGETS: [&str; 2] = ["wasmtime_wasi", "wasmtime_wasi_http"];

/// The filter for `--log-level` (or CORRAL_LOG, then RUST_LOG).
pub fn log_filter(level: Option<&str>) -> EnvFilter {
    let own_level = |level: &str| {
        let directives: Vec<String> = OWN_LOG_TARGETS
            .iter()
            .map(|target| format!("{target}={level}"))
            .collect();
        // The TLS verifier logs each certificate it refuses as an error;
        // `pull` and `push` report that failure themselves, with the reason
        // and what to do.
        EnvFilter::new(format!(
            "warn,rustls_platform_verifier=off,{}",
            directives.join(",")
        ))
    };
    let is_plain_level = |text: &str| {
        ["error", "warn", "info", "debug", "trace"]
            .iter()
            .any(|plain| text.eq_ignore_ascii_case(plain))
    };
    let filter = match level {
        Some(level) if is_plain_level(level) => own_level(level),
        Some(filter) => EnvFilter::new(filter),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| own_level("info")),
    };
    // Below info, WASI's streams and HTTP log the bytes a plugin writes and
    // sends (its secrets among them, unredacted): never, whatever the
    // filter asks.
    let filter = GUEST_DATA_TARGETS.iter().fold(filter, |filter, target| {
        filter.add_directive(format!("{target}=info").parse().expect("a valid directive"))
    });
    // The spans exported over OTLP are not log lines: the directive for
    // `corral` matches their target too, and each line would carry them.
    filter.add_directive(
        format!("{}=off", otlp::TARGET)
            .parse()
            .expect("a valid directive"),
    )
}

/// Installs the process's log: stderr at `level` in `format`, and the
/// OTLP exporter when `traces` says where. Keep the guard until the
/// process ends: dropping it sends the spans still queued.
pub fn init(
    level: Option<&str>,
    format: LogFormat,
    traces: Option<OtlpConfig>,
) -> Option<OtlpGuard> {
    let filter = log_filter(level);
    let stderr = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_target(false)
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
    };
    // Two shapes, not an `Option` layer: an absent layer is interested in
    // everything, which would make every disabled callsite (each span of
    // the exporter's target, each debug event) cost its check at run time.
    match traces {
        Some(config) => {
            let (layer, guard) = otlp::layer(config);
            let only_exported = Targets::new().with_target(otlp::TARGET, Level::TRACE);
            tracing_subscriber::registry()
                .with(stderr)
                .with(layer.with_filter(only_exported))
                .init();
            Some(guard)
        }
        None => {
            tracing_subscriber::registry().with(stderr).init();
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exported_spans_are_never_log_lines() {
        for level in [None, Some("trace"), Some("corral=trace")] {
            let filter = log_filter(level).to_string();
            assert!(filter.contains("corral_otel=off"), "{filter}");
        }
    }
}
