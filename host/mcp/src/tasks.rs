//! Running calls as tasks (the `io.modelcontextprotocol/tasks` extension):
//! the server's table of tasks, shared by every session, and what runs
//! each one.
//!
//! A call becomes a task when it is detached from its request (see
//! `session::tasks`): its record is stored first, then the call goes on in
//! a runner of its own, and the request is answered with the task. The
//! runner is the record's only writer: it writes each change (asked for
//! input, answered, ended) and, every [`HEARTBEAT`], that it still runs.
//! What others ask of the task reaches it two ways: in this process at
//! once (`tasks/cancel` cancels its token, `tasks/update` fills its inbox),
//! and from another replica through the store, which the runner reads at
//! each heartbeat. A running record whose heartbeat is older than
//! [`STALE_AFTER`] lost its runner (the server stopped or restarted): it
//! reads as `failed`, saying so.
//!
//! Bounds: at most [`MAX_KEPT`] tasks are kept (expired ones are swept out
//! every [`SWEEP_EVERY`], and after every [`SWEEP_AFTER_CREATED`] tasks
//! created, so that a client creating tasks in a loop meets expired ones
//! deleted as it goes; past the bound a call simply stays a call), a
//! result is held only up to [`MAX_RESULT_BYTES`], and an input request key
//! is unique over a task's life.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::client::{Declared, leave_out_undeclared_context};
use crate::jsonrpc::{self, RpcError};
use crate::{Revision, shape};
use corral_tool::{
    AskError, AskFuture, CallEvent, CallOutput, Client, ClientCapabilities, EventSink,
    InputRequest, MemoryTaskStore, TaskPolicy, TaskRecord, TaskStatus, TaskStore, UnknownTool,
};

/// How often a runner says it still runs, reads what other replicas asked
/// of its task, and stores its newest status message.
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// A running task whose runner has not said so for this long has none.
pub const STALE_AFTER: Duration = Duration::from_secs(5);
/// What a client is asked to wait between two `tasks/get`.
pub const POLL_INTERVAL: Duration = Duration::from_millis(1000);
/// The most tasks kept, running or ended, until they expire.
pub const MAX_KEPT: u64 = 10_000;
/// How often expired tasks are deleted.
pub const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// Tasks created between two sweeps at most.
pub const SWEEP_AFTER_CREATED: u64 = 1000;
/// The largest result a task holds (a call's result is bounded by its
/// plugin's `output` limit before; this bounds it as JSON).
pub const MAX_RESULT_BYTES: usize = 16 << 20;
/// Task changes held for listen streams that have not looked yet.
const CHANGES_BUFFERED: usize = 1024;
/// The longest status message kept (a plugin's progress message).
const MAX_STATUS_MESSAGE_CHARS: usize = 1000;

/// A call's future, owned, as a runner drives it.
pub type CallFuture = Pin<Box<dyn Future<Output = Result<CallOutput, UnknownTool>> + Send>>;

/// The server's tasks: the store of their records, and the ones this
/// process runs.
pub struct Tasks {
    store: Arc<dyn TaskStore>,
    /// This process, as records name their runner.
    boot: String,
    running: Mutex<HashMap<String, Arc<Running>>>,
    /// Tasks kept: as the last sweep counted, plus those created since.
    kept: AtomicU64,
    /// The most tasks kept ([`MAX_KEPT`]).
    max_kept: u64,
    /// Tasks created since the last sweep began.
    created_since_sweep: AtomicU64,
    /// The sweeper has been started (on the first task).
    sweeping: AtomicBool,
    /// The id of each task run here whose record was just stored: what
    /// listen streams watching it wait for.
    changes: tokio::sync::broadcast::Sender<String>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("store", &self.store.describe())
            .field("boot", &self.boot)
            .finish()
    }
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks::new(Arc::new(MemoryTaskStore::default()))
    }
}

/// One task this process runs.
pub struct Running {
    id: String,
    /// The runner's copy of the record: what it stores next.
    record: Mutex<TaskRecord>,
    /// Held while a copy of the record is stored, so that no older copy
    /// lands after a newer one.
    saving: tokio::sync::Mutex<()>,
    cancel: CancellationToken,
    /// Answers delivered in this process, by wire key, until the ask that
    /// waits for them takes them.
    inbox: Mutex<Map<String, Value>>,
    delivered: Notify,
    /// Every input request key the task has used.
    keys: Mutex<HashSet<String>>,
    /// What the record said when it was last stored.
    stored: Mutex<Told>,
    /// How long the task is kept after its last change (its plugin's
    /// `task-ttl`).
    kept_for_ms: u64,
}

