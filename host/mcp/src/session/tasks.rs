//! The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) on a
//! session: a `tools/call` that becomes a task, and `tasks/get`,
//! `tasks/update` and `tasks/cancel`.
//!
//! The server decides, per call of a client that declared the extension on
//! that request (never for another), whether the call becomes a task: it
//! does when it is still running its tool's `task-after` (from its
//! plugin's manifest; zero: at once) after it started, unless the tool's
//! `taskSupport` is "forbidden". It is then answered with the task, and
//! goes on under its plugin's `task-timeout` (see [`crate::tasks`]). A
//! call that asked the client first (multi round-trip) ends its round as
//! it would anyway; the round that runs long becomes the task. A tool that
//! declares `taskSupport: "required"` is refused to a client that did not
//! declare the extension (-32021, naming it).
//!
//! Without sessions, a task belongs to whoever holds its id (its owner is
//! empty); 128 random bits make that the holder.
//!
//! # 2025-11-25: experimental tasks
//!
//! A legacy session of revision 2025-11-25 has the tasks of that revision,
//! client-directed: a call that asks with `params.task` (its tool declaring
//! `execution.taskSupport` "optional" or "required") is a task at once;
//! one that does not ask runs as a call ("required": -32601). The task
//! belongs to the session: `tasks/get`, the blocking `tasks/result`,
//! `tasks/list` (paged) and `tasks/cancel` see only the session's own. A
//! task that asks the client is `input_required` until the client calls
//! `tasks/result`, whose stream carries the requests (marked with the
//! task's `related-task`) and brings back the answers. Progress keeps
//! going to the session's own outbox, the progress token valid for the
//! task's life.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU8;
use std::time::Duration;
use tracing::Instrument as _;

use serde_json::{Map, Value, json};

use super::{
    Arrival, LOGGING_OFF, META_CLIENT_CAPABILITIES, META_SUBSCRIPTION_ID, Session, ToolCall,
};
use crate::client::Subject;
use crate::client::stateless::MISSING_REQUIRED_CLIENT_CAPABILITY;
use crate::jsonrpc::{self, RpcError};
use crate::shape;
use crate::tasks::{CallFuture, Detachable, Tasks, next_change};
use crate::{Revision, ToolHost};
use corral_tool::{
    CallContext, InputKind, InputRequest, LogLevel, TASKS_EXTENSION, TaskPolicy, TaskRecord,
    TaskStatus, TaskSupport,
};

use super::Outbox;

/// Who owns a task of the stateless era, which has no sessions (and, until
/// authorization, no principal): whoever holds its id.
const ANYONE_WITH_THE_ID: &str = "";

/// Whether a stateless request's `_meta` declares the tasks extension.
pub(super) fn declares_tasks(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(|meta| meta.get(META_CLIENT_CAPABILITIES))
        .and_then(|capabilities| capabilities.get("extensions"))
        .and_then(|extensions| extensions.get(TASKS_EXTENSION))
        .is_some_and(Value::is_object)
}

/// -32021 for a request that needs the tasks extension its client did not
/// declare.
fn tasks_not_declared(what: &str) -> RpcError {
    RpcError::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "Missing required client capability: {what} needs the extension \"{TASKS_EXTENSION}\"; declare it in `_meta` \"{META_CLIENT_CAPABILITIES}\".extensions"
        ),
    )
    .with_data(json!({
        "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } }
    }))
}

