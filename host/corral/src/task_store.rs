//! Task records in the plugins' state store (`--state`): the
//! [`TaskStore`] the protocol layer keeps its tasks in, so that a task
//! outlives the server process that ran it (SQLite, by default) and every
//! replica sharing a Redis server answers for every task.
//!
//! The records live in a namespace of their own, `corral.tasks`, which no
//! plugin can open (a plugin's name never holds a dot). Each task has a
//! bucket, `task:ID`: its `record` (written by its runner only), a
//! `cancel` mark and one `answer:KEY` per answer left for it (written by
//! any replica), so that no two writers ever write the same key. The
//! bucket `index` lists every task with when it expires, for the sweep.
//! Everything the namespace holds counts against [`TASKS_QUOTA`]: a
//! client that creates tasks and never asks for them fills the store no
//! further than that.

use std::sync::Arc;

use corral_sandbox::state::{Backend, Namespace, StateError};
use corral_tool::{StoreFuture, TaskRecord, TaskStore, TaskStoreError};
use serde_json::{Map, Value};

/// The namespace of task records (a plugin name no plugin can have).
const TASKS: &str = corral_sandbox::naming::TASKS_NAMESPACE;
/// The bucket listing every task and when it expires.
const INDEX: &str = "index";
/// The most bytes every task's records take together.
pub const TASKS_QUOTA: u64 = 1 << 30;
/// The most bytes one record is read with (its result is at most 16 MiB as
/// JSON; as a string inside the record it may take twice that).
const RECORD_READ_BUDGET: u64 = 64 << 20;
/// Index entries read per step of a sweep.
const SWEEP_PAGE: usize = 500;

/// Tasks kept in a state backend.
pub struct StateTasks {
    backend: Arc<dyn Backend>,
    /// The most bytes the namespace may hold ([`TASKS_QUOTA`]).
    quota: u64,
}

impl StateTasks {
    pub fn new(backend: Arc<dyn Backend>) -> StateTasks {
        StateTasks {
            backend,
            quota: TASKS_QUOTA,
        }
    }

    /// The store, holding at most `quota` bytes.
    pub fn with_quota(self, quota: u64) -> StateTasks {
        StateTasks { quota, ..self }
    }

    /// Runs `work` on the backend on a blocking thread (every backend call
    /// may wait on a file or a connection).
    fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Backend) -> Result<T, StateError> + Send + 'static,
    ) -> StoreFuture<'_, T> {
        let backend = self.backend.clone();
        let quota = self.quota;
        Box::pin(async move {
            tokio::task::spawn_blocking(move || work(&*backend))
                .await
                .map_err(|err| TaskStoreError::Backend(format!("the task store stopped: {err}")))?
                .map_err(|err| match err {
                    StateError::Quota { .. } => TaskStoreError::Full(format!(
                        "the task store is full ({} MiB of task records): {err}",
                        quota >> 20
                    )),
                    err => TaskStoreError::Backend(err.to_string()),
                })
        })
    }
}

fn bucket(name: &str) -> Namespace {
    Namespace {
        plugin: TASKS.into(),
        bucket: name.into(),
    }
}

fn task_bucket(id: &str) -> Namespace {
    bucket(&format!("task:{id}"))
}

const RECORD: &str = "record";
const CANCEL: &str = "cancel";
const ANSWER: &str = "answer:";

/// Every key of `ns`.
fn all_keys(backend: &dyn Backend, ns: &Namespace) -> Result<Vec<String>, StateError> {
    let mut keys = Vec::new();
    let mut cursor = None;
    loop {
        let (page, next) = backend.list_keys(ns, cursor, SWEEP_PAGE)?;
        keys.extend(page);
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(keys),
        }
    }
}

impl TaskStore for StateTasks {
    fn describe(&self) -> String {
        self.backend.describe()
    }

