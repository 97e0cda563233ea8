//! The sandbox: one engine for every plugin, and a fresh store per call with
//! fuel, memory and time limits and an empty WASI context.
//!
//! A plugin sees no file, socket, environment variable, argument or host
//! stdio: its stdout and stderr go into capped in-memory pipes that the host
//! logs after the call. Clocks and random numbers are provided.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use wasmtime::Result as WasmResult;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::{self, PluginPre, tools, types};
use crate::tool::{CallEvent, EventSink, LogLevel};

/// How often the epoch advances. Running wasm yields to the async runtime at
/// every tick, which bounds how late a timeout or a cancellation takes effect.
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Bytes of a plugin's stdout and of its stderr kept per call.
const CAPTURE_BYTES: usize = 64 * 1024;

/// Log messages a single call may send through `host.log`; the rest are dropped.
const MAX_LOG_EVENTS: u32 = 1_000;

/// Longest log message passed on, in bytes.
const MAX_LOG_MESSAGE: usize = 16 * 1024;

/// Instances the pooling allocator holds slots for. Concurrent calls beyond
/// this fail with a clear error rather than exhausting host memory.
const POOL_INSTANCES: u32 = 256;

/// Table elements per table slot. CPython and other interpreters need many.
const POOL_TABLE_ELEMENTS: usize = 100_000;

/// The limits every call of a plugin runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// CPU budget, in wasmtime fuel units (roughly one per wasm instruction).
    pub fuel: u64,
    /// Linear memory across all of the instance's memories, in bytes.
    pub memory_bytes: usize,
    /// Wall-clock time for instantiation plus the call.
    pub timeout: Duration,
    /// Size of a call's result (content plus structured content), in bytes.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 10_000_000_000,
            memory_bytes: 256 << 20,
            timeout: Duration::from_secs(30),
            output_bytes: 4 << 20,
        }
    }
}

/// Why a sandboxed run did not produce a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    FuelExhausted {
        budget: u64,
    },
    MemoryLimit {
        bytes: usize,
    },
    TimedOut {
        after: Duration,
    },
    StackOverflow,
    /// A trap or host error, with the guest's stderr when it said something
    /// (a Rust panic message, a Python traceback).
    Trap {
        message: String,
        stderr: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::FuelExhausted { budget } => {
                write!(f, "fuel budget of {} exhausted", group_digits(*budget))
            }
            Failure::MemoryLimit { bytes } => {
                write!(f, "memory limit {} reached", human_bytes(*bytes))
            }
            Failure::TimedOut { after } => write!(f, "timed out after {}", human_duration(*after)),
            Failure::StackOverflow => f.write_str("stack overflow (call stack exhausted)"),
            Failure::Trap { message, stderr } if stderr.is_empty() => {
                write!(f, "plugin trapped: {message}")
            }
            Failure::Trap { message, stderr } => {
                write!(f, "plugin trapped: {message}\nplugin stderr:\n{stderr}")
            }
        }
    }
}

/// What a successful run returns, with what it cost.
#[derive(Debug)]
pub struct Run<T> {
    pub value: T,
    pub fuel_used: u64,
}

/// The engine, the linker and the epoch ticker shared by every plugin.
pub struct Sandbox {
    engine: Engine,
    linker: Linker<CallState>,
}

impl Sandbox {
    /// Creates the engine (pooling allocator, fuel, epoch interruption) and the
    /// linker offering WASI and the `host` interface.
    pub fn new() -> Result<Arc<Sandbox>> {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(POOL_INSTANCES)
            .total_core_instances(POOL_INSTANCES * 4)
            .total_memories(POOL_INSTANCES * 2)
            .total_tables(POOL_INSTANCES * 4)
            .total_stacks(POOL_INSTANCES)
            .max_memories_per_module(2)
            .max_tables_per_module(4)
            .table_elements(POOL_TABLE_ELEMENTS);
        let mut config = Config::new();
        config
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
            .consume_fuel(true)
            .epoch_interruption(true);
        let engine = Engine::new(&config)
            .map_err(anyhow::Error::from)
            .context("creating the wasm engine")?;

        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(anyhow::Error::from)
            .context("linking WASI")?;
        bindings::Plugin::add_to_linker::<_, HasSelf<CallState>>(&mut linker, |state| state)
            .map_err(anyhow::Error::from)
            .context("linking the host interface")?;

        spawn_epoch_ticker(engine.weak());
        Ok(Arc::new(Sandbox { engine, linker }))
    }

