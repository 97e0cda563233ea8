//! Where the plugins of a folder keep their state (`--state`), and
//! `corral state`, which shows and clears it.
//!
//! By default a folder's plugins share one SQLite file in the user's data
//! directory, `$XDG_DATA_HOME/corral/state/` (or `~/.local/share/...`),
//! named after the folder and keyed by its canonical path: serving the same
//! folder again finds the same state, and two folders never share it.
//! Replicas share a Redis server instead (`--state redis://HOST:PORT/DB`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use corral_sandbox::naming;
use corral_sandbox::state::redis::Redis;
use corral_sandbox::state::sqlite::{Sqlite, Sync};
use corral_sandbox::state::{Backend, StateStore};

/// What `corral state list` shows of one value at most (characters; the
/// store sends no more than four bytes for each).
const SHOWN_VALUE_CHARS: usize = 200;
/// The most entries `corral state list` shows.
const SHOWN_ENTRIES: usize = 1000;

/// The store `--state SPEC` names, or the default one for `folder`.
pub fn store(spec: Option<&str>, folder: &Path) -> Result<StateStore> {
    let backend: Arc<dyn Backend> = match spec {
        Some(spec) => match spec.split_once(':') {
            Some(("sqlite", path)) if !path.is_empty() => match path.strip_suffix("?sync=full") {
                Some(path) if !path.is_empty() => Arc::new(Sqlite::new(path).with_sync(Sync::Full)),
                Some(_) => bail!("--state {spec}: no file before ?sync=full"),
                None => Arc::new(Sqlite::new(path)),
            },
            Some(("redis" | "rediss", _)) => {
                Arc::new(Redis::new(spec).map_err(|err| anyhow::anyhow!("--state {err}"))?)
            }
            _ => bail!(
                "--state {spec}: expected sqlite:PATH (a SQLite file, created when missing; sqlite:PATH?sync=full to flush every write to the disk) or redis://HOST[:PORT][/DB] (rediss:// for TLS)"
            ),
        },
        None => Arc::new(Sqlite::new(default_path(folder)?)),
    };
    Ok(StateStore(backend))
}

/// The default store's file for `folder`.
pub fn default_path(folder: &Path) -> Result<PathBuf> {
    let data = corral_sandbox::user_dirs::base("XDG_DATA_HOME", ".local/share")
        .context("no data directory for plugins' state (neither XDG_DATA_HOME nor HOME is set): name a file with --state sqlite:PATH")?;
    let folder = std::fs::canonicalize(folder)
        .with_context(|| format!("cannot resolve {}", folder.display()))?;
    let key = blake3::hash(folder.as_os_str().as_encoded_bytes()).to_hex();
    let name: String = folder
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
        .take(40)
        .collect();
    Ok(data
        .join("corral/state")
        .join(format!("{name}-{}.sqlite", &key[..16])))
}

/// `corral state list`: without a plugin, the plugins that keep anything;
/// with one, its entries (values cut short, at most 1,000 entries). A
/// plugin whose state is kept per principal shows as its shared store
/// (`NAME`, what calls without a principal keep) and one `NAME@KEY` for
/// each principal's own (the key a hash of issuer and subject: see
/// `corral_tool::Principal::key`), each listed, read and cleared by that
/// name.
pub fn list(store: &StateStore, plugin: Option<&str>, out: &mut impl Write) -> Result<()> {
    let backend = &store.0;
    match plugin {
        None => {
            for plugin in backend.plugins()? {
                let usage = backend.usage(&plugin)?;
                writeln!(out, "{plugin}  {} keys, {} bytes", usage.keys, usage.bytes)?;
            }
        }
        Some(plugin) => {
            let usage = backend.usage(plugin)?;
            let entries = backend.entries(plugin, SHOWN_ENTRIES, SHOWN_VALUE_CHARS * 4)?;
            for entry in &entries {
                let mut value =
                    printable(&String::from_utf8_lossy(&entry.value), SHOWN_VALUE_CHARS);
                if entry.size > entry.value.len() as u64 && !value.ends_with('…') {
                    value.push('…');
                }
                writeln!(
                    out,
                    "{}/{}  {}",
                    printable(&entry.bucket, SHOWN_VALUE_CHARS),
                    printable(&entry.key, SHOWN_VALUE_CHARS),
                    value
                )?;
            }
            if usage.keys > entries.len() as u64 {
                writeln!(out, "(the first {} of {} keys)", entries.len(), usage.keys)?;
            }
            writeln!(out, "{plugin}: {} keys, {} bytes", usage.keys, usage.bytes)?;
        }
    }
    Ok(())
}

