//! State that outlives a call: a durable key-value store per plugin,
//! through the standard `wasi:keyvalue@0.2.0-draft` interfaces.
//!
//! Every call runs in a fresh instance, so a plugin remembers nothing on its
//! own; what it stores in a [`Bucket`] is there in the next call, and after
//! the host restarts. A bucket holds keys (strings) and values (bytes; the
//! typed methods store JSON). The host keeps each plugin's buckets apart:
//! two plugins that open `"default"` see two different buckets.
//!
//! ```
//! use corral_sdk::state::Bucket;
//! use corral_sdk::ToolError;
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Note {
//!     text: String,
//!     pinned: bool,
//! }
//!
//! fn remember(text: String) -> Result<String, ToolError> {
//!     let bucket = Bucket::open("default")?;
//!     let n = bucket.increment("notes", 1)?; // a counter: atomic, 1 on first use
//!     bucket.set(&format!("note:{n}"), &Note { text, pinned: false })?;
//!     Ok(format!("note {n} saved"))
//! }
//!
//! # fn main() -> Result<(), ToolError> {
//! assert_eq!(remember("buy milk".into())?, "note 1 saved");
//! let note: Note = Bucket::open("default")?.get("note:1")?.unwrap();
//! assert_eq!(note.text, "buy milk");
//! # Ok(())
//! # }
//! ```
//!
//! # The grant
//!
//! A plugin gets its store only when its manifest (`NAME.toml` beside
//! `NAME.wasm`) grants it, naming the buckets it may open and how much it may
//! keep:
//!
//! ```toml
//! [state]
//! buckets = ["default", "cache"]   # anything else is refused: StateError::AccessDenied
//! quota = "64 MiB"                 # its keys and values together
//! ```
//!
//! A plugin that never calls this module does not import `wasi:keyvalue` at
//! all, and needs no grant.
//!
//! # Limits
//!
//! The host refuses, with [`StateError::Other`] and a message saying which
//! limit: a key over 1 KiB, a value over 4 MiB, a write past the quota, a
//! batch ([`Bucket::get_many`], [`Bucket::set_many`], [`Bucket::delete_many`])
//! of more than 1,000 keys or 16 MiB, and more than 10,000 operations in one
//! call. [`Bucket::keys_page`] returns at most 1,000 keys a page.
//!
//! # Counters
//!
//! [`Bucket::increment`] keeps a counter as the decimal text of a `u64`
//! (`b"42"`), which is also JSON: read it with `get::<u64>`, or start it with
//! `set(key, &10u64)`. Incrementing a value that is not such text fails.
//!
//! # Writes and asks
//!
//! A write to a bucket is an effect outside the call. A tool that asks the
//! client something may be run again from the start for each answer (see
//! [`client`](crate::client#ask-before-you-act-a-call-may-be-run-again)), so
//! it writes only once every ask is answered.
//!
//! # Unit tests
//!
//! On native targets (`cargo test`) buckets live in an in-memory store per
//! thread, [`fake`], which grants every bucket until a test says otherwise
//! with [`fake::set`], and refuses what the host refuses. What one call
//! stores, the next call in the same test sees, as with the host.

#[cfg(not(target_arch = "wasm32"))]
pub mod fake;
mod transport;

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::keyvalue::wasi::keyvalue::store as wit;
use crate::result::ToolError;

/// Why a state operation failed.
///
/// It converts into [`ToolError`], so `?` in a tool returning
/// `Result<_, ToolError>` ends the call with a message the model can read.
///
/// ```
/// use corral_sdk::state::{Bucket, StateError, fake};
///
/// fake::set(fake::FakeStore::new().buckets(["default"]));
/// let error = Bucket::open("cache").unwrap_err();
/// assert!(matches!(error, StateError::AccessDenied { .. }));
/// assert_eq!(
///     corral_sdk::ToolError::from(error).message(),
///     "the plugin may not open bucket `cache`: its manifest's [state] buckets do not name it",
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateError {
    /// The host has no bucket of this name.
    NoSuchStore {
        /// The bucket.
        bucket: String,
    },
    /// The plugin may not use this bucket: its manifest's `[state] buckets`
    /// do not name it (or the manifest grants no state at all).
    AccessDenied {
        /// The bucket.
        bucket: String,
    },
    /// The host refused or failed the operation: a limit (the size of a key,
    /// a value or a batch, the quota, operations per call), a counter that
    /// is not a number, or storage that failed. The host's message says
    /// which.
    Other(String),
    /// A stored value is not JSON of the type asked for.
    Decode {
        /// The key of the value.
        key: String,
        /// What does not fit.
        message: String,
    },
    /// A value cannot be written as JSON (e.g. a map whose keys are not
    /// strings).
    Encode {
        /// The key it was to be stored under.
        key: String,
        /// Why.
        message: String,
    },
}

impl StateError {
    fn from_wit(error: wit::Error, bucket: &str) -> Self {
        match error {
            wit::Error::NoSuchStore => StateError::NoSuchStore {
                bucket: bucket.into(),
            },
            wit::Error::AccessDenied => StateError::AccessDenied {
                bucket: bucket.into(),
            },
            wit::Error::Other(message) => StateError::Other(message),
        }
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::NoSuchStore { bucket } => write!(f, "there is no bucket `{bucket}`"),
            StateError::AccessDenied { bucket } => write!(
                f,
                "the plugin may not open bucket `{bucket}`: its manifest's [state] buckets do \
                 not name it"
            ),
            StateError::Other(message) => f.write_str(message),
            StateError::Decode { key, message } => {
                write!(
                    f,
                    "the value of `{key}` is not the JSON expected: {message}"
                )
            }
            StateError::Encode { key, message } => {
                write!(
                    f,
                    "the value for `{key}` cannot be written as JSON: {message}"
                )
            }
        }
    }
}

