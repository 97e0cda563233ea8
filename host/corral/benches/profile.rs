//! Where one call's time goes, per plugin language: the same tool called
//! in process through `corral_sandbox::Plugin::call`, split at the spans
//! the sandbox already opens for tracing (`corral.plugin.prepare`: the
//! store and its WASI context; `instantiate`; `run`: the guest from its
//! export's entry to its return, lifting the result included; `validate`:
//! the arguments and the output against their schemas), plus what follows
//! the answer (the spent instance's drop, which resets its pool slot, and
//! the audit line), the page faults of each part, and what fuel metering
//! costs (the same calls on an engine without it).
//!
//! Run with `cargo bench -p corral --bench profile` (after `scripts/setup`,
//! which builds the example plugins). `PROFILE_CALLS` sets the timed calls
//! per plugin (default 300, after 30 to warm up). `PROFILE_BASELINE` names
//! a folder of other builds of some of the plugins (`NAME.wasm` and
//! `NAME.toml`, such as those of an earlier commit): each is profiled too,
//! in the same run, in a column of its own. Prints one table, the one
//! docs/benchmarks.md shows ("Where a call's time goes").

#[allow(dead_code)] // each bench uses a different part of it
mod stdio;
#[path = "../../../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use corral_sandbox::{Plugin, Sandbox, SandboxOptions};
use corral_tool::CallContext;
use serde_json::{Value, json};
use stdio::median;
use support::all_plugins_dir;
use tracing::span;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One plugin and the call made of it.
struct Subject {
    language: &'static str,
    plugin: &'static str,
    tool: &'static str,
    arguments: Value,
}

fn subjects() -> Vec<Subject> {
    vec![
        Subject {
            language: "Rust",
            plugin: "calc",
            tool: "add",
            arguments: json!({ "a": 1.0, "b": 2.0 }),
        },
        Subject {
            language: "JavaScript",
            plugin: "js-json",
            tool: "json_format",
            arguments: json!({ "json": "{\"a\":1}" }),
        },
        Subject {
            language: "JavaScript",
            plugin: "js-sequential-thinking",
            tool: "sequentialthinking",
            arguments: json!({
                "thought": "What follows from the last one.",
                "nextThoughtNeeded": true,
                "thoughtNumber": 1,
                "totalThoughts": 4,
            }),
        },
        Subject {
            language: "JavaScript",
            plugin: "js-memory",
            tool: "read_graph",
            arguments: json!({}),
        },
        Subject {
            language: "Python",
            plugin: "python-time",
            tool: "get_current_time",
            arguments: json!({ "timezone": "America/New_York" }),
        },
    ]
}

/// The guest's part of a call, which fuel metering slows.
const RUN: &str = "corral.plugin.run";

/// The parts of a call, in the table's order, as the spans name them.
const PARTS: [&str; 5] = [
    "validate arguments",
    "corral.plugin.prepare",
    "corral.plugin.instantiate",
    RUN,
    "validate output",
];

thread_local! {
    /// Time and page faults per part, summed over the current call.
    static SPENT: std::cell::RefCell<BTreeMap<String, (Duration, u64)>> =
        const { std::cell::RefCell::new(BTreeMap::new()) };
    /// Whether the layer reads page faults (a system call per span edge,
    /// so a pass of its own).
    static FAULTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// This thread's minor page faults so far.
fn minor_faults() -> u64 {
    // SAFETY: getrusage writes the struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
        usage.ru_minflt as u64
    }
}

/// Times every span of target `corral_otel` by its part's name.
struct Parts;

/// A span's part and where it started.
struct Started {
    part: String,
    at: Instant,
    faults: u64,
}

/// The part a span stands for: a phase's `otel.name`, a validation's
/// `validate {what}`, or the span's own name.
struct PartName(String);

