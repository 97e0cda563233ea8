//! Secrets in every language whose toolchain binds a whole world: a small
//! fixture plugin in each (`tests/plugins/secrets-{python,js,ts,c,go}`),
//! built by the same script that builds the examples of its language
//! (`plugins/build-LANG --out DIR PROJECT`), reads the secret its manifest
//! grants through `wasi:config/store@0.2.0-draft`, gets none for a name it
//! is not granted (though the server's environment has a value for it) and
//! for a granted one without a value, and lists only the granted secrets
//! that have values; through the real `corral serve`.
//!
//! Each fixture grants one more table besides `[secrets]`, so that its world
//! is composed of two grants, as `plugins/build-common.sh` composes them:
//! Python `[http]`, JavaScript and Go `[state]`, TypeScript `[[dirs]]`.
//!
//! Each fixture is built into a folder of its own, one build at a time
//! (`support::build_fixture`), and again at each run.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Server, first_text};

/// How long the first `tools/list` may take: it waits for the plugin to
/// load, and a Python component (18 MB) compiles for 10-45 s cold on a
/// 2-core machine.
const FIRST_LOAD_BOUND: Duration = Duration::from_secs(300);

/// The value the servers' environment gives the granted secret: at least 8
/// bytes, so that Corral redacts it from what the plugin sends back. The
/// marker in the answer is the proof that the plugin read this very value.
const TOKEN: &str = "corral-test-secret-languages-4711";

/// Builds `tests/plugins/secrets-LANGUAGE` with `plugins/build-SCRIPT`, and
/// returns its folder and what the build said. Built again each run: a
/// build that finds its output up to date says so, not the world it
/// composed, which is what these tests check.
fn build(script: &str, language: &str) -> (PathBuf, String) {
    let name = format!("secrets-{language}");
    let _ = std::fs::remove_file(support::fixture_dir(&name).join(format!("{name}.wasm")));
    support::build_fixture(script, &name)
}

/// Builds the fixture, serves it with the secrets in the environment, and
/// checks what it reads.
fn reads_its_secret(script: &str, language: &str, world: &str) {
    let (folder, said) = build(script, language);
    assert!(
        said.contains(&format!("secrets-{language}.wasm (world {world})")),
        "the world composed of the grants: {said}"
    );
    let mut server = Server::start_with_env(
        &folder,
        &["--no-watch", "--secrets", "env:SECRETS_LANGUAGES_"],
        &[
            ("SECRETS_LANGUAGES_API_TOKEN", TOKEN),
            // A value for a name the manifest does not grant.
            ("SECRETS_LANGUAGES_OTHER_TOKEN", "not-for-this-plugin"),
        ],
    );
    server.initialize("2025-11-25");
    let id = server.send_request("tools/list", json!({}));
    let listed = server.response_within(&id, FIRST_LOAD_BOUND);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools/list: {listed}\n{}", server.stderr()))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["secret", "secrets"], "{listed}");

    let mut answer = |tool: &str, arguments: Value| -> String {
        let result = server.call(tool, arguments);
        assert_eq!(result["isError"], false, "{tool}: {result}");
        first_text(&result).to_owned()
    };
    assert_eq!(
        answer("secret", json!({"name": "API_TOKEN"})),
        "[redacted secret API_TOKEN]",
        "the granted secret's value, which Corral redacts on the way out"
    );
    assert_eq!(answer("secret", json!({"name": "OTHER_TOKEN"})), "none");
    assert_eq!(answer("secret", json!({"name": "OPTIONAL_TOKEN"})), "none");
    assert_eq!(answer("secrets", json!({})), "API_TOKEN");
    assert!(
        !server.stderr().contains(TOKEN),
        "the value reached the log: {}",
        server.stderr()
    );
}

#[test]
fn a_python_plugin_reads_its_secret_through_wasi_config() {
    reads_its_secret("python", "python", "plugin-with-http-and-secrets");
}

#[test]
fn a_javascript_plugin_reads_its_secret_through_wasi_config() {
    reads_its_secret("js", "js", "plugin-with-state-and-secrets");
}

#[test]
fn a_typescript_plugin_reads_its_secret_through_wasi_config() {
    reads_its_secret("ts", "ts", "plugin-with-files-and-secrets");
}

#[test]
fn a_c_plugin_reads_its_secret_through_wasi_config() {
    reads_its_secret("c", "c", "plugin-with-secrets");
}

#[test]
fn a_go_plugin_reads_its_secret_through_wasi_config() {
    reads_its_secret("go", "go", "plugin-with-state-and-secrets");
}