impl std::error::Error for StateError {}

impl From<StateError> for ToolError {
    fn from(error: StateError) -> Self {
        ToolError::new(error)
    }
}

/// One page of a bucket's keys, from [`Bucket::keys_page`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeysPage {
    /// The keys of this page, in no particular order.
    pub keys: Vec<String>,
    /// Where the next page starts, to pass to [`Bucket::keys_page`]; `None`
    /// on the last page.
    pub cursor: Option<u64>,
}

/// A bucket of the plugin's store: keys (strings) and their values.
///
/// Values are bytes; [`get`](Bucket::get) and [`set`](Bucket::set) store
/// any `serde` type as JSON, [`get_bytes`](Bucket::get_bytes) and
/// [`set_bytes`](Bucket::set_bytes) the bytes as they are.
///
/// ```
/// use corral_sdk::state::Bucket;
///
/// let bucket = Bucket::open("default")?;
/// bucket.set("greeting", &"hello")?;
/// assert_eq!(bucket.get::<String>("greeting")?.as_deref(), Some("hello"));
/// assert_eq!(bucket.get_bytes("greeting")?, Some(b"\"hello\"".to_vec()));
/// assert!(bucket.exists("greeting")?);
/// bucket.delete("greeting")?;
/// assert_eq!(bucket.get::<String>("greeting")?, None);
/// # Ok::<(), corral_sdk::state::StateError>(())
/// ```
#[derive(Debug)]
pub struct Bucket {
    name: String,
    handle: transport::Handle,
}

impl Bucket {
    /// Opens the bucket `name`, which the plugin's manifest must grant
    /// (`[state] buckets`); otherwise [`StateError::AccessDenied`].
    pub fn open(name: &str) -> Result<Bucket, StateError> {
        let handle = transport::open(name).map_err(|error| StateError::from_wit(error, name))?;
        Ok(Bucket {
            name: name.into(),
            handle,
        })
    }

