//! The reference MCP servers as Corral plugins (issue 27), checked call for
//! call against the originals. Each original is installed pinned under
//! `target/clients/reference/` by `tests/reference/setup` (idempotent: marker
//! files); the driver in `tests/reference/` runs it and `corral serve` on a
//! folder holding only the plugin and its manifest, through the same scripted
//! session with the official MCP Python SDK, and compares every result
//! (content, structuredContent, isError) and the tools/list entry. The few
//! differences allowed are written down, with their reasons, in the driver.
//!
//! `sequential-thinking` (npm
//! `@modelcontextprotocol/server-sequential-thinking` 2026.8.31) against
//! `plugins/js-sequential-thinking`, here; `fetch` (PyPI `mcp-server-fetch`
//! 2026.10.24) against `plugins/python-fetch`, in `reference/fetch.rs`.

mod support;

#[path = "reference/fetch.rs"]
mod fetch;

use std::process::Command;
use std::sync::OnceLock;

use support::{all_plugins_dir, repo_root, run_setup, test_cache_dir};

/// The Python of a virtualenv holding the official MCP Python SDK.
fn python() -> String {
    static DONE: OnceLock<Vec<String>> = OnceLock::new();
    DONE.get_or_init(|| run_setup("tests/clients/setup-python"))[0].clone()
}

/// node, then the entry scripts of the pinned originals.
fn originals() -> Vec<String> {
    static DONE: OnceLock<Vec<String>> = OnceLock::new();
    DONE.get_or_init(|| run_setup("tests/reference/setup"))
        .clone()
}

/// A fresh folder serving only the plugin `name`, with its manifest.
fn folder_with_plugin(name: &str) -> tempfile::TempDir {
    let built = all_plugins_dir();
    let dir = tempfile::tempdir().unwrap();
    for file in [format!("{name}.wasm"), format!("{name}.toml")] {
        std::fs::copy(built.join(&file), dir.path().join(&file))
            .unwrap_or_else(|err| panic!("copying {file}: {err}"));
    }
    dir
}

#[test]
fn sequential_thinking_answers_every_call_as_the_original_does() {
    let originals = originals();
    let (node, entry) = (&originals[0], &originals[1]);
    let plugins = folder_with_plugin("js-sequential-thinking");
    let state = tempfile::tempdir().unwrap();
    let output = Command::new(python())
        .arg(repo_root().join("tests/reference/sequential_thinking.py"))
        .arg(node)
        .arg(entry)
        .arg(env!("CARGO_BIN_EXE_corral"))
        .arg(plugins.path())
        .arg(state.path().join("state.db"))
        .env("CORRAL_LOG", "warn")
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("running tests/reference/sequential_thinking.py");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the plugin differs from the original\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    println!("{stdout}");
}

/// The plugin's logic module passes its own unit tests under Node
/// (`node --test`), outside the component.
#[test]
fn sequential_thinking_logic_passes_its_unit_tests() {
    let output = Command::new("node")
        .args(["--test", "plugins/js-sequential-thinking/thinking.test.js"])
        .current_dir(repo_root())
        .output()
        .expect("running node --test");
    assert!(
        output.status.success(),
        "node --test plugins/js-sequential-thinking/thinking.test.js:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
