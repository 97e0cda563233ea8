//! Clients nobody here wrote: the official MCP SDKs drive the real binary.

mod support;

use std::process::Command;

use support::{plugins_dir, repo_root};

/// Runs a client script and fails with its output when it fails.
fn run_client(program: &str, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
        .env("CORRAL_LOG", "warn")
        .env("CORRAL_CACHE_DIR", support::test_cache_dir())
        .output()
        .unwrap_or_else(|err| panic!("running {program}: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{program} {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    println!("{stdout}");
}

#[test]
fn official_python_sdk_lists_and_calls_every_example_tool() {
    let setup = Command::new(repo_root().join("tests/clients/setup-python"))
        .output()
        .expect("running tests/clients/setup-python");
    assert!(
        setup.status.success(),
        "installing the MCP Python SDK failed:\n{}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let python = String::from_utf8(setup.stdout).unwrap().trim().to_string();
    let script = repo_root().join("tests/clients/python_sdk.py");
    let plugins = plugins_dir();
    run_client(
        &python,
        &[
            script.to_str().unwrap(),
            env!("CARGO_BIN_EXE_corral"),
            plugins.to_str().unwrap(),
        ],
    );
}
