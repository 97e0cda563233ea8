//! Plugins that remember (issue 26): `wasi:keyvalue` served from a real
//! SQLite file, driven through the real binary with the real `tally`
//! example and the `hostile-state` fixture. Each test has its own folder and
//! its own store file (`--state sqlite:PATH`).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Server, example, first_text, fixture, test_cache_dir, write_file};

/// A plugin folder and a store file of the test's own.
struct Setup {
    dir: tempfile::TempDir,
    store: PathBuf,
}

impl Setup {
    /// `plugins`: (stem, built plugin, manifest text or none).
    fn new(plugins: &[(&str, &Path, Option<&str>)]) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        for (stem, wasm, manifest) in plugins {
            std::fs::copy(wasm, dir.path().join(format!("{stem}.wasm"))).unwrap();
            if let Some(manifest) = manifest {
                write_file(dir.path(), &format!("{stem}.toml"), manifest);
            }
        }
        let store = dir.path().join("store/state.sqlite");
        Setup { dir, store }
    }

    fn state_flag(&self) -> String {
        format!("sqlite:{}", self.store.display())
    }

    fn serve(&self) -> Server {
        let mut server = Server::start_with(self.dir.path(), &["--state", &self.state_flag()]);
        server.initialize("2025-06-18");
        server
    }

    /// `corral ARGS... --state sqlite:PATH` (with DIR where `{dir}` stands).
    fn corral(&self, args: &[&str]) -> std::process::Output {
        let dir = self.dir.path().to_str().unwrap();
        Command::new(env!("CARGO_BIN_EXE_corral"))
            .args(
                args.iter()
                    .map(|arg| if *arg == "{dir}" { dir } else { arg }),
            )
            .args(["--state", &self.state_flag()])
            .env("CORRAL_CACHE_DIR", test_cache_dir())
            .output()
            .unwrap()
    }
}

const TALLY: &str = "[state]\nbuckets = [\"default\"]\nquota = \"1 MiB\"\n";

/// Calls sent at once in a burst: fewer than TALLY_BURST's concurrency, so
/// that none is refused however slowly the machine runs them.
const BURST: usize = 200;

/// TALLY with room for a burst of calls at once.
const TALLY_BURST: &str = "[state]\nbuckets = [\"default\"]\nquota = \"1 MiB\"\n\n[limits]\nconcurrency = 256\nrate = 1000\nburst = 1000\n";

fn tally() -> (&'static str, PathBuf, Option<&'static str>) {
    ("tally", example("tally"), Some(TALLY))
}

/// Sends `count` calls of `tally_add` (by 1) to `key` without waiting;
/// returns their ids.
fn send_adds(server: &mut Server, count: usize, key: &str) -> Vec<Value> {
    (0..count)
        .map(|_| {
            server.send_request(
                "tools/call",
                json!({"name": "tally_add", "arguments": {"key": key, "by": 1}}),
            )
        })
        .collect()
}

fn total(result: &Value) -> u64 {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"]["total"]
        .as_u64()
        .unwrap_or_else(|| panic!("no total: {result}"))
}

