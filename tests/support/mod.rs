//! Test support: the real `corral` binary driven over stdio as a client would,
//! and the real example plugins built from source.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod oidc;

/// The start of every test secret's value in the whole suite: a value
/// that leaks shows in the captures (see [`capture`]), however JSON or
/// Debug escaped it.
pub const SECRET_MARK: &str = "corral-test-secret-";

/// Appends `text` (one or more whole lines) to this test binary's capture,
/// `target/test-captures/SUITE-PID.log`: everything a `corral` started by
/// [`Server`] wrote to stderr, and every message a test's client received
/// (stdio and HTTP). After the suites, `scripts/check-captures` fails if
/// any capture holds [`SECRET_MARK`]. Only what Corral sent is captured,
/// never what a test sends or reads elsewhere (the store's file, a value
/// the test set).
pub fn capture(text: &str) {
    static FILE: OnceLock<Mutex<std::fs::File>> = OnceLock::new();
    let file = FILE.get_or_init(|| {
        let dir = target_dir().join("test-captures");
        std::fs::create_dir_all(&dir).expect("creating target/test-captures");
        let exe = std::env::current_exe().expect("the test binary's path");
        let stem = exe.file_stem().unwrap().to_string_lossy().into_owned();
        // `secrets-0123abcd` (cargo's hash) -> `secrets`.
        let suite = stem
            .rsplit_once('-')
            .map_or(stem.as_str(), |(suite, _)| suite);
        let path = dir.join(format!("{suite}-{}.log", std::process::id()));
        let file = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|err| panic!("opening {}: {err}", path.display()));
        Mutex::new(file)
    });
    let mut line = text.to_owned();
    if !line.ends_with('\n') {
        line.push('\n');
    }
    // One write per call: lines of servers running at once never mix.
    file.lock()
        .unwrap()
        .write_all(line.as_bytes())
        .expect("writing a capture");
}

/// Collects a stream into whole lines for [`capture`].
#[derive(Default)]
pub struct CaptureLines(String);

impl CaptureLines {
    /// Adds `text`; captures every line it completes.
    pub fn push(&mut self, text: &str) {
        self.0.push_str(text);
        if let Some(end) = self.0.rfind('\n') {
            let lines: String = self.0.drain(..=end).collect();
            capture(&lines);
        }
    }
}

impl Drop for CaptureLines {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            capture(&self.0);
        }
    }
}

/// How long any single expected message may take to arrive.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The repository root (the tests belong to `host/corral`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// A command for `program` (a script of the repository, a project's
/// `./build`) with the environment of the shell a user runs it from: without
/// the variables cargo sets for a running test (CARGO_MANIFEST_DIR,
/// CARGO_PKG_NAME, ...). A `cargo build` underneath would otherwise see them:
/// ring's build script reruns when they change, and with it rustls, reqwest
/// and corral are compiled again, and every plugin built by the new binary
/// is rebuilt (minutes, twice: again when the next plain `cargo build` sees
/// them gone).
pub fn user_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CARGO_PKG_")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
                "OUT_DIR",
            ]
            .contains(&name)
        {
            command.env_remove(name);
        }
    }
    command
}