impl<H: ToolHost> Session<H> {
    /// A stateless `tools/call`: answered with its result, an
    /// `input_required` round, or (for a client that takes tasks, once the
    /// call runs long) a task.
    pub(super) async fn call_stateless(
        &self,
        call: ToolCall,
        revision: Revision,
        log_level: Option<LogLevel>,
        reply: Outbox,
    ) -> Result<Value, RpcError> {
        // Asks are answered from the call's own params (and its state).
        let client =
            self.stateless_client(&call.params, Subject::Tool(&call.name), &call.arguments)?;
        let log_level = Arc::new(AtomicU8::new(log_level.map_or(LOGGING_OFF, |l| l as u8)));
        let tool = self
            .host
            .tools()
            .iter()
            .find(|tool| tool.name == call.name)
            .cloned();
        let takes_tasks = declares_tasks(&call.params);
        let support = tool.as_ref().and_then(|tool| tool.task_support);
        if support == Some(TaskSupport::Required) && !takes_tasks {
            return Err(tasks_not_declared(&format!(
                "tool `{}` runs only as a task: it",
                call.name
            )));
        }
        let policy = match tool {
            Some(tool) if takes_tasks && support != Some(TaskSupport::Forbidden) => tool.task,
            _ => {
                let output = self
                    .call_tool(call, revision, log_level, reply, client.clone())
                    .await?;
                // A run that asked what the client must answer first ends
                // with that, whatever the tool returned after.
                return match client.outcome() {
                    Some(outcome) => outcome.into_answer(),
                    None => Ok(shape::call_result_json(&output, revision)),
                };
            }
        };
        let ToolCall {
            name,
            arguments,
            params,
        } = call;
        let declared = client.declared();
        let request_context = self.call_context(&params, &name, revision, log_level, reply, None);
        let ended_run = client.clone();
        let detachable = Detachable::new(
            client.clone(),
            move || ended_run.ends_run(),
            request_context.events.expect("a call's context has events"),
            declared,
        );
        let context = CallContext {
            events: Some(detachable.events()),
            client: Some(detachable.clone()),
            as_task: true,
            principal: self.caller(),
        };
        let host = self.host.clone();
        let called = name.clone();
        // In the request's span wherever it goes on: a task runs it in a
        // task of its own, where no span is current.
        let mut running_call: CallFuture =
            Box::pin(async move { host.call(&called, arguments, context).await }.in_current_span());
        // A task-after of zero makes the call a task before it starts.
        let finished = if policy.after.is_zero() {
            None
        } else {
            tokio::select! {
                biased;
                output = &mut running_call => Some(output),
                () = tokio::time::sleep(policy.after) => None,
            }
        };
        let output = match finished {
            Some(output) => output,
            None => {
                let tasks = self.options.tasks.clone();
                if detachable.can_detach()
                    && let Some(running) = tasks
                        .create(&name, &self.task_owner(ANYONE_WITH_THE_ID), policy)
                        .await
                {
                    detachable.detach(tasks.clone(), running.clone(), None);
                    let created = running.record();
                    tasks.spawn(running, running_call, revision);
                    return Ok(task_json(&created, "task"));
                }
                running_call.await
            }
        };
        let output = output.map_err(|corral_tool::UnknownTool| self.unknown_tool_error(&name))?;
        match client.outcome() {
            Some(outcome) => outcome.into_answer(),
            None => Ok(shape::call_result_json(&output, revision)),
        }
    }

