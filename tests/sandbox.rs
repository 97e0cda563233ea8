//! The sandbox under attack: hostile plugins (`tests/plugins/hostile*`) try to
//! burn CPU, memory and stack, flood their output, read and write host files,
//! read the host's environment, open sockets and make HTTP requests, and
//! misbehave while loading. Each test proves the attack fails with the right
//! error, and that a normal call right after still succeeds on the same server.
//!
//! Limits and grants come from the manifest beside each plugin
//! (`hostile.toml` next to `hostile.wasm`).

mod support;

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{
    Server, example, first_text, fixture, folder_with, proc_status_bytes, wait_for_stderr,
    write_file,
};
use tempfile::TempDir;

const REVISION: &str = "2025-11-25";
const MIB: u64 = 1 << 20;

/// A folder holding `hostile.wasm` and, when given, its manifest `hostile.toml`.
fn hostile_folder(manifest: Option<&str>) -> TempDir {
    let dir = folder_with(&[("hostile.wasm", &fixture("hostile"))]);
    if let Some(manifest) = manifest {
        write_file(dir.path(), "hostile.toml", manifest);
    }
    dir
}

fn serve(dir: &Path) -> Server {
    Server::initialized(dir, REVISION)
}

/// Every text of a result (content texts and structured content), joined:
/// what the model would see.
fn all_text(result: &Value) -> String {
    let mut text = String::new();
    if let Some(content) = result["content"].as_array() {
        for item in content {
            if let Some(t) = item["text"].as_str() {
                text.push_str(t);
                text.push('\n');
            }
            if let Some(t) = item["resource"]["text"].as_str() {
                text.push_str(t);
                text.push('\n');
            }
        }
    }
    if let Some(structured) = result.get("structuredContent") {
        text.push_str(&structured.to_string());
    }
    text
}

