//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`,
//! pinned in tests/http/setup-conformance) against `corral serve --http`,
//! serving the fixture plugins with the tools its scenarios call
//! (tests/plugins/conformance) and the resources, prompts and completions
//! they read, get and complete (tests/plugins/conformance-resources).
//!
//! Each revision runs exactly the scenarios it requires (`--requirements`)
//! at its own wire: 2025-11-25 with initialize and sessions, 2026-07-28
//! stateless. Known failures would be listed with their reasons in
//! tests/http/conformance-<revision>.yml; there are none. The tasks
//! extension's scenarios are run but never scored by the suite: this test
//! holds them to passing all the same.
//!
//! The suite compares that list only with the scenarios it scores: it
//! exits non-zero on another failure among them, or a listed one of them
//! that passes, but it also runs unscored scenarios (extensions, pending
//! ones) and ignores how they fare. So this test reads every scenario's
//! saved checks itself and holds the list to all of them: each listed
//! scenario (or `scenario:check`) must have run and failed, and nothing
//! else may fail.

#[path = "support/http.rs"]
mod http;
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use http::HttpServer;
use support::{add_conformance_resources, conformance_folder, repo_root, run_setup};

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
    // The fixtures' test_trigger_tool_change and test_trigger_prompt_change
    // change their own lists through their stores, in a file of this run's
    // own.
    let folder = conformance_folder("");
    add_conformance_resources(folder.path(), "conformance-resources");
    let store = format!("sqlite:{}", folder.path().join("state.sqlite").display());
    let server = HttpServer::start(folder.path(), &["--state", &store]);
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
    let outcomes = outcomes(results.path());
    let listed = expected_failures(&std::fs::read_to_string(&baseline).unwrap());
    let problems = baseline_problems(&outcomes, &listed);
    assert!(
        problems.is_empty(),
        "tests/http/conformance-{revision}.yml does not match the run:\n{}",
        problems.join("\n")
    );
    // Every tools, resources, prompts and completion scenario of the
    // revision ran and passed (none is listed).
    let mut passing = vec![
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
        "resources-list",
        "resources-read-text",
        "resources-read-binary",
        "resources-templates-read",
        "prompts-list",
        "prompts-get-simple",
        "prompts-get-with-args",
        "prompts-get-embedded-resource",
        "prompts-get-with-image",
        "completion-complete",
    ];
    if revision == "2025-11-25" {
        // resources/subscribe is gone from 2026-07-28 (listen streams
        // replace it).
        passing.extend(["resources-subscribe", "resources-unsubscribe"]);
    }
    if revision == "2026-07-28" {
        passing.extend([
            "http-custom-header-server-validation",
            "sep-2164-resource-not-found",
            "input-required-result-non-tool-request",
            "caching",
            "tasks-lifecycle",
            "tasks-capability-negotiation",
            "tasks-wire-fields",
            "tasks-request-state-removal",
            "tasks-mrtr-input",
            "tasks-request-headers",
            "tasks-dispatch-and-envelope",
            "tasks-required-task-error",
            "tasks-mrtr-composition",
        ]);
    }
    for scenario in passing {
        let checks = outcomes
            .get(scenario)
            .unwrap_or_else(|| panic!("{scenario} did not run for {revision}"));
        let failed: Vec<&Check> = checks.iter().filter(|check| check.failed()).collect();
        assert!(
            failed.is_empty(),
            "{scenario} did not pass for {revision}: {failed:?}"
        );
    }
    if revision == "2026-07-28" {
        // The fixtures changed their own lists (host.tools-changed,
        // host.prompts-changed), and the listen stream heard of it:
        // succeeded, not skipped or warned.
        let checks = outcomes
            .get("server-stateless")
            .unwrap_or_else(|| panic!("server-stateless did not run for {revision}"));
        for check in [
            "sep-2575-server-sends-tools-list-changed-on-subscription",
            "sep-2575-server-sends-prompts-list-changed-on-subscription",
            "sep-2575-server-declares-prompts-in-discover",
        ] {
            let statuses: Vec<&str> = checks
                .iter()
                .filter(|c| c.id == check)
                .map(|c| c.status.as_str())
                .collect();
            assert_eq!(statuses, ["SUCCESS"], "{check} for {revision}");
        }
    }
}

