//! `filesystem`: plugins/filesystem checked call for call against the
//! reference server it replaces, npm `@modelcontextprotocol/server-filesystem`
//! 2026.8.31, then the path escapes reported against the original tried on
//! both, side by side.
//!
//! The original is installed pinned under `target/clients/reference/filesystem`
//! (tests/reference/filesystem/setup). The driver,
//! tests/reference/filesystem/compare.py, builds one fixture tree (empty
//! files, unicode names, a 5000-line file, symlinks in and out, ...) and runs
//! the two servers one after the other on it, rebuilt identically between
//! them, through the same session: tools/list and 144 calls covering every
//! tool. Its docstring lists the differences allowed, each with its reason:
//! `schema` (Corral's validator words the refusals), `info` (no birth time or
//! permission bits in WASI), `title annotation`, `mirror` (the host's JSON
//! copy of structuredContent in `read_media_file`'s results, the only ones
//! without text; every result with text is compared exactly), `absolute
//! link` (the sandbox does not follow symlinks with absolute targets) and
//! `link sizes`.

use std::ffi::OsStr;
use std::process::Command;

use super::support::{all_plugins_dir, repo_root, test_cache_dir};
use super::{compare, original, python};

/// The driver's arguments after its mode: node, the original's entry
/// script, corral, the built plugin, and a fresh work folder (kept alive by
/// the returned guard).
fn arguments() -> (Vec<String>, tempfile::TempDir) {
    let original = original("filesystem");
    let work = tempfile::tempdir().unwrap();
    let args = vec![
        original[0].clone(),
        original[1].clone(),
        env!("CARGO_BIN_EXE_corral").to_string(),
        all_plugins_dir()
            .join("filesystem.wasm")
            .display()
            .to_string(),
        work.path().display().to_string(),
    ];
    (args, work)
}

#[test]
fn filesystem_answers_every_call_as_the_original_does() {
    let (args, _work) = arguments();
    let mut all: Vec<&OsStr> = vec![OsStr::new("compare")];
    all.extend(args.iter().map(OsStr::new));
    println!("{}", compare("filesystem", &all));
}

/// The escapes reported against the original (a symlink out, a sibling
/// with the grant's prefix, `..`, an absolute path, a rename racing the
/// check), for reading and for writing tools, then writes in a folder
/// granted read-only: the plugin must refuse each, reading and writing
/// nothing outside its grants. What the original does is printed as a
/// table, not judged.
#[test]
fn filesystem_refuses_every_escape_reported_against_the_original() {
    let (args, _work) = arguments();
    let output = Command::new(python())
        .arg(repo_root().join("tests/reference/filesystem/compare.py"))
        .arg("security")
        .args(&args)
        .env("CORRAL_LOG", "warn")
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("running tests/reference/filesystem/compare.py security");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the plugin let a path escape or a read-only write through\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{stdout}");
}
