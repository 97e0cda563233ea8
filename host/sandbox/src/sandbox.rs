//! The sandbox: one engine for every plugin, and a fresh store per call with
//! fuel, memory and time limits and an empty WASI context.
//!
//! A plugin sees no file, socket, environment variable, argument or host
//! stdio: its stdout and stderr go into capped in-memory pipes that the host
//! logs after the call. Clocks and random numbers are provided.
//!
//! A call's time limit counts compute only: while the plugin waits for its
//! client's answers (`client.ask`, see `ask`), the limit is paused, and the
//! call's waits are bounded by `input-wait` instead, in all.

use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tracing::Instrument as _;

use anyhow::{Context as _, Result};
use wasmtime::Result as WasmResult;
use wasmtime::component::{Component, HasSelf, Instance, Linker, ResourceTable};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, Trap,
};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::after_answer::AfterAnswer;
use crate::ask::{Asking, InputRequired, Pause, WaitingCalls};
use crate::bindings::{self, Contract, Exports03, PluginPre, Request, Response, client, types};
use crate::cache::{CompileCache, Provenance};
use crate::capture::Captured;
use crate::changes::{ResourceUpdates, ToolsChanged};
use crate::crash;
use crate::function_cache::FunctionCache;
use crate::http::HttpPolicy;
use crate::limits::Limits;
use crate::manifest::SecretGrant;
use crate::manifest::{Manifest, StatePer};
use crate::missing_grant;
use crate::naming;
use crate::plugin_text;
use crate::quota::TokenBucket;
use crate::secrets::{self, Granted, SecretSources};
use crate::spare::Spare;
use crate::state::keyvalue::{KeyValueView, StateAccess};
use crate::state::{self, StateStore};
use crate::units::{group_digits, human_bytes, human_duration};
use corral_tool::{CallContext, CallEvent, EventSink, LogLevel, Principal};

/// How often the epoch advances. Running wasm yields to the async runtime at
/// every tick, which bounds how late a timeout or a cancellation takes effect.
/// The log target of what plugins say (`host.log`, their captured stdout
/// and stderr), apart from the host's own messages: `--log-level
/// plugin=debug` shows it alone.
pub const PLUGIN_TARGET: &str = "plugin";

const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Bytes of a plugin's stdout and of its stderr kept per call.
const CAPTURE_BYTES: usize = 64 * 1024;

/// Log messages a single call may send through `host.log`; the rest are dropped.
const MAX_LOG_EVENTS: u32 = 1_000;

/// Progress reports a single call may send through `host.progress`; the
/// rest are dropped.
const MAX_PROGRESS_EVENTS: u32 = 1_000;

/// Distinct URIs one call may say were updated (`host.resource-updated`);
/// the rest are dropped.
pub const MAX_UPDATED_PER_CALL: usize = 100;

/// Bytes of log and progress messages a single call may send in all; the
/// rest are dropped. Each becomes a notification the transport queues for
/// the client, so this bounds what one call can make the host hold.
const MAX_EVENT_BYTES: usize = 1 << 20;

/// Instances the pooling allocator holds slots for. Concurrent calls beyond
/// this fail with a clear error rather than exhausting host memory.
const POOL_INSTANCES: u32 = 256;

/// Table elements per table slot. CPython and other interpreters need many.
const POOL_TABLE_ELEMENTS: usize = 100_000;

/// Bytes of each memory and table slot that are reset in place (only the
/// pages a call dirtied, found with Linux's `PAGEMAP_SCAN`) instead of
/// being handed back to the kernel with `madvise`. A small plugin's call
/// dirties a few dozen pages: resetting them in place saves the page faults
/// of the next call in the slot and, in a multi-threaded process, the TLB
/// shoot-downs of `madvise`. Calls that dirty more fall back to `madvise`.
const POOL_KEEP_RESIDENT_MEMORY: usize = 2 << 20;
const POOL_KEEP_RESIDENT_TABLE: usize = 256 << 10;

/// Spare instances that plugins may hold at once, server-wide (see
/// `spare`). Each holds one of the pool's [`POOL_INSTANCES`] component
/// instances while it waits for its call, with its core instances, tables
/// and memories (several core instances for a Python plugin), so that the
/// spares take at most a sixteenth of the pool.
const MAX_SPARES: usize = 16;

/// Why a sandboxed run did not produce a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// It burned its whole fuel `budget` in `ran` (as the time limit
    /// counts time: waits for the client's answers left out).
    FuelExhausted {
        budget: u64,
        ran: Duration,
    },
    MemoryLimit {
        bytes: usize,
    },
    /// It computed for `after`, its time limit: `timeout`, or for a call
    /// that may become a task `task-timeout` (`as_task`). (What fuel it
    /// burned is not known: the dropped run takes its counters with it.)
    TimedOut {
        after: Duration,
        as_task: bool,
    },
    StackOverflow,
    /// The guest handed the host one value larger than it may (see
    /// `hostcall_bytes`): a result far over the output limit, in practice.
    TooMuchData {
        budget: usize,
        output: usize,
    },
    /// The run ended waiting for the client's input, which the protocol
    /// layer asks for (see `ask`): not a failure of the plugin's. The run
    /// used `fuel_used` before it ended, as a finished run would report.
    InputRequired {
        fuel_used: u64,
    },
    /// A panic or an uncaught exception, as its runtime reported it on the
    /// guest's stderr (see `crash`): a Rust panic's location and message, a
    /// JavaScript exception's stack, a Python traceback.
    Crashed {
        report: String,
    },
    /// A trap or host error, with the guest's stderr when it said something.
    Trap {
        message: String,
        stderr: String,
    },
    /// The call did not run: a required secret has no value in any source,
    /// or a source could not be read. The message names the secret and,
    /// when it is missing, the command that sets it.
    Secret {
        message: String,
    },
}

impl Failure {
    /// The audit log's name for this outcome.
    pub fn outcome(&self) -> &'static str {
        match self {
            Failure::FuelExhausted { .. } => "fuel-limit",
            Failure::MemoryLimit { .. } => "memory-limit",
            Failure::TimedOut { .. } => "timeout",
            Failure::InputRequired { .. } => "input-required",
            Failure::TooMuchData { .. } => "output-limit",
            Failure::StackOverflow | Failure::Crashed { .. } | Failure::Trap { .. } => "trap",
            Failure::Secret { .. } => "missing-secret",
        }
    }

    /// Redacts the plugin's words in it (a crash report, a trap's message
    /// and stderr); adds what it replaced to `count`.
    fn redact(&mut self, granted: &Granted, count: &mut usize) {
        match self {
            Failure::Crashed { report } => granted.redact_in_place(report, count),
            Failure::Trap { message, stderr } => {
                granted.redact_in_place(message, count);
                granted.redact_in_place(stderr, count);
            }
            _ => {}
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Each limit names the manifest key that raises it: the
            // author's fix when the work is legitimate. Fuel and time run
            // out in an endless loop first, whose fix is not more of them.
            Failure::FuelExhausted { budget, ran } => write!(
                f,
                "it may be stuck in a loop: it ran for {} and burned its whole fuel budget of {} \
                 (about one unit per wasm instruction) without finishing. A call that truly needs \
                 more can raise [limits] fuel in the plugin's manifest",
                human_duration(*ran),
                group_digits(*budget)
            ),
            Failure::MemoryLimit { bytes } => write!(
                f,
                "memory limit {} reached (a call that needs more: raise [limits] memory in the plugin's manifest)",
                human_bytes(*bytes)
            ),
            Failure::TimedOut { after, as_task } => write!(
                f,
                "timed out after {}: it may be stuck in a loop, or waiting for something \
                 that never comes. A call that truly needs longer can raise [limits] {} \
                 in the plugin's manifest",
                human_duration(*after),
                if *as_task { "task-timeout" } else { "timeout" }
            ),
            Failure::StackOverflow => f.write_str("stack overflow (call stack exhausted)"),
            Failure::TooMuchData { budget, output } => write!(
                f,
                "it handed the host more than {} at once, far more than the output limit of {} allows (a result that needs more: raise [limits] output in the plugin's manifest)",
                human_bytes(*budget),
                human_bytes(*output)
            ),
            Failure::InputRequired { .. } => InputRequired.fmt(f),
            Failure::Crashed { report } => write!(f, "the plugin {report}"),
            Failure::Secret { message } => f.write_str(message),
            Failure::Trap { message, stderr } if stderr.is_empty() => {
                write!(f, "plugin trapped: {message}")
            }
            Failure::Trap { message, stderr } => {
                write!(f, "plugin trapped: {message}\nplugin stderr:\n{stderr}")
            }
        }
    }
}

