//! The stateless era (2026-07-28): what makes a request one, its
//! dispatch, `server/discover` and `subscriptions/listen` streams.

use super::*;

impl<H: ToolHost> Session<H> {
    /// The client of a stateless request about `subject` (with `arguments`),
    /// answering from its own params and state.
    pub(super) fn stateless_client(
        &self,
        params: &Map<String, Value>,
        subject: Subject<'_>,
        arguments: &Map<String, Value>,
    ) -> Result<Arc<StatelessClient>, RpcError> {
        // Declared in its `_meta` (checked by `Era::of`: an object).
        let declared = params
            .get("_meta")
            .and_then(|meta| meta.get(META_CLIENT_CAPABILITIES))
            .map(Declared::from_json)
            .unwrap_or_default();
        Ok(Arc::new(StatelessClient::for_request(
            params,
            declared,
            subject,
            arguments,
            self.options.state_key.clone(),
            self.options.state_ttl,
        )?))
    }

    /// A stateless request other than `subscriptions/listen`.
    pub(super) async fn dispatch_stateless(
        &self,
        request: Request,
        revision: Revision,
        log_level: Option<LogLevel>,
        reply: Outbox,
    ) -> Result<Value, RpcError> {
        match request.method.as_str() {
            "server/discover" => {
                self.host.ready().await;
                Ok(self.discover())
            }
            "tools/list" => {
                self.host.ready().await;
                let result = self.list_tools(&request.params, revision)?;
                Ok(cacheable(
                    result,
                    self.list_ttl_ms(),
                    self.list_cache_scope(),
                ))
            }
            "tools/call" => {
                self.host.ready().await;
                let call = ToolCall::from_params(request.params)?;
                self.check_reach(Target::Tool(&call.name))?;
                self.call_stateless(call, revision, log_level, reply).await
            }
            method @ ("tasks/get" | "tasks/update" | "tasks/cancel") => {
                self.task_method(method, &request.params).await
            }
            method @ ("ping"
            | "logging/setLevel"
            | "resources/subscribe"
            | "resources/unsubscribe") => Err(RpcError::new(
                jsonrpc::code::METHOD_NOT_FOUND,
                format!("Method not found: {method} is not part of protocol revision {revision}"),
            )),
            method if is_offered_method(method) => {
                self.host.ready().await;
                if !offers_method(self.host.offers(), method) {
                    return Err(RpcError::method_not_found(method));
                }
                let log_level = Arc::new(AtomicU8::new(log_level.map_or(LOGGING_OFF, |l| l as u8)));
                let params = request.params;
                match method {
                    "resources/read" => {
                        let uri = params::uri(&params, method)?;
                        self.check_reach(Target::Resource(&uri))?;
                        let client =
                            self.stateless_client(&params, Subject::Resource(&uri), &Map::new())?;
                        let read = self
                            .read(&uri, &params, revision, log_level, reply, client.clone())
                            .await;
                        // A read that asked what the client must answer
                        // first ends with that, whatever the plugin did after.
                        match client.outcome() {
                            Some(outcome) => outcome.into_answer(),
                            None => read
                                .map(|items| {
                                    let result = shape::read_result_json(&items);
                                    cacheable(result, READ_TTL_MS, self.read_cache_scope())
                                })
                                .map_err(|error| read_error(error, &uri, revision)),
                        }
                    }
                    "prompts/get" => {
                        let get = PromptGet::from_params(params)?;
                        self.check_reach(Target::Prompt(&get.name))?;
                        self.check_prompt(&get)?;
                        let client = self.stateless_client(
                            &get.params,
                            Subject::Prompt(&get.name),
                            &get.arguments_json,
                        )?;
                        let output = self
                            .get_prompt(&get, revision, log_level, reply, client.clone())
                            .await;
                        match client.outcome() {
                            Some(outcome) => outcome.into_answer(),
                            None => output
                                .map(|output| shape::prompt_result_json(&output, revision))
                                .map_err(|error| self.prompt_error(error, &get.name)),
                        }
                    }
                    "completion/complete" => {
                        self.serve_asking_nothing(method, &params, revision, log_level, reply)
                            .await
                    }
                    list => {
                        let result = self
                            .serve_asking_nothing(list, &params, revision, log_level, reply)
                            .await?;
                        Ok(cacheable(
                            result,
                            self.list_ttl_ms(),
                            self.list_cache_scope(),
                        ))
                    }
                }
            }
            method => Err(RpcError::method_not_found(method)),
        }
    }

