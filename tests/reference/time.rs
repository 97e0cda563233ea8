//! `time`: plugins/python-time checked call for call against the
//! reference server it replaces, `mcp-server-time` 2026.10.19 from PyPI.
//!
//! The reference is installed pinned under `target/clients/reference/time`
//! (tests/reference/time/setup). The driver,
//! tests/reference/time/compare.py, runs both servers side by side through
//! one scripted session (tools/list and 56 calls) and compares every answer:
//! content text, structuredContent and isError, or the protocol error. The
//! differences it allows, each with its reason, are its `ALLOWED`:
//!
//! - `clock`: get_current_time's datetime may differ by up to 5 s (the two
//!   servers read the clock a few milliseconds apart);
//! - `schema`: arguments that break the input schema are refused by Corral's
//!   validator, in its words, before the plugin runs (the original's are
//!   pydantic's); both are isError results;
//! - `path`: an error naming a file of the database (a folder given as a
//!   zone, a too-long name) names the original's host site-packages path
//!   and the plugin's `tzdata/zoneinfo/...`;
//! - `midnight`: convert_time uses today's date in the source zone and
//!   get_current_time names the day, so a pair of calls that straddles a
//!   midnight there is asked again once.

use std::ffi::OsStr;
use std::process::Command;

use super::support::{repo_root, target_dir};
use super::{compare, original, python_plugins};

/// The local zone both servers are given: the original's
/// `--local-timezone`, the plugin's `LOCAL_TIMEZONE` from its manifest.
const LOCAL_ZONE: &str = "Europe/Warsaw";

#[test]
fn python_time_answers_as_mcp_server_time_does() {
    let plugin = python_plugins().join("python-time.wasm");
    let folder = tempfile::tempdir().unwrap();
    std::fs::copy(&plugin, folder.path().join("python-time.wasm")).unwrap();
    std::fs::write(
        folder.path().join("python-time.toml"),
        format!("[env]\nset = {{ LOCAL_TIMEZONE = \"{LOCAL_ZONE}\" }}\n"),
    )
    .unwrap();
    let reference = original("time").remove(0);
    let stdout = compare(
        "time",
        &[
            OsStr::new(&reference),
            OsStr::new(env!("CARGO_BIN_EXE_corral")),
            folder.path().as_os_str(),
            OsStr::new(LOCAL_ZONE),
        ],
    );
    assert!(
        stdout.contains("56 calls compared"),
        "the session did not run to its end:\n{stdout}"
    );
    println!("{stdout}");
}

/// The plugin's logic (timezones.py, tzbundle.py) with the machine's
/// CPython and the same pinned tzdata the component bundles: DST boundaries
/// on their own days, which the side-by-side session (on today's date)
/// meets only on the days they fall.
#[test]
fn python_time_unit_tests_pass() {
    python_plugins();
    let deps = target_dir().join("toolchains/python-deps/python-time");
    let output = Command::new("python3")
        .args(["-B", "-m", "unittest", "discover", "-s"])
        .arg(repo_root().join("plugins/python-time"))
        .args(["-p", "test_*.py"])
        .env("PYTHONPATH", &deps)
        .output()
        .expect("running python3");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
