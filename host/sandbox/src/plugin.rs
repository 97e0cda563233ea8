//! Plugins: loading a component from a file and running its tools, reads,
//! prompts and completions in the sandbox.
//!
//! Loading compiles the component once, resolves its imports once
//! (`InstancePre`), calls the `list` of each interface it exports (`tools`,
//! `resources`, `prompts`) under limits and validates the answers. Each
//! call then gets a fresh instance: argument validation, the sandboxed call,
//! and validation of what the plugin returned, with one audit line.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result, anyhow};
use serde_json::{Map, Value};
use tokio::sync::OwnedSemaphorePermit;
use tracing::Instrument as _;

use std::collections::BTreeMap;

use corral_tool::{
    ArgumentProblem, CallContext, CallEvent, CallOutput, CompleteError, Completions, Content,
    LogLevel, MAX_COMPLETION_VALUES, PromptDef, PromptError, PromptMessage, PromptOutput,
    ReadError, ResourceContents, ResourceDef, ResourceItem, ResourceTemplateDef, Role, Scopes,
    ToolDef,
};

use crate::ask::{InputRequired, WaitingCalls};
use crate::audit::{self, Audit, Kind, Meters, Underway};
use crate::bindings::{
    Contract, Exports, PluginPre, Request, Response, completion, prompts, resources, types,
};
use crate::manifest::Manifest;
use crate::metadata::{CheckedTool, printable};
use crate::naming::plugin_name;
use crate::offerings::{CheckedTemplate, check_prompts, check_resources, check_uri};
use crate::quota::{Refused, ToolRate, retry_after};
use crate::sandbox::{CallState, Failure, MadeAhead, Sandbox, Spent};
use crate::spare::Spare;
use crate::units::group_digits;
use crate::units::human_bytes;
use crate::updated::Served;
use crate::validation::Rejection;
use crate::{imports, metadata, missing_grant, output, plugin_text, validation};

/// What a completion is of, in a plugin's own terms: its prompt or its
/// template, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completing {
    Prompt(usize),
    Template(usize),
}

/// A loaded plugin: a prepared component and its validated tools.
pub struct Plugin {
    /// From the file name: `calc.wasm` is `calc`.
    name: Arc<str>,
    path: PathBuf,
    sandbox: Arc<Sandbox>,
    pre: PluginPre<CallState>,
    /// The instance made ahead of the next call, for a plugin that is
    /// slow to instantiate; shared with the versions [`Plugin::relist`]
    /// makes, which run the same component.
    spare: Option<Arc<Spare<MadeAhead>>>,
    manifest: Manifest,
    /// Which interfaces the component exports.
    exports: Exports,
    tools: Vec<CheckedTool>,
    /// Shared with the matching of updated URIs (`updated`).
    resources: Arc<[ResourceDef]>,
    templates: Arc<[CheckedTemplate]>,
    prompts: Vec<PromptDef>,
    /// Each tool's rate limit, in `tools` order; shared with the versions
    /// [`Plugin::relist`] makes, for the tools they keep.
    buckets: Vec<Arc<ToolRate>>,
    /// The scopes each tool needs (`[access]`), in `tools` order.
    tool_scopes: Vec<Scopes>,
    /// Permits for calls running at once, shared with the versions
    /// [`Plugin::relist`] makes: a re-list does not reset the limit.
    running: Arc<tokio::sync::Semaphore>,
    /// Permits for calls that may run as tasks ([`MAX_TASKS_RUNNING`]),
    /// shared as `running` is: a task holds an instance for up to its
    /// `task-timeout`, whatever the client does meanwhile.
    tasks: Arc<tokio::sync::Semaphore>,
    /// Room for calls waiting for their clients at once (half of the
    /// permits): a waiting call holds its permit all along.
    waiting: Arc<WaitingCalls>,
    /// Its calls' metrics, shared with the versions [`Plugin::relist`]
    /// makes.
    meters: Arc<Meters>,
}

/// The most calls of one plugin that may run as tasks at once (its
/// `concurrency` bounds them too).
pub const MAX_TASKS_RUNNING: usize = 64;

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("tools", &self.tools.len())
            .field("resources", &self.resources.len())
            .field("templates", &self.templates.len())
            .field("prompts", &self.prompts.len())
            .finish()
    }
}

/// A plugin's files as read once from disk: the component's bytes and its
/// manifest's text. Whoever checks them (against a lock's digests, say)
/// then loads exactly what it checked, with no window for the files to
/// change in between.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginFiles {
    /// The `.wasm` file's bytes.
    pub wasm: Vec<u8>,
    /// The text of the manifest beside it (`NAME.toml`); `None` when there
    /// is none.
    pub manifest: Option<String>,
}

impl PluginFiles {
    /// Reads the plugin file at `path` and the manifest beside it.
    pub async fn read(path: &Path) -> Result<PluginFiles> {
        PluginFiles::read_as(path, path).await
    }

    /// Reads the component in `file` as the plugin at `plugin` would be:
    /// with the manifest beside `plugin` (a build checks its new file this
    /// way before it takes the plugin's place).
    pub async fn read_as(file: &Path, plugin: &Path) -> Result<PluginFiles> {
        let wasm = tokio::fs::read(file).await.context("reading the file")?;
        let manifest = Manifest::read_text(plugin)?;
        Ok(PluginFiles { wasm, manifest })
    }
}

impl Plugin {
    /// Loads the component at `path`. Every failure names the step that failed.
    pub async fn load(sandbox: &Arc<Sandbox>, path: &Path) -> Result<Plugin> {
        let files = PluginFiles::read(path).await?;
        Plugin::load_from(sandbox, path, files).await
    }