    /// Who may share a cached list: anyone, unless what it shows depends
    /// on the caller's scopes.
    fn list_cache_scope(&self) -> &'static str {
        if self.caller().is_some() {
            "private"
        } else {
            LIST_CACHE_SCOPE
        }
    }

    /// Who may share a cached read: as a list, a read under authorization
    /// is the caller's own (a per-principal plugin's resources are).
    fn read_cache_scope(&self) -> &'static str {
        if self.caller().is_some() {
            "private"
        } else {
            READ_CACHE_SCOPE
        }
    }

    /// How long a client may cache a list: see [`LIST_TTL_MS_WATCHING`].
    pub(super) fn list_ttl_ms(&self) -> u64 {
        if self.options.list_changed {
            LIST_TTL_MS_WATCHING
        } else {
            LIST_TTL_MS_FIXED
        }
    }

    /// `server/discover`: what a stateless client needs to know first.
    /// (`_meta` names the server, as on every stateless result; the body's
    /// `serverInfo` is kept for clients of the drafts that read it there.)
    pub(super) fn discover(&self) -> Value {
        let supported: Vec<&str> = Revision::STATELESS.iter().map(|r| r.as_str()).collect();
        json!({
            "supportedVersions": supported,
            "capabilities": self.capabilities(self.host.offers(), Revision::V2026_07_28),
            "serverInfo": server_info(),
            // A cacheable result (the MUST of DiscoverResult).
            "ttlMs": DISCOVER_TTL_MS,
            "cacheScope": DISCOVER_CACHE_SCOPE,
        })
    }

    /// A `subscriptions/listen` stream: acknowledged at once, then open until
    /// the client cancels it (its work dropped, unanswered) or the session
    /// ends it: then the stream is told, and its completion result (to be
    /// marked complete) is returned.
    pub(super) async fn listen(&self, request: Request, reply: Outbox) -> Result<Value, RpcError> {
        let params = &request.params;
        let filter = params.get("notifications").and_then(Value::as_object);
        let asked = |key: &str| {
            filter
                .and_then(|filter| filter.get(key))
                .or_else(|| params.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let uris = params::subscriptions(
            filter
                .and_then(|filter| filter.get("resourceSubscriptions"))
                .or_else(|| params.get("resourceSubscriptions")),
        )?;
        let task_ids = self
            .tasks_to_watch(params, filter.and_then(|filter| filter.get("taskIds")))
            .await?;
        // What is honoured depends on what is offered, known once ready.
        self.host.ready().await;
        let offers = self.host.offers();
        let watching = self.options.list_changed;
        let listener = Listener {
            id: request.id.clone(),
            tools_list_changed: asked("toolsListChanged") && watching,
            resources_list_changed: asked("resourcesListChanged") && watching && offers.resources,
            prompts_list_changed: asked("promptsListChanged") && watching && offers.prompts,
            // Only the resources the caller may read: the acknowledgement
            // says which are honoured.
            resource_subscriptions: if offers.resources {
                uris.into_iter()
                    .filter(|uri| self.reaches(Target::Resource(uri)))
                    .collect()
            } else {
                BTreeSet::new()
            },
            reply: reply.clone(),
        };
        // The acknowledgement states the filter the server honours: list
        // changes when asked for, offered, and the server watches its
        // folder; the resources asked for when it serves resources.
        let mut honoured = Map::new();
        for (key, honours) in [
            ("toolsListChanged", listener.tools_list_changed),
            ("promptsListChanged", listener.prompts_list_changed),
            ("resourcesListChanged", listener.resources_list_changed),
        ] {
            if honours {
                honoured.insert(key.into(), true.into());
            }
        }
        if !listener.resource_subscriptions.is_empty() {
            honoured.insert(
                "resourceSubscriptions".into(),
                json!(listener.resource_subscriptions),
            );
        }
        if !task_ids.is_empty() {
            honoured.insert("taskIds".into(), json!(task_ids));
        }
        let key = request.id.to_string();
        // Registered before the acknowledgement, so that no change after it is missed.
        self.listeners.lock().unwrap().insert(key.clone(), listener);
        let _registered = Deregister {
            listeners: &self.listeners,
            key,
        };
        reply(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({
                "notifications": honoured,
                "_meta": { META_SUBSCRIPTION_ID: request.id },
            })),
        ));
        let mut closing = self.closing.subscribe();
        tokio::select! {
            _ = closing.wait_for(|closing| *closing) => {}
            () = self.watch_tasks(task_ids, &reply, &request.id) => {}
        }
        // The server tears the subscription down: the cancellation page asks
        // for notifications/cancelled naming it (tagged, as everything on
        // the stream is), the subscriptions page for its completion result.
        tracing::debug!("ending listen stream {}", request.id);
        reply(jsonrpc::notification(
            "notifications/cancelled",
            Some(json!({
                "requestId": request.id,
                "reason": "the server is ending this subscription: the session is over",
                "_meta": { META_SUBSCRIPTION_ID: request.id },
            })),
        ));
        Ok(json!({ "_meta": { META_SUBSCRIPTION_ID: request.id } }))
    }
}

/// How long a client may cache a stateless `tools/list` result, and with
/// whom it may share it. A watching server's list changes whenever a plugin
/// file does; listen streams hear of that at once, and a minute bounds how
/// stale a client without one can get. A server that does not watch serves
/// one list for its whole life: an hour. The list is the same for every
/// caller (stdio has no per-request credentials), so it may be shared:
/// `cacheScope` "public".
pub(super) const LIST_TTL_MS_WATCHING: u64 = 60_000;
pub(super) const LIST_TTL_MS_FIXED: u64 = 3_600_000;
pub(super) const LIST_CACHE_SCOPE: &str = "public";

