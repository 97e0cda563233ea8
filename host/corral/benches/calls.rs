//! Call latency, throughput, startup, reload and limit overhead, each next to
//! the floors it should be compared with, measured in the same run.
//!
//! Run with `cargo bench -p corral --bench calls` (after `scripts/setup`; the
//! example plugins are built first if needed). See docs/benchmarks.md for what
//! each figure means and the targets.
//!
//! Floors:
//! - **transport**: a JSON-RPC echo child (this binary re-executed with
//!   `--echo-server`) driven over stdio pipes by the same client code as the
//!   real server;
//! - **sandbox**: raw wasmtime in process (same engine configuration as the
//!   host: pooling allocator, fuel, epoch interruption), instantiating the
//!   same component, calling it and dropping the store.
//!
//! Environment: `CALLS_SEQUENTIAL` (default 2000 calls), `CALLS_PIPELINED`
//! (default 4000 calls), `CALLS_RUNS` (startup and reload runs, default 7;
//! at most 3 for the slow 20-plugin cold start), `CALLS_SECTIONS` (a comma
//! list of `calls`, `budgets`, `telemetry`, `languages`, `state`, `tasks`, `startup`, `reload`, `fuel`, `wake`; default
//! all of them; the floors always run), `CALLS_WRAP` (a command the server runs under, such
//! as a script that starts `perf record -- "$@"`, for profiling), `CALLS_GAP_US`
//! (a sleep before each in-process call, floor included: how much slower a
//! call is when the thread was idle, as a server's is between requests),
//! `CALLS_BASELINE` (another build of `corral`, which the budgets section
//! compares this one with).
//!
//! Besides latencies, the calls section reports the CPU time the server (and
//! the echo child) spends per request, from `/proc/PID/task/*/schedstat`: a
//! figure the machine's wake-up noise moves far less than the latency.

#[path = "../../../tests/support/redis.rs"]
mod redis;
mod stdio;
#[path = "../../../tests/support/mod.rs"]
mod support;

use std::borrow::Cow;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use stdio::{Client, Latencies, median, ms, us};
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Calls in flight in the pipelined measurement.
const WINDOW: usize = 16;

/// The raw-wasmtime bindings of `wit/plugin.wit`, as the host generates them.
/// In a module of its own: the generated `corral` module would otherwise
/// shadow the `corral` crate.
mod raw {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../../wit",
        exports: { default: async },
    });
}

/// Whether `CALLS_SECTIONS` asks for `section` (all sections when unset).
fn wants(section: &str) -> bool {
    std::env::var("CALLS_SECTIONS")
        .map(|sections| sections.split(',').any(|s| s.trim() == section))
        .unwrap_or(true)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The transport floor's child: answers every request line with a result
/// echoing its params, parsing and serializing as a JSON-RPC server must.
/// For the wake section, it may first pin itself to a CPU (`--cpu N`) and
/// spin before each answer (`--spin-us D`), standing in for a server's work.
fn echo_server() {
    let args: Vec<String> = std::env::args().collect();
    let option = |name: &str| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|value| value.parse::<u64>().ok())
    };
    if let Some(cpu) = option("--cpu") {
        pin_to_cpu(Some(cpu as usize));
    }
    let spin = Duration::from_micros(option("--spin-us").unwrap_or(0));
    let stdin = std::io::stdin().lock();
    let mut stdout = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        let request: Value = match serde_json::from_str(&line) {
            Ok(request) => request,
            Err(_) => continue,
        };
        let Some(id) = request.get("id") else {
            continue;
        };
        let work = Instant::now();
        while work.elapsed() < spin {
            std::hint::spin_loop();
        }
        let response = json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": { "content": [{ "type": "text", "text": "3" }], "isError": false },
        });
        serde_json::to_writer(&mut stdout, &response).unwrap();
        stdout.write_all(b"\n").unwrap();
        stdout.flush().unwrap();
    }
}

/// Pins the calling thread to `cpu`, or lets it run on any CPU again.
fn pin_to_cpu(cpu: Option<usize>) {
    pin_thread(0, cpu);
}

/// Pins every thread of the process `pid` as [`pin_to_cpu`] does the
/// calling one (threads it starts later inherit their creator's CPUs).
fn pin_process(pid: u32, cpu: Option<usize>) {
    for tid in threads(pid) {
        pin_thread(tid, cpu);
    }
}