impl tracing::field::Visit for PartName {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "otel.name" => self.0 = value.to_string(),
            "corral.validated" => self.0 = format!("validate {value}"),
            _ => {}
        }
    }

    fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Parts {
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        let mut part = PartName(attrs.metadata().name().to_string());
        attrs.record(&mut part);
        let faults = if FAULTS.get() { minor_faults() } else { 0 };
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Started {
                part: part.0,
                at: Instant::now(),
                faults,
            });
        }
    }

    fn on_close(&self, id: span::Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(started) = span.extensions_mut().remove::<Started>() else {
            return;
        };
        let took = started.at.elapsed();
        let faults = if FAULTS.get() {
            minor_faults().saturating_sub(started.faults)
        } else {
            0
        };
        SPENT.with_borrow_mut(|spent| {
            let entry = spent.entry(started.part).or_default();
            entry.0 += took;
            entry.1 += faults;
        });
    }
}

/// One call's parts: each span's time and faults, the whole call's, and
/// what ran after its answer.
#[derive(Default)]
struct Sample {
    parts: BTreeMap<String, (Duration, u64)>,
    call: (Duration, u64),
    after: (Duration, u64),
}

/// The plugin loaded alone from a copy of its folder's files, with the
/// rate limit lifted (and its grants: a store for [state], its folder).
async fn load(sandbox: &Arc<Sandbox>, built: &Path, work: &Path, name: &str) -> Plugin {
    let wasm = work.join(format!("{name}.wasm"));
    std::fs::copy(built.join(format!("{name}.wasm")), &wasm).unwrap();
    let mut manifest =
        std::fs::read_to_string(built.join(format!("{name}.toml"))).unwrap_or_default();
    if !manifest.contains("[limits]") {
        manifest.push_str("\n[limits]\nrate = 1000000\n");
    }
    std::fs::write(work.join(format!("{name}.toml")), manifest).unwrap();
    std::fs::create_dir_all(work.join("memory")).unwrap();
    Plugin::load(sandbox, &wasm).await.unwrap()
}

/// `calls` timed calls (after a tenth as many untimed), each split into
/// its parts; with `faults`, page faults instead of clean timings.
async fn measure(plugin: &Plugin, subject: &Subject, calls: usize, faults: bool) -> Vec<Sample> {
    let index = plugin
        .tools()
        .position(|tool| tool.name == subject.tool)
        .unwrap();
    let Value::Object(arguments) = &subject.arguments else {
        unreachable!()
    };
    FAULTS.set(faults);
    let mut samples = Vec::with_capacity(calls);
    for n in 0..calls + calls / 10 {
        SPENT.with_borrow_mut(BTreeMap::clear);
        let faults_before = minor_faults();
        let started = Instant::now();
        let output = plugin
            .call(
                index,
                subject.tool,
                arguments.clone(),
                CallContext::default(),
            )
            .await;
        let call = (started.elapsed(), minor_faults() - faults_before);
        assert!(!output.is_error, "{}: {:?}", subject.plugin, output.content);
        // The spent instance's drop and the audit line, spawned by the
        // call to run after its answer: they run at this yield.
        let faults_before = minor_faults();
        let started = Instant::now();
        tokio::task::yield_now().await;
        let after = (started.elapsed(), minor_faults() - faults_before);
        if n >= calls / 10 {
            let parts = SPENT.with_borrow_mut(std::mem::take);
            samples.push(Sample { parts, call, after });
        }
    }
    FAULTS.set(false);
    samples
}

fn mean_faults(values: impl Iterator<Item = u64>, count: usize) -> f64 {
    values.sum::<u64>() as f64 / count as f64
}

/// One subject's row: per part, its median time and mean faults.
struct Profile {
    rows: Vec<(String, Duration, f64)>,
    unmetered_run: Duration,
}

