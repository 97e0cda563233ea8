//! Metrics, as an operator's Prometheus sees them: Debian's `prometheus`
//! (tests/support/prometheus.rs) scrapes a running Corral every second, over
//! HTTP (`/metrics` on the MCP listener, behind its bearer token) and over
//! stdio (`--metrics ADDR`), and after a known workload the values read back
//! through Prometheus's query API are exactly what the workload did. Also:
//! `promtool check metrics` on the output, `/healthz` and `/readyz` (with a
//! state backend that stops answering), a hostile client that cannot grow
//! the set of series, and the dashboard and alert rules of
//! docs/observability/ checked against what the server exposes.

#[path = "../support/prometheus.rs"]
mod prometheus;
#[path = "../support/redis.rs"]
mod redis;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::http::{Client, HttpServer};
use crate::support::{
    PATIENCE, Server, add_conformance_resources, example, fixture, folder_with, repo_root,
    write_file,
};
use prometheus::{
    Prometheus, check_metrics, check_rules, free_port, http_get, http_get_answer, test_rules,
};
use redis::RedisServer;

/// The legacy revision the sessions of these tests speak.
const REVISION: &str = "2025-11-25";

// ---------------------------------------------------------------------------
// The Prometheus text format, as far as the tests read it

/// One sample of a `/metrics` text.
#[derive(Debug, Clone)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

impl Sample {
    /// The series: its name and labels, as `name{a="1",b="2"}`.
    fn series(&self) -> String {
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(name, value)| format!("{name}={value:?}"))
            .collect();
        format!("{}{{{}}}", self.name, labels.join(","))
    }
}

/// The samples of a text in the Prometheus exposition format (comments
/// and blank lines skipped). Fails on a line it cannot read.
fn parse_samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| parse_sample(line).unwrap_or_else(|| panic!("not a sample line: {line:?}")))
        .collect()
}

fn parse_sample(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = line[..name_end].to_string();
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(after) = rest.strip_prefix('{') {
        rest = after;
        loop {
            rest = rest.trim_start_matches([',', ' ']);
            if let Some(after) = rest.strip_prefix('}') {
                rest = after;
                break;
            }
            let (label, after) = rest.split_once("=\"")?;
            let mut value = String::new();
            let mut chars = after.char_indices();
            let end = loop {
                let (at, c) = chars.next()?;
                match c {
                    '"' => break at,
                    '\\' => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        other => value.push(other),
                    },
                    other => value.push(other),
                }
            };
            labels.insert(label.trim().to_string(), value);
            rest = &after[end + 1..];
        }
    }
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        other => other.parse().ok()?,
    };
    Some(Sample {
        name,
        labels,
        value,
    })
}

/// The metric families a text declares (`# TYPE NAME KIND`), with their kind.
fn families(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            Some((words.next()?.to_string(), words.next()?.to_string()))
        })
        .collect()
}

/// The sum of the samples named `name` whose labels include `labels`.
fn sum_of(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|sample| sample.name == name)
        .filter(|sample| {
            labels
                .iter()
                .all(|(label, value)| sample.labels.get(*label).map(String::as_str) == Some(value))
        })
        .map(|sample| sample.value)
        .sum()
}

/// `/metrics` at `addr` (with `Authorization: Bearer TOKEN` when given):
/// its text; fails on any status but 200.
fn metrics_text(addr: SocketAddr, token: Option<&str>) -> String {
    let authorization = token.map(|token| format!("Bearer {token}"));
    let headers: Vec<(&str, &str)> = authorization
        .iter()
        .map(|value| ("Authorization", value.as_str()))
        .collect();
    let (status, body) =
        http_get(addr, "/metrics", &headers).unwrap_or_else(|err| panic!("GET /metrics: {err}"));
    assert_eq!(status, 200, "GET /metrics: {body}");
    body
}