/// The thread ids of the process `pid`.
fn threads(pid: u32) -> Vec<libc::pid_t> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// CPU time the process `pid` has run so far, summed over its threads (the
/// first field of each `/proc/PID/task/TID/schedstat`, in nanoseconds).
fn cpu_time(pid: u32) -> Duration {
    let nanos: u64 = threads(pid)
        .into_iter()
        .filter_map(|tid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
            stat.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum();
    Duration::from_nanos(nanos)
}

/// `run(client, calls)`, a sequential loop (which makes `calls / 10`
/// warm-up requests first), with the CPU time `client`'s child spends per
/// request over it, warm-up included.
fn with_cpu_per_request(
    client: &mut Client,
    calls: usize,
    run: fn(&mut Client, usize) -> Latencies,
) -> (Latencies, Duration) {
    let pid = client.child.id();
    let before = cpu_time(pid);
    let latencies = run(client, calls);
    let requests = (calls + calls / 10) as u32;
    (latencies, (cpu_time(pid) - before) / requests)
}

fn pin_thread(tid: libc::pid_t, cpu: Option<usize>) {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET and
    // sched_setaffinity (tid 0: the calling thread) get valid pointers.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        // Every online CPU, not `available_parallelism` (which counts only
        // those this thread may already use).
        let cpus = libc::sysconf(libc::_SC_NPROCESSORS_ONLN).max(1) as usize;
        for i in 0..cpus {
            if cpu.is_none_or(|cpu| cpu == i) {
                libc::CPU_SET(i, &mut set);
            }
        }
        let pinned = libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(
            pinned,
            0,
            "sched_setaffinity to {cpu:?}: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// The wake section: how much of a round trip over a pipe is waking the
/// other side, with both ends on one CPU or on two, for a few amounts of
/// server work. On a VM whose idle CPUs halt, a wake-up across CPUs goes
/// through the hypervisor.
fn wake(calls: usize) {
    println!("== wake-ups: echo over stdio, the echo spinning D µs before each answer");
    // SAFETY: sysconf has no preconditions.
    if unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } < 2 {
        println!("(one CPU: nothing to compare)\n");
        return;
    }
    pin_to_cpu(Some(0));
    for spin_us in [0, 20, 50] {
        for (label, cpu) in [
            ("client and echo on CPU 0", 0),
            ("client on CPU 0, echo on CPU 1", 1),
        ] {
            let mut command = Command::new(std::env::current_exe().unwrap());
            command.args([
                "--echo-server",
                "--cpu",
                &cpu.to_string(),
                "--spin-us",
                &spin_us.to_string(),
            ]);
            let mut echo = Client::spawn(command, Stdio::inherit());
            let latencies = sequential(&mut echo, calls);
            let overhead = latencies
                .p50()
                .saturating_sub(Duration::from_micros(spin_us));
            println!(
                "{}   beyond D: {}",
                latencies.line(&format!("D = {spin_us:>2} µs, {label}")),
                us(overhead)
            );
        }
    }
    pin_to_cpu(None);
    println!();
}

fn echo_client() -> Client {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.arg("--echo-server");
    Client::spawn(command, Stdio::inherit())
}

/// `corral serve DIR ARGS...`, its stderr (the audit log) into `log`.
fn corral_client(dir: &Path, args: &[&str], log: &Path) -> Client {
    corral_client_of(Path::new(env!("CARGO_BIN_EXE_corral")), dir, args, log)
}

/// [`corral_client`] with the binary `bin` (another build, for a baseline).
fn corral_client_of(bin: &Path, dir: &Path, args: &[&str], log: &Path) -> Client {
    let mut command = match std::env::var_os("CALLS_WRAP") {
        Some(wrapper) => {
            let mut command = Command::new(wrapper);
            command.arg(bin);
            command
        }
        None => Command::new(bin),
    };
    command
        .arg("serve")
        .arg(dir)
        .args(args)
        .env_remove("CORRAL_LOG")
        .env_remove("RUST_LOG");
    let log = std::fs::File::create(log).unwrap();
    Client::spawn(command, Stdio::from(log))
}

/// `corral serve DIR` with the server-wide rate limit lifted (the plugin's
/// own is lifted by its manifest), so that calls are measured, not refused.
fn unthrottled_client(dir: &Path, cache: &Path, log: &Path) -> Client {
    unthrottled_client_of(Path::new(env!("CARGO_BIN_EXE_corral")), dir, cache, log)
}

fn unthrottled_client_of(bin: &Path, dir: &Path, cache: &Path, log: &Path) -> Client {
    let cache = cache.to_str().unwrap();
    corral_client_of(
        bin,
        dir,
        &["--global-rate", "1000000", "--cache-dir", cache],
        log,
    )
}

fn summary(case: &str, samples: Vec<Duration>) -> Duration {
    let min = *samples.iter().min().unwrap();
    let max = *samples.iter().max().unwrap();
    let median = median(samples);
    println!(
        "{case:<44} median {}  min {}  max {}",
        ms(median),
        ms(min),
        ms(max)
    );
    median
}

// ---------------------------------------------------------------------------
// Stdio measurements, through whatever `client` talks to.

fn add_params(i: usize) -> Value {
    json!({ "name": "add", "arguments": { "a": i as f64, "b": 2.5 } })
}

fn check_add(result: &Value, i: usize) {
    let expected = format!("{}", i as f64 + 2.5);
    let text = result["content"][0]["text"].as_str().unwrap_or("");
    assert!(
        result["isError"] != json!(true) && (text == expected || text == "3"),
        "unexpected tools/call result for call {i}: {result}"
    );
}

/// `calls` sequential tools/call round trips, after `calls / 10` unmeasured.
fn sequential(client: &mut Client, calls: usize) -> Latencies {
    for i in 0..calls / 10 {
        check_add(&client.result("tools/call", &add_params(i)), i);
    }
    let mut samples = Vec::with_capacity(calls);
    let started = Instant::now();
    for i in 0..calls {
        let sent = Instant::now();
        let result = client.result("tools/call", &add_params(i));
        samples.push(sent.elapsed());
        check_add(&result, i);
    }
    Latencies::new(samples, started.elapsed())
}

/// `calls` sequential `ping` round trips: the server's protocol overhead
/// over the transport floor, without any tool call.
fn sequential_ping(client: &mut Client, calls: usize) -> Latencies {
    for _ in 0..calls / 10 {
        client.result("ping", &json!({}));
    }
    let mut samples = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        let sent = Instant::now();
        let result = client.result("ping", &json!({}));
        samples.push(sent.elapsed());
        assert_eq!(result, json!({}));
    }
    Latencies::new(samples, started.elapsed())
}

/// `calls` sequential round trips of one tool call, after `calls / 10`
/// unmeasured; every answer must contain `expect`.
fn sequential_tool(
    client: &mut Client,
    tool: &str,
    arguments: &Value,
    expect: &str,
    calls: usize,
) -> Latencies {
    let params = json!({ "name": tool, "arguments": arguments });
    sequential_calls_of(client, calls, expect, |_| Cow::Borrowed(&params))
}

/// `calls` sequential `tools/call`s (after a tenth as many to warm up),
/// timed one by one: call `i` sends `params(i)`, and its answer must hold
/// `expect`.
fn sequential_calls_of<'a>(
    client: &mut Client,
    calls: usize,
    expect: &str,
    params: impl Fn(usize) -> Cow<'a, Value>,
) -> Latencies {
    let run = |client: &mut Client, i: usize| {
        let params = params(i);
        let result = client.result("tools/call", &params);
        assert_eq!(result["isError"], false, "{params} failed: {result}");
        assert!(result.to_string().contains(expect), "{params}: {result}");
    };
    for i in 0..calls / 10 {
        run(client, i);
    }
    let mut samples = Vec::with_capacity(calls);
    let started = Instant::now();
    for i in 0..calls {
        let sent = Instant::now();
        run(client, calls + i);
        samples.push(sent.elapsed());
    }
    Latencies::new(samples, started.elapsed())
}