/// `corral state get`: the value as stored, or an error when there is none.
pub fn get(store: &StateStore, plugin: &str, bucket: &str, key: &str) -> Result<Vec<u8>> {
    let ns = corral_sandbox::state::Namespace {
        plugin: plugin.into(),
        bucket: bucket.to_string(),
    };
    let budget = corral_sandbox::manifest::StateGrant::DEFAULT_VALUE_LIMIT;
    match store
        .0
        .get_many(&ns, &[key.to_string()], budget)?
        .pop()
        .flatten()
    {
        Some(value) => Ok(value),
        None => bail!("{plugin} keeps no key {key:?} in bucket {bucket:?}"),
    }
}

/// `corral state clear`: deletes what `plugin` keeps, in its shared store
/// and in every principal's own store of it (`[state] per = "principal"`,
/// namespaces `PLUGIN@KEY`); returns how many entries. Named as
/// `PLUGIN@KEY`, one principal's store alone.
pub fn clear(store: &StateStore, plugin: &str) -> Result<u64> {
    let backend = &store.0;
    let mut removed = backend.clear(plugin)?;
    if !naming::is_principal_namespace(plugin) {
        let prefix = format!("{plugin}@");
        for namespace in backend.plugins()? {
            if namespace.starts_with(&prefix) && naming::is_principal_namespace(&namespace) {
                removed += backend.clear(&namespace)?;
            }
        }
    }
    Ok(removed)
}

/// `text` with control characters escaped, cut at `max` characters.
fn printable(text: &str, max: usize) -> String {
    let mut shown: String = text
        .chars()
        .take(max)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().count() > max {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(spec: &str) -> String {
        store(Some(spec), Path::new(".")).unwrap().0.describe()
    }

    #[test]
    fn state_specs_name_their_backend() {
        assert_eq!(described("sqlite:/tmp/s.db"), "sqlite:/tmp/s.db");
        assert_eq!(
            described("sqlite:/tmp/s.db?sync=full"),
            "sqlite:/tmp/s.db?sync=full"
        );
        assert_eq!(
            described("redis://:pw@10.0.0.5:6380/2"),
            "redis://10.0.0.5:6380/2"
        );
        assert_eq!(
            described("rediss://cache.example"),
            "rediss://cache.example:6379/0"
        );
        for bad in ["sqlite:", "sqlite:?sync=full", "postgres://x", "state.db"] {
            let err = store(Some(bad), Path::new(".")).err().unwrap().to_string();
            assert!(err.starts_with(&format!("--state {bad}")), "{err}");
        }
    }

    #[test]
    fn clearing_a_plugin_clears_each_principals_store_of_it_too() {
        let dir = tempfile::tempdir().unwrap();
        let spec = format!("sqlite:{}", dir.path().join("s.db").display());
        let store = store(Some(&spec), Path::new(".")).unwrap();
        let key = |n: u8| format!("{n:032x}");
        let ns = |plugin: &str| corral_sandbox::state::Namespace {
            plugin: plugin.into(),
            bucket: "default".into(),
        };
        let entry = vec![("k".to_string(), b"v".to_vec())];
        let namespaces = [
            "todo".to_string(),
            naming::principal_namespace("todo", &key(1)),
            naming::principal_namespace("todo", &key(2)),
            naming::principal_namespace("todo-two", &key(1)),
            "todo-two".to_string(),
        ];
        for plugin in &namespaces {
            store.0.set_many(&ns(plugin), &entry, 1000).unwrap();
        }
        let mut listed = Vec::new();
        list(&store, None, &mut listed).unwrap();
        let listed = String::from_utf8(listed).unwrap();
        assert!(
            listed.contains(&format!("todo@{}  1 keys, 2 bytes", key(2))),
            "{listed}"
        );
        // One principal's store alone, by its name.
        assert_eq!(clear(&store, &namespaces[2]).unwrap(), 1);
        // The plugin: its shared store and every principal's.
        assert_eq!(clear(&store, "todo").unwrap(), 2);
        assert_eq!(
            store.0.plugins().unwrap(),
            ["todo-two", namespaces[3].as_str()]
        );
    }
}