/// What a change of a task's record is: of its status, its message or its
/// outstanding requests (the rest follows from those).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Told {
    status: TaskStatus,
    message: Option<String>,
    asking: Vec<String>,
}

impl Told {
    fn of(record: &TaskRecord) -> Told {
        Told {
            status: record.status,
            message: record.status_message.clone(),
            asking: record.input_requests.keys().cloned().collect(),
        }
    }
}

impl Tasks {
    /// Tasks kept in `store`.
    pub fn new(store: Arc<dyn TaskStore>) -> Tasks {
        Tasks {
            store,
            boot: random_id(),
            running: Mutex::new(HashMap::new()),
            kept: AtomicU64::new(0),
            max_kept: MAX_KEPT,
            created_since_sweep: AtomicU64::new(0),
            sweeping: AtomicBool::new(false),
            changes: tokio::sync::broadcast::Sender::new(CHANGES_BUFFERED),
        }
    }

    /// The table, keeping at most `max_kept` tasks (for tests of the bound).
    pub fn with_max_kept(mut self, max_kept: u64) -> Tasks {
        self.max_kept = max_kept;
        self
    }

    /// Stores a new task for a call of `tool` that `owner` made, and
    /// registers it as running here. `None` when no more may be kept (or
    /// the store failed, which is logged): the call then stays a call.
    pub async fn create(
        self: &Arc<Self>,
        tool: &str,
        owner: &str,
        policy: TaskPolicy,
    ) -> Option<Arc<Running>> {
        self.start_sweeping();
        if self.kept.load(Ordering::Relaxed) >= self.max_kept {
            // Count again: some may have expired since the last sweep.
            self.sweep().await;
            if self.kept.load(Ordering::Relaxed) >= self.max_kept {
                tracing::warn!(
                    "{} tasks are kept already: a call of `{tool}` is served without one",
                    self.max_kept
                );
                return None;
            }
        }
        if self.created_since_sweep.fetch_add(1, Ordering::Relaxed) + 1 >= SWEEP_AFTER_CREATED {
            let tasks = self.clone();
            tokio::spawn(async move { tasks.sweep().await });
        }
        let now = now_ms();
        entered(TaskStatus::Working);
        let record = TaskRecord {
            id: random_id(),
            owner: owner.to_owned(),
            tool: tool.to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: policy.ttl.as_millis() as u64,
            poll_interval_ms: POLL_INTERVAL.as_millis() as u64,
            input_requests: Map::new(),
            result: None,
            error: None,
            runner: self.boot.clone(),
            heartbeat_ms: now,
        };
        let running = Arc::new(Running {
            id: record.id.clone(),
            record: Mutex::new(record.clone()),
            saving: tokio::sync::Mutex::new(()),
            cancel: CancellationToken::new(),
            inbox: Mutex::new(Map::new()),
            delivered: Notify::new(),
            keys: Mutex::new(HashSet::new()),
            stored: Mutex::new(Told::of(&record)),
            kept_for_ms: record.ttl_ms,
        });
        // Registered before it is stored: a record of this process's that
        // is not running here is one whose runner died.
        self.running
            .lock()
            .unwrap()
            .insert(record.id.clone(), running.clone());
        if let Err(err) = self.store.save(&record).await {
            tracing::warn!(
                "could not store a task for `{tool}` in {}: {err}; the call is served without one",
                self.store.describe()
            );
            self.running.lock().unwrap().remove(&record.id);
            return None;
        }
        self.kept.fetch_add(1, Ordering::Relaxed);
        Some(running)
    }

    /// Runs `call` as task `running` until it ends or is cancelled, and
    /// stores how it ended: its result shaped for `revision`.
    pub fn spawn(self: &Arc<Self>, running: Arc<Running>, call: CallFuture, revision: Revision) {
        let tasks = self.clone();
        tokio::spawn(async move { tasks.drive(running, call, revision).await });
    }

