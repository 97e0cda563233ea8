//! Plugins that ask their client for input (contract 0.2.0 `client`),
//! loaded through the sandbox in process with a scripted fake [`Client`]:
//! what the client receives, what the plugin gets back, and how a call
//! ends when the client fails, never answers, or will answer later. Also:
//! plugins of contracts 0.1.0 and 0.2.0 still load and run (the asker, built
//! with the SDK, targets 0.3.0).
//!
//! The fixtures (`tests/plugins/asker`, `tests/plugins/contract-v0-1`,
//! `tests/plugins/contract-v0-2`) are
//! built for wasm32-wasip2 once per test binary, as `plugins/build` builds
//! them.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use corral_sandbox::imports::Verdict;
use corral_sandbox::{
    Contract, MAX_ANSWER_BYTES, MAX_FORM_CONTENT, Plugin, Sandbox, SandboxOptions, inspect,
};
use corral_tool::{
    AskError, AskFuture, CallContext, CallEvent, CallOutput, Client, ClientCapabilities, Content,
    InputKind, InputRequest,
};
use serde_json::{Map, Value, json};

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

/// The built fixture `crate_name`, built once per test binary (a no-op
/// when it is up to date).
fn fixture(crate_name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(repo_root())
            .args(["build", "--profile", "plugin", "--target", "wasm32-wasip2"])
            .args(["-p", "asker", "-p", "contract-v0-1", "-p", "contract-v0-2"])
            .status()
            .expect("running cargo build for the fixtures");
        assert!(status.success(), "building the fixtures failed");
    });
    target_dir()
        .join("wasm32-wasip2/plugin")
        .join(format!("{}.wasm", crate_name.replace('-', "_")))
}

/// A folder holding `asker.wasm` and, when given, its manifest.
fn asker_folder(manifest: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("asker"), dir.path().join("asker.wasm")).unwrap();
    if let Some(manifest) = manifest {
        std::fs::write(dir.path().join("asker.toml"), manifest).unwrap();
    }
    dir
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

/// What the fake client does when asked.
enum Reply {
    Answer(Vec<Value>),
    Error(AskError),
    /// Answers after a delay.
    Later(Duration, Vec<Value>),
    /// Never answers.
    Never,
}

/// A client that answers each ask with the next scripted reply and
/// remembers what it was asked.
struct FakeClient {
    capabilities: ClientCapabilities,
    /// Whether it says it answers without waiting (as the stateless era's
    /// client does).
    at_once: bool,
    replies: Mutex<VecDeque<Reply>>,
    asked: Mutex<Vec<Vec<InputRequest>>>,
}

impl FakeClient {
    fn new(replies: Vec<Reply>) -> Arc<FakeClient> {
        Arc::new(FakeClient {
            capabilities: ClientCapabilities {
                elicitation_form: true,
                elicitation_url: true,
                sampling: true,
                roots: true,
            },
            at_once: false,
            replies: Mutex::new(replies.into()),
            asked: Mutex::new(Vec::new()),
        })
    }

    /// A client that declared nothing it could be asked.
    fn declaring_nothing() -> Arc<FakeClient> {
        let mut client = Arc::into_inner(FakeClient::new(Vec::new())).unwrap();
        client.capabilities = ClientCapabilities::default();
        Arc::new(client)
    }

    /// A client that answers without waiting for anyone.
    fn at_once(replies: Vec<Reply>) -> Arc<FakeClient> {
        let mut client = Arc::into_inner(FakeClient::new(replies)).unwrap();
        client.at_once = true;
        Arc::new(client)
    }

    fn asked(&self) -> Vec<Vec<InputRequest>> {
        self.asked.lock().unwrap().clone()
    }
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

impl Client for FakeClient {
    fn capabilities(&self) -> ClientCapabilities {
        self.capabilities
    }

    fn answers_at_once(&self) -> bool {
        self.at_once
    }

    fn ask(&self, requests: Vec<InputRequest>) -> AskFuture<'_> {
        self.asked.lock().unwrap().push(requests);
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .expect("asked more often than scripted");
        Box::pin(async move {
            match reply {
                Reply::Answer(answers) => Ok(answers.into_iter().map(map).collect()),
                Reply::Error(err) => Err(err),
                Reply::Later(delay, answers) => {
                    tokio::time::sleep(delay).await;
                    Ok(answers.into_iter().map(map).collect())
                }
                Reply::Never => std::future::pending().await,
            }
        })
    }
}

async fn load(dir: &Path) -> Plugin {
    let sandbox = Sandbox::new(SandboxOptions::default()).unwrap();
    Plugin::load(&sandbox, &dir.join("asker.wasm"))
        .await
        .unwrap()
}

