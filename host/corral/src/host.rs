//! The [`ToolHost`] the protocol serves: the catalog's tools, prompts,
//! resources and templates, routed to their plugins, and the server's
//! reports.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::reports::Reports;
use corral_sandbox::plugin::Completing;
use corral_tool::{
    CallContext, CallOutput, CompleteError, CompletionRef, CompletionRequest, Completions,
    HostEvents, MAX_COMPLETION_VALUES, NotLoaded, Offers, PromptDef, PromptError, PromptOutput,
    ReadError, ResourceDef, ResourceItem, ResourceTemplateDef, Scopes, Target, ToolDef, ToolHost,
    UnknownTool, close_names,
};

/// A served folder, as the protocol sees it.
#[derive(Debug, Clone)]
pub struct FolderHost {
    pub catalog: Arc<Catalog>,
    pub reports: Arc<Reports>,
}

impl ToolHost for FolderHost {
    fn tools(&self) -> Arc<[ToolDef]> {
        self.catalog.tools()
    }

    fn ready(&self) -> impl Future<Output = ()> + Send {
        self.catalog.ready()
    }

    fn resources(&self) -> Arc<[ResourceDef]> {
        self.catalog.snapshot().resources().clone()
    }

    fn resource_templates(&self) -> Arc<[ResourceTemplateDef]> {
        self.catalog.snapshot().templates().clone()
    }

    fn prompts(&self) -> Arc<[PromptDef]> {
        self.catalog.snapshot().prompts().clone()
    }

    fn offers(&self) -> Offers {
        self.catalog.snapshot().offers()
    }

    fn not_loaded(&self) -> Arc<[NotLoaded]> {
        self.catalog.not_loaded()
    }

    /// From the `[access]` of the plugins that serve `target` (see
    /// [`crate::catalog::Snapshot::required_scopes`]).
    fn required_scopes(&self, target: Target<'_>) -> Scopes {
        self.catalog.required_scopes(target)
    }

    fn subscribe(&self) -> Option<HostEvents> {
        Some(HostEvents {
            tools_changed: self.catalog.tools_changed(),
            resources_changed: self.catalog.resources_changed(),
            prompts_changed: self.catalog.prompts_changed(),
            resource_updated: self.catalog.resource_updated(),
            logs: self.reports.subscribe(),
        })
    }

    async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> Result<CallOutput, UnknownTool> {
        let snapshot = self.catalog.snapshot();
        let (plugin, index) = snapshot.route(name).ok_or(UnknownTool)?;
        Ok(plugin.call(index, name, arguments, context).await)
    }

    /// Reads `uri` from every plugin that serves it (see
    /// [`crate::catalog::Catalog::read_candidates`]: within a budget of
    /// matching work, off the async workers when it is large), one after the other
    /// in plugin-name order, their contents put together. A plugin that
    /// has nothing there adds nothing; the first that fails fails the read,
    /// with its message (which names it).
    async fn read_resource(
        &self,
        uri: &str,
        context: CallContext,
    ) -> Result<Vec<ResourceItem>, ReadError> {
        let candidates = self.catalog.read_candidates(uri).await.map_err(|over| {
            ReadError::Failed(format!(
                "Reading `{}`: {over}",
                corral_sandbox::printable(uri)
            ))
        })?;
        let mut contents = Vec::new();
        let mut found = false;
        for plugin in candidates {
            match plugin.read(uri, context.clone()).await {
                Ok(items) => {
                    found = true;
                    contents.extend(items);
                }
                Err(ReadError::NotFound) => {}
                Err(failed) => return Err(failed),
            }
        }
        if found {
            Ok(contents)
        } else {
            Err(ReadError::NotFound)
        }
    }

    async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        context: CallContext,
    ) -> Result<PromptOutput, PromptError> {
        let snapshot = self.catalog.snapshot();
        let Some((plugin, index)) = snapshot.prompt_route(name) else {
            let served = snapshot.prompts().iter().map(|p| p.name.as_str());
            let hint = match close_names(name, served, 3).as_slice() {
                [] => String::new(),
                close => format!(" (did you mean `{}`?)", close.join("`, `")),
            };
            return Err(PromptError::Unknown(format!(
                "unknown prompt `{}`{hint}",
                corral_sandbox::printable(name)
            )));
        };
        plugin.get(index, name, arguments, context).await
    }

    /// A prompt's argument is completed by its plugin; a template's
    /// variable by every plugin with that exact template, their values put
    /// together in plugin-name order without repeats, cut to
    /// [`MAX_COMPLETION_VALUES`].
    async fn complete(
        &self,
        request: CompletionRequest,
        context: CallContext,
    ) -> Result<Completions, CompleteError> {
        let snapshot = self.catalog.snapshot();
        let owners: Vec<_> = match &request.reference {
            CompletionRef::Prompt(name) => match snapshot.prompt_route(name) {
                Some((plugin, index)) => vec![(plugin.clone(), Completing::Prompt(index))],
                None => Vec::new(),
            },
            CompletionRef::ResourceTemplate(template) => snapshot
                .template_owners(template)
                .into_iter()
                .map(|(plugin, index)| (plugin, Completing::Template(index)))
                .collect(),
        };
        if owners.is_empty() {
            let what = match &request.reference {
                CompletionRef::Prompt(name) => {
                    format!("prompt `{}`", corral_sandbox::printable(name))
                }
                CompletionRef::ResourceTemplate(t) => {
                    format!("resource template `{}`", corral_sandbox::printable(t))
                }
            };
            return Err(CompleteError::UnknownReference(format!("unknown {what}")));
        }
        let single = owners.len() == 1;
        let mut merged = Completions::default();
        let mut unknown = None;
        let mut answered = false;
        for (plugin, of) in owners {
            let completions = match plugin
                .complete(
                    of,
                    &request.argument,
                    &request.value,
                    &request.context,
                    context.clone(),
                )
                .await
            {
                Ok(completions) => completions,
                Err(CompleteError::UnknownReference(message)) => {
                    unknown = Some(message);
                    continue;
                }
                Err(failed) => return Err(failed),
            };
            answered = true;
            merged.has_more |= completions.has_more;
            if single {
                merged.total = completions.total;
            }
            for value in completions.values {
                if merged.values.len() == MAX_COMPLETION_VALUES {
                    merged.has_more = true;
                    break;
                }
                if !merged.values.contains(&value) {
                    merged.values.push(value);
                }
            }
        }
        match (answered, unknown) {
            (false, Some(message)) => Err(CompleteError::UnknownReference(message)),
            _ => Ok(merged),
        }
    }
}
