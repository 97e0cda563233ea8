//! Plugins that remember (issue 26): `wasi:keyvalue` served from a real
//! SQLite file and from a real `redis-server` on loopback, driven through
//! the real binary with the real `tally` example and the `hostile-state`
//! fixture. Each test has its own folder and its own store (a file, or a
//! server), and most run once on each backend. The Python and JavaScript
//! examples (`python-todo`, `js-memo`) run on SQLite: what they add is the
//! bindings of the world `plugin-with-state`, not another backend.

#[path = "support/redis.rs"]
mod redis;
#[path = "support/registry.rs"]
mod registry;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use redis::RedisServer;
use serde_json::{Value, json};
use support::{Server, example, first_text, fixture, test_cache_dir, write_file};

/// Where a test's plugins keep their state.
#[derive(Clone, Copy, Debug)]
enum Backend {
    Sqlite,
    Redis,
}

enum Store {
    Sqlite(PathBuf),
    Redis(RedisServer),
}

/// A plugin folder and a store of the test's own.
struct Setup {
    dir: tempfile::TempDir,
    store: Store,
}

impl Setup {
    /// `plugins`: (stem, built plugin, manifest text or none).
    fn new(plugins: &[(&str, &Path, Option<&str>)]) -> Setup {
        Setup::on(Backend::Sqlite, plugins)
    }

