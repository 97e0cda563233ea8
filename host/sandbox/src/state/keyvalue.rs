//! The host side of `wasi:keyvalue@0.2.0-draft` for one call: every bound
//! is checked here, before the backend is asked. A backend call runs on a
//! blocking thread, inside the call's time limit (the call's future awaits
//! it), unless the backend is quick and can do it at once: waking a
//! blocking thread costs more than a SQLite read or write from the page
//! cache (docs/benchmarks.md, "State").

use std::sync::Arc;

use tracing::Instrument as _;

use wasmtime::component::{HasData, Resource, ResourceTable};

use super::{
    Backend, MAX_BATCH_BYTES, MAX_BATCH_KEYS, MAX_KEY_BYTES, MAX_OPS_PER_CALL, MAX_PAGE_KEYS,
    Namespace, StateError, at_once,
};
use crate::manifest::StateGrant;
use crate::units::human_bytes;
use generated::wasi::keyvalue::{atomics, batch, store};

/// The bindings of `wasi:keyvalue@0.2.0-draft` (`wit/keyvalue/`), whose
/// host side this module is.
mod generated {
    wasmtime::component::bindgen!({
        world: "wasi:keyvalue/imports",
        path: "../../wit/keyvalue",
        imports: { default: async },
        with: { "wasi:keyvalue/store.bucket": super::Bucket },
    });
}

/// Adds `wasi:keyvalue` to `linker`, served from each call's
/// [`KeyValueView`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    view: fn(&mut T) -> KeyValueView<'_>,
) -> wasmtime::Result<()> {
    generated::Imports::add_to_linker::<T, KeyValue>(linker, view)
}

/// An open bucket: a name the plugin's grant lists.
pub struct Bucket {
    name: String,
}

/// What one call may do with its plugin's store, and what it has done.
pub struct StateAccess {
    /// `None`: this server keeps no state (opening any bucket says so).
    backend: Option<Arc<dyn Backend>>,
    plugin: Arc<str>,
    grant: StateGrant,
    ops: u64,
}

impl StateAccess {
    pub fn new(backend: Option<Arc<dyn Backend>>, plugin: Arc<str>, grant: StateGrant) -> Self {
        StateAccess {
            backend,
            plugin,
            grant,
            ops: 0,
        }
    }
}

/// The part of a call's state that `wasi:keyvalue` uses.
pub struct KeyValueView<'a> {
    pub table: &'a mut ResourceTable,
    /// `None` for a plugin without a `[state]` grant (the import gate keeps
    /// such a plugin from loading; this is the second lock).
    pub access: Option<&'a mut StateAccess>,
}

/// Ties [`KeyValueView`] to the linker.
pub struct KeyValue;

impl HasData for KeyValue {
    type Data<'a> = KeyValueView<'a>;
}

type Error = store::Error;

fn other(message: impl ToString) -> Error {
    Error::Other(message.to_string())
}

impl From<StateError> for Error {
    fn from(err: StateError) -> Error {
        other(err)
    }
}

fn check_key(key: &str) -> Result<(), Error> {
    if key.len() > MAX_KEY_BYTES {
        return Err(other(format!(
            "a key of {} bytes is longer than {MAX_KEY_BYTES} bytes, the longest a key may be",
            key.len()
        )));
    }
    Ok(())
}

impl KeyValueView<'_> {
    fn access(&mut self) -> Result<&mut StateAccess, Error> {
        self.access.as_deref_mut().ok_or(Error::AccessDenied)
    }

    /// Counts `count` operations against the call's budget.
    fn spend(&mut self, count: usize) -> Result<&mut StateAccess, Error> {
        let access = self.access()?;
        access.ops += count.max(1) as u64;
        if access.ops > MAX_OPS_PER_CALL {
            return Err(other(format!(
                "this call made more than {MAX_OPS_PER_CALL} state operations, the most one call may make"
            )));
        }
        Ok(access)
    }

    /// Where an operation on an open bucket goes, after spending `count`.
    fn target(&mut self, bucket: &Resource<Bucket>, count: usize) -> Result<Target, Error> {
        let name = self
            .table
            .get(bucket)
            .map_err(|err| other(format!("no such bucket: {err}")))?
            .name
            .clone();
        let access = self.spend(count)?;
        Ok(Target {
            backend: access.backend.clone().ok_or(Error::NoSuchStore)?,
            ns: Namespace {
                plugin: access.plugin.clone(),
                bucket: name,
            },
            quota: access.grant.quota,
            value_limit: access.grant.value_limit,
        })
    }
}