/// Runs a setup script (a path from the repository's root, such as
/// `tests/clients/setup-python`) that installs what a test needs under the
/// target folder (never system packages: see [`system_program`]), and returns
/// the lines it prints: the paths to run it from. Fails with the script's
/// stderr.
pub fn run_setup(script: &str) -> Vec<String> {
    let output = user_command(repo_root().join(script))
        .output()
        .unwrap_or_else(|err| panic!("running {script}: {err}"));
    assert!(
        output.status.success(),
        "{script} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The path of `program`, from the Debian package `package`, which
/// `scripts/system-packages test` installs before any test runs (scripts/test
/// runs it first). Tests run in parallel and never install anything from
/// Debian themselves: apt allows one install at a time. A missing program
/// fails the test with the command that installs it.
pub fn system_program(program: &str, package: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    // Debian puts daemons such as nginx in sbin, often not on a user's PATH.
    let sbin = ["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from);
    std::env::split_paths(&path)
        .chain(sbin)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .unwrap_or_else(|| {
            panic!(
                "{program} is missing: the suites need Debian's {package}; install it with \
                 `scripts/system-packages test` (scripts/test runs it before any test)"
            )
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The target folder: `CARGO_TARGET_DIR`, or `target/` in the repository.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}

/// The compile cache the tests share, inside the target directory (never
/// the user's own cache).
pub fn test_cache_dir() -> PathBuf {
    target_dir().join("test-cache").join("shared")
}

/// The example plugins written in Rust. Most suites serve only these: they
/// load in milliseconds, while a Python or JavaScript plugin takes tens of
/// seconds to compile cold. `tests/languages.rs` serves every language.
pub const RUST_EXAMPLES: [&str; 4] = ["calc", "sketch", "textstats", "ticker"];

/// Builds every plugin (examples in every language and the test fixtures)
/// once per test binary, with the same command users run; returns the folder
/// of all built examples (`target/plugins`).
pub fn all_plugins_dir() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = user_command(repo_root().join("plugins/build"))
            .current_dir(repo_root())
            .stdout(Stdio::null())
            .status()
            .expect("running plugins/build");
        assert!(status.success(), "plugins/build failed");
    });
    target_dir().join("plugins")
}

/// A folder holding only the Rust example plugins (see [`RUST_EXAMPLES`]),
/// refreshed from `target/plugins` once per test binary.
pub fn plugins_dir() -> PathBuf {
    static COPIED: OnceLock<PathBuf> = OnceLock::new();
    COPIED
        .get_or_init(|| {
            let all = all_plugins_dir();
            let dir = target_dir().join("test-plugins").join("rust-examples");
            std::fs::create_dir_all(&dir).unwrap();
            for name in RUST_EXAMPLES {
                let file = format!("{name}.wasm");
                let (source, dest) = (all.join(&file), dir.join(&file));
                let same = std::fs::read(&dest).ok() == Some(std::fs::read(&source).unwrap());
                if !same {
                    // By rename: another test binary may be serving this folder.
                    let temporary = dir.join(format!(".{file}.{}", std::process::id()));
                    std::fs::copy(&source, &temporary).unwrap();
                    std::fs::rename(&temporary, &dest).unwrap();
                }
            }
            dir
        })
        .clone()
}

/// The folder [`build_fixture`] builds the fixture `tests/plugins/NAME`
/// into: `target/test-plugins/NAME`.
pub fn fixture_dir(name: &str) -> PathBuf {
    target_dir().join("test-plugins").join(name)
}

/// Builds the fixture `tests/plugins/NAME` with the script that builds the
/// examples of its language (`plugins/build-SCRIPT --out DIR PROJECT`) into
/// a folder of its own ([`fixture_dir`]), and returns that folder and what
/// the build said on stderr. One build at a time per test binary:
/// two componentize runs at once would only slow each other on a small
/// machine. A build finds its output up to date when nothing changed.
pub fn build_fixture(script: &str, name: &str) -> (PathBuf, String) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    // The toolchains (and target/release/corral, which the C and Go builds
    // use) as plugins/build installs them, once per test binary.
    all_plugins_dir();
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let project = repo_root().join("tests/plugins").join(name);
    let out = fixture_dir(name);
    let output = user_command(repo_root().join(format!("plugins/build-{script}")))
        .arg("--out")
        .arg(&out)
        .arg(&project)
        .output()
        .unwrap_or_else(|err| panic!("plugins/build-{script}: {err}"));
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "plugins/build-{script} {}: {said}",
        project.display()
    );
    (out, said)
}

/// The built example plugin `name` (e.g. "calc", "python-dates").
pub fn example(name: &str) -> PathBuf {
    all_plugins_dir().join(format!("{name}.wasm"))
}

/// The built test-only plugin `name` from `tests/plugins/`.
pub fn fixture(name: &str) -> PathBuf {
    all_plugins_dir();
    target_dir()
        .join("test-plugins")
        .join(format!("{name}.wasm"))
}

/// A fresh plugin folder holding copies of `plugins`, each as `(file name, source)`.
pub fn folder_with(plugins: &[(&str, &Path)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, source) in plugins {
        std::fs::copy(source, dir.path().join(name)).unwrap();
    }
    dir
}

/// The manifest the conformance fixture (tests/plugins/conformance) needs,
/// with `more_limits` (lines of its `[limits]` table): it keeps whether it
/// lists `test_added_tool` in its store, and its calls become tasks after
/// half a second (for a client that takes them), as the tasks scenarios'
/// tools expect: they work a second first.
pub fn conformance_manifest(more_limits: &str) -> String {
    format!("[limits]\ntask-after = \"500 ms\"\n{more_limits}\n[state]\nbuckets = [\"default\"]\n")
}

