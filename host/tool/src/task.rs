//! Long calls as tasks: what a task's record holds, and the [`TaskStore`]
//! port where records are kept.
//!
//! A call that runs long enough, for a client that declared it can take
//! one, is answered with a task handle instead of its result; the call
//! goes on, and the client asks for the task's state until it ends. The
//! protocol layer (`corral-mcp`) runs tasks and answers for them; it keeps
//! each task's record in a [`TaskStore`], which the `corral` crate backs
//! with the state backend `--state` names (a SQLite file, or Redis shared
//! by replicas), so that any replica answers for a task that another runs,
//! and a task outlives the client that started it.
//!
//! A record has one writer at a time: the process that runs the task (its
//! `runner`), which writes every change and a heartbeat. Others add what
//! is asked of the task beside it (a cancellation, answers to its input
//! requests), which the runner takes. A reader that finds a running
//! record whose heartbeat stopped knows its runner is gone.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::{Map, Value, json};

/// The extension's identifier, as clients declare it and the server
/// advertises it (`capabilities.extensions`).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Working,
    /// Waiting for the client's answers to its `input_requests`.
    InputRequired,
    Completed,
    /// The call ended in a failure of the host's (a limit, a crash, a
    /// restart), reported as a JSON-RPC error.
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(status: &str) -> Option<TaskStatus> {
        [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == status)
    }

    /// Whether the task has ended: its state changes no more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// When a tool's calls become tasks, and how long a task is kept: from its
/// plugin's manifest (`[limits] task-after`, `task-ttl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskPolicy {
    /// A call still running this long after it started is answered with a
    /// task (zero: at once).
    pub after: Duration,
    /// How long a task's record is kept after it was last stored (so a
    /// running task never expires).
    pub ttl: Duration,
}

impl Default for TaskPolicy {
    fn default() -> Self {
        TaskPolicy {
            after: Duration::from_secs(2),
            ttl: Duration::from_secs(60 * 60),
        }
    }
}

/// The longest a task is kept, whatever its plugin asks.
pub const MAX_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// One task as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// 128 random bits, as 32 hex digits: the only handle to the task.
    pub id: String,
    /// Who may see the task: the session that created it (legacy era), or
    /// the authenticated principal; empty for whoever holds its id.
    pub owner: String,
    /// The tool whose call it is.
    pub tool: String,
    pub status: TaskStatus,
    pub status_message: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    pub updated_ms: u64,
    pub ttl_ms: u64,
    pub poll_interval_ms: u64,
    /// While `InputRequired`: the requests not yet answered, by key, each
    /// `{"method": ..., "params": ...}`.
    pub input_requests: Map<String, Value>,
    /// Once `Completed`: the call's result as the client gets it.
    pub result: Option<Value>,
    /// Once `Failed`: the JSON-RPC error.
    pub error: Option<Value>,
    /// The process that runs the task (its boot id), and when it last said
    /// it still does.
    pub runner: String,
    pub heartbeat_ms: u64,
}

impl TaskRecord {
    /// When the record may be deleted, in milliseconds since the epoch.
    pub fn expires_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "owner": self.owner,
            "tool": self.tool,
            "status": self.status.as_str(),
            "statusMessage": self.status_message,
            "createdMs": self.created_ms,
            "updatedMs": self.updated_ms,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
            "inputRequests": self.input_requests,
            "result": self.result,
            "error": self.error,
            "runner": self.runner,
            "heartbeatMs": self.heartbeat_ms,
        })
    }

    /// The record [`TaskRecord::to_json`] wrote, or `None` for anything else.
    pub fn from_json(value: &Value) -> Option<TaskRecord> {
        let text = |key: &str| value.get(key)?.as_str().map(str::to_owned);
        let number = |key: &str| value.get(key)?.as_u64();
        let present = |key: &str| value.get(key).filter(|v| !v.is_null()).cloned();
        Some(TaskRecord {
            id: text("id")?,
            owner: text("owner")?,
            tool: text("tool")?,
            status: TaskStatus::parse(value.get("status")?.as_str()?)?,
            status_message: text("statusMessage"),
            created_ms: number("createdMs")?,
            updated_ms: number("updatedMs")?,
            ttl_ms: number("ttlMs")?,
            poll_interval_ms: number("pollIntervalMs")?,
            input_requests: value.get("inputRequests")?.as_object()?.clone(),
            result: present("result"),
            error: present("error"),
            runner: text("runner")?,
            heartbeat_ms: number("heartbeatMs")?,
        })
    }
}

/// Why the store could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStoreError {
    /// The store holds as much as it may: nothing was written.
    Full(String),
    /// The backend failed (I/O, a lost connection).
    Backend(String),
}

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskStoreError::Full(message) | TaskStoreError::Backend(message) => {
                f.write_str(message)
            }
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// A boxed future, as [`TaskStore`]'s methods return.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, TaskStoreError>> + Send + 'a>>;

