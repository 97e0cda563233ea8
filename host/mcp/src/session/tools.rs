//! Tools in either era: `tools/list`, running a `tools/call`, and what a
//! running call reports.

use super::*;

impl<H: ToolHost> Session<H> {
    pub(super) fn list_tools(
        &self,
        params: &Map<String, Value>,
        revision: Revision,
    ) -> Result<Value, RpcError> {
        list_page(
            &self.visible(&self.host.tools(), |tool| Target::Tool(&tool.name)),
            params,
            "tools",
            self.options.page_size,
            |tool| tool.held_bytes,
            |tool| shape::tool_json(tool, revision),
        )
    }

    /// Runs `call` in either era: its events go to `reply` (log messages at
    /// or above `log_level`), and its tool may ask `client`, which is all
    /// that differs between the eras (with how the output becomes the
    /// answer, which the caller decides).
    pub(super) async fn call_tool(
        &self,
        call: ToolCall,
        revision: Revision,
        log_level: Arc<AtomicU8>,
        reply: Outbox,
        client: Arc<dyn Client>,
    ) -> Result<CallOutput, RpcError> {
        let ToolCall {
            name,
            arguments,
            params,
        } = call;
        let context = self.call_context(&params, &name, revision, log_level, reply, Some(client));
        self.host
            .call(&name, arguments, context)
            .await
            .map_err(|UnknownTool| self.unknown_tool_error(&name))
    }

    /// The `-32602` for a call of `name`, which no plugin serves: the names
    /// close to it, and the plugins that failed to load.
    pub(super) fn unknown_tool_error(&self, name: &str) -> RpcError {
        RpcError::invalid_params(unknown_tool(
            name,
            &self.host.tools(),
            &self.host.not_loaded(),
        ))
    }
}

/// One `tools/call`, as either era reads it.
pub(super) struct ToolCall {
    /// The tool's name.
    pub(super) name: String,
    pub(super) arguments: Map<String, Value>,
    /// The call's other params: its `_meta` (with the progress token), and
    /// in the stateless era `requestState` and `inputResponses`.
    pub(super) params: Map<String, Value>,
}

impl ToolCall {
    /// The call whose params are `params`, or the error for params that
    /// name no tool or bring arguments that are no object.
    pub(super) fn from_params(mut params: Map<String, Value>) -> Result<ToolCall, RpcError> {
        let Some(Value::String(name)) = params.remove("name") else {
            return Err(RpcError::invalid_params(
                "Invalid params: tools/call needs a string `name`",
            ));
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `arguments` must be an object",
                ));
            }
        };
        Ok(ToolCall {
            name,
            arguments,
            params,
        })
    }
}

/// Where a call's events go (to `reply`): progress notifications for the
/// request's progress token (increasing values only, as the spec requires),
/// and log notifications at or above `log_level` (the session's, or a
/// stateless request's own).
pub(super) fn event_sink(
    reply: Outbox,
    progress_token: Option<Value>,
    tool: &str,
    revision: Revision,
    log_level: Arc<AtomicU8>,
) -> EventSink {
    let logger = tool.to_string();
    let last_progress = Mutex::new(f64::NEG_INFINITY);
    Arc::new(move |event| match event {
        CallEvent::Progress {
            done,
            total,
            message,
        } => {
            let Some(token) = &progress_token else { return };
            let mut last = last_progress.lock().unwrap();
            if !done.is_finite() || done <= *last {
                return;
            }
            *last = done;
            let mut params = json!({ "progressToken": token, "progress": done });
            if let Some(total) = total.filter(|t| t.is_finite()) {
                params["total"] = total.into();
            }
            if let Some(message) = message.filter(|_| revision >= Revision::V2025_03_26) {
                params["message"] = message.into();
            }
            reply(jsonrpc::notification(
                "notifications/progress",
                Some(params),
            ));
        }
        CallEvent::Log { level, message } => {
            if (level as u8) < log_level.load(Ordering::Relaxed) {
                return;
            }
            let params = json!({ "level": level.as_str(), "logger": logger, "data": message });
            reply(jsonrpc::notification("notifications/message", Some(params)));
        }
        // Only 2025-11-25 has the notification (2026-07-28 dropped it: a
        // retried call finds the interaction complete instead).
        CallEvent::ElicitationComplete { id } => {
            if revision == Revision::V2025_11_25 {
                let params = json!({ "elicitationId": id });
                reply(jsonrpc::notification(
                    "notifications/elicitation/complete",
                    Some(params),
                ));
            }
        }
    })
}

/// The error for a tool that is not served: with the served names close to
/// it, so that a model that used a plugin's own name for a renamed tool, or
/// mistyped one, can retry with the right one, and the plugins that failed
/// to load, whose tool it may be.
fn unknown_tool(
    name: &str,
    served: &[corral_tool::ToolDef],
    not_loaded: &[corral_tool::NotLoaded],
) -> String {
    let hint = corral_tool::unknown_tool_hint(name, served.iter().map(|tool| &*tool.name));
    let not_loaded = corral_tool::unknown_tool_not_loaded(not_loaded);
    format!("Unknown tool: {name}{hint}{not_loaded}")
}
