//! The embedded backend: one SQLite file in WAL mode, written with
//! `synchronous = FULL`, so that a write that returned is on disk and a
//! process killed at any moment leaves a readable store with every write it
//! acknowledged.
//!
//! Entries are rows `(plugin, bucket, key, value)`; a plugin's usage (bytes
//! of keys and values) is a row of its own, updated in the same transaction
//! as every write, so the quota is checked against what is stored, never
//! against what the guest says. `list-keys` cursors are row ids: a key
//! keeps its row when its value changes, so a listing sees each key once.
//! The file is opened on first use: a server whose plugins keep nothing
//! never creates it.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{Backend, Entry, Namespace, StateError, Usage, entry_bytes};

/// How long a write waits for another process's write (another replica on
/// the same file) before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS entries (
        id INTEGER PRIMARY KEY,
        plugin TEXT NOT NULL,
        bucket TEXT NOT NULL,
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        UNIQUE (plugin, bucket, key)
    );
    CREATE TABLE IF NOT EXISTS usage (
        plugin TEXT PRIMARY KEY,
        bytes INTEGER NOT NULL
    );
";

/// A SQLite file holding every plugin's entries.
pub struct Sqlite {
    path: PathBuf,
    /// Opened on first use; an error to open it is kept and reported to
    /// every call that needs the store.
    connection: OnceLock<Result<Mutex<Connection>, String>>,
}

impl Sqlite {
    /// The store at `path` (created, with its folder, on first use).
    pub fn new(path: impl Into<PathBuf>) -> Sqlite {
        Sqlite {
            path: path.into(),
            connection: OnceLock::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn fault(&self, reason: impl ToString) -> StateError {
        StateError::Backend {
            backend: self.describe(),
            reason: reason.to_string(),
        }
    }

    fn connection(&self) -> Result<MutexGuard<'_, Connection>, StateError> {
        let opened = self
            .connection
            .get_or_init(|| open(&self.path).map(Mutex::new));
        match opened {
            // A panic while holding the lock leaves a connection that
            // SQLite itself kept consistent (the transaction rolls back).
            Ok(connection) => Ok(connection
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())),
            Err(reason) => Err(self.fault(reason)),
        }
    }

    /// Runs `work` in one write transaction, committed when it succeeds.
    fn write<T>(
        &self,
        work: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut connection = self.connection()?;
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.fault(err))?;
        let value = work(&transaction)?;
        transaction.commit().map_err(|err| self.fault(err))?;
        Ok(value)
    }
}

fn open(path: &Path) -> Result<Connection, String> {
    if let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        std::fs::create_dir_all(folder)
            .map_err(|err| format!("cannot create {}: {err}", folder.display()))?;
    }
    let connection =
        Connection::open(path).map_err(|err| format!("cannot open {}: {err}", path.display()))?;
    let setup = || -> rusqlite::Result<()> {
        connection.busy_timeout(BUSY_TIMEOUT)?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "FULL")?;
        connection.execute_batch(SCHEMA)
    };
    setup().map_err(|err| format!("cannot use {}: {err}", path.display()))?;
    Ok(connection)
}

/// The plugin's usage, read inside a transaction.
fn used(transaction: &rusqlite::Transaction<'_>, plugin: &str) -> rusqlite::Result<u64> {
    let bytes: Option<i64> = transaction
        .query_row(
            "SELECT bytes FROM usage WHERE plugin = ?1",
            [plugin],
            |row| row.get(0),
        )
        .optional()?;
    Ok(bytes.unwrap_or(0).max(0) as u64)
}

fn set_used(
    transaction: &rusqlite::Transaction<'_>,
    plugin: &str,
    bytes: u64,
) -> rusqlite::Result<()> {
    transaction.execute(
        "INSERT INTO usage (plugin, bytes) VALUES (?1, ?2)
         ON CONFLICT (plugin) DO UPDATE SET bytes = excluded.bytes",
        params![plugin, bytes as i64],
    )?;
    Ok(())
}