#[test]
fn counts_survive_a_restart_and_corral_state_shows_and_clears_them() {
    let (name, wasm, manifest) = tally();
    let setup = Setup::new(&[(name, &wasm, manifest)]);
    let mut server = setup.serve();
    assert_eq!(
        total(&server.call("tally_add", json!({"key": "apples", "by": 2}))),
        2
    );
    assert_eq!(
        total(&server.call("tally_add", json!({"key": "apples", "by": 3}))),
        5
    );
    drop(server);

    let mut server = setup.serve();
    let result = server.call("tally_add", json!({"key": "apples", "by": 1}));
    assert_eq!(total(&result), 6);
    assert_eq!(first_text(&result), "apples: 6");
    drop(server);

    // And from another command of the same folder and store.
    let output = setup.corral(&["state", "list", "{dir}", "tally"]);
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(listed.contains("default/apples  6"), "{listed}");
    let output = setup.corral(&["state", "get", "{dir}", "tally", "apples"]);
    assert_eq!(output.stdout, b"6");
    let output = setup.corral(&["state", "clear", "{dir}", "tally"]);
    assert!(output.status.success(), "{output:?}");
    let output = setup.corral(&["call", "{dir}", "tally_get", r#"{"key": "apples"}"#]);
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(total(&result), 0);
}

/// Two plugins opening `default` never see each other's keys: the
/// namespace is the plugin's name, chosen by the host.
#[test]
fn two_plugins_with_the_same_bucket_never_share_keys() {
    let wasm = example("tally");
    let setup = Setup::new(&[("tally", &wasm, Some(TALLY)), ("other", &wasm, Some(TALLY))]);
    let mut server = setup.serve();
    let names = server.tool_names();
    // The second copy's tools are renamed; find both add tools.
    let adds: Vec<String> = names
        .into_iter()
        .filter(|n| n.ends_with("tally_add"))
        .collect();
    assert_eq!(adds.len(), 2, "{adds:?}");
    assert_eq!(
        total(&server.call(&adds[0], json!({"key": "k", "by": 5}))),
        5
    );
    assert_eq!(
        total(&server.call(&adds[1], json!({"key": "k", "by": 7}))),
        7
    );
    assert_eq!(total(&server.call(&adds[0], json!({"key": "k"}))), 6);
    let output = setup.corral(&["state", "list", "{dir}"]);
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(
        listed.contains("other  1 keys") && listed.contains("tally  1 keys"),
        "{listed}"
    );
}

/// 200 calls at once on one stdio session, each adding 1: exactly 200.
#[test]
fn two_hundred_concurrent_increments_end_at_exactly_200() {
    let setup = Setup::new(&[("tally", &example("tally"), Some(TALLY_BURST))]);
    let mut server = setup.serve();
    let ids = send_adds(&mut server, BURST, "hits");
    let responses = server.responses_to(&ids);
    let mut totals: Vec<u64> = responses.iter().map(|r| total(&r["result"])).collect();
    totals.sort_unstable();
    assert_eq!(
        totals,
        (1..=200).collect::<Vec<_>>(),
        "each call saw its own total"
    );
    assert_eq!(
        total(&server.call("tally_get", json!({"key": "hits"}))),
        200
    );
}

/// A server killed with SIGKILL in a burst of writes keeps every write it
/// acknowledged, and its store stays readable.
#[test]
fn a_sigkill_in_a_burst_of_writes_loses_no_acknowledged_write() {
    let setup = Setup::new(&[("tally", &example("tally"), Some(TALLY_BURST))]);
    let mut server = setup.serve();
    let ids = send_adds(&mut server, BURST, "burst");
    // Read some acknowledgements, then kill while the rest are running.
    let mut acknowledged = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while acknowledged < 50 && Instant::now() < deadline {
        if let Some(message) = server.recv_within(Duration::from_secs(5))
            && ids.contains(&message["id"])
        {
            acknowledged = acknowledged.max(total(&message["result"]));
        }
    }
    assert!(acknowledged >= 50, "only {acknowledged} acknowledged");
    sigkill(server.pid());
    drop(server);

    let mut server = setup.serve();
    let after = total(&server.call("tally_get", json!({"key": "burst"})));
    assert!(
        after >= acknowledged,
        "acknowledged a total of {acknowledged}, found {after} after SIGKILL"
    );
    assert!(after <= BURST as u64);
    assert_eq!(
        total(&server.call("tally_add", json!({"key": "burst"}))),
        after + 1
    );
}

/// SIGKILL, with no chance to flush anything.
fn sigkill(pid: u32) {
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_plugin_importing_keyvalue_without_a_state_grant_is_refused_at_load() {
    let setup = Setup::new(&[
        ("hostile-state", &fixture("hostile-state"), None),
        ("tally", &example("tally"), Some(TALLY)),
    ]);
    let output = setup.corral(&["list", "{dir}"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("imports `wasi:keyvalue/store@0.2.0-draft`, which needs a grant in its manifest: [state] buckets = [\"default\"]"),
        "{stderr}"
    );
    // The plugin with the grant loads and serves.
    assert!(String::from_utf8_lossy(&output.stdout).contains("tally_add"));
}

/// A hostile plugin with a small quota: many small keys, one huge value,
/// an endless listing and a bucket it was not granted all end in errors it
/// can read, the store keeps what it had, and the server keeps answering.
#[test]
fn quota_size_and_operation_bounds_refuse_and_keep_the_store_intact() {
    let manifest = "[state]\nbuckets = [\"default\"]\nquota = \"8 KiB\"\nvalue-limit = \"2 KiB\"\n";
    let setup = Setup::new(&[("hostile-state", &fixture("hostile-state"), Some(manifest))]);
    let mut server = setup.serve();
    let text = |server: &mut Server, tool: &str, arguments: Value| {
        first_text(&server.call(tool, arguments)).to_string()
    };
    assert_eq!(
        text(&mut server, "set", json!({"key": "keep", "value": "me"})),
        "ok"
    );

    let many = text(&mut server, "many_keys", json!({"count": 100_000}));
    assert!(
        many.contains("state quota of 8 KiB exceeded") && many.contains("[state] quota"),
        "{many}"
    );
    let huge = text(&mut server, "huge_value", json!({"bytes": 3000}));
    assert!(huge.contains("value limit ([state] value-limit"), "{huge}");
    let endless = text(&mut server, "list_forever", json!({}));
    assert!(
        endless.contains("more than 10000 state operations"),
        "{endless}"
    );
    let denied = text(&mut server, "open", json!({"bucket": "secret"}));
    assert!(denied.contains("may not open bucket `secret`"), "{denied}");
    let long_key = text(
        &mut server,
        "set",
        json!({"key": "k".repeat(1025), "value": "v"}),
    );
    assert!(long_key.contains("longer than 1024 bytes"), "{long_key}");
    let batch = text(&mut server, "set_many", json!({"count": 1001}));
    assert!(batch.contains("more than 1000"), "{batch}");

    // What was stored before is still there, within the quota.
    assert_eq!(text(&mut server, "get", json!({"key": "keep"})), "me");
    let output = setup.corral(&["state", "list", "{dir}"]);
    let listed = String::from_utf8_lossy(&output.stdout).to_string();
    let bytes: u64 = listed
        .split_whitespace()
        .rev()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(bytes <= 8 * 1024, "{listed}");

    let started = Instant::now();
    server.request("ping", json!({}));
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        server.peak_rss_bytes() < 512 << 20,
        "{} bytes",
        server.peak_rss_bytes()
    );
}