impl std::error::Error for Failure {}

/// An instance whose call is over. Dropping it resets its memory and
/// tables for the next call in its pool slot (the pages the call dirtied)
/// and frees the call's WASI context: work that the answer need not wait for.
pub struct Spent {
    store: Store<CallState>,
}

impl Spent {
    /// Whether the plugin said during the call that its tool, resource or
    /// prompt list changed (`host.tools-changed`, `resources-changed`,
    /// `prompts-changed`, contract 0.3.0).
    pub fn lists_changed(&self) -> bool {
        let state = self.store.data();
        state.tools_changed || state.resources_changed || state.prompts_changed
    }

    /// The URIs the plugin said were updated during the call
    /// (`host.resource-updated`), at most [`MAX_UPDATED_PER_CALL`], each
    /// once, in the order said.
    pub fn take_updated(&mut self) -> Vec<String> {
        std::mem::take(&mut self.store.data_mut().updated.said)
    }

    /// What the plugin reached for during the call that a grant gives, and
    /// what its log messages and stderr said about it.
    pub fn reached(&self) -> missing_grant::Reached {
        let state = self.store.data();
        let mut reached = state.reached;
        reached.said.hear(&state.stderr.text());
        reached
    }

    /// The fuel the call burned of the `budget` it started with: all of it
    /// when it ran out, what it had run when it returned or trapped. Not
    /// after a timeout: the dropped run takes its counters with it.
    /// Occurrences of its secrets' values replaced in what it sent out
    /// (answer, failure, log and progress messages, stdout and stderr).
    pub fn redacted(&self) -> usize {
        self.store.data().redacted
    }

    pub fn fuel_used(&self, budget: u64) -> u64 {
        // No fuel counted (a benchmark's unmetered sandbox): none burned.
        self.store
            .get_fuel()
            .map_or(0, |left| budget.saturating_sub(left))
    }

    /// The linear memory the instance had grown to: its peak, as wasm
    /// memory never shrinks.
    pub fn memory_peak(&self) -> usize {
        self.store.data().memory.in_use
    }

    /// How long instantiating the plugin took, if it got that far.
    pub fn instantiation(&self) -> Option<Duration> {
        self.store.data().instantiation
    }
}

/// What a successful run returns, with what it cost.
#[derive(Debug)]
pub struct Run<T> {
    pub value: T,
    pub fuel_used: u64,
}

/// The engine configuration every plugin runs under: the pooling allocator
/// (copy-on-write memory, slots reused across calls), fuel metering and
/// epoch interruption. Public so that benchmarks measure the same engine.
pub fn engine_config() -> Config {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(POOL_INSTANCES)
        .total_core_instances(POOL_INSTANCES * 4)
        .total_memories(POOL_INSTANCES * 2)
        .total_tables(POOL_INSTANCES * 4)
        .total_stacks(POOL_INSTANCES)
        .max_memories_per_module(2)
        .max_tables_per_module(4)
        .table_elements(POOL_TABLE_ELEMENTS)
        .linear_memory_keep_resident(POOL_KEEP_RESIDENT_MEMORY)
        .table_keep_resident(POOL_KEEP_RESIDENT_TABLE)
        .pagemap_scan(Enabled::Auto);
    let mut config = Config::new();
    config
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
        .consume_fuel(true)
        .epoch_interruption(true)
        // The plugin contract is synchronous. Without the component model's
        // concurrency machinery, a store is cheaper to create and a call runs
        // straight on its fiber, finishing in its first poll.
        .concurrency_support(false);
    // For profiling: `CORRAL_PERF_MAP=1` writes /tmp/perf-PID.map, which
    // names the compiled wasm functions in `perf report` (see
    // docs/benchmarks.md, "Where a call's time goes").
    if std::env::var_os("CORRAL_PERF_MAP").is_some_and(|value| value == "1") {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
}

/// Server-wide sandbox settings.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// Calls per second across every tool of every plugin (token bucket,
    /// with a burst of the same size).
    pub global_rate: f64,
    /// Log each call's arguments in the audit log (off: they may be private).
    pub log_arguments: bool,
    /// Where compiled plugins are kept between runs; `None` (the default):
    /// every plugin is compiled at every load.
    pub cache: Option<Arc<CompileCache>>,
    /// Where plugins with a `[state]` grant keep their entries; `None`:
    /// nowhere (opening a bucket fails with `no-such-store`).
    pub state: Option<StateStore>,
    /// Where the values of plugins' `[secrets]` grants come from, first
    /// asked first; none (the default): every secret is missing.
    pub secrets: SecretSources,
    /// Where each principal's own secrets (`per = "principal"`) are kept;
    /// none: a caller's call of a plugin that needs one fails, saying so.
    pub own_secrets: Option<Arc<dyn secrets::own::OwnSecrets>>,
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            global_rate: 5000.0,
            log_arguments: false,
            cache: None,
            state: None,
            secrets: SecretSources::default(),
            own_secrets: None,
        }
    }
}

/// The engine, the linker and the epoch ticker shared by every plugin, the
/// server-wide rate limit, and the admission of heavy schema validations
/// and template matchings.
pub struct Sandbox {
    engine: Engine,
    linker: Linker<CallState>,
    /// Whether calls burn fuel: always, but in a benchmark's measure of
    /// what metering costs.
    metered: bool,
    options: SandboxOptions,
    global: TokenBucket,
    /// Schema validations too large to run on an async worker run on a
    /// blocking thread, one at a time (see `validation`).
    heavy_validations: tokio::sync::Semaphore,
    /// Matchings of a call's updated URIs too large to run on an async
    /// worker run on a blocking thread, one at a time (see `updated`).
    heavy_matches: tokio::sync::Semaphore,
    /// Calls' work left for after their answers (spent instances of this
    /// engine's pool among it).
    after_answer: AfterAnswer,
    /// Plugins whose calls said their tool lists changed.
    tools_changed: ToolsChanged,
    /// Resources whose plugins said they were updated.
    resource_updates: ResourceUpdates,
    /// Room for plugins' spare instances, server-wide ([`MAX_SPARES`]).
    spare_room: Arc<tokio::sync::Semaphore>,
}

