//! `fetch`: plugins/python-fetch checked call for call against the reference
//! server it replaces, `mcp-server-fetch` 2026.10.24 from PyPI.
//!
//! The reference is installed pinned under `target/clients/reference/fetch`
//! (tests/reference/fetch/setup). The driver, tests/reference/fetch/compare.py,
//! serves the fixture pages of tests/reference/fetch/pages from a loopback
//! HTTP server, plus a second one playing a host outside the plugin's grant,
//! and runs both servers through two scripted sessions (robots.txt obeyed,
//! then ignored, the latter with a user agent of the user's): tools/list and
//! 70 calls. It compares every answer (content, structuredContent, isError,
//! or the protocol error) and the requests each side sent for it (path and
//! User-Agent, in order). The differences it
//! allows, each with its reason, are its `ALLOWED`:
//!
//! - `schema`: arguments that break the input schema are refused by Corral's
//!   validator, in its words, before the plugin runs (the original's are
//!   pydantic's); both are isError results;
//! - `grant`: a URL or a redirect to a host outside the plugin's `[http] allow` list
//!   is followed by the original and refused by Corral: the plugin answers an
//!   error naming the host, and the outside server sees no request from it;
//! - `size`: a body past 32 MiB (a gzip bomb) is read by the original; the
//!   plugin stops at that bound with an error saying so.

use std::ffi::OsStr;
use std::process::Command;

use super::support::repo_root;
use super::{compare, original, python_plugins};

#[test]
fn fetch_answers_every_call_as_the_original_does() {
    let plugin = python_plugins().join("python-fetch.wasm");
    let reference = original("fetch").remove(0);
    let stdout = compare(
        "fetch",
        &[
            OsStr::new(&reference),
            OsStr::new(env!("CARGO_BIN_EXE_corral")),
            plugin.as_os_str(),
        ],
    );
    assert!(
        stdout.contains("70 calls compared"),
        "the sessions did not run to their end:\n{stdout}"
    );
    println!("{stdout}");
}

/// The plugin's URL handling and its stand-ins for readabilipy's C
/// extensions, outside the component: urls.py against pydantic's
/// serializations, regex.py against the real `regex` package, with the
/// reference's Python (which has `regex` and pydantic installed).
#[test]
fn fetch_unit_tests_pass() {
    let reference = original("fetch").remove(0);
    let output = Command::new(reference)
        .args(["-B", "-m", "unittest", "discover", "-s"])
        .arg(repo_root().join("plugins/python-fetch"))
        .args(["-t"])
        .arg(repo_root().join("plugins/python-fetch"))
        .args(["-p", "test_*.py"])
        .output()
        .expect("running the reference's python");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