async fn profile(subject: &Subject, built: &Path, calls: usize) -> Profile {
    let stores = tempfile::tempdir().unwrap();
    let options = |name: &str| SandboxOptions {
        global_rate: 1e9,
        state: Some(corral_sandbox::state::StateStore(Arc::new(
            corral_sandbox::state::sqlite::Sqlite::new(stores.path().join(name)),
        ))),
        ..Default::default()
    };
    let work = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(options("metered.db")).unwrap();
    let plugin = load(&sandbox, built, work.path(), subject.plugin).await;
    let timed = measure(&plugin, subject, calls, false).await;
    let faulted = measure(&plugin, subject, calls, true).await;

    let part = |samples: &[Sample], name: &str| -> Vec<(Duration, u64)> {
        samples
            .iter()
            .map(|sample| sample.parts.get(name).copied().unwrap_or_default())
            .collect()
    };
    let mut rows = Vec::new();
    for name in PARTS {
        let times = part(&timed, name).into_iter().map(|(t, _)| t).collect();
        let faults = part(&faulted, name).into_iter().map(|(_, f)| f);
        rows.push((name.to_string(), median(times), mean_faults(faults, calls)));
    }
    let call = median(timed.iter().map(|s| s.call.0).collect());
    let parts: Duration = rows.iter().map(|(_, t, _)| *t).sum();
    let call_faults = mean_faults(faulted.iter().map(|s| s.call.1), calls);
    let parts_faults: f64 = rows.iter().map(|(_, _, f)| f).sum();
    rows.push((
        "host, the rest (rate limits, audit, events)".into(),
        call.saturating_sub(parts),
        (call_faults - parts_faults).max(0.0),
    ));
    rows.push(("**Plugin::call**".into(), call, call_faults));
    rows.push((
        "after the answer (drop and slot reset, audit line)".into(),
        median(timed.iter().map(|s| s.after.0).collect()),
        mean_faults(faulted.iter().map(|s| s.after.1), calls),
    ));

    drop((plugin, sandbox));

    // The same calls on an engine that counts no fuel.
    let work = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::unmetered_for_benchmarks(options("unmetered.db")).unwrap();
    let plugin = load(&sandbox, built, work.path(), subject.plugin).await;
    let unmetered = measure(&plugin, subject, calls, false).await;
    let unmetered_run = median(part(&unmetered, RUN).into_iter().map(|(t, _)| t).collect());
    Profile {
        rows,
        unmetered_run,
    }
}

fn micros(duration: Duration) -> String {
    format!("{:.1} µs", duration.as_secs_f64() * 1e6)
}

fn main() {
    let calls: usize = std::env::var("PROFILE_CALLS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(300);
    let built = all_plugins_dir();
    // Only the sandbox's own spans: a layer without a filter would turn on
    // every callsite of every crate (wasmtime-wasi's spans around each
    // host call among them) and time them too.
    let only_corral = tracing_subscriber::filter::Targets::new()
        .with_target("corral_otel", tracing::Level::TRACE);
    let subscriber = tracing_subscriber::registry().with(Parts.with_filter(only_corral));
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let baseline = std::env::var_os("PROFILE_BASELINE").map(PathBuf::from);
    // Each subject from target/plugins, then from the baseline if it
    // holds that plugin.
    let mut columns: Vec<(String, Profile)> = Vec::new();
    for subject in subjects() {
        let title = format!(
            "{} `{}` ({})",
            subject.plugin, subject.tool, subject.language
        );
        columns.push((
            title.clone(),
            runtime.block_on(profile(&subject, &built, calls)),
        ));
        if let Some(baseline) = &baseline
            && baseline.join(format!("{}.wasm", subject.plugin)).exists()
        {
            let before = runtime.block_on(profile(&subject, baseline, calls));
            columns.push((format!("{title}, before"), before));
        }
    }
    let profiles: Vec<&Profile> = columns.iter().map(|(_, profile)| profile).collect();

    println!(
        "{calls} calls per plugin after {} to warm up; medians, and page faults per call\n",
        calls / 10
    );
    let mut header = "| part |".to_string();
    let mut rule = "| --- |".to_string();
    for (title, _) in &columns {
        header.push_str(&format!(" {title} |"));
        rule.push_str(" --- |");
    }
    println!("{header}\n{rule}");
    for row in 0..profiles[0].rows.len() {
        let mut line = format!("| {} |", profiles[0].rows[row].0);
        for profile in &profiles {
            let (_, time, faults) = &profile.rows[row];
            line.push_str(&format!(" {} / {faults:.0} |", micros(*time)));
        }
        println!("{line}");
    }
    let mut line = "| fuel metering's share of `run` |".to_string();
    for profile in &profiles {
        let (_, run, _) = profile.rows.iter().find(|(part, ..)| part == RUN).unwrap();
        let run = *run;
        let saved = run.saturating_sub(profile.unmetered_run);
        line.push_str(&format!(
            " {} ({:.0}%) |",
            micros(saved),
            100.0 * saved.as_secs_f64() / run.as_secs_f64()
        ));
    }
    println!("{line}");
}
