//! Where operations go: the host's `wasi:keyvalue` imports in a component,
//! the in-memory [`fake`](super::fake) store on native targets (unit tests),
//! where there is no host. Both sides speak the interface's own types.

#[cfg(target_arch = "wasm32")]
mod imp {
    use crate::keyvalue::wasi::keyvalue::store as wit;
    use crate::keyvalue::wasi::keyvalue::{atomics, batch};
    use crate::state::{Found, KeysPage};

    pub(in crate::state) type Handle = wit::Bucket;

    pub(in crate::state) fn open(name: &str) -> Result<Handle, wit::Error> {
        wit::open(name)
    }

    pub(in crate::state) fn get(bucket: &Handle, key: &str) -> Result<Option<Vec<u8>>, wit::Error> {
        bucket.get(key)
    }

    pub(in crate::state) fn set(
        bucket: &Handle,
        key: &str,
        value: &[u8],
    ) -> Result<(), wit::Error> {
        bucket.set(key, value)
    }

    pub(in crate::state) fn delete(bucket: &Handle, key: &str) -> Result<(), wit::Error> {
        bucket.delete(key)
    }

    pub(in crate::state) fn exists(bucket: &Handle, key: &str) -> Result<bool, wit::Error> {
        bucket.exists(key)
    }

    pub(in crate::state) fn increment(
        bucket: &Handle,
        key: &str,
        delta: u64,
    ) -> Result<u64, wit::Error> {
        atomics::increment(bucket, key, delta)
    }

    pub(in crate::state) fn list_keys(
        bucket: &Handle,
        cursor: Option<u64>,
    ) -> Result<KeysPage, wit::Error> {
        let page = bucket.list_keys(cursor)?;
        Ok(KeysPage {
            keys: page.keys,
            cursor: page.cursor,
        })
    }

    pub(in crate::state) fn get_many(
        bucket: &Handle,
        keys: &[String],
    ) -> Result<Found, wit::Error> {
        batch::get_many(bucket, keys)
    }

    pub(in crate::state) fn set_many(
        bucket: &Handle,
        entries: &[(String, Vec<u8>)],
    ) -> Result<(), wit::Error> {
        batch::set_many(bucket, entries)
    }

    pub(in crate::state) fn delete_many(
        bucket: &Handle,
        keys: &[String],
    ) -> Result<(), wit::Error> {
        batch::delete_many(bucket, keys)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub(in crate::state) use crate::state::fake::Handle;
    pub(in crate::state) use crate::state::fake::interface::{
        delete, delete_many, exists, get, get_many, increment, list_keys, open, set, set_many,
    };
}

pub(super) use imp::*;
