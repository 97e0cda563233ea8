//! Secrets, through the sandbox in process: the hostile fixture
//! (`tests/plugins/hostile-secrets`) reads its secret `TOKEN` from an
//! in-memory source and tries to leak it every way it can; each way out is
//! redacted, and the audit line counts what was. The gate refuses a plugin
//! without the grant; a missing required secret fails each call with the
//! command that sets it; a changed value is read at the next call; a name
//! outside the grant reads as none.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

use corral_sandbox::secrets::{SecretSource, SecretSources};
use corral_sandbox::state::StateStore;
use corral_sandbox::state::sqlite::Sqlite;
use corral_sandbox::{Plugin, Sandbox, SandboxOptions};
use corral_tool::{CallContext, CallEvent, CallOutput, Content};
use serde_json::{Value, json};

/// The secret's value: recognisable, so that any leak shows.
/// Every test secret of the suite holds `corral-test-secret-`, which a
/// scan of what the suite captured looks for (scripts/check-captures).
const VALUE: &str = "corral-test-secret-VALUE-0042";
/// A value granted to another plugin, never to the fixture.
const OTHER: &str = "corral-test-secret-OTHER-0043";
/// A value with every kind of character a serializer escapes: a quote,
/// a backslash, a newline, a tab, an escape, a slash and non-ASCII
/// letters (one outside the Basic Multilingual Plane).
const ESCAPED: &str = "corral-test-secret-\"q\"\\b\n\t\u{1b}/é-𝄞-0044";

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

/// The built fixture, built once per test binary.
fn fixture() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(repo_root())
            .args(["build", "--profile", "plugin", "--target", "wasm32-wasip2"])
            .args(["-p", "hostile-secrets"])
            .status()
            .expect("running cargo build for the fixture");
        assert!(status.success(), "building the fixture failed");
    });
    target_dir().join("wasm32-wasip2/plugin/hostile_secrets.wasm")
}

/// Every line the host logs (the plugin's stdout and stderr, its log
/// messages, the audit lines), at debug level for Corral's own targets and
/// warn for the rest, as `corral --log-level debug` logs; installed once.
/// (wasmtime-wasi logs every byte a guest writes to stderr at its own
/// debug level, which only a filter naming it turns on.)
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
        use tracing::Level;
        use tracing_subscriber::filter::Targets;
        use tracing_subscriber::prelude::*;
        let targets = Targets::new()
            .with_default(Level::WARN)
            .with_target("corral_sandbox", Level::DEBUG)
            .with_target("corral_tool", Level::DEBUG)
            .with_target(corral_sandbox::PLUGIN_TARGET, Level::DEBUG);
        tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(move || Writer(log))
                    .with_ansi(false)
                    .with_filter(targets),
            )
            .init();
        log
    })
}

fn logged() -> String {
    String::from_utf8_lossy(&log_lines().lock().unwrap()).into_owned()
}

/// Values by plugin and name, changeable while plugins run.
#[derive(Default)]
struct Memory(Mutex<HashMap<(String, String), String>>);

impl Memory {
    fn set(&self, plugin: &str, name: &str, value: &str) {
        self.0
            .lock()
            .unwrap()
            .insert((plugin.into(), name.into()), value.into());
    }
}

impl SecretSource for Memory {
    fn describe(&self) -> String {
        "memory".into()
    }
    fn get(&self, plugin: &str, name: &str) -> std::io::Result<Option<String>> {
        Ok(self
            .0
            .lock()
            .unwrap()
            .get(&(plugin.to_owned(), name.to_owned()))
            .cloned())
    }
}

struct Loaded {
    _dir: tempfile::TempDir,
    plugin: Plugin,
    memory: Arc<Memory>,
    state: Arc<Sqlite>,
}

/// The fixture as plugin `leaky` with `manifest`, its `TOKEN` set to
/// [`VALUE`] (unless `set` is false) and another plugin's to [`OTHER`].
async fn load(manifest: &str, set: bool) -> Result<Loaded, String> {
    load_with(manifest, set.then_some(VALUE)).await
}

/// [`load`], `TOKEN` set to `value` (if any).
async fn load_with(manifest: &str, value: Option<&str>) -> Result<Loaded, String> {
    log_lines();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(), dir.path().join("leaky.wasm")).unwrap();
    std::fs::write(dir.path().join("leaky.toml"), manifest).unwrap();
    let memory = Arc::new(Memory::default());
    if let Some(value) = value {
        memory.set("leaky", "TOKEN", value);
    }
    memory.set("other", "TOKEN", OTHER);
    memory.set("leaky", "UNGRANTED", OTHER);
    let state = Arc::new(Sqlite::new(dir.path().join("state.sqlite")));
    let options = SandboxOptions {
        state: Some(StateStore(state.clone())),
        secrets: SecretSources::new(vec![memory.clone()]),
        ..SandboxOptions::default()
    };
    let sandbox = Sandbox::new(options).unwrap();
    let plugin = Plugin::load(&sandbox, &dir.path().join("leaky.wasm"))
        .await
        .map_err(|err| format!("{err:#}"))?;
    Ok(Loaded {
        _dir: dir,
        plugin,
        memory,
        state,
    })
}