impl Sandbox {
    /// Creates the engine (pooling allocator, fuel, epoch interruption) and the
    /// linker offering WASI and the `host` interface.
    pub fn new(options: SandboxOptions) -> Result<Arc<Sandbox>> {
        Sandbox::build(options, true)
    }

    /// A sandbox whose engine counts no fuel: only for benchmarks, which
    /// measure what metering costs by running the same calls without it.
    #[doc(hidden)]
    pub fn unmetered_for_benchmarks(options: SandboxOptions) -> Result<Arc<Sandbox>> {
        Sandbox::build(options, false)
    }

    fn build(options: SandboxOptions, metered: bool) -> Result<Arc<Sandbox>> {
        let mut config = engine_config();
        config.consume_fuel(metered);
        if let Some(cache) = &options.cache {
            // Functions compiled before are reused by a compile of new bytes
            // (a plugin rebuilt after an edit): see `function_cache`.
            config
                .enable_incremental_compilation(Arc::new(FunctionCache::new(
                    cache.dir().join("functions.sqlite"),
                )))
                .map_err(anyhow::Error::from)
                .context("enabling the function cache")?;
        }
        let engine = Engine::new(&config)
            .map_err(anyhow::Error::from)
            .context("creating the wasm engine")?;

        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(anyhow::Error::from)
            .context("linking WASI")?;
        missing_grant::add_to_linker(&mut linker, |state: &mut CallState| &mut state.reached)
            .map_err(anyhow::Error::from)
            .context("linking WASI's preopens and network")?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
            .map_err(anyhow::Error::from)
            .context("linking WASI HTTP")?;
        // Every contract version's imports: a component resolves those of
        // the version it targets.
        bindings::add_to_linker::<_, HasSelf<CallState>>(&mut linker, |state| state)
            .map_err(anyhow::Error::from)
            .context("linking the host and client interfaces")?;
        state::keyvalue::add_to_linker(&mut linker, CallState::keyvalue)
            .map_err(anyhow::Error::from)
            .context("linking wasi:keyvalue")?;
        secrets::config::add_to_linker(&mut linker, CallState::config)
            .map_err(anyhow::Error::from)
            .context("linking wasi:config")?;

        spawn_epoch_ticker(engine.weak());
        let global = TokenBucket::new(options.global_rate, options.global_rate.max(1.0));
        Ok(Arc::new(Sandbox {
            engine,
            linker,
            metered,
            options,
            global,
            heavy_validations: tokio::sync::Semaphore::new(1),
            heavy_matches: tokio::sync::Semaphore::new(1),
            after_answer: AfterAnswer::default(),
            tools_changed: ToolsChanged::default(),
            resource_updates: ResourceUpdates::default(),
            spare_room: Arc::new(tokio::sync::Semaphore::new(MAX_SPARES)),
        }))
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn options(&self) -> &SandboxOptions {
        &self.options
    }

    /// Admits one heavy schema validation at a time.
    pub fn heavy_validations(&self) -> &tokio::sync::Semaphore {
        &self.heavy_validations
    }

    /// Admits one heavy matching of a call's updated URIs at a time.
    pub(crate) fn heavy_matches(&self) -> &tokio::sync::Semaphore {
        &self.heavy_matches
    }

    /// Runs `work` (a spent instance's drop, an audit line) once the answer
    /// of the call at hand is on its way; see [`AfterAnswer`].
    pub(crate) fn after_answer(&self, work: impl FnOnce() + Send + 'static) {
        self.after_answer.run(work);
    }

    /// The plugins whose calls said their tool lists changed, for whoever
    /// serves them to list them again (nobody does for a one-off `corral
    /// call`: the marks then stay, one per plugin at most).
    pub fn tools_changed(&self) -> &ToolsChanged {
        &self.tools_changed
    }

    /// Room for one more spare instance, if the server has any left.
    pub(crate) fn spare_room(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.spare_room.clone().try_acquire_owned().ok()
    }

    /// The resources whose plugins said they were updated, for whoever
    /// tells clients (nobody does for a one-off command: at most
    /// [`crate::changes::MAX_PENDING_UPDATES`] stay).
    pub fn resource_updates(&self) -> &ResourceUpdates {
        &self.resource_updates
    }

    /// Takes a token from the server-wide bucket, or says when to retry.
    pub fn take_global_token(&self) -> Result<(), Duration> {
        self.global.take()
    }

    /// Compiles a component, through the compile cache when the options
    /// name one. CPU-heavy on a miss: call it off the async runtime.
    pub fn compile(&self, bytes: &[u8]) -> Result<Component> {
        self.compile_traced(bytes).map(|(component, _)| component)
    }

    /// [`Sandbox::compile`], saying whether the code was compiled or came
    /// from the compile cache (for the load's log line).
    pub fn compile_traced(&self, bytes: &[u8]) -> Result<(Component, Provenance)> {
        if let Some(problem) = not_a_component(bytes) {
            anyhow::bail!(problem);
        }
        match &self.options.cache {
            Some(cache) => cache.compile(&self.engine, bytes),
            None => Ok((Component::new(&self.engine, bytes)?, Provenance::Compiled)),
        }
    }

    /// Resolves a component's imports once, for the contract version it
    /// targets ([`Contract::of`]), so that each call only instantiates.
    /// Fails, naming the import, when the component needs something the
    /// host does not offer.
    pub fn prepare(
        &self,
        component: &Component,
        contract: Contract,
    ) -> Result<PluginPre<CallState>> {
        let pre = self.linker.instantiate_pre(component)?;
        Ok(match contract {
            Contract::V0_1 => PluginPre::V0_1(bindings::v0_1::PluginPre::new(pre)?),
            Contract::V0_2 => PluginPre::V0_2(bindings::v0_2::PluginPre::new(pre)?),
            Contract::V0_3 => PluginPre::V0_3(Arc::new(bindings::Exports03::new(pre)?)),
        })
    }

    /// Instantiates the plugin and calls `list` of `tools`, `resources` or
    /// `prompts` (`request`).
    pub async fn list(
        &self,
        pre: &PluginPre<CallState>,
        plugin: &Arc<str>,
        manifest: &Manifest,
        request: Request,
    ) -> Result<Run<Response>, Failure> {
        // No client: `list` can ask nothing, and waits for no one.
        let waiting = WaitingCalls::for_concurrency(1);
        let context = CallContext::default();
        let (run, _spent) = self
            .run(pre, None, plugin, manifest, request, context, waiting)
            .await;
        run
    }

    /// Instantiates the plugin and makes `request` (a tool call, a read, a
    /// prompt's `get`, a completion); its asks wait for the client only
    /// while `waiting` (the plugin's) has room. A plugin with a `spare`
    /// runs the request in the instance made ahead for it, when there is
    /// one. Also returns the spent instance, for the caller to drop once
    /// the answer is on its way.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run(
        &self,
        pre: &PluginPre<CallState>,
        spare: Option<&Arc<Spare<MadeAhead>>>,
        plugin: &Arc<str>,
        manifest: &Manifest,
        request: Request,
        context: CallContext,
        waiting: Arc<WaitingCalls>,
    ) -> (Result<Run<Response>, Failure>, Option<Spent>) {
        let limits = &manifest.limits;
        // A call that may become a task goes on after its request is
        // answered: it has the longer time.
        let as_task = context.as_task;
        let time_limit = if as_task {
            limits.task_timeout
        } else {
            limits.timeout
        };
        // The secrets, resolved at every call (a changed value takes effect
        // at the next): none for a list, made once for every caller and
        // never redacted; a call without a required one does not run.
        let listing = matches!(
            request,
            Request::ListTools | Request::ListResources | Request::ListPrompts
        );
        let granted = if manifest.secrets.is_empty() || listing {
            None
        } else {
            match self.grant(plugin, manifest, &context, &waiting).await {
                Ok(granted) => Some(granted),
                Err(failure) => return (Err(failure), None),
            }
        };
        // Lists are made at load, before any spare; a plugin with secrets
        // has none (see `Sandbox::spare_for`); a request of an interface
        // the plugin does not export needs no instance.
        let exports = match pre {
            PluginPre::V0_3(exports) if !listing && exports.exports(&request) => Some(exports),
            _ => None,
        };
        let spare = spare.filter(|_| exports.is_some());
        // A wait for the spare being made counts in the time limit.
        let arrived = std::time::Instant::now();
        let made = match spare {
            Some(spare) => spare.take(time_limit).await,
            None => None,
        };
        let time_limit_left = time_limit.saturating_sub(arrived.elapsed());
        let pause = Arc::new(Pause::default());
        let caller = self.caller(plugin, manifest, context, pause.clone(), waiting);
        let began;
        let (mut store, outcome) = match (made, exports) {
            (Some((mut store, instance)), Some(exports)) => {
                tracing::debug!(plugin = %plugin, "the call runs in the instance made ahead of it");
                phase_span("corral.plugin.prepare").in_scope(|| store.data_mut().serve(caller));
                // Its deadline was set when it was made: the epoch's ticks
                // since would stop the call at its first instruction.
                store.set_epoch_deadline(1);
                began = std::time::Instant::now();
                let state = store.data_mut();
                state.invoked = began;
                state.phase = Some(phase_span("corral.plugin.run"));
                let run = exports.dispatch(&mut store, instance, request);
                let outcome = within(time_limit_left, &pause, run).await;
                (store, outcome)
            }
            _ => {
                let store = phase_span("corral.plugin.prepare")
                    .in_scope(|| self.store(plugin, manifest, caller, granted));
                let mut store = match store {
                    Ok(store) => store,
                    Err(failure) => return (Err(failure), None),
                };
                began = std::time::Instant::now();
                let state = store.data_mut();
                state.invoked = began;
                state.phase = Some(phase_span("corral.plugin.instantiate"));
                let run = pre.invoke(
                    &mut store,
                    |state| {
                        started(state);
                        // Closes the instantiate span, opens the run's.
                        state.phase = Some(phase_span("corral.plugin.run"));
                    },
                    request,
                );
                let outcome = within(time_limit_left, &pause, run).await;
                (store, outcome)
            }
        };
        if let Some(spare) = spare {
            spare.order(store.data().instantiation, || self.spare_room());
        }
        store.data_mut().phase = None;
        // Its time as the time limit counts it: waits for the client left out.
        let ran = began.elapsed().saturating_sub(pause.waited());
        let mut run = finish(&mut store, limits, (time_limit, as_task), ran, outcome);
        let state = store.data_mut();
        if let Some(granted) = &state.secrets {
            let mut count = 0;
            match &mut run {
                Ok(run) => secrets::output::response(granted, &mut run.value, &mut count),
                Err(failure) => failure.redact(granted, &mut count),
            }
            state.redacted += count;
        }
        (run, Some(Spent { store }))
    }