/// Size, cold and warm load, and call latency of one example tool per
/// language, each plugin served alone under its default limits (but for
/// the rate limit, raised so that the benchmark measures calls, not
/// refusals).
fn languages(sequential_calls: usize, runs: usize, log: &Path) {
    println!(
        "== languages: one example tool each; load = spawn -> first tools/list, one plugin alone"
    );
    let cases = [
        ("Rust", "calc", "add", json!({ "a": 1, "b": 2 }), "3", 6),
        (
            "C",
            "c-hash",
            "sha256_hash",
            json!({ "data": "abc" }),
            "ba7816bf",
            4,
        ),
        (
            "Python",
            "python-dates",
            "date_info",
            json!({ "date": "2024-12-30" }),
            "Monday",
            5,
        ),
        (
            "JavaScript",
            "js-json",
            "json_format",
            json!({ "json": "{\"a\": [1, 2]}" }),
            "[",
            4,
        ),
        (
            "TypeScript",
            "ts-semver",
            "semver_parse",
            json!({ "version": "1.2.3-rc.1" }),
            "\"major\":1",
            3,
        ),
        (
            "Go",
            "go-semver",
            "semver_match",
            json!({ "versions": ["1.2.0", "1.10.0", "2.0.0"], "constraint": ">=1.2.0, <2" }),
            "the highest is 1.10.0",
            1,
        ),
    ];
    for (language, plugin, tool, arguments, expect, tools) in cases {
        let wasm = support::example(plugin);
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(&wasm, dir.path().join(format!("{plugin}.wasm"))).unwrap();
        support::write_file(
            dir.path(),
            &format!("{plugin}.toml"),
            "[limits]\nrate = 1000000\n",
        );
        let cache = tempfile::tempdir().unwrap();
        let cold = time_to_first_list(dir.path(), cache.path(), tools, log);
        let warm: Vec<Duration> = (0..runs)
            .map(|_| time_to_first_list(dir.path(), cache.path(), tools, log))
            .collect();
        let warm = median(warm);
        let mut server = unthrottled_client(dir.path(), cache.path(), log);
        server.initialize();
        // Interpreted languages, and Go with its runtime to start, take
        // milliseconds per call: fewer calls.
        let calls = if matches!(language, "Rust" | "C") {
            sequential_calls
        } else {
            (sequential_calls / 10).max(50)
        };
        let latency = sequential_tool(&mut server, tool, &arguments, expect, calls);
        println!(
            "{:<44} {:>8} KiB  cold {}  warm {}",
            format!("{language} ({plugin})"),
            file_kib(&wasm),
            ms(cold),
            ms(warm)
        );
        println!("{}", latency.line(&format!("  {tool} over stdio")));
    }
    println!();
}

/// Calls that keep state, beside calc `add` in the same server and the
/// same run: tally `tally_set` (one get, one set) and `tally_add` (one
/// increment), on each backend: a SQLite file, and Debian's redis-server on
/// loopback.
fn state(sequential_calls: usize, log: &Path) {
    println!(
        "== state: one get + one set (tally_set), one increment (tally_add), next to calc `add`"
    );
    let redis = redis::RedisServer::start();
    let files = tempfile::tempdir().unwrap();
    let backends = [
        (
            "SQLite",
            format!("sqlite:{}", files.path().join("state.sqlite").display()),
            2.0,
        ),
        ("Redis", redis.url(), f64::INFINITY),
    ];
    for (backend, flag, target) in backends {
        let dir = tempfile::tempdir().unwrap();
        for (plugin, manifest) in [
            ("calc", "[limits]\nrate = 1000000\n"),
            (
                "tally",
                "[limits]\nrate = 1000000\n\n[state]\nbuckets = [\"default\"]\n",
            ),
        ] {
            std::fs::copy(
                support::example(plugin),
                dir.path().join(format!("{plugin}.wasm")),
            )
            .unwrap();
            support::write_file(dir.path(), &format!("{plugin}.toml"), manifest);
        }
        let cache = tempfile::tempdir().unwrap();
        let cache = cache.path().to_str().unwrap();
        let mut server = corral_client(
            dir.path(),
            &[
                "--global-rate",
                "1000000",
                "--cache-dir",
                cache,
                "--state",
                &flag,
            ],
            log,
        );
        server.initialize();
        let add = sequential_tool(
            &mut server,
            "add",
            &json!({ "a": 1, "b": 2 }),
            "3",
            sequential_calls,
        );
        // A new total each call: a write that changes nothing might cost
        // less than one that does.
        let set = sequential_calls_of(&mut server, sequential_calls, "(was ", |i| {
            Cow::Owned(json!({ "name": "tally_set", "arguments": { "key": "apples", "total": i } }))
        });
        let increment = sequential_tool(
            &mut server,
            "tally_add",
            &json!({ "key": "pears", "by": 1 }),
            "pears: ",
            sequential_calls,
        );
        println!("{}", add.line(&format!("{backend}: calc add")));
        println!("{}", set.line(&format!("{backend}: tally_set (get + set)")));
        println!(
            "{}",
            increment.line(&format!("{backend}: tally_add (increment)"))
        );
        let ratio = |latencies: &Latencies| latencies.p50().as_secs_f64() / add.p50().as_secs_f64();
        let target = if target.is_finite() {
            format!(" (target <= {target}x: {})", met(ratio(&set) <= target))
        } else {
            String::new()
        };
        println!(
            "{:<44} get + set {:.2}x, increment {:.2}x{target}",
            "  p50, as a ratio to add",
            ratio(&set),
            ratio(&increment)
        );
    }
    println!();
}

/// A tool that works 1 ms (the conformance fixture's `slow_compute`),
/// called `calls` times as a plain stateless call and as many times as a
/// task (its manifest makes every call of a client that takes tasks one):
/// created, then polled with `tasks/get` at once until it completed, the
/// task's records in a SQLite store as `serve` keeps them by default.
fn tasks(calls: usize, log: &Path) {
    println!(
        "== tasks: slow_compute (1 ms) as a plain stateless call, and as a task created and polled to completion"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        support::fixture("conformance"),
        dir.path().join("conformance.wasm"),
    )
    .unwrap();
    support::write_file(
        dir.path(),
        "conformance.toml",
        "[limits]\ntask-after = \"0 s\"\nrate = 1000000\n\n[state]\nbuckets = [\"default\"]\n",
    );
    let files = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", files.path().join("state.sqlite").display());
    let cache = tempfile::tempdir().unwrap();
    let mut server = corral_client(
        dir.path(),
        &[
            "--global-rate",
            "1000000",
            "--cache-dir",
            cache.path().to_str().unwrap(),
            "--state",
            &store,
        ],
        log,
    );
    let meta = |takes_tasks: bool| {
        let capabilities = if takes_tasks {
            json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } })
        } else {
            json!({})
        };
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        })
    };
    let call = |takes_tasks: bool| {
        json!({
            "name": "slow_compute",
            "arguments": { "seconds": 0.001 },
            "_meta": meta(takes_tasks),
        })
    };
    // Loaded (and compiled) before anything is timed.
    server.result("tools/call", &call(false));
    let started = Instant::now();
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let began = Instant::now();
        let result = server.result("tools/call", &call(false));
        assert_eq!(result["resultType"], "complete", "{result}");
        samples.push(began.elapsed());
    }
    let plain = Latencies::new(samples, started.elapsed());
    let started = Instant::now();
    let mut samples = Vec::with_capacity(calls);
    let mut polls = 0;
    for _ in 0..calls {
        let began = Instant::now();
        let created = server.result("tools/call", &call(true));
        assert_eq!(created["resultType"], "task", "{created}");
        let get = json!({ "taskId": created["taskId"], "_meta": meta(true) });
        loop {
            polls += 1;
            let task = server.result("tasks/get", &get);
            match task["status"].as_str() {
                Some("completed") => break,
                Some("working") => {}
                _ => panic!("{task}"),
            }
        }
        samples.push(began.elapsed());
    }
    let task = Latencies::new(samples, started.elapsed());
    println!("{}", plain.line("plain stateless tools/call"));
    println!("{}", task.line("as a task: create + poll to completed"));
    println!(
        "{:<44} {:.2}x the plain call, {:.1} tasks/get per task",
        "  p50",
        task.p50().as_secs_f64() / plain.p50().as_secs_f64(),
        polls as f64 / calls as f64
    );
    println!();
}