    /// Compiles a component. CPU-heavy: call it off the async runtime.
    pub fn compile(&self, bytes: &[u8]) -> Result<Component> {
        Ok(Component::new(&self.engine, bytes)?)
    }

    /// Resolves a component's imports once, so that each call only instantiates.
    /// Fails, naming the import, when the component needs something the host
    /// does not offer.
    pub fn prepare(&self, component: &Component) -> Result<PluginPre<CallState>> {
        let pre = self.linker.instantiate_pre(component)?;
        Ok(PluginPre::new(pre)?)
    }

    /// Instantiates the plugin and calls `list`.
    pub async fn list(
        &self,
        pre: &PluginPre<CallState>,
        plugin: &Arc<str>,
        limits: &Limits,
    ) -> Result<Run<Vec<tools::Tool>>, Failure> {
        let mut store = self.store(plugin, limits, None);
        let outcome = tokio::time::timeout(limits.timeout, async {
            let instance = pre.instantiate_async(&mut store).await?;
            instance.corral_plugin_tools().call_list(&mut store).await
        })
        .await;
        finish(store, limits, outcome)
    }

    /// Instantiates the plugin and calls `call(tool, arguments)`.
    pub async fn call(
        &self,
        pre: &PluginPre<CallState>,
        plugin: &Arc<str>,
        limits: &Limits,
        tool: &str,
        arguments: &str,
        events: Option<EventSink>,
    ) -> Result<Run<tools::CallResult>, Failure> {
        let mut store = self.store(plugin, limits, events);
        let outcome = tokio::time::timeout(limits.timeout, async {
            let instance = pre.instantiate_async(&mut store).await?;
            instance
                .corral_plugin_tools()
                .call_call(&mut store, tool, arguments)
                .await
        })
        .await;
        finish(store, limits, outcome)
    }

    fn store(
        &self,
        plugin: &Arc<str>,
        limits: &Limits,
        events: Option<EventSink>,
    ) -> Store<CallState> {
        let stdout = MemoryOutputPipe::new(CAPTURE_BYTES);
        let stderr = MemoryOutputPipe::new(CAPTURE_BYTES);
        // An empty context: no preopens, env, args, stdin, network or name lookup.
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        let state = CallState {
            wasi,
            table: ResourceTable::new(),
            memory: MemoryLimiter::new(limits.memory_bytes),
            plugin: plugin.clone(),
            events,
            log_events: 0,
            stdout,
            stderr,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.memory);
        store
            .set_fuel(limits.fuel)
            .expect("fuel is enabled in the engine config");
        store.epoch_deadline_async_yield_and_update(1);
        store
    }
}

/// Turns a finished run into its value or the limit it hit, and logs what the
/// plugin wrote to stdout and stderr.
fn finish<T>(
    mut store: Store<CallState>,
    limits: &Limits,
    outcome: Result<WasmResult<T>, tokio::time::error::Elapsed>,
) -> Result<Run<T>, Failure> {
    let fuel_used = limits.fuel - store.get_fuel().unwrap_or(0);
    let state = store.data_mut();
    let stderr = state.drain_output();
    match outcome {
        Err(_elapsed) => Err(Failure::TimedOut {
            after: limits.timeout,
        }),
        Ok(Ok(value)) => Ok(Run { value, fuel_used }),
        Ok(Err(err)) => Err(classify(&err, state, limits, stderr)),
    }
}