    /// The spare instance of a plugin loaded as `pre`, if it may have one
    /// (see `spare`): a plugin of contract 0.3.0 without `[secrets]` nor
    /// state kept per principal.
    ///
    /// Each call still runs in an instance no call ran in before. A spare
    /// is made as a call's instance is, with the plugin's grants and
    /// limits, but for no call: instantiating runs nothing of the plugin's
    /// but its start functions, with no arguments, no client, no principal
    /// and no events. What is the call's own in the store (where its
    /// events go, its client, its state's namespace) is handed over when
    /// the call takes it ([`CallState::serve`]). A plugin with `[secrets]`
    /// has none: its secrets are resolved for each call, into its WASI
    /// environment too. Nor has one whose state is kept per principal: code
    /// its runtime runs at start (a Go `init`, a C constructor) could reach
    /// the store, which must then be the calling principal's. What a
    /// spare's start says through `host.log` reaches no client (it is in
    /// the server's log).
    pub(crate) fn spare_for(
        self: &Arc<Self>,
        pre: &PluginPre<CallState>,
        plugin: &Arc<str>,
        manifest: &Manifest,
    ) -> Option<Arc<Spare<MadeAhead>>> {
        let PluginPre::V0_3(pre) = pre else {
            return None;
        };
        let per_principal = manifest
            .state
            .as_ref()
            .is_some_and(|grant| matches!(grant.per, StatePer::Principal));
        if !manifest.secrets.is_empty() || per_principal {
            return None;
        }
        let (sandbox, pre, name) = (self.clone(), pre.clone(), plugin.clone());
        let manifest = Arc::new(manifest.clone());
        Some(Spare::new(
            plugin.clone(),
            Box::new(move || {
                let (sandbox, pre) = (sandbox.clone(), pre.clone());
                let (name, manifest) = (name.clone(), manifest.clone());
                Box::pin(async move {
                    let made = sandbox.spare_instance(&pre, &name, &manifest).await;
                    made.map_err(|failure| failure.to_string())
                })
            }),
        ))
    }

    /// A new instance of `plugin` made ahead of its call, under its time
    /// limit (see [`Sandbox::spare_for`]).
    async fn spare_instance(
        &self,
        pre: &Exports03<CallState>,
        plugin: &Arc<str>,
        manifest: &Manifest,
    ) -> Result<MadeAhead, Failure> {
        let pause = Arc::new(Pause::default());
        let waiting = WaitingCalls::for_concurrency(1);
        let caller = self.caller(
            plugin,
            manifest,
            CallContext::default(),
            pause.clone(),
            waiting,
        );
        let mut store = self.store(plugin, manifest, caller, None)?;
        let began = std::time::Instant::now();
        store.data_mut().invoked = began;
        let limit = manifest.limits.timeout;
        match within(limit, &pause, pre.instantiate(&mut store)).await {
            Ok(Ok(instance)) => {
                started(store.data_mut());
                // What its start wrote stays captured, for the call's log.
                Ok((store, instance))
            }
            failed => {
                let ran = began.elapsed();
                let finished = finish(&mut store, &manifest.limits, (limit, false), ran, failed);
                Err(finished.expect_err("the instantiation failed"))
            }
        }
    }

