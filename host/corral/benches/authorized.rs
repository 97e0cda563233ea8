//! What authorization costs a call: a stateless `tools/call` of calc's
//! `add` over HTTP to a server that validates OAuth access tokens, against
//! the same call to a server without authorization (the floor), both
//! serving the same plugin on this machine, measured in alternating rounds
//! of the same run so that the machine's noise falls on both alike.
//!
//! Two authorized cases: one token for every call (a client's usual way;
//! after its first call the token is found in the validated-token cache),
//! and a new token for every call (each one's ES256 signature checked
//! against the issuer's cached keys). The goal for the first: at most 5%
//! more than the floor (docs/benchmarks.md).
//!
//! Run with `cargo bench -p corral --bench authorized` (after
//! `scripts/setup`). Environment: `AUTH_CALLS` (calls per round, default
//! 300), `AUTH_ROUNDS` (default 10).

#[path = "../../../tests/support/http.rs"]
mod http;
#[path = "../../../tests/support/issuer.rs"]
mod issuer;
#[path = "../../../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::json;

use http::{Client, HttpServer};
use issuer::{Issuer, Jwks};

const RESOURCE: &str = "https://mcp.example.com/mcp";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// One stateless call of `add`, checked, and how long it took.
fn call(client: &mut Client, i: usize, token: Option<&str>) -> Duration {
    if let Some(token) = token {
        client.default_headers = vec![("Authorization".into(), format!("Bearer {token}"))];
    }
    let started = Instant::now();
    let response = client.stateless(
        "tools/call",
        json!({"name": "add", "arguments": {"a": i, "b": 1}}),
    );
    let took = started.elapsed();
    assert_eq!(response.status, 200, "{}", response.text());
    let answer = response.answer();
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert_eq!(text, (i + 1).to_string(), "{answer}");
    took
}

struct Case {
    name: &'static str,
    samples: Vec<Duration>,
    /// CPU time its server spent on its calls.
    cpu: Duration,
}

/// CPU time the process `pid` has run so far, summed over its threads (the
/// first field of each `/proc/PID/task/TID/schedstat`, in nanoseconds): a
/// figure the machine's noise moves far less than latency.
fn cpu_time(pid: u32) -> Duration {
    let nanos: u64 = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|entry| {
            let tid = entry.ok()?.file_name();
            let stat =
                std::fs::read_to_string(format!("/proc/{pid}/task/{}/schedstat", tid.to_str()?))
                    .ok()?;
            stat.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum();
    Duration::from_nanos(nanos)
}

impl Case {
    fn p50(&mut self) -> Duration {
        self.samples.sort();
        self.samples[self.samples.len() / 2]
    }

    fn mean(&self) -> Duration {
        self.samples.iter().sum::<Duration>() / self.samples.len() as u32
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let calls = env_usize("AUTH_CALLS", 300);
    let rounds = env_usize("AUTH_ROUNDS", 10);
    let folder = support::folder_with(&[("calc.wasm", &support::example("calc"))]);
    // Calls are measured, not refused: the plugin's rate limit and the
    // server's are lifted.
    std::fs::write(
        folder.path().join("calc.toml"),
        "[limits]\nrate = 1000000\n",
    )
    .unwrap();
    let unthrottled = ["--global-rate", "1000000"];
    let issuer = Issuer::start(Jwks::Honest);
    let token = issuer.token(RESOURCE, "alice", "");
    let mut floor = Case {
        name: "no authorization (floor)",
        samples: Vec::new(),
        cpu: Duration::ZERO,
    };
    let mut cached = Case {
        name: "one token, cached after its first call",
        samples: Vec::new(),
        cpu: Duration::ZERO,
    };
    let mut fresh = Case {
        name: "a new token each call (signature checked)",
        samples: Vec::new(),
        cpu: Duration::ZERO,
    };
    for round in 0..rounds {
        // New servers each round, so that neither process's luck (its
        // placement, its allocator's state) favours one case throughout.
        let open = HttpServer::start(folder.path(), &unthrottled);
        let authorized = HttpServer::start(
            folder.path(),
            &[
                &unthrottled[..],
                &["--resource", RESOURCE, "--oauth-issuer", &issuer.url],
            ]
            .concat(),
        );
        let mut open_client = open.client();
        let mut cached_client = authorized.client();
        let mut fresh_client = authorized.client();
        // Warm: compiled plugin, open connections, keys fetched, token cached.
        for i in 0..100 {
            call(&mut open_client, i, None);
            call(&mut cached_client, i, Some(&token));
        }
        let tokens: Vec<String> = (0..calls)
            .map(|n| issuer.token(RESOURCE, &format!("user-{round}-{n}"), ""))
            .collect();
        // Alternate which case goes first, so neither always runs warm.
        let order: [usize; 3] = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
        for case in order {
            let pid = if case == 0 {
                open.server.pid()
            } else {
                authorized.server.pid()
            };
            let cpu_before = cpu_time(pid);
            for (i, fresh_token) in tokens.iter().enumerate() {
                match case {
                    0 => floor.samples.push(call(&mut open_client, i, None)),
                    1 => cached
                        .samples
                        .push(call(&mut cached_client, i, Some(&token))),
                    _ => fresh
                        .samples
                        .push(call(&mut fresh_client, i, Some(fresh_token))),
                }
            }
            let spent = cpu_time(pid) - cpu_before;
            match case {
                0 => floor.cpu += spent,
                1 => cached.cpu += spent,
                _ => fresh.cpu += spent,
            }
        }
    }
    let (floor_p50, floor_mean) = (floor.p50(), floor.mean());
    let floor_cpu = floor.cpu;
    println!(
        "corral authorization bench: stateless tools/call of calc add over HTTP, {rounds} rounds of {calls} calls per case"
    );
    for case in [&mut floor, &mut cached, &mut fresh] {
        let (p50, mean) = (case.p50(), case.mean());
        let cpu_per_call = case.cpu.as_secs_f64() / case.samples.len() as f64;
        println!(
            "  {:<43} p50 {:>6.1} us  mean {:>6.1} us  server CPU/call {:>6.1} us  ratios: p50 {:.3}  mean {:.3}  CPU {:.3}",
            case.name,
            p50.as_secs_f64() * 1e6,
            mean.as_secs_f64() * 1e6,
            cpu_per_call * 1e6,
            p50.as_secs_f64() / floor_p50.as_secs_f64(),
            mean.as_secs_f64() / floor_mean.as_secs_f64(),
            case.cpu.as_secs_f64() / floor_cpu.as_secs_f64(),
        );
    }
    let latency = cached.p50().as_secs_f64() / floor_p50.as_secs_f64();
    let cpu = cached.cpu.as_secs_f64() / floor_cpu.as_secs_f64();
    let met = |ratio: f64| if ratio <= 1.05 { "met" } else { "NOT met" };
    println!(
        "  authorized (cached token) / floor: p50 latency {latency:.3} ({}), server CPU {cpu:.3} ({}); target <= 1.05",
        met(latency),
        met(cpu)
    );
}