    fn save(&self, record: &TaskRecord) -> StoreFuture<'_, ()> {
        let id = record.id.clone();
        let expires = record.expires_ms().to_string().into_bytes();
        let json = record.to_json().to_string().into_bytes();
        let quota = self.quota;
        self.run(move |backend| {
            backend.set_many(&task_bucket(&id), &[(RECORD.into(), json)], quota)?;
            backend.set_many(&bucket(INDEX), &[(id, expires)], quota)
        })
    }

    fn load(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>> {
        let id = id.to_owned();
        self.run(move |backend| {
            let values =
                backend.get_many(&task_bucket(&id), &[RECORD.into()], RECORD_READ_BUDGET)?;
            Ok(values
                .into_iter()
                .flatten()
                .next()
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
                .and_then(|value| TaskRecord::from_json(&value)))
        })
    }

    fn request_cancel(&self, id: &str) -> StoreFuture<'_, ()> {
        let id = id.to_owned();
        let quota = self.quota;
        self.run(move |backend| {
            backend.set_many(&task_bucket(&id), &[(CANCEL.into(), b"1".to_vec())], quota)
        })
    }

    fn cancel_requested(&self, id: &str) -> StoreFuture<'_, bool> {
        let id = id.to_owned();
        self.run(move |backend| backend.exists(&task_bucket(&id), CANCEL))
    }

    fn deliver(&self, id: &str, answers: Map<String, Value>) -> StoreFuture<'_, ()> {
        let id = id.to_owned();
        let entries: Vec<(String, Vec<u8>)> = answers
            .into_iter()
            .map(|(key, answer)| (format!("{ANSWER}{key}"), answer.to_string().into_bytes()))
            .collect();
        let quota = self.quota;
        self.run(move |backend| backend.set_many(&task_bucket(&id), &entries, quota))
    }

    fn take_answers(&self, id: &str) -> StoreFuture<'_, Map<String, Value>> {
        let id = id.to_owned();
        self.run(move |backend| {
            let ns = task_bucket(&id);
            let keys: Vec<String> = all_keys(backend, &ns)?
                .into_iter()
                .filter(|key| key.starts_with(ANSWER))
                .collect();
            if keys.is_empty() {
                return Ok(Map::new());
            }
            let values = backend.get_many(&ns, &keys, RECORD_READ_BUDGET)?;
            backend.delete_many(&ns, &keys)?;
            Ok(keys
                .iter()
                .zip(values)
                .filter_map(|(key, value)| {
                    let answer = serde_json::from_slice(&value?).ok()?;
                    Some((key[ANSWER.len()..].to_owned(), answer))
                })
                .collect())
        })
    }

    fn sweep(&self, now_ms: u64) -> StoreFuture<'_, u64> {
        self.run(move |backend| {
            let index = bucket(INDEX);
            let mut kept = 0;
            let mut cursor = None;
            loop {
                let (ids, next) = backend.list_keys(&index, cursor, SWEEP_PAGE)?;
                let expiries = backend.get_many(&index, &ids, RECORD_READ_BUDGET)?;
                let mut expired = Vec::new();
                for (id, expiry) in ids.into_iter().zip(expiries) {
                    let expires = expiry
                        .and_then(|bytes| String::from_utf8(bytes).ok())
                        .and_then(|text| text.parse::<u64>().ok());
                    match expires {
                        Some(expires) if expires >= now_ms => kept += 1,
                        _ => expired.push(id),
                    }
                }
                for id in &expired {
                    let ns = task_bucket(id);
                    let keys = all_keys(backend, &ns)?;
                    backend.delete_many(&ns, &keys)?;
                }
                backend.delete_many(&index, &expired)?;
                match next {
                    Some(next) => cursor = Some(next),
                    None => return Ok(kept),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_sandbox::state::sqlite::Sqlite;
    use corral_tool::{MemoryTaskStore, TaskStatus};
    use serde_json::json;

    fn record(id: &str, created_ms: u64, ttl_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            owner: "session-1".into(),
            tool: "slow".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_ms,
            updated_ms: created_ms,
            ttl_ms,
            poll_interval_ms: 1000,
            input_requests: Map::new(),
            result: None,
            error: None,
            runner: "boot".into(),
            heartbeat_ms: created_ms,
        }
    }

    /// What every task store must do, as the protocol layer relies on it.
    async fn keeps_the_contract(store: &dyn TaskStore) {
        assert_eq!(store.load("a").await.unwrap(), None);
        let mut a = record("a", 1_000, 1_000);
        store.save(&a).await.unwrap();
        assert_eq!(store.load("a").await.unwrap(), Some(a.clone()));
        a.status = TaskStatus::Completed;
        a.result = Some(json!({ "content": [{ "type": "text", "text": "done" }] }));
        store.save(&a).await.unwrap();
        assert_eq!(store.load("a").await.unwrap(), Some(a.clone()));

        assert!(!store.cancel_requested("a").await.unwrap());
        store.request_cancel("a").await.unwrap();
        assert!(store.cancel_requested("a").await.unwrap());

        let answers = |pairs: &[(&str, Value)]| -> Map<String, Value> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), v.clone()))
                .collect()
        };
        store
            .deliver("a", answers(&[("name", json!({ "action": "accept" }))]))
            .await
            .unwrap();
        store
            .deliver("a", answers(&[("ok", json!({ "action": "decline" }))]))
            .await
            .unwrap();
        let taken = store.take_answers("a").await.unwrap();
        assert_eq!(
            taken,
            answers(&[
                ("name", json!({ "action": "accept" })),
                ("ok", json!({ "action": "decline" })),
            ])
        );
        assert!(store.take_answers("a").await.unwrap().is_empty());

        // `a` expires at 2,000; `b` at 11,000.
        store.save(&record("b", 1_000, 10_000)).await.unwrap();
        assert_eq!(store.sweep(1_500).await.unwrap(), 2);
        assert_eq!(store.sweep(5_000).await.unwrap(), 1);
        assert_eq!(store.load("a").await.unwrap(), None);
        assert!(!store.cancel_requested("a").await.unwrap());
        assert!(store.load("b").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn the_memory_store_keeps_the_contract() {
        keeps_the_contract(&MemoryTaskStore::default()).await;
    }

    #[tokio::test]
    async fn a_sqlite_store_keeps_the_contract_and_its_records_outlive_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let store = StateTasks::new(Arc::new(Sqlite::new(&path)));
        keeps_the_contract(&store).await;
        drop(store);
        let reopened = StateTasks::new(Arc::new(Sqlite::new(&path)));
        assert!(reopened.load("b").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn the_store_is_bounded_by_its_quota() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            StateTasks::new(Arc::new(Sqlite::new(dir.path().join("s.sqlite")))).with_quota(1 << 20);
        store.save(&record("small", 0, 1_000)).await.unwrap();
        let mut huge = record("huge", 0, 1_000);
        huge.result = Some(Value::String("x".repeat(1 << 20)));
        assert!(matches!(
            store.save(&huge).await,
            Err(TaskStoreError::Full(_))
        ));
        assert_eq!(store.load("huge").await.unwrap(), None);
        assert!(store.load("small").await.unwrap().is_some());
    }
}