/// The value stored at `key`, if any.
fn stored_value(
    transaction: &rusqlite::Transaction<'_>,
    ns: &Namespace,
    key: &str,
) -> rusqlite::Result<Option<Vec<u8>>> {
    transaction
        .query_row(
            "SELECT value FROM entries WHERE plugin = ?1 AND bucket = ?2 AND key = ?3",
            params![&*ns.plugin, ns.bucket, key],
            |row| row.get(0),
        )
        .optional()
}

/// The bytes the entry at `key` counts against the quota, if it exists:
/// measured by SQLite (`length` of a blob), without reading the value.
fn stored_size(
    transaction: &rusqlite::Transaction<'_>,
    ns: &Namespace,
    key: &str,
) -> rusqlite::Result<Option<u64>> {
    let length: Option<i64> = transaction
        .query_row(
            "SELECT length(value) FROM entries WHERE plugin = ?1 AND bucket = ?2 AND key = ?3",
            params![&*ns.plugin, ns.bucket, key],
            |row| row.get(0),
        )
        .optional()?;
    Ok(length.map(|length| key.len() as u64 + length.max(0) as u64))
}

fn upsert(
    transaction: &rusqlite::Transaction<'_>,
    ns: &Namespace,
    key: &str,
    value: &[u8],
) -> rusqlite::Result<()> {
    transaction.execute(
        "INSERT INTO entries (plugin, bucket, key, value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (plugin, bucket, key) DO UPDATE SET value = excluded.value",
        params![&*ns.plugin, ns.bucket, key, value],
    )?;
    Ok(())
}