    /// Loads the plugin at `path` from `files`, its files as already read:
    /// nothing is read from disk again.
    pub async fn load_from(
        sandbox: &Arc<Sandbox>,
        path: &Path,
        files: PluginFiles,
    ) -> Result<Plugin> {
        let started = Instant::now();
        let name: Arc<str> = plugin_name(path).into();
        let meters = Arc::new(Meters::new(&name));
        let PluginFiles { wasm, manifest } = files;
        let compiler = sandbox.clone();
        let (component, code) = tokio::task::spawn_blocking(move || compiler.compile_traced(&wasm))
            .await?
            .context("not a valid WebAssembly component")?;
        let lookup = match code {
            crate::cache::Provenance::Compiled => "miss",
            crate::cache::Provenance::Cached | crate::cache::Provenance::Shared => "hit",
        };
        metrics::counter!("corral_compile_cache_total", "plugin" => name.clone(), "result" => lookup)
            .increment(1);
        let manifest = Manifest::from_text(path, manifest.as_deref())?;
        let contract = Contract::of(sandbox.engine(), &component)?;
        imports::check(sandbox.engine(), &component, &manifest)?;
        let pre = sandbox
            .prepare(&component, contract)
            .context("the component's imports cannot be satisfied")?;
        let limits = manifest.limits;
        let Listed {
            tools,
            resources,
            templates,
            prompts,
        } = list_all(sandbox, &pre, &name, &manifest).await?;
        let buckets = tools
            .iter()
            .map(|_| Arc::new(ToolRate::new(&limits)))
            .collect();
        let tool_scopes = access_of_tools(&name, &manifest, &tools);
        tracing::info!(
            plugin = %name,
            tools = tools.len(),
            resources = resources.len(),
            templates = templates.len(),
            prompts = prompts.len(),
            // compiled, cached (from the compile cache) or shared (with
            // another load of the same bytes at the same time).
            code = %code,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "loaded {}",
            path.display()
        );
        let spare = sandbox.spare_for(&pre, &name, &manifest);
        Ok(Plugin {
            name,
            path: path.to_owned(),
            sandbox: sandbox.clone(),
            exports: pre.exports(),
            pre,
            spare,
            manifest,
            tools,
            resources: resources.into(),
            templates: templates.into(),
            prompts,
            buckets,
            tool_scopes,
            running: Arc::new(tokio::sync::Semaphore::new(limits.concurrency as usize)),
            tasks: Arc::new(tokio::sync::Semaphore::new(MAX_TASKS_RUNNING)),
            waiting: WaitingCalls::for_concurrency(limits.concurrency),
            meters,
        })
    }