/// One check of a scenario, as the suite saved it.
#[derive(Debug)]
struct Check {
    id: String,
    status: String,
}

impl Check {
    /// Failed by the suite's own rule for its baseline: a warning counts.
    fn failed(&self) -> bool {
        self.status == "FAILURE" || self.status == "WARNING"
    }
}

/// The checks of every scenario that ran, by scenario: the suite saves
/// each in `<output>/server-<scenario>-<ISO time, : and . as ->/checks.json`
/// (a scenario that does not apply gets a folder without one).
fn outcomes(output: &Path) -> BTreeMap<String, Vec<Check>> {
    // The time: `2026-07-28T09-15-00-123Z`, as long as an ISO time.
    const TIME: usize = "2026-07-28T09:15:00.123Z".len();
    let mut outcomes = BTreeMap::new();
    for entry in std::fs::read_dir(output).unwrap() {
        let folder = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(folder.join("checks.json")) else {
            continue;
        };
        let name = folder.file_name().unwrap().to_str().unwrap().to_string();
        let scenario = name
            .strip_prefix("server-")
            .and_then(|rest| rest.len().checked_sub(TIME + 1).map(|end| &rest[..end]))
            .unwrap_or_else(|| panic!("not a scenario's result folder: {name}"));
        let checks: Vec<Value> =
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{name}/checks.json: {err}"));
        let checks = checks
            .iter()
            .map(|check| Check {
                id: check["id"].as_str().unwrap_or_default().to_string(),
                status: check["status"].as_str().unwrap_or_default().to_string(),
            })
            .collect();
        outcomes.insert(scenario.to_string(), checks);
    }
    assert!(!outcomes.is_empty(), "the suite saved no results");
    outcomes
}

/// The entries of an expected-failures file's `server` list: `scenario`
/// or `scenario:check`.
fn expected_failures(yaml: &str) -> Vec<String> {
    let mut in_server = false;
    let mut entries = Vec::new();
    for line in yaml.lines() {
        let line = line.split('#').next().unwrap().trim_end();
        if !line.starts_with(' ') && !line.is_empty() {
            in_server = line == "server:";
        } else if in_server && let Some(entry) = line.trim().strip_prefix("- ") {
            entries.push(entry.trim().to_string());
        }
    }
    entries
}

/// How the listed failures disagree with the run: a listed scenario or
/// check that did not run or did not fail, and a failure nothing lists.
fn baseline_problems(outcomes: &BTreeMap<String, Vec<Check>>, listed: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for entry in listed {
        let (scenario, check) = match entry.split_once(':') {
            Some((scenario, check)) => (scenario, Some(check)),
            None => (entry.as_str(), None),
        };
        let Some(checks) = outcomes.get(scenario) else {
            problems.push(format!("listed {entry}: the scenario did not run"));
            continue;
        };
        let fails = checks
            .iter()
            .any(|c| c.failed() && check.is_none_or(|id| c.id == id));
        if !fails {
            problems.push(format!(
                "listed {entry}: it passed; remove it from the list"
            ));
        }
    }
    // A check id may repeat within a scenario (one per probe): named once.
    let mut unlisted = std::collections::BTreeSet::new();
    for (scenario, checks) in outcomes {
        for check in checks.iter().filter(|check| check.failed()) {
            let covered = listed
                .iter()
                .any(|entry| *entry == *scenario || *entry == format!("{scenario}:{}", check.id));
            if !covered {
                unlisted.insert(format!(
                    "{scenario}:{} failed ({}), and nothing lists it",
                    check.id, check.status
                ));
            }
        }
    }
    problems.extend(unlisted);
    problems
}

#[test]
fn conformance_2025_11_25() {
    run_requirements("2025-11-25");
}

#[test]
fn conformance_2026_07_28() {
    run_requirements("2026-07-28");
}