/// `value` as JSON, cut to a length that keeps failure messages readable
/// (a huge result would otherwise flood the test output).
fn brief(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 2000 {
        return text;
    }
    let mut end = 2000;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

/// Asserts `result` is a tool execution error whose text contains `needle`.
#[track_caller]
fn assert_tool_error(result: &Value, needle: &str) {
    assert_eq!(
        result["isError"],
        true,
        "expected a tool error: {}",
        brief(result)
    );
    assert!(
        all_text(result).contains(needle),
        "expected the error to contain {needle:?}, got: {}",
        brief(result)
    );
}

/// Asserts `result` succeeded and returns its first text.
#[track_caller]
fn assert_success(result: &Value) -> String {
    assert_eq!(
        result["isError"],
        false,
        "expected success: {}",
        brief(result)
    );
    first_text(result).to_string()
}

/// The normal call after each attack: the same server still serves.
#[track_caller]
fn assert_still_serves(server: &mut Server) {
    let result = server.call("ok", json!({}));
    assert_eq!(
        assert_success(&result),
        "ok",
        "stderr:\n{}",
        server.stderr()
    );
}

/// A manifest granting `host` as `/data` in `mode` ("ro" or "rw").
fn dir_grant(host: &Path, mode: &str) -> String {
    format!(
        "[[dirs]]\nhost = {}\nguest = \"/data\"\nmode = \"{mode}\"\n",
        toml_string(&host.display().to_string())
    )
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A file name no other test (or earlier run) uses.
fn unique_name(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("corral-sandbox-{what}-{}-{nanos}", std::process::id())
}

// ---------------------------------------------------------------------------
// CPU, memory, stack and output

#[test]
fn limit_hits_reach_the_client_log_at_warning_level() {
    let dir = hostile_folder(Some("[limits]\nfuel = 100_000_000\n"));
    let mut server = serve(dir.path());
    server.call("spin", json!({}));
    assert!(
        server
            .notifications
            .iter()
            .all(|n| n["method"] != "notifications/message"),
        "no log level set yet: {:?}",
        server.notifications
    );
    server.result("logging/setLevel", json!({ "level": "warning" }));
    let result = server.call("spin", json!({}));
    assert_tool_error(&result, "fuel budget of 100,000,000");
    let logged = server
        .notifications
        .iter()
        .find(|n| n["method"] == "notifications/message")
        .unwrap_or_else(|| panic!("no log notification: {:?}", server.notifications));
    assert_eq!(logged["params"]["level"], "warning", "{logged}");
    assert!(
        logged["params"]["data"]
            .as_str()
            .unwrap()
            .contains("burned its whole fuel budget of 100,000,000"),
        "{logged}"
    );
    assert_still_serves(&mut server);
}

/// The message says first that a loop may be why, and how long it ran;
/// only then that a call that truly needs more can raise the limit.
#[test]
fn an_infinite_loop_exhausts_its_fuel() {
    let dir = hostile_folder(Some("[limits]\nfuel = 100_000_000\n"));
    let mut server = serve(dir.path());
    let started = Instant::now();
    let result = server.call("spin", json!({}));
    let elapsed = started.elapsed();
    assert_tool_error(
        &result,
        "Tool `spin` failed: it may be stuck in a loop: it ran for ",
    );
    assert_tool_error(
        &result,
        " and burned its whole fuel budget of 100,000,000 (about one unit per wasm instruction) \
         without finishing. A call that truly needs more can raise [limits] fuel in the plugin's \
         manifest",
    );
    // How long it ran, as told, is within what the client waited.
    let text = all_text(&result);
    let told = text
        .split_once("it ran for ")
        .and_then(|(_, rest)| rest.split_once(" and burned"))
        .map(|(time, _)| time)
        .unwrap();
    let told = match told.split_once(' ') {
        Some((millis, "ms")) => Duration::from_millis(millis.parse().unwrap()),
        Some((secs, "s")) => Duration::from_secs_f64(secs.parse().unwrap()),
        _ => panic!("not a duration: {told}"),
    };
    assert!(
        told > Duration::ZERO && told <= elapsed,
        "told {told:?}, waited {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_secs(10),
        "100,000,000 fuel took {elapsed:?}"
    );
    // The audit line counts all the fuel it burned.
    wait_for_stderr(&server, "fuel=100000000 outcome=\"fuel-limit\"", 1);
    assert_still_serves(&mut server);
}

#[test]
fn an_infinite_loop_times_out() {
    let dir = hostile_folder(Some(
        "[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"1 s\"\n",
    ));
    let mut server = serve(dir.path());
    let started = Instant::now();
    let result = server.call("spin", json!({}));
    let elapsed = started.elapsed();
    assert_tool_error(
        &result,
        "Tool `spin` failed: timed out after 1 s: it may be stuck in a loop, or waiting for \
         something that never comes. A call that truly needs longer can raise \
         [limits] timeout in the plugin's manifest",
    );
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(5),
        "a 1 s timeout took {elapsed:?}"
    );
    assert_still_serves(&mut server);
}

#[test]
fn a_memory_bomb_hits_the_memory_limit_and_host_memory_stays_bounded() {
    let dir = hostile_folder(Some("[limits]\nmemory = \"32 MiB\"\n"));
    let mut server = serve(dir.path());
    // Sample the server's RSS while the bomb goes off.
    let pid = server.pid();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(Ordering::Relaxed) {
                peak = peak.max(proc_status_bytes(pid, "VmRSS"));
                std::thread::sleep(Duration::from_millis(1));
            }
            peak
        })
    };
    let result = server.call("memory_bomb", json!({}));
    let rss_after = server.rss_bytes();
    stop.store(true, Ordering::Relaxed);
    let rss_peak = sampler.join().unwrap().max(rss_after);
    assert_tool_error(
        &result,
        "memory limit 32 MiB reached (a call that needs more: raise [limits] memory",
    );
    let bound = (32 + 100) * MIB;
    assert!(
        rss_after < bound,
        "server RSS right after the bomb: {} MiB",
        rss_after / MIB
    );
    assert!(
        rss_peak < bound,
        "server RSS peaked at {} MiB during the bomb",
        rss_peak / MIB
    );
    assert_still_serves(&mut server);
}

#[test]
fn unbounded_recursion_overflows_the_stack() {
    let dir = hostile_folder(None);
    let mut server = serve(dir.path());
    let result = server.call("deep_recursion", json!({}));
    assert_tool_error(&result, "stack overflow");
    assert_still_serves(&mut server);
}

#[test]
fn huge_output_hits_the_output_limit() {
    let dir = hostile_folder(Some("[limits]\noutput = \"1 MiB\"\n"));
    let mut server = serve(dir.path());
    let result = server.call("huge_output", json!({ "mib": 2 }));
    assert_tool_error(&result, "more than the limit of 1 MiB");
    // Under the limit is fine.
    let small = server.call("huge_output", json!({ "mib": 0 }));
    assert_success(&small);
    assert_still_serves(&mut server);
}