    /// The secrets `plugin`'s call may read: the operator's, from its
    /// sources, and the caller's own (asking for them when missing).
    async fn grant(
        &self,
        plugin: &str,
        manifest: &Manifest,
        context: &CallContext,
        waiting: &WaitingCalls,
    ) -> Result<Granted, Failure> {
        let sources = &self.options.secrets;
        let principal = context.principal.as_deref();
        let mut granted = Granted::resolve(sources, plugin, &manifest.secrets, principal.is_some())
            .map_err(|message| Failure::Secret { message })?;
        if !granted.missing().is_empty() {
            let message = secrets::missing_message(plugin, granted.missing(), sources);
            return Err(Failure::Secret { message });
        }
        let Some(principal) = principal else {
            return Ok(granted);
        };
        let own: Vec<&SecretGrant> = manifest
            .secrets
            .iter()
            .filter(|grant| grant.per_principal)
            .collect();
        if own.is_empty() {
            return Ok(granted);
        }
        let Some(store) = &self.options.own_secrets else {
            let names: Vec<&str> = own.iter().map(|grant| grant.name.as_str()).collect();
            return Err(Failure::Secret {
                message: format!(
                    "plugin `{plugin}` reads each caller's own {}, but this server keeps no callers' secrets (start it with --secrets-key-file, or CORRAL_SECRETS_KEY)",
                    names.join(", ")
                ),
            });
        };
        let values = secrets::own::resolve(
            store.as_ref(),
            principal,
            plugin,
            &own,
            context.client.as_ref(),
            (manifest.limits.input_wait, waiting),
            context.events.as_ref(),
        )
        .await
        .map_err(|lacking| match lacking {
            secrets::own::Lacking::Suspended => Failure::InputRequired { fuel_used: 0 },
            secrets::own::Lacking::Failed(message) => Failure::Secret { message },
        })?;
        for (name, value) in values {
            granted.add(name, value);
        }
        Ok(granted)
    }

    /// What a call of `plugin` brings to the store it runs in, from its
    /// `context`: where its events go, its client (to ask, while `waiting`
    /// has room), and the store of its state, which may be its
    /// principal's.
    fn caller(
        &self,
        plugin: &Arc<str>,
        manifest: &Manifest,
        context: CallContext,
        pause: Arc<Pause>,
        waiting: Arc<WaitingCalls>,
    ) -> Caller {
        let limits = &manifest.limits;
        let principal = context.principal;
        Caller {
            events: context.events,
            asking: Asking::new(
                context.client,
                limits.input_wait,
                limits.validation_units,
                pause,
                waiting,
            ),
            state: manifest.state.clone().map(|grant| {
                let backend = self.options.state.as_ref().map(|store| store.0.clone());
                let namespace = state_namespace(plugin, grant.per, principal.as_deref());
                StateAccess::new(backend, namespace, grant)
            }),
        }
    }

    /// A fresh store: the manifest's limits, and a WASI context holding
    /// exactly what the manifest grants. Stdio goes to capped captures;
    /// events and asks to the `caller`'s.
    fn store(
        &self,
        plugin: &Arc<str>,
        manifest: &Manifest,
        caller: Caller,
        granted: Option<Granted>,
    ) -> Result<Store<CallState>, Failure> {
        let limits = &manifest.limits;
        let stdout = Captured::new(CAPTURE_BYTES);
        let stderr = Captured::new(CAPTURE_BYTES);
        // No args, no stdin, no sockets, no name lookup; only granted
        // directories and environment variables.
        let mut wasi = WasiCtx::builder();
        wasi.stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        for (name, value) in &manifest.env {
            wasi.env(name, value);
        }
        // Secrets the manifest also exposes as environment variables.
        if let Some(granted) = &granted {
            for grant in manifest.secrets.iter().filter(|grant| grant.env) {
                if let Some(value) = granted.value(&grant.name) {
                    wasi.env(&grant.name, value);
                }
            }
        }
        for dir in &manifest.dirs {
            let perms = if dir.writable {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            wasi.preopened_dir(&dir.host, &dir.guest, perms)
                .map_err(|err| Failure::Trap {
                    message: format!(
                        "granted directory {} cannot be opened: {err}",
                        dir.host.display()
                    ),
                    stderr: String::new(),
                })?;
        }
        let Caller {
            events,
            asking,
            state,
        } = caller;
        let state = CallState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            memory: MemoryLimiter::new(limits.memory_bytes),
            plugin: plugin.clone(),
            events,
            asking,
            log_events: 0,
            progress_events: 0,
            tools_changed: false,
            resources_changed: false,
            prompts_changed: false,
            updated: Updated::default(),
            event_bytes: 0,
            output_limit: limits.output_bytes,
            stdout,
            stderr,
            http_ctx: WasiHttpCtx::new(),
            reached: missing_grant::Reached::default(),
            http: HttpPolicy {
                plugin: plugin.clone(),
                grant: manifest.http.clone(),
            },
            state,
            secrets: granted,
            redacted: 0,
            invoked: std::time::Instant::now(),
            instantiation: None,
            phase: None,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.memory);
        // What one value the guest hands the host may hold (a result being
        // lifted, an import's arguments): wasmtime's default, or the output
        // limit when that is larger, so that a result within the limit is
        // never refused on the way (see `Failure::TooMuchData`).
        store.set_hostcall_fuel(hostcall_bytes(limits));
        if self.metered {
            store
                .set_fuel(limits.fuel)
                .expect("fuel is enabled in the engine config");
        }
        // Yield to the runtime at the next epoch tick, and at every tick
        // after. (A new store's deadline is the current epoch: without the
        // first line, every call would yield at once, before doing any work.)
        store.set_epoch_deadline(1);
        store.epoch_deadline_async_yield_and_update(1);
        Ok(store)
    }
}

/// Notes that the instance in `state`'s store is made. What the guest's
/// runtime reached for while it started is not the request's doing: Go's
/// reads its preopened directories at start, which would give every failed
/// call of a Go plugin the hint that it lacks a directory grant. That it
/// did is noted: Go resolves every path itself from then on (see
/// `missing_grant`).
fn started(state: &mut CallState) {
    state.reached.started();
    state.instantiation = Some(state.invoked.elapsed());
}

/// Bytes the guest may hand the host in one value: wasmtime's default
/// budget (128 MiB), raised to the output limit (and a little for the
/// result's other fields) when that is larger.
fn hostcall_bytes(limits: &Limits) -> usize {
    const WASMTIME_DEFAULT: usize = 128 << 20;
    WASMTIME_DEFAULT.max(limits.output_bytes.saturating_add(1 << 20))
}

/// A run that reached its time limit.
struct Elapsed;

/// Runs `work` for at most `limit`, not counting the time it spends
/// waiting for its client (`pause`). The timer is armed only once `work`
/// first waits (on host I/O, or at an epoch tick): most calls end within
/// their first poll and never touch the runtime's timer wheel, whose every
/// registration wakes the worker thread parked in the I/O driver, a
/// cross-thread wake-up on the path of every call.
///
/// While an ask waits the timer is not polled (the ask has its own limit,
/// and wakes `work` when it ends); after, the deadline is pushed back by
/// the time waited.
async fn within<F: Future>(limit: Duration, pause: &Pause, work: F) -> Result<F::Output, Elapsed> {
    let start = tokio::time::Instant::now();
    let mut work = pin!(work);
    let mut timer: Option<(Pin<Box<tokio::time::Sleep>>, Duration)> = None;
    poll_fn(|cx| {
        if let Poll::Ready(output) = work.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        if pause.waiting() {
            return Poll::Pending;
        }
        let waited = pause.waited();
        let (sleep, armed_with) = timer.get_or_insert_with(|| {
            (
                Box::pin(tokio::time::sleep_until(start + limit + waited)),
                waited,
            )
        });
        if *armed_with != waited {
            sleep.as_mut().reset(start + limit + waited);
            *armed_with = waited;
        }
        sleep.as_mut().poll(cx).map(|()| Err(Elapsed))
    })
    .await
}