    async fn drive(&self, running: Arc<Running>, mut call: CallFuture, revision: Revision) {
        let mut beat = tokio::time::interval(HEARTBEAT);
        beat.tick().await;
        let ended = loop {
            tokio::select! {
                output = &mut call => break Some(output),
                () = running.cancel.cancelled() => break None,
                _ = beat.tick() => self.beat(&running).await,
            }
        };
        // Dropping the call stops its instance where it stands.
        drop(call);
        let (status, message, result, error) = match ended {
            None => (
                TaskStatus::Cancelled,
                "cancelled at the client's request".to_owned(),
                None,
                None,
            ),
            Some(Err(UnknownTool)) => {
                let message = "the tool is no longer served".to_owned();
                let error = RpcError::invalid_params(message.clone());
                (TaskStatus::Failed, message, None, Some(error_json(&error)))
            }
            Some(Ok(output)) => finished(&output, revision),
        };
        entered(status);
        {
            let mut record = running.record.lock().unwrap();
            record.status = status;
            record.status_message = Some(message);
            record.result = result;
            record.error = error;
            record.input_requests.clear();
        }
        self.save(&running).await;
        self.running.lock().unwrap().remove(&running.id);
    }

    /// A runner's heartbeat: a cancellation or answers another replica
    /// left, then the record with the time (and any new status message).
    async fn beat(&self, running: &Running) {
        match self.store.cancel_requested(&running.id).await {
            Ok(true) => {
                running.cancel.cancel();
                return;
            }
            Ok(false) => {}
            Err(err) => tracing::warn!("task {}: {err}", running.id),
        }
        let waiting = running.record.lock().unwrap().status == TaskStatus::InputRequired;
        if waiting {
            match self.store.take_answers(&running.id).await {
                Ok(answers) if !answers.is_empty() => running.deliver(answers),
                Ok(_) => {}
                Err(err) => tracing::warn!("task {}: {err}", running.id),
            }
        }
        self.save(running).await;
    }

    /// Stores the runner's copy of the record as it is now, with the time
    /// (`lastUpdatedAt`) if it changed since it was last stored, and tells
    /// of the change. A heartbeat that changed nothing is stored (its time
    /// is what says the runner lives) but not told.
    async fn save(&self, running: &Running) {
        let _saving = running.saving.lock().await;
        let (record, changed) = {
            let mut record = running.record.lock().unwrap();
            let now = now_ms();
            let state = Told::of(&record);
            let mut told = running.stored.lock().unwrap();
            let changed = *told != state;
            if changed {
                record.updated_ms = record.updated_ms.max(now);
                *told = state;
            }
            // A task is kept its TTL after it was last stored, never less:
            // a task still running (or just ended) does not expire.
            let since_created = now.saturating_sub(record.created_ms);
            record.ttl_ms = record.ttl_ms.max(since_created + running.kept_for_ms);
            record.heartbeat_ms = now;
            (record.clone(), changed)
        };
        if let Err(err) = self.store.save(&record).await {
            tracing::warn!("task {}: could not store its state: {err}", record.id);
        }
        if changed {
            let _ = self.changes.send(record.id);
        }
    }

