//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`,
//! pinned in tests/http/setup-conformance) against `corral serve --http`,
//! serving the fixture plugin with the tools its scenarios call
//! (tests/plugins/conformance).
//!
//! Each revision runs exactly the scenarios it requires (`--requirements`)
//! at its own wire: 2025-11-25 with initialize and sessions, 2026-07-28
//! stateless. The known failures (none of them about tools) are listed with
//! their reasons in tests/http/conformance-<revision>.yml; the suite exits
//! non-zero on any other failure, and on a listed failure that passes.

#[path = "support/http.rs"]
mod http;
mod support;

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use http::HttpServer;
use support::{fixture, folder_with, repo_root, run_setup};

/// The suite's whole run takes seconds; this bounds a hung one.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// The node binary and the suite's entry script, installed on first use
/// (once per test binary: both revisions' tests start together).
fn suite() -> (String, String) {
    static SUITE: OnceLock<(String, String)> = OnceLock::new();
    SUITE
        .get_or_init(|| {
            let lines = run_setup("tests/http/setup-conformance");
            let node = lines.first().expect("the node binary").clone();
            let entry = lines.get(1).expect("the suite's entry script").clone();
            (node, entry)
        })
        .clone()
}

fn run_requirements(revision: &str) {
    let (node, entry) = suite();
    let folder = folder_with(&[("conformance.wasm", &fixture("conformance"))]);
    let server = HttpServer::start(folder.path(), &[]);
    let url = format!("http://{}/mcp", server.addr);
    let baseline = repo_root().join(format!("tests/http/conformance-{revision}.yml"));
    let results = tempfile::tempdir().unwrap();
    let mut child = Command::new("timeout")
        .arg(RUN_LIMIT.as_secs().to_string())
        .arg(&node)
        .arg(&entry)
        .args(["server", "--url", &url, "--requirements", revision])
        .arg("--expected-failures")
        .arg(&baseline)
        .arg("--output-dir")
        .arg(results.path())
        .current_dir(results.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running the conformance suite");
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let stdout = reader.join().unwrap();
    let summary = stdout
        .split("=== SUMMARY ===")
        .nth(1)
        .unwrap_or(&stdout)
        .to_string();
    eprintln!("conformance {revision}:{summary}");
    assert!(
        status.success(),
        "the conformance suite failed for {revision} ({status}):\n{summary}\n{stderr}\n--- server stderr ---\n{}",
        server.server.stderr()
    );
    assert!(
        summary.contains("Baseline check passed"),
        "the suite did not confirm the baseline for {revision}:\n{summary}"
    );
    // Every tools scenario of the revision passed (none is in the baseline).
    for scenario in [
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-error",
        "tools-call-with-progress",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
    ] {
        assert!(
            summary.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass for {revision}:\n{summary}"
        );
    }
}

#[test]
fn conformance_2025_11_25() {
    run_requirements("2025-11-25");
}

#[test]
fn conformance_2026_07_28() {
    run_requirements("2026-07-28");
}
