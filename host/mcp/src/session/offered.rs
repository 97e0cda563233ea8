//! Resources, prompts and completion, served when the host offers them,
//! in either era.

use super::*;

impl<H: ToolHost> Session<H> {
    /// The methods of resources, prompts and completion that ask nothing
    /// (lists and completion), in either era.
    pub(super) async fn serve_asking_nothing(
        &self,
        method: &str,
        params: &Map<String, Value>,
        revision: Revision,
        log_level: Arc<AtomicU8>,
        reply: Outbox,
    ) -> Result<Value, RpcError> {
        match method {
            "resources/list" => list_page(
                &self.visible(&self.host.resources(), |r| Target::Resource(&r.uri)),
                params,
                "resources",
                self.options.page_size,
                |r| r.held_bytes,
                |r| shape::resource_json(r, revision),
            ),
            "resources/templates/list" => list_page(
                &self.visible(&self.host.resource_templates(), |t| {
                    Target::ResourceTemplate(&t.uri_template)
                }),
                params,
                "resourceTemplates",
                self.options.page_size,
                |t| t.held_bytes,
                |t| shape::resource_template_json(t, revision),
            ),
            "prompts/list" => list_page(
                &self.visible(&self.host.prompts(), |p| Target::Prompt(&p.name)),
                params,
                "prompts",
                self.options.page_size,
                |p| p.held_bytes,
                |p| shape::prompt_json(p, revision),
            ),
            "completion/complete" => {
                let request = params::completion(params)?;
                self.check_reach(match &request.reference {
                    corral_tool::CompletionRef::Prompt(name) => Target::Prompt(name),
                    corral_tool::CompletionRef::ResourceTemplate(uri) => {
                        Target::ResourceTemplate(uri)
                    }
                })?;
                let logger = match &request.reference {
                    corral_tool::CompletionRef::Prompt(name) => name.clone(),
                    corral_tool::CompletionRef::ResourceTemplate(uri) => uri.clone(),
                };
                // Completion asks the client nothing: no client.
                let context = self.call_context(params, &logger, revision, log_level, reply, None);
                match self.host.complete(request, context).await {
                    Ok(completions) => Ok(shape::completion_json(&completions)),
                    Err(CompleteError::UnknownReference(message)) => Err(RpcError::invalid_params(
                        format!("Invalid params: {message}"),
                    )),
                    Err(CompleteError::Failed(message)) => Err(internal_error(&message)),
                }
            }
            method => Err(RpcError::method_not_found(method)),
        }
    }

    /// `resources/subscribe` (or, not `subscribing`, `unsubscribe`) for a
    /// legacy client.
    pub(super) fn subscribe(
        &self,
        params: &Map<String, Value>,
        subscribing: bool,
    ) -> Result<Value, RpcError> {
        let method = if subscribing {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        let uri = params::uri(params, method)?;
        if subscribing {
            self.check_reach(Target::Resource(&uri))?;
        }
        let mut subscriptions = self.subscriptions.lock().unwrap();
        if !subscribing {
            subscriptions.remove(&uri);
        } else if !subscriptions.contains(&uri) {
            if subscriptions.len() >= params::MAX_SUBSCRIPTIONS {
                return Err(params::too_many_subscriptions(subscriptions.len() + 1));
            }
            subscriptions.insert(uri);
        }
        Ok(json!({}))
    }

    /// Refuses a `prompts/get` of a prompt not served (with the names
    /// close to it) or with arguments that do not fit it.
    pub(super) fn check_prompt(&self, get: &PromptGet) -> Result<(), RpcError> {
        let prompts = self.host.prompts();
        match prompts.iter().find(|prompt| prompt.name == get.name) {
            Some(prompt) => get.check(prompt),
            None => Err(RpcError::invalid_params(unknown_prompt(
                &get.name, &prompts,
            ))),
        }
    }

    /// The JSON-RPC error for a `prompts/get` of `name` that failed.
    pub(super) fn prompt_error(&self, error: PromptError, name: &str) -> RpcError {
        match error {
            PromptError::Unknown(_) => {
                RpcError::invalid_params(unknown_prompt(name, &self.host.prompts()))
            }
            PromptError::InvalidArguments(message) => {
                RpcError::invalid_params(format!("Invalid params: {message}"))
            }
            PromptError::Failed(message) => internal_error(&message),
        }
    }

    /// Reads `uri` in either era: as `call_tool` runs a call.
    pub(super) async fn read(
        &self,
        uri: &str,
        params: &Map<String, Value>,
        revision: Revision,
        log_level: Arc<AtomicU8>,
        reply: Outbox,
        client: Arc<dyn Client>,
    ) -> Result<Vec<ResourceItem>, ReadError> {
        let context = self.call_context(params, uri, revision, log_level, reply, Some(client));
        self.host.read_resource(uri, context).await
    }

    /// Gets a prompt in either era: as `call_tool` runs a call.
    pub(super) async fn get_prompt(
        &self,
        get: &PromptGet,
        revision: Revision,
        log_level: Arc<AtomicU8>,
        reply: Outbox,
        client: Arc<dyn Client>,
    ) -> Result<PromptOutput, PromptError> {
        let context = self.call_context(
            &get.params,
            &get.name,
            revision,
            log_level,
            reply,
            Some(client),
        );
        self.host
            .get_prompt(&get.name, get.arguments.clone(), context)
            .await
    }
}

/// Whether `method` belongs to resources, prompts or completion: served
/// only when the host offers them.
pub(super) fn is_offered_method(method: &str) -> bool {
    matches!(
        method,
        "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "prompts/list"
            | "prompts/get"
            | "completion/complete"
    )
}

/// Whether the capability of `method` (one of [`is_offered_method`]) is
/// offered: a method of a capability not declared is not found, as the
/// official SDKs answer it.
pub(super) fn offers_method(offers: Offers, method: &str) -> bool {
    match method.split('/').next() {
        Some("resources") => offers.resources,
        Some("prompts") => offers.prompts,
        Some("completion") => offers.completions,
        _ => true,
    }
}

/// The JSON-RPC error for a read that failed: not found as the revision
/// has it, or an internal error saying why.
pub(super) fn read_error(error: ReadError, uri: &str, revision: Revision) -> RpcError {
    match error {
        ReadError::NotFound => params::resource_not_found(uri, revision),
        ReadError::Failed(message) => internal_error(&message),
    }
}

/// As `tools::unknown_tool`, for a prompt.
pub(super) fn unknown_prompt(name: &str, served: &[corral_tool::PromptDef]) -> String {
    let hint = corral_tool::unknown_name_hint("prompt", name, served.iter().map(|p| &*p.name));
    format!("Unknown prompt: {name}{hint}")
}