/// `calls` tools/call requests with `window` in flight; calls per second.
fn pipelined(client: &mut Client, calls: usize, window: usize) -> f64 {
    let started = Instant::now();
    let mut sent = 0;
    let mut arguments = std::collections::HashMap::new();
    while sent < window.min(calls) {
        arguments.insert(client.send("tools/call", &add_params(sent)), sent);
        sent += 1;
    }
    for _ in 0..calls {
        let (id, message) = client.response();
        let i = arguments.remove(&id).expect("a response to an unknown id");
        match message.get("result") {
            Some(result) => check_add(result, i),
            None => panic!("tools/call failed: {message}"),
        }
        if sent < calls {
            arguments.insert(client.send("tools/call", &add_params(sent)), sent);
            sent += 1;
        }
    }
    calls as f64 / started.elapsed().as_secs_f64()
}

// ---------------------------------------------------------------------------
// Raw wasmtime in process: the sandbox floor and the fuel overhead.

struct RawState {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for RawState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl raw::corral::plugin::types::Host for RawState {}

impl raw::corral::plugin::icons::Host for RawState {}

impl raw::corral::plugin::host::Host for RawState {
    fn log(&mut self, _level: raw::corral::plugin::types::LogLevel, _message: String) {}
    fn progress(&mut self, _done: f64, _total: Option<f64>, _message: Option<String>) {}
    fn tools_changed(&mut self) {}
    fn resources_changed(&mut self) {}
    fn prompts_changed(&mut self) {}
    fn resource_updated(&mut self, _uri: String) {}
}

/// The floor's client can answer nothing, as `corral call`'s cannot: the
/// benchmarked tools never ask.
impl raw::corral::plugin::client::Host for RawState {
    fn capabilities(&mut self) -> raw::corral::plugin::client::ClientCapabilities {
        raw::corral::plugin::client::ClientCapabilities {
            elicitation_form: false,
            elicitation_url: false,
            sampling: false,
            roots: false,
        }
    }

    fn ask(
        &mut self,
        _requests: Vec<raw::corral::plugin::client::InputRequest>,
    ) -> Result<
        Vec<raw::corral::plugin::client::InputResponse>,
        raw::corral::plugin::client::AskError,
    > {
        Err(raw::corral::plugin::client::AskError::Undeclared(
            "elicitation".into(),
        ))
    }
}

/// The host's engine configuration, with fuel on or off.
fn raw_engine(fuel: bool) -> Engine {
    let mut config = corral_sandbox::engine_config();
    config.consume_fuel(fuel);
    Engine::new(&config).unwrap()
}

struct RawPlugin {
    engine: Engine,
    fuel: bool,
    pre: raw::PluginPre<RawState>,
}

impl RawPlugin {
    fn new(wasm: &Path, fuel: bool) -> RawPlugin {
        let engine = raw_engine(fuel);
        let component = Component::from_file(&engine, wasm).unwrap();
        let mut linker: Linker<RawState> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).unwrap();
        raw::Plugin::add_to_linker::<_, HasSelf<RawState>>(&mut linker, |state| state).unwrap();
        let pre = raw::PluginPre::new(linker.instantiate_pre(&component).unwrap()).unwrap();
        RawPlugin { engine, fuel, pre }
    }

    /// A fresh store, instance and call, then drop; returns the result.
    async fn call(
        &self,
        tool: &str,
        arguments: &str,
    ) -> raw::exports::corral::plugin::tools::CallResult {
        let state = RawState {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
        };
        let mut store = Store::new(&self.engine, state);
        if self.fuel {
            store.set_fuel(10_000_000_000).unwrap();
        }
        // No epoch ticker here: the deadline is never reached.
        store.set_epoch_deadline(u64::MAX / 2);
        let instance = self.pre.instantiate_async(&mut store).await.unwrap();
        instance
            .corral_plugin_tools()
            .call_call(&mut store, tool, arguments)
            .await
            .unwrap()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Times `calls` in-process calls after `calls / 10` unmeasured ones, each
/// after a sleep of `CALLS_GAP_US` (none by default). Before each, the
/// runtime runs what the previous call left for after its answer (the
/// spent instance's drop, the audit line), as the server's worker does
/// once the answer is written.
async fn time_in_process<F, C>(calls: usize, mut call: C) -> Latencies
where
    C: FnMut() -> F,
    F: std::future::Future<Output = ()>,
{
    for _ in 0..calls / 10 {
        tokio::task::yield_now().await;
        call().await;
    }
    let gap = Duration::from_micros(env_usize("CALLS_GAP_US", 0) as u64);
    let mut samples = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        tokio::task::yield_now().await;
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
        let sent = Instant::now();
        call().await;
        samples.push(sent.elapsed());
    }
    Latencies::new(samples, started.elapsed())
}

fn raw_sequential(plugin: &RawPlugin, calls: usize) -> Latencies {
    runtime().block_on(async {
        time_in_process(calls, || async {
            let result = plugin.call("add", r#"{"a":1,"b":2}"#).await;
            assert!(!result.is_error);
        })
        .await
    })
}

/// The in-process host path: `corral_sandbox::Plugin::call` (rate limits,
/// schema validation, sandboxed call, output checks; the audit log and the
/// spent instance's drop follow the answer), no stdio.
fn host_sequential(calc: &Path, calls: usize) -> Latencies {
    runtime().block_on(async {
        let options = corral_sandbox::SandboxOptions {
            global_rate: 1e9,
            ..Default::default()
        };
        let sandbox = corral_sandbox::Sandbox::new(options).unwrap();
        let plugin = corral_sandbox::Plugin::load(&sandbox, calc).await.unwrap();
        let index = plugin.tools().position(|t| t.name == "add").unwrap();
        let mut arguments = Map::new();
        arguments.insert("a".into(), json!(1.0));
        arguments.insert("b".into(), json!(2.0));
        time_in_process(calls, || async {
            let output = plugin
                .call(index, "add", arguments.clone(), Default::default())
                .await;
            assert!(!output.is_error, "{:?}", output.content);
        })
        .await
    })
}

// ---------------------------------------------------------------------------
// What the host budgets cost.

/// `add`'s request, as a client sends it.
fn add_request_line(id: u64) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "add", "arguments": { "a": 1.0, "b": 2.0 } } })
    .to_string()
}

