//! The embedded backend: one SQLite file in WAL mode. A write that
//! returned is in the file: a process killed at any moment leaves a
//! readable store with every write it acknowledged. By default
//! (`synchronous = NORMAL`) the file is flushed to the disk at checkpoints,
//! so a power loss or an OS crash may lose the newest writes, though never
//! the store; [`Sync::Full`] flushes every write (`synchronous = FULL`), at
//! the cost of a flush per write: about 4 ms on the benchmark machine
//! against 0.1 ms (docs/benchmarks.md, "State").
//!
//! Entries are rows `(plugin, bucket, key, value)`; a plugin's usage (bytes
//! of keys and values) is a row of its own, updated in the same transaction
//! as every write, so the quota is checked against what is stored, never
//! against what the guest says. `list-keys` cursors are row ids: a key
//! keeps its row when its value changes, so a listing sees each key once.
//! The file is opened on first use: a server whose plugins keep nothing
//! never creates it.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, TryLockError};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{Backend, Entry, Namespace, StateError, Usage, entry_bytes, may_wait};

/// How long a write waits for another process's write (another replica on
/// the same file) before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a waiting write tries again.
const BUSY_RETRY: Duration = Duration::from_millis(2);

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS entries (
        id INTEGER PRIMARY KEY,
        plugin TEXT NOT NULL,
        bucket TEXT NOT NULL,
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        UNIQUE (plugin, bucket, key)
    );
    -- list-keys pages: without it, each page would scan the whole bucket.
    CREATE INDEX IF NOT EXISTS entries_order ON entries (plugin, bucket, id);
    CREATE TABLE IF NOT EXISTS usage (
        plugin TEXT PRIMARY KEY,
        bytes INTEGER NOT NULL
    );
";

/// When a write reaches the disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sync {
    /// At checkpoints: a write survives the process, not a power loss.
    #[default]
    Normal,
    /// Before the write returns.
    Full,
}

/// A SQLite file holding every plugin's entries.
pub struct Sqlite {
    path: PathBuf,
    sync: Sync,
    /// Opened on first use; an error to open it is kept and reported to
    /// every call that needs the store.
    connection: OnceLock<Result<Mutex<Connection>, String>>,
}

impl Sqlite {
    /// The store at `path` (created, with its folder, on first use).
    pub fn new(path: impl Into<PathBuf>) -> Sqlite {
        Sqlite {
            path: path.into(),
            sync: Sync::Normal,
            connection: OnceLock::new(),
        }
    }

    /// The store, with writes reaching the disk as `sync` says.
    pub fn with_sync(self, sync: Sync) -> Sqlite {
        Sqlite { sync, ..self }
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

    /// `err`, or [`StateError::WouldWait`] when it is SQLite's "busy" met
    /// at once (the busy handler gives up at once there).
    fn sql_fault(&self, err: rusqlite::Error) -> StateError {
        match err.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy) if !may_wait() => StateError::WouldWait,
            _ => self.fault(err),
        }
    }

    fn connection(&self) -> Result<MutexGuard<'_, Connection>, StateError> {
        // Opening waits for other processes (creating the schema): never
        // at once.
        if !may_wait() && self.connection.get().is_none() {
            return Err(StateError::WouldWait);
        }
        let opened = self
            .connection
            .get_or_init(|| open(&self.path, self.sync).map(Mutex::new));
        let connection = match opened {
            Ok(connection) => connection,
            Err(reason) => return Err(self.fault(reason)),
        };
        // A panic while holding the lock leaves a connection that SQLite
        // itself kept consistent (the transaction rolls back).
        if may_wait() {
            return Ok(connection
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()));
        }
        match connection.try_lock() {
            Ok(connection) => Ok(connection),
            Err(TryLockError::Poisoned(poisoned)) => Ok(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => Err(StateError::WouldWait),
        }
    }

    /// Runs `work` in one write transaction, committed when it succeeds.
    fn write<T>(
        &self,
        work: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut connection = self.connection()?;
        // The write lock is taken here or never (IMMEDIATE): a write that
        // would wait for another process's fails before it changes anything.
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.sql_fault(err))?;
        let value = work(&transaction)?;
        transaction.commit().map_err(|err| self.sql_fault(err))?;
        Ok(value)
    }
}

fn open(path: &Path, sync: Sync) -> Result<Connection, String> {
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
        // busy_timeout, but giving up at once inside `at_once`.
        connection.busy_handler(Some(wait_while_busy))?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        let synchronous = match sync {
            Sync::Normal => "NORMAL",
            Sync::Full => "FULL",
        };
        connection.pragma_update(None, "synchronous", synchronous)?;
        connection.execute_batch(SCHEMA)
    };
    setup().map_err(|err| format!("cannot use {}: {err}", path.display()))?;
    Ok(connection)
}