const GRANT: &str = "[secrets]\nTOKEN = { description = \"The test token\", required = true, env = true }\n\n[state]\nbuckets = [\"default\"]\n";

/// Calls `tool` with `arguments`; the output and the events it sent.
async fn call(plugin: &Plugin, tool: &str, arguments: Value) -> (CallOutput, Vec<CallEvent>) {
    let index = plugin.tools().position(|t| t.name == tool).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let context = CallContext {
        events: Some(Arc::new(move |event| sink.lock().unwrap().push(event))),
        ..CallContext::default()
    };
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    let output = plugin.call(index, tool, arguments, context).await;
    let events = events.lock().unwrap().clone();
    (output, events)
}

fn text(output: &CallOutput) -> String {
    output
        .content
        .iter()
        .map(|item| match item {
            Content::Text { text, .. } => text.clone(),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const MARKER: &str = "[redacted secret TOKEN]";

#[tokio::test(flavor = "multi_thread")]
async fn every_way_out_is_redacted() {
    let loaded = load(GRANT, true).await.unwrap();
    let plugin = &loaded.plugin;

    let (output, events) = call(plugin, "leak", json!({})).await;
    assert!(!output.is_error, "{}", text(&output));
    assert_eq!(
        text(&output),
        format!("the token is {MARKER}, twice: {MARKER}")
    );
    assert_eq!(
        output.structured,
        Some(json!({"token": MARKER, "note": "not secret"}))
    );
    let events = format!("{events:?}");
    assert!(!events.contains(VALUE), "{events}");
    assert!(
        events.contains(&format!("the token is {MARKER}")),
        "{events}"
    );
    assert!(events.contains(&format!("using {MARKER}")), "{events}");

    let (output, _) = call(plugin, "throw", json!({})).await;
    assert!(output.is_error);
    assert!(
        text(&output).contains(&format!("cannot use token {MARKER}")),
        "{}",
        text(&output)
    );

    let (output, _) = call(plugin, "crash", json!({})).await;
    assert!(output.is_error);
    assert!(
        text(&output).contains(&format!("crashing with token {MARKER}")),
        "{}",
        text(&output)
    );

    // Storing is allowed: it is the plugin's own store (`corral state list`
    // redacts what it shows).
    let (output, _) = call(plugin, "store", json!({})).await;
    assert_eq!(text(&output), "stored");
    let entries =
        corral_sandbox::state::Backend::entries(&*loaded.state, "leaky", 10, 100).unwrap();
    assert!(format!("{entries:?}").contains("token"));

    // As an environment variable too (env = true), and redacted there.
    let (output, _) = call(plugin, "env", json!({})).await;
    assert_eq!(text(&output), MARKER);

    // Nothing the host logged holds it; the audit lines count it.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let log = logged();
    assert!(!log.contains(VALUE), "{log}");
    assert!(log.contains(&format!("stdout: {MARKER}")), "{log}");
    assert!(log.contains(&format!("stderr: {MARKER}")), "{log}");
    let audit = log
        .lines()
        .find(|line| line.contains("tool=leak") && line.contains("call"))
        .unwrap_or_else(|| panic!("no audit line for leak: {log}"));
    // Two in the text, one in the structured content, one log message,
    // one progress message, stdout and stderr.
    assert!(audit.contains("redacted=7"), "{audit}");
}

#[tokio::test(flavor = "multi_thread")]
async fn only_granted_names_are_readable_and_a_new_value_is_read_at_the_next_call() {
    let loaded = load(GRANT, true).await.unwrap();
    let plugin = &loaded.plugin;
    let length = |name: &'static str| async move {
        text(&call(plugin, "length", json!({"name": name})).await.0)
    };
    assert_eq!(length("TOKEN").await, format!("{} bytes", VALUE.len()));
    // Held by the source, but not granted: none.
    assert_eq!(length("UNGRANTED").await, "none");
    assert_eq!(text(&call(plugin, "names", json!({})).await.0), "TOKEN");
    loaded
        .memory
        .set("leaky", "TOKEN", "corral-test-secret-rotated-32-by");
    assert_eq!(length("TOKEN").await, "32 bytes");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_required_secret_fails_each_call_with_the_command_that_sets_it() {
    let loaded = load(GRANT, false).await.unwrap();
    let plugin = &loaded.plugin;
    // Loaded, its tools listed.
    assert_eq!(plugin.tools().len(), 9);
    let (output, _) = call(plugin, "names", json!({})).await;
    assert!(output.is_error);
    let message = text(&output);
    assert!(message.contains("needs the secret TOKEN"), "{message}");
    assert!(
        message.contains("`corral secret set leaky TOKEN`"),
        "{message}"
    );
    // Set, it works at the next call.
    loaded.memory.set("leaky", "TOKEN", VALUE);
    let (output, _) = call(plugin, "names", json!({})).await;
    assert_eq!(text(&output), "TOKEN");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_optional_secret_without_a_value_reads_as_none() {
    let manifest = "[secrets]\nTOKEN = { description = \"d\" }\n[state]\nbuckets = [\"default\"]\n";
    let loaded = load(manifest, false).await.unwrap();
    let (output, _) = call(&loaded.plugin, "length", json!({"name": "TOKEN"})).await;
    assert_eq!(text(&output), "none");
    let (output, _) = call(&loaded.plugin, "env", json!({})).await;
    assert_eq!(text(&output), "unset");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gate_refuses_a_plugin_without_the_grant() {
    let Err(err) = load("[state]\nbuckets = [\"default\"]\n", true).await else {
        panic!("loaded without a [secrets] grant")
    };
    assert!(err.contains("wasi:config/store@0.2.0-draft"), "{err}");
    assert!(err.contains("[secrets]"), "{err}");
}

/// The mark every test secret holds: no escaping changes it, so any copy
/// of a value, escaped or not, holds it.
const MARK: &str = "corral-test-secret-";

#[tokio::test(flavor = "multi_thread")]
async fn a_value_that_serializers_escape_is_redacted_in_structured_content_and_everywhere() {
    // The fixture's structured content is JSON text written by serde_json
    // in the guest, where the value's quote, backslash and controls are
    // escaped: the exact value is not in that text, but the client would
    // get it once the host parsed it.
    let loaded = load_with(GRANT, Some(ESCAPED)).await.unwrap();
    let (output, events) = call(&loaded.plugin, "leak", json!({})).await;
    assert!(!output.is_error, "{}", text(&output));
    assert_eq!(
        output.structured,
        Some(json!({"token": MARKER, "note": "not secret"}))
    );
    assert_eq!(
        text(&output),
        format!("the token is {MARKER}, twice: {MARKER}")
    );
    let shown = format!("{output:?} {events:?}");
    assert!(!shown.contains(MARK), "{shown}");
    let (output, _) = call(&loaded.plugin, "throw", json!({})).await;
    assert!(
        text(&output).contains(&format!("cannot use token {MARKER}")),
        "{}",
        text(&output)
    );
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let log = logged();
    assert!(!log.contains(MARK), "{log}");
}

/// A client that records what it is asked and answers nothing.
#[derive(Default)]
struct Recording(Mutex<Vec<corral_tool::InputRequest>>);

impl corral_tool::Client for Recording {
    fn capabilities(&self) -> corral_tool::ClientCapabilities {
        corral_tool::ClientCapabilities {
            elicitation_form: true,
            elicitation_url: true,
            sampling: true,
            roots: true,
        }
    }

    fn ask(&self, requests: Vec<corral_tool::InputRequest>) -> corral_tool::AskFuture<'_> {
        self.0.lock().unwrap().extend(requests);
        Box::pin(async { Err(corral_tool::AskError::Failed("the test declines".into())) })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_plugin_asks_its_client_never_holds_its_secret() {
    // A value with what JSON escapes, and none that a URL may not hold.
    for value in [VALUE, "corral-test-secret-\"q\"\\b/é-𝄞-0045"] {
        let loaded = load_with(GRANT, Some(value)).await.unwrap();
        let client = Arc::new(Recording::default());
        let index = loaded.plugin.tools().position(|t| t.name == "ask").unwrap();
        let context = CallContext {
            client: Some(client.clone()),
            ..CallContext::default()
        };
        let output = loaded
            .plugin
            .call(index, "ask", serde_json::Map::new(), context)
            .await;
        assert!(
            text(&output).contains("not answered: "),
            "{}",
            text(&output)
        );
        let asked = client.0.lock().unwrap().clone();
        assert_eq!(asked.len(), 3, "{asked:?}");
        let sent = serde_json::to_string(
            &asked
                .iter()
                .map(|request| (request.key.clone(), Value::Object(request.params.clone())))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(!sent.contains(MARK), "{sent}");
        let params = |i: usize| Value::Object(asked[i].params.clone());
        let (form, url, sample) = (params(0), params(1), params(2));
        assert_eq!(form["message"], format!("form {MARKER}"), "{form}");
        let answer = &form["requestedSchema"]["properties"]["answer"];
        assert_eq!(answer["description"], format!("description {MARKER}"));
        assert_eq!(answer["title"], format!("title {MARKER}"));
        assert_eq!(answer["default"], MARKER);
        assert_eq!(url["message"], format!("open {MARKER}"), "{url}");
        assert_eq!(
            url["url"],
            format!("https://example.com/leak?token={MARKER}"),
            "{url}"
        );
        assert_eq!(sample["systemPrompt"], format!("system {MARKER}"));
        assert_eq!(
            sample["messages"][0]["content"]["text"],
            format!("prompt {MARKER}"),
            "{sample}"
        );
        assert_eq!(sample["stopSequences"], json!([MARKER]), "{sample}");
    }
}