/// A fresh folder serving the conformance fixture, with its manifest and
/// `more_limits` in its `[limits]`.
pub fn conformance_folder(more_limits: &str) -> tempfile::TempDir {
    let folder = folder_with(&[("conformance.wasm", &fixture("conformance"))]);
    let manifest = conformance_manifest(more_limits);
    std::fs::write(folder.path().join("conformance.toml"), manifest).unwrap();
    folder
}

/// The manifest of the conformance suite's second fixture
/// (tests/plugins/conformance-resources): it keeps whether it lists
/// `test_added_prompt` in its store.
pub const CONFORMANCE_RESOURCES_MANIFEST: &str = "[state]\nbuckets = [\"default\"]\n";

/// Adds the fixture with the resources, prompts and completions of the
/// conformance suite's scenarios (tests/plugins/conformance-resources) to
/// `dir`, with its manifest, as plugin `name` (`NAME.wasm`, `NAME.toml`).
pub fn add_conformance_resources(dir: &Path, name: &str) {
    std::fs::copy(
        fixture("conformance-resources"),
        dir.join(format!("{name}.wasm")),
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("{name}.toml")),
        CONFORMANCE_RESOURCES_MANIFEST,
    )
    .unwrap();
}

/// Where served plugins keep their state when a test names no store
/// (`XDG_DATA_HOME` of every server the tests start): inside the target
/// folder, never the user's own data directory.
pub fn test_data_dir() -> PathBuf {
    target_dir().join("test-data")
}

/// A running `corral serve`.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
    next_id: i64,
    /// Notifications received while waiting for responses, in order.
    pub notifications: Vec<Value>,
}

impl Server {
    /// Starts `corral serve DIR` with extra arguments.
    pub fn start_with(dir: &Path, args: &[&str]) -> Server {
        Server::start_with_env(dir, args, &[])
    }