/// One operation's backend and namespace, and the grant's sizes it checks.
struct Target {
    backend: Arc<dyn Backend>,
    ns: Namespace,
    quota: u64,
    value_limit: u64,
}

/// Runs `operation`'s `work` on the backend: at once on this thread when
/// the backend is quick and nothing would make it wait, on a blocking
/// thread otherwise. Each operation is counted by outcome and timed
/// (`corral_state_operations_total`, `corral_state_operation_duration_seconds`)
/// and has a span of its own.
async fn run<T: Send + 'static>(
    backend: Arc<dyn Backend>,
    operation: &'static str,
    work: impl Fn(&dyn Backend) -> Result<T, StateError> + Send + 'static,
) -> Result<T, Error> {
    let system = backend.kind();
    let span = tracing::info_span!(
        target: "corral_otel",
        "corral.state",
        "otel.name" = tracing::field::Empty,
        "otel.kind" = "client",
        "otel.status_code" = tracing::field::Empty,
        "db.system.name" = system,
        "db.operation.name" = operation,
    );
    if !span.is_disabled() {
        span.record("otel.name", format!("state {operation}"));
    }
    let started = std::time::Instant::now();
    let result = run_on(backend, work).instrument(span.clone()).await;
    let outcome = match &result {
        Ok(_) => "ok",
        Err(StateError::Quota { .. }) => "quota",
        Err(_) => "error",
    };
    if outcome != "ok" {
        span.record("otel.status_code", "error");
    }
    metrics::counter!("corral_state_operations_total", "backend" => system, "operation" => operation, "outcome" => outcome)
        .increment(1);
    metrics::histogram!("corral_state_operation_duration_seconds", "backend" => system, "operation" => operation)
        .record(started.elapsed().as_secs_f64());
    result.map_err(Error::from)
}

async fn run_on<T: Send + 'static>(
    backend: Arc<dyn Backend>,
    work: impl Fn(&dyn Backend) -> Result<T, StateError> + Send + 'static,
) -> Result<T, StateError> {
    if backend.is_quick() {
        match at_once(|| work(&*backend)) {
            Err(StateError::WouldWait) => {}
            done => return done,
        }
    }
    let worker = backend.clone();
    match tokio::task::spawn_blocking(move || work(&*worker)).await {
        Ok(result) => result,
        Err(err) => Err(StateError::Backend {
            backend: backend.describe(),
            reason: format!("its worker failed: {err}"),
        }),
    }
}

fn check_value(value_limit: u64, value: &[u8]) -> Result<(), Error> {
    if value.len() as u64 > value_limit {
        return Err(other(format!(
            "a value of {} is larger than {}, the plugin's value limit ([state] value-limit in its manifest)",
            human_bytes(value.len()),
            human_bytes(value_limit as usize)
        )));
    }
    Ok(())
}

fn check_batch_len(len: usize) -> Result<(), Error> {
    if len > MAX_BATCH_KEYS {
        return Err(other(format!(
            "a batch of {len} keys is more than {MAX_BATCH_KEYS}, the most one batch call may name"
        )));
    }
    Ok(())
}

impl store::Host for KeyValueView<'_> {
    async fn open(&mut self, identifier: String) -> Result<Resource<Bucket>, Error> {
        let access = self.spend(1)?;
        if !access.grant.buckets.contains(&identifier) {
            tracing::debug!(plugin = %access.plugin, bucket = %crate::plugin_text::cut(&identifier).escape_debug(), "refused to open a bucket its grant does not list");
            return Err(Error::AccessDenied);
        }
        if access.backend.is_none() {
            return Err(Error::NoSuchStore);
        }
        self.table
            .push(Bucket { name: identifier })
            .map_err(|err| other(format!("too many open buckets: {err}")))
    }
}

