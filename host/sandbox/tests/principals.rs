//! Calls that carry a principal (who is calling, over authorized HTTP),
//! loaded through the sandbox in process: `[state] per = "principal"` keeps
//! a store for each principal, on SQLite and on a real `redis-server`, each
//! under the plugin's quota, while calls without a principal keep using
//! the plugin's shared store; without `per` every caller shares it;
//! `[limits] rate-per = "principal"` gives each principal its own bucket;
//! the audit line names the principal.
//!
//! The fixture (`tests/plugins/hostile-state`: `get`, `set`) is built for
//! wasm32-wasip2 once per test binary, as `plugins/build` builds it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use corral_sandbox::state::redis::Redis;
use corral_sandbox::state::sqlite::Sqlite;
use corral_sandbox::state::{Backend, StateStore};
use corral_sandbox::{Plugin, Sandbox, SandboxOptions};
use corral_tool::{CallContext, CallOutput, Content, Principal};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}

/// The built state fixture, built once per test binary (a no-op when it
/// is up to date).
fn fixture() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(repo_root())
            .args(["build", "--profile", "plugin", "--target", "wasm32-wasip2"])
            .args(["-p", "hostile-state"])
            .status()
            .expect("running cargo build for the fixture");
        assert!(status.success(), "building the fixture failed");
    });
    target_dir().join("wasm32-wasip2/plugin/hostile_state.wasm")
}

/// Every line the host logs, for the audit lines; installed once.
fn log_lines() -> &'static Mutex<Vec<u8>> {
    static LOG: OnceLock<&'static Mutex<Vec<u8>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log: &'static Mutex<Vec<u8>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        struct Writer(&'static Mutex<Vec<u8>>);
        impl std::io::Write for Writer {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        tracing_subscriber::fmt()
            .with_writer(move || Writer(log))
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .init();
        log
    })
}

fn principal(subject: &str) -> Arc<Principal> {
    Arc::new(Principal {
        issuer: "https://issuer.example".into(),
        subject: subject.into(),
        scopes: ["notes".to_string()].into(),
    })
}

/// A plugin `notes` (the fixture) with `manifest`, on a sandbox whose
/// store is `backend`; the folder lives as long as the plugin is used.
async fn load(manifest: &str, backend: Arc<dyn Backend>) -> (tempfile::TempDir, Plugin) {
    load_as("notes", manifest, backend).await
}

/// [`load`], the plugin named `name`.
async fn load_as(
    name: &str,
    manifest: &str,
    backend: Arc<dyn Backend>,
) -> (tempfile::TempDir, Plugin) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(), dir.path().join(format!("{name}.wasm"))).unwrap();
    std::fs::write(dir.path().join(format!("{name}.toml")), manifest).unwrap();
    let options = SandboxOptions {
        state: Some(StateStore(backend)),
        ..SandboxOptions::default()
    };
    let sandbox = Sandbox::new(options).unwrap();
    let plugin = Plugin::load(&sandbox, &dir.path().join(format!("{name}.wasm")))
        .await
        .unwrap();
    (dir, plugin)
}

/// Calls `tool` with `arguments` as `caller` (none: stdio).
async fn call(
    plugin: &Plugin,
    tool: &str,
    arguments: Value,
    caller: Option<&Arc<Principal>>,
) -> CallOutput {
    let index = plugin
        .tools()
        .position(|t| t.name == tool)
        .expect("no such tool");
    let context = CallContext {
        principal: caller.cloned(),
        ..CallContext::default()
    };
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    plugin.call(index, tool, arguments, context).await
}

fn text(output: &CallOutput) -> &str {
    match output.content.first() {
        Some(Content::Text { text, .. }) => text,
        other => panic!("not text: {other:?}"),
    }
}

async fn set(plugin: &Plugin, caller: Option<&Arc<Principal>>, key: &str, value: &str) {
    let output = call(plugin, "set", json!({"key": key, "value": value}), caller).await;
    assert!(!output.is_error, "{}", text(&output));
}

async fn get(plugin: &Plugin, caller: Option<&Arc<Principal>>, key: &str) -> String {
    let output = call(plugin, "get", json!({"key": key}), caller).await;
    assert!(!output.is_error, "{}", text(&output));
    text(&output).to_owned()
}