/// Calls `tool` with `client`; returns the output and the events sent.
async fn call(
    plugin: &Plugin,
    tool: &str,
    client: Option<Arc<FakeClient>>,
) -> (CallOutput, Vec<CallEvent>) {
    let index = plugin
        .tools()
        .position(|t| t.name == tool)
        .expect("no such tool");
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let context = CallContext {
        events: Some(Arc::new(move |event| sink.lock().unwrap().push(event))),
        client: client.map(|c| c as Arc<dyn Client>),
        as_task: false,
        principal: None,
    };
    let output = plugin.call(index, tool, Map::new(), context).await;
    let events = events.lock().unwrap().clone();
    (output, events)
}

fn text(output: &CallOutput) -> &str {
    match output.content.first() {
        Some(Content::Text { text, .. }) => text,
        other => panic!("not text: {other:?}"),
    }
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_form_reaches_the_plugin_and_the_client_gets_mcp_params() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    assert_eq!(plugin.contract(), Contract::V0_3);
    let client = FakeClient::new(vec![Reply::Answer(vec![accept(json!({"name": "Alice"}))])]);
    let (output, _) = call(&plugin, "elicit", Some(client.clone())).await;
    assert!(!output.is_error, "{}", text(&output));
    assert_eq!(text(&output), r#"accept {"name":"Alice"}"#);
    let asked = client.asked();
    assert_eq!(asked.len(), 1);
    let request = &asked[0][0];
    assert_eq!(
        (request.key.as_str(), request.kind),
        ("user_name", InputKind::ElicitForm)
    );
    // The schema reaches the client as the plugin wrote it, default included.
    assert_eq!(
        Value::Object(request.params.clone()),
        json!({
            "mode": "form",
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "minLength": 2, "default": "Ann"}}, "required": ["name"]},
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_and_cancel_reach_the_plugin() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    for action in ["decline", "cancel"] {
        let client = FakeClient::new(vec![Reply::Answer(vec![json!({"action": action})])]);
        let (output, _) = call(&plugin, "elicit", Some(client)).await;
        assert_eq!(text(&output), action);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_requests_at_once_are_answered_in_order() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    let client = FakeClient::new(vec![Reply::Answer(vec![
        accept(json!({"name": "Bob"})),
        json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "test-model", "stopReason": "endTurn"}),
        json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}),
    ])]);
    let (output, _) = call(&plugin, "several", Some(client.clone())).await;
    assert_eq!(
        text(&output),
        "accept {\"name\":\"Bob\"}\nsampled hi by test-model\nroots file:///test/root"
    );
    let asked = &client.asked()[0];
    let kinds: Vec<InputKind> = asked.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            InputKind::ElicitForm,
            InputKind::Sample,
            InputKind::ListRoots
        ]
    );
    assert_eq!(
        Value::Object(asked[1].params.clone()),
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 100, "systemPrompt": "Be brief"})
    );
    assert!(asked[2].params.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_may_ask_twice_and_url_elicitations_accept_with_nothing() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    let client = FakeClient::new(vec![
        Reply::Answer(vec![accept(json!({"name": "One"}))]),
        Reply::Answer(vec![accept(json!({"name": "Two"}))]),
    ]);
    let (output, _) = call(&plugin, "twice", Some(client.clone())).await;
    assert_eq!(
        text(&output),
        "accept {\"name\":\"One\"}\naccept {\"name\":\"Two\"}"
    );
    assert_eq!(client.asked().len(), 2);

    let client = FakeClient::new(vec![Reply::Answer(vec![json!({"action": "accept"})])]);
    let (output, _) = call(&plugin, "url", Some(client.clone())).await;
    assert_eq!(text(&output), "accept {}");
    assert_eq!(
        Value::Object(client.asked()[0][0].params.clone()),
        json!({"mode": "url", "message": "Log in", "url": "https://example.com/login", "elicitationId": "e-1"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_errors_become_typed_errors_the_plugin_sees() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    let cases = [
        (
            AskError::Failed("user closed the dialog".into()),
            "failed: the client answered with an error: user closed the dialog",
        ),
        (
            AskError::Unavailable("the client is gone".into()),
            "failed: the client is gone",
        ),
        (AskError::Undeclared("sampling"), "undeclared: sampling"),
    ];
    for (error, expected) in cases {
        let client = FakeClient::new(vec![Reply::Error(error)]);
        let (output, _) = call(&plugin, "elicit", Some(client)).await;
        assert!(!output.is_error);
        assert_eq!(text(&output), expected);
    }
    // Without a client, nothing is declared and nothing is asked.
    let (output, _) = call(&plugin, "elicit", None).await;
    assert_eq!(text(&output), "undeclared: elicitation");
    let (output, _) = call(&plugin, "capabilities", None).await;
    assert_eq!(
        text(&output),
        "form=false url=false sampling=false roots=false"
    );
    let client = FakeClient::new(vec![]);
    let (output, _) = call(&plugin, "capabilities", Some(client)).await;
    assert_eq!(text(&output), "form=true url=true sampling=true roots=true");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_requests_are_refused_before_the_client_sees_anything() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    let client = FakeClient::new(vec![]);
    let (output, _) = call(&plugin, "invalid_schema", Some(client.clone())).await;
    assert!(
        text(&output).starts_with("invalid: request `bad`: property `nested`: has type `object`"),
        "{}",
        text(&output)
    );
    assert!(client.asked().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_asks_at_most_32_times() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    let replies = (0..32)
        .map(|_| Reply::Answer(vec![json!({"action": "cancel"})]))
        .collect();
    let client = FakeClient::new(replies);
    let (output, _) = call(&plugin, "too_many_asks", Some(client.clone())).await;
    assert_eq!(
        text(&output),
        "ask 33: invalid: a call asks the client at most 32 times"
    );
    assert_eq!(client.asked().len(), 32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_that_break_the_schema_or_the_protocol_fail() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    let cases = [
        (
            accept(json!({"name": "A"})),
            "does not match the requested schema",
        ),
        (accept(json!({})), "does not match the requested schema"),
        (accept(json!({"name": "Al", "admin": true})), "has `admin`"),
        (json!({"action": "sure"}), "has no `action`"),
    ];
    for (answer, reason) in cases {
        let client = FakeClient::new(vec![Reply::Answer(vec![answer])]);
        let (output, _) = call(&plugin, "elicit", Some(client)).await;
        let text = text(&output);
        assert!(
            text.starts_with("failed: the answer to `user_name` ") && text.contains(reason),
            "{text}"
        );
    }
    let client = FakeClient::new(vec![Reply::Answer(vec![])]);
    let (output, _) = call(&plugin, "elicit", Some(client)).await;
    assert_eq!(
        text(&output),
        "failed: the client gave 0 answers to 1 requests"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_times_out_after_input_wait_while_the_compute_timeout_is_shorter() {
    // The wait (300 ms) outlasts the compute timeout (100 ms): the call
    // survives only because waiting does not count.
    let dir = asker_folder(Some(
        "[limits]\ntimeout = \"100 ms\"\ninput-wait = \"300 ms\"\n",
    ));
    let plugin = load(dir.path()).await;
    let client = FakeClient::new(vec![Reply::Never]);
    let started = Instant::now();
    let (output, events) = call(&plugin, "elicit", Some(client)).await;
    assert!(!output.is_error, "{}", text(&output));
    assert_eq!(text(&output), "timed-out");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(events.is_empty(), "{events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_wait_bounds_all_of_a_calls_asks_together() {
    // The first ask takes the whole wait: the second is not even sent.
    let dir = asker_folder(Some("[limits]\ninput-wait = \"300 ms\"\n"));
    let plugin = load(dir.path()).await;
    let client = FakeClient::new(vec![Reply::Never, Reply::Never]);
    let (output, _) = call(&plugin, "twice", Some(client.clone())).await;
    assert_eq!(text(&output), "timed-out\ntimed-out");
    assert_eq!(client.asked().len(), 1);

    // The second ask waits only what the first left: 2 s in all, not
    // 1.5 s plus a full 2 s.
    let dir = asker_folder(Some("[limits]\ninput-wait = \"2 s\"\n"));
    let plugin = load(dir.path()).await;
    let first = vec![accept(json!({"name": "One"}))];
    let client = FakeClient::new(vec![
        Reply::Later(Duration::from_millis(1500), first),
        Reply::Never,
    ]);
    let started = Instant::now();
    let (output, _) = call(&plugin, "twice", Some(client.clone())).await;
    let elapsed = started.elapsed();
    assert_eq!(text(&output), "accept {\"name\":\"One\"}\ntimed-out");
    assert_eq!(client.asked().len(), 2);
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_half_of_a_plugins_calls_wait_for_their_clients() {
    // Concurrency 2: one call may wait; a second asking meanwhile is told
    // at once, and its client is asked nothing.
    let dir = asker_folder(Some("[limits]\nconcurrency = 2\ninput-wait = \"2 s\"\n"));
    let plugin = load(dir.path()).await;
    let silent = FakeClient::new(vec![Reply::Never]);
    let prompt = FakeClient::new(vec![Reply::Answer(vec![accept(json!({"name": "Bo"}))])]);
    let waiting = call(&plugin, "elicit", Some(silent.clone()));
    let unasked = FakeClient::declaring_nothing();
    let meanwhile = async {
        while silent.asked().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let started = Instant::now();
        let (output, _) = call(&plugin, "elicit", Some(prompt.clone())).await;
        let refused_in = started.elapsed();
        // Still while the first call waits: one that cannot be asked at all.
        let (told, _) = call(&plugin, "elicit", Some(unasked.clone())).await;
        (output, refused_in, told)
    };
    let ((waited, _), (refused, refused_in, told)) = tokio::join!(waiting, meanwhile);
    // A client that cannot be asked hears so, whatever the load.
    assert_eq!(text(&told), "undeclared: elicitation");
    assert_eq!(text(&waited), "timed-out");
    assert!(
        text(&refused).starts_with(
            "failed: too many calls of this plugin wait for their clients (at most 1); "
        ),
        "{}",
        text(&refused)
    );
    assert!(refused_in < Duration::from_millis(1500), "{refused_in:?}");
    assert!(prompt.asked().is_empty());
    // The wait over, the next call may wait in its turn.
    let prompt = FakeClient::new(vec![Reply::Answer(vec![accept(json!({"name": "Bo"}))])]);
    let (output, _) = call(&plugin, "elicit", Some(prompt)).await;
    assert_eq!(text(&output), "accept {\"name\":\"Bo\"}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_answers_at_once_takes_no_waiting_slot() {
    // Concurrency 2, one call waiting: a stateless call answered from what
    // its request carries is no wait, and is served.
    let dir = asker_folder(Some("[limits]\nconcurrency = 2\ninput-wait = \"500 ms\"\n"));
    let plugin = load(dir.path()).await;
    let silent = FakeClient::new(vec![Reply::Never]);
    let replayed = FakeClient::at_once(vec![Reply::Answer(vec![accept(json!({"name": "Al"}))])]);
    let waiting = call(&plugin, "elicit", Some(silent.clone()));
    let meanwhile = async {
        while silent.asked().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        call(&plugin, "elicit", Some(replayed.clone())).await
    };
    let ((waited, _), (answered, _)) = tokio::join!(waiting, meanwhile);
    assert_eq!(text(&waited), "timed-out");
    assert_eq!(text(&answered), "accept {\"name\":\"Al\"}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_bounded_in_size_per_form_and_per_ask() {
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    // Valid against the schema (one string, one work unit), but too long.
    let long = "a".repeat(MAX_FORM_CONTENT);
    let client = FakeClient::new(vec![Reply::Answer(vec![accept(json!({"name": long}))])]);
    let (output, _) = call(&plugin, "elicit", Some(client)).await;
    let said = text(&output);
    assert!(
        said == "failed: the answer to `user_name` has `content` longer than 64 KiB as JSON",
        "{}",
        &said[..said.len().min(200)]
    );
    // Five sampled texts, each within its own 4 MiB, 20 MiB together.
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "x".repeat((4 << 20) - 64)}, "model": "m"});
    let client = FakeClient::new(vec![Reply::Answer(vec![sampled; 5])]);
    let (output, _) = call(&plugin, "five_samples", Some(client)).await;
    let said = text(&output);
    assert!(
        said == "failed: the client's answers to this ask come to more than 16 MiB, the most one ask may hand the plugin",
        "{}",
        &said[..said.len().min(200)]
    );
    assert_eq!(MAX_ANSWER_BYTES, 16 << 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compute_before_and_after_a_wait_counts_but_the_wait_does_not() {
    // 150 ms of compute, a 700 ms wait, 150 ms of compute: 1 s of wall
    // time under a 600 ms timeout. The guest resumes after the wait and
    // runs on (its epoch deadline renews; no fuel went on waiting).
    let dir = asker_folder(Some("[limits]\ntimeout = \"600 ms\"\n"));
    let plugin = load(dir.path()).await;
    let answer = vec![accept(json!({"name": "Slow"}))];
    let client = FakeClient::new(vec![Reply::Later(Duration::from_millis(700), answer)]);
    let (output, _) = call(&plugin, "spin_wait_spin", Some(client)).await;
    assert!(!output.is_error, "{}", text(&output));
    assert_eq!(text(&output), "accept {\"name\":\"Slow\"}\nspun true");

    // The timeout still holds the compute itself.
    let dir = asker_folder(Some("[limits]\ntimeout = \"200 ms\"\n"));
    let plugin = load(dir.path()).await;
    let client = FakeClient::new(vec![Reply::Answer(vec![accept(json!({"name": "Quick"}))])]);
    let (output, _) = call(&plugin, "spin_wait_spin", Some(client)).await;
    assert!(output.is_error);
    assert!(
        text(&output).contains("timed out after 200 ms"),
        "{}",
        text(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspended_ask_ends_the_run_quietly_as_input_required() {
    let log = log_lines();
    let dir = asker_folder(None);
    let plugin = load(dir.path()).await;
    let client = FakeClient::new(vec![Reply::Error(AskError::Suspended)]);
    let (output, events) = call(&plugin, "twice", Some(client.clone())).await;
    assert!(output.is_error);
    assert_eq!(
        text(&output),
        "Tool `twice`: the call waits for the client's input"
    );
    // The run ended at the first ask; the client heard no warning.
    assert_eq!(client.asked().len(), 1);
    assert!(events.is_empty(), "{events:?}");
    // The audit line comes after the answer: wait for it.
    let deadline = Instant::now() + Duration::from_secs(5);
    let line = loop {
        let lines = String::from_utf8_lossy(&log.lock().unwrap()).into_owned();
        if let Some(line) = lines
            .lines()
            .find(|l| l.contains("tool=twice") && l.contains("outcome=\"input-required\""))
        {
            break line.to_owned();
        }
        assert!(Instant::now() < deadline, "no audit line in:\n{lines}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    // The run was suspended, not stopped: the fuel it used is counted.
    let fuel: u64 = line
        .split_once("fuel=")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no fuel in {line}"));
    assert!(fuel > 0, "{line}");
    std::io::stderr().flush().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_names_the_contract_and_the_client_import() {
    let dir = asker_folder(None);
    let sandbox = Sandbox::new(SandboxOptions::default()).unwrap();
    let inspection = inspect(&sandbox, &dir.path().join("asker.wasm"))
        .await
        .unwrap();
    assert_eq!(inspection.contract, Ok(Contract::V0_3));
    let client = inspection
        .imports
        .iter()
        .find(|(name, _)| name == "corral:plugin/client@0.3.0")
        .expect("the client import is listed");
    assert!(matches!(client.1, Verdict::Provided(_)));
    assert!(inspection.loaded.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_of_contract_0_1_still_loads_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.wasm");
    std::fs::copy(fixture("contract-v0-1"), &path).unwrap();
    let sandbox = Sandbox::new(SandboxOptions::default()).unwrap();
    let inspection = inspect(&sandbox, &path).await.unwrap();
    assert_eq!(inspection.contract, Ok(Contract::V0_1));
    assert_eq!(
        inspection.contract.as_ref().unwrap().to_string(),
        "corral:plugin@0.1.0"
    );
    assert!(
        inspection
            .imports
            .iter()
            .all(|(name, verdict)| !name.starts_with("corral:plugin/")
                || name.ends_with("@0.1.0") && verdict.allowed())
    );
    let plugin = Plugin::load(&sandbox, &path).await.unwrap();
    assert_eq!(plugin.contract(), Contract::V0_1);
    let mut arguments = Map::new();
    arguments.insert("x".into(), json!(1));
    let output = plugin
        .call(0, "echo", arguments, CallContext::default())
        .await;
    assert!(!output.is_error);
    assert!(matches!(&output.content[0], Content::Text { text, .. } if text == r#"{"x":1}"#));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_of_contract_0_2_still_loads_runs_and_asks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("older.wasm");
    std::fs::copy(fixture("contract-v0-2"), &path).unwrap();
    let sandbox = Sandbox::new(SandboxOptions::default()).unwrap();
    let inspection = inspect(&sandbox, &path).await.unwrap();
    assert_eq!(inspection.contract, Ok(Contract::V0_2));
    assert!(
        inspection
            .imports
            .iter()
            .all(|(name, verdict)| !name.starts_with("corral:plugin/")
                || name.ends_with("@0.2.0") && verdict.allowed())
    );
    let plugin = Plugin::load(&sandbox, &path).await.unwrap();
    assert_eq!(plugin.contract(), Contract::V0_2);
    let mut arguments = Map::new();
    arguments.insert("x".into(), json!(1));
    // Its `client.capabilities` is 0.2.0's, answered as before.
    let output = plugin
        .call(0, "echo2", arguments, CallContext::default())
        .await;
    assert!(!output.is_error);
    assert!(
        matches!(&output.content[0], Content::Text { text, .. } if text == r#"{"x":1} (sampling: false)"#)
    );
}
