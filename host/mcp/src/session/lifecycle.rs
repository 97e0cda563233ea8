//! A legacy session's lifecycle: `initialize` (the revision negotiated,
//! the capabilities declared) and `logging/setLevel`.

use super::*;

impl<H: ToolHost> Session<H> {
    /// Negotiates the revision of `initialize` `request`, or the response
    /// refusing it.
    pub(super) fn negotiate(&self, request: &Request) -> Result<Revision, Value> {
        let mut negotiated = self.revision.lock().unwrap();
        if negotiated.is_some() {
            let error =
                RpcError::invalid_request("Invalid Request: the session is already initialized");
            return Err(jsonrpc::error_response(request.id.clone(), &error));
        }
        let requested = request
            .params
            .get("protocolVersion")
            .and_then(Value::as_str);
        let revision = Revision::negotiate(requested);
        *negotiated = Some(revision);
        *self.client_capabilities.lock().unwrap() = request
            .params
            .get("capabilities")
            .map(Declared::from_json)
            .unwrap_or_default();
        let client = request
            .params
            .get("clientInfo")
            .map(Value::to_string)
            .unwrap_or_default();
        tracing::info!(
            "initialized: protocol {revision} (client asked for {requested:?}) {client}"
        );
        Ok(revision)
    }

    /// The `initialize` result for `revision`, declaring what the host
    /// offers now (it is ready).
    pub(super) fn initialize_result(&self, id: Value, revision: Revision) -> Value {
        let offers = self.host.offers();
        *self.offered.lock().unwrap() = offers;
        let mut server_info = server_info();
        if !revision.has_structured_output()
            && let Some(fields) = server_info.as_object_mut()
        {
            // `Implementation.title` arrived in 2025-06-18.
            fields.remove("title");
        }
        jsonrpc::response(
            id,
            json!({
                "protocolVersion": revision.as_str(),
                "capabilities": self.capabilities(offers, revision),
                "serverInfo": server_info,
            }),
        )
    }

    /// The server's capabilities in `revision` (MCP `ServerCapabilities`):
    /// tools and logging always, the rest only when offered. `subscribe`
    /// means `resources/subscribe` in the legacy era and
    /// `resourceSubscriptions` on listen streams in 2026-07-28; both are
    /// served. `completions` arrived in 2025-03-26 (before, completion was
    /// served undeclared).
    pub(super) fn capabilities(&self, offers: Offers, revision: Revision) -> Value {
        let list_changed = self.options.list_changed;
        let mut capabilities = json!({
            "tools": { "listChanged": list_changed },
            "logging": {},
        });
        if offers.resources {
            capabilities["resources"] = json!({ "subscribe": true, "listChanged": list_changed });
        }
        if offers.prompts {
            capabilities["prompts"] = json!({ "listChanged": list_changed });
        }
        if offers.completions && revision >= Revision::V2025_03_26 {
            capabilities["completions"] = json!({});
        }
        if revision.has_task_support() {
            // 2025-11-25's experimental tasks: tools/call, listed and
            // cancelled.
            capabilities["tasks"] = json!({
                "list": {},
                "cancel": {},
                "requests": { "tools": { "call": {} } },
            });
        }
        if revision >= Revision::V2026_07_28 {
            capabilities["extensions"] = json!({ corral_tool::TASKS_EXTENSION: {} });
        }
        capabilities
    }

    pub(super) fn set_log_level(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let level = params
            .get("level")
            .and_then(Value::as_str)
            .and_then(LogLevel::parse)
            .ok_or_else(|| {
                RpcError::invalid_params(
                    "Invalid params: `level` must be one of debug, info, notice, warning, error, critical, alert, emergency",
                )
            })?;
        self.log_level.store(level as u8, Ordering::Relaxed);
        // A client that asks for log messages takes them, whether or not
        // it said `notifications/initialized` first.
        self.reports_open.store(true, Ordering::Relaxed);
        Ok(json!({}))
    }
}
