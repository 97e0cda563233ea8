//! `plugins/js-sequential-thinking` against npm
//! `@modelcontextprotocol/server-sequential-thinking` 2026.8.31. The driver's
//! ALLOWED: arguments its schema forbids are refused by Corral's validator in
//! its words ("schema"), and numeric strings the original's zod coerces
//! ("coerced").

use std::ffi::OsStr;

use super::{compare, folder_with_plugin, node_unit_tests, original};

#[test]
fn sequential_thinking_answers_every_call_as_the_original_does() {
    let original = original("sequential_thinking");
    let (node, entry) = (&original[0], &original[1]);
    let plugins = folder_with_plugin("js-sequential-thinking");
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("state.db");
    let stdout = compare(
        "sequential_thinking",
        &[
            OsStr::new(node),
            OsStr::new(entry),
            OsStr::new(env!("CARGO_BIN_EXE_corral")),
            plugins.path().as_os_str(),
            db.as_os_str(),
        ],
    );
    println!("{stdout}");
}

/// The plugin's logic module passes its own unit tests under Node, outside
/// the component.
#[test]
fn sequential_thinking_logic_passes_its_unit_tests() {
    node_unit_tests("plugins/js-sequential-thinking/thinking.test.js");
}