fn classify(err: &wasmtime::Error, state: &CallState, limits: &Limits, stderr: String) -> Failure {
    match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Failure::FuelExhausted {
            budget: limits.fuel,
        },
        Some(Trap::StackOverflow) => Failure::StackOverflow,
        // A failed memory.grow usually surfaces as a guest abort; the limiter
        // knows whether the limit was the cause.
        _ if state.memory.hit => Failure::MemoryLimit {
            bytes: limits.memory_bytes,
        },
        _ => Failure::Trap {
            message: format!("{err:#}"),
            stderr,
        },
    }
}

/// Per-call state inside a store.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryLimiter,
    plugin: Arc<str>,
    events: Option<EventSink>,
    log_events: u32,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
}

impl CallState {
    /// Logs captured stdout and stderr; returns stderr for error messages.
    fn drain_output(&self) -> String {
        let stdout = String::from_utf8_lossy(&self.stdout.contents())
            .trim_end()
            .to_string();
        let stderr = String::from_utf8_lossy(&self.stderr.contents())
            .trim_end()
            .to_string();
        if !stdout.is_empty() {
            tracing::info!(plugin = %self.plugin, "plugin stdout:\n{stdout}");
        }
        if !stderr.is_empty() {
            tracing::info!(plugin = %self.plugin, "plugin stderr:\n{stderr}");
        }
        stderr
    }

    fn emit(&mut self, event: CallEvent) {
        if let Some(events) = &self.events {
            events(event);
        }
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

impl types::Host for CallState {}

impl bindings::corral::plugin::host::Host for CallState {
    fn log(&mut self, level: types::LogLevel, mut message: String) {
        self.log_events += 1;
        if self.log_events > MAX_LOG_EVENTS {
            if self.log_events == MAX_LOG_EVENTS + 1 {
                tracing::warn!(plugin = %self.plugin, "more than {MAX_LOG_EVENTS} log messages in one call; dropping the rest");
            }
            return;
        }
        truncate_utf8(&mut message, MAX_LOG_MESSAGE);
        let level = LogLevel::from(level);
        match level {
            LogLevel::Debug => tracing::debug!(plugin = %self.plugin, "{message}"),
            LogLevel::Info | LogLevel::Notice => tracing::info!(plugin = %self.plugin, "{message}"),
            LogLevel::Warning => tracing::warn!(plugin = %self.plugin, "{message}"),
            _ => tracing::error!(plugin = %self.plugin, "{message}"),
        }
        self.emit(CallEvent::Log { level, message });
    }

    fn progress(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        let message = message.map(|mut m| {
            truncate_utf8(&mut m, MAX_LOG_MESSAGE);
            m
        });
        self.emit(CallEvent::Progress {
            done,
            total,
            message,
        });
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

fn truncate_utf8(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("… (truncated)");
    }
}

/// 1000000000 -> "1,000,000,000".
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// 67108864 -> "64 MiB".
pub fn human_bytes(bytes: usize) -> String {
    const UNITS: [(&str, usize); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    for (unit, size) in UNITS {
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} bytes")
}

/// 10 s, 1.5 s, 250 ms.
pub fn human_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis >= 1000 && millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else if millis >= 1000 {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        format!("{millis} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_messages_name_the_limit_and_its_value() {
        assert_eq!(
            Failure::FuelExhausted {
                budget: 1_000_000_000
            }
            .to_string(),
            "fuel budget of 1,000,000,000 exhausted"
        );
        assert_eq!(
            Failure::MemoryLimit { bytes: 64 << 20 }.to_string(),
            "memory limit 64 MiB reached"
        );
        assert_eq!(
            Failure::TimedOut {
                after: Duration::from_secs(10)
            }
            .to_string(),
            "timed out after 10 s"
        );
        assert_eq!(human_duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(group_digits(999), "999");
    }
}