const PER_PRINCIPAL: &str =
    "[state]\nbuckets = [\"default\"]\nper = \"principal\"\nquota = \"40 B\"\n";
const SHARED: &str = "[state]\nbuckets = [\"default\"]\n";

/// Two principals and a caller without one, on a plugin whose state is
/// kept per principal: each sees only its own, and the quota holds for
/// each store alone.
async fn each_principal_keeps_its_own(backend: Arc<dyn Backend>) {
    let (_dir, plugin) = load(PER_PRINCIPAL, backend.clone()).await;
    let (alice, bob) = (principal("alice"), principal("bob"));
    set(&plugin, Some(&alice), "note", "alice's").await;
    assert_eq!(get(&plugin, Some(&bob), "note").await, "(not set)");
    assert_eq!(get(&plugin, None, "note").await, "(not set)");
    set(&plugin, Some(&bob), "note", "bob's").await;
    set(&plugin, None, "note", "shared").await;
    assert_eq!(get(&plugin, Some(&alice), "note").await, "alice's");
    assert_eq!(get(&plugin, Some(&bob), "note").await, "bob's");
    assert_eq!(get(&plugin, None, "note").await, "shared");
    // The same subject at the same issuer, with other scopes: the same store.
    let alice_again = Arc::new(Principal {
        scopes: Default::default(),
        ..(*alice).clone()
    });
    assert_eq!(get(&plugin, Some(&alice_again), "note").await, "alice's");
    // The same subject at another issuer: another principal.
    let elsewhere = Arc::new(Principal {
        issuer: "https://other.example".into(),
        ..(*alice).clone()
    });
    assert_eq!(get(&plugin, Some(&elsewhere), "note").await, "(not set)");

    // Namespaces the host chose: the plugin's, and one per principal by key.
    let mut namespaces = backend.plugins().unwrap();
    namespaces.sort();
    let mut expected = vec![
        "notes".to_string(),
        format!("notes@{}", alice.key()),
        format!("notes@{}", bob.key()),
    ];
    expected.sort();
    assert_eq!(namespaces, expected);

    // 40 bytes each: alice's 4 + 7 bytes leave room for 29 more, not 30.
    let output = call(
        &plugin,
        "set",
        json!({"key": "more", "value": "x".repeat(26)}),
        Some(&alice),
    )
    .await;
    assert!(output.is_error, "{}", text(&output));
    assert!(
        text(&output).contains("state quota of 40 bytes exceeded: 11 bytes stored"),
        "{}",
        text(&output)
    );
    // Bob's store is his own: the same write fits there.
    set(&plugin, Some(&bob), "more", &"x".repeat(26)).await;
    set(&plugin, Some(&alice), "more", &"x".repeat(25)).await;
}

/// Without `per`, every caller, with a principal or not, shares the
/// plugin's store.
async fn without_per_everyone_shares(backend: Arc<dyn Backend>) {
    let (_dir, plugin) = load(SHARED, backend.clone()).await;
    let (alice, bob) = (principal("alice"), principal("bob"));
    set(&plugin, Some(&alice), "note", "alice's").await;
    assert_eq!(get(&plugin, Some(&bob), "note").await, "alice's");
    assert_eq!(get(&plugin, None, "note").await, "alice's");
    set(&plugin, None, "note", "stdio's").await;
    assert_eq!(get(&plugin, Some(&alice), "note").await, "stdio's");
    assert_eq!(backend.plugins().unwrap(), ["notes"]);
}