    /// Tells of each change to a task run here (its id); a receiver that
    /// falls behind is told it lagged, and should look at all it watches.
    /// Subscribe before looking at a task, and [`next_change`] misses
    /// nothing after that look.
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.changes.subscribe()
    }

    /// Task `id` as `owner` may see it: not found (-32602) when it is not
    /// kept, expired, or another's. A running record whose runner is gone
    /// reads `failed`.
    pub async fn get(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        let not_found = || RpcError::invalid_params("Failed to retrieve task: Task not found");
        let load = || async {
            self.store
                .load(id)
                .await
                .map_err(|err| internal(&format!("the task store failed: {err}")))
                .map(|record| {
                    record.filter(|record| record.owner == owner && record.expires_ms() >= now_ms())
                })
        };
        let record = load().await?.ok_or_else(not_found)?;
        if record.status.is_terminal() || !self.runner_gone(&record) {
            return Ok(record);
        }
        // A runner of this process stores its task's end before it leaves
        // the table: one that left since the record was read has ended.
        if record.runner == self.boot
            && let Some(ended) = load().await?
            && ended.status.is_terminal()
        {
            return Ok(ended);
        }
        // Not stored: a runner whose heartbeat was only late (a slow store)
        // goes on writing its task, and every reader tells the same from the
        // same heartbeat.
        let mut failed = record;
        let message = "the server running this task stopped (it was restarted or shut down) before the task finished; call the tool again".to_owned();
        failed.status = TaskStatus::Failed;
        failed.error = Some(error_json(&internal(&message)));
        failed.status_message = Some(message);
        failed.input_requests.clear();
        Ok(failed)
    }

    /// Whether a record that has not ended has no runner any more.
    fn runner_gone(&self, record: &TaskRecord) -> bool {
        if record.runner == self.boot {
            return !self.running.lock().unwrap().contains_key(&record.id);
        }
        now_ms().saturating_sub(record.heartbeat_ms) > STALE_AFTER.as_millis() as u64
    }

    /// Delivers `responses` to task `id`'s outstanding input requests
    /// (others are ignored, as the extension asks).
    pub async fn update(
        &self,
        id: &str,
        owner: &str,
        responses: Map<String, Value>,
    ) -> Result<(), RpcError> {
        let record = self.get(id, owner).await?;
        let answers: Map<String, Value> = responses
            .into_iter()
            .filter(|(key, _)| record.input_requests.contains_key(key))
            .collect();
        if answers.is_empty() {
            return Ok(());
        }
        let local = self.running.lock().unwrap().get(id).cloned();
        match local {
            Some(running) => {
                // Stored before this is acknowledged: a `tasks/get` right
                // after shows only the requests still outstanding.
                running.deliver(answers);
                self.save(&running).await;
            }
            None => self
                .store
                .deliver(id, answers)
                .await
                .map_err(|err| internal(&format!("the task store failed: {err}")))?,
        }
        Ok(())
    }

    /// Asks task `id` to stop. One that has ended stays as it is.
    pub async fn cancel(&self, id: &str, owner: &str) -> Result<(), RpcError> {
        let record = self.get(id, owner).await?;
        if record.status.is_terminal() {
            return Ok(());
        }
        let local = self.running.lock().unwrap().get(id).cloned();
        match local {
            Some(running) => running.cancel.cancel(),
            None => self
                .store
                .request_cancel(id)
                .await
                .map_err(|err| internal(&format!("the task store failed: {err}")))?,
        }
        Ok(())
    }

    /// Starts deleting expired tasks every [`SWEEP_EVERY`], once.
    fn start_sweeping(self: &Arc<Self>) {
        if self.sweeping.swap(true, Ordering::Relaxed) {
            return;
        }
        // Held weakly: the sweeper ends with the table.
        let tasks: Weak<Tasks> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(SWEEP_EVERY);
            loop {
                every.tick().await;
                let Some(tasks) = tasks.upgrade() else { return };
                tasks.sweep().await;
            }
        });
    }

    async fn sweep(&self) {
        self.created_since_sweep.store(0, Ordering::Relaxed);
        match self.store.sweep(now_ms()).await {
            Ok(kept) => self.kept.store(kept, Ordering::Relaxed),
            Err(err) => tracing::warn!("sweeping expired tasks failed: {err}"),
        }
    }
}

impl Running {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The record as it stands (for the task handle a request answers).
    pub fn record(&self) -> TaskRecord {
        self.record.lock().unwrap().clone()
    }

    /// Takes in answers (by wire key) to the requests outstanding, for
    /// the ask that waits: those are outstanding no more, and the task is
    /// working again once none is. Others are ignored. The caller stores
    /// the record.
    fn deliver(&self, answers: Map<String, Value>) {
        let mut record = self.record.lock().unwrap();
        let mut inbox = self.inbox.lock().unwrap();
        for (key, answer) in answers {
            if answer.is_object() && record.input_requests.remove(&key).is_some() {
                inbox.insert(key, answer);
            }
        }
        if record.status == TaskStatus::InputRequired && record.input_requests.is_empty() {
            record.status = TaskStatus::Working;
            entered(TaskStatus::Working);
        }
        self.delivered.notify_one();
    }

    /// Notes a progress message as the task's status message (stored at
    /// the next heartbeat).
    pub fn progress(&self, message: &str) {
        let message: String = message.chars().take(MAX_STATUS_MESSAGE_CHARS).collect();
        self.record.lock().unwrap().status_message = Some(message);
    }
}

