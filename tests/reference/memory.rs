//! `memory`: plugins/js-memory checked call for call against the
//! reference server it replaces, npm `@modelcontextprotocol/server-memory`
//! 2026.8.31, installed pinned under `target/clients/reference/memory` by
//! tests/reference/memory/setup.
//!
//! The driver, tests/reference/memory/compare.py, runs both servers through
//! five scripted sessions (tools/list and 75 calls: a main session from no
//! file, the plugin starting on the original's file, the legacy memory.json
//! migration, a relative MEMORY_FILE_PATH, a corrupt file), each server on
//! its own file in its own folder, and compares every answer (content,
//! structuredContent, isError), the tools' entries (description included)
//! and, after each session, the two JSONL files byte for byte, and that no
//! temporary file is left. A sixth session, the plugin's alone, makes 8 x 16
//! concurrent first calls on a legacy memory.json, each of which tries the
//! migration, and compares their answers with the original's (203 calls in
//! all). Every successful result must be the original's exactly; the
//! differences it allows, each with its reason, are in its docstring:
//! `schema` (Corral's validator refuses bad arguments in its own words) and
//! `parse` (V8 and SpiderMonkey word JSON.parse errors differently).

use std::ffi::OsStr;
use std::process::Command;

use super::support::test_cache_dir;
use super::{compare, folder_with_plugin, node_unit_tests, original};

#[test]
fn memory_answers_and_writes_its_file_as_the_original_does() {
    let original = original("memory");
    let (node, entry) = (&original[0], &original[1]);
    let plugins = folder_with_plugin("js-memory");
    let work = tempfile::tempdir().unwrap();
    let stdout = compare(
        "memory",
        &[
            OsStr::new(node),
            OsStr::new(entry),
            OsStr::new(env!("CARGO_BIN_EXE_corral")),
            plugins.path().as_os_str(),
            work.path().as_os_str(),
        ],
    );
    assert!(
        stdout.contains("203 calls compared, 0 failures"),
        "the sessions did not run to their end:\n{stdout}"
    );
    println!("{stdout}");
}

/// The plugin's graph and path logic passes its own unit tests under Node
/// (`node --test`), outside the component.
#[test]
fn memory_logic_passes_its_unit_tests() {
    node_unit_tests("plugins/js-memory/graph.test.js");
}

/// Without a usable grant the plugin says what its manifest lacks, rather
/// than failing with a bare filesystem error: no directory, a read-only one,
/// a MEMORY_FILE_PATH outside the granted ones.
#[test]
fn memory_says_what_its_grant_lacks() {
    let dirs = |mode: &str| {
        format!("[[dirs]]\nhost = \"memory\"\nguest = \"/memory\"\nmode = \"{mode}\"\n")
    };
    let cases = [
        (String::new(), "must grant one in [[dirs]]"),
        (
            dirs("ro"),
            "cannot create a temporary file for /memory/memory.jsonl: not-permitted (is its [[dirs]] grant mode \"rw\"?)",
        ),
        (
            dirs("rw") + "[env]\nset = { MEMORY_FILE_PATH = \"/elsewhere/m.jsonl\" }\n",
            "/elsewhere/m.jsonl is not a file inside a directory granted in the manifest's [[dirs]] (granted: /memory)",
        ),
    ];
    for (manifest, says) in cases {
        let plugins = folder_with_plugin("js-memory");
        std::fs::write(plugins.path().join("js-memory.toml"), &manifest).unwrap();
        std::fs::create_dir(plugins.path().join("memory")).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_corral"))
            .arg("call")
            .arg(plugins.path())
            .arg("create_entities")
            .arg(r#"{"entities": [{"name": "Ada", "entityType": "person", "observations": []}]}"#)
            .env("CORRAL_LOG", "warn")
            .env("CORRAL_CACHE_DIR", test_cache_dir())
            .output()
            .expect("running corral call");
        let stdout = String::from_utf8_lossy(&output.stdout);
        // The result's text, unescaped from the JSON `corral call` prints.
        let text = serde_json::from_slice::<serde_json::Value>(&output.stdout)
            .map(|result| {
                result["content"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
        assert!(
            !output.status.success() && text.contains(says),
            "manifest:\n{manifest}\nexpected an error saying {says:?}, got:\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let left = std::fs::read_dir(plugins.path().join("memory"))
            .unwrap()
            .count();
        assert_eq!(left, 0, "nothing is written into the folder:\n{manifest}");
    }
}

/// A memory file that is a symbolic link out of the granted folder cannot
/// be opened, and the error says so without the hint about the grant's
/// mode, which is for writes only: a read-write grant refuses it as well.
#[test]
fn memory_does_not_blame_the_mode_for_a_link_out_of_its_grant() {
    let plugins = folder_with_plugin("js-memory");
    let memory = plugins.path().join("memory");
    std::fs::create_dir(&memory).unwrap();
    std::fs::write(plugins.path().join("outside.jsonl"), "").unwrap();
    std::os::unix::fs::symlink("../outside.jsonl", memory.join("memory.jsonl")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_corral"))
        .arg("call")
        .arg(plugins.path())
        .arg("read_graph")
        .arg("{}")
        .env("CORRAL_LOG", "warn")
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .output()
        .expect("running corral call");
    let result: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("corral call printed no JSON ({err}): {output:?}"));
    assert_eq!(
        result["content"][0]["text"], "cannot open /memory/memory.jsonl: not-permitted",
        "{result}"
    );
    assert_eq!(result["isError"], true, "{result}");
}