fn add_arguments() -> Map<String, Value> {
    let mut arguments = Map::new();
    arguments.insert("a".into(), json!(1.0));
    arguments.insert("b".into(), json!(2.0));
    arguments
}

/// Nanoseconds the counting allocator adds to one allocation and its free:
/// the same pairs through it and straight through the system allocator.
fn counting_allocator_overhead() -> f64 {
    use std::alloc::{GlobalAlloc, Layout, System};
    let layout = Layout::from_size_align(64, 8).unwrap();
    let pairs = 2_000_000u32;
    let time = |allocator: &dyn Fn()| {
        let started = Instant::now();
        for _ in 0..pairs {
            allocator();
        }
        started.elapsed().as_secs_f64() * 1e9 / f64::from(pairs)
    };
    // SAFETY: each pointer is freed with the layout it was allocated with,
    // by the allocator that allocated it.
    let counting = || unsafe {
        let allocator = corral_sandbox::memory::CountingAllocator;
        let ptr = allocator.alloc(layout);
        allocator.dealloc(std::hint::black_box(ptr), layout);
    };
    let system = || unsafe {
        let ptr = System.alloc(layout);
        System.dealloc(std::hint::black_box(ptr), layout);
    };
    let mut differences: Vec<f64> = (0..5).map(|_| time(&counting) - time(&system)).collect();
    differences.sort_by(f64::total_cmp);
    differences[2].max(0.0)
}

/// What metrics and traces cost a call: calc `add` over stdio, with
/// neither (the default), with metrics kept (`--metrics`), and with traces
/// exported (`--otlp-endpoint`, to a port where nothing listens: every
/// span is recorded, encoded and queued, and the export fails off the
/// call's path), and with `CALLS_BASELINE` (a build from before, all off)
/// when set. The rounds interleave the cases, each with a server of its
/// own started for the round, so that the machine's drift and a process's
/// placement reach every case alike; each case's figure is the median of
/// its rounds' p50 and its server's CPU time per call.
fn telemetry(calc: &Path, calls: usize, log: &Path) {
    const ROUNDS: usize = 9;
    println!("== telemetry: its cost on calc `add` over stdio ({ROUNDS} interleaved rounds)");
    let dir = calc_folder(calc, 1);
    support::write_file(dir.path(), "calc.toml", "[limits]\nrate = 1000000\n");
    let cache = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let this = PathBuf::from(env!("CARGO_BIN_EXE_corral"));
    // Two servers of the same build with the same flags: how far apart
    // they land is this machine's noise between processes, which every
    // other difference is read against.
    let mut cases: Vec<(&str, PathBuf, Vec<String>)> = vec![
        ("off (the default)", this.clone(), vec![]),
        ("off, a second server (the noise)", this.clone(), vec![]),
        (
            "metrics on (--metrics)",
            this.clone(),
            vec!["--metrics".into(), "127.0.0.1:0".into()],
        ),
        (
            "traces on (--otlp-endpoint)",
            this,
            vec!["--otlp-endpoint".into(), nowhere],
        ),
    ];
    if let Some(baseline) = std::env::var_os("CALLS_BASELINE") {
        cases.push(("baseline build (CALLS_BASELINE)", baseline.into(), vec![]));
    }
    let cache_dir = cache.path().to_str().unwrap();
    let start = |case: usize| {
        let (_, bin, extra) = &cases[case];
        let mut args = vec!["--global-rate", "1000000", "--cache-dir", cache_dir];
        args.extend(extra.iter().map(String::as_str));
        let mut server = corral_client_of(bin, dir.path(), &args, log);
        server.initialize();
        check_add(&server.result("tools/call", &add_params(0)), 0);
        server
    };
    let per_round = calls.max(100);
    let mut p50s = vec![Vec::new(); cases.len()];
    let mut cpus = vec![Vec::new(); cases.len()];
    // Each round starts every server anew (no process's luck, where the
    // kernel put it, lasts more than a round) and begins with the next
    // case (none is always first or last).
    for round in 0..ROUNDS {
        for offset in 0..cases.len() {
            let case = (round + offset) % cases.len();
            let mut server = start(case);
            let (latencies, cpu) = with_cpu_per_request(&mut server, per_round, sequential);
            p50s[case].push(latencies.p50());
            cpus[case].push(cpu);
        }
    }
    let p50s: Vec<Duration> = p50s.into_iter().map(median).collect();
    let cpus: Vec<Duration> = cpus.into_iter().map(median).collect();
    for (case, (name, ..)) in cases.iter().enumerate() {
        let cost = |figures: &[Duration]| {
            (figures[case].as_secs_f64() / figures[0].as_secs_f64() - 1.0) * 100.0
        };
        println!(
            "{:<44} p50 {} ({:+.1}%), server CPU/call {} ({:+.1}%)",
            name,
            us(p50s[case]),
            cost(&p50s),
            us(cpus[case]),
            cost(&cpus)
        );
    }
    // Against the mean of the two servers without telemetry.
    let off = (cpus[0].as_secs_f64() + cpus[1].as_secs_f64()) / 2.0;
    let noise = (cpus[1].as_secs_f64() / cpus[0].as_secs_f64() - 1.0).abs();
    let against_off = |case: usize| cpus[case].as_secs_f64() / off - 1.0;
    println!(
        "{:<44} {:.1}% between two identical servers",
        "noise",
        noise * 100.0
    );
    // The same recording, without the processes' noise: one thread, the
    // same plugin loaded twice, its first copy's meters taken before the
    // recorder is installed (and so doing nothing), the second's after.
    let (without, with) = metrics_in_process(&dir.path().join("calc.wasm"), calls);
    let added = with.saturating_sub(without);
    println!(
        "{:<44} mean {} without a recorder, {} with it: {} more, {:.1}% of a stdio call's p50 (target <= 3%: {})",
        "in process: Plugin::call",
        us(without),
        us(with),
        us(added),
        added.as_secs_f64() / p50s[0].as_secs_f64() * 100.0,
        met(added.as_secs_f64() <= 0.03 * p50s[0].as_secs_f64())
    );
    let metrics_cost = against_off(2);
    println!(
        "{:<44} {:+.1}% of the server's CPU per call (target <= 3%, or within the noise: {})",
        "metrics on",
        metrics_cost * 100.0,
        met(metrics_cost <= 0.03f64.max(noise))
    );
    if cases.len() > 4 {
        let off_cost = off / cpus[4].as_secs_f64() - 1.0;
        println!(
            "{:<44} {:+.1}% against the baseline build (target: within the noise: {})",
            "telemetry off",
            off_cost * 100.0,
            met(off_cost <= noise)
        );
    }
    println!();
}