/// Waits until one of the tasks `watched` holds may have changed: a change
/// told on `changes` (a task run here), changes missed (the receiver fell
/// behind), or, when `at_most` is given, that long (a task run on another
/// replica changes unseen).
pub async fn next_change(
    changes: &mut tokio::sync::broadcast::Receiver<String>,
    watched: impl Fn(&str) -> bool,
    at_most: Option<Duration>,
) {
    let told = async {
        loop {
            match changes.recv().await {
                Ok(id) if !watched(&id) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    std::future::pending::<()>().await;
                }
                _ => return,
            }
        }
    };
    match at_most {
        Some(at_most) => {
            let _ = tokio::time::timeout(at_most, told).await;
        }
        None => told.await,
    }
}

/// How a finished call leaves its task: `completed` with its result (a
/// tool's own error included), or `failed` when the host's limits or a
/// crash ended it, or its result is too large to hold.
fn finished(
    output: &CallOutput,
    revision: Revision,
) -> (TaskStatus, String, Option<Value>, Option<Value>) {
    let text = output
        .content
        .iter()
        .find_map(|item| match item {
            corral_tool::Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or_default();
    if output.failed {
        let message: String = text.chars().take(MAX_STATUS_MESSAGE_CHARS).collect();
        let error = error_json(&internal(text));
        return (TaskStatus::Failed, message, None, Some(error));
    }
    let mut result = shape::call_result_json(output, revision);
    // Inlined in `tasks/get`, the result is the call's own, typed as every
    // result of a stateless revision is.
    if revision.is_stateless() {
        result["resultType"] = "complete".into();
    }
    let bytes = jsonrpc::serialized_len(&result);
    if bytes > MAX_RESULT_BYTES {
        let message = format!(
            "the result takes {bytes} bytes as JSON, more than the {} MiB a task holds",
            MAX_RESULT_BYTES >> 20
        );
        let error = error_json(&internal(&message));
        return (TaskStatus::Failed, message, None, Some(error));
    }
    let message = if output.is_error {
        "the tool reported an error"
    } else {
        "the tool finished"
    };
    (TaskStatus::Completed, message.into(), Some(result), None)
}

fn internal(message: &str) -> RpcError {
    RpcError::new(jsonrpc::code::INTERNAL_ERROR, message)
}

fn error_json(error: &RpcError) -> Value {
    let mut value = json!({ "code": error.code, "message": error.message });
    if let Some(data) = &error.data {
        value["data"] = data.clone();
    }
    value
}

/// 128 random bits as 32 hex digits.
pub fn random_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}

/// What a call that may become a task asks and reports through, which
/// changes when it does: until then the request's own client and event
/// sink (the stateless era's: asks end the run with `input_required`);
/// after, the task's: asks wait for the client's answers through the task
/// (`tasks/update`, or a legacy `tasks/result`), progress messages become
/// the status message, and events go on to the sink the detach names, if
/// any (a legacy session's own outbox, where progress tokens stay valid).
pub struct Detachable {
    before: Option<Arc<dyn Client>>,
    /// Whether the request's client ended the run (it asked what the
    /// client must answer first): then the call cannot be detached.
    ended_run: Box<dyn Fn() -> bool + Send + Sync>,
    sink: Mutex<Option<EventSink>>,
    task: Mutex<Option<(Arc<Tasks>, Arc<Running>)>>,
    declared: Declared,
}

impl Detachable {
    /// A call that asks `before` and reports to `sink` until it is
    /// detached.
    pub fn new(
        before: Arc<dyn Client>,
        ended_run: impl Fn() -> bool + Send + Sync + 'static,
        sink: EventSink,
        declared: Declared,
    ) -> Arc<Detachable> {
        Arc::new(Detachable {
            before: Some(before),
            ended_run: Box::new(ended_run),
            sink: Mutex::new(Some(sink)),
            task: Mutex::new(None),
            declared,
        })
    }

    /// A call that is task `running`'s from the start, its events going to
    /// `sink`.
    pub fn in_task(
        tasks: Arc<Tasks>,
        running: Arc<Running>,
        sink: EventSink,
        declared: Declared,
    ) -> Arc<Detachable> {
        Arc::new(Detachable {
            before: None,
            ended_run: Box::new(|| false),
            sink: Mutex::new(Some(sink)),
            task: Mutex::new(Some((tasks, running))),
            declared,
        })
    }

    /// The call's event sink.
    pub fn events(self: &Arc<Self>) -> EventSink {
        let this = self.clone();
        Arc::new(move |event| {
            if let Some((_, running)) = &*this.task.lock().unwrap()
                && let CallEvent::Progress {
                    message: Some(message),
                    ..
                } = &event
            {
                running.progress(message);
            }
            let sink = this.sink.lock().unwrap().clone();
            if let Some(sink) = sink {
                sink(event);
            }
        })
    }

    /// Whether the call may still be detached (it did not end its run to
    /// ask the client).
    pub fn can_detach(&self) -> bool {
        !(self.ended_run)()
    }

    /// From now on the call is task `running`'s, its events going to
    /// `then`. The request's sink is let go: its outbox with it, so that
    /// the request's answer is its last message.
    pub fn detach(&self, tasks: Arc<Tasks>, running: Arc<Running>, then: Option<EventSink>) {
        *self.task.lock().unwrap() = Some((tasks, running));
        *self.sink.lock().unwrap() = then;
    }

    fn task(&self) -> Option<(Arc<Tasks>, Arc<Running>)> {
        self.task.lock().unwrap().clone()
    }
}

impl Client for Detachable {
    fn capabilities(&self) -> ClientCapabilities {
        self.declared.capabilities
    }

    fn ask(&self, requests: Vec<InputRequest>) -> AskFuture<'_> {
        match (self.task(), &self.before) {
            (Some((tasks, running)), _) => {
                Box::pin(ask_in_task(tasks, running, requests, self.declared))
            }
            (None, Some(before)) => before.ask(requests),
            (None, None) => unreachable!("a call without a client of its own starts in its task"),
        }
    }

    fn answers_at_once(&self) -> bool {
        self.task().is_none()
    }
}

