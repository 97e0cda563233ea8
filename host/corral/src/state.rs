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
/// with one, its entries (values cut short, at most 1,000 entries).
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

/// `corral state clear`: deletes what `plugin` keeps; returns how many
/// entries.
pub fn clear(store: &StateStore, plugin: &str) -> Result<u64> {
    Ok(store.0.clear(plugin)?)
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
}