    /// The tasks a listen stream asks to hear of (`notifications.taskIds`):
    /// those kept, at most [`MAX_LISTEN_TASKS`]; -32021 unless the request
    /// declares the extension.
    pub(super) async fn tasks_to_watch(
        &self,
        params: &Map<String, Value>,
        asked: Option<&Value>,
    ) -> Result<Vec<String>, RpcError> {
        let ids = match asked {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(ids)) if ids.len() <= MAX_LISTEN_TASKS => ids,
            Some(Value::Array(ids)) => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: notifications.taskIds names {} tasks; one listen stream watches at most {MAX_LISTEN_TASKS}",
                    ids.len()
                )));
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: notifications.taskIds must be an array of task ids",
                ));
            }
        };
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        if !declares_tasks(params) {
            return Err(tasks_not_declared("notifications.taskIds"));
        }
        let mut kept = Vec::new();
        for id in ids {
            let Value::String(id) = id else {
                return Err(RpcError::invalid_params(
                    "Invalid params: notifications.taskIds must be an array of task ids",
                ));
            };
            if !kept.contains(id)
                && self
                    .options
                    .tasks
                    .get(id, &self.task_owner(ANYONE_WITH_THE_ID))
                    .await
                    .is_ok()
            {
                kept.push(id.clone());
            }
        }
        Ok(kept)
    }

    /// Tells a listen stream (`subscription`, on `reply`) of each change to
    /// the tasks `ids`: the whole task, as `tasks/get` has it, now and at
    /// each change until it ends. A change of a task run here is told at
    /// once; one run on another replica, at the next heartbeat.
    pub(super) async fn watch_tasks(&self, ids: Vec<String>, reply: &Outbox, subscription: &Value) {
        let tasks = &self.options.tasks;
        let mut changes = tasks.changes();
        let mut watching: Vec<String> = ids;
        let mut told: HashMap<String, (TaskStatus, u64, Option<String>)> = HashMap::new();
        loop {
            let mut ended = Vec::new();
            for id in &watching {
                let Ok(record) = tasks.get(id, &self.task_owner(ANYONE_WITH_THE_ID)).await else {
                    // Expired: nothing more to tell.
                    ended.push(id.clone());
                    continue;
                };
                let state = (
                    record.status,
                    record.updated_ms,
                    record.status_message.clone(),
                );
                if told.get(id) != Some(&state) {
                    let mut task = task_json(&record, "complete");
                    if let Value::Object(fields) = &mut task {
                        fields.remove("resultType");
                    }
                    task["_meta"] = json!({ META_SUBSCRIPTION_ID: subscription });
                    reply(jsonrpc::notification("notifications/tasks", Some(task)));
                    told.insert(id.clone(), state);
                }
                if record.status.is_terminal() {
                    ended.push(id.clone());
                }
            }
            watching.retain(|id| !ended.contains(id));
            if watching.is_empty() {
                return std::future::pending().await;
            }
            let watched = |id: &str| watching.iter().any(|watched| watched == id);
            next_change(&mut changes, watched, Some(crate::tasks::HEARTBEAT)).await;
        }
    }

    /// `tasks/get`, `tasks/update` or `tasks/cancel`, for a client that
    /// declared the extension on the request.
    pub(super) async fn task_method(
        &self,
        method: &str,
        params: &Map<String, Value>,
    ) -> Result<Value, RpcError> {
        if !declares_tasks(params) {
            return Err(tasks_not_declared(method));
        }
        let id = task_id(method, params)?;
        let tasks = &self.options.tasks;
        match method {
            "tasks/get" => {
                let record = tasks.get(id, &self.task_owner(ANYONE_WITH_THE_ID)).await?;
                Ok(task_json(&record, "complete"))
            }
            "tasks/update" => {
                let responses = match params.get("inputResponses") {
                    Some(Value::Object(responses)) => responses.clone(),
                    _ => {
                        return Err(RpcError::invalid_params(
                            "Invalid params: tasks/update needs `inputResponses`, an object of answers keyed as the task's `inputRequests`",
                        ));
                    }
                };
                if let Some((key, _)) = responses.iter().find(|(_, answer)| !answer.is_object()) {
                    return Err(RpcError::invalid_params(format!(
                        "Invalid params: inputResponses[{key:?}] must be an object (the result of the request it answers)"
                    )));
                }
                tasks
                    .update(id, &self.task_owner(ANYONE_WITH_THE_ID), responses)
                    .await?;
                Ok(json!({}))
            }
            _ => {
                tasks
                    .cancel(id, &self.task_owner(ANYONE_WITH_THE_ID))
                    .await?;
                Ok(json!({}))
            }
        }
    }
}

/// The most tasks one listen stream watches.
pub(super) const MAX_LISTEN_TASKS: usize = 100;
/// Tasks of a legacy session listed per `tasks/list` page.
const LIST_PAGE: usize = 50;
/// The most task ids a legacy session remembers for `tasks/list` (the
/// oldest are forgotten first; they expire anyway).
pub(super) const MAX_SESSION_TASKS: usize = 10_000;
/// How long a blocking `tasks/result` waits between two looks at a task
/// that runs on another replica (one that runs here wakes it at once).
const RESULT_RECHECK: Duration = Duration::from_millis(250);
/// How long a legacy `tasks/cancel` waits for the task to stop.
const CANCEL_WAIT: Duration = Duration::from_secs(5);
/// Marks what a 2025-11-25 message says about a task.
const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