/// Turns a finished run, which ran for `ran` under its time limit (and
/// whether that was `task-timeout`), into its value or the limit it hit,
/// and logs what the plugin wrote to stdout and stderr.
fn finish<T>(
    store: &mut Store<CallState>,
    limits: &Limits,
    (time_limit, as_task): (Duration, bool),
    ran: Duration,
    outcome: Result<WasmResult<T>, Elapsed>,
) -> Result<Run<T>, Failure> {
    let fuel_used = store
        .get_fuel()
        .map_or(0, |left| limits.fuel.saturating_sub(left));
    let state = store.data_mut();
    let stderr = state.drain_output();
    match outcome {
        Err(Elapsed) => Err(Failure::TimedOut {
            after: time_limit,
            as_task,
        }),
        Ok(Ok(value)) => Ok(Run { value, fuel_used }),
        // Suspended, not stopped: the audit log counts what it used.
        Ok(Err(err)) if err.downcast_ref::<InputRequired>().is_some() => {
            Err(Failure::InputRequired { fuel_used })
        }
        Ok(Err(err)) => Err(classify(&err, state, limits, ran, stderr)),
    }
}

fn classify(
    err: &wasmtime::Error,
    state: &CallState,
    limits: &Limits,
    ran: Duration,
    stderr: String,
) -> Failure {
    match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Failure::FuelExhausted {
            budget: limits.fuel,
            ran,
        },
        Some(Trap::StackOverflow) => Failure::StackOverflow,
        // wasmtime's own words when a value outgrows `hostcall_bytes`.
        None if err
            .root_cause()
            .to_string()
            .starts_with("too much data is being copied between the host and the guest") =>
        {
            Failure::TooMuchData {
                budget: hostcall_bytes(limits),
                output: limits.output_bytes,
            }
        }
        // A failed memory.grow usually surfaces as a guest abort; the limiter
        // knows whether the limit was the cause.
        _ if state.memory.hit => Failure::MemoryLimit {
            bytes: limits.memory_bytes,
        },
        // The trap itself, not the wasm backtrace wrapped around it: the
        // guest's stderr (a panic message, a traceback) says more. A crash
        // its runtime reported is shown as the runtime said it; the trap
        // (always `unreachable` then) and stderr go to the debug log. The
        // plugin's words in each are cut (see `plugin_text`): a panic
        // message can be as long as the guest's memory.
        Some(trap) => {
            let stderr = without_advice(stderr);
            match crash::report(&stderr) {
                Some(report) => {
                    let stderr = plugin_text::cut(&stderr);
                    tracing::debug!(plugin = %state.plugin, "the plugin crashed: {trap}\nplugin stderr:\n{stderr}");
                    Failure::Crashed {
                        report: plugin_text::cut(&report),
                    }
                }
                None => Failure::Trap {
                    message: plugin_text::cut(&trap.to_string()),
                    stderr: plugin_text::cut(&stderr),
                },
            }
        }
        None => Failure::Trap {
            message: plugin_text::cut(&err.root_cause().to_string()),
            stderr: plugin_text::cut(&without_advice(stderr)),
        },
    }
}

/// The guest's stderr without advice that cannot be followed in the
/// sandbox: a Rust panic (in a Rust plugin, or in the runtime of a Python
/// one) ends with "run with `RUST_BACKTRACE=1`", but a plugin sees no
/// environment variable it is not granted, and its backtrace would name
/// wasm functions anyway.
fn without_advice(stderr: String) -> String {
    if !stderr.contains("RUST_BACKTRACE") {
        return stderr;
    }
    let kept: Vec<&str> = stderr
        .lines()
        .filter(|line| !(line.starts_with("note: run with `RUST_BACKTRACE=")))
        .collect();
    kept.join("\n").trim_end().to_owned()
}

/// Why `bytes` cannot be a component, read from its 8-byte header: one line
/// an author can act on (its callers say "not a valid WebAssembly component"
/// before it). The parser says it too, but over a dozen lines of
/// pretty-printed byte arrays ("magic header not detected: bad magic number -
/// expected=[ 0x0, 0x61, ...") that `corral call` and `serve` would print.
fn not_a_component(bytes: &[u8]) -> Option<String> {
    const MAGIC: &[u8] = b"\0asm";
    const CORE_MODULE: &[u8] = b"\x01\0\0\0";
    const COMPONENT: &[u8] = b"\x0d\0\x01\0";
    if bytes.is_empty() {
        return Some("the file is empty".into());
    }
    if !bytes.starts_with(MAGIC) {
        return Some("it does not start with the wasm magic bytes (\\0asm)".into());
    }
    let header = bytes.get(4..8).unwrap_or(&bytes[4..]);
    if header == CORE_MODULE {
        return Some(
            "it is a core WebAssembly module, not a component: make it one with \
             `corral componentize MODULE.wasm COMPONENT.wasm` (it adapts WASI preview 1 \
             and embeds the world `plugin` unless the module carries its own; `--world` \
             names another)"
                .into(),
        );
    }
    if header != COMPONENT {
        let hex: Vec<String> = header.iter().map(|byte| format!("{byte:02x}")).collect();
        return Some(format!(
            "after the wasm magic bytes comes version `{}`, \
             where a component has `0d 00 01 00` (a file cut short, or an encoding this host \
             does not read)",
            hex.join(" ")
        ));
    }
    None
}

/// The namespace of the store a call of `plugin` opens: the plugin's own,
/// or, with `[state] per = "principal"` and a principal calling, that
/// principal's (see [`naming::principal_namespace`]). Chosen here from
/// what the host knows, never from anything the guest says.
fn state_namespace(plugin: &Arc<str>, per: StatePer, principal: Option<&Principal>) -> Arc<str> {
    match (per, principal) {
        (StatePer::Principal, Some(principal)) => {
            naming::principal_namespace(plugin, &principal.key()).into()
        }
        _ => plugin.clone(),
    }
}

/// An instance made ahead of its call, in its store (see `spare`).
pub(crate) type MadeAhead = (Store<CallState>, Instance);

/// The parts of a store that are its call's own: made with the store, or
/// handed over to a spare instance when its call takes it.
struct Caller {
    events: Option<EventSink>,
    asking: Asking,
    state: Option<StateAccess>,
}