impl Backend for Sqlite {
    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }

    fn get_many(
        &self,
        ns: &Namespace,
        keys: &[String],
        budget: u64,
    ) -> Result<Vec<Option<Vec<u8>>>, StateError> {
        let connection = self.connection()?;
        let mut statement = connection
            .prepare_cached(
                "SELECT value FROM entries WHERE plugin = ?1 AND bucket = ?2 AND key = ?3",
            )
            .map_err(|err| self.fault(err))?;
        let mut read = 0u64;
        let mut values = Vec::with_capacity(keys.len());
        for key in keys {
            let value: Option<Vec<u8>> = statement
                .query_row(params![&*ns.plugin, ns.bucket, key], |row| row.get(0))
                .optional()
                .map_err(|err| self.fault(err))?;
            read += value.as_ref().map_or(0, |value| value.len() as u64);
            if read > budget {
                return Err(StateError::TooLarge { budget });
            }
            values.push(value);
        }
        Ok(values)
    }

    fn set_many(
        &self,
        ns: &Namespace,
        entries: &[(String, Vec<u8>)],
        quota: u64,
    ) -> Result<(), StateError> {
        self.write(|transaction| {
            let sql = |err| self.fault(err);
            let used = used(transaction, &ns.plugin).map_err(sql)?;
            // The usage after every write of the batch, checked before any.
            let mut after = used as i128;
            let mut seen = std::collections::HashMap::new();
            for (key, value) in entries {
                let before = match seen.get(key.as_str()) {
                    Some(&bytes) => bytes,
                    None => stored_size(transaction, ns, key).map_err(sql)?.unwrap_or(0),
                };
                let now = entry_bytes(key, value);
                after += now as i128 - before as i128;
                seen.insert(key.as_str(), now);
            }
            let after = after.max(0) as u64;
            if after > quota && after > used {
                return Err(StateError::Quota {
                    quota,
                    used,
                    needed: after - used,
                });
            }
            for (key, value) in entries {
                upsert(transaction, ns, key, value).map_err(sql)?;
            }
            set_used(transaction, &ns.plugin, after).map_err(sql)
        })
    }

    fn delete_many(&self, ns: &Namespace, keys: &[String]) -> Result<(), StateError> {
        self.write(|transaction| {
            let sql = |err| self.fault(err);
            let mut freed = 0u64;
            for key in keys {
                if let Some(size) = stored_size(transaction, ns, key).map_err(sql)? {
                    freed += size;
                    transaction
                        .execute(
                            "DELETE FROM entries WHERE plugin = ?1 AND bucket = ?2 AND key = ?3",
                            params![&*ns.plugin, ns.bucket, key],
                        )
                        .map_err(sql)?;
                }
            }
            if freed > 0 {
                let used = used(transaction, &ns.plugin).map_err(sql)?;
                set_used(transaction, &ns.plugin, used.saturating_sub(freed)).map_err(sql)?;
            }
            Ok(())
        })
    }

    fn exists(&self, ns: &Namespace, key: &str) -> Result<bool, StateError> {
        let connection = self.connection()?;
        connection
            .prepare_cached("SELECT 1 FROM entries WHERE plugin = ?1 AND bucket = ?2 AND key = ?3")
            .and_then(|mut statement| statement.exists(params![&*ns.plugin, ns.bucket, key]))
            .map_err(|err| self.fault(err))
    }

    fn list_keys(
        &self,
        ns: &Namespace,
        cursor: Option<u64>,
        limit: usize,
    ) -> Result<(Vec<String>, Option<u64>), StateError> {
        let connection = self.connection()?;
        let after = cursor.map_or(0, |cursor| cursor.min(i64::MAX as u64) as i64);
        let mut statement = connection
            .prepare_cached(
                "SELECT id, key FROM entries WHERE plugin = ?1 AND bucket = ?2 AND id > ?3
                 ORDER BY id LIMIT ?4",
            )
            .map_err(|err| self.fault(err))?;
        // One more than a page: whether there is a next page.
        let rows = statement
            .query_map(
                params![&*ns.plugin, ns.bucket, after, limit as i64 + 1],
                |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
            )
            .map_err(|err| self.fault(err))?;
        let mut keys = Vec::new();
        let mut last = None;
        let mut more = false;
        for row in rows {
            let (id, key) = row.map_err(|err| self.fault(err))?;
            if keys.len() == limit {
                more = true;
                break;
            }
            keys.push(key);
            last = Some(id as u64);
        }
        Ok((keys, if more { last } else { None }))
    }

    fn increment(
        &self,
        ns: &Namespace,
        key: &str,
        delta: u64,
        quota: u64,
    ) -> Result<u64, StateError> {
        self.write(|transaction| {
            let sql = |err| self.fault(err);
            let old = stored_value(transaction, ns, key).map_err(sql)?;
            let current = match &old {
                None => 0,
                Some(value) => std::str::from_utf8(value)
                    .ok()
                    .filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|text| text.parse::<u64>().ok())
                    .ok_or_else(|| StateError::NotACounter {
                        key: key.to_string(),
                    })?,
            };
            let new = current
                .checked_add(delta)
                .ok_or_else(|| StateError::Overflow {
                    key: key.to_string(),
                })?;
            let value = new.to_string().into_bytes();
            let used = used(transaction, &ns.plugin).map_err(sql)?;
            let before = old.as_ref().map_or(0, |old| entry_bytes(key, old));
            let after = used.saturating_sub(before) + entry_bytes(key, &value);
            if after > quota && after > used {
                return Err(StateError::Quota {
                    quota,
                    used,
                    needed: after - used,
                });
            }
            upsert(transaction, ns, key, &value).map_err(sql)?;
            set_used(transaction, &ns.plugin, after).map_err(sql)?;
            Ok(new)
        })
    }

    fn usage(&self, plugin: &str) -> Result<Usage, StateError> {
        let connection = self.connection()?;
        connection
            .query_row(
                "SELECT count(*), coalesce(sum(length(CAST(key AS BLOB)) + length(value)), 0)
                 FROM entries WHERE plugin = ?1",
                [plugin],
                |row| {
                    Ok(Usage {
                        keys: row.get::<_, i64>(0)? as u64,
                        bytes: row.get::<_, i64>(1)? as u64,
                    })
                },
            )
            .map_err(|err| self.fault(err))
    }

    fn entries(
        &self,
        plugin: &str,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> Result<Vec<Entry>, StateError> {
        let connection = self.connection()?;
        let (bucket, key) = after.unwrap_or(("", ""));
        let mut statement = connection
            .prepare_cached(
                "SELECT bucket, key, value FROM entries WHERE plugin = ?1 AND (bucket, key) > (?2, ?3)
                 ORDER BY bucket, key LIMIT ?4",
            )
            .map_err(|err| self.fault(err))?;
        let rows = statement
            .query_map(params![plugin, bucket, key, limit as i64], |row| {
                Ok(Entry {
                    bucket: row.get(0)?,
                    key: row.get(1)?,
                    value: row.get(2)?,
                })
            })
            .map_err(|err| self.fault(err))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|err| self.fault(err))
    }

    fn plugins(&self) -> Result<Vec<String>, StateError> {
        let connection = self.connection()?;
        let mut statement = connection
            .prepare("SELECT DISTINCT plugin FROM entries ORDER BY plugin")
            .map_err(|err| self.fault(err))?;
        let rows = statement
            .query_map([], |row| row.get(0))
            .map_err(|err| self.fault(err))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|err| self.fault(err))
    }

    fn clear(&self, plugin: &str) -> Result<u64, StateError> {
        self.write(|transaction| {
            let sql = |err| self.fault(err);
            let removed = transaction
                .execute("DELETE FROM entries WHERE plugin = ?1", [plugin])
                .map_err(sql)?;
            transaction
                .execute("DELETE FROM usage WHERE plugin = ?1", [plugin])
                .map_err(sql)?;
            Ok(removed as u64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(plugin: &str, bucket: &str) -> Namespace {
        Namespace {
            plugin: plugin.into(),
            bucket: bucket.into(),
        }
    }

    fn store() -> (tempfile::TempDir, Sqlite) {
        let dir = tempfile::tempdir().unwrap();
        let store = Sqlite::new(dir.path().join("deep/state.db"));
        (dir, store)
    }

    fn set(
        store: &Sqlite,
        ns: &Namespace,
        key: &str,
        value: &[u8],
        quota: u64,
    ) -> Result<(), StateError> {
        store.set_many(ns, &[(key.to_string(), value.to_vec())], quota)
    }

    #[test]
    fn plugins_and_buckets_are_namespaces_of_their_own() {
        let (_dir, store) = store();
        let a = ns("alpha", "default");
        set(&store, &a, "k", b"from alpha", 1000).unwrap();
        set(&store, &ns("beta", "default"), "k", b"from beta", 1000).unwrap();
        set(&store, &ns("alpha", "cache"), "k", b"cached", 1000).unwrap();
        let got = |n: &Namespace| {
            store
                .get_many(n, &["k".to_string()], 100)
                .unwrap()
                .remove(0)
        };
        assert_eq!(got(&a).as_deref(), Some(&b"from alpha"[..]));
        assert_eq!(
            got(&ns("beta", "default")).as_deref(),
            Some(&b"from beta"[..])
        );
        assert_eq!(got(&ns("alpha", "cache")).as_deref(), Some(&b"cached"[..]));
        assert_eq!(got(&ns("gamma", "default")), None);
        assert_eq!(store.plugins().unwrap(), ["alpha", "beta"]);
        assert_eq!(store.clear("alpha").unwrap(), 2);
        assert_eq!(got(&a), None);
        assert_eq!(
            got(&ns("beta", "default")).as_deref(),
            Some(&b"from beta"[..])
        );
        assert_eq!(store.usage("alpha").unwrap(), Usage::default());
    }

    /// The quota counts keys and values of every bucket, as stored; a write
    /// past it changes nothing, and a write that frees room always passes.
    #[test]
    fn the_quota_is_measured_by_the_store() {
        let (_dir, store) = store();
        let a = ns("p", "default");
        set(&store, &a, "key", &[0; 90], 100).unwrap(); // 93 bytes
        let err = set(&store, &ns("p", "other"), "k2", &[0; 10], 100).unwrap_err();
        assert_eq!(
            err,
            StateError::Quota {
                quota: 100,
                used: 93,
                needed: 12
            }
        );
        assert!(err.to_string().contains("[state] quota"), "{err}");
        // Replacing the value counts the difference only.
        set(&store, &a, "key", &[1; 97], 100).unwrap();
        assert_eq!(
            store.usage("p").unwrap(),
            Usage {
                keys: 1,
                bytes: 100
            }
        );
        // A batch past the quota writes none of its entries.
        set(&store, &a, "key", &[2; 10], 100).unwrap(); // 13 bytes
        let batch = [
            ("a".to_string(), vec![0; 1]),
            ("key".to_string(), vec![0; 12]),
        ];
        store.set_many(&a, &batch, 14).unwrap_err(); // would be 2 + 15
        assert_eq!(store.get_many(&a, &["a".into()], 100).unwrap(), [None]);
        assert_eq!(store.usage("p").unwrap(), Usage { keys: 1, bytes: 13 });
        store
            .delete_many(&a, &["key".to_string(), "absent".to_string()])
            .unwrap();
        assert_eq!(store.usage("p").unwrap(), Usage::default());
        set(&store, &a, "key", &[0; 97], 100).unwrap();
    }

    #[test]
    fn counters_are_decimal_text_and_refuse_what_is_not_one() {
        let (_dir, store) = store();
        let a = ns("p", "default");
        assert_eq!(store.increment(&a, "n", 5, 1000).unwrap(), 5);
        assert_eq!(store.increment(&a, "n", 2, 1000).unwrap(), 7);
        assert_eq!(
            store.get_many(&a, &["n".into()], 100).unwrap()[0].as_deref(),
            Some(&b"7"[..])
        );
        set(&store, &a, "text", b"seven", 1000).unwrap();
        assert!(matches!(
            store.increment(&a, "text", 1, 1000),
            Err(StateError::NotACounter { .. })
        ));
        set(&store, &a, "max", u64::MAX.to_string().as_bytes(), 1000).unwrap();
        assert!(matches!(
            store.increment(&a, "max", 1, 1000),
            Err(StateError::Overflow { .. })
        ));
        assert!(matches!(
            store.increment(&a, "new", 1, 10),
            Err(StateError::Quota { .. })
        ));
    }

    /// Pages follow row ids: every key present throughout is listed once,
    /// though values change and keys come and go meanwhile.
    #[test]
    fn listing_pages_see_each_key_once() {
        let (_dir, store) = store();
        let a = ns("p", "default");
        for i in 0..25 {
            set(&store, &a, &format!("k{i:02}"), b"v", 10_000).unwrap();
        }
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let (keys, next) = store.list_keys(&a, cursor, 10).unwrap();
            assert!(keys.len() <= 10);
            seen.extend(keys);
            // Meanwhile: a value rewritten, a key deleted and one added.
            set(&store, &a, "k00", b"changed", 10_000).unwrap();
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        let expected: Vec<String> = (0..25).map(|i| format!("k{i:02}")).collect();
        assert_eq!(seen, expected);
        assert_eq!(
            store.list_keys(&ns("p", "empty"), None, 10).unwrap(),
            (vec![], None)
        );
    }

    #[test]
    fn a_batch_read_stops_at_its_budget() {
        let (_dir, store) = store();
        let a = ns("p", "default");
        set(&store, &a, "a", &[0; 60], 1000).unwrap();
        set(&store, &a, "b", &[0; 60], 1000).unwrap();
        let keys = ["a".to_string(), "b".to_string()];
        assert_eq!(store.get_many(&a, &keys, 120).unwrap().len(), 2);
        assert_eq!(
            store.get_many(&a, &keys, 119).unwrap_err(),
            StateError::TooLarge { budget: 119 }
        );
    }

    #[test]
    fn entries_survive_reopening_the_file() {
        let (dir, store) = store();
        set(&store, &ns("p", "default"), "k", b"kept", 100).unwrap();
        drop(store);
        let store = Sqlite::new(dir.path().join("deep/state.db"));
        let entries = store.entries("p", None, 10).unwrap();
        assert_eq!(
            entries,
            [Entry {
                bucket: "default".into(),
                key: "k".into(),
                value: b"kept".to_vec()
            }]
        );
        assert_eq!(store.entries("p", Some(("default", "k")), 10).unwrap(), []);
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let store = Sqlite::new(dir.path().join("file/state.db"));
        let err = store.exists(&ns("p", "b"), "k").unwrap_err().to_string();
        assert!(
            err.contains("sqlite:") && err.contains("cannot create"),
            "{err}"
        );
    }
}
