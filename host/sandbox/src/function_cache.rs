//! Cranelift's incremental compilation cache on disk: each compiled
//! function kept under a hash of everything that went into compiling it, so
//! that a component whose code mostly did not change (a Python or
//! JavaScript plugin after an edit: the same interpreter, a new snapshot of
//! the author's code) compiles in a fraction of the time.
//!
//! It sits beside the [compile cache](crate::cache), which keeps whole
//! components and skips Cranelift only for bytes seen before, as one SQLite
//! file, `<cache dir>/functions.sqlite`: a compile inserts thousands of
//! small entries, which as files would cost seconds of system time, and as
//! rows cost one write each. One file serves every engine configuration:
//! Cranelift's key hashes the function's IR (which holds what the
//! configuration adds, such as fuel checks), the target and its flags, and
//! Cranelift checks its own version in every value.
//!
//! Nothing here can make a compile wrong or fail: an entry that cannot be
//! read, a busy or broken file, a full disk, each costs only the compile of
//! that function. The file is bounded: once it holds more than
//! [`MAX_BYTES`], it is emptied (and refills from the next compiles).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use wasmtime::CacheStore;

/// The most bytes of compiled functions the file keeps before it is emptied.
pub const MAX_BYTES: u64 = 1 << 30;

/// How long a statement waits for another process's write (a server and
/// `corral compile` at once) before it gives up: a miss, not an error.
const BUSY_WAIT: Duration = Duration::from_millis(200);

/// Compiled functions on disk, in one SQLite file.
#[derive(Debug)]
pub struct FunctionCache {
    path: PathBuf,
    /// Opened on first use; `None` after it could not be.
    db: Mutex<Option<Connection>>,
    opened: AtomicBool,
    /// Bytes inserted since the file was measured or emptied, plus its size then.
    held: AtomicU64,
    /// Whether a failure has been reported (once is enough).
    warned: AtomicBool,
}

impl FunctionCache {
    /// The cache in the file `path`, created on first use.
    pub fn new(path: impl Into<PathBuf>) -> FunctionCache {
        FunctionCache {
            path: path.into(),
            db: Mutex::new(None),
            opened: AtomicBool::new(false),
            held: AtomicU64::new(0),
            warned: AtomicBool::new(false),
        }
    }

    /// Runs `work` on the open database, opening it on first use.
    fn with_db<T>(&self, work: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Option<T> {
        let mut db = self.db.lock().unwrap();
        if !self.opened.swap(true, Ordering::Relaxed) {
            match open(&self.path) {
                Ok(opened) => {
                    self.held.store(file_bytes(&self.path), Ordering::Relaxed);
                    *db = Some(opened);
                }
                Err(err) => self.warn(&err),
            }
        }
        match work(db.as_ref()?) {
            Ok(value) => Some(value),
            Err(err) => {
                tracing::debug!("function cache {}: {err}", self.path.display());
                None
            }
        }
    }

    fn warn(&self, err: &rusqlite::Error) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "cannot use the function cache {}: {err} (compiles stay correct, only slower)",
                self.path.display()
            );
        }
    }
}

impl CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        self.with_db(|db| {
            db.prepare_cached("SELECT value FROM functions WHERE key = ?1")?
                .query_row(params![key], |row| row.get::<_, Vec<u8>>(0))
                .optional()
        })
        .flatten()
        .map(Cow::Owned)
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let size = (key.len() + value.len()) as u64;
        let full = self.held.fetch_add(size, Ordering::Relaxed) + size > MAX_BYTES;
        self.with_db(|db| {
            if full {
                tracing::debug!(
                    "the function cache {} is full: emptying it",
                    self.path.display()
                );
                db.execute("DELETE FROM functions", [])?;
                db.execute_batch("VACUUM")?;
                self.held.store(size, Ordering::Relaxed);
            }
            db.prepare_cached("INSERT OR REPLACE INTO functions (key, value) VALUES (?1, ?2)")?
                .execute(params![key, value])
        })
        .is_some()
    }
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let db = Connection::open(path)?;
    db.busy_timeout(BUSY_WAIT)?;
    db.pragma_update(None, "journal_mode", "WAL")?;
    // A cache: a write lost in a crash is a compile, so no fsync.
    db.pragma_update(None, "synchronous", "OFF")?;
    db.execute(
        "CREATE TABLE IF NOT EXISTS functions (key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID",
        [],
    )?;
    Ok(db)
}

fn file_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |metadata| metadata.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_entries_across_opens_and_misses_what_it_never_had() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache").join("functions.sqlite");
        let cache = FunctionCache::new(&path);
        assert!(cache.get(b"key").is_none());
        assert!(cache.insert(b"key", b"compiled".to_vec()));
        assert_eq!(cache.get(b"key").as_deref(), Some(&b"compiled"[..]));
        drop(cache);
        let reopened = FunctionCache::new(&path);
        assert_eq!(reopened.get(b"key").as_deref(), Some(&b"compiled"[..]));
        assert!(reopened.get(b"other").is_none());
    }

    #[test]
    fn a_file_it_cannot_open_only_misses() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the file should be: SQLite cannot open it.
        let path = dir.path().join("functions.sqlite");
        std::fs::create_dir(&path).unwrap();
        let cache = FunctionCache::new(&path);
        assert!(!cache.insert(b"key", b"compiled".to_vec()));
        assert!(cache.get(b"key").is_none());
    }
}