impl<H: ToolHost> Session<H> {
    /// 2025-11-25: how `call` is to run as a task, when it asks to be one
    /// (`params.task`, with the `ttl` it asks for) and its tool allows it;
    /// -32601 when the tool refuses that (or requires a task not asked for).
    pub(super) fn legacy_task_request(
        &self,
        call: &ToolCall,
    ) -> Result<Option<TaskPolicy>, RpcError> {
        let requested = match call.params.get("task") {
            None | Some(Value::Null) => None,
            Some(Value::Object(task)) => Some(task.get("ttl").and_then(Value::as_u64)),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `task` must be an object, such as {\"ttl\": 60000}",
                ));
            }
        };
        let tools = self.host.tools();
        // An unknown tool is the call's own error.
        let Some(tool) = tools.iter().find(|tool| tool.name == call.name) else {
            return Ok(None);
        };
        match (requested, tool.task_support) {
            (Some(_), None | Some(TaskSupport::Forbidden)) => Err(RpcError::new(
                jsonrpc::code::METHOD_NOT_FOUND,
                format!(
                    "Method not found: tool `{}` does not run as a task (its execution.taskSupport is \"forbidden\"); call it without `task`",
                    call.name
                ),
            )),
            (None, Some(TaskSupport::Required)) => Err(RpcError::new(
                jsonrpc::code::METHOD_NOT_FOUND,
                format!(
                    "Method not found: tool `{}` runs only as a task (its execution.taskSupport is \"required\"); call it with `task`, such as {{\"ttl\": 60000}}",
                    call.name
                ),
            )),
            (None, _) => Ok(None),
            (Some(ttl), _) => {
                let mut policy = tool.task;
                if let Some(ttl) = ttl {
                    policy.ttl = Duration::from_millis(ttl)
                        .clamp(Duration::from_secs(1), corral_tool::task::MAX_TASK_TTL);
                }
                Ok(Some(policy))
            }
        }
    }

    /// 2025-11-25: starts `call` as a task of this session's, and answers
    /// with it (`CreateTaskResult`).
    pub(super) async fn start_legacy_task(
        &self,
        call: ToolCall,
        policy: TaskPolicy,
        revision: Revision,
        log_level: Arc<AtomicU8>,
    ) -> Result<Value, RpcError> {
        let tasks = self.options.tasks.clone();
        let Some(running) = tasks
            .create(&call.name, &self.task_owner(&self.owner), policy)
            .await
        else {
            return Err(RpcError::new(
                jsonrpc::code::INTERNAL_ERROR,
                "the server keeps as many tasks as it may: try again later, or call without `task`",
            ));
        };
        {
            let mut ids = self.task_ids.lock().unwrap();
            if ids.len() >= MAX_SESSION_TASKS {
                ids.pop_front();
            }
            ids.push_back(running.id().to_owned());
        }
        let ToolCall {
            name,
            arguments,
            params,
        } = call;
        // The request is answered at once: what the call reports goes to
        // the session's own outbox.
        let sink = self
            .call_context(
                &params,
                &name,
                revision,
                log_level,
                self.notify.clone(),
                None,
            )
            .events
            .expect("a call's context has events");
        let declared = *self.client_capabilities.lock().unwrap();
        let detachable = Detachable::in_task(tasks.clone(), running.clone(), sink, declared);
        let context = CallContext {
            events: Some(detachable.events()),
            client: Some(detachable),
            as_task: true,
            principal: self.caller(),
        };
        let host = self.host.clone();
        let call: CallFuture =
            Box::pin(async move { host.call(&name, arguments, context).await }.in_current_span());
        let created = running.record();
        // Status notifications follow from the first change on: told to
        // the session's own outbox, as its progress is.
        tokio::spawn(tell_status(
            tasks.clone(),
            tasks.changes(),
            created.id.clone(),
            self.task_owner(&self.owner),
            self.notify.clone(),
        ));
        tasks.spawn(running, call, revision);
        Ok(json!({ "task": legacy_task_json(&created) }))
    }

    /// 2025-11-25: `tasks/get`, `tasks/result`, `tasks/list` or
    /// `tasks/cancel` (request `id`, answered on `reply`), for this
    /// session's tasks.
    pub(super) async fn legacy_task_method(
        &self,
        method: &str,
        params: &Map<String, Value>,
        id: &Value,
        arrival: Arrival,
        reply: Outbox,
    ) -> Result<Value, RpcError> {
        let tasks = &self.options.tasks;
        if method == "tasks/list" {
            return self.list_tasks(params).await;
        }
        let task = task_id(method, params)?;
        match method {
            "tasks/get" => Ok(legacy_task_json(
                &tasks.get(task, &self.task_owner(&self.owner)).await?,
            )),
            "tasks/result" => self.task_result(task, id, arrival, reply).await,
            _ => {
                let record = tasks.get(task, &self.task_owner(&self.owner)).await?;
                if record.status.is_terminal() {
                    return Err(RpcError::invalid_params(format!(
                        "Invalid params: task {task} has ended ({}); it cannot be cancelled",
                        record.status.as_str()
                    )));
                }
                let mut changes = tasks.changes();
                tasks.cancel(task, &self.task_owner(&self.owner)).await?;
                // The answer states the task cancelled (or, had it ended
                // first, as it ended).
                let started = tokio::time::Instant::now();
                loop {
                    let record = tasks.get(task, &self.task_owner(&self.owner)).await?;
                    if record.status.is_terminal() || started.elapsed() > CANCEL_WAIT {
                        return Ok(legacy_task_json(&record));
                    }
                    next_change(&mut changes, |id| id == task, Some(RESULT_RECHECK)).await;
                }
            }
        }
    }

    /// The blocking `tasks/result`: once the task ends, what its call
    /// would have answered. Meanwhile it carries the task's questions to
    /// the client (on this request's stream) and its answers back.
    async fn task_result(
        &self,
        task: &str,
        id: &Value,
        arrival: Arrival,
        reply: Outbox,
    ) -> Result<Value, RpcError> {
        let tasks = &self.options.tasks;
        let mut changes = tasks.changes();
        loop {
            let record = tasks.get(task, &self.task_owner(&self.owner)).await?;
            match record.status {
                TaskStatus::Completed => {
                    let mut result = record.result.unwrap_or_else(|| json!({}));
                    result["_meta"][META_RELATED_TASK] = json!({ "taskId": task });
                    return Ok(result);
                }
                TaskStatus::Failed => return Err(stored_error(record.error.as_ref())),
                TaskStatus::Cancelled => {
                    return Err(RpcError::new(
                        jsonrpc::code::INTERNAL_ERROR,
                        format!("Task {task} was cancelled"),
                    ));
                }
                TaskStatus::InputRequired if !record.input_requests.is_empty() => {
                    let (keys, requests) = client_requests(task, &record.input_requests);
                    let client = self.legacy_client(id, self.revision(), arrival, &reply);
                    let answers = client.ask(requests).await.map_err(|err| {
                        RpcError::new(
                            jsonrpc::code::INTERNAL_ERROR,
                            format!("task {task} asked the client, which could not answer: {err}"),
                        )
                    })?;
                    let answers: Map<String, Value> = keys
                        .into_iter()
                        .zip(answers)
                        .map(|(key, answer)| (key, Value::Object(answer)))
                        .collect();
                    tasks
                        .update(task, &self.task_owner(&self.owner), answers)
                        .await?;
                }
                TaskStatus::Working | TaskStatus::InputRequired => {
                    next_change(&mut changes, |id| id == task, Some(RESULT_RECHECK)).await;
                }
            }
        }
    }

    /// `tasks/list`: this session's tasks still kept, a page at a time.
    async fn list_tasks(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(cursor)) => cursor.parse::<usize>().map_err(|_| {
                RpcError::invalid_params("Invalid params: `cursor` is not one this server gave")
            })?,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `cursor` must be a string",
                ));
            }
        };
        let ids: Vec<String> = self
            .task_ids
            .lock()
            .unwrap()
            .iter()
            .skip(start)
            .take(LIST_PAGE + 1)
            .cloned()
            .collect();
        let mut listed = Vec::new();
        for task in ids.iter().take(LIST_PAGE) {
            // An expired task is gone from the list too.
            if let Ok(record) = self
                .options
                .tasks
                .get(task, &self.task_owner(&self.owner))
                .await
            {
                listed.push(legacy_task_json(&record));
            }
        }
        let mut result = json!({ "tasks": listed });
        if ids.len() > LIST_PAGE {
            result["nextCursor"] = (start + LIST_PAGE).to_string().into();
        }
        Ok(result)
    }
}