#[test]
fn huge_output_hits_the_default_output_limit() {
    let dir = hostile_folder(None);
    let mut server = serve(dir.path());
    let result = server.call("huge_output", json!({ "mib": 5 }));
    assert_tool_error(&result, "more than the limit of 4 MiB");
    assert_still_serves(&mut server);
}

// ---------------------------------------------------------------------------
// Files

#[test]
fn without_a_grant_no_host_file_is_visible() {
    let dir = hostile_folder(None);
    let mut server = serve(dir.path());
    for path in ["/etc/passwd", "etc/passwd", "../../../../etc/passwd"] {
        let result = server.call("read_file", json!({ "path": path }));
        assert_eq!(result["isError"], true, "{path}: {result}");
        assert!(!all_text(&result).contains("root:"), "{path}: {result}");
    }
    for path in ["/", ".", "/etc", "/tmp"] {
        let result = server.call("list_dir", json!({ "path": path }));
        assert_eq!(result["isError"], true, "listing {path}: {result}");
        assert!(!all_text(&result).contains("passwd"), "{path}: {result}");
    }
    assert_still_serves(&mut server);
}

#[test]
fn without_a_grant_nothing_can_be_written() {
    let dir = hostile_folder(None);
    let mut server = serve(dir.path());
    let name = unique_name("nogrant");
    let target = std::env::temp_dir().join(&name);
    for path in [target.display().to_string(), name.clone()] {
        let result = server.call(
            "write_file",
            json!({ "path": path, "contents": "written by a hostile plugin" }),
        );
        assert_eq!(result["isError"], true, "writing {path}: {result}");
    }
    assert!(!target.exists(), "{} was created", target.display());
    assert!(!dir.path().join(&name).exists());
    assert_still_serves(&mut server);
}

#[test]
fn writes_outside_a_granted_directory_fail() {
    let dir = hostile_folder(None);
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    write_file(dir.path(), "hostile.toml", &dir_grant(&data, "rw"));
    let mut server = serve(dir.path());

    // The grant works...
    let inside = server.call(
        "write_file",
        json!({ "path": "/data/inside.txt", "contents": "fine" }),
    );
    assert_success(&inside);
    assert_eq!(
        std::fs::read_to_string(data.join("inside.txt")).unwrap(),
        "fine"
    );

    // ...and nothing else is writable.
    let name = unique_name("outside");
    let host_tmp = std::env::temp_dir().join(&name);
    let attempts = [
        format!("/{name}"),
        host_tmp.display().to_string(),
        format!("/data/../{name}"),
        format!("/data/./../{name}"),
        format!("/data/sub/../../{name}"),
        format!("../{name}"),
        name.clone(),
    ];
    for path in &attempts {
        let result = server.call("write_file", json!({ "path": path, "contents": "escaped" }));
        assert_eq!(result["isError"], true, "writing {path}: {result}");
    }
    assert!(!host_tmp.exists(), "{} was created", host_tmp.display());
    assert!(
        !dir.path().join(&name).exists(),
        "the plugin wrote beside its grant"
    );
    assert!(!Path::new("/").join(&name).exists());
    assert_still_serves(&mut server);
}

#[test]
fn dot_dot_cannot_escape_a_granted_directory() {
    let dir = hostile_folder(None);
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("inside.txt"), "granted contents").unwrap();
    // A relative host path resolves against the manifest's folder.
    write_file(
        dir.path(),
        "hostile.toml",
        &dir_grant(Path::new("data"), "ro"),
    );
    let mut server = serve(dir.path());

    let inside = server.call("read_file", json!({ "path": "/data/inside.txt" }));
    assert_eq!(assert_success(&inside), "granted contents");

    for path in [
        "/data/../etc/passwd",
        "/data/../../etc/passwd",
        "/data/../../../../../../etc/passwd",
        "/data/./../../etc/passwd",
        "/data/inside.txt/../../etc/passwd",
        "/data/../hostile.toml",
    ] {
        let result = server.call("read_file", json!({ "path": path }));
        assert_eq!(result["isError"], true, "reading {path}: {result}");
        let text = all_text(&result);
        assert!(!text.contains("root:"), "{path}: {text}");
        assert!(!text.contains("[[dirs]]"), "{path}: {text}");
    }
    // The folder above the grant (holding hostile.wasm) stays invisible.
    for path in ["/data/..", "/data/../..", "/"] {
        let result = server.call("list_dir", json!({ "path": path }));
        let text = all_text(&result);
        assert!(!text.contains("hostile.wasm"), "listing {path}: {text}");
        assert!(!text.contains("passwd"), "listing {path}: {text}");
    }
    assert_still_serves(&mut server);
}