/// Waits until `/metrics` at `addr` counts `calls` audited calls
/// (`corral_calls_total`, every kind): the audit line, and the metrics
/// with it, may follow the answer by a moment. Returns the moment it did:
/// a scrape begun after it sees the whole workload.
fn wait_until_counted(addr: SocketAddr, token: Option<&str>, calls: f64) -> SystemTime {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let text = metrics_text(addr, token);
        let counted = sum_of(&parse_samples(&text), "corral_calls_total", &[]);
        if counted == calls {
            return SystemTime::now();
        }
        assert!(
            counted < calls && Instant::now() < deadline,
            "corral_calls_total adds up to {counted}, the workload made {calls} calls:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until something accepts connections on `addr`.
fn wait_for_listener(addr: SocketAddr) {
    let deadline = Instant::now() + PATIENCE;
    while TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err() {
        assert!(
            Instant::now() < deadline,
            "nothing listens on {addr} after {PATIENCE:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `/readyz` at `addr` answers 200.
fn wait_until_ready(addr: SocketAddr) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let answer = http_get(addr, "/readyz", &[]);
        if let Ok((200, _)) = answer {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "/readyz never answered 200 within {PATIENCE:?}; last: {answer:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------
// The workload

/// `hostile`'s manifest: limits its calls hit quickly.
const HOSTILE_MANIFEST: &str =
    "[limits]\nfuel = 50_000_000\nmemory = \"32 MiB\"\noutput = \"1 MiB\"\n";

/// The fuel budget of [`HOSTILE_MANIFEST`].
const HOSTILE_FUEL: f64 = 50_000_000.0;

/// `looper`'s: the same plugin, whose loop times out instead.
const LOOPER_MANIFEST: &str = "[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"300 ms\"\n";

/// A folder serving the hostile fixture twice: as `hostile` (fuel, memory
/// and output limits) and as `looper` (a short timeout). Every tool name
/// is then declared by both, so each is served prefixed: `hostile_ok`,
/// `looper_spin`, ... Beside them, `broken.wasm` fails to load.
fn hostile_folder() -> TempDir {
    let folder = folder_with(&[
        ("hostile.wasm", &fixture("hostile")),
        ("looper.wasm", &fixture("hostile")),
    ]);
    write_file(folder.path(), "hostile.toml", HOSTILE_MANIFEST);
    write_file(folder.path(), "looper.toml", LOOPER_MANIFEST);
    // And a file that is no component: a load that fails.
    write_file(folder.path(), "broken.wasm", "not a component");
    folder
}

/// The tools the hostile fixture declares: served twice.
const HOSTILE_TOOLS: f64 = 12.0;

/// One kind of call of the workload, made `times` times.
struct Step {
    plugin: &'static str,
    tool: &'static str,
    arguments: Value,
    /// The audit line's outcome; `None` for a tool nobody serves (the call
    /// never reaches a plugin).
    outcome: Option<&'static str>,
    times: u32,
}

/// The workload: a call of every outcome the sandbox can tell apart
/// without a client's help, some several times.
fn workload() -> Vec<Step> {
    let step = |plugin, tool, arguments, outcome, times| Step {
        plugin,
        tool,
        arguments,
        outcome,
        times,
    };
    vec![
        step("hostile", "hostile_ok", json!({}), Some("ok"), 5),
        // `mib` must be an integer: the schema refuses it, the plugin never runs.
        step(
            "hostile",
            "hostile_huge_output",
            json!({ "mib": "lots" }),
            Some("invalid-arguments"),
            3,
        ),
        step("hostile", "hostile_spin", json!({}), Some("fuel-limit"), 2),
        step("hostile", "hostile_panic", json!({}), Some("trap"), 1),
        step(
            "hostile",
            "hostile_memory_bomb",
            json!({}),
            Some("memory-limit"),
            1,
        ),
        step(
            "hostile",
            "hostile_huge_output",
            json!({ "mib": 2 }),
            Some("output-limit"),
            1,
        ),
        step(
            "hostile",
            "hostile_read_env",
            json!({ "name": "CORRAL_TEST_NO_SUCH_VARIABLE" }),
            Some("error"),
            2,
        ),
        step("looper", "looper_spin", json!({}), Some("timeout"), 1),
        step("", "no_such_tool", json!({}), None, 1),
    ]
}

/// What the workload did, as its client saw it.
#[derive(Default)]
struct Done {
    /// `tools/call` requests sent.
    requests: u32,
    /// Of which answered with a JSON-RPC error.
    errors: u32,
    /// Calls that reached a plugin (an audit line each).
    audited: u32,
}

/// Runs [`workload`] through `call` (a `tools/call` of the tool with the
/// arguments, returning the JSON-RPC response), checking each answer.
fn run_workload(call: &mut dyn FnMut(&str, Value) -> Value) -> Done {
    let mut done = Done::default();
    for step in workload() {
        for _ in 0..step.times {
            let response = call(step.tool, step.arguments.clone());
            done.requests += 1;
            if response.get("error").is_some() {
                done.errors += 1;
            }
            match step.outcome {
                None => assert!(
                    response.get("error").is_some() || response["result"]["isError"] == true,
                    "{}: {response}",
                    step.tool
                ),
                Some("ok") => assert_eq!(
                    response["result"]["isError"], false,
                    "{}: {response}",
                    step.tool
                ),
                Some(_) => assert_eq!(
                    response["result"]["isError"], true,
                    "{}: {response}",
                    step.tool
                ),
            }
            if step.outcome.is_some() {
                done.audited += 1;
            }
        }
    }
    done
}

/// Checks, through Prometheus's queries, everything [`workload`]
/// determines: each tool's calls by outcome, latency, fuel and memory
/// observations, instantiations, requests, plugins and the process.
fn check_workload_counts(prometheus: &Prometheus, done: &Done, started: SystemTime) {
    let value = |promql: &str| {
        prometheus
            .value(promql)
            .unwrap_or_else(|| panic!("no series for {promql}; targets: {}", prometheus.targets()))
    };
    let exactly = |promql: &str, expected: f64| {
        let actual = value(promql);
        assert_eq!(actual, expected, "{promql}");
    };

    // Calls by plugin, tool and outcome.
    let mut by_outcome: BTreeMap<(&str, &str, &str), u32> = BTreeMap::new();
    let mut by_tool: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    let mut ran: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    let mut instantiated: BTreeMap<&str, u32> = BTreeMap::new();
    // Tools whose calls burned fuel that is known: not a timeout's, whose
    // counters go with its dropped run (the audit line says fuel=0 too).
    let mut burned: BTreeSet<(&str, &str)> = BTreeSet::new();
    for step in workload() {
        let Some(outcome) = step.outcome else {
            continue;
        };
        *by_outcome
            .entry((step.plugin, step.tool, outcome))
            .or_default() += step.times;
        *by_tool.entry((step.plugin, step.tool)).or_default() += step.times;
        if outcome != "invalid-arguments" {
            *ran.entry((step.plugin, step.tool)).or_default() += step.times;
            *instantiated.entry(step.plugin).or_default() += step.times;
        }
        if outcome != "invalid-arguments" && outcome != "timeout" {
            burned.insert((step.plugin, step.tool));
        }
    }
    for ((plugin, tool, outcome), times) in &by_outcome {
        exactly(
            &format!(
                "corral_calls_total{{plugin=\"{plugin}\",kind=\"tool\",name=\"{tool}\",outcome=\"{outcome}\"}}"
            ),
            f64::from(*times),
        );
    }
    exactly("sum(corral_calls_total)", f64::from(done.audited));
    exactly("count(corral_calls_total)", by_outcome.len() as f64);
    // The unknown tool is no series: names nobody serves never become labels.
    assert_eq!(
        prometheus.value("count(corral_calls_total{name=\"no_such_tool\"})"),
        None
    );
    for ((plugin, tool), times) in &by_tool {
        let labels = format!("plugin=\"{plugin}\",kind=\"tool\",name=\"{tool}\"");
        exactly(
            &format!("corral_call_duration_seconds_count{{{labels}}}"),
            f64::from(*times),
        );
        exactly(
            &format!("corral_call_duration_seconds_bucket{{{labels},le=\"+Inf\"}}"),
            f64::from(*times),
        );
        let seconds = value(&format!("corral_call_duration_seconds_sum{{{labels}}}"));
        assert!(seconds >= 0.0, "{labels}: {seconds} s");
    }
    for ((plugin, tool), times) in &ran {
        let labels = format!("plugin=\"{plugin}\",kind=\"tool\",name=\"{tool}\"");
        exactly(
            &format!("corral_call_memory_peak_bytes_count{{{labels}}}"),
            f64::from(*times),
        );
    }
    for (plugin, tool) in &burned {
        let labels = format!("plugin=\"{plugin}\",kind=\"tool\",name=\"{tool}\"");
        let fuel = value(&format!("corral_call_fuel_total{{{labels}}}"));
        assert!(fuel > 0.0, "{labels}: fuel {fuel}");
    }
    // A call that ran out of fuel burned all of it.
    exactly(
        "corral_call_fuel_total{plugin=\"hostile\",kind=\"tool\",name=\"hostile_spin\"}",
        2.0 * HOSTILE_FUEL,
    );
    // The memory bomb's peak is the memory limit, give or take a page.
    let bomb = value(
        "corral_call_memory_peak_bytes_sum{plugin=\"hostile\",kind=\"tool\",name=\"hostile_memory_bomb\"}",
    );
    assert!(
        bomb > 16.0 * 1024.0 * 1024.0 && bomb <= 32.0 * 1024.0 * 1024.0,
        "the memory bomb's peak: {bomb} bytes"
    );
    for (plugin, times) in &instantiated {
        exactly(
            &format!("corral_instantiation_duration_seconds_count{{plugin=\"{plugin}\"}}"),
            f64::from(*times),
        );
    }

    // Requests.
    exactly(
        "sum(corral_requests_total{method=\"tools/call\"})",
        f64::from(done.requests),
    );
    exactly(
        "sum(corral_requests_total{method=\"tools/call\",outcome=\"error\"}) or vector(0)",
        f64::from(done.errors),
    );
    exactly(
        "corral_requests_total{method=\"initialize\",outcome=\"ok\"}",
        1.0,
    );
    exactly(
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\"}",
        f64::from(done.requests),
    );
    exactly("corral_requests_in_flight", 0.0);
    exactly("corral_sessions", 1.0);

    // Plugins.
    exactly("corral_plugins", 2.0);
    exactly("corral_tools", 2.0 * HOSTILE_TOOLS);
    for plugin in ["hostile", "looper"] {
        exactly(
            &format!("corral_plugin_loads_total{{plugin=\"{plugin}\",outcome=\"loaded\"}}"),
            1.0,
        );
        exactly(
            &format!("sum(corral_compile_cache_total{{plugin=\"{plugin}\"}})"),
            1.0,
        );
    }
    exactly(
        "corral_plugin_loads_total{plugin=\"broken\",outcome=\"failed\"}",
        1.0,
    );
    exactly("sum(corral_plugin_loads_total{outcome=\"failed\"})", 1.0);

    // The process.
    exactly(
        &format!(
            "corral_build_info{{version=\"{}\"}}",
            env!("CARGO_PKG_VERSION")
        ),
        1.0,
    );
    let rss = value("process_resident_memory_bytes");
    assert!(rss > 1024.0 * 1024.0, "process_resident_memory_bytes {rss}");
    let virtual_memory = value("process_virtual_memory_bytes");
    assert!(
        virtual_memory >= rss,
        "process_virtual_memory_bytes {virtual_memory}"
    );
    let cpu = value("process_cpu_seconds_total");
    assert!(cpu > 0.0, "process_cpu_seconds_total {cpu}");
    let fds = value("process_open_fds");
    assert!(fds > 0.0, "process_open_fds {fds}");
    let start = value("process_start_time_seconds");
    let started = started.duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    assert!(
        start >= started - 2.0 && start <= started + 120.0,
        "process_start_time_seconds {start}, the test started the server at {started}"
    );
}

/// A `tools/call` through a legacy HTTP session: the JSON-RPC response.
/// Counts each answer's HTTP status in `statuses`.
fn http_call(
    client: &mut Client,
    statuses: &mut BTreeMap<u16, u32>,
    tool: &str,
    arguments: Value,
) -> Value {
    let response = client.legacy(
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    );
    *statuses.entry(response.status).or_default() += 1;
    response.answer()
}

// ---------------------------------------------------------------------------
// a. Prometheus scrapes /metrics on the HTTP listener, behind the token

#[test]
fn prometheus_scrapes_the_http_listener_and_the_counts_match_the_workload() {
    let token = "corral-observability-token";
    let folder = hostile_folder();
    let started = SystemTime::now();
    let server = HttpServer::start(folder.path(), &["--bearer-token", token]);
    wait_until_ready(server.addr);
    let prometheus = Prometheus::scraping(server.addr, Some(token));
    // Scraped with the token before any work: the series exist from the start.
    prometheus.wait_for_scrape();

    let mut statuses: BTreeMap<u16, u32> = BTreeMap::new();
    let mut client = server.client();
    client
        .default_headers
        .push(("Authorization".into(), format!("Bearer {token}")));
    client.initialize(REVISION);
    // initialize (200) and notifications/initialized (202).
    *statuses.entry(200).or_default() += 1;
    *statuses.entry(202).or_default() += 1;
    let done =
        run_workload(&mut |tool, arguments| http_call(&mut client, &mut statuses, tool, arguments));
    // One refusal: /metrics without the token.
    let (status, _) = http_get(server.addr, "/metrics", &[]).unwrap();
    assert_eq!(status, 401);

    let counted = wait_until_counted(server.addr, Some(token), f64::from(done.audited));
    prometheus.wait_for_scrape_after(counted);
    check_workload_counts(&prometheus, &done, started);

    // HTTP responses by status: every MCP answer the client got, plus
    // Prometheus's scrapes and the test's own GETs of /metrics (200).
    let responses = |status: u16| {
        prometheus.value(&format!(
            "corral_http_responses_total{{status=\"{status}\"}}"
        ))
    };
    let ok = responses(200).expect("no corral_http_responses_total{status=\"200\"}");
    assert!(
        ok >= f64::from(statuses[&200]),
        "{ok} 200s counted, the client alone got {}",
        statuses[&200]
    );
    assert_eq!(responses(202), Some(f64::from(statuses[&202])));
    assert_eq!(responses(401), Some(1.0));
    assert_eq!(
        prometheus.value("sum(corral_authorization_refusals_total)"),
        Some(1.0),
        "the one GET /metrics without the token"
    );
    assert_eq!(
        prometheus.value("up{job=\"corral\"}"),
        Some(1.0),
        "Prometheus scraped with the token"
    );
}

// ---------------------------------------------------------------------------
// b. Over stdio, through --metrics ADDR

#[test]
fn prometheus_scrapes_a_stdio_server_through_its_metrics_listener() {
    let folder = hostile_folder();
    let metrics: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let started = SystemTime::now();
    let mut server = Server::start_with(folder.path(), &["--metrics", &metrics.to_string()]);
    server.initialize(REVISION);
    wait_for_listener(metrics);
    wait_until_ready(metrics);
    let prometheus = Prometheus::scraping(metrics, None);
    prometheus.wait_for_scrape();

    let done = run_workload(&mut |tool, arguments| {
        server.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    });
    let counted = wait_until_counted(metrics, None, f64::from(done.audited));
    prometheus.wait_for_scrape_after(counted);
    check_workload_counts(&prometheus, &done, started);
    // No HTTP listener serves MCP here: no response of it is counted.
    assert_eq!(
        prometheus.value("sum(corral_http_responses_total) or vector(0)"),
        Some(0.0)
    );
}

// ---------------------------------------------------------------------------
// c. promtool's lint

#[test]
fn promtool_finds_nothing_to_lint_in_the_metrics_after_a_workload() {
    let folder = hostile_folder();
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();
    client.initialize(REVISION);
    let mut statuses = BTreeMap::new();
    let done =
        run_workload(&mut |tool, arguments| http_call(&mut client, &mut statuses, tool, arguments));
    wait_until_counted(server.addr, None, f64::from(done.audited));
    let text = metrics_text(server.addr, None);
    let output = check_metrics(&text);
    assert!(
        output.status.success(),
        "promtool check metrics: {}\n{}{}\n--- the text:\n{text}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // Every family is described and typed; histograms have buckets.
    let families = families(&text);
    for family in families.keys() {
        assert!(
            text.contains(&format!("# HELP {family} ")),
            "{family} has no HELP line"
        );
    }
    for histogram in [
        "corral_call_duration_seconds",
        "corral_call_memory_peak_bytes",
        "corral_instantiation_duration_seconds",
        "mcp_server_operation_duration_seconds",
    ] {
        assert_eq!(
            families.get(histogram).map(String::as_str),
            Some("histogram"),
            "{histogram}"
        );
    }
    for counter in families
        .iter()
        .filter(|(_, kind)| *kind == "counter")
        .map(|(name, _)| name)
    {
        assert!(counter.ends_with("_total"), "counter {counter}");
    }
}

// ---------------------------------------------------------------------------
// d. Who may read the metrics; health and readiness

#[test]
fn metrics_need_the_token_and_health_does_not() {
    let token = "corral-observability-token";
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let side: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let server = HttpServer::start(
        folder.path(),
        &["--bearer-token", token, "--metrics", &side.to_string()],
    );
    // Alive at once, without the token.
    let (status, body) = http_get(server.addr, "/healthz", &[]).unwrap();
    assert_eq!((status, body.trim()), (200, "ok"));
    wait_until_ready(server.addr);

    let get = |path: &str, authorization: Option<&str>| {
        let headers: Vec<(&str, &str)> = authorization
            .map(|value| ("Authorization", value))
            .into_iter()
            .collect();
        http_get(server.addr, path, &headers).unwrap()
    };
    assert_eq!(get("/metrics", None).0, 401);
    assert_eq!(get("/metrics", Some("Bearer not-the-token")).0, 401);
    assert_eq!(get("/metrics", Some(&format!("Basic {token}"))).0, 401);
    let (status, text) = get("/metrics", Some(&format!("Bearer {token}")));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("corral_build_info"), "{text}");
    for path in ["/healthz", "/readyz"] {
        let (status, body) = get(path, None);
        assert_eq!(status, 200, "{path}: {body}");
        // A wrong token does not matter either.
        assert_eq!(get(path, Some("Bearer not-the-token")).0, 200, "{path}");
    }

    // The separate listener asks for nothing: its address is the operator's to keep inside.
    wait_for_listener(side);
    for path in ["/metrics", "/healthz", "/readyz"] {
        let (status, body) = http_get(side, path, &[]).unwrap();
        assert_eq!(status, 200, "{path} on --metrics: {body}");
    }
    let answer = http_get_answer(side, "/metrics", &[]).unwrap();
    assert!(answer.body.contains("corral_build_info"), "{}", answer.body);
    // The text format's media type, as scrapers negotiate it.
    assert_eq!(
        answer.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    // And it serves nothing else: no MCP there.
    let (status, _) = http_get(side, "/mcp", &[]).unwrap();
    assert_eq!(status, 404);
}

#[test]
fn readiness_follows_the_state_backend() {
    let mut redis = RedisServer::start();
    let folder = folder_with(&[("tally.wasm", &example("tally"))]);
    std::fs::copy(
        repo_root().join("plugins/tally/tally.toml"),
        folder.path().join("tally.toml"),
    )
    .unwrap();
    let server = HttpServer::start(folder.path(), &["--state", &redis.url()]);
    wait_until_ready(server.addr);

    // Redis stops answering: not ready (within a bound), still alive.
    redis.pause();
    let deadline = Instant::now() + PATIENCE;
    let reason = loop {
        let (status, body) = http_get(server.addr, "/readyz", &[]).unwrap();
        if status == 503 {
            break body;
        }
        assert_eq!(status, 200, "{body}");
        assert!(
            Instant::now() < deadline,
            "/readyz still 200 {PATIENCE:?} after Redis stopped answering"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // Why: the store's error, or that it did not answer in time.
    assert!(
        reason.starts_with("not ready: ") && reason.len() > "not ready: ".len(),
        "the 503 does not say why: {reason:?}"
    );
    let (status, body) = http_get(server.addr, "/healthz", &[]).unwrap();
    assert_eq!((status, body.trim()), (200, "ok"));

    // Back: ready again.
    redis.resume();
    wait_until_ready(server.addr);
    redis.stop();
}

// ---------------------------------------------------------------------------
// e. A hostile client cannot grow the metrics

/// How many of each kind the hostile round sends.
const HOSTILE_ROUND: usize = 10_000;

/// The most messages a batch may hold (docs/protocol.md).
const BATCH: usize = 256;

/// A batch of `count` requests from `make(i)` (method and params), sent
/// in a 2025-03-26 session; checks every request was answered.
fn batches(client: &mut Client, count: usize, make: &dyn Fn(usize) -> (String, Value)) {
    let mut next = 0;
    while next < count {
        let end = (next + BATCH).min(count);
        let batch: Vec<Value> = (next..end)
            .map(|i| {
                let (method, params) = make(i);
                json!({ "jsonrpc": "2.0", "id": i, "method": method, "params": params })
            })
            .collect();
        let response = client.post(&Value::Array(batch), &[]);
        assert_eq!(response.status, 200, "{}", response.text());
        let answer = response.answer();
        let answers = answer
            .as_array()
            .unwrap_or_else(|| panic!("not a batch's answer: {answer}"));
        assert_eq!(answers.len(), end - next, "{answer}");
        next = end;
    }
}

/// One round of a hostile client: `count` calls of distinct tools nobody
/// serves, reads of `count` distinct URIs of the fixture's template (each
/// runs the plugin) and `count` of URIs nobody serves, `count` distinct
/// methods nobody knows, gets of `count` distinct unknown prompts, and
/// `count` sessions started and ended.
/// `offset` keeps the names of each round distinct from the others'.
fn hostile_round(server: &HttpServer, count: usize, offset: usize) {
    let mut client = server.client();
    client.initialize("2025-03-26");
    batches(&mut client, count, &|i| {
        let name = format!("no_such_tool_{}", offset + i);
        (
            "tools/call".into(),
            json!({ "name": name, "arguments": {} }),
        )
    });
    batches(&mut client, count, &|i| {
        let uri = format!("test://template/{}/data", offset + i);
        ("resources/read".into(), json!({ "uri": uri }))
    });
    batches(&mut client, count, &|i| {
        let uri = format!("nobody://here/{}", offset + i);
        ("resources/read".into(), json!({ "uri": uri }))
    });
    batches(&mut client, count, &|i| {
        let method = format!("no/such/method/{}", offset + i);
        (method, json!({}))
    });
    batches(&mut client, count, &|i| {
        let name = format!("no_such_prompt_{}", offset + i);
        ("prompts/get".into(), json!({ "name": name }))
    });
    let ended = client.send(
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", &client.session.clone().unwrap()),
            ("MCP-Protocol-Version", "2025-03-26"),
        ],
        b"",
    );
    assert!(ended.status < 300, "DELETE: {}", ended.text());

    let mut sessions = server.client();
    for _ in 0..count {
        sessions.session = None;
        sessions.session_version = None;
        let id = sessions.id();
        let started = sessions.post(
            &json!({
                "jsonrpc": "2.0", "id": id, "method": "initialize",
                "params": {
                    "protocolVersion": REVISION,
                    "capabilities": {},
                    "clientInfo": { "name": "corral-hostile", "version": "1" },
                },
            }),
            &[],
        );
        assert_eq!(started.status, 200, "{}", started.text());
        let session = started.header("mcp-session-id").unwrap().to_string();
        let ended = sessions.send(
            "DELETE",
            "/mcp",
            &[
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", REVISION),
            ],
            b"",
        );
        assert!(ended.status < 300, "DELETE: {}", ended.text());
    }
}

/// The series of a `/metrics` text, without their values.
fn series_of(text: &str) -> BTreeSet<String> {
    parse_samples(text).iter().map(Sample::series).collect()
}

#[test]
fn a_hostile_client_cannot_grow_the_metrics() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    add_conformance_resources(folder.path(), "documents");
    // Reads run the plugin: no limit of its may refuse one, or the refusal
    // would be a new outcome, not a new name.
    std::fs::write(
        folder.path().join("documents.toml"),
        format!(
            "{}[limits]\nconcurrency = 1024\nrate = 1_000_000\nburst = 1_000_000\n",
            support_manifest()
        ),
    )
    .unwrap();
    let server = HttpServer::start(folder.path(), &["--global-rate", "1000000"]);
    wait_until_ready(server.addr);

    let started = Instant::now();
    hostile_round(&server, 10, 0);
    let warm = metrics_text(server.addr, None);
    let before = series_of(&warm);
    hostile_round(&server, HOSTILE_ROUND, 1_000_000);
    let after_text = metrics_text(server.addr, None);
    let after = series_of(&after_text);
    let elapsed = started.elapsed();

    let grown: Vec<&String> = after.difference(&before).collect();
    let gone: Vec<&String> = before.difference(&after).collect();
    assert!(
        grown.is_empty() && gone.is_empty(),
        "after {HOSTILE_ROUND} distinct tool names, URIs, methods, prompts and sessions the \
         series changed: new {grown:#?}, gone {gone:#?}"
    );
    // The round did reach the server: reads ran the plugin, sessions came and went.
    let samples = parse_samples(&after_text);
    let reads = sum_of(
        &samples,
        "corral_calls_total",
        &[("plugin", "documents"), ("kind", "resource")],
    );
    assert_eq!(
        reads,
        (10 + HOSTILE_ROUND) as f64,
        "reads of the template counted"
    );
    assert_eq!(sum_of(&samples, "corral_sessions", &[]), 0.0);
    let initialized = sum_of(
        &samples,
        "corral_requests_total",
        &[("method", "initialize")],
    );
    assert_eq!(initialized, (2 + 10 + HOSTILE_ROUND) as f64);
    // Methods nobody knows are all `other`.
    let other = sum_of(&samples, "corral_requests_total", &[("method", "other")]);
    assert_eq!(other, (10 + HOSTILE_ROUND) as f64);
    eprintln!(
        "{} series before and after; the rounds took {elapsed:?}",
        after.len()
    );
}

/// The manifest the conformance-resources fixture needs.
fn support_manifest() -> &'static str {
    crate::support::CONFORMANCE_RESOURCES_MANIFEST
}

// ---------------------------------------------------------------------------
// The operator's dashboard and alert rules

/// Every name in `text` that looks like one of Corral's metrics
/// (`corral_*`, `process_*`, `mcp_server_*`; never a label such as
/// `mcp_method_name`).
fn metric_names_in(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = text.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b':';
    let mut i = 0;
    while i < bytes.len() {
        if is_name(bytes[i]) && (i == 0 || !is_name(bytes[i - 1])) {
            let start = i;
            while i < bytes.len() && is_name(bytes[i]) {
                i += 1;
            }
            let word = &text[start..i];
            if ["corral_", "process_", "mcp_server_"]
                .iter()
                .any(|prefix| word.starts_with(prefix))
            {
                names.insert(word.to_string());
            }
        } else {
            i += 1;
        }
    }
    names
}

/// Every PromQL expression of a Grafana dashboard: each panel's targets'
/// `expr` (nested rows included) and each variable's query (`definition`).
fn dashboard_queries(value: &Value, queries: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for key in ["expr", "definition"] {
                if let Some(Value::String(query)) = object.get(key) {
                    queries.push(query.clone());
                }
            }
            for child in object.values() {
                dashboard_queries(child, queries);
            }
        }
        Value::Array(items) => {
            for item in items {
                dashboard_queries(item, queries);
            }
        }
        _ => {}
    }
}

/// The alert rules' own unit tests (docs/observability/alerts.test.yml):
/// each alert fires on the series it is meant for, with its labels and
/// annotations, and the ones it is not meant for stay quiet.
#[test]
fn the_alert_rules_fire_on_what_they_are_for() {
    let tests = repo_root().join("docs/observability/alerts.test.yml");
    let output = test_rules(&tests);
    assert!(
        output.status.success(),
        "promtool test rules {}: {}\n{}{}",
        tests.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // Every alert has a test.
    let rules = std::fs::read_to_string(repo_root().join("docs/observability/alerts.yml")).unwrap();
    let tested = std::fs::read_to_string(&tests).unwrap();
    for alert in rules
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- alert: "))
    {
        assert!(
            tested.contains(&format!("alertname: {alert}\n")),
            "alerts.test.yml does not test {alert}"
        );
    }
}

/// Families a server exposes only when something rare happened: a full
/// OTLP export queue, a family past its cap. The dashboard and the alert
/// rules may name them without the workload producing them, as long as
/// docs/observability.md describes them.
const RARE: [&str; 3] = [
    "corral_trace_spans_dropped_total",
    "corral_trace_export_failures_total",
    "corral_metric_series_overflow_total",
];

/// A server after a workload that touches every metric the dashboard and
/// the alert rules name: the hostile fixture's outcomes, state on SQLite
/// (tally), a refused token, a batch over its budget.
struct Exposed {
    server: HttpServer,
    token: &'static str,
    /// `/metrics` after the workload.
    text: String,
    /// The state file's folder, kept while the server runs.
    _data: TempDir,
    _folder: TempDir,
}

fn exposed_after_a_full_workload() -> Exposed {
    let token = "corral-observability-token";
    let folder = hostile_folder();
    std::fs::copy(example("tally"), folder.path().join("tally.wasm")).unwrap();
    std::fs::copy(
        repo_root().join("plugins/tally/tally.toml"),
        folder.path().join("tally.toml"),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let state = format!("sqlite:{}", data.path().join("state.db").display());
    let server = HttpServer::start(folder.path(), &["--bearer-token", token, "--state", &state]);
    wait_until_ready(server.addr);
    let mut client = server.client();
    client
        .default_headers
        .push(("Authorization".into(), format!("Bearer {token}")));
    client.initialize("2025-03-26");
    let mut statuses = BTreeMap::new();
    let done =
        run_workload(&mut |tool, arguments| http_call(&mut client, &mut statuses, tool, arguments));
    let added = client.legacy(
        "tools/call",
        json!({ "name": "tally_add", "arguments": { "key": "visits", "by": 1 } }),
    );
    assert_eq!(
        added.answer()["result"]["isError"],
        false,
        "{}",
        added.text()
    );
    // A batch over its budget.
    let too_many: Vec<Value> = (0..=BATCH)
        .map(|i| json!({ "jsonrpc": "2.0", "id": i, "method": "ping" }))
        .collect();
    client.post(&Value::Array(too_many), &[]);
    // A request without the token.
    let (status, _) = http_get(server.addr, "/metrics", &[]).unwrap();
    assert_eq!(status, 401);
    wait_until_counted(server.addr, Some(token), f64::from(done.audited) + 1.0);
    let text = metrics_text(server.addr, Some(token));
    Exposed {
        server,
        token,
        text,
        _data: data,
        _folder: folder,
    }
}

/// A dashboard query as Grafana sends it: its variables replaced (every
/// job, instance and plugin; a one-minute rate window).
fn as_grafana_sends(query: &str) -> String {
    // A variable's `label_values(SELECTOR, LABEL)` is Grafana's: it asks
    // Prometheus for the label's values among the selector's series.
    let query = match query
        .strip_prefix("label_values(")
        .and_then(|rest| rest.strip_suffix(')'))
        .and_then(|inner| inner.rsplit_once(','))
    {
        Some((selector, label)) => format!("count by ({}) ({selector})", label.trim()),
        None => query.to_string(),
    };
    query
        .replace("$__rate_interval", "1m")
        .replace("$job", ".*")
        .replace("$instance", ".*")
        .replace("$plugin", ".*")
}

#[test]
fn the_dashboard_and_alert_rules_name_only_metrics_the_server_exposes() {
    let dir = repo_root().join("docs/observability");
    let rules = dir.join("alerts.yml");
    let output = check_rules(&rules);
    assert!(
        output.status.success(),
        "promtool check rules {}: {}\n{}{}",
        rules.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let rules_text = std::fs::read_to_string(&rules).unwrap();
    let in_rules = metric_names_in(&rules_text);

    let dashboard_file = dir.join("corral-dashboard.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&dashboard_file).unwrap())
        .unwrap_or_else(|err| panic!("{}: not JSON: {err}", dashboard_file.display()));
    assert_eq!(dashboard["__inputs"][0]["name"], "DS_PROMETHEUS");
    let mut queries = Vec::new();
    dashboard_queries(&dashboard, &mut queries);
    assert!(
        queries.len() >= 20,
        "only {} queries in the dashboard",
        queries.len()
    );
    let in_dashboard = metric_names_in(&queries.join("\n"));

    let exposed_server = exposed_after_a_full_workload();
    let text = &exposed_server.text;
    let mut exposed: BTreeSet<String> = families(text).into_keys().collect();
    exposed.extend(parse_samples(text).into_iter().map(|sample| sample.name));

    let docs = std::fs::read_to_string(repo_root().join("docs/observability.md")).unwrap();
    let documented = metric_names_in(&docs);
    let mut unknown: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for (place, names) in [
        ("the dashboard", &in_dashboard),
        ("the alert rules", &in_rules),
    ] {
        let missing: Vec<&String> = names
            .iter()
            .filter(|name| !exposed.contains(*name))
            .filter(|name| !(RARE.contains(&name.as_str()) && documented.contains(*name)))
            .collect();
        if !missing.is_empty() {
            unknown.insert(place, missing);
        }
    }
    // Every family the server exposes is in the guide.
    let undocumented: Vec<String> = families(text)
        .into_keys()
        .filter(|family| !documented.contains(family))
        .collect();
    assert!(
        unknown.is_empty() && undocumented.is_empty(),
        "names the server does not expose: {unknown:#?}; families missing from \
         docs/observability.md: {undocumented:#?}\n--- exposed:\n{text}"
    );

    // Prometheus runs every dashboard query and evaluates every rule
    // against the server: each query is valid PromQL and shows something
    // (but the rare families'), and no rule fails to evaluate.
    let prometheus = Prometheus::start(
        exposed_server.server.addr,
        Some(exposed_server.token),
        Some(&rules),
    );
    // Two scrapes after the workload: a rate has two samples.
    prometheus.wait_for_scrape();
    prometheus.wait_for_scrape();
    let mut empty = Vec::new();
    for query in &queries {
        let sent = as_grafana_sends(query);
        let data = prometheus.query(&sent);
        let shows_nothing = data["result"].as_array().is_none_or(Vec::is_empty);
        let only_rare = metric_names_in(query)
            .iter()
            .all(|name| RARE.contains(&name.as_str()));
        if shows_nothing && !only_rare {
            empty.push(sent);
        }
    }
    assert!(
        empty.is_empty(),
        "dashboard queries that show nothing after the workload: {empty:#?}"
    );
    let deadline = Instant::now() + PATIENCE;
    loop {
        let groups = prometheus.rules();
        let all: Vec<&Value> = groups
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|group| group["rules"].as_array().unwrap())
            .collect();
        assert!(all.len() >= 10, "{groups}");
        let unhealthy: Vec<&&Value> = all.iter().filter(|rule| rule["health"] == "err").collect();
        assert!(unhealthy.is_empty(), "rules that fail: {unhealthy:#?}");
        if all.iter().all(|rule| rule["health"] == "ok") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "rules never all evaluated: {groups}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