/// Per-call state inside a store.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryLimiter,
    plugin: Arc<str>,
    events: Option<EventSink>,
    /// The call's client, and what the plugin asked of it.
    asking: Asking,
    log_events: u32,
    progress_events: u32,
    /// The plugin said its tool list changed (`host.tools-changed`); read
    /// once the call is over, and never during `list`.
    tools_changed: bool,
    /// As `tools_changed`, for `host.resources-changed`.
    resources_changed: bool,
    /// As `tools_changed`, for `host.prompts-changed`.
    prompts_changed: bool,
    /// The URIs said updated (`host.resource-updated`).
    updated: Updated,
    /// Bytes of log and progress messages sent so far.
    event_bytes: usize,
    /// The plugin's `output` limit, which its log and progress messages
    /// are measured against (see `plugin_text`).
    output_limit: usize,
    stdout: Captured,
    stderr: Captured,
    http_ctx: WasiHttpCtx,
    http: HttpPolicy,
    /// Its plugin's store, with a `[state]` grant.
    state: Option<StateAccess>,
    /// The secrets it may read, with a `[secrets]` grant (none in a list).
    secrets: Option<Granted>,
    /// Occurrences of their values replaced in what it sent out.
    redacted: usize,
    /// What the guest reached for that a grant gives (see `missing_grant`).
    reached: missing_grant::Reached,
    /// When the plugin's instantiation began.
    invoked: std::time::Instant,
    /// How long instantiating took, once it is done.
    instantiation: Option<Duration>,
    /// The span of the part of the call running now (instantiate, then
    /// run), a child of the call's; closed when the part ends.
    phase: Option<tracing::Span>,
}

impl CallState {
    /// Hands a spare instance's store over to its call: what the call
    /// brings replaces what the spare was made with (no events, no client,
    /// the plugin's own state namespace).
    fn serve(&mut self, caller: Caller) {
        let Caller {
            events,
            asking,
            state,
        } = caller;
        self.events = events;
        self.asking = asking;
        self.state = state;
    }

    fn config(&mut self) -> secrets::config::ConfigView<'_> {
        secrets::config::ConfigView {
            granted: self.secrets.as_ref(),
        }
    }

    /// `text` with the call's secrets redacted, counted.
    fn redacted(&mut self, mut text: String) -> String {
        if let Some(granted) = &self.secrets {
            granted.redact_in_place(&mut text, &mut self.redacted);
        }
        text
    }

    fn keyvalue(&mut self) -> KeyValueView<'_> {
        KeyValueView {
            table: &mut self.table,
            access: self.state.as_mut(),
        }
    }

    /// Logs captured stdout and stderr, each cut (see `plugin_text`);
    /// returns stderr as captured, for the crash report to be found in.
    fn drain_output(&mut self) -> String {
        let stdout = self.stdout.text();
        let stdout = self.redacted(stdout);
        let stderr = self.stderr.text();
        let stderr = self.redacted(stderr);
        if !stdout.is_empty() {
            let stdout = plugin_text::cut(&stdout);
            tracing::info!(target: PLUGIN_TARGET, plugin = %self.plugin, "plugin stdout:\n{stdout}");
        }
        if !stderr.is_empty() {
            let stderr = plugin_text::cut(&stderr);
            tracing::info!(target: PLUGIN_TARGET, plugin = %self.plugin, "plugin stderr:\n{stderr}");
        }
        stderr
    }

    /// A log or progress message as it is passed on: cut, with a note when
    /// it was over the output limit. The plugin's string is freed here.
    fn shown_message(&mut self, message: String) -> String {
        let shown = plugin_text::shown(&message, self.output_limit);
        drop(message);
        let shown = match shown.over_limit_note(self.output_limit) {
            Some(note) => format!("{} ({note})", shown.text),
            None => shown.text,
        };
        self.redacted(shown)
    }

    fn emit(&mut self, event: CallEvent) {
        if let Some(events) = &self.events {
            events(event);
        }
    }

    /// Counts an event of `kind`, the `count`th of its kind, carrying
    /// `bytes` of message; false once the call is past either budget (with
    /// a warning the first time).
    fn within_event_budget(&mut self, kind: &str, count: u32, max: u32, bytes: usize) -> bool {
        let before = self.event_bytes;
        self.event_bytes = before.saturating_add(bytes);
        if count > max {
            if count == max + 1 {
                tracing::warn!(plugin = %self.plugin, "more than {max} {kind} messages in one call; dropping the rest");
            }
            return false;
        }
        if self.event_bytes > MAX_EVENT_BYTES {
            if before <= MAX_EVENT_BYTES {
                tracing::warn!(plugin = %self.plugin, "more than {} of log and progress messages in one call; dropping the rest", human_bytes(MAX_EVENT_BYTES));
            }
            return false;
        }
        true
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}

impl types::Host for CallState {}

impl bindings::v0_1::corral::plugin::host::Host for CallState {
    fn log(&mut self, level: types::LogLevel, message: String) {
        self.log_events = self.log_events.saturating_add(1);
        let message = self.shown_message(message);
        // A traceback logged, or a missing file (see `missing_grant`).
        self.reached.said.hear(&message);
        if !self.within_event_budget("log", self.log_events, MAX_LOG_EVENTS, message.len()) {
            return;
        }
        let level = LogLevel::from(level);
        match level {
            LogLevel::Debug => {
                tracing::debug!(target: PLUGIN_TARGET, plugin = %self.plugin, "{message}")
            }
            LogLevel::Info | LogLevel::Notice => {
                tracing::info!(target: PLUGIN_TARGET, plugin = %self.plugin, "{message}")
            }
            LogLevel::Warning => {
                tracing::warn!(target: PLUGIN_TARGET, plugin = %self.plugin, "{message}")
            }
            _ => tracing::error!(target: PLUGIN_TARGET, plugin = %self.plugin, "{message}"),
        }
        self.emit(CallEvent::Log { level, message });
    }

    fn progress(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        self.progress_events = self.progress_events.saturating_add(1);
        let message = message.map(|m| self.shown_message(m));
        let bytes = message.as_ref().map_or(0, String::len);
        if !self.within_event_budget("progress", self.progress_events, MAX_PROGRESS_EVENTS, bytes) {
            return;
        }
        self.emit(CallEvent::Progress {
            done,
            total,
            message,
        });
    }
}

/// Contract 0.2.0's `host` is 0.1.0's.
impl bindings::v0_2::corral::plugin::host::Host for CallState {
    fn log(&mut self, level: types::LogLevel, message: String) {
        bindings::v0_1::corral::plugin::host::Host::log(self, level, message)
    }

    fn progress(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        bindings::v0_1::corral::plugin::host::Host::progress(self, done, total, message)
    }
}

/// Contract 0.3.0's `host` is 0.2.0's, plus `tools-changed`.
impl bindings::v0_3::corral::plugin::host::Host for CallState {
    fn log(&mut self, level: types::LogLevel, message: String) {
        bindings::v0_1::corral::plugin::host::Host::log(self, level, message)
    }

    fn progress(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        bindings::v0_1::corral::plugin::host::Host::progress(self, done, total, message)
    }

    /// Only noted: the plugin's `list` is called again once the call is
    /// over (its store's writes done), by whoever serves the plugin.
    fn tools_changed(&mut self) {
        self.tools_changed = true;
    }

    fn resources_changed(&mut self) {
        self.resources_changed = true;
    }

    fn prompts_changed(&mut self) {
        self.prompts_changed = true;
    }

    /// Only noted, at most [`MAX_UPDATED_PER_CALL`] distinct URIs: once
    /// the call is over, those the plugin serves are published.
    fn resource_updated(&mut self, uri: String) {
        self.updated.say(&self.plugin, uri);
    }
}

/// The distinct URIs one call said were updated, in order.
#[derive(Debug, Default)]
struct Updated {
    said: Vec<String>,
    seen: std::collections::HashSet<String>,
    dropped: bool,
}