#[test]
fn symlinks_cannot_escape_a_granted_directory() {
    let dir = hostile_folder(None);
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("inside.txt"), "granted contents").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("secret.txt"), "not granted").unwrap();
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, data.join(name)).unwrap();
    link(Path::new("/etc"), "etc");
    link(Path::new("/etc/passwd"), "passwd");
    link(Path::new(".."), "up");
    link(elsewhere.path(), "elsewhere");
    link(&elsewhere.path().join("secret.txt"), "secret.txt");
    // Read-write, so that writing through a link is a real attempt.
    write_file(dir.path(), "hostile.toml", &dir_grant(&data, "rw"));
    let mut server = serve(dir.path());

    let inside = server.call("read_file", json!({ "path": "/data/inside.txt" }));
    assert_eq!(assert_success(&inside), "granted contents");

    for path in [
        "/data/passwd",
        "/data/etc/passwd",
        "/data/up/hostile.toml",
        "/data/elsewhere/secret.txt",
        "/data/secret.txt",
    ] {
        let result = server.call("read_file", json!({ "path": path }));
        assert_eq!(result["isError"], true, "reading {path}: {result}");
        let text = all_text(&result);
        assert!(!text.contains("root:"), "{path}: {text}");
        assert!(!text.contains("[[dirs]]"), "{path}: {text}");
        assert!(!text.contains("not granted"), "{path}: {text}");
    }
    for path in ["/data/etc", "/data/up", "/data/elsewhere"] {
        let result = server.call("list_dir", json!({ "path": path }));
        let text = all_text(&result);
        assert_eq!(result["isError"], true, "listing {path}: {text}");
        assert!(!text.contains("passwd"), "listing {path}: {text}");
        assert!(!text.contains("hostile.wasm"), "listing {path}: {text}");
        assert!(!text.contains("secret.txt"), "listing {path}: {text}");
    }
    for path in ["/data/elsewhere/planted.txt", "/data/up/planted.txt"] {
        let result = server.call("write_file", json!({ "path": path, "contents": "escaped" }));
        assert_eq!(result["isError"], true, "writing {path}: {result}");
    }
    let overwrite = server.call(
        "write_file",
        json!({ "path": "/data/secret.txt", "contents": "overwritten" }),
    );
    assert_eq!(overwrite["isError"], true, "{overwrite}");
    assert!(!elsewhere.path().join("planted.txt").exists());
    assert!(!dir.path().join("planted.txt").exists());
    assert_eq!(
        std::fs::read_to_string(elsewhere.path().join("secret.txt")).unwrap(),
        "not granted"
    );
    assert_still_serves(&mut server);
}

#[test]
fn a_read_only_grant_can_be_read_but_not_written() {
    let dir = hostile_folder(None);
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("hello.txt"), "hello from the host").unwrap();
    write_file(dir.path(), "hostile.toml", &dir_grant(data.path(), "ro"));
    let mut server = serve(dir.path());

    let read = server.call("read_file", json!({ "path": "/data/hello.txt" }));
    assert_eq!(assert_success(&read), "hello from the host");
    let listed = server.call("list_dir", json!({ "path": "/data" }));
    assert_eq!(assert_success(&listed), "hello.txt");

    for path in ["/data/hello.txt", "/data/new.txt"] {
        let result = server.call(
            "write_file",
            json!({ "path": path, "contents": "overwritten" }),
        );
        assert_eq!(result["isError"], true, "writing {path}: {result}");
    }
    assert_eq!(
        std::fs::read_to_string(data.path().join("hello.txt")).unwrap(),
        "hello from the host"
    );
    assert!(!data.path().join("new.txt").exists());
    assert_still_serves(&mut server);
}

#[test]
fn a_read_write_grant_allows_writing() {
    let dir = hostile_folder(None);
    let data = tempfile::tempdir().unwrap();
    write_file(dir.path(), "hostile.toml", &dir_grant(data.path(), "rw"));
    let mut server = serve(dir.path());

    let wrote = server.call(
        "write_file",
        json!({ "path": "/data/out.txt", "contents": "written by the plugin" }),
    );
    assert_success(&wrote);
    assert_eq!(
        std::fs::read_to_string(data.path().join("out.txt")).unwrap(),
        "written by the plugin"
    );
    let read = server.call("read_file", json!({ "path": "/data/out.txt" }));
    assert_eq!(assert_success(&read), "written by the plugin");
    assert_still_serves(&mut server);
}