    /// Starts `corral serve DIR` with extra arguments and extra environment
    /// variables (on top of the test's own environment).
    pub fn start_with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_corral"));
        command.arg("serve").arg(dir).args(args);
        Server::spawn(command, env)
    }

    /// Starts `corral dev PROJECT`: the project built, served and rebuilt
    /// as its sources change.
    pub fn dev(project: &Path) -> Server {
        Server::dev_with_env(project, &[])
    }

    /// [`Server::dev`] with extra environment variables, which the
    /// project's `./build` sees too (`CORRAL_TOOLCHAINS`, say).
    pub fn dev_with_env(project: &Path, env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_corral"));
        command.arg("dev").arg(project);
        Server::spawn(command, env)
    }

    /// Starts `command` (a corral that serves on stdio) with the tests'
    /// compile cache and state folder, and info logs on stderr, then `env`.
    fn spawn(mut command: Command, env: &[(&str, &str)]) -> Server {
        let mut child = command
            .env("CORRAL_LOG", "info")
            .env("CORRAL_CACHE_DIR", test_cache_dir())
            .env("XDG_DATA_HOME", test_data_dir())
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting corral");
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                capture(&line);
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|err| panic!("stdout carried a non-JSON line ({err}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let mut captured = CaptureLines::default();
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]);
                captured.push(&text);
                sink.lock().unwrap().push_str(&text);
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            messages,
            stderr,
            next_id: 1,
            notifications: Vec::new(),
        }
    }

    pub fn start(dir: &Path) -> Server {
        Server::start_with(dir, &[])
    }

    /// Starts a server on `dir` and completes the handshake for `revision`.
    pub fn initialized(dir: &Path, revision: &str) -> Server {
        let mut server = Server::start(dir);
        server.initialize(revision);
        server
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// What the server wrote to stderr, once it contains `needle` (stderr is
    /// read on another thread, so it may lag behind stdout). Fails after
    /// [`PATIENCE`].
    pub fn stderr_containing(&self, needle: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let stderr = self.stderr();
            if stderr.contains(needle) {
                return stderr;
            }
            if Instant::now() > deadline {
                panic!("stderr never contained {needle:?}:\n{stderr}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Writes one raw line.
    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is closed");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes raw bytes, as they are (a piece of a line, or several lines).
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is closed");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// The next message, whatever it is.
    pub fn recv(&mut self) -> Value {
        self.recv_within(PATIENCE)
            .unwrap_or_else(|| panic!("no message within {PATIENCE:?}; stderr:\n{}", self.stderr()))
    }

    /// The next message, or `None` if nothing arrives within `timeout`.
    pub fn recv_within(&mut self, timeout: Duration) -> Option<Value> {
        match self.messages.recv_timeout(timeout) {
            Ok(message) => Some(message),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// A fresh numeric id.
    pub fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.id());
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// Waits for the response to `id`, keeping notifications and failing on
    /// any other response.
    pub fn response_to(&mut self, id: &Value) -> Value {
        self.response_within(id, PATIENCE)
    }

    /// [`Server::response_to`] with another bound than [`PATIENCE`] (a first
    /// load that compiles large plugins cold takes longer).
    pub fn response_within(&mut self, id: &Value, bound: Duration) -> Value {
        let deadline = Instant::now() + bound;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.recv_within(left) else {
                panic!(
                    "no response to {id} within {bound:?}; stderr:\n{}",
                    self.stderr()
                );
            };
            if message.get("id") == Some(id) {
                return message;
            }
            if message.get("id").is_none() && message.get("method").is_some() {
                self.notifications.push(message);
                continue;
            }
            panic!("unexpected message while waiting for {id}: {message}");
        }
    }

    /// Waits for the responses to all of `ids`, in any order, keeping
    /// notifications and failing on any other response. Returns them in the
    /// order of `ids`.
    pub fn responses_to(&mut self, ids: &[Value]) -> Vec<Value> {
        let deadline = Instant::now() + PATIENCE;
        let mut responses: Vec<Option<Value>> = vec![None; ids.len()];
        while responses.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.recv_within(left) else {
                panic!(
                    "no responses to all of {ids:?} within {PATIENCE:?}; stderr:\n{}",
                    self.stderr()
                );
            };
            if message.get("id").is_none() && message.get("method").is_some() {
                self.notifications.push(message);
                continue;
            }
            match ids.iter().position(|id| message.get("id") == Some(id)) {
                Some(i) if responses[i].is_none() => responses[i] = Some(message),
                _ => panic!("unexpected message while waiting for {ids:?}: {message}"),
            }
        }
        responses.into_iter().map(Option::unwrap).collect()
    }

    /// Sends a request and returns the whole response message.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response_to(&id)
    }

    /// Sends a request and returns its `result`, failing on an error response.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        result_of(method, response)
    }

    /// `initialize` then `notifications/initialized`; returns the result.
    pub fn initialize(&mut self, revision: &str) -> Value {
        let result = self.result(
            "initialize",
            json!({
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": { "name": "corral-tests", "version": "0" }
            }),
        );
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        result
    }

    /// Every tool, following `nextCursor` to the end.
    pub fn all_tools(&mut self) -> Vec<Value> {
        let mut tools = Vec::new();
        let mut params = json!({});
        loop {
            let page = self.result("tools/list", params);
            tools.extend(page["tools"].as_array().unwrap().iter().cloned());
            match page.get("nextCursor") {
                Some(cursor) => params = json!({ "cursor": cursor }),
                None => return tools,
            }
        }
    }

    /// The names of every tool, in listed order.
    pub fn tool_names(&mut self) -> Vec<String> {
        self.all_tools()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// `tools/call` and its result.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// Closes stdin, as a client does to end the session.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process to exit, failing after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                panic!(
                    "corral did not exit within {timeout:?}; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Milliseconds of CPU time (user + system) the server has used so far.
    pub fn cpu_millis(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // Fields after the command name, which is in parentheses.
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        ticks * 1000 / 100
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's resident set size (`VmRSS`), in bytes.
    pub fn rss_bytes(&self) -> u64 {
        proc_status_bytes(self.child.id(), "VmRSS")
    }

    /// The server's peak resident set size so far (`VmHWM`), in bytes.
    pub fn peak_rss_bytes(&self) -> u64 {
        proc_status_bytes(self.child.id(), "VmHWM")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `kB` field of `/proc/PID/status` (such as `VmRSS`), in bytes; 0 once the
/// process is gone.
pub fn proc_status_bytes(pid: u32, field: &str) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Removes and returns the notifications named `method` received so far.
pub fn take(server: &mut Server, method: &str) -> Vec<Value> {
    let (taken, kept) = std::mem::take(&mut server.notifications)
        .into_iter()
        .partition(|n| n["method"] == method);
    server.notifications = kept;
    taken
}

/// Waits for a notification named `method`, keeping any others.
pub fn expect_notification(server: &mut Server, method: &str) -> Value {
    if let Some(found) = take(server, method).into_iter().next() {
        return found;
    }
    let deadline = Instant::now() + PATIENCE;
    while let Some(message) = server.recv_within(deadline.saturating_duration_since(Instant::now()))
    {
        if message["method"] == method {
            return message;
        }
        assert!(message.get("id").is_none(), "unexpected response {message}");
        server.notifications.push(message);
    }
    panic!(
        "no {method} within {PATIENCE:?}; stderr:\n{}",
        server.stderr()
    );
}

/// Asserts that no notification named `method` arrives within the window.
pub fn expect_silence(server: &mut Server, method: &str, window: Duration) {
    let early = take(server, method);
    assert!(early.is_empty(), "unexpected {method}: {early:?}");
    let deadline = Instant::now() + window;
    while let Some(message) = server.recv_within(deadline.saturating_duration_since(Instant::now()))
    {
        assert_ne!(
            message["method"],
            method,
            "unexpected notification; stderr:\n{}",
            server.stderr()
        );
        server.notifications.push(message);
    }
}

/// Waits until the server's stderr holds `needle` at least `count` times.
pub fn wait_for_stderr(server: &Server, needle: &str, count: usize) {
    let deadline = Instant::now() + PATIENCE;
    while server.stderr().matches(needle).count() < count {
        assert!(
            Instant::now() < deadline,
            "stderr never held {count} x {needle:?}:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes `text` to `dir/name`, e.g. a plugin's manifest (`hostile.toml`).
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A response's `result`, failing on an error response.
fn result_of(method: &str, mut response: Value) -> Value {
    match response.get_mut("result") {
        Some(result) => result.take(),
        None => panic!("{method} failed: {response}"),
    }
}

/// The text of a call result's first content item.
pub fn first_text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
}

/// The stateless protocol revision (no `initialize`; `_meta` on every request).
pub const MODERN: &str = "2026-07-28";

/// The `_meta` every 2026-07-28 request carries.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

impl Server {
    /// Sends a 2026-07-28 request without waiting: `params` with
    /// [`modern_meta`] merged into its `_meta` (keys already there win).
    /// Returns its id.
    pub fn send_modern(&mut self, method: &str, mut params: Value) -> Value {
        let mut meta = modern_meta();
        if let Some(extra) = params.get("_meta").and_then(Value::as_object) {
            for (key, value) in extra {
                meta[key] = value.clone();
            }
        }
        params["_meta"] = meta;
        self.send_request(method, params)
    }

    /// A 2026-07-28 request and its whole response message.
    pub fn modern(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_modern(method, params);
        self.response_to(&id)
    }

    /// A 2026-07-28 request's `result`, failing on an error response.
    pub fn modern_result(&mut self, method: &str, params: Value) -> Value {
        let response = self.modern(method, params);
        result_of(method, response)
    }
}

/// A 2025-03-26 batch whose answer would wait on the client if anything in
/// it could: beside a `ping` (id 1), a `subscriptions/listen` stream (id 2;
/// with the ping, the batch a wire fuzzer sent), which ends only when the
/// client cancels it, and a call of the conformance fixture's
/// `test_sampling` (id 3), whose tool asks the client for sampling.
pub fn batch_that_could_wait_on_the_client() -> Value {
    json!([
        { "jsonrpc": "2.0", "id": 1, "method": "ping" },
        {
            "jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
            "params": { "_meta": modern_meta(), "notifications": { "toolsListChanged": true } },
        },
        {
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": { "name": "test_sampling", "arguments": { "prompt": "Say hi" } },
        },
    ])
}

/// Checks the answer to [`batch_that_could_wait_on_the_client`]: one array,
/// the ping answered, the listen request refused (-32600) naming both
/// revisions, and the call's tool told it could not ask the client.
pub fn assert_answered_without_waiting(answer: &Value) {
    let responses = answer
        .as_array()
        .unwrap_or_else(|| panic!("not the batch's answer: {answer}"));
    assert_eq!(responses.len(), 3, "{answer}");
    let by_id = |id: i64| {
        responses
            .iter()
            .find(|response| response["id"] == id)
            .unwrap_or_else(|| panic!("no response to {id} in {answer}"))
    };
    assert_eq!(by_id(1)["result"], json!({}), "{answer}");
    let refused = &by_id(2)["error"];
    assert_eq!(refused["code"], -32600, "{answer}");
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("subscriptions/listen")
            && message.contains("2026-07-28")
            && message.contains("2025-03-26"),
        "{answer}"
    );
    let call = &by_id(3)["result"];
    assert_eq!(call["isError"], true, "{answer}");
    assert!(first_text(call).contains("JSON-RPC batch"), "{answer}");
}
