//! Plugins' names: a plugin is named by its file stem, which prefixes its
//! tools when names collide and keys its state. A module of its own, below
//! both `plugin` and `state`, which use it.

use std::path::Path;

/// The state namespace where the host keeps its tasks' records (see
/// `corral::task_store`): a name no plugin can have, as a plugin's name
/// never holds a dot.
pub const TASKS_NAMESPACE: &str = "corral.tasks";

/// Whether `name` is a state namespace of the host's own, not a plugin's.
pub fn is_host_namespace(name: &str) -> bool {
    name == TASKS_NAMESPACE
}

/// Whether `c` may stand in a plugin's name (`[A-Za-z0-9_-]`).
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// The plugin's name: the file stem, with anything outside `[A-Za-z0-9_-]`
/// replaced by `_` so that it can prefix tool names.
pub fn plugin_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect();
    if name.is_empty() {
        "plugin".into()
    } else {
        name
    }
}
