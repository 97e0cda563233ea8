//! Plugins' names: a plugin is named by its file stem, which prefixes its
//! tools when names collide and keys its state. A module of its own, below
//! both `plugin` and `state`, which use it.

use std::path::Path;

/// The state namespace where the host keeps its tasks' records (see
/// `corral::task_store`): a name no plugin can have, as a plugin's name
/// never holds a dot.
pub const TASKS_NAMESPACE: &str = "corral.tasks";

/// The state namespace where the host keeps one principal's own secrets
/// (encrypted; see `corral::secrets::own`): `corral.secrets@KEY`, a bucket
/// per plugin. No plugin's name holds a dot.
pub fn own_secrets_namespace(principal_key: &str) -> String {
    debug_assert!(is_principal_key(principal_key), "{principal_key:?}");
    format!("corral.secrets@{principal_key}")
}

/// Whether `name` is a state namespace of the host's own, not a plugin's.
pub fn is_host_namespace(name: &str) -> bool {
    name == TASKS_NAMESPACE
        || name
            .strip_prefix("corral.secrets@")
            .is_some_and(is_principal_key)
}

/// The state namespace of one principal's own store of plugin `plugin`
/// (`[state] per = "principal"`): `PLUGIN@KEY`, where `KEY` is the
/// principal's [`corral_tool::Principal::key`] (32 hex digits the host
/// works out from its issuer and subject). No plugin's name holds an `@`
/// and no principal chooses its key, so neither a plugin's shared store
/// nor another principal's, nor the host's, is ever this namespace.
pub fn principal_namespace(plugin: &str, principal_key: &str) -> String {
    debug_assert!(is_principal_key(principal_key), "{principal_key:?}");
    format!("{plugin}@{principal_key}")
}

/// Whether `name` is a namespace [`principal_namespace`] gives.
pub fn is_principal_namespace(name: &str) -> bool {
    name.split_once('@').is_some_and(|(plugin, key)| {
        !plugin.is_empty() && plugin.chars().all(is_name_char) && is_principal_key(key)
    })
}

/// Whether `key` is as [`corral_tool::Principal::key`] gives them: 32
/// lowercase hex digits.
fn is_principal_key(key: &str) -> bool {
    key.len() == 32 && key.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principals_namespace_is_no_plugins_and_no_hosts() {
        let key = "0123456789abcdef0123456789abcdef";
        let ns = principal_namespace("memory", key);
        assert_eq!(ns, format!("memory@{key}"));
        assert!(is_principal_namespace(&ns));
        assert!(
            !ns.chars().all(is_name_char),
            "a plugin's name never is one"
        );
        assert!(!is_host_namespace(&ns));
        for not in [
            "memory",
            "memory@",
            "@0123456789abcdef0123456789abcdef",
            "memory@0123456789ABCDEF0123456789ABCDEF",
            "memory@0123456789abcdef0123456789abcde",
            "mem}ory@0123456789abcdef0123456789abcdef",
            "a@b@0123456789abcdef0123456789abcdef",
            TASKS_NAMESPACE,
        ] {
            assert!(!is_principal_namespace(not), "{not}");
        }
    }
}