    fn on(backend: Backend, plugins: &[(&str, &Path, Option<&str>)]) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        for (stem, wasm, manifest) in plugins {
            std::fs::copy(wasm, dir.path().join(format!("{stem}.wasm"))).unwrap();
            if let Some(manifest) = manifest {
                write_file(dir.path(), &format!("{stem}.toml"), manifest);
            }
        }
        let store = match backend {
            Backend::Sqlite => Store::Sqlite(dir.path().join("store/state.sqlite")),
            Backend::Redis => Store::Redis(RedisServer::start()),
        };
        Setup { dir, store }
    }

    fn state_flag(&self) -> String {
        match &self.store {
            Store::Sqlite(path) => format!("sqlite:{}", path.display()),
            Store::Redis(server) => server.url(),
        }
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

/// A `#[test]` for each backend, `NAME::sqlite` and `NAME::redis`, each
/// calling `NAME(backend)`.
macro_rules! on_both {
    ($name:ident) => {
        mod $name {
            #[test]
            fn sqlite() {
                super::$name(super::Backend::Sqlite);
            }
            #[test]
            fn redis() {
                super::$name(super::Backend::Redis);
            }
        }
    };
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

on_both!(counts_survive_a_restart_and_corral_state_shows_and_clears_them);
fn counts_survive_a_restart_and_corral_state_shows_and_clears_them(backend: Backend) {
    let (name, wasm, manifest) = tally();
    let setup = Setup::on(backend, &[(name, &wasm, manifest)]);
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

on_both!(two_plugins_with_the_same_bucket_never_share_keys);
/// Two plugins opening `default` never see each other's keys: the
/// namespace is the plugin's name, chosen by the host.
fn two_plugins_with_the_same_bucket_never_share_keys(backend: Backend) {
    let wasm = example("tally");
    let setup = Setup::on(
        backend,
        &[("tally", &wasm, Some(TALLY)), ("other", &wasm, Some(TALLY))],
    );
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

on_both!(two_hundred_concurrent_increments_end_at_exactly_200);
/// 200 calls at once on one stdio session, each adding 1: exactly 200.
fn two_hundred_concurrent_increments_end_at_exactly_200(backend: Backend) {
    let setup = Setup::on(backend, &[("tally", &example("tally"), Some(TALLY_BURST))]);
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

on_both!(a_sigkill_in_a_burst_of_writes_loses_no_acknowledged_write);
/// A server killed with SIGKILL in a burst of writes keeps every write it
/// acknowledged, and its store stays readable.
fn a_sigkill_in_a_burst_of_writes_loses_no_acknowledged_write(backend: Backend) {
    let setup = Setup::on(backend, &[("tally", &example("tally"), Some(TALLY_BURST))]);
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

on_both!(quota_size_and_operation_bounds_refuse_and_keep_the_store_intact);
/// A hostile plugin with a small quota: many small keys, one huge value,
/// an endless listing and a bucket it was not granted all end in errors it
/// can read, the store keeps what it had, and the server keeps answering.
fn quota_size_and_operation_bounds_refuse_and_keep_the_store_intact(backend: Backend) {
    let manifest = "[state]\nbuckets = [\"default\"]\nquota = \"8 KiB\"\nvalue-limit = \"2 KiB\"\n";
    let setup = Setup::on(
        backend,
        &[("hostile-state", &fixture("hostile-state"), Some(manifest))],
    );
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

on_both!(ping_stays_quick_while_plugins_attack_the_store);
/// While hostile calls fill the store with many small keys, write values
/// as large as the limit allows and list keys without end, the server
/// answers `ping` within 100 ms: the store's work runs beside the protocol,
/// never in its way.
fn ping_stays_quick_while_plugins_attack_the_store(backend: Backend) {
    let manifest =
        "[state]\nbuckets = [\"default\"]\nquota = \"64 MiB\"\n\n[limits]\nconcurrency = 16\n";
    let setup = Setup::on(
        backend,
        &[("hostile-state", &fixture("hostile-state"), Some(manifest))],
    );
    let mut server = setup.serve();
    // Keys for the listings to walk.
    let seeded = server.call("many_keys", json!({"count": 5000}));
    assert_eq!(first_text(&seeded), "5000 set");

    let call = |server: &mut Server, tool: &str, arguments: Value| {
        server.send_request("tools/call", json!({"name": tool, "arguments": arguments}))
    };
    let mut attacks = Vec::new();
    for _ in 0..2 {
        attacks.push(call(&mut server, "many_keys", json!({"count": 9000})));
        attacks.push(call(&mut server, "list_forever", json!({})));
        attacks.push(call(&mut server, "huge_value", json!({"bytes": 4 << 20})));
        attacks.push(call(&mut server, "huge_value", json!({"bytes": 5 << 20})));
    }
    let mut pending = attacks.clone();
    let mut pings = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !pending.is_empty() {
        assert!(Instant::now() < deadline, "the attacks did not end");
        let id = server.send_request("ping", json!({}));
        let sent = Instant::now();
        loop {
            let message = server
                .recv_within(Duration::from_secs(10))
                .expect("an answer");
            if message["id"] == id {
                assert_eq!(message["result"], json!({}), "{message}");
                break;
            }
            pending.retain(|pending| *pending != message["id"]);
        }
        // Only pings sent while attacks ran count.
        if !pending.is_empty() {
            pings.push(sent.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        pings.len() >= 5,
        "the attacks ended after {} pings",
        pings.len()
    );
    let slowest = pings.iter().max().unwrap();
    eprintln!(
        "{} pings during the attacks, the slowest {slowest:?}",
        pings.len()
    );
    assert!(
        *slowest < Duration::from_millis(100),
        "the slowest of {} pings during the attacks took {slowest:?}",
        pings.len()
    );
    assert!(
        server.peak_rss_bytes() < 512 << 20,
        "{} bytes",
        server.peak_rss_bytes()
    );
}

/// A Redis that goes away: calls that touch state fail naming the backend,
/// tools that keep no state answer as before, and state calls work again
/// once Redis is back (on the same address).
#[test]
fn a_redis_outage_fails_state_calls_only_until_it_returns() {
    let setup = Setup::on(
        Backend::Redis,
        &[
            ("tally", &example("tally"), Some(TALLY)),
            ("calc", &example("calc"), None),
        ],
    );
    let mut server = setup.serve();
    assert_eq!(
        total(&server.call("tally_add", json!({"key": "k", "by": 2}))),
        2
    );
    let url = setup.state_flag();
    let mut setup = setup;
    let Store::Redis(redis) = &mut setup.store else {
        unreachable!("a Redis setup")
    };
    redis.stop();
    for _ in 0..3 {
        let result = server.call("tally_add", json!({"key": "k", "by": 1}));
        assert_eq!(result["isError"], true, "{result}");
        let text = first_text(&result);
        assert!(
            text.contains(&format!("the state store ({url}) failed")),
            "{text}"
        );
        assert_eq!(
            first_text(&server.call("add", json!({"a": 1, "b": 2}))),
            "3"
        );
    }
    // Back, empty (in memory only): counting starts again.
    redis.restart();
    assert_eq!(
        total(&server.call("tally_add", json!({"key": "k", "by": 1}))),
        1
    );
    server.request("ping", json!({}));
}

/// `rediss://`: Redis over TLS, with a certificate of a test authority that
/// the server is told to trust the usual way (`SSL_CERT_FILE`); without
/// that, state calls fail naming the store, and nothing else does.
#[test]
fn rediss_works_with_a_trusted_certificate_and_names_the_store_without() {
    let ca = tempfile::tempdir().unwrap();
    let output = Command::new(registry::python())
        .arg(support::repo_root().join("tests/registry/test_ca.py"))
        .arg(ca.path())
        .arg("localhost")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let redis = RedisServer::start_tls(&ca.path().join("leaf.pem"), &ca.path().join("leaf.key"));
    let (name, wasm, manifest) = tally();
    let setup = Setup::new(&[(name, &wasm, manifest)]);
    let url = redis.url();
    let serve = |trust: &[(&str, &str)]| {
        let mut server = Server::start_with_env(setup.dir.path(), &["--state", &url], trust);
        server.initialize("2025-06-18");
        server
    };
    let ca_file = ca.path().join("ca.pem");
    let mut trusting = serve(&[("SSL_CERT_FILE", ca_file.to_str().unwrap())]);
    assert_eq!(
        total(&trusting.call("tally_add", json!({"key": "k", "by": 2}))),
        2
    );
    assert_eq!(total(&trusting.call("tally_add", json!({"key": "k"}))), 3);
    drop(trusting);

    // Trusting no authority at all (an empty file in place of the system's).
    let nobody = write_file(ca.path(), "none.pem", "");
    let mut doubting = serve(&[("SSL_CERT_FILE", nobody.to_str().unwrap())]);
    let result = doubting.call("tally_add", json!({"key": "k"}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        first_text(&result).contains(&format!("the state store ({url}) failed")),
        "{result}"
    );
}

// ---------------------------------------------- Python and JavaScript

/// A Python or JavaScript example that keeps state, with the manifest its
/// build copied beside it (`target/plugins/NAME.toml`, from
/// `plugins/NAME/NAME.toml`): the grant it ships with.
fn example_with_manifest(name: &str) -> (PathBuf, String) {
    let wasm = example(name);
    let manifest = wasm.with_extension("toml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|err| panic!("{}: {err} (the build copies it)", manifest.display()));
    assert!(text.contains("[state]"), "{text}");
    (wasm, text)
}

/// How long a server may take to load the Python (19 MB) and JavaScript
/// (12 MB) examples: with a cold compile cache on a 2-core machine, each
/// compiles for 20-45 s, and other suites compile at the same time.
const LOAD_BOUND: Duration = Duration::from_secs(300);

/// Serves `setup` and waits until every plugin has loaded (the first
/// `tools/list` is answered once they have); returns the server and the
/// names of the tools it lists.
fn serve_loaded(setup: &Setup) -> (Server, Vec<String>) {
    let mut server = setup.serve();
    let id = server.send_request("tools/list", json!({}));
    let response = server.response_within(&id, LOAD_BOUND);
    let names = response["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools/list failed: {response}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    (server, names)
}

/// A successful call's structured content.
fn structured(result: &Value) -> &Value {
    assert_eq!(result["isError"], false, "{result}");
    &result["structuredContent"]
}

/// A failed call's message.
fn refusal(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    first_text(result)
}

/// The Python example (a to-do list: store, atomics, batch) and the
/// JavaScript one (memos: store, batch), both built against the world
/// `plugin-with-state`, keep what they stored across calls and across a
/// server restart, and `corral state` sees it under each plugin's name.
#[test]
fn python_and_javascript_examples_keep_state_across_calls_and_restarts() {
    let (todo, todo_grant) = example_with_manifest("python-todo");
    let (memo, memo_grant) = example_with_manifest("js-memo");
    let setup = Setup::new(&[
        ("python-todo", &todo, Some(&todo_grant)),
        ("js-memo", &memo, Some(&memo_grant)),
    ]);
    let (mut server, names) = serve_loaded(&setup);
    for tool in [
        "todo_add",
        "todo_list",
        "todo_done",
        "memo_save",
        "memo_recall",
    ] {
        assert!(names.iter().any(|name| name == tool), "{tool}: {names:?}");
    }

    let milk = server.call("todo_add", json!({"text": "buy milk", "priority": "high"}));
    assert_eq!(structured(&milk)["id"], 1);
    assert_eq!(first_text(&milk), "Added #1 [ ] (high) buy milk");
    server.call("todo_add", json!({"text": "call the bank"}));
    assert_eq!(
        first_text(&server.call("todo_done", json!({"id": 1}))),
        "Done: #1 [x] (high) buy milk"
    );
    let saved = server.call(
        "memo_save",
        json!({"name": "user/units", "value": {"length": "km", "weight": "kg"}}),
    );
    assert_eq!(first_text(&saved), "Saved \"user/units\".");
    drop(server);

    let (mut server, _) = serve_loaded(&setup);
    let listed = server.call("todo_list", json!({"include_done": true}));
    assert_eq!(
        first_text(&listed),
        "#2 [ ] call the bank\n#1 [x] (high) buy milk"
    );
    assert_eq!(structured(&listed)["items"][1]["done"], true);
    let recalled = server.call("memo_recall", json!({"name": "user/units"}));
    assert_eq!(
        structured(&recalled)["value"],
        json!({"length": "km", "weight": "kg"})
    );
    // Ids come from the store's atomic increment: twenty adds at once, each
    // in its own instance, get twenty different ids, none reused.
    let ids: Vec<Value> = (0..20)
        .map(|i| {
            server.send_request(
                "tools/call",
                json!({"name": "todo_add", "arguments": {"text": format!("task {i}")}}),
            )
        })
        .collect();
    let mut given: Vec<u64> = server
        .responses_to(&ids)
        .iter()
        .map(|response| structured(&response["result"])["id"].as_u64().unwrap())
        .collect();
    given.sort_unstable();
    assert_eq!(given, (3..=22).collect::<Vec<_>>());
    drop(server);

    let output = setup.corral(&["state", "list", "{dir}"]);
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    // 22 items and the id counter; one memo.
    assert!(
        listed.contains("python-todo  23 keys") && listed.contains("js-memo  1 keys"),
        "{listed}"
    );
    let output = setup.corral(&["state", "get", "{dir}", "js-memo", "memo/user/units"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&output.stdout).unwrap(),
        json!({"length": "km", "weight": "kg"})
    );
}

/// Built against `plugin-with-state`, a component imports `wasi:keyvalue`
/// whether or not it calls it: without the grant, the import gate refuses
/// it at load, and the plugins beside it still load.
#[test]
fn python_and_javascript_examples_without_their_grant_are_refused_at_load() {
    let setup = Setup::new(&[
        ("python-todo", &example("python-todo"), None),
        ("js-memo", &example("js-memo"), None),
        ("tally", &example("tally"), Some(TALLY)),
    ]);
    let output = setup.corral(&["list", "{dir}"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for plugin in ["python-todo", "js-memo"] {
        let line = stderr
            .lines()
            .find(|line| {
                line.contains("skipping plugin") && line.contains(&format!("{plugin}.wasm"))
            })
            .unwrap_or_else(|| panic!("{plugin} not refused:\n{stderr}"));
        assert!(
            line.contains("imports `wasi:keyvalue/store@0.2.0-draft`, which needs a grant in its manifest: [state] buckets = [\"default\"]"),
            "{line}"
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("tally_add"), "{stdout}");
    assert!(
        !stdout.contains("todo_add") && !stdout.contains("memo_save"),
        "{stdout}"
    );
}

/// Two copies of the JavaScript example and the Python one all open the
/// bucket `default`: each sees only its own keys, because the namespace is
/// the plugin's name, never the bucket's.
#[test]
fn python_and_javascript_plugins_opening_the_same_bucket_never_share_keys() {
    let (memo, memo_grant) = example_with_manifest("js-memo");
    let (todo, todo_grant) = example_with_manifest("python-todo");
    let setup = Setup::new(&[
        ("js-memo", &memo, Some(&memo_grant)),
        ("notes", &memo, Some(&memo_grant)),
        ("python-todo", &todo, Some(&todo_grant)),
    ]);
    let (mut server, names) = serve_loaded(&setup);
    // The copies' tools collide, so each is served as <plugin>_<tool>.
    assert!(
        names.contains(&"js-memo_memo_save".to_string())
            && names.contains(&"notes_memo_save".to_string()),
        "{names:?}"
    );
    structured(&server.call("js-memo_memo_save", json!({"name": "k", "value": "mine"})));
    structured(&server.call("notes_memo_save", json!({"name": "k", "value": "theirs"})));
    structured(&server.call("notes_memo_save", json!({"name": "only-notes", "value": 1})));
    structured(&server.call("todo_add", json!({"text": "k"})));

    let mine = server.call("js-memo_memo_recall", json!({"name": "k"}));
    assert_eq!(structured(&mine)["value"], "mine");
    let theirs = server.call("notes_memo_recall", json!({"name": "k"}));
    assert_eq!(structured(&theirs)["value"], "theirs");
    let missing = server.call("js-memo_memo_recall", json!({"name": "only-notes"}));
    assert!(refusal(&missing).contains("no memo named \"only-notes\""));
    let listed = server.call("js-memo_memo_list", json!({}));
    assert_eq!(
        structured(&listed),
        &json!({"total": 1, "memos": [{"name": "k", "value": "mine"}]})
    );

    // Clearing every memo of one copy leaves the other's, and the to-do list.
    let cleared = server.call("notes_memo_clear", json!({"prefix": ""}));
    assert_eq!(structured(&cleared)["removed"], 2);
    let mine = server.call("js-memo_memo_recall", json!({"name": "k"}));
    assert_eq!(structured(&mine)["value"], "mine");
    let todos = server.call("todo_list", json!({}));
    assert_eq!(first_text(&todos), "#1 [ ] k");
}

/// When the store refuses (the quota, a bucket the grant does not list), the
/// Python and JavaScript examples hand the refusal to the model as a tool
/// error, and what they stored before is intact.
#[test]
fn python_and_javascript_examples_report_the_stores_refusals() {
    let small = "[state]\nbuckets = [\"default\"]\nquota = \"1 KiB\"\n";
    let setup = Setup::new(&[
        ("python-todo", &example("python-todo"), Some(small)),
        ("js-memo", &example("js-memo"), Some(small)),
    ]);
    let (mut server, _) = serve_loaded(&setup);
    let long = "x".repeat(450);
    structured(&server.call("todo_add", json!({"text": "keep me"})));
    let mut refused = None;
    for _ in 0..3 {
        let result = server.call("todo_add", json!({"text": long}));
        if result["isError"] == true {
            refused = Some(refusal(&result).to_string());
            break;
        }
    }
    let refused = refused.expect("a 1 KiB quota holds fewer than three 450-byte items");
    assert!(
        refused.starts_with("the store refused: state quota of 1 KiB exceeded")
            && refused.contains("[state] quota"),
        "{refused}"
    );
    let listed = server.call("todo_list", json!({}));
    assert!(
        first_text(&listed).starts_with("#1 [ ] keep me"),
        "{listed}"
    );

    structured(&server.call("memo_save", json!({"name": "keep", "value": "me"})));
    let big = server.call(
        "memo_save",
        json!({"name": "big", "value": "y".repeat(2000)}),
    );
    let message = refusal(&big);
    assert!(
        message.starts_with("the store refused: state quota of 1 KiB exceeded")
            && message.contains("nothing was written"),
        "{message}"
    );
    let kept = server.call("memo_recall", json!({"name": "keep"}));
    assert_eq!(structured(&kept)["value"], "me");
    drop(server);

    // A grant that lists other buckets: opening `default` is access-denied.
    let elsewhere = "[state]\nbuckets = [\"elsewhere\"]\n";
    let setup = Setup::new(&[
        ("python-todo", &example("python-todo"), Some(elsewhere)),
        ("js-memo", &example("js-memo"), Some(elsewhere)),
    ]);
    let (mut server, _) = serve_loaded(&setup);
    let denied = server.call("todo_list", json!({}));
    assert_eq!(
        refusal(&denied),
        "the store refused access to bucket `default`; python-todo.toml must grant it"
    );
    let denied = server.call("memo_list", json!({}));
    assert_eq!(
        refusal(&denied),
        "the store refused access to bucket \"default\"; js-memo.toml must grant it"
    );
}

/// The examples' own unit tests (their logic, with a dictionary or a Map for
/// a store), run with the machine's python3 and node as `corral new`
/// projects' ./test runs theirs. -B: no __pycache__ in the source tree.
#[test]
fn python_and_javascript_examples_unit_tests_pass() {
    let root = support::repo_root();
    for (program, args) in [
        (
            "python3",
            &[
                "-B",
                "-m",
                "unittest",
                "discover",
                "-s",
                "plugins/python-todo",
                "-p",
                "test_*.py",
            ][..],
        ),
        ("node", &["--test", "plugins/js-memo/memo.test.js"][..]),
    ] {
        let output = Command::new(program)
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap_or_else(|err| panic!("{program}: {err}"));
        assert!(
            output.status.success(),
            "{program} {args:?}:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Time in the store counts against the call's timeout: a Redis that
/// stops answering (SIGSTOP) makes a state call time out as any slow call
/// does, while other tools keep answering; the store works again once
/// Redis does.
#[test]
fn a_frozen_redis_costs_a_call_its_timeout_and_no_more() {
    let manifest = "[state]\nbuckets = [\"default\"]\n\n[limits]\ntimeout = \"1 s\"\n";
    let setup = Setup::on(
        Backend::Redis,
        &[
            ("tally", &example("tally"), Some(manifest)),
            ("calc", &example("calc"), None),
        ],
    );
    let mut server = setup.serve();
    assert_eq!(total(&server.call("tally_add", json!({"key": "k"}))), 1);
    let Store::Redis(redis) = &setup.store else {
        unreachable!("a Redis setup")
    };
    redis.pause();
    let started = Instant::now();
    let id = server.send_request(
        "tools/call",
        json!({"name": "tally_add", "arguments": {"key": "k"}}),
    );
    assert_eq!(
        first_text(&server.call("add", json!({"a": 2, "b": 2}))),
        "4"
    );
    let response = server.response_to(&id);
    let waited = started.elapsed();
    redis.resume();
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(
        first_text(&response["result"]).contains("timed out after 1 s"),
        "{response}"
    );
    assert!(waited < Duration::from_secs(5), "answered after {waited:?}");
    // The call that timed out may have counted once Redis woke up; the
    // next one counts on from whatever is there.
    let after = total(&server.call("tally_add", json!({"key": "k"})));
    assert!((2..=3).contains(&after), "{after}");
}