impl Updated {
    fn say(&mut self, plugin: &str, uri: String) {
        if uri.len() > crate::offerings::MAX_URI_BYTES || self.seen.contains(&uri) {
            return;
        }
        if self.said.len() >= MAX_UPDATED_PER_CALL {
            if !self.dropped {
                self.dropped = true;
                tracing::debug!(plugin = %plugin, "more than {MAX_UPDATED_PER_CALL} resources said updated in one call; dropping the rest");
            }
            return;
        }
        self.seen.insert(uri.clone());
        self.said.push(uri);
    }
}

impl client::Host for CallState {
    fn capabilities(&mut self) -> client::ClientCapabilities {
        self.asking.capabilities()
    }

    /// Asks the client; each ask has a span (named by the MCP method of
    /// its first request) and is counted by kind and outcome.
    async fn ask(
        &mut self,
        requests: Vec<client::InputRequest>,
    ) -> WasmResult<Result<Vec<client::InputResponse>, client::AskError>> {
        let (kind, method) = match requests.first().map(|r| &r.request) {
            Some(client::Request::ElicitForm(_)) | None => ("elicitation", "elicitation/create"),
            Some(client::Request::ElicitUrl(_)) => ("url", "elicitation/create"),
            Some(client::Request::Sample(_)) => ("sampling", "sampling/createMessage"),
            Some(client::Request::ListRoots) => ("roots", "roots/list"),
        };
        let span = tracing::info_span!(
            target: "corral_otel",
            "corral.ask",
            "otel.name" = method,
            "otel.kind" = "client",
            "mcp.method.name" = method,
            "corral.outcome" = tracing::field::Empty,
            "otel.status_code" = tracing::field::Empty,
        );
        let asked = self
            .asking
            .ask(requests, self.secrets.as_ref(), &mut self.redacted)
            .instrument(span.clone())
            .await;
        let outcome = match &asked {
            Err(_) => "input-required",
            Ok(Ok(_)) => "answered",
            Ok(Err(client::AskError::Undeclared(_))) => "undeclared",
            Ok(Err(client::AskError::TimedOut)) => "timeout",
            Ok(Err(_)) => "failed",
        };
        span.record("corral.outcome", outcome);
        if !matches!(outcome, "answered" | "input-required") {
            span.record("otel.status_code", "error");
        }
        metrics::counter!("corral_asks_total", "plugin" => self.plugin.clone(), "kind" => kind, "outcome" => outcome)
            .increment(1);
        asked
    }
}

impl From<types::LogLevel> for LogLevel {
    fn from(level: types::LogLevel) -> Self {
        match level {
            types::LogLevel::Debug => LogLevel::Debug,
            types::LogLevel::Info => LogLevel::Info,
            types::LogLevel::Notice => LogLevel::Notice,
            types::LogLevel::Warning => LogLevel::Warning,
            types::LogLevel::Error => LogLevel::Error,
            types::LogLevel::Critical => LogLevel::Critical,
            types::LogLevel::Alert => LogLevel::Alert,
            types::LogLevel::Emergency => LogLevel::Emergency,
        }
    }
}

/// Caps the linear memory of one store, and remembers whether the cap was
/// what made a growth fail.
struct MemoryLimiter {
    limit: usize,
    in_use: usize,
    hit: bool,
}

impl MemoryLimiter {
    fn new(limit: usize) -> Self {
        MemoryLimiter {
            limit,
            in_use: 0,
            hit: false,
        }
    }
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> WasmResult<bool> {
        let growth = desired.saturating_sub(current);
        if self.in_use.saturating_add(growth) > self.limit {
            self.hit = true;
            return Ok(false);
        }
        self.in_use += growth;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> WasmResult<bool> {
        Ok(desired <= POOL_TABLE_ELEMENTS)
    }
}

/// Advances the engine's epoch forever, from a thread that ends with the engine.
fn spawn_epoch_ticker(engine: wasmtime::EngineWeak) {
    std::thread::Builder::new()
        .name("corral-epoch".into())
        .spawn(move || {
            while let Some(engine) = engine.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("spawning the epoch thread");
}

/// The span of one part of a call (`corral.plugin.prepare`: the store and
/// its WASI context; `corral.plugin.instantiate`, `corral.plugin.run`), a
/// child of the call's span (the current one).
fn phase_span(name: &'static str) -> tracing::Span {
    tracing::info_span!(target: "corral_otel", "corral.plugin.phase", "otel.name" = name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_component_is_told_in_one_line() {
        let cases: [(&[u8], &str); 5] = [
            (b"", "the file is empty"),
            (
                b"hello, I am text\n",
                "it does not start with the wasm magic bytes (\\0asm)",
            ),
            (
                b"\0asm\x01\0\0\0",
                "it is a core WebAssembly module, not a component",
            ),
            (
                b"\0asm\x0e\0\x01\0",
                "after the wasm magic bytes comes version `0e 00 01 00`",
            ),
            (b"\0as", "it does not start with the wasm magic bytes"),
        ];
        for (bytes, expected) in cases {
            let problem = not_a_component(bytes).unwrap();
            assert!(problem.contains(expected), "{bytes:?}: {problem}");
            assert!(!problem.contains('\n'), "{bytes:?}: {problem}");
        }
        assert_eq!(not_a_component(b"\0asm\x0d\0\x01\0"), None);
        assert_eq!(not_a_component(b"\0asm\x0d\0\x01\0 and sections"), None);
    }

    #[test]
    fn advice_the_sandbox_cannot_follow_is_left_out() {
        let panic = "thread '<unnamed>' panicked at src/lib.rs:7:5:\nno such unit: furlong\n\
                     note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(
            without_advice(panic.into()),
            "thread '<unnamed>' panicked at src/lib.rs:7:5:\nno such unit: furlong"
        );
        let traceback = "Traceback (most recent call last):\n  File \"app.py\"\nValueError: bad\n";
        assert_eq!(without_advice(traceback.into()), traceback);
    }

    #[test]
    fn limit_messages_name_the_limit_and_its_value() {
        assert_eq!(
            Failure::MemoryLimit { bytes: 64 << 20 }.to_string(),
            "memory limit 64 MiB reached (a call that needs more: raise [limits] memory in the plugin's manifest)"
        );
    }

    /// A loop runs out of fuel or time first: its message says so, and how
    /// long it ran, before the limit a call that truly needs more raises.
    #[test]
    fn fuel_and_time_messages_suspect_a_loop_before_the_limit() {
        assert_eq!(
            Failure::FuelExhausted {
                budget: 1_000_000_000,
                ran: Duration::from_millis(1500),
            }
            .to_string(),
            "it may be stuck in a loop: it ran for 1.5 s and burned its whole fuel budget of \
             1,000,000,000 (about one unit per wasm instruction) without finishing. A call that \
             truly needs more can raise [limits] fuel in the plugin's manifest"
        );
        assert_eq!(
            Failure::TimedOut {
                after: Duration::from_secs(10),
                as_task: false,
            }
            .to_string(),
            "timed out after 10 s: it may be stuck in a loop, or waiting for something that \
             never comes. A call that truly needs longer can raise [limits] \
             timeout in the plugin's manifest"
        );
    }
}
