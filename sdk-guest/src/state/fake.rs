//! An in-memory store for unit tests (native targets only): the buckets a
//! test grants, kept per thread, refusing what Corral's host refuses.
//!
//! Without [`set`], every bucket opens and starts empty, so a tool's tests
//! need no setup. Set a store to grant only some buckets, to set a quota, to
//! start with values, or to make every operation fail:
//!
//! ```
//! use corral_sdk::state::{Bucket, StateError, fake};
//!
//! fake::set(
//!     fake::FakeStore::new()
//!         .buckets(["default"])
//!         .quota(1024)
//!         .entry("default", "visits", "41"),
//! );
//! let bucket = Bucket::open("default")?;
//! assert_eq!(bucket.increment("visits", 1)?, 42);
//! assert_eq!(fake::contents("default")["visits"], b"42");
//! assert!(matches!(Bucket::open("cache"), Err(StateError::AccessDenied { .. })));
//! assert!(matches!(bucket.set_bytes("big", &[0; 2048]), Err(StateError::Other(_))));
//! # Ok::<(), StateError>(())
//! ```
//!
//! The store is per thread (Rust runs each test in its own thread) and keeps
//! what tools write from one [`Tool::call`](crate::Tool::call) to the next,
//! as the host does; [`set`] and [`clear`] replace it. Like the host, it
//! refuses a key over 1 KiB, a value over 4 MiB, a write past the quota, a
//! batch of more than 1,000 keys or 16 MiB, and more than 10,000 operations
//! in one call (each function of the interface counts one; the count starts
//! again with every `Tool::call`); it returns at most 1,000 keys a page, in
//! key order. Its messages say the same things as the host's, in its own
//! words.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use super::{Found, KeysPage};
use crate::keyvalue::wasi::keyvalue::store as wit;

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;
const MAX_KEY: usize = KIB;
const MAX_VALUE: usize = 4 * MIB;
const MAX_PAGE: usize = 1_000;
const MAX_BATCH_KEYS: usize = 1_000;
const MAX_BATCH_BYTES: usize = 16 * MIB;
const MAX_OPERATIONS: u64 = 10_000;

/// A store for tests: what it grants, and what it holds at first.
#[derive(Debug, Clone, Default)]
pub struct FakeStore {
    /// The buckets it grants; `None` grants every bucket.
    buckets: Option<BTreeSet<String>>,
    quota: Option<usize>,
    failure: Option<String>,
    data: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
}

impl FakeStore {
    /// An empty store that grants every bucket, without a quota.
    pub fn new() -> Self {
        Self::default()
    }

    /// Grants only these buckets, as a manifest's `[state] buckets` does:
    /// opening another fails with
    /// [`StateError::AccessDenied`](super::StateError::AccessDenied).
    pub fn buckets(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.buckets = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the quota, as a manifest's `[state] quota` does: the bytes of
    /// every key and value, in every bucket, together.
    pub fn quota(mut self, bytes: usize) -> Self {
        self.quota = Some(bytes);
        self
    }

    /// Starts with `value` stored under `key` in `bucket`, as bytes (JSON
    /// for the typed methods, e.g. `"\"text\""` or `"42"`).
    pub fn entry(
        mut self,
        bucket: impl Into<String>,
        key: impl Into<String>,
        value: impl Into<Vec<u8>>,
    ) -> Self {
        self.data
            .entry(bucket.into())
            .or_default()
            .insert(key.into(), value.into());
        self
    }

    /// Makes every operation, opening a bucket included, fail with
    /// [`StateError::Other`](super::StateError::Other) and `message`, as
    /// when the host's storage fails.
    pub fn fail(mut self, message: impl Into<String>) -> Self {
        self.failure = Some(message.into());
        self
    }

    fn usage(&self) -> usize {
        self.data
            .values()
            .flatten()
            .map(|(key, value)| key.len() + value.len())
            .sum()
    }
}

#[derive(Default)]
struct State {
    store: FakeStore,
    operations: u64,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Installs `store` for this thread, replacing what it held.
pub fn set(store: FakeStore) {
    STATE.with(|state| {
        *state.borrow_mut() = State {
            store,
            operations: 0,
        }
    });
}

/// Goes back to an empty store that grants every bucket.
pub fn clear() {
    set(FakeStore::new());
}

/// What `bucket` holds now, by key.
pub fn contents(bucket: &str) -> BTreeMap<String, Vec<u8>> {
    STATE.with(|state| {
        state
            .borrow()
            .store
            .data
            .get(bucket)
            .cloned()
            .unwrap_or_default()
    })
}

/// The operations of the current call so far: since the last
/// [`Tool::call`](crate::Tool::call) began, or since [`set`].
pub fn operations() -> u64 {
    STATE.with(|state| state.borrow().operations)
}

pub(super) fn start_call() {
    STATE.with(|state| state.borrow_mut().operations = 0);
}

/// An open bucket of the fake store: its name.
#[derive(Debug)]
pub(in crate::state) struct Handle {
    bucket: String,
}

fn other(message: impl Into<String>) -> wit::Error {
    wit::Error::Other(message.into())
}

/// Runs one operation on the store, counted, unless the store fails them all.
fn operation<T>(
    run: impl FnOnce(&mut FakeStore) -> Result<T, wit::Error>,
) -> Result<T, wit::Error> {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        if let Some(message) = &state.store.failure {
            return Err(other(message.clone()));
        }
        if state.operations >= MAX_OPERATIONS {
            return Err(other(format!(
                "more than {MAX_OPERATIONS} state operations in one call"
            )));
        }
        state.operations += 1;
        run(&mut state.store)
    })
}