/// How long a client may cache a stateless `resources/read` result, and
/// with whom it may share it: not at all, and with no one. A plugin makes
/// its contents on every read and may change them at any moment (it says
/// so with `resource-updated`, which only subscribers hear), so no time is
/// honest but zero; and a read may ask the user, so its contents may hold
/// their answers: "private".
pub(super) const READ_TTL_MS: u64 = 0;
pub(super) const READ_CACHE_SCOPE: &str = "private";

/// How long a client may cache a `server/discover` result, and with whom it
/// may share it. What it states (versions, capabilities, the server's name
/// and version) is fixed for the life of the process, whatever the plugins
/// do: an hour, the spec's own example, bounds how long a client keeps it
/// across an upgrade. It is the same for every caller: "public".
pub(super) const DISCOVER_TTL_MS: u64 = 3_600_000;
pub(super) const DISCOVER_CACHE_SCOPE: &str = "public";

/// How one request is served.
pub(super) enum Era {
    /// In the session's negotiated revision, at the session's log level.
    Legacy,
    /// In a stateless revision, with what the request's `_meta` says.
    Stateless {
        revision: Revision,
        log_level: Option<LogLevel>,
    },
}

impl Era {
    /// Whether `request` is of the stateless era: its method exists only
    /// there, or its `_meta` names a protocol version. (Only the version
    /// selects the era: legacy revisions define other
    /// `io.modelcontextprotocol/` keys, `related-task` in 2025-11-25.)
    pub(super) fn is_stateless(request: &Request) -> bool {
        STATELESS_ONLY_METHODS.contains(&request.method.as_str())
            || request
                .params
                .get("_meta")
                .and_then(Value::as_object)
                .is_some_and(|meta| meta.contains_key(META_PROTOCOL_VERSION))
    }

    /// The era of `request`, or the error for a stateless request whose
    /// `_meta` lacks what every stateless request must carry.
    pub(super) fn of(request: &Request) -> Result<Era, RpcError> {
        if !Era::is_stateless(request) {
            return Ok(Era::Legacy);
        }
        let Some(meta) = request.params.get("_meta").and_then(Value::as_object) else {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: {} needs `_meta` with \"{META_PROTOCOL_VERSION}\" and \"{META_CLIENT_CAPABILITIES}\" (protocol revision {} has no initialize handshake)",
                request.method,
                Revision::V2026_07_28
            )));
        };
        let version = match meta.get(META_PROTOCOL_VERSION) {
            Some(Value::String(version)) => version,
            Some(_) => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: `_meta` \"{META_PROTOCOL_VERSION}\" must be a string, such as \"{}\"",
                    Revision::V2026_07_28
                )));
            }
            None => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: `_meta` must carry \"{META_PROTOCOL_VERSION}\" (such as \"{}\"); without an initialize handshake every request names its protocol version",
                    Revision::V2026_07_28
                )));
            }
        };
        let Some(revision) = Revision::stateless(version) else {
            let supported: Vec<&str> = Revision::STATELESS.iter().map(|r| r.as_str()).collect();
            return Err(RpcError::new(
                jsonrpc::code::UNSUPPORTED_PROTOCOL_VERSION,
                format!(
                    "Unsupported protocol version: {version} (supported without initialize: {})",
                    supported.join(", ")
                ),
            )
            .with_data(json!({ "supported": supported, "requested": version })));
        };
        if !meta
            .get(META_CLIENT_CAPABILITIES)
            .is_some_and(Value::is_object)
        {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: `_meta` must carry \"{META_CLIENT_CAPABILITIES}\" (an object, possibly empty) on every request of protocol revision {revision}"
            )));
        }
        let log_level = match meta.get(META_LOG_LEVEL) {
            None | Some(Value::Null) => None,
            Some(level) => Some(level.as_str().and_then(LogLevel::parse).ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "Invalid params: `_meta` \"{META_LOG_LEVEL}\" must be one of debug, info, notice, warning, error, critical, alert, emergency"
                ))
            })?),
        };
        Ok(Era::Stateless {
            revision,
            log_level,
        })
    }
}

/// One open `subscriptions/listen` stream.
pub(super) struct Listener {
    /// The subscription id: the listen request's JSON-RPC id.
    pub(super) id: Value,
    /// What the stream asked for and the server honours (as acknowledged).
    pub(super) tools_list_changed: bool,
    pub(super) resources_list_changed: bool,
    pub(super) prompts_list_changed: bool,
    /// The URIs whose `notifications/resources/updated` the stream gets.
    pub(super) resource_subscriptions: BTreeSet<String>,
    /// Where the stream's notifications go.
    pub(super) reply: Outbox,
}

/// Removes a listen stream from the session when it ends, however it ends
/// (including being aborted by a cancellation).
pub(super) struct Deregister<'a> {
    pub(super) listeners: &'a Mutex<HashMap<String, Listener>>,
    pub(super) key: String,
}

impl Drop for Deregister<'_> {
    fn drop(&mut self) {
        self.listeners.lock().unwrap().remove(&self.key);
    }
}