/// SQLite's busy handler: whether to try again after `tries` tries, having
/// slept a while (as `busy_timeout` would), but never inside `at_once`.
fn wait_while_busy(tries: i32) -> bool {
    let waited = BUSY_RETRY * u32::try_from(tries).unwrap_or(0);
    if !may_wait() || waited >= BUSY_TIMEOUT {
        return false;
    }
    std::thread::sleep(BUSY_RETRY);
    true
}

/// The plugin's usage, read inside a transaction.
fn used(transaction: &rusqlite::Transaction<'_>, plugin: &str) -> rusqlite::Result<u64> {
    let bytes: Option<i64> = transaction
        .prepare_cached("SELECT bytes FROM usage WHERE plugin = ?1")?
        .query_row([plugin], |row| row.get(0))
        .optional()?;
    Ok(bytes.unwrap_or(0).max(0) as u64)
}

fn set_used(
    transaction: &rusqlite::Transaction<'_>,
    plugin: &str,
    bytes: u64,
) -> rusqlite::Result<()> {
    transaction
        .prepare_cached(
            "INSERT INTO usage (plugin, bytes) VALUES (?1, ?2)
             ON CONFLICT (plugin) DO UPDATE SET bytes = excluded.bytes",
        )?
        .execute(params![plugin, bytes as i64])?;
    Ok(())
}

/// The value stored at `key`, if any.
fn stored_value(
    transaction: &rusqlite::Transaction<'_>,
    ns: &Namespace,
    key: &str,
) -> rusqlite::Result<Option<Vec<u8>>> {
    transaction
        .prepare_cached("SELECT value FROM entries WHERE plugin = ?1 AND bucket = ?2 AND key = ?3")?
        .query_row(params![&*ns.plugin, ns.bucket, key], |row| row.get(0))
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
        .prepare_cached(
            "SELECT length(value) FROM entries WHERE plugin = ?1 AND bucket = ?2 AND key = ?3",
        )?
        .query_row(params![&*ns.plugin, ns.bucket, key], |row| row.get(0))
        .optional()?;
    Ok(length.map(|length| key.len() as u64 + length.max(0) as u64))
}

fn upsert(
    transaction: &rusqlite::Transaction<'_>,
    ns: &Namespace,
    key: &str,
    value: &[u8],
) -> rusqlite::Result<()> {
    transaction
        .prepare_cached(
            "INSERT INTO entries (plugin, bucket, key, value) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (plugin, bucket, key) DO UPDATE SET value = excluded.value",
        )?
        .execute(params![&*ns.plugin, ns.bucket, key, value])?;
    Ok(())
}

impl Backend for Sqlite {
    fn is_quick(&self) -> bool {
        true
    }

    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn ping(&self) -> Result<(), StateError> {
        self.connection()?
            .query_row("SELECT 1", [], |_| Ok(()))
            .map_err(|err| self.sql_fault(err))
    }

    fn describe(&self) -> String {
        match self.sync {
            Sync::Normal => format!("sqlite:{}", self.path.display()),
            Sync::Full => format!("sqlite:{}?sync=full", self.path.display()),
        }
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
            .map_err(|err| self.sql_fault(err))?;
        let mut read = 0u64;
        let mut values = Vec::with_capacity(keys.len());
        for key in keys {
            let value: Option<Vec<u8>> = statement
                .query_row(params![&*ns.plugin, ns.bucket, key], |row| row.get(0))
                .optional()
                .map_err(|err| self.sql_fault(err))?;
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
            let sql = |err| self.sql_fault(err);
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
            let sql = |err| self.sql_fault(err);
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
            .map_err(|err| self.sql_fault(err))
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
            .map_err(|err| self.sql_fault(err))?;
        // One more than a page: whether there is a next page.
        let rows = statement
            .query_map(
                params![&*ns.plugin, ns.bucket, after, limit as i64 + 1],
                |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
            )
            .map_err(|err| self.sql_fault(err))?;
        let mut keys = Vec::new();
        let mut last = None;
        let mut more = false;
        for row in rows {
            let (id, key) = row.map_err(|err| self.sql_fault(err))?;
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
            let sql = |err| self.sql_fault(err);
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
            .map_err(|err| self.sql_fault(err))
    }

    fn entries(
        &self,
        plugin: &str,
        limit: usize,
        preview: usize,
    ) -> Result<Vec<Entry>, StateError> {
        let connection = self.connection()?;
        let mut statement = connection
            .prepare_cached(
                "SELECT bucket, key, coalesce(substr(value, 1, ?2), x''), length(value) FROM entries
                 WHERE plugin = ?1 ORDER BY bucket, id LIMIT ?3",
            )
            .map_err(|err| self.sql_fault(err))?;
        let rows = statement
            .query_map(params![plugin, preview as i64, limit as i64], |row| {
                Ok(Entry {
                    bucket: row.get(0)?,
                    key: row.get(1)?,
                    value: row.get(2)?,
                    size: row.get::<_, i64>(3)?.max(0) as u64,
                })
            })
            .map_err(|err| self.sql_fault(err))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|err| self.sql_fault(err))
    }

    fn plugins(&self) -> Result<Vec<String>, StateError> {
        let connection = self.connection()?;
        let mut statement = connection
            .prepare("SELECT DISTINCT plugin FROM entries ORDER BY plugin")
            .map_err(|err| self.sql_fault(err))?;
        let rows = statement
            .query_map([], |row| row.get(0))
            .map_err(|err| self.sql_fault(err))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|err| self.sql_fault(err))
    }