impl store::HostBucket for KeyValueView<'_> {
    async fn get(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> Result<Option<Vec<u8>>, Error> {
        check_key(&key)?;
        let Target { backend, ns, .. } = self.target(&bucket, 1)?;
        // No value is larger than the largest value limit, whatever the
        // limit was when it was written.
        let budget = StateGrant::DEFAULT_VALUE_LIMIT;
        let keys = [key];
        let mut values = run(backend, "get", move |backend| {
            backend.get_many(&ns, &keys, budget)
        })
        .await?;
        Ok(values.pop().flatten())
    }

    async fn set(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        value: Vec<u8>,
    ) -> Result<(), Error> {
        check_key(&key)?;
        let target = self.target(&bucket, 1)?;
        check_value(target.value_limit, &value)?;
        let Target {
            backend, ns, quota, ..
        } = target;
        let entries = [(key, value)];
        run(backend, "set", move |backend| {
            backend.set_many(&ns, &entries, quota)
        })
        .await
    }

    async fn delete(&mut self, bucket: Resource<Bucket>, key: String) -> Result<(), Error> {
        check_key(&key)?;
        let Target { backend, ns, .. } = self.target(&bucket, 1)?;
        let keys = [key];
        run(backend, "delete", move |backend| {
            backend.delete_many(&ns, &keys)
        })
        .await
    }

    async fn exists(&mut self, bucket: Resource<Bucket>, key: String) -> Result<bool, Error> {
        check_key(&key)?;
        let Target { backend, ns, .. } = self.target(&bucket, 1)?;
        run(backend, "exists", move |backend| backend.exists(&ns, &key)).await
    }

    async fn list_keys(
        &mut self,
        bucket: Resource<Bucket>,
        cursor: Option<u64>,
    ) -> Result<store::KeyResponse, Error> {
        let Target { backend, ns, .. } = self.target(&bucket, 1)?;
        let (keys, cursor) = run(backend, "list-keys", move |backend| {
            backend.list_keys(&ns, cursor, MAX_PAGE_KEYS)
        })
        .await?;
        Ok(store::KeyResponse { keys, cursor })
    }

    async fn drop(&mut self, bucket: Resource<Bucket>) -> wasmtime::Result<()> {
        self.table.delete(bucket)?;
        Ok(())
    }
}

impl atomics::Host for KeyValueView<'_> {
    async fn increment(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        delta: u64,
    ) -> Result<u64, Error> {
        check_key(&key)?;
        let Target {
            backend, ns, quota, ..
        } = self.target(&bucket, 1)?;
        run(backend, "increment", move |backend| {
            backend.increment(&ns, &key, delta, quota)
        })
        .await
    }
}

impl batch::Host for KeyValueView<'_> {
    async fn get_many(
        &mut self,
        bucket: Resource<Bucket>,
        keys: Vec<String>,
    ) -> Result<Vec<Option<(String, Vec<u8>)>>, Error> {
        check_batch_len(keys.len())?;
        keys.iter().try_for_each(|key| check_key(key))?;
        let Target { backend, ns, .. } = self.target(&bucket, keys.len())?;
        // The keys are shared with the work, not copied, and back in our
        // hands once it is over (dropped when done).
        let keys = Arc::new(keys);
        let values = {
            let keys = keys.clone();
            run(backend, "get-many", move |backend| {
                backend.get_many(&ns, &keys, MAX_BATCH_BYTES)
            })
            .await?
        };
        let keys = Arc::try_unwrap(keys).unwrap_or_else(|keys| (*keys).clone());
        Ok(keys
            .into_iter()
            .zip(values)
            .map(|(key, value)| value.map(|value| (key, value)))
            .collect())
    }

    async fn set_many(
        &mut self,
        bucket: Resource<Bucket>,
        entries: Vec<(String, Vec<u8>)>,
    ) -> Result<(), Error> {
        check_batch_len(entries.len())?;
        let Target {
            backend,
            ns,
            quota,
            value_limit,
        } = self.target(&bucket, entries.len())?;
        let mut bytes = 0u64;
        for (key, value) in &entries {
            check_key(key)?;
            check_value(value_limit, value)?;
            bytes += (key.len() + value.len()) as u64;
        }
        if bytes > MAX_BATCH_BYTES {
            return Err(other(format!(
                "a batch of {} is larger than {}, the most one set-many may write",
                human_bytes(bytes as usize),
                human_bytes(MAX_BATCH_BYTES as usize)
            )));
        }
        run(backend, "set-many", move |backend| {
            backend.set_many(&ns, &entries, quota)
        })
        .await
    }

    async fn delete_many(
        &mut self,
        bucket: Resource<Bucket>,
        keys: Vec<String>,
    ) -> Result<(), Error> {
        check_batch_len(keys.len())?;
        keys.iter().try_for_each(|key| check_key(key))?;
        let Target { backend, ns, .. } = self.target(&bucket, keys.len())?;
        run(backend, "delete-many", move |backend| {
            backend.delete_many(&ns, &keys)
        })
        .await
    }
}