/// A task's ask: its requests become the task's `inputRequests` (each key
/// unique over the task's life), and it waits for every answer.
async fn ask_in_task(
    tasks: Arc<Tasks>,
    running: Arc<Running>,
    requests: Vec<InputRequest>,
    declared: Declared,
) -> Result<Vec<Map<String, Value>>, AskError> {
    let mut wire_keys = Vec::with_capacity(requests.len());
    let mut asked = Map::new();
    {
        let mut used = running.keys.lock().unwrap();
        for mut request in requests {
            let mut key = request.key.clone();
            let mut n = 2;
            while used.contains(&key) {
                key = format!("{}-{n}", request.key);
                n += 1;
            }
            used.insert(key.clone());
            leave_out_undeclared_context(&mut request, Revision::V2026_07_28, declared);
            asked.insert(
                key.clone(),
                json!({ "method": request.kind.method(), "params": request.params }),
            );
            wire_keys.push(key);
        }
    }
    {
        let mut record = running.record.lock().unwrap();
        record.status = TaskStatus::InputRequired;
        record.input_requests = asked;
    }
    entered(TaskStatus::InputRequired);
    tasks.save(&running).await;
    // Answers come through `Running::deliver`, which also takes them off
    // the record (and its caller stores it): from `tasks/update` here, or
    // another replica's at the runner's heartbeat.
    let mut answers: HashMap<String, Map<String, Value>> = HashMap::new();
    loop {
        let delivered = std::mem::take(&mut *running.inbox.lock().unwrap());
        for (key, answer) in delivered {
            if let Value::Object(answer) = answer {
                answers.insert(key, answer);
            }
        }
        if wire_keys.iter().all(|key| answers.contains_key(key)) {
            return Ok(wire_keys
                .iter()
                .map(|key| answers.remove(key).unwrap_or_default())
                .collect());
        }
        running.delivered.notified().await;
    }
}

/// Counts a task entering `status` (the `corral_tasks_total` metric).
fn entered(status: TaskStatus) {
    metrics::counter!("corral_tasks_total", "status" => status.as_str()).increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_more_tasks_are_kept_than_the_bound_until_some_expire() {
        let tasks = Arc::new(Tasks::default().with_max_kept(2));
        let short = TaskPolicy {
            after: Duration::ZERO,
            ttl: Duration::from_millis(300),
        };
        assert!(tasks.create("a", "", short).await.is_some());
        assert!(tasks.create("b", "", short).await.is_some());
        assert!(
            tasks.create("c", "", short).await.is_none(),
            "past the bound"
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
        // The two have expired: the bound counts again, and has room.
        let kept = tasks.create("d", "", short).await.expect("room again");
        assert!(tasks.get(kept.id(), "").await.is_ok());
        assert!(tasks.get(kept.id(), "someone else").await.is_err());
    }
}