fn check_key(key: &str) -> Result<(), wit::Error> {
    if key.len() > MAX_KEY {
        return Err(other(format!(
            "a key of {} bytes is longer than the limit of 1 KiB",
            key.len()
        )));
    }
    Ok(())
}

fn check_value(key: &str, value: &[u8]) -> Result<(), wit::Error> {
    check_key(key)?;
    if value.len() > MAX_VALUE {
        return Err(other(format!(
            "the value of `{key}` is {} bytes, more than the limit of 4 MiB",
            value.len()
        )));
    }
    Ok(())
}

fn check_batch(keys: usize, bytes: usize) -> Result<(), wit::Error> {
    if keys > MAX_BATCH_KEYS {
        return Err(other(format!(
            "a batch of {keys} keys is more than the limit of {MAX_BATCH_KEYS}"
        )));
    }
    if bytes > MAX_BATCH_BYTES {
        return Err(other(format!(
            "a batch of {bytes} bytes is more than the limit of 16 MiB"
        )));
    }
    Ok(())
}

/// Stores `value`, within the quota.
fn put(store: &mut FakeStore, bucket: &str, key: &str, value: Vec<u8>) -> Result<(), wit::Error> {
    check_value(key, &value)?;
    if let Some(quota) = store.quota {
        let before = store.usage();
        let old = store
            .data
            .get(bucket)
            .and_then(|entries| entries.get(key))
            .map_or(0, |old| key.len() + old.len());
        let after = before - old + key.len() + value.len();
        if after > quota && after > before {
            return Err(other(format!(
                "storing `{key}` would take the plugin's state to {after} bytes, more than its \
                 quota of {quota} bytes"
            )));
        }
    }
    store
        .data
        .entry(bucket.into())
        .or_default()
        .insert(key.into(), value);
    Ok(())
}

/// The interface's functions, as the host's imports are called.
pub(super) mod interface {
    use super::*;

