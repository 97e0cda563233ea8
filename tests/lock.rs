//! `corral.lock` at load and at hot reload, through the real binary: a
//! folder's pinned files are served while they match their digests, and a
//! file that changed is refused with a message naming it, where it was
//! pulled from and what to do. The locks are written here as `corral pull`
//! writes them (no registry needed).

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use corral_registry::digest::sha256_digest;
use corral_registry::lock::{Entry, Lock};
use serde_json::{Value, json};
use support::{
    Server, example, expect_notification, expect_silence, first_text, folder_with, test_cache_dir,
    wait_for_stderr,
};

/// How long a notification that must not come is waited for.
const QUIET_WINDOW: Duration = Duration::from_millis(1500);

const LIST_CHANGED: &str = "notifications/tools/list_changed";

const CALC_REFERENCE: &str = "127.0.0.1:5000/demo/calc:1.0.0";

/// A manifest for calc: any valid one will do.
const CALC_MANIFEST: &str = "[limits]\nrate = 50\n";

/// `corral ARGS... DIR EXTRA...`.
fn corral(args: &[&str], dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(args)
        .arg(dir)
        .args(extra)
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .env_remove("RUST_LOG")
        .env_remove("CORRAL_LOG")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Pins `dir/file` as it is now (its `.wasm` and, if present, the manifest
/// beside it) in `dir`'s lock, pulled from `reference`; written as
/// `corral pull` writes it, to a temporary file renamed into place.
fn pin(dir: &Path, file: &str, reference: &str) {
    let wasm = std::fs::read(dir.join(file)).unwrap();
    let manifest = std::fs::read(dir.join(file).with_extension("toml")).ok();
    let mut lock = Lock::read(dir).unwrap();
    lock.plugins.insert(
        file.to_owned(),
        Entry {
            reference: reference.to_owned(),
            digest: sha256_digest(b"the OCI manifest"),
            wasm: sha256_digest(&wasm),
            manifest: manifest.as_deref().map(sha256_digest),
            signer: None,
            pulled: "2026-11-23T13:51:55Z".to_owned(),
        },
    );
    lock.write(dir).unwrap();
}

/// A folder of calc (with its manifest, pinned) and textstats (pinned).
fn pinned_folder() -> tempfile::TempDir {
    let dir = folder_with(&[
        ("calc.wasm", &example("calc")),
        ("textstats.wasm", &example("textstats")),
    ]);
    std::fs::write(dir.path().join("calc.toml"), CALC_MANIFEST).unwrap();
    pin(dir.path(), "calc.wasm", CALC_REFERENCE);
    pin(
        dir.path(),
        "textstats.wasm",
        "127.0.0.1:5000/demo/textstats:2",
    );
    dir
}

/// Asserts that `corral list` refuses calc for `what` (the file that
/// differs) and still lists textstats.
fn assert_calc_refused(dir: &Path, what: &str) {
    let output = corral(&["list"], dir, &[]);
    let (listed, log) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "{listed}\n{log}");
    assert!(
        log.contains(&format!("{what} does not match corral.lock")),
        "{log}"
    );
    assert!(log.contains(CALC_REFERENCE), "{log}");
    assert!(log.contains("pull it again"), "{log}");
    assert!(
        log.contains("1 plugin(s) failed to load: calc.wasm"),
        "{log}"
    );
    assert!(listed.contains("analyze_text"), "{listed}");
    assert!(!listed.contains("subtract"), "{listed}");
}

fn add(server: &mut Server, a: i64, b: i64) -> Value {
    server.call("add", json!({ "a": a, "b": b }))
}

#[test]
fn matching_pinned_files_are_served() {
    let dir = pinned_folder();
    let output = corral(&["list"], dir.path(), &[]);
    let listed = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for tool in ["add", "sqrt", "analyze_text"] {
        assert!(listed.contains(tool), "{tool} missing: {listed}");
    }
    let output = corral(&["call"], dir.path(), &["add", r#"{"a": 2, "b": 3}"#]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let mut server = Server::initialized(dir.path(), "2025-06-18");
    let tools = server.tool_names();
    assert!(tools.contains(&"add".to_owned()), "{tools:?}");
    assert!(tools.contains(&"analyze_text".to_owned()), "{tools:?}");
    assert_eq!(first_text(&add(&mut server, 2, 3)), "5");
}

#[test]
fn a_replaced_pinned_file_is_refused_and_the_others_still_load() {
    let dir = pinned_folder();
    let other = std::fs::read(example("sketch")).unwrap();
    std::fs::write(dir.path().join("calc.wasm"), &other).unwrap();
    assert_calc_refused(dir.path(), "calc.wasm");
    // Both digests, so that the user sees which build is which.
    let log = stderr(&corral(&["list"], dir.path(), &[]));
    let pinned = sha256_digest(&std::fs::read(example("calc")).unwrap());
    assert!(log.contains(&pinned), "{log}");
    assert!(log.contains(&sha256_digest(&other)), "{log}");

    // `corral call` loads the same way: the refused plugin's tools are not there.
    let output = corral(&["call"], dir.path(), &["add", r#"{"a": 2, "b": 3}"#]);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("does not match corral.lock"));
}

#[test]
fn a_changed_added_or_removed_manifest_is_refused() {
    // Edited.
    let dir = pinned_folder();
    std::fs::write(dir.path().join("calc.toml"), "[limits]\nrate = 5000\n").unwrap();
    assert_calc_refused(dir.path(), "the manifest of calc.wasm");

    // Removed, while the lock pins one.
    let dir = pinned_folder();
    std::fs::remove_file(dir.path().join("calc.toml")).unwrap();
    assert_calc_refused(dir.path(), "the manifest of calc.wasm");
    assert!(stderr(&corral(&["list"], dir.path(), &[])).contains("it is now absent"));

    // Added, where the lock says the artifact had none.
    let dir = pinned_folder();
    std::fs::remove_file(dir.path().join("calc.toml")).unwrap();
    pin(dir.path(), "calc.wasm", CALC_REFERENCE);
    assert_eq!(corral(&["list"], dir.path(), &[]).status.code(), Some(0));
    std::fs::write(dir.path().join("calc.toml"), CALC_MANIFEST).unwrap();
    assert_calc_refused(dir.path(), "the manifest of calc.wasm");
}

#[test]
fn a_pinned_file_changed_while_serving_is_refused_until_the_lock_follows() {
    let dir = pinned_folder();
    let mut server = serve_logging_errors(dir.path());
    let before = server.all_tools();
    assert_eq!(first_text(&add(&mut server, 2, 3)), "5");

    // Another plugin's bytes, put in place as build tools and `corral pull` do.
    let other = std::fs::read(example("sketch")).unwrap();
    let temporary = dir.path().join(".calc.wasm.part");
    std::fs::write(&temporary, &other).unwrap();
    std::fs::rename(&temporary, dir.path().join("calc.wasm")).unwrap();

    // Reported on stderr and to the client's log...
    let log = expect_notification(&mut server, "notifications/message");
    assert_eq!(log["params"]["level"], "error", "{log}");
    let text = log["params"]["data"].as_str().unwrap();
    assert!(
        text.contains("calc.wasm does not match corral.lock"),
        "{text}"
    );
    assert!(text.contains("previous version keeps serving"), "{text}");
    // (Waiting for the end of the message: stderr may lag behind stdout.)
    let stderr = server.stderr_containing(&format!("pulled from {CALC_REFERENCE}"));
    assert!(
        stderr.contains("calc.wasm does not match corral.lock"),
        "{stderr}"
    );
    // ...while the pinned version keeps answering, and nothing changed.
    assert_eq!(first_text(&add(&mut server, 4, 5)), "9");
    assert_eq!(server.all_tools(), before);
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);

    // The lock catching up (as a new `corral pull` does) is a change in
    // itself: the new version loads.
    pin(dir.path(), "calc.wasm", "127.0.0.1:5000/demo/calc:2.0.0");
    expect_notification(&mut server, LIST_CHANGED);
    let tools = server.tool_names();
    assert!(tools.contains(&"mandelbrot".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"add".to_owned()), "{tools:?}");
    assert!(tools.contains(&"analyze_text".to_owned()), "{tools:?}");
}

#[test]
fn a_malformed_lock_stops_every_command_at_startup() {
    let dir = pinned_folder();
    std::fs::write(
        dir.path().join("corral.lock"),
        "version = 1\nbogus = true\n",
    )
    .unwrap();
    let lock_path = dir.path().canonicalize().unwrap().join("corral.lock");
    for (args, extra) in [
        (&["list"][..], &[][..]),
        (&["call"], &["add", r#"{"a": 2, "b": 3}"#]),
    ] {
        let output = corral(args, dir.path(), extra);
        let log = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {log}");
        assert!(log.contains("corral.lock is not a valid lock"), "{log}");
        assert!(log.contains("bogus"), "{log}");
        assert!(stdout(&output).is_empty(), "{}", stdout(&output));
    }

    let mut server = Server::start(dir.path());
    let status = server.wait_exit(Duration::from_secs(30));
    assert_eq!(status.code(), Some(2));
    let log = server.stderr_containing("is not a valid lock");
    assert!(log.contains(&lock_path.display().to_string()), "{log}");
}

#[test]
fn a_lock_broken_while_serving_is_reported_and_changes_nothing() {
    let dir = pinned_folder();
    let mut server = serve_logging_errors(dir.path());
    let before = server.all_tools();

    std::fs::write(dir.path().join("corral.lock"), "not a lock").unwrap();
    let log = expect_notification(&mut server, "notifications/message");
    assert_eq!(log["params"]["level"], "error", "{log}");
    let text = log["params"]["data"].as_str().unwrap();
    assert!(text.contains("corral.lock is not a valid lock"), "{text}");
    server.stderr_containing("the plugins keep serving as they were");
    assert_eq!(first_text(&add(&mut server, 2, 3)), "5");
    assert_eq!(server.all_tools(), before);
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);

    // While the lock is broken, no file is loaded unchecked: a changed
    // plugin waits for a lock that can vouch for it.
    std::fs::copy(example("sketch"), dir.path().join("sketch.wasm")).unwrap();
    wait_for_stderr(&server, "is not a valid lock", 2);
    expect_silence(&mut server, LIST_CHANGED, QUIET_WINDOW);
    assert_eq!(server.all_tools(), before);

    // A lock that reads again is a change: the folder is reconsidered whole.
    std::fs::remove_file(dir.path().join("corral.lock")).unwrap();
    pin(dir.path(), "calc.wasm", CALC_REFERENCE);
    expect_notification(&mut server, LIST_CHANGED);
    let tools = server.tool_names();
    assert!(tools.contains(&"mandelbrot".to_owned()), "{tools:?}");
    assert_eq!(first_text(&add(&mut server, 2, 3)), "5");
}

/// `corral serve dir`, initialized, with the client's log level at
/// `error`: load failures reach the client as log notifications.
fn serve_logging_errors(dir: &Path) -> Server {
    let mut server = Server::initialized(dir, "2025-06-18");
    assert_eq!(
        server.result("logging/setLevel", json!({ "level": "error" })),
        json!({})
    );
    server
}
