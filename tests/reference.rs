//! The reference MCP servers as Corral plugins (issue 27), each checked call
//! for call against its original. One module per server, each with its files
//! in the folder of its name under `tests/reference/`: `setup` installs the
//! original pinned under `target/clients/reference/NAME` (idempotent: marker
//! files; an npm original is pinned with every dependency by the folder's
//! package-lock.json, which `setup` hands to tests/reference/npm-setup), and
//! `compare.py` runs the original and `corral serve` on a folder
//! holding only the plugin and its manifest through the same scripted
//! session, with the official MCP Python SDK, and compares every result
//! (content, structuredContent, isError) and the tools/list entries. The few
//! differences allowed are written down, with their reasons, in each driver.
//!
//! - `sequential_thinking`: npm `@modelcontextprotocol/server-sequential-thinking`
//!   2026.8.31 against `plugins/js-sequential-thinking`;
//! - `time`: PyPI `mcp-server-time` 2026.10.19 against `plugins/python-time`;
//! - `memory`: npm `@modelcontextprotocol/server-memory` 2026.8.31 against
//!   `plugins/js-memory`;
//! - `fetch`: PyPI `mcp-server-fetch` 2026.10.24 against `plugins/python-fetch`;
//! - `filesystem`: npm `@modelcontextprotocol/server-filesystem` 2026.8.31
//!   against `plugins/filesystem`, and the path escapes side by side.

mod support;

// Each server's module is in its folder's neighbour, tests/reference/NAME.rs.
#[path = "reference/fetch.rs"]
mod fetch;
#[path = "reference/filesystem.rs"]
mod filesystem;
#[path = "reference/memory.rs"]
mod memory;
#[path = "reference/sequential_thinking.rs"]
mod sequential_thinking;
#[path = "reference/time.rs"]
mod time;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

use support::{all_plugins_dir, repo_root, run_setup, target_dir, test_cache_dir};

/// The Python of a virtualenv holding the official MCP Python SDK.
fn python() -> String {
    static DONE: OnceLock<Vec<String>> = OnceLock::new();
    DONE.get_or_init(|| run_setup("tests/clients/setup-python"))[0].clone()
}

/// A fresh folder serving only the built plugin `name`, with its manifest.
fn folder_with_plugin(name: &str) -> tempfile::TempDir {
    let built = all_plugins_dir();
    let dir = tempfile::tempdir().unwrap();
    for file in [format!("{name}.wasm"), format!("{name}.toml")] {
        std::fs::copy(built.join(&file), dir.path().join(&file))
            .unwrap_or_else(|err| panic!("copying {file}: {err}"));
    }
    dir
}

/// Builds the Python plugins once per test binary, under plugins/build's
/// lock (other test binaries run plugins/build, which writes the same
/// outputs); returns `target/plugins`. Only the Python plugins: the whole
/// plugins/build would build every language for one plugin.
fn python_plugins() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        std::fs::create_dir_all(target_dir()).unwrap();
        let output = support::user_command("flock")
            .arg(target_dir().join(".plugins-build.lock"))
            .arg(repo_root().join("plugins/build-python"))
            .output()
            .expect("running flock plugins/build-python");
        assert!(
            output.status.success(),
            "plugins/build-python failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    });
    target_dir().join("plugins")
}

/// Runs a server's driver `tests/reference/SERVER/compare.py` with the SDK's
/// Python and `args`, and fails with both its outputs unless it passed;
/// returns its stdout (each call's outcome), which the test prints.
fn compare(server: &str, args: &[&std::ffi::OsStr]) -> String {
    let driver = repo_root().join(format!("tests/reference/{server}/compare.py"));
    let output: Output = Command::new(python())
        .arg(&driver)
        .args(args)
        .env("CORRAL_LOG", "warn")
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|err| panic!("running {}: {err}", driver.display()));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{server}: the plugin differs from the original\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stdout
}

/// Runs `node --test` on a JavaScript plugin's logic module, outside the
/// component.
fn node_unit_tests(test_file: &str) {
    let output = Command::new("node")
        .args(["--test", test_file])
        .current_dir(repo_root())
        .output()
        .expect("running node --test");
    assert!(
        output.status.success(),
        "node --test {test_file}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `tests/reference/SERVER/setup`; returns the lines it printed.
fn original(server: &str) -> Vec<String> {
    run_setup(&format!("tests/reference/{server}/setup"))
}