/// Mean `Plugin::call` of calc `add` in process without and with the
/// Prometheus recorder (interleaved rounds of `calls`; each mean counts
/// what runs once the answer is out, the audit line and its metrics, as
/// the next call's time). Installs the recorder for the rest of the run.
fn metrics_in_process(calc: &Path, calls: usize) -> (Duration, Duration) {
    const ROUNDS: usize = 9;
    runtime().block_on(async {
        let options = corral_sandbox::SandboxOptions {
            global_rate: 1e9,
            ..Default::default()
        };
        let sandbox = corral_sandbox::Sandbox::new(options).unwrap();
        async fn call(plugin: &corral_sandbox::Plugin) {
            let index = plugin.tools().position(|t| t.name == "add").unwrap();
            let output = plugin
                .call(index, "add", add_arguments(), Default::default())
                .await;
            assert!(!output.is_error);
            tokio::task::yield_now().await;
        }
        let without = corral_sandbox::Plugin::load(&sandbox, calc).await.unwrap();
        call(&without).await;
        corral::telemetry::metrics::Metrics::install().unwrap();
        let with = corral_sandbox::Plugin::load(&sandbox, calc).await.unwrap();
        call(&with).await;
        let mut means = [Vec::new(), Vec::new()];
        for round in 0..ROUNDS {
            for offset in 0..2 {
                let case = (round + offset) % 2;
                let plugin = if case == 0 { &without } else { &with };
                let started = Instant::now();
                for _ in 0..calls {
                    call(plugin).await;
                }
                means[case].push(started.elapsed() / calls as u32);
            }
        }
        let [without, with] = means;
        (median(without), median(with))
    })
}

/// The budgets section. In process: the validation budget's own work on
/// `add`'s path (counting the arguments' cost on the schema's shape) next
/// to the whole `Plugin::call`. With `CALLS_BASELINE` naming another build
/// of `corral` (one without the budgets): the sequential and pipelined
/// `add` figures of both binaries, interleaved round by round on the same
/// machine, and their ratios.
fn budgets(calc: &Path, sequential_calls: usize, pipelined_calls: usize, log: &Path) {
    println!("== budgets: their cost on calc `add`");
    let dir = calc_folder(calc, 1);
    support::write_file(dir.path(), "calc.toml", "[limits]\nrate = 1000000\n");
    let host = host_sequential(&dir.path().join("calc.wasm"), sequential_calls);
    let (schema, allocations) = runtime().block_on(async {
        let options = corral_sandbox::SandboxOptions {
            global_rate: 1e9,
            ..Default::default()
        };
        let sandbox = corral_sandbox::Sandbox::new(options).unwrap();
        let plugin = corral_sandbox::Plugin::load(&sandbox, &dir.path().join("calc.wasm"))
            .await
            .unwrap();
        let index = plugin.tools().position(|t| t.name == "add").unwrap();
        let add = plugin.tools().nth(index).unwrap();
        let schema =
            corral_sandbox::schema::Schema::compile_object_schema(&add.input_schema).unwrap();
        // Allocations of one whole call on this thread: the request parsed,
        // the call (its clean-up runs at the next yield), the answer shaped
        // and serialized. Everything the server does for it but the I/O.
        let calls = 1000;
        let line = add_request_line(1);
        let before = corral_sandbox::memory::allocations();
        for _ in 0..calls {
            let frame = corral_mcp::jsonrpc::parse_frame(&line);
            std::hint::black_box(&frame);
            let output = plugin
                .call(index, "add", add_arguments(), Default::default())
                .await;
            let revision = corral_mcp::Revision::parse("2025-06-18").unwrap();
            let answer = corral_mcp::jsonrpc::response(
                json!(1),
                corral_mcp::call_result_json(&output, revision),
            );
            std::hint::black_box(serde_json::to_vec(&answer).unwrap());
            tokio::task::yield_now().await;
        }
        let allocations = (corral_sandbox::memory::allocations() - before) / calls;
        (schema, allocations)
    });
    let arguments = json!({ "a": 1.0, "b": 2.0 });
    let budget = 4_000_000;
    let rounds = 200_000u32;
    let started = Instant::now();
    for _ in 0..rounds {
        let cost = schema
            .cost(std::hint::black_box(&arguments), budget)
            .unwrap();
        std::hint::black_box(cost);
    }
    let counting = started.elapsed() / rounds;
    println!(
        "{:<44} {} ns ({:.2}% of Plugin::call's p50 {})",
        "counting the arguments' cost",
        counting.as_nanos(),
        counting.as_secs_f64() / host.p50().as_secs_f64() * 100.0,
        us(host.p50())
    );
    let per_allocation = counting_allocator_overhead();
    let allocator = per_allocation * allocations as f64;
    println!(
        "{:<44} {allocations} allocations x {per_allocation:.1} ns = {allocator:.0} ns ({:.2}% of Plugin::call's p50)",
        "the counting allocator, per call",
        allocator / 1e3 / (host.p50().as_secs_f64() * 1e6) * 100.0
    );
    let Some(baseline) = std::env::var_os("CALLS_BASELINE") else {
        println!("(set CALLS_BASELINE=/path/to/an/older/corral to compare whole calls)");
        println!();
        return;
    };
    let baseline = PathBuf::from(baseline);
    let this = PathBuf::from(env!("CARGO_BIN_EXE_corral"));
    // Both servers run side by side and take turns in short rounds, so
    // that the machine's drifts (other load, frequency, wake-ups) fall on
    // both alike; each figure is the median over the rounds.
    let caches = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut servers: Vec<Client> = [&this, &baseline]
        .into_iter()
        .zip(&caches)
        .map(|(bin, cache)| {
            let mut server = unthrottled_client_of(bin, dir.path(), cache.path(), log);
            server.initialize();
            check_add(&server.result("tools/call", &add_params(0)), 0);
            server
        })
        .collect();
    const ROUNDS: usize = 15;
    // Per server: sequential p50 (µs), CPU per sequential call (µs),
    // pipelined calls/s, CPU per pipelined call (µs).
    let mut figures: [[Vec<f64>; 4]; 2] = Default::default();
    for _ in 0..ROUNDS {
        for (which, server) in servers.iter_mut().enumerate() {
            let (latencies, cpu) =
                with_cpu_per_request(server, sequential_calls / ROUNDS * 2, sequential);
            let pid = server.child.id();
            let calls = pipelined_calls / ROUNDS * 2;
            let before = cpu_time(pid);
            let window = pipelined(server, calls, WINDOW);
            let pipelined_cpu = (cpu_time(pid) - before) / calls as u32;
            let f = &mut figures[which];
            f[0].push(latencies.p50().as_secs_f64() * 1e6);
            f[1].push(cpu.as_secs_f64() * 1e6);
            f[2].push(window);
            f[3].push(pipelined_cpu.as_secs_f64() * 1e6);
        }
    }
    drop(servers);
    let median_of = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let [this, base] = figures.map(|f| f.map(&median_of));
    // The server's CPU time per call is what the budgets add to; this VM's
    // wake-up latencies move the p50 and the throughput by more than 5%
    // from one round to the next, so those are shown beside it.
    let sequential_cpu = this[1] / base[1];
    let pipelined_cpu = this[3] / base[3];
    println!(
        "{:<44} {:.1} µs vs {:.1} µs: {sequential_cpu:.3}x (target <= 1.05x: {})",
        "sequential: server CPU per call, this vs base",
        this[1],
        base[1],
        met(sequential_cpu <= 1.05)
    );
    println!(
        "{:<44} {:.1} µs vs {:.1} µs: {pipelined_cpu:.3}x (target <= 1.05x: {})",
        "16 in flight: server CPU per call",
        this[3],
        base[3],
        met(pipelined_cpu <= 1.05)
    );
    println!(
        "{:<44} p50 {:.1} µs vs {:.1} µs: {:.3}x",
        "  sequential latency",
        this[0],
        base[0],
        this[0] / base[0]
    );
    println!(
        "{:<44} {:.0} vs {:.0} calls/s: {:.3}x the time per call",
        "  16 in flight, throughput",
        this[2],
        base[2],
        base[2] / this[2]
    );
    println!();
}