    /// The bucket's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn fail(&self, error: wit::Error) -> StateError {
        StateError::from_wit(error, &self.name)
    }

    /// The value of `key` read as JSON into `T`, or `None` if the key is
    /// not set. A value that is not JSON of type `T` is
    /// [`StateError::Decode`].
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StateError> {
        self.get_bytes(key)?
            .map(|bytes| decode(key, &bytes))
            .transpose()
    }

    /// Stores `value` as JSON under `key`, replacing what was there.
    pub fn set<T: Serialize + ?Sized>(&self, key: &str, value: &T) -> Result<(), StateError> {
        self.set_bytes(key, &encode(key, value)?)
    }

    /// The value of `key` as stored, or `None` if the key is not set.
    pub fn get_bytes(&self, key: &str) -> Result<Option<Vec<u8>>, StateError> {
        transport::get(&self.handle, key).map_err(|error| self.fail(error))
    }

    /// Stores `value` under `key` as it is, replacing what was there.
    pub fn set_bytes(&self, key: &str, value: &[u8]) -> Result<(), StateError> {
        transport::set(&self.handle, key, value).map_err(|error| self.fail(error))
    }

    /// Removes `key` and its value; nothing happens if it is not set.
    pub fn delete(&self, key: &str) -> Result<(), StateError> {
        transport::delete(&self.handle, key).map_err(|error| self.fail(error))
    }

    /// True if `key` is set.
    pub fn exists(&self, key: &str) -> Result<bool, StateError> {
        transport::exists(&self.handle, key).map_err(|error| self.fail(error))
    }

    /// Adds `delta` to the counter `key`, atomically, and returns the new
    /// total; a key that is not set starts at 0.
    ///
    /// The counter is stored as the decimal text of a `u64` (`b"42"`), so
    /// `get::<u64>` reads it. A value that is not such text, or a total past
    /// `u64::MAX`, is [`StateError::Other`].
    ///
    /// ```
    /// use corral_sdk::state::Bucket;
    ///
    /// let bucket = Bucket::open("default")?;
    /// assert_eq!(bucket.increment("visits", 1)?, 1);
    /// assert_eq!(bucket.increment("visits", 41)?, 42);
    /// assert_eq!(bucket.get::<u64>("visits")?, Some(42));
    /// assert_eq!(bucket.get_bytes("visits")?, Some(b"42".to_vec()));
    /// # Ok::<(), corral_sdk::state::StateError>(())
    /// ```
    pub fn increment(&self, key: &str, delta: u64) -> Result<u64, StateError> {
        transport::increment(&self.handle, key, delta).map_err(|error| self.fail(error))
    }

    /// Every key of the bucket, in no particular order: follows
    /// [`keys_page`](Bucket::keys_page) from the first page to the last, one
    /// operation per page.
    ///
    /// ```
    /// use corral_sdk::state::Bucket;
    ///
    /// let bucket = Bucket::open("default")?;
    /// bucket.set("a", &1)?;
    /// bucket.set("b", &2)?;
    /// let mut keys = bucket.keys()?;
    /// keys.sort();
    /// assert_eq!(keys, ["a", "b"]);
    /// # Ok::<(), corral_sdk::state::StateError>(())
    /// ```
    pub fn keys(&self) -> Result<Vec<String>, StateError> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.keys_page(cursor)?;
            keys.extend(page.keys);
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(keys),
            }
        }
    }

    /// One page of the bucket's keys: the first page for `None`, else the
    /// page at a cursor a previous page returned.
    ///
    /// ```
    /// use corral_sdk::state::Bucket;
    ///
    /// let bucket = Bucket::open("default")?;
    /// let mut cursor = None;
    /// loop {
    ///     let page = bucket.keys_page(cursor)?;
    ///     for key in &page.keys {
    ///         println!("{key}");
    ///     }
    ///     cursor = page.cursor;
    ///     if cursor.is_none() {
    ///         break;
    ///     }
    /// }
    /// # Ok::<(), corral_sdk::state::StateError>(())
    /// ```
    pub fn keys_page(&self, cursor: Option<u64>) -> Result<KeysPage, StateError> {
        transport::list_keys(&self.handle, cursor).map_err(|error| self.fail(error))
    }

    /// The values of `keys` read as JSON into `T`, in the order of `keys`:
    /// `None` for a key that is not set. One operation for them all.
    ///
    /// ```
    /// use corral_sdk::state::Bucket;
    ///
    /// let bucket = Bucket::open("default")?;
    /// bucket.set_many([("x", 1), ("y", 2)])?;
    /// assert_eq!(bucket.get_many::<i32>(["x", "nope", "y"])?, [Some(1), None, Some(2)]);
    /// # Ok::<(), corral_sdk::state::StateError>(())
    /// ```
    pub fn get_many<T: DeserializeOwned>(
        &self,
        keys: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<Vec<Option<T>>, StateError> {
        let keys: Vec<String> = keys.into_iter().map(|key| key.as_ref().into()).collect();
        let values = self.get_many_of(&keys)?;
        keys.iter()
            .zip(values)
            .map(|(key, value)| value.map(|bytes| decode(key, &bytes)).transpose())
            .collect()
    }

    /// The values of `keys` as stored, in the order of `keys`: `None` for a
    /// key that is not set. One operation for them all.
    pub fn get_many_bytes(
        &self,
        keys: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<Vec<Option<Vec<u8>>>, StateError> {
        let keys: Vec<String> = keys.into_iter().map(|key| key.as_ref().into()).collect();
        self.get_many_of(&keys)
    }

    fn get_many_of(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>, StateError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let found = transport::get_many(&self.handle, keys).map_err(|error| self.fail(error))?;
        Ok(in_key_order(keys, found))
    }

    /// Stores each value as JSON under its key. One operation for them all,
    /// and not atomic: when it fails, some of the values may be stored.
    pub fn set_many<K: AsRef<str>, T: Serialize>(
        &self,
        entries: impl IntoIterator<Item = (K, T)>,
    ) -> Result<(), StateError> {
        let entries = entries
            .into_iter()
            .map(|(key, value)| {
                let key = key.as_ref();
                Ok((key.to_owned(), encode(key, &value)?))
            })
            .collect::<Result<Vec<_>, StateError>>()?;
        self.set_many_of(entries)
    }

    /// Stores each value under its key as it is. One operation for them
    /// all, and not atomic: when it fails, some of the values may be stored.
    pub fn set_many_bytes<K: AsRef<str>, V: AsRef<[u8]>>(
        &self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Result<(), StateError> {
        let entries = entries
            .into_iter()
            .map(|(key, value)| (key.as_ref().to_owned(), value.as_ref().to_vec()))
            .collect();
        self.set_many_of(entries)
    }

    fn set_many_of(&self, entries: Vec<(String, Vec<u8>)>) -> Result<(), StateError> {
        if entries.is_empty() {
            return Ok(());
        }
        transport::set_many(&self.handle, &entries).map_err(|error| self.fail(error))
    }

    /// Removes each key and its value, skipping keys that are not set. One
    /// operation for them all, and not atomic: when it fails, some of the
    /// keys may be removed.
    pub fn delete_many(
        &self,
        keys: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<(), StateError> {
        let keys: Vec<String> = keys.into_iter().map(|key| key.as_ref().into()).collect();
        if keys.is_empty() {
            return Ok(());
        }
        transport::delete_many(&self.handle, &keys).map_err(|error| self.fail(error))
    }
}

/// A `get-many` answer: per key, the key and its value, or nothing.
pub(crate) type Found = Vec<Option<(String, Vec<u8>)>>;

/// The values of a `get-many` answer, one per key in the order of `keys`.
/// The interface answers one entry per key, in order, and each entry names
/// its key: check rather than trust the order.
pub(crate) fn in_key_order(keys: &[String], found: Found) -> Vec<Option<Vec<u8>>> {
    let in_order = found.len() == keys.len()
        && found
            .iter()
            .zip(keys)
            .all(|(entry, key)| entry.as_ref().is_none_or(|(found, _)| found == key));
    if in_order {
        return found
            .into_iter()
            .map(|entry| entry.map(|(_, value)| value))
            .collect();
    }
    let by_key: std::collections::HashMap<&str, &[u8]> = found
        .iter()
        .flatten()
        .map(|(key, value)| (key.as_str(), value.as_slice()))
        .collect();
    keys.iter()
        .map(|key| by_key.get(key.as_str()).map(|value| value.to_vec()))
        .collect()
}

/// Reads a stored value as JSON.
fn decode<T: DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<T, StateError> {
    serde_json::from_slice(bytes).map_err(|error| StateError::Decode {
        key: key.into(),
        message: error.to_string(),
    })
}

/// Writes a value as JSON.
fn encode<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<Vec<u8>, StateError> {
    serde_json::to_vec(value).map_err(|error| StateError::Encode {
        key: key.into(),
        message: error.to_string(),
    })
}

/// Starts a new call: the fake counts operations per call, as the host does.
/// Called by [`Tool::call`](crate::Tool::call).
pub(crate) fn start_call() {
    #[cfg(not(target_arch = "wasm32"))]
    fake::start_call();
}