    fn entries<'a>(store: &'a FakeStore, bucket: &Handle) -> Option<&'a BTreeMap<String, Vec<u8>>> {
        store.data.get(&bucket.bucket)
    }

    pub(in crate::state) fn open(name: &str) -> Result<Handle, wit::Error> {
        operation(|store| match &store.buckets {
            Some(granted) if !granted.contains(name) => Err(wit::Error::AccessDenied),
            _ => Ok(Handle {
                bucket: name.into(),
            }),
        })
    }

    pub(in crate::state) fn get(bucket: &Handle, key: &str) -> Result<Option<Vec<u8>>, wit::Error> {
        operation(|store| {
            check_key(key)?;
            Ok(entries(store, bucket).and_then(|entries| entries.get(key).cloned()))
        })
    }

    pub(in crate::state) fn set(
        bucket: &Handle,
        key: &str,
        value: &[u8],
    ) -> Result<(), wit::Error> {
        operation(|store| put(store, &bucket.bucket, key, value.to_vec()))
    }

    pub(in crate::state) fn delete(bucket: &Handle, key: &str) -> Result<(), wit::Error> {
        operation(|store| {
            check_key(key)?;
            if let Some(entries) = store.data.get_mut(&bucket.bucket) {
                entries.remove(key);
            }
            Ok(())
        })
    }

    pub(in crate::state) fn exists(bucket: &Handle, key: &str) -> Result<bool, wit::Error> {
        operation(|store| {
            check_key(key)?;
            Ok(entries(store, bucket).is_some_and(|entries| entries.contains_key(key)))
        })
    }

    pub(in crate::state) fn increment(
        bucket: &Handle,
        key: &str,
        delta: u64,
    ) -> Result<u64, wit::Error> {
        operation(|store| {
            check_key(key)?;
            let current = match entries(store, bucket).and_then(|entries| entries.get(key)) {
                None => 0,
                Some(value) => parse_counter(value).ok_or_else(|| {
                    other(format!(
                        "`{key}` is not a counter: its value is not the decimal text of a \
                         64-bit unsigned integer"
                    ))
                })?,
            };
            let total = current.checked_add(delta).ok_or_else(|| {
                other(format!(
                    "incrementing `{key}` ({current}) by {delta} overflows a 64-bit unsigned integer"
                ))
            })?;
            put(store, &bucket.bucket, key, total.to_string().into_bytes())?;
            Ok(total)
        })
    }

    /// A counter's value: decimal ASCII digits that fit a `u64`.
    fn parse_counter(value: &[u8]) -> Option<u64> {
        if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(value).ok()?.parse().ok()
    }

    pub(in crate::state) fn list_keys(
        bucket: &Handle,
        cursor: Option<u64>,
    ) -> Result<KeysPage, wit::Error> {
        operation(|store| {
            let start = usize::try_from(cursor.unwrap_or(0)).unwrap_or(usize::MAX);
            let all = entries(store, bucket);
            let total = all.map_or(0, BTreeMap::len);
            let keys: Vec<String> = all
                .into_iter()
                .flat_map(BTreeMap::keys)
                .skip(start)
                .take(MAX_PAGE)
                .cloned()
                .collect();
            let end = start.saturating_add(keys.len());
            Ok(KeysPage {
                keys,
                cursor: (end < total).then_some(end as u64),
            })
        })
    }

    pub(in crate::state) fn get_many(
        bucket: &Handle,
        keys: &[String],
    ) -> Result<Found, wit::Error> {
        operation(|store| {
            check_batch(keys.len(), 0)?;
            keys.iter().try_for_each(|key| check_key(key))?;
            let found: Found = keys
                .iter()
                .map(|key| {
                    entries(store, bucket)
                        .and_then(|entries| entries.get(key))
                        .map(|value| (key.clone(), value.clone()))
                })
                .collect();
            let bytes = found
                .iter()
                .flatten()
                .map(|(key, value)| key.len() + value.len())
                .sum();
            check_batch(keys.len(), bytes)?;
            Ok(found)
        })
    }

    pub(in crate::state) fn set_many(
        bucket: &Handle,
        entries: &[(String, Vec<u8>)],
    ) -> Result<(), wit::Error> {
        operation(|store| {
            let bytes = entries
                .iter()
                .map(|(key, value)| key.len() + value.len())
                .sum();
            check_batch(entries.len(), bytes)?;
            // Not atomic, as the interface allows: what fits is stored, in order.
            entries
                .iter()
                .try_for_each(|(key, value)| put(store, &bucket.bucket, key, value.clone()))
        })
    }

    pub(in crate::state) fn delete_many(
        bucket: &Handle,
        keys: &[String],
    ) -> Result<(), wit::Error> {
        operation(|store| {
            check_batch(keys.len(), 0)?;
            keys.iter().try_for_each(|key| check_key(key))?;
            if let Some(entries) = store.data.get_mut(&bucket.bucket) {
                for key in keys {
                    entries.remove(key);
                }
            }
            Ok(())
        })
    }
}