fn sqlite() -> (tempfile::TempDir, Arc<dyn Backend>) {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(Sqlite::new(dir.path().join("state.sqlite")));
    (dir, backend)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_principal_state_on_sqlite_is_each_principals_own() {
    let (_dir, backend) = sqlite();
    each_principal_keeps_its_own(backend).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_per_principals_share_the_plugins_state_on_sqlite() {
    let (_dir, backend) = sqlite();
    without_per_everyone_shares(backend).await;
}

/// Debian's `redis-server` on a free loopback port, in memory only,
/// stopped when dropped.
struct RedisServer {
    child: Child,
    url: String,
}

impl RedisServer {
    fn start() -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| {
                panic!(
                    "cannot run redis-server ({err}): the tests need Debian's redis-server; \
                     install it with `scripts/system-packages test`"
                )
            });
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "redis-server did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        RedisServer {
            child,
            url: format!("redis://127.0.0.1:{port}/0"),
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_principal_state_on_redis_is_each_principals_own() {
    let server = RedisServer::start();
    each_principal_keeps_its_own(Arc::new(Redis::new(&server.url).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_per_principals_share_the_plugins_state_on_redis() {
    let server = RedisServer::start();
    without_per_everyone_shares(Arc::new(Redis::new(&server.url).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_per_principal_refuses_each_principal_alone() {
    let (_dir, backend) = sqlite();
    let manifest =
        format!("{SHARED}\n[limits]\nrate = 0.01\nburst = 2\nrate-per = \"principal\"\n");
    let (_folder, plugin) = load(&manifest, backend).await;
    let (alice, bob) = (principal("alice"), principal("bob"));
    for _ in 0..2 {
        assert!(
            !call(&plugin, "get", json!({"key": "k"}), Some(&alice))
                .await
                .is_error
        );
    }
    let refused = call(&plugin, "get", json!({"key": "k"}), Some(&alice)).await;
    assert!(refused.is_error);
    assert!(
        text(&refused).starts_with(
            "Tool `get` refused: your rate limit of 0.01 calls per second (per caller) reached; retry in"
        ),
        "{}",
        text(&refused)
    );
    // Bob has his own bucket; calls without a principal share the tool's.
    for _ in 0..2 {
        assert!(
            !call(&plugin, "get", json!({"key": "k"}), Some(&bob))
                .await
                .is_error
        );
        assert!(
            !call(&plugin, "get", json!({"key": "k"}), None)
                .await
                .is_error
        );
    }
    let refused = call(&plugin, "get", json!({"key": "k"}), None).await;
    assert!(
        text(&refused)
            .starts_with("Tool `get` refused: rate limit of 0.01 calls per second reached"),
        "{}",
        text(&refused)
    );

    // By default the tool's one bucket counts every caller.
    let (_dir, backend) = sqlite();
    let manifest = format!("{SHARED}\n[limits]\nrate = 0.01\nburst = 2\n");
    let (_folder, plugin) = load(&manifest, backend).await;
    assert!(
        !call(&plugin, "get", json!({"key": "k"}), Some(&alice))
            .await
            .is_error
    );
    assert!(
        !call(&plugin, "get", json!({"key": "k"}), Some(&bob))
            .await
            .is_error
    );
    let refused = call(&plugin, "get", json!({"key": "k"}), Some(&alice)).await;
    assert!(
        text(&refused)
            .starts_with("Tool `get` refused: rate limit of 0.01 calls per second reached"),
        "{}",
        text(&refused)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_line_names_the_principal_and_nothing_of_its_token() {
    let log = log_lines();
    let (_dir, backend) = sqlite();
    // A name of its own: the other tests' calls are logged too.
    let (_folder, plugin) = load_as("audited", PER_PRINCIPAL, backend).await;
    let carol = Arc::new(Principal {
        issuer: "https://issuer.example".into(),
        subject: "carol-audit".into(),
        scopes: ["secret-scope-name".to_string()].into(),
    });
    call(&plugin, "get", json!({"key": "audit-with"}), Some(&carol)).await;
    call(&plugin, "get", json!({"key": "audit-without"}), None).await;
    // The audit line is written once the answer is on its way.
    let started = Instant::now();
    let lines = loop {
        let text = String::from_utf8_lossy(&log.lock().unwrap()).into_owned();
        let calls: Vec<String> = text
            .lines()
            .filter(|line| line.contains("plugin=audited") && line.contains(" call "))
            .map(str::to_owned)
            .collect();
        if calls.len() >= 2 || started.elapsed() > Duration::from_secs(10) {
            break calls;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let with: Vec<&String> = lines
        .iter()
        .filter(|line| line.contains("carol-audit"))
        .collect();
    assert_eq!(with.len(), 1, "{lines:#?}");
    assert!(
        with[0].contains(r#"principal="carol-audit at https://issuer.example""#),
        "{}",
        with[0]
    );
    assert!(!with[0].contains("secret-scope-name"), "{}", with[0]);
    assert!(!with[0].contains(&carol.key()), "{}", with[0]);
    let without: Vec<&String> = lines
        .iter()
        .filter(|line| !line.contains("principal="))
        .collect();
    assert_eq!(without.len(), 1, "{lines:#?}");
}