/// The `taskId` a `tasks/*` request names, or -32602.
fn task_id<'a>(method: &str, params: &'a Map<String, Value>) -> Result<&'a str, RpcError> {
    match params.get("taskId") {
        Some(Value::String(id)) => Ok(id),
        _ => Err(RpcError::invalid_params(format!(
            "Invalid params: {method} needs `taskId`, the string a task-creating call returned"
        ))),
    }
}

/// 2025-11-25's `notifications/tasks/status`: the task `id` (run here)
/// told to `notify` at each change of its status, until it ends. `changes`
/// is subscribed before the task starts, so that no change is missed.
async fn tell_status(
    tasks: Arc<Tasks>,
    mut changes: tokio::sync::broadcast::Receiver<String>,
    id: String,
    owner: String,
    notify: Outbox,
) {
    let mut told = TaskStatus::Working;
    loop {
        // A task run here: its every change is told on `changes`.
        next_change(&mut changes, |changed| changed == id, None).await;
        let Ok(record) = tasks.get(&id, &owner).await else {
            return;
        };
        if record.status != told {
            told = record.status;
            notify(jsonrpc::notification(
                "notifications/tasks/status",
                Some(legacy_task_json(&record)),
            ));
        }
        if record.status.is_terminal() {
            return;
        }
    }
}

