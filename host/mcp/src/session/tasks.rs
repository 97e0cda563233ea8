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

use std::sync::Arc;
use std::sync::atomic::AtomicU8;

use serde_json::{Map, Value, json};

use super::{LOGGING_OFF, META_CLIENT_CAPABILITIES, Session, ToolCall, unknown_tool};
use crate::client::stateless::MISSING_REQUIRED_CLIENT_CAPABILITY;
use crate::client::{Declared, Subject};
use crate::jsonrpc::{self, RpcError};
use crate::shape;
use crate::tasks::{CallFuture, Detachable};
use crate::{Revision, ToolHost};
use corral_tool::{CallContext, LogLevel, TASKS_EXTENSION, TaskRecord, TaskStatus, TaskSupport};

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
        let declared = params
            .get("_meta")
            .and_then(|meta| meta.get(META_CLIENT_CAPABILITIES))
            .map(Declared::from_json)
            .unwrap_or_default();
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
        };
        let host = self.host.clone();
        let called = name.clone();
        let mut running_call: CallFuture =
            Box::pin(async move { host.call(&called, arguments, context).await });
        let finished = tokio::select! {
            biased;
            output = &mut running_call => Some(output),
            () = tokio::time::sleep(policy.after) => None,
        };
        let output = match finished {
            Some(output) => output,
            None => {
                let tasks = self.options.tasks.clone();
                if detachable.can_detach()
                    && let Some(running) = tasks.create(&name, ANYONE_WITH_THE_ID, policy).await
                {
                    detachable.detach(tasks.clone(), running.clone());
                    let created = running.record();
                    tasks.spawn(running, running_call, revision);
                    return Ok(task_json(&created, "task"));
                }
                running_call.await
            }
        };
        let output = output.map_err(|corral_tool::UnknownTool| {
            RpcError::invalid_params(unknown_tool(
                &name,
                &self.host.tools(),
                &self.host.not_loaded(),
            ))
        })?;
        match client.outcome() {
            Some(outcome) => outcome.into_answer(),
            None => Ok(shape::call_result_json(&output, revision)),
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
        let id = match params.get("taskId") {
            Some(Value::String(id)) => id,
            _ => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: {method} needs `taskId`, the string a task-creating call returned"
                )));
            }
        };
        let tasks = &self.options.tasks;
        match method {
            "tasks/get" => {
                let record = tasks.get(id, ANYONE_WITH_THE_ID).await?;
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
                tasks.update(id, ANYONE_WITH_THE_ID, responses).await?;
                Ok(json!({}))
            }
            _ => {
                tasks.cancel(id, ANYONE_WITH_THE_ID).await?;
                Ok(json!({}))
            }
        }
    }
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
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        ms % 1000
    )
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
