//! Plugins that remember: a durable key-value store per plugin, served to
//! guests as `wasi:keyvalue@0.2.0-draft` (`store`, `atomics`, `batch`).
//!
//! A plugin reaches its store only with a `[state]` grant, and only the
//! buckets the grant names. Every entry lives in the plugin's own namespace,
//! keyed by its name (its file stem), which the host chooses: two plugins
//! that open `default` never see each other's keys, and a plugin's data
//! outlives a reload or a new version of its file.
//!
//! A [`Backend`] keeps the entries (SQLite, embedded, in [`sqlite`]; Redis,
//! shared by replicas, in [`redis`]); the
//! host side of the interfaces ([`keyvalue`]) checks every bound before the
//! backend is asked, and the backend measures the quota itself, in the same
//! transaction as the write: nothing the guest says about sizes is trusted.

#[cfg(test)]
mod contract;
pub mod keyvalue;
pub mod redis;
pub mod sqlite;

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// The most keys one `list-keys` page holds.
pub const MAX_PAGE_KEYS: usize = 1000;
/// The most keys one `get-many`, `set-many` or `delete-many` names.
pub const MAX_BATCH_KEYS: usize = 1000;
/// The most bytes of keys and values one batch call moves.
pub const MAX_BATCH_BYTES: u64 = 16 << 20;
/// The most store operations one call may make (a batch counts one per key).
pub const MAX_OPS_PER_CALL: u64 = 10_000;

/// One plugin's bucket: the plugin (chosen by the host, never by the guest)
/// and the bucket's name (one its grant lists).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    pub plugin: Arc<str>,
    pub bucket: String,
}

/// What a plugin keeps, all buckets together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub keys: u64,
    /// Bytes of keys and values.
    pub bytes: u64,
}

/// One stored entry, as `corral state list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub bucket: String,
    pub key: String,
    /// The value's first bytes (as many as the listing asked for).
    pub value: Vec<u8>,
    /// The value's length.
    pub size: u64,
}

/// Why a store operation failed. Each message is one a plugin can show its
/// user as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// The write would take the plugin past its quota; nothing was written.
    Quota { quota: u64, used: u64, needed: u64 },
    /// `increment` on a value that is not a counter (a u64 in decimal).
    NotACounter { key: String },
    /// `increment` past u64::MAX; the counter is unchanged.
    Overflow { key: String },
    /// The values a batch read would return pass its budget.
    TooLarge { budget: u64 },
    /// The backend failed (I/O, a lost connection); named by `backend`.
    Backend { backend: String, reason: String },
    /// Run [`at_once`], the operation would have waited (for a connection
    /// another call holds, or a write lock another process holds); nothing
    /// was done. The host side then runs it on a blocking thread.
    WouldWait,
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::Quota {
                quota,
                used,
                needed,
            } => write!(
                f,
                "state quota of {} exceeded: {} stored, this write needs {} more; nothing was written (raise [state] quota in the plugin's manifest, or delete keys)",
                crate::units::human_bytes(*quota as usize),
                crate::units::human_bytes(*used as usize),
                crate::units::human_bytes(*needed as usize),
            ),
            StateError::NotACounter { key } => write!(
                f,
                "`{}` holds a value that is not a counter (a u64 in decimal digits): increment refused",
                key.escape_debug()
            ),
            StateError::Overflow { key } => write!(
                f,
                "incrementing `{}` would pass 18446744073709551615: refused, the counter is unchanged",
                key.escape_debug()
            ),
            StateError::TooLarge { budget } => write!(
                f,
                "the values asked for take more than {} together, the most one get-many returns: ask for fewer keys at a time",
                crate::units::human_bytes(*budget as usize)
            ),
            StateError::Backend { backend, reason } => {
                write!(f, "the state store ({backend}) failed: {reason}")
            }
            StateError::WouldWait => write!(f, "the state store is busy"),
        }
    }
}

impl std::error::Error for StateError {}