/// The JSON-RPC error a failed task stored.
fn stored_error(error: Option<&Value>) -> RpcError {
    let code = error
        .and_then(|error| error.get("code"))
        .and_then(Value::as_i64)
        .unwrap_or(jsonrpc::code::INTERNAL_ERROR);
    let message = error
        .and_then(|error| error.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the task failed");
    let error_out = RpcError::new(code, message);
    match error.and_then(|error| error.get("data")) {
        Some(data) => error_out.with_data(data.clone()),
        None => error_out,
    }
}

/// A task's outstanding input requests as requests to a legacy client
/// (each marked with the task it is for), with their keys in order.
fn client_requests(task: &str, asked: &Map<String, Value>) -> (Vec<String>, Vec<InputRequest>) {
    asked
        .iter()
        .filter_map(|(key, request)| {
            let mut params = request.get("params")?.as_object()?.clone();
            let kind = match request.get("method")?.as_str()? {
                "elicitation/create" if params.get("mode") == Some(&json!("url")) => {
                    InputKind::ElicitUrl
                }
                "elicitation/create" => InputKind::ElicitForm,
                "sampling/createMessage" => InputKind::Sample,
                "roots/list" => InputKind::ListRoots,
                _ => return None,
            };
            let meta = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            meta[META_RELATED_TASK] = json!({ "taskId": task });
            Some((
                key.clone(),
                InputRequest {
                    key: key.clone(),
                    kind,
                    params,
                },
            ))
        })
        .unzip()
}

/// A task as 2025-11-25 has it (`ttl` and `pollInterval`, no result).
fn legacy_task_json(record: &TaskRecord) -> Value {
    let mut task = json!({
        "taskId": record.id,
        "status": record.status.as_str(),
        "createdAt": iso8601(record.created_ms),
        "lastUpdatedAt": iso8601(record.updated_ms),
        "ttl": record.ttl_ms,
        "pollInterval": record.poll_interval_ms,
    });
    if let Some(message) = &record.status_message {
        task["statusMessage"] = message.as_str().into();
    }
    task
}

/// A task as the wire has it: a `CreateTaskResult` (`result_type` "task":
/// the task alone) or a `tasks/get` result ("complete": with its result,
/// error or input requests, as its status has them).
fn task_json(record: &TaskRecord, result_type: &str) -> Value {
    let mut task = json!({
        "resultType": result_type,
        "taskId": record.id,
        "status": record.status.as_str(),
        "createdAt": iso8601(record.created_ms),
        "lastUpdatedAt": iso8601(record.updated_ms),
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": record.poll_interval_ms,
    });
    if let Some(message) = &record.status_message {
        task["statusMessage"] = message.as_str().into();
    }
    if result_type == "task" {
        return task;
    }
    match record.status {
        TaskStatus::InputRequired => {
            task["inputRequests"] = Value::Object(record.input_requests.clone());
        }
        TaskStatus::Completed => {
            task["result"] = record.result.clone().unwrap_or_else(|| json!({}));
        }
        TaskStatus::Failed => {
            task["error"] = record.error.clone().unwrap_or_else(
                || json!({ "code": jsonrpc::code::INTERNAL_ERROR, "message": "the task failed" }),
            );
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    task
}

/// Milliseconds since the Unix epoch as an ISO 8601 UTC timestamp, such as
/// `2026-11-29T10:30:00.123Z`.
fn iso8601(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(ms.min(i64::MAX as u64) as i64)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_795_948_201_007), "2026-11-29T10:30:01.007Z");
    }

    #[test]
    fn only_a_declared_extension_takes_tasks() {
        let with = |meta: Value| json!({ "_meta": meta }).as_object().unwrap().clone();
        assert!(declares_tasks(&with(json!({
            META_CLIENT_CAPABILITIES: { "extensions": { TASKS_EXTENSION: {} } }
        }))));
        assert!(!declares_tasks(&with(json!({
            META_CLIENT_CAPABILITIES: { "extensions": {} }
        }))));
        assert!(!declares_tasks(&with(json!({
            META_CLIENT_CAPABILITIES: { "tasks": {} }
        }))));
    }
}