// ---------------------------------------------------------------------------
// Environment and network

#[test]
fn the_host_environment_is_invisible() {
    let dir = hostile_folder(None);
    let mut server = Server::start_with_env(dir.path(), &[], &[("CORRAL_TEST_SECRET", "hunter2")]);
    server.initialize(REVISION);
    for name in ["CORRAL_TEST_SECRET", "PATH", "HOME"] {
        let result = server.call("read_env", json!({ "name": name }));
        assert_tool_error(&result, "(0 variables visible)");
        assert!(!all_text(&result).contains("hunter2"), "{result}");
    }
    assert_still_serves(&mut server);
}

#[test]
fn env_grants_expose_exactly_the_listed_variables() {
    let dir = hostile_folder(Some(
        "[env]\ninherit = [\"CORRAL_TEST_SECRET\"]\nset = { GREETING = \"hello\" }\n",
    ));
    let mut server = Server::start_with_env(
        dir.path(),
        &[],
        &[
            ("CORRAL_TEST_SECRET", "hunter2"),
            ("CORRAL_TEST_OTHER", "not for plugins"),
        ],
    );
    server.initialize(REVISION);
    let secret = server.call("read_env", json!({ "name": "CORRAL_TEST_SECRET" }));
    assert_eq!(
        assert_success(&secret),
        "CORRAL_TEST_SECRET=hunter2 (2 variables visible)"
    );
    let greeting = server.call("read_env", json!({ "name": "GREETING" }));
    assert_eq!(
        assert_success(&greeting),
        "GREETING=hello (2 variables visible)"
    );
    let other = server.call("read_env", json!({ "name": "CORRAL_TEST_OTHER" }));
    assert_tool_error(&other, "(2 variables visible)");
    assert!(!all_text(&other).contains("not for plugins"), "{other}");
    assert_still_serves(&mut server);
}