// ---------------------------------------------------------------------------
// Startup and reload.

/// A folder holding `copies` copies of calc (`calc.wasm`, or `calc01.wasm`...).
fn calc_folder(calc: &Path, copies: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..copies {
        let name = if copies == 1 {
            "calc.wasm".to_string()
        } else {
            format!("calc{:02}.wasm", i + 1)
        };
        std::fs::copy(calc, dir.path().join(name)).unwrap();
    }
    dir
}

/// Spawn to first `tools/list` answer; checks the answer has every tool.
fn time_to_first_list(dir: &Path, cache: &Path, tools: usize, log: &Path) -> Duration {
    let started = Instant::now();
    let mut client = corral_client(dir, &["--cache-dir", cache.to_str().unwrap()], log);
    client.initialize();
    let list = client.result("tools/list", &json!({}));
    let elapsed = started.elapsed();
    let listed = list["tools"].as_array().map_or(0, Vec::len);
    assert_eq!(
        listed, tools,
        "tools/list answered {listed} tools, not {tools}"
    );
    elapsed
}

/// Rename a new copy of calc into a served folder; time until
/// `notifications/tools/list_changed` arrives.
fn reload_latency(calc: &Path, runs: usize, log: &Path) -> Vec<Duration> {
    let dir = calc_folder(calc, 1);
    let cache = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    let mut client = corral_client(
        dir.path(),
        &["--cache-dir", cache.path().to_str().unwrap()],
        log,
    );
    client.initialize();
    client.result("tools/list", &json!({}));
    let mut samples = Vec::new();
    for run in 0..runs + 1 {
        let staged = staging.path().join("next.wasm");
        std::fs::copy(calc, &staged).unwrap();
        client.notifications.clear();
        let renamed = Instant::now();
        std::fs::rename(&staged, dir.path().join(format!("calc_new{run}.wasm"))).unwrap();
        // Ping until the notification is seen: reads never block for long
        // because each ping is answered.
        let arrived = loop {
            if let Some((at, _)) = client
                .notifications
                .iter()
                .find(|(_, n)| n["method"] == "notifications/tools/list_changed")
            {
                break *at;
            }
            assert!(
                renamed.elapsed() < Duration::from_secs(30),
                "no notifications/tools/list_changed within 30 s"
            );
            std::thread::sleep(Duration::from_millis(1));
            client.result("ping", &json!({}));
        };
        // The first run also compiles calc into the empty cache: not counted.
        if run > 0 {
            samples.push(arrived - renamed);
        }
        // Let the watcher settle before the next change.
        std::thread::sleep(Duration::from_millis(300));
    }
    samples
}

// ---------------------------------------------------------------------------