/// Where entries are kept. Every method is blocking and bounded by its
/// arguments, which the host side has already checked against the limits
/// above. The host side calls it on a blocking thread, or first on the
/// async thread [`at_once`] when the backend [`is_quick`](Backend::is_quick).
pub trait Backend: Send + Sync + 'static {
    /// How the backend is named in errors and logs (`sqlite:/path/state.db`).
    fn describe(&self) -> String;

    /// Which kind of store it is (`sqlite`, `redis`): a metric's label, a
    /// span's `db.system.name`.
    fn kind(&self) -> &'static str;

    /// Whether the store answers (for a readiness probe): a round trip
    /// that reads nothing of anyone's.
    fn ping(&self) -> Result<(), StateError>;

    /// Whether an operation that need not wait takes microseconds (a local
    /// file): worth trying [`at_once`] before handing it to a blocking
    /// thread, whose wake-up costs more than the operation.
    fn is_quick(&self) -> bool {
        false
    }

    /// The values of `keys`, `None` where absent, in order; an error
    /// (`TooLarge`) as soon as the values read pass `budget` bytes, so that
    /// a batch never holds more than that in host memory.
    fn get_many(
        &self,
        ns: &Namespace,
        keys: &[String],
        budget: u64,
    ) -> Result<Vec<Option<Vec<u8>>>, StateError>;

    /// Writes every entry, or none when the plugin's entries would then
    /// take more than `quota` bytes (keys and values, all buckets).
    fn set_many(
        &self,
        ns: &Namespace,
        entries: &[(String, Vec<u8>)],
        quota: u64,
    ) -> Result<(), StateError>;

    /// Deletes the keys that exist.
    fn delete_many(&self, ns: &Namespace, keys: &[String]) -> Result<(), StateError>;

    /// Whether `key` exists.
    fn exists(&self, ns: &Namespace, key: &str) -> Result<bool, StateError>;

    /// At most `limit` keys after `cursor`, and the cursor of the next page
    /// (`None` at the end). A key written during a listing is listed at most
    /// once, and a key present throughout is listed exactly once.
    fn list_keys(
        &self,
        ns: &Namespace,
        cursor: Option<u64>,
        limit: usize,
    ) -> Result<(Vec<String>, Option<u64>), StateError>;

    /// Adds `delta` to the counter at `key` (0 when absent) atomically, within
    /// `quota`, and returns the new value.
    fn increment(
        &self,
        ns: &Namespace,
        key: &str,
        delta: u64,
        quota: u64,
    ) -> Result<u64, StateError>;

    /// What `plugin` keeps.
    fn usage(&self, plugin: &str) -> Result<Usage, StateError>;

    /// `plugin`'s first `limit` entries, by bucket and then in the order
    /// `list-keys` gives, each with at most `preview` bytes of its value:
    /// for `corral state list`, which shows no more.
    fn entries(&self, plugin: &str, limit: usize, preview: usize)
    -> Result<Vec<Entry>, StateError>;

    /// The plugins that keep anything, sorted.
    fn plugins(&self) -> Result<Vec<String>, StateError>;

    /// Deletes everything `plugin` keeps; returns how many entries.
    fn clear(&self, plugin: &str) -> Result<u64, StateError>;
}

/// The server's store, shared by every call (a [`Backend`] behind an `Arc`).
#[derive(Clone)]
pub struct StateStore(pub Arc<dyn Backend>);

impl fmt::Debug for StateStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateStore({})", self.0.describe())
    }
}

thread_local! {
    static AT_ONCE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` with the backend told not to wait for anything: an
/// operation that would wait fails with [`StateError::WouldWait`] having
/// done nothing, instead of blocking the thread.
pub fn at_once<T>(work: impl FnOnce() -> T) -> T {
    /// Clears the flag however `work` ends.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            AT_ONCE.set(false);
        }
    }
    AT_ONCE.set(true);
    let _reset = Reset;
    work()
}

/// Whether the backend may wait here (not inside [`at_once`]).
fn may_wait() -> bool {
    !AT_ONCE.get()
}

/// The bytes an entry counts against its plugin's quota.
pub fn entry_bytes(key: &str, value: &[u8]) -> u64 {
    (key.len() + value.len()) as u64
}