    /// Calls each `list` again, for a plugin that said its tools, resources
    /// or prompts changed (`host.tools-changed` and its kin): under the same
    /// limits and metadata checks as a load, on the component already
    /// prepared. The new version shares
    /// this one's concurrency limit, and the rate limit of every tool it
    /// keeps (by name); calls already running finish on this version.
    pub async fn relist(&self) -> Result<Plugin> {
        let Listed {
            tools,
            resources,
            templates,
            prompts,
        } = list_all(&self.sandbox, &self.pre, &self.name, &self.manifest).await?;
        let limits = &self.manifest.limits;
        let buckets = tools
            .iter()
            .map(|tool| {
                self.tools
                    .iter()
                    .position(|old| old.def.name == tool.def.name)
                    .map(|index| self.buckets[index].clone())
                    .unwrap_or_else(|| Arc::new(ToolRate::new(limits)))
            })
            .collect();
        let tool_scopes = access_of_tools(&self.name, &self.manifest, &tools);
        Ok(Plugin {
            name: self.name.clone(),
            path: self.path.clone(),
            sandbox: self.sandbox.clone(),
            pre: self.pre.clone(),
            spare: self.spare.clone(),
            manifest: self.manifest.clone(),
            exports: self.exports,
            tools,
            resources: resources.into(),
            templates: templates.into(),
            prompts,
            buckets,
            tool_scopes,
            running: self.running.clone(),
            tasks: self.tasks.clone(),
            waiting: self.waiting.clone(),
            meters: self.meters.clone(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The plugin's tools, named as the plugin names them, in declared order.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &ToolDef> {
        self.tools.iter().map(|t| &t.def)
    }

    /// The plugin's resources, in listed order.
    pub fn resources(&self) -> &[ResourceDef] {
        &self.resources
    }

    /// The plugin's resource templates, in listed order.
    pub fn templates(&self) -> impl ExactSizeIterator<Item = &ResourceTemplateDef> {
        self.templates.iter().map(|t| &t.def)
    }

    /// Whether template number `index` matches `uri` (in linear time),
    /// adding the work it took to `work`
    /// ([`crate::uri_template::UriTemplate::matches_counting`]).
    pub fn template_matches(&self, index: usize, uri: &str, work: &mut u64) -> bool {
        self.templates[index].template.matches_counting(uri, work)
    }

    /// The plugin's prompts, named as the plugin names them, in listed order.
    pub fn prompts(&self) -> &[PromptDef] {
        &self.prompts
    }

    /// Which interfaces the plugin exports.
    pub fn exports(&self) -> Exports {
        self.exports
    }

    /// The version of the plugin contract the plugin targets.
    pub fn contract(&self) -> Contract {
        self.pre.contract()
    }

    /// The limits and grants the plugin runs under.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The scopes a caller needs for everything the plugin offers
    /// (`[access] scopes`); empty: anyone signed in.
    pub fn scopes(&self) -> &Scopes {
        &self.manifest.access.scopes
    }

    /// The scopes a caller needs for tool number `index` (in
    /// [`Plugin::tools`] order): the plugin's and the tool's own
    /// (`[access] tools`), computed once at load.
    pub fn tool_scopes(&self, index: usize) -> &Scopes {
        &self.tool_scopes[index]
    }

    /// Calls tool number `index` (in [`Plugin::tools`] order), served to
    /// clients as `name`, with `arguments`.
    ///
    /// Every problem becomes a tool execution error the model can act on:
    /// a rate or concurrency limit (with when to retry), arguments that break
    /// the input schema (each violation with its JSON pointer), a limit hit,
    /// a trap, or a result that breaks the tool's own output schema. Each
    /// call is logged at info level: the audit log.
    pub async fn call(
        &self,
        index: usize,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> CallOutput {
        let events = context.events.clone();
        let principal = context.principal.as_ref().map(|p| p.describe());
        let started = Instant::now();
        let underway = Underway::start(&self.meters, Kind::Tool, name);
        let span = audit::call_span(&self.name, Kind::Tool);
        let CallRecord {
            output,
            outcome,
            fuel_used,
            spent,
            arguments,
        } = self
            .run(index, name, Value::Object(arguments), context)
            .instrument(span.clone())
            .await;
        underway.ended();
        outcome.record_on(&span, fuel_used);
        let warning = match output.content.first() {
            Some(Content::Text { text, .. }) if outcome.is_host_event() => Some(text.clone()),
            _ => None,
        };
        let audit = Audit {
            meters: self.meters.clone(),
            plugin: self.name.clone(),
            kind: Kind::Tool,
            name: name.into(),
            elapsed_us: started.elapsed().as_micros() as u64,
            fuel: fuel_used,
            outcome: outcome.label(),
            arguments: self.sandbox.options().log_arguments.then_some(arguments),
            principal,
            redacted: None,
            memory_bytes: None,
            instantiate_us: None,
        };
        self.after_call(spent, warning, events.as_ref(), audit);
        output
    }

    /// What follows every call, whatever its outcome: what it said changed
    /// is noted (what the call stored before it failed is stored all the
    /// same), the resources it said were updated that the plugin serves are
    /// published, a limit hit or a trap (`warning`) reaches the client's log
    /// too, and the spent instance and the audit line wait for the answer
    /// to be on its way.
    fn after_call(
        &self,
        mut spent: Option<Spent>,
        warning: Option<String>,
        events: Option<&corral_tool::EventSink>,
        mut audit: Audit,
    ) {
        audit.redacted = spent
            .as_ref()
            .map(Spent::redacted)
            .filter(|count| *count > 0);
        audit.memory_bytes = spent.as_ref().map(Spent::memory_peak);
        audit.instantiate_us = spent
            .as_ref()
            .and_then(Spent::instantiation)
            .map(|took| took.as_micros() as u64);
        if let Some(spent) = &mut spent {
            if spent.lists_changed() {
                self.sandbox.tools_changed().mark(&self.path);
            }
            let updated = spent.take_updated();
            if !updated.is_empty() {
                let served = Served {
                    resources: self.resources.clone(),
                    templates: self.templates.clone(),
                };
                served.publish(&self.sandbox, &self.name, updated);
            }
        }
        if let (Some(events), Some(message)) = (events, warning) {
            events(CallEvent::Log {
                level: LogLevel::Warning,
                message,
            });
        }
        self.sandbox.after_answer(move || {
            drop(spent);
            audit.log();
        });
    }

    /// Reads the resource at `uri` (one the plugin lists, or that matches
    /// one of its templates), in a fresh instance as a tool call is run.
    /// What comes back is checked: its size against the `output` limit
    /// before anything is copied, each item's URI.
    pub async fn read(
        &self,
        uri: &str,
        context: CallContext,
    ) -> Result<Vec<ResourceItem>, ReadError> {
        let request = Request::Read {
            uri: uri.to_owned(),
        };
        let what = format!("Reading `{uri}` from plugin `{}`", self.name);
        let (answer, invoked) = self.invoke(request, context, &what, "").await;
        let (result, outcome) = match answer {
            Err(message) => (Err(ReadError::Failed(message)), invoked.outcome),
            Ok(response) => {
                let Response::Read(read) = response else {
                    unreachable!("a read is answered with contents")
                };
                match read {
                    Ok(contents) => match self.check_contents(contents, &what) {
                        Ok(items) => (Ok(items), Outcome::Ok),
                        Err(message) => (Err(ReadError::Failed(message)), Outcome::BadOutput),
                    },
                    Err(resources::ReadError::NotFound) => {
                        (Err(ReadError::NotFound), Outcome::NotFound)
                    }
                    Err(resources::ReadError::Failed(message)) => {
                        let (message, outcome) = self.plugin_failed(&what, " failed", message);
                        (Err(ReadError::Failed(message)), outcome)
                    }
                }
            }
        };
        self.finish(
            invoked,
            outcome,
            Kind::Resource,
            uri.to_owned(),
            None,
            &result_warning(&result),
        );
        result
    }

    /// The messages of prompt number `index` (in [`Plugin::prompts`]
    /// order), served as `name`, for `arguments`: checked against the
    /// prompt's (every required one present, none undeclared) before the
    /// plugin runs, in a fresh instance as a tool call is run.
    pub async fn get(
        &self,
        index: usize,
        name: &str,
        arguments: BTreeMap<String, String>,
        context: CallContext,
    ) -> Result<PromptOutput, PromptError> {
        let prompt = &self.prompts[index];
        match prompt.argument_problem(&arguments) {
            None => {}
            Some(ArgumentProblem::Missing(missing)) => {
                return Err(PromptError::InvalidArguments(format!(
                    "Prompt `{name}` needs the argument `{missing}`"
                )));
            }
            Some(ArgumentProblem::Undeclared(undeclared)) => {
                let declared: Vec<&str> =
                    prompt.arguments.iter().map(|a| a.name.as_str()).collect();
                return Err(PromptError::InvalidArguments(format!(
                    "Prompt `{name}` has no argument `{}` (its arguments: {})",
                    printable(undeclared),
                    if declared.is_empty() {
                        "none".to_owned()
                    } else {
                        declared.join(", ")
                    }
                )));
            }
        }
        let logged = self
            .sandbox
            .options()
            .log_arguments
            .then(|| serde_json::to_value(&arguments).unwrap_or_default());
        let request = Request::Get {
            name: prompt.name.clone(),
            arguments: arguments.into_iter().collect(),
        };
        let what = format!("Prompt `{name}`");
        let (answer, invoked) = self.invoke(request, context, &what, name).await;
        let (result, outcome) = match answer {
            Err(message) => (Err(PromptError::Failed(message)), invoked.outcome),
            Ok(response) => {
                let Response::Got(got) = response else {
                    unreachable!("a get is answered with messages")
                };
                match got {
                    Ok(result) => match self.check_prompt_result(result, &what) {
                        Ok(output) => (Ok(output), Outcome::Ok),
                        Err(message) => (Err(PromptError::Failed(message)), Outcome::BadOutput),
                    },
                    Err(prompts::GetError::InvalidArguments(message)) => {
                        let (message, outcome) = self.plugin_failed(&what, "", message);
                        let outcome = match outcome {
                            Outcome::Error => Outcome::InvalidArguments,
                            over => over,
                        };
                        (Err(PromptError::InvalidArguments(message)), outcome)
                    }
                    Err(prompts::GetError::Failed(message)) => {
                        let (message, outcome) = self.plugin_failed(&what, " failed", message);
                        (Err(PromptError::Failed(message)), outcome)
                    }
                }
            }
        };
        let warning = match &result {
            Err(PromptError::Failed(message)) if outcome.is_host_event() => Some(message.clone()),
            _ => None,
        };
        self.finish(
            invoked,
            outcome,
            Kind::Prompt,
            name.to_owned(),
            logged,
            &warning,
        );
        result
    }

    /// Suggestions for `argument` of `of` (the plugin's own prompt or
    /// template), at most [`MAX_COMPLETION_VALUES`]. A plugin that does not
    /// export `completion` suggests nothing; an argument that `of` does not
    /// have is an unknown reference.
    pub async fn complete(
        &self,
        of: Completing,
        argument: &str,
        value: &str,
        context_values: &BTreeMap<String, String>,
        context: CallContext,
    ) -> Result<Completions, CompleteError> {
        let (reference, has, label) = match of {
            Completing::Prompt(index) => {
                let prompt = &self.prompts[index];
                (
                    completion::Reference::Prompt(prompt.name.clone()),
                    prompt.arguments.iter().any(|a| a.name == argument),
                    format!("prompt:{}/{argument}", prompt.name),
                )
            }
            Completing::Template(index) => {
                let template = &self.templates[index];
                (
                    completion::Reference::ResourceTemplate(template.def.uri_template.clone()),
                    template.template.has_variable(argument),
                    format!("template:{}/{argument}", template.def.uri_template),
                )
            }
        };
        if !has {
            return Err(CompleteError::UnknownReference(format!(
                "`{}` is neither an argument nor a variable of what is completed",
                printable(argument)
            )));
        }
        if !self.exports.completion {
            return Ok(Completions::default());
        }
        let request = Request::Complete {
            reference,
            argument: argument.to_owned(),
            value: value.to_owned(),
            context: context_values
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        let what = format!(
            "Completing `{}` with plugin `{}`",
            printable(argument),
            self.name
        );
        let (answer, invoked) = self.invoke(request, context, &what, "").await;
        let result = match answer {
            Err(message) => Err(CompleteError::Failed(message)),
            Ok(response) => {
                let Response::Completed(completions) = response else {
                    unreachable!("a completion is answered with values")
                };
                self.check_completions(completions, &what)
                    .map_err(CompleteError::Failed)
            }
        };
        let outcome = match &result {
            Err(_) if invoked.outcome == Outcome::Ok => Outcome::BadOutput,
            _ => invoked.outcome,
        };
        let warning = match &result {
            Err(CompleteError::Failed(message)) if outcome.is_host_event() => Some(message.clone()),
            _ => None,
        };
        self.finish(invoked, outcome, Kind::Complete, label, None, &warning);
        result
    }

    /// Runs `request` (a read, a get, a completion) as a tool call is run:
    /// admitted under the plugin's concurrency limit and the server's rate
    /// limit, in a fresh instance under the plugin's limits. `Err` is why
    /// it has no answer, for the client, beginning with `what` (and the
    /// manifest lines that would grant what it reached for, if that is why).
    /// `served` is the prompt's name as served (empty for a read or a
    /// completion), for the count of calls cancelled.
    async fn invoke(
        &self,
        request: Request,
        context: CallContext,
        what: &str,
        served: &str,
    ) -> (Result<Response, String>, Invoked) {
        let started = Instant::now();
        let events = context.events.clone();
        let kind = match &request {
            Request::Read { .. } => Kind::Resource,
            Request::Get { .. } => Kind::Prompt,
            _ => Kind::Complete,
        };
        let mut invoked = Invoked {
            started,
            events,
            principal: context.principal.as_ref().map(|p| p.describe()),
            outcome: Outcome::Ok,
            fuel_used: 0,
            spent: None,
            span: audit::call_span(&self.name, kind),
        };
        // Past this function nothing waits: a cancelled call ends here.
        let underway = Underway::start(&self.meters, kind, served);
        let _permit = match self.admit_any(what) {
            Ok(permit) => permit,
            Err(refusal) => {
                invoked.outcome = refusal.outcome;
                underway.ended();
                return (Err(refusal.message), invoked);
            }
        };
        let (run, spent) = Box::pin(self.sandbox.run(
            &self.pre,
            self.spare.as_ref(),
            &self.name,
            &self.manifest,
            request,
            context,
            self.waiting.clone(),
        ))
        .instrument(invoked.span.clone())
        .await;
        let answer = match run {
            Ok(run) => {
                invoked.fuel_used = run.fuel_used;
                Ok(run.value)
            }
            Err(Failure::InputRequired { fuel_used }) => {
                tracing::debug!(plugin = %self.name, "{what}: waits for the client's input");
                invoked.outcome = Outcome::InputRequired;
                invoked.fuel_used = fuel_used;
                Err(format!("{what}: {InputRequired}"))
            }
            Err(failure) => {
                tracing::warn!(plugin = %self.name, "{what} failed: {failure}");
                invoked.outcome = Outcome::Failed(failure.outcome());
                invoked.fuel_used = match (&failure, &spent) {
                    (Failure::TimedOut { .. }, _) | (_, None) => 0,
                    (_, Some(spent)) => spent.fuel_used(self.manifest.limits.fuel),
                };
                let mut message = format!("{what} failed: {failure}");
                if let Some(spent) = &spent
                    && let Some(hint) = missing_grant::hint(
                        &self.name,
                        &self.manifest,
                        spent.reached(),
                        &message,
                        true,
                    )
                {
                    message.push_str("\n\n");
                    message.push_str(&hint);
                }
                Err(message)
            }
        };
        invoked.spent = spent;
        underway.ended();
        (answer, invoked)
    }

    /// Ends a call made through [`Plugin::invoke`] (see [`Plugin::after_call`]).
    fn finish(
        &self,
        invoked: Invoked,
        outcome: Outcome,
        kind: Kind,
        name: String,
        arguments: Option<Value>,
        warning: &Option<String>,
    ) {
        outcome.record_on(&invoked.span, invoked.fuel_used);
        let audit = Audit {
            meters: self.meters.clone(),
            plugin: self.name.clone(),
            kind,
            name,
            elapsed_us: invoked.started.elapsed().as_micros() as u64,
            fuel: invoked.fuel_used,
            outcome: outcome.label(),
            arguments,
            principal: invoked.principal,
            redacted: None,
            memory_bytes: None,
            instantiate_us: None,
        };
        let warning = warning.clone().filter(|_| outcome.is_host_event());
        self.after_call(invoked.spent, warning, invoked.events.as_ref(), audit);
    }

    /// Admits a read, a get or a completion under the plugin's concurrency
    /// limit and the server's rate limit.
    fn admit_any(&self, what: &str) -> Result<OwnedSemaphorePermit, Refusal> {
        let Ok(permit) = self.running.clone().try_acquire_owned() else {
            return Err(Refusal {
                message: format!(
                    "{what} refused: concurrency limit of {} calls reached for plugin `{}`; retry when a call finishes",
                    self.manifest.limits.concurrency, self.name
                ),
                outcome: Outcome::Refused("concurrency-limit"),
            });
        };
        if let Err(wait) = self.sandbox.take_global_token() {
            return Err(Refusal {
                message: format!(
                    "{what} refused: the server's rate limit of {} calls per second is reached; retry in {}",
                    self.sandbox.options().global_rate,
                    retry_after(wait)
                ),
                outcome: Outcome::Refused("rate-limit"),
            });
        }
        Ok(permit)
    }

    /// What to tell the client of `what` (`Reading … from plugin …`,
    /// `Prompt …`) ending with the plugin's own words `message` (a
    /// `failed` or an `invalid-arguments`), after `verb` (` failed`, or
    /// nothing): the message measured against the `output` limit and cut
    /// (see `plugin_text`), and the plugin's string freed. Over the limit,
    /// the message says so and the outcome is bad output; within it, the
    /// plugin's error.
    fn plugin_failed(&self, what: &str, verb: &str, message: String) -> (String, Outcome) {
        let limit = self.manifest.limits.output_bytes;
        let shown = plugin_text::shown(&message, limit);
        drop(message);
        match shown.over_limit_note(limit) {
            None => (format!("{what}{verb}: {}", shown.text), Outcome::Error),
            Some(note) => (
                format!("{what}{verb}, with {note}: {}", shown.text),
                Outcome::Failed("output-limit"),
            ),
        }
    }

    /// The message for output of `size` bytes past the plugin's limit.
    fn over_output(&self, what: &str, size: usize) -> Option<String> {
        let limit = self.manifest.limits.output_bytes;
        (size > limit).then(|| {
            format!(
                "{what} returned {} of output, more than the limit of {} (raise [limits] output in the plugin's manifest)",
                human_bytes(size),
                human_bytes(limit)
            )
        })
    }

    /// Checks a read's contents: their size, then each item's URI.
    fn check_contents(
        &self,
        contents: Vec<resources::Contents>,
        what: &str,
    ) -> Result<Vec<ResourceItem>, String> {
        let size = contents.iter().fold(0usize, |total, item| {
            let body = match &item.body {
                types::ResourceContents::Text(text) => text.len(),
                types::ResourceContents::Blob(bytes) => bytes.len(),
            };
            [
                total,
                item.uri.len(),
                item.mime_type.as_ref().map_or(0, String::len),
                body,
            ]
            .into_iter()
            .fold(0, usize::saturating_add)
        });
        if let Some(message) = self.over_output(what, size) {
            return Err(message);
        }
        contents
            .into_iter()
            .map(|item| {
                check_uri(&item.uri)
                    .map_err(|err| format!("{what} returned an item whose {err}"))?;
                if item.mime_type.as_ref().is_some_and(|m| m.len() > 255) {
                    return Err(format!(
                        "{what} returned an item whose MIME type is longer than 255 bytes"
                    ));
                }
                Ok(ResourceItem {
                    uri: item.uri,
                    mime_type: item.mime_type,
                    contents: match item.body {
                        types::ResourceContents::Text(text) => ResourceContents::Text(text),
                        types::ResourceContents::Blob(bytes) => ResourceContents::Blob(bytes),
                    },
                })
            })
            .collect()
    }

    /// Checks a prompt's messages: their size, as a tool result's content.
    fn check_prompt_result(
        &self,
        result: prompts::PromptResult,
        what: &str,
    ) -> Result<PromptOutput, String> {
        let size = result
            .messages
            .iter()
            .map(|message| output::content_size(&message.content).saturating_add(16))
            .fold(
                result.description.as_ref().map_or(0, String::len),
                usize::saturating_add,
            );
        if let Some(message) = self.over_output(what, size) {
            return Err(message);
        }
        Ok(PromptOutput {
            description: result.description,
            messages: result
                .messages
                .into_iter()
                .map(|message| PromptMessage {
                    role: match message.role {
                        types::Role::User => Role::User,
                        types::Role::Assistant => Role::Assistant,
                    },
                    content: output::content(message.content),
                })
                .collect(),
        })
    }

    /// Checks a completion's values: their size, then cuts them to
    /// [`MAX_COMPLETION_VALUES`] (saying there are more).
    fn check_completions(
        &self,
        completions: completion::Completions,
        what: &str,
    ) -> Result<Completions, String> {
        let size = completions
            .values
            .iter()
            .map(|value| value.len().saturating_add(4))
            .fold(0, usize::saturating_add);
        if let Some(message) = self.over_output(what, size) {
            return Err(message);
        }
        let mut values = completions.values;
        let cut = values.len() > MAX_COMPLETION_VALUES;
        values.truncate(MAX_COMPLETION_VALUES);
        values.shrink_to_fit();
        Ok(Completions {
            values,
            total: completions.total.map(u64::from),
            has_more: completions.has_more || cut,
        })
    }

    /// The call itself: admission, argument validation, the sandboxed run
    /// and the checks on what it returned.
    async fn run(
        &self,
        index: usize,
        name: &str,
        arguments: Value,
        context: CallContext,
    ) -> CallRecord {
        let tool = &self.tools[index];
        let limits = &self.manifest.limits;
        let _permit = match self.admit(index, name, context.principal.as_deref()) {
            Ok(permit) => permit,
            Err(refusal) => return CallRecord::refused(refusal, arguments),
        };
        let _task_permit = match context.as_task {
            false => None,
            true => match self.tasks.clone().try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => {
                    let refusal = Refusal {
                        message: format!(
                            "Tool `{name}` refused: {MAX_TASKS_RUNNING} calls of plugin `{}` are running as tasks already; retry when one ends (or cancel one)",
                            self.name
                        ),
                        outcome: Outcome::Refused("task-limit"),
                    };
                    return CallRecord::refused(refusal, arguments);
                }
            },
        };
        let budget = limits.validation_units;
        let heavy = self.sandbox.heavy_validations();
        let (arguments, verdict) = validation::validate(&tool.input, arguments, budget, heavy)
            .instrument(audit::validate_span("arguments"))
            .await;
        if let Err(rejection) = verdict {
            let refusal = match rejection {
                Rejection::Violations(violations) => Refusal {
                    message: format!("Invalid arguments for tool `{name}`:\n{violations}"),
                    outcome: Outcome::InvalidArguments,
                },
                Rejection::OverBudget(units) => Refusal {
                    message: format!(
                        "Invalid arguments for tool `{name}`: checking them against its input schema would take more than the validation budget of {} work units (the arguments are too large, or the schema too intricate, for the plugin's `validation` limit)",
                        group_digits(units)
                    ),
                    outcome: Outcome::Refused("validation-limit"),
                },
            };
            return CallRecord::refused(refusal, arguments);
        }
        let arguments_text = arguments.to_string();
        // Boxed: the sandbox's future is most of a call's state (kilobytes
        // of wasmtime's), and every future around it would otherwise be
        // that large too, and be copied when the request's task is spawned.
        let request = Request::Call {
            tool: tool.def.name.clone(),
            arguments: arguments_text,
        };
        let (run, spent) = Box::pin(self.sandbox.run(
            &self.pre,
            self.spare.as_ref(),
            &self.name,
            &self.manifest,
            request,
            context,
            self.waiting.clone(),
        ))
        .await;
        let (output, outcome, fuel_used) = match run {
            Ok(run) => {
                let Response::Called(result) = run.value else {
                    unreachable!("a call is answered with its result")
                };
                let over_limit = output::result_size(&result) > limits.output_bytes;
                let checked = match output::check(result, tool, name, limits) {
                    Ok(output) => self.check_structured(tool, name, output).await,
                    Err(message) => Err(message),
                };
                // Its manifest may ask for structured content as JSON text
                // beside its own text too; the protocol layer adds it only
                // where a result has no text. Added after the checks: the
                // output limit bounds what the plugin returned.
                let checked = checked.map(|output| {
                    if self.manifest.results.mirror_structured {
                        output.with_structured_as_text()
                    } else {
                        output
                    }
                });
                let (output, outcome) = match checked {
                    Ok(output) if output.is_error => (output, Outcome::Error),
                    Ok(output) => (output, Outcome::Ok),
                    Err(message) => {
                        tracing::warn!(plugin = %self.name, tool = %name, "bad output: {message}");
                        let outcome = match over_limit {
                            true => Outcome::Failed("output-limit"),
                            false => Outcome::BadOutput,
                        };
                        (CallOutput::error(message), outcome)
                    }
                };
                (output, outcome, run.fuel_used)
            }
            Err(Failure::InputRequired { fuel_used }) => {
                // Not the plugin's answer, nor a failure: the protocol layer
                // answers for the call (and discards this output).
                tracing::debug!(plugin = %self.name, tool = %name, "call waits for the client's input");
                let output = CallOutput::error(format!("Tool `{name}`: {InputRequired}"));
                (output, Outcome::InputRequired, fuel_used)
            }
            Err(failure) => {
                tracing::warn!(plugin = %self.name, tool = %name, "call failed: {failure}");
                let outcome = Outcome::Failed(failure.outcome());
                let output = CallOutput::failure(format!("Tool `{name}` failed: {failure}"));
                // What it burned before it ended, for the audit log. Not
                // known after a timeout: the run's fiber is dropped with
                // its fuel counters, so the store holds what ran before.
                let fuel_used = match (&failure, &spent) {
                    (Failure::TimedOut { .. }, _) | (_, None) => 0,
                    (_, Some(spent)) => spent.fuel_used(limits.fuel),
                };
                (output, outcome, fuel_used)
            }
        };
        let output = self.with_grant_hint(output, &outcome, spent.as_ref());
        CallRecord {
            output,
            outcome,
            fuel_used,
            spent,
            arguments,
        }
    }

    /// A failed call that reached for files or the network without the
    /// grant gets, after its own message, the manifest lines that would
    /// grant it (see `missing_grant`).
    fn with_grant_hint(
        &self,
        mut output: CallOutput,
        outcome: &Outcome,
        spent: Option<&Spent>,
    ) -> CallOutput {
        let (true, Some(spent)) = (output.is_error, spent) else {
            return output;
        };
        // The failure's text, or the error the plugin returned.
        let texts: Vec<&str> = output
            .content
            .iter()
            .filter_map(|content| match content {
                Content::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let trapped = matches!(outcome, Outcome::Failed(_));
        if let Some(hint) = missing_grant::hint(
            &self.name,
            &self.manifest,
            spent.reached(),
            &texts.join("\n"),
            trapped,
        ) {
            output.content.push(Content::text(hint));
        }
        output
    }

    /// Admits a call of tool number `index` under the plugin's concurrency
    /// limit, the server's rate limit and the tool's own, in that order; the
    /// permit is held for as long as the call runs.
    fn admit(
        &self,
        index: usize,
        name: &str,
        principal: Option<&corral_tool::Principal>,
    ) -> Result<OwnedSemaphorePermit, Refusal> {
        let refused = |label, message| Refusal {
            message,
            outcome: Outcome::Refused(label),
        };
        let Ok(permit) = self.running.clone().try_acquire_owned() else {
            return Err(refused(
                "concurrency-limit",
                format!(
                    "Tool `{name}` refused: concurrency limit of {} calls reached for plugin `{}`; retry when a call finishes",
                    self.manifest.limits.concurrency, self.name
                ),
            ));
        };
        if let Err(wait) = self.sandbox.take_global_token() {
            return Err(refused(
                "rate-limit",
                format!(
                    "Tool `{name}` refused: the server's rate limit of {} calls per second is reached; retry in {}",
                    self.sandbox.options().global_rate,
                    retry_after(wait)
                ),
            ));
        }
        match self.buckets[index].take(principal) {
            Ok(()) => {}
            Err((wait, Refused::Tool)) => {
                return Err(refused(
                    "rate-limit",
                    format!(
                        "Tool `{name}` refused: rate limit of {} calls per second reached; retry in {}",
                        self.buckets[index].rate(),
                        retry_after(wait)
                    ),
                ));
            }
            Err((wait, Refused::Principal)) => {
                return Err(refused(
                    "principal-rate-limit",
                    format!(
                        "Tool `{name}` refused: your rate limit of {} calls per second (per caller) reached; retry in {}",
                        self.buckets[index].rate(),
                        retry_after(wait)
                    ),
                ));
            }
        }
        Ok(permit)
    }

    /// Checks a successful result's structured content against the tool's
    /// output schema, within the validation budget.
    async fn check_structured(
        &self,
        tool: &CheckedTool,
        name: &str,
        mut output: CallOutput,
    ) -> Result<CallOutput, String> {
        let Some(schema) = tool.output.as_ref().filter(|_| !output.is_error) else {
            return Ok(output);
        };
        let Some(structured) = output.structured.take() else {
            return Ok(output);
        };
        let budget = self.manifest.limits.validation_units;
        let heavy = self.sandbox.heavy_validations();
        let (structured, verdict) = validation::validate(schema, structured, budget, heavy)
            .instrument(audit::validate_span("output"))
            .await;
        match verdict {
            Ok(()) => {
                output.structured = Some(structured);
                Ok(output)
            }
            Err(Rejection::Violations(violations)) => Err(format!(
                "Tool `{name}` returned structured content that does not match its output schema:\n{violations}"
            )),
            Err(Rejection::OverBudget(units)) => Err(format!(
                "Tool `{name}` returned structured content that would take more than the validation budget of {} work units to check against its output schema",
                group_digits(units)
            )),
        }
    }
}

/// A call made through [`Plugin::invoke`], for its end.
struct Invoked {
    started: Instant,
    events: Option<corral_tool::EventSink>,
    /// Who called, for the audit line ([`corral_tool::Principal::describe`]).
    principal: Option<String>,
    outcome: Outcome,
    fuel_used: u64,
    spent: Option<Spent>,
    /// The call's span.
    span: tracing::Span,
}

/// The warning for the client's log of a read that failed.
fn result_warning<T>(result: &Result<T, ReadError>) -> Option<String> {
    match result {
        Err(ReadError::Failed(message)) => Some(message.clone()),
        _ => None,
    }
}

/// The scopes each of `tools` needs under `manifest`'s `[access]`; a tool
/// that `[access] tools` names and the plugin does not list is warned of
/// (its list may depend on its state: not an error).
fn access_of_tools(plugin: &str, manifest: &Manifest, tools: &[CheckedTool]) -> Vec<Scopes> {
    let access = &manifest.access;
    for named in access.tools.keys() {
        if !tools.iter().any(|tool| tool.def.name == *named) {
            tracing::warn!(
                plugin = %plugin,
                "[access] tools names `{named}`, which plugin `{plugin}` does not list (now): its scopes apply if it ever does"
            );
        }
    }
    tools
        .iter()
        .map(|tool| access.tool_scopes(&tool.def.name))
        .collect()
}

/// What a plugin lists, validated.
struct Listed {
    tools: Vec<CheckedTool>,
    resources: Vec<ResourceDef>,
    templates: Vec<CheckedTemplate>,
    prompts: Vec<PromptDef>,
}

/// Calls the `list` of each interface the plugin exports, each in a fresh
/// instance under its limits, and checks the answers; all the definitions
/// together are held to the `metadata` limit.
async fn list_all(
    sandbox: &Sandbox,
    pre: &PluginPre<CallState>,
    name: &Arc<str>,
    manifest: &Manifest,
) -> Result<Listed> {
    let exports = pre.exports();
    let budget = manifest.limits.metadata_bytes;
    let list = |request: Request| async move {
        let function = request.function();
        sandbox
            .list(pre, name, manifest, request)
            .await
            .map(|run| run.value)
            .map_err(|failure| anyhow!("`{function}` failed: {failure}"))
    };
    let tools = match exports.tools {
        true => match list(Request::ListTools).await? {
            Response::Tools(tools) => tools,
            _ => unreachable!("a tools list is answered with tools"),
        },
        false => Vec::new(),
    };
    let (mut tools, held) =
        metadata::check_tools_held(tools, budget).map_err(|problems| anyhow!(problems))?;
    for tool in &mut tools {
        tool.def.task = manifest.limits.task;
    }
    let (resources, templates, held) = match exports.resources {
        true => match list(Request::ListResources).await? {
            Response::Resources(listing) => {
                check_resources(listing, held, budget).map_err(|problems| anyhow!(problems))?
            }
            _ => unreachable!("a resources list is answered with resources"),
        },
        false => (Vec::new(), Vec::new(), held),
    };
    let (prompts, _) = match exports.prompts {
        true => match list(Request::ListPrompts).await? {
            Response::Prompts(prompts) => {
                check_prompts(prompts, held, budget).map_err(|problems| anyhow!(problems))?
            }
            _ => unreachable!("a prompts list is answered with prompts"),
        },
        false => (Vec::new(), held),
    };
    Ok(Listed {
        tools,
        resources,
        templates,
        prompts,
    })
}

/// What became of one call: its answer, and what the audit log and the
/// clean-up after the answer need.
struct CallRecord {
    /// The answer, for the client.
    output: CallOutput,
    /// How the call ended, for the audit log and the client's log.
    outcome: Outcome,
    /// Fuel the plugin used: 0 when it did not run, or when the sandbox
    /// stopped it (a run suspended for its client's input was not
    /// stopped: what it used counts).
    fuel_used: u64,
    /// The instance the plugin ran in, to drop once the answer is on its
    /// way; `None` when no instance was made.
    spent: Option<Spent>,
    /// The arguments, handed back (validation takes them) for the audit log.
    arguments: Value,
}

impl CallRecord {
    /// A call turned away before its plugin ran.
    fn refused(refusal: Refusal, arguments: Value) -> CallRecord {
        CallRecord {
            output: CallOutput::error(refusal.message),
            outcome: refusal.outcome,
            fuel_used: 0,
            spent: None,
            arguments,
        }
    }
}

/// Why a call was turned away before its plugin ran: the tool execution
/// error's text, and the outcome for the audit log.
struct Refusal {
    message: String,
    outcome: Outcome,
}

/// How a call ended, for the audit log and the client's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The plugin answered.
    Ok,
    /// The plugin answered with a tool execution error.
    Error,
    /// The arguments broke the tool's input schema; the plugin did not run.
    InvalidArguments,
    /// The plugin's answer broke the contract (too large, structured
    /// content that is not JSON or breaks the tool's output schema).
    BadOutput,
    /// A rate or concurrency limit refused the call; the plugin did not run.
    Refused(&'static str),
    /// The sandbox stopped the plugin (a limit or a trap).
    Failed(&'static str),
    /// The run ended to wait for the client's input (see `ask`).
    InputRequired,
    /// A read found no resource at the URI.
    NotFound,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::InvalidArguments => "invalid-arguments",
            Outcome::BadOutput => "bad-output",
            Outcome::InputRequired => "input-required",
            Outcome::NotFound => "not-found",
            Outcome::Refused(label) | Outcome::Failed(label) => label,
        }
    }

    /// Puts the outcome and the fuel burned on the call's `span`.
    fn record_on(self, span: &tracing::Span, fuel: u64) {
        if span.is_disabled() {
            return;
        }
        span.record("corral.outcome", self.label());
        span.record("corral.fuel", fuel);
        if !matches!(self, Outcome::Ok | Outcome::InputRequired) {
            span.record("otel.status_code", "error");
        }
    }

    /// Limits, traps and answers the host refused are the host's doing,
    /// not the plugin's answer.
    fn is_host_event(self) -> bool {
        matches!(
            self,
            Outcome::Refused(_) | Outcome::Failed(_) | Outcome::BadOutput
        )
    }
}

/// What `corral inspect` reports about a plugin file.
pub struct Inspection {
    pub name: String,
    pub bytes: u64,
    pub manifest: Manifest,
    /// The contract version it targets, or why it targets none the host serves.
    pub contract: Result<Contract, String>,
    /// Every import, with what the host does about it.
    pub imports: Vec<(String, imports::Verdict)>,
    /// The plugin as loaded (its tools, resources, templates and prompts),
    /// or why it would not load.
    pub loaded: Result<Plugin, String>,
}

/// What a component is, apart from any manifest: the contract it targets
/// and the names of its imports and exports.
#[derive(Debug, Clone)]
pub struct ComponentShape {
    pub contract: Result<Contract, String>,
    pub imports: Vec<String>,
    pub exports: Vec<String>,
}

/// The shape of the component `bytes` (compiled, not run).
pub fn component_shape(sandbox: &Sandbox, bytes: &[u8]) -> Result<ComponentShape> {
    let component = sandbox
        .compile(bytes)
        .context("not a valid WebAssembly component")?;
    let engine = sandbox.engine();
    let ty = component.component_type();
    Ok(ComponentShape {
        contract: Contract::of(engine, &component).map_err(|err| err.to_string()),
        imports: ty
            .imports(engine)
            .map(|(name, _)| name.to_owned())
            .collect(),
        exports: ty
            .exports(engine)
            .map(|(name, _)| name.to_owned())
            .collect(),
    })
}

/// Inspects the plugin at `path`: its imports, the authority its manifest
/// grants, and its tools (loading it as `serve` would).
pub async fn inspect(sandbox: &Arc<Sandbox>, path: &Path) -> Result<Inspection> {
    // Read once: the report and the load describe the same files.
    let files = PluginFiles::read(path)
        .await
        .with_context(|| format!("cannot inspect {}", path.display()))?;
    let bytes = files.wasm.len() as u64;
    let component = sandbox
        .compile(&files.wasm)
        .context("not a valid WebAssembly component")?;
    let manifest = Manifest::from_text(path, files.manifest.as_deref())?;
    let imports = imports::review(sandbox.engine(), &component, &manifest);
    let contract = Contract::of(sandbox.engine(), &component).map_err(|err| err.to_string());
    let loaded = Plugin::load_from(sandbox, path, files)
        .await
        .map_err(|err| format!("{err:#}"));
    Ok(Inspection {
        name: plugin_name(path),
        bytes,
        manifest,
        contract,
        imports,
        loaded,
    })
}