/// A listener on a free loopback port that counts the connections it accepts.
struct CountingListener {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl CountingListener {
    /// Accepts connections forever (until the test process ends); answers each
    /// HTTP request with `200 OK` and `body`.
    fn http(body: &'static str) -> CountingListener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                counter.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        CountingListener { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

#[test]
fn sockets_and_name_lookups_are_refused() {
    let listener = CountingListener::http("should never be read");
    let dir = hostile_folder(None);
    let mut server = serve(dir.path());
    for addr in [format!("127.0.0.1:{}", listener.port), "1.1.1.1:80".into()] {
        let result = server.call("open_socket", json!({ "addr": addr }));
        assert_eq!(result["isError"], true, "{addr}: {result}");
        assert!(
            all_text(&result).contains("looking up example.com"),
            "{result}"
        );
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(listener.accepted(), 0, "the plugin reached the listener");
    assert_still_serves(&mut server);
}

// ---------------------------------------------------------------------------
// Output streams and panics

#[test]
fn a_stdout_flood_never_reaches_the_protocol_stream() {
    let dir = hostile_folder(None);
    let mut server = serve(dir.path());
    // The harness panics on any stdout line that is not JSON, so a leak shows
    // up as a missing response.
    let result = server.call("stdout_flood", json!({ "mib": 50 }));
    assert_eq!(assert_success(&result), "flooded");
    // The server still answers pings and calls.
    server.result("ping", json!({}));
    assert_still_serves(&mut server);
    // The flood is logged, truncated.
    let stderr = server.stderr_containing("FLOOD");
    assert!(stderr.contains("FLOOD"), "the plugin's output is logged");
    assert!(
        stderr.len() < 2 * MIB as usize,
        "{} bytes of stderr for a 50 MiB flood",
        stderr.len()
    );
}

#[test]
fn a_panic_in_a_tool_is_reported_with_its_message() {
    let dir = hostile_folder(None);
    let mut server = serve(dir.path());
    let result = server.call("panic", json!({}));
    // The panic's location and message, as Rust printed them, without the
    // trap it ends in (wasm `unreachable`, the same for every crash).
    assert_tool_error(
        &result,
        "Tool `panic` failed: the plugin panicked at tests/plugins/hostile/src/lib.rs:",
    );
    assert_tool_error(&result, ": hostile panic: boom");
    assert!(!all_text(&result).contains("unreachable"), "{result}");
    // Advice a sandboxed plugin cannot follow is left out.
    assert!(!all_text(&result).contains("RUST_BACKTRACE"), "{result}");
    // The audit line counts the fuel it burned before the trap, not 0.
    wait_for_stderr(&server, "outcome=\"trap\"", 1);
    let stderr = server.stderr();
    let fuel: u64 = stderr
        .lines()
        .find(|line| line.contains("outcome=\"trap\""))
        .and_then(|line| line.split("fuel=").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|fuel| fuel.parse().ok())
        .unwrap_or_else(|| panic!("no fuel in the audit line:\n{stderr}"));
    assert!(fuel > 0, "the audit line says fuel={fuel}");
    assert_still_serves(&mut server);
}

// ---------------------------------------------------------------------------
// Misbehaving at load

#[test]
fn a_plugin_whose_list_panics_is_skipped_and_the_rest_serve() {
    let dir = folder_with(&[
        ("hostile-list-panic.wasm", &fixture("hostile-list-panic")),
        ("hostile.wasm", &fixture("hostile")),
        ("calc.wasm", &example("calc")),
    ]);
    let mut server = serve(dir.path());
    let names = server.tool_names();
    assert!(names.iter().any(|n| n == "add"), "{names:?}");
    assert!(names.iter().any(|n| n == "ok"), "{names:?}");
    // The panic message is logged, and the plugin is named as skipped.
    server.stderr_containing("hostile list panic: no tools for you");
    let stderr = server.stderr_containing("hostile-list-panic.wasm");
    let line = stderr
        .lines()
        .find(|l| l.contains("hostile-list-panic.wasm"))
        .unwrap_or_else(|| panic!("stderr does not name the plugin:\n{stderr}"));
    assert!(line.contains("`list` failed"), "{line}");
    let sum = server.call("add", json!({ "a": 1, "b": 2 }));
    assert_eq!(assert_success(&sum), "3");
    assert_still_serves(&mut server);
}

#[test]
fn a_plugin_whose_list_never_returns_is_skipped_in_time() {
    let dir = folder_with(&[
        ("hostile-list-hang.wasm", &fixture("hostile-list-hang")),
        ("hostile.wasm", &fixture("hostile")),
        ("calc.wasm", &example("calc")),
    ]);
    write_file(
        dir.path(),
        "hostile-list-hang.toml",
        "[limits]\ntimeout = \"1 s\"\nfuel = 1_000_000_000_000_000\n",
    );
    let started = Instant::now();
    let mut server = serve(dir.path());
    let names = server.tool_names();
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(10),
        "serving took {elapsed:?}"
    );
    assert!(names.iter().any(|n| n == "add"), "{names:?}");
    assert!(names.iter().any(|n| n == "ok"), "{names:?}");
    let stderr = server.stderr_containing("hostile-list-hang.wasm");
    let line = stderr
        .lines()
        .find(|l| l.contains("hostile-list-hang.wasm"))
        .unwrap_or_else(|| panic!("stderr does not name the plugin:\n{stderr}"));
    assert!(line.contains("`list` failed"), "{line}");
    assert!(line.contains("timed out"), "{line}");
    let sum = server.call("add", json!({ "a": 1, "b": 2 }));
    assert_eq!(assert_success(&sum), "3");
    assert_still_serves(&mut server);
}

// ---------------------------------------------------------------------------
// Rates, concurrency and cancellation

#[test]
fn calls_beyond_the_rate_limit_are_refused_until_tokens_return() {
    let dir = hostile_folder(Some("[limits]\nrate = 2\nburst = 2\n"));
    let mut server = serve(dir.path());
    // Three calls at once: the bucket holds two tokens.
    let ids: Vec<Value> = (0..3)
        .map(|_| server.send_request("tools/call", json!({ "name": "ok", "arguments": {} })))
        .collect();
    let results: Vec<Value> = server
        .responses_to(&ids)
        .into_iter()
        .map(|response| response["result"].clone())
        .collect();
    let (refused, served): (Vec<&Value>, Vec<&Value>) =
        results.iter().partition(|r| r["isError"] == true);
    assert_eq!(served.len(), 2, "{results:?}");
    assert_eq!(refused.len(), 1, "{results:?}");
    assert_tool_error(refused[0], "rate limit");
    assert_tool_error(refused[0], "retry");
    // The bucket is per tool: another tool still has its own.
    let other = server.call("huge_output", json!({ "mib": 0 }));
    assert_success(&other);
    // At 2 calls per second, tokens are back after a second.
    std::thread::sleep(Duration::from_millis(1100));
    assert_still_serves(&mut server);
}

#[test]
fn calls_beyond_the_concurrency_limit_are_refused_immediately() {
    let dir = folder_with(&[("ticker.wasm", &example("ticker"))]);
    write_file(dir.path(), "ticker.toml", "[limits]\nconcurrency = 1\n");
    let mut server = serve(dir.path());
    let slow = server.send_request(
        "tools/call",
        json!({ "name": "sleep", "arguments": { "ms": 2000 } }),
    );
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let second = server.call("sleep", json!({ "ms": 1 }));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the refusal took {:?}",
        started.elapsed()
    );
    assert_tool_error(&second, "concurrency limit");
    assert_tool_error(&second, "retry");
    // The slow call finishes normally, and then calls are admitted again.
    let first = server.response_to(&slow);
    assert_eq!(first["result"]["isError"], false, "{first}");
    let after = server.call("sleep", json!({ "ms": 1 }));
    assert_eq!(assert_success(&after), "slept for 1 ms");
}

#[test]
fn cancelling_a_spinning_call_stops_burning_cpu() {
    let dir = hostile_folder(Some(
        "[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"60 s\"\n",
    ));
    let mut server = serve(dir.path());
    let spin = server.send_request("tools/call", json!({ "name": "spin", "arguments": {} }));
    // Cancel once the call has run for 300 ms and has visibly burned CPU
    // (which takes longer when the test machine is busy).
    let started = server.cpu_millis();
    let deadline = Instant::now() + Duration::from_secs(20);
    std::thread::sleep(Duration::from_millis(300));
    while server.cpu_millis() - started < 100 {
        assert!(
            Instant::now() < deadline,
            "the call is not spinning ({} ms of CPU)",
            server.cpu_millis() - started
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    server.send(
        &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": { "requestId": spin, "reason": "test" } }),
    );
    let before = server.cpu_millis();
    std::thread::sleep(Duration::from_millis(500));
    let burned = server.cpu_millis() - before;
    assert!(
        burned < 100,
        "{burned} ms of CPU in the 500 ms after cancelling"
    );
    assert!(
        server.recv_within(Duration::from_millis(200)).is_none(),
        "a message arrived after cancelling"
    );
    // `response_to` fails on any other response, including a late one for `spin`.
    assert_still_serves(&mut server);
}

// ---------------------------------------------------------------------------
// The import gate and manifest errors

#[test]
fn an_http_plugin_without_a_grant_is_refused_at_load() {
    let dir = folder_with(&[
        ("hostile-http.wasm", &fixture("hostile-http")),
        ("hostile.wasm", &fixture("hostile")),
    ]);
    let mut server = serve(dir.path());
    let names = server.tool_names();
    assert!(!names.iter().any(|n| n == "fetch"), "{names:?}");
    let stderr = server.stderr_containing("hostile-http.wasm");
    let line = stderr
        .lines()
        .find(|l| l.contains("hostile-http.wasm"))
        .unwrap_or_else(|| panic!("stderr does not name the plugin:\n{stderr}"));
    assert!(line.contains("wasi:http"), "{line}");
    assert!(line.contains("[http]"), "{line}");
    assert_still_serves(&mut server);
}

#[test]
fn an_http_grant_allows_only_the_listed_hosts() {
    let allowed = CountingListener::http("hello from the test server");
    let other = CountingListener::http("should never be read");
    let dir = folder_with(&[
        ("hostile-http.wasm", &fixture("hostile-http")),
        ("hostile.wasm", &fixture("hostile")),
    ]);
    write_file(
        dir.path(),
        "hostile-http.toml",
        &format!(
            "[http]\nallow = [\"127.0.0.1:{}\"]\n[limits]\ntimeout = \"10 s\"\n",
            allowed.port
        ),
    );
    let mut server = serve(dir.path());

    let fetched = server.call(
        "fetch",
        json!({ "url": format!("http://127.0.0.1:{}/hello", allowed.port) }),
    );
    assert_eq!(assert_success(&fetched), "200 hello from the test server");
    assert_eq!(allowed.accepted(), 1);

    for url in [
        // Another port of an allowed host.
        format!("http://127.0.0.1:{}/", other.port),
        // Another name for the allowed address.
        format!("http://localhost:{}/", allowed.port),
        format!("http://localhost:{}/", other.port),
        // Elsewhere.
        "http://example.com/".to_string(),
        "https://example.com/".to_string(),
    ] {
        let result = server.call("fetch", json!({ "url": url }));
        assert_eq!(result["isError"], true, "{url}: {result}");
        assert!(!all_text(&result).contains("200"), "{url}: {result}");
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        allowed.accepted(),
        1,
        "a refused request reached the server"
    );
    assert_eq!(other.accepted(), 0, "a refused request reached the server");
    assert_still_serves(&mut server);
}

#[test]
fn a_wildcard_grant_never_reaches_loopback() {
    let listener = CountingListener::http("should never be read");
    let dir = folder_with(&[("hostile-http.wasm", &fixture("hostile-http"))]);
    // `*.localhost` is not an exact listing, so whatever the name resolves
    // to must be a public address: loopback is refused.
    write_file(
        dir.path(),
        "hostile-http.toml",
        "[http]\nallow = [\"*.localhost\"]\n",
    );
    let mut server = serve(dir.path());
    let url = format!("http://corral.localhost:{}/", listener.port);
    let result = server.call("fetch", json!({ "url": url }));
    assert_eq!(result["isError"], true, "{url}: {result}");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        listener.accepted(),
        0,
        "loopback was reached through a wildcard"
    );
}

#[test]
fn malformed_manifests_are_load_errors_naming_the_file_and_line() {
    let dir = folder_with(&[
        ("unknown_key.wasm", &fixture("hostile")),
        ("bad_value.wasm", &fixture("hostile")),
        ("calc.wasm", &example("calc")),
    ]);
    write_file(
        dir.path(),
        "unknown_key.toml",
        "[limits]\nfuel = 1_000_000\nfule = 3\n",
    );
    write_file(
        dir.path(),
        "bad_value.toml",
        "# limits\n[limits]\nmemory = \"lots\"\n",
    );
    let mut server = serve(dir.path());
    let names = server.tool_names();
    // Both copies of hostile are skipped: none of their tools is served
    // (prefixed or not); calc serves.
    assert!(
        !names.iter().any(|n| n.contains("ok") || n.contains("spin")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "add"), "{names:?}");
    server.stderr_containing("unknown_key.toml");
    let stderr = server.stderr_containing("bad_value.toml");
    let names_line = |file: &str, line: usize| {
        stderr.contains(&format!("{file}:{line}"))
            || stderr.contains(&format!("{file}, line {line}"))
            || stderr.contains(&format!("{file} line {line}"))
    };
    assert!(
        names_line("unknown_key.toml", 3) && stderr.contains("fule"),
        "stderr does not name unknown_key.toml, line 3 and the key:\n{stderr}"
    );
    assert!(
        names_line("bad_value.toml", 3) && stderr.contains("lots"),
        "stderr does not name bad_value.toml, line 3 and the value:\n{stderr}"
    );
    let sum = server.call("add", json!({ "a": 2, "b": 2 }));
    assert_eq!(assert_success(&sum), "4");
}

/// A short call runs from instantiation to its answer in one go, without
/// handing its thread back to the runtime: no yield, no timer armed, no other
/// thread woken. (A new store's epoch deadline is due at once unless it is
/// set, and then every call yielded before doing any work.) In process,
/// since what is checked is how the call's future behaves. The calls run
/// back to back in one task that never yields, more of them than the
/// instance pool has slots: the spent instances, dropped after the answer,
/// must not pile up until the pool is exhausted.
#[test]
fn short_calls_finish_in_their_first_poll_and_free_their_instances() {
    use corral_sandbox::{Plugin, Sandbox, SandboxOptions};
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let sandbox = Sandbox::new(SandboxOptions::default()).unwrap();
        let calc = Plugin::load(&sandbox, &example("calc")).await.unwrap();
        let add = calc.tools().position(|tool| tool.name == "add").unwrap();
        let calls = 300;
        let mut in_first_poll = 0;
        for i in 0..calls {
            let arguments = json!({ "a": i, "b": 1 }).as_object().unwrap().clone();
            let mut call =
                pin!(calc.call(add, "add", arguments, corral_tool::CallContext::default()));
            let output = match call.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(output) => {
                    in_first_poll += 1;
                    output
                }
                Poll::Pending => call.await,
            };
            assert!(!output.is_error, "call {i}: {output:?}");
            let text = match output.content.first() {
                Some(corral_tool::Content::Text { text, .. }) => text.clone(),
                other => panic!("call {i}: {other:?}"),
            };
            assert_eq!(text.parse::<f64>().ok(), Some(i as f64 + 1.0), "call {i}");
        }
        // An epoch tick (every 5 ms) that lands inside a call makes it
        // yield, as it should: that may happen to a few.
        assert!(
            in_first_poll >= calls * 3 / 4,
            "only {in_first_poll} of {calls} calls finished in their first poll"
        );
    });
}