/// Where task records are kept. A record written has been stored when the
/// future resolves (a reader anywhere then finds it: the extension's
/// "durably created").
pub trait TaskStore: Send + Sync + 'static {
    /// How the store is named in logs.
    fn describe(&self) -> String;

    /// Writes `record`, new or a newer version of itself.
    fn save(&self, record: &TaskRecord) -> StoreFuture<'_, ()>;

    /// The record of task `id`, if it is kept.
    fn load(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>>;

    /// Asks task `id`'s runner to cancel it.
    fn request_cancel(&self, id: &str) -> StoreFuture<'_, ()>;

    /// Whether task `id` was asked to cancel.
    fn cancel_requested(&self, id: &str) -> StoreFuture<'_, bool>;

    /// Leaves answers for task `id`'s runner, by input request key (an
    /// answer to a key already waiting replaces it).
    fn deliver(&self, id: &str, answers: Map<String, Value>) -> StoreFuture<'_, ()>;

    /// Takes the answers left for task `id`: they are removed.
    fn take_answers(&self, id: &str) -> StoreFuture<'_, Map<String, Value>>;

    /// Deletes every task whose record expired before `now_ms`, with what
    /// was left beside it; returns how many tasks are kept.
    fn sweep(&self, now_ms: u64) -> StoreFuture<'_, u64>;
}

/// A store in this process's memory: for a server with no state backend,
/// and for tests. Bounded by the layer above (the number of tasks kept).
#[derive(Default)]
pub struct MemoryTaskStore {
    tasks: std::sync::Mutex<std::collections::HashMap<String, Kept>>,
}

#[derive(Default)]
struct Kept {
    record: Option<TaskRecord>,
    cancel: bool,
    answers: Map<String, Value>,
}

impl MemoryTaskStore {
    fn with<T: Send + 'static>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Kept) -> T,
    ) -> StoreFuture<'_, T> {
        let mut tasks = self.tasks.lock().unwrap();
        let value = f(tasks.entry(id.to_owned()).or_default());
        Box::pin(std::future::ready(Ok(value)))
    }
}

impl TaskStore for MemoryTaskStore {
    fn describe(&self) -> String {
        "memory".into()
    }

    fn save(&self, record: &TaskRecord) -> StoreFuture<'_, ()> {
        let record = record.clone();
        self.with(&record.id.clone(), |kept| kept.record = Some(record))
    }

    fn load(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>> {
        let record = self
            .tasks
            .lock()
            .unwrap()
            .get(id)
            .and_then(|kept| kept.record.clone());
        Box::pin(std::future::ready(Ok(record)))
    }

    fn request_cancel(&self, id: &str) -> StoreFuture<'_, ()> {
        self.with(id, |kept| kept.cancel = true)
    }

    fn cancel_requested(&self, id: &str) -> StoreFuture<'_, bool> {
        let cancel = self
            .tasks
            .lock()
            .unwrap()
            .get(id)
            .is_some_and(|kept| kept.cancel);
        Box::pin(std::future::ready(Ok(cancel)))
    }

    fn deliver(&self, id: &str, answers: Map<String, Value>) -> StoreFuture<'_, ()> {
        self.with(id, |kept| kept.answers.extend(answers))
    }

    fn take_answers(&self, id: &str) -> StoreFuture<'_, Map<String, Value>> {
        self.with(id, |kept| std::mem::take(&mut kept.answers))
    }

    fn sweep(&self, now_ms: u64) -> StoreFuture<'_, u64> {
        let mut tasks = self.tasks.lock().unwrap();
        // What was left for a task with no record (it expired, or never
        // was) goes too.
        tasks.retain(|_, kept| {
            kept.record
                .as_ref()
                .is_some_and(|record| record.expires_ms() >= now_ms)
        });
        Box::pin(std::future::ready(Ok(tasks.len() as u64)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(id: &str, created_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            owner: String::new(),
            tool: "slow".into(),
            status: TaskStatus::Working,
            status_message: Some("started".into()),
            created_ms,
            updated_ms: created_ms,
            ttl_ms: 1000,
            poll_interval_ms: 500,
            input_requests: Map::new(),
            result: None,
            error: None,
            runner: "boot".into(),
            heartbeat_ms: created_ms,
        }
    }

    #[test]
    fn a_record_reads_back_as_it_was_written() {
        let mut written = record("a", 5);
        written.status = TaskStatus::InputRequired;
        written.input_requests.insert(
            "name".into(),
            json!({ "method": "elicitation/create", "params": {} }),
        );
        written.result = Some(json!({ "content": [] }));
        assert_eq!(TaskRecord::from_json(&written.to_json()), Some(written));
        assert_eq!(TaskRecord::from_json(&json!({ "id": "a" })), None);
    }

    #[test]
    fn statuses_name_themselves_as_the_wire_does() {
        for status in [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ] {
            assert_eq!(TaskStatus::parse(status.as_str()), Some(status));
        }
        assert!(TaskStatus::Cancelled.is_terminal());
        assert!(!TaskStatus::InputRequired.is_terminal());
    }
}