    fn clear(&self, plugin: &str) -> Result<u64, StateError> {
        self.write(|transaction| {
            let sql = |err| self.sql_fault(err);
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
    use crate::state::contract;

    fn store() -> (tempfile::TempDir, Sqlite) {
        let dir = tempfile::tempdir().unwrap();
        let store = Sqlite::new(dir.path().join("deep/state.db"));
        (dir, store)
    }

    contract::suite!(store());

    #[test]
    fn entries_survive_reopening_the_file() {
        let (dir, store) = store();
        contract::set(&store, &contract::ns("p", "default"), "k", b"kept", 100).unwrap();
        drop(store);
        let store = Sqlite::new(dir.path().join("deep/state.db"));
        assert_eq!(
            store.entries("p", 10, 100).unwrap(),
            [Entry {
                bucket: "default".into(),
                key: "k".into(),
                value: b"kept".to_vec(),
                size: 4,
            }]
        );
    }

    /// At once, nothing waits: not the first open, not a connection in
    /// use, not another process's write lock; without `at_once`, a write
    /// waits for that lock.
    #[test]
    fn at_once_never_waits_and_leaves_nothing_half_done() {
        use crate::state::at_once;
        let (_dir, store) = store();
        let a = contract::ns("p", "default");
        let set = |value: &[u8]| contract::set(&store, &a, "k", value, 100);
        assert_eq!(at_once(|| set(b"first")), Err(StateError::WouldWait));
        set(b"first").unwrap();
        assert_eq!(at_once(|| set(b"at once")), Ok(()));

        let held = store.connection().unwrap();
        let other_thread = std::thread::scope(|scope| {
            scope
                .spawn(|| at_once(|| store.exists(&a, "k")))
                .join()
                .unwrap()
        });
        assert_eq!(other_thread, Err(StateError::WouldWait));
        drop(held);

        // Another process's write lock, held for 200 ms.
        let path = store.path().to_path_buf();
        let (locked, is_locked) = std::sync::mpsc::channel();
        let other = std::thread::spawn(move || {
            let mut other = Connection::open(path).unwrap();
            let lock = other
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .unwrap();
            locked.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(200));
            lock.commit().unwrap();
        });
        is_locked.recv().unwrap();
        assert_eq!(at_once(|| set(b"blocked")), Err(StateError::WouldWait));
        // Reads go on beside a writer (WAL).
        assert_eq!(
            at_once(|| store.get_many(&a, &["k".into()], 100)),
            Ok(vec![Some(b"at once".to_vec())])
        );
        set(b"waited").unwrap();
        other.join().unwrap();
        assert_eq!(
            store.get_many(&a, &["k".into()], 100).unwrap(),
            [Some(b"waited".to_vec())]
        );
    }

    #[test]
    fn full_sync_is_asked_of_sqlite() {
        let (dir, _) = store();
        for (sync, expected) in [(Sync::Normal, 1), (Sync::Full, 2)] {
            let store = Sqlite::new(dir.path().join(format!("{sync:?}.db"))).with_sync(sync);
            let connection = store.connection().unwrap();
            let level: i64 = connection
                .pragma_query_value(None, "synchronous", |row| row.get(0))
                .unwrap();
            assert_eq!(level, expected);
        }
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let store = Sqlite::new(dir.path().join("file/state.db"));
        let err = store
            .exists(&contract::ns("p", "b"), "k")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sqlite:") && err.contains("cannot create"),
            "{err}"
        );
    }
}