fn main() {
    if std::env::args().any(|arg| arg == "--echo-server") {
        echo_server();
        return;
    }
    let sequential_calls = env_usize("CALLS_SEQUENTIAL", 2000);
    let pipelined_calls = env_usize("CALLS_PIPELINED", 4000);
    let runs = env_usize("CALLS_RUNS", 7);
    let calc = support::example("calc");
    let sketch = support::example("sketch");
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("corral.log");
    let bench_started = Instant::now();

    println!("corral calls bench: calc.wasm ({} KiB)", file_kib(&calc));
    println!(
        "machine: {} x {}, {} memory",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model(),
        mem_total()
    );
    println!();

    // Floors.
    println!("== floors (calc `add`)");
    let mut echo = echo_client();
    let (transport, echo_cpu) = with_cpu_per_request(&mut echo, sequential_calls, sequential);
    println!("{}", transport.line("transport: JSON-RPC echo over stdio"));
    println!("{:<44} {}", "  echo's CPU time per request", us(echo_cpu));
    let echo_rate = pipelined(&mut echo, pipelined_calls, WINDOW);
    println!("{:<44} {echo_rate:.0} calls/s", "transport, 16 in flight");
    drop(echo);
    let raw = RawPlugin::new(&calc, true);
    let sandbox = raw_sequential(&raw, sequential_calls);
    println!(
        "{}",
        sandbox.line("sandbox: raw wasmtime instantiate+call+drop")
    );
    drop(raw);
    let floor = transport.p50() + sandbox.p50();
    println!("{:<44} p50 {}", "sum of the floors", us(floor));
    println!();

    // Call latency and throughput through the real binary.
    if wants("calls") {
        println!("== corral serve, calc `add` (global rate 1e6, calc.toml rate 1e6)");
        let dir = calc_folder(&calc, 1);
        support::write_file(dir.path(), "calc.toml", "[limits]\nrate = 1000000\n");
        let host = host_sequential(&dir.path().join("calc.wasm"), sequential_calls);
        println!("{}", host.line("in process: Plugin::call (no stdio)"));
        let cache = tempfile::tempdir().unwrap();
        let mut server = unthrottled_client(dir.path(), cache.path(), &log);
        server.initialize();
        // The plugin loads in the background: wait for it, so that its
        // compilation is not counted as the calls' CPU time below.
        check_add(&server.result("tools/call", &add_params(0)), 0);
        let pid = server.child.id();
        let (ping, ping_cpu) = with_cpu_per_request(&mut server, sequential_calls, sequential_ping);
        println!("{}", ping.line("stdio: sequential ping"));
        let (stdio, call_cpu) = with_cpu_per_request(&mut server, sequential_calls, sequential);
        println!("{}", stdio.line("stdio: sequential tools/call"));
        let ratio = stdio.p50().as_secs_f64() / floor.as_secs_f64();
        println!(
            "{:<44} {ratio:.2}x the sum of the floors (target <= 2x: {})",
            "p50",
            met(ratio <= 2.0)
        );
        // The same loop with the client and every server thread on CPU 0:
        // no wake-up crosses CPUs, and no CPU halts between calls.
        pin_to_cpu(Some(0));
        pin_process(pid, Some(0));
        let (one_cpu, one_cpu_cpu) =
            with_cpu_per_request(&mut server, sequential_calls, sequential);
        pin_process(pid, None);
        pin_to_cpu(None);
        println!(
            "{}",
            one_cpu.line("stdio: tools/call, client+server on CPU 0")
        );
        println!(
            "{:<44} ping {}, tools/call {}, on CPU 0 {}",
            "  server's CPU time per request",
            us(ping_cpu),
            us(call_cpu),
            us(one_cpu_cpu)
        );
        let single = pipelined(&mut server, pipelined_calls / 4, 1);
        let window = pipelined(&mut server, pipelined_calls, WINDOW);
        let speedup = window / single;
        println!("{:<44} {single:.0} calls/s", "single in flight");
        println!("{:<44} {window:.0} calls/s", "16 in flight");
        println!(
            "{:<44} {speedup:.2}x single in flight (target >= 1.6x: {})",
            "speed-up",
            met(speedup >= 1.6)
        );
        drop(server);
        println!();
    }

    if wants("budgets") {
        budgets(&calc, sequential_calls, pipelined_calls, &log);
    }

    if wants("telemetry") {
        telemetry(&calc, sequential_calls, &log);
    }

    // One example tool per language.
    if wants("languages") {
        languages(sequential_calls, runs, &log);
    }

    if wants("state") {
        state(sequential_calls, &log);
    }

    if wants("tasks") {
        tasks(sequential_calls / 4, &log);
    }

    // Startup.
    if wants("startup") {
        println!("== startup: spawn -> first tools/list answer ({runs} runs each, 3 for 20 cold)");
        let mut warm20 = Duration::ZERO;
        for copies in [1, 20] {
            let dir = calc_folder(&calc, copies);
            let tools = 6 * copies;
            // Twenty cold compiles take seconds each run: fewer runs.
            let cold_runs = if copies == 1 { runs } else { runs.min(3) };
            let cold: Vec<Duration> = (0..cold_runs)
                .map(|_| {
                    let cache = tempfile::tempdir().unwrap();
                    time_to_first_list(dir.path(), cache.path(), tools, &log)
                })
                .collect();
            summary(&format!("{copies:>2} plugin(s), cold cache"), cold);
            let cache = tempfile::tempdir().unwrap();
            time_to_first_list(dir.path(), cache.path(), tools, &log); // fills it
            let warm: Vec<Duration> = (0..runs)
                .map(|_| time_to_first_list(dir.path(), cache.path(), tools, &log))
                .collect();
            let warm = summary(&format!("{copies:>2} plugin(s), warm cache"), warm);
            if copies == 20 {
                warm20 = warm;
            }
        }
        println!(
            "{:<44} target < 50 ms: {}",
            "20 plugins, warm cache",
            met(warm20 < Duration::from_millis(50))
        );
        println!();
    }

    // Reload.
    if wants("reload") {
        println!("== reload: plugin renamed into place -> notifications/tools/list_changed");
        summary("reload (warm cache)", reload_latency(&calc, runs, &log));
        println!();
    }

    // Fuel.
    if wants("fuel") {
        println!("== fuel overhead: sketch `mandelbrot` 256x256, 1000 iterations, raw wasmtime");
        let arguments = r#"{"width":256,"height":256,"max_iterations":1000}"#;
        let mut medians = Vec::new();
        for fuel in [false, true] {
            let plugin = RawPlugin::new(&sketch, fuel);
            let samples = runtime().block_on(async {
                plugin.call("mandelbrot", arguments).await; // warm-up
                let mut samples = Vec::new();
                for _ in 0..5 {
                    let started = Instant::now();
                    let result = plugin.call("mandelbrot", arguments).await;
                    samples.push(started.elapsed());
                    assert!(!result.is_error);
                }
                samples
            });
            let case = if fuel { "fuel on" } else { "fuel off" };
            medians.push(summary(case, samples));
        }
        println!(
            "{:<44} {:+.1}%",
            "fuel overhead",
            (medians[1].as_secs_f64() / medians[0].as_secs_f64() - 1.0) * 100.0
        );
        println!();
    }
    if wants("wake") {
        wake(sequential_calls);
    }
    println!("bench time: {:.1} s", bench_started.elapsed().as_secs_f64());
}

fn met(yes: bool) -> &'static str {
    if yes { "met" } else { "NOT met" }
}

fn file_kib(path: &PathBuf) -> u64 {
    std::fs::metadata(path).unwrap().len() / 1024
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("model name")?.split(':').nth(1))
                .map(|model| model.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn mem_total() -> String {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("MemTotal:"))
                .and_then(|rest| rest.trim().strip_suffix("kB"))
                .and_then(|kib| kib.trim().parse::<u64>().ok())
        })
        .map_or("unknown".into(), |kib| {
            format!("{:.1} GiB", kib as f64 / (1 << 20) as f64)
        })
}
