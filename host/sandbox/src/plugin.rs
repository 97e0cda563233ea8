//! Plugins: loading a component from a file and running its tools in the sandbox.
//!
//! Loading compiles the component once, resolves its imports once
//! (`InstancePre`), calls `list` under limits and validates the answer. Each
//! call then gets a fresh instance: argument validation, the sandboxed call,
//! and validation of what the plugin returned.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result, anyhow};
use serde_json::{Map, Value};
use tokio::sync::OwnedSemaphorePermit;

use corral_tool::{CallContext, CallEvent, CallOutput, Content, LogLevel, ToolDef};

use crate::ask::{InputRequired, WaitingCalls};
use crate::bindings::Contract;
use crate::bindings::PluginPre;
use crate::manifest::Manifest;
use crate::metadata::CheckedTool;
use crate::naming::plugin_name;
use crate::quota::{TokenBucket, retry_after};
use crate::sandbox::{CallState, Failure, Sandbox, Spent};
use crate::units::group_digits;
use crate::validation::Rejection;
use crate::{imports, metadata, missing_grant, output, validation};

/// A loaded plugin: a prepared component and its validated tools.
pub struct Plugin {
    /// From the file name: `calc.wasm` is `calc`.
    name: Arc<str>,
    path: PathBuf,
    sandbox: Arc<Sandbox>,
    pre: PluginPre<CallState>,
    manifest: Manifest,
    tools: Vec<CheckedTool>,
    /// One bucket per tool, in `tools` order; shared with the versions
    /// [`Plugin::relist`] makes, for the tools they keep.
    buckets: Vec<Arc<TokenBucket>>,
    /// Permits for calls running at once, shared with the versions
    /// [`Plugin::relist`] makes: a re-list does not reset the limit.
    running: Arc<tokio::sync::Semaphore>,
    /// Room for calls waiting for their clients at once (half of the
    /// permits): a waiting call holds its permit all along.
    waiting: Arc<WaitingCalls>,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("tools", &self.tools.len())
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
        let wasm = tokio::fs::read(path).await.context("reading the file")?;
        let manifest = Manifest::read_text(path)?;
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
        let PluginFiles { wasm, manifest } = files;
        let compiler = sandbox.clone();
        let component = tokio::task::spawn_blocking(move || compiler.compile(&wasm))
            .await?
            .context("not a valid WebAssembly component")?;
        let manifest = Manifest::from_text(path, manifest.as_deref())?;
        let contract = Contract::of(sandbox.engine(), &component)?;
        imports::check(sandbox.engine(), &component, &manifest)?;
        let pre = sandbox
            .prepare(&component, contract)
            .context("the component's imports cannot be satisfied")?;
        let listed = sandbox
            .list(&pre, &name, &manifest)
            .await
            .map_err(|failure| anyhow!("`list` failed: {failure}"))?;
        let limits = manifest.limits;
        let tools = metadata::check_tools(listed.value, limits.metadata_bytes)
            .map_err(|problems| anyhow!(problems))?;
        let buckets = tools
            .iter()
            .map(|_| Arc::new(TokenBucket::new(limits.rate, limits.burst)))
            .collect();
        tracing::info!(
            plugin = %name,
            tools = tools.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "loaded {}",
            path.display()
        );
        Ok(Plugin {
            name,
            path: path.to_owned(),
            sandbox: sandbox.clone(),
            pre,
            manifest,
            tools,
            buckets,
            running: Arc::new(tokio::sync::Semaphore::new(limits.concurrency as usize)),
            waiting: WaitingCalls::for_concurrency(limits.concurrency),
        })
    }

    /// Calls `list` again, for a plugin that said its tools changed
    /// (`host.tools-changed`): under the same limits and metadata checks as
    /// a load, on the component already prepared. The new version shares
    /// this one's concurrency limit, and the rate limit of every tool it
    /// keeps (by name); calls already running finish on this version.
    pub async fn relist(&self) -> Result<Plugin> {
        let listed = self
            .sandbox
            .list(&self.pre, &self.name, &self.manifest)
            .await
            .map_err(|failure| anyhow!("`list` failed: {failure}"))?;
        let limits = &self.manifest.limits;
        let tools = metadata::check_tools(listed.value, limits.metadata_bytes)
            .map_err(|problems| anyhow!(problems))?;
        let buckets = tools
            .iter()
            .map(|tool| {
                self.tools
                    .iter()
                    .position(|old| old.def.name == tool.def.name)
                    .map(|index| self.buckets[index].clone())
                    .unwrap_or_else(|| Arc::new(TokenBucket::new(limits.rate, limits.burst)))
            })
            .collect();
        Ok(Plugin {
            name: self.name.clone(),
            path: self.path.clone(),
            sandbox: self.sandbox.clone(),
            pre: self.pre.clone(),
            manifest: self.manifest.clone(),
            tools,
            buckets,
            running: self.running.clone(),
            waiting: self.waiting.clone(),
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

    /// The version of the plugin contract the plugin targets.
    pub fn contract(&self) -> Contract {
        self.pre.contract()
    }

    /// The limits and grants the plugin runs under.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
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
        let started = Instant::now();
        let CallRecord {
            output,
            outcome,
            fuel_used,
            spent,
            arguments,
        } = self
            .run(index, name, Value::Object(arguments), context)
            .await;
        if spent.as_ref().is_some_and(Spent::tools_changed) {
            // Whatever the outcome: what the call stored before it failed
            // is stored all the same.
            self.sandbox.tools_changed().mark(&self.path);
        }
        if outcome.is_host_event()
            && let (Some(events), Some(Content::Text { text, .. })) =
                (&events, output.content.first())
        {
            // A limit hit or a trap: the client hears of it in its log too.
            events(CallEvent::Log {
                level: LogLevel::Warning,
                message: text.clone(),
            });
        }
        let audit = Audit {
            plugin: self.name.clone(),
            tool: name.into(),
            elapsed_us: started.elapsed().as_micros() as u64,
            fuel: fuel_used,
            outcome: outcome.label(),
            arguments: self.sandbox.options().log_arguments.then_some(arguments),
        };
        self.sandbox.after_answer(move || {
            drop(spent);
            audit.log();
        });
        output
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
        let _permit = match self.admit(index, name) {
            Ok(permit) => permit,
            Err(refusal) => return CallRecord::refused(refusal, arguments),
        };
        let budget = limits.validation_units;
        let heavy = self.sandbox.heavy_validations();
        let (arguments, verdict) =
            validation::validate(&tool.input, arguments, budget, heavy).await;
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
        let (run, spent) = Box::pin(self.sandbox.call(
            &self.pre,
            &self.name,
            &self.manifest,
            &tool.def.name,
            &arguments_text,
            context,
            self.waiting.clone(),
        ))
        .await;
        let (output, outcome, fuel_used) = match run {
            Ok(run) => {
                let checked = match output::check(run.value, tool, name, limits) {
                    Ok(output) => self.check_structured(tool, name, output).await,
                    Err(message) => Err(message),
                };
                let (output, outcome) = match checked {
                    Ok(output) if output.is_error => (output, Outcome::Error),
                    Ok(output) => (output, Outcome::Ok),
                    Err(message) => {
                        tracing::warn!(plugin = %self.name, tool = %name, "bad output: {message}");
                        (CallOutput::error(message), Outcome::BadOutput)
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
                let output = CallOutput::error(format!("Tool `{name}` failed: {failure}"));
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
        let trapped = match (outcome, output.content.first()) {
            (Outcome::Failed(_), Some(Content::Text { text, .. })) => Some(text.as_str()),
            (Outcome::Failed(_), _) => Some(""),
            _ => None,
        };
        if output.is_error
            && let Some(spent) = spent
            && let Some(hint) =
                missing_grant::hint(&self.name, &self.manifest, spent.reached(), trapped)
        {
            output.content.push(Content::text(hint));
        }
        output
    }

    /// Admits a call of tool number `index` under the plugin's concurrency
    /// limit, the server's rate limit and the tool's own, in that order; the
    /// permit is held for as long as the call runs.
    fn admit(&self, index: usize, name: &str) -> Result<OwnedSemaphorePermit, Refusal> {
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
        if let Err(wait) = self.buckets[index].take() {
            return Err(refused(
                "rate-limit",
                format!(
                    "Tool `{name}` refused: rate limit of {} calls per second reached; retry in {}",
                    self.buckets[index].rate(),
                    retry_after(wait)
                ),
            ));
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
        let (structured, verdict) = validation::validate(schema, structured, budget, heavy).await;
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

/// One call's line in the audit log.
struct Audit {
    plugin: Arc<str>,
    tool: String,
    elapsed_us: u64,
    fuel: u64,
    outcome: &'static str,
    /// Only when the server logs arguments (they may be private).
    arguments: Option<Value>,
}

impl Audit {
    fn log(self) {
        let Audit {
            plugin,
            tool,
            elapsed_us,
            fuel,
            outcome,
            arguments,
        } = self;
        match arguments {
            Some(arguments) => {
                tracing::info!(plugin = %plugin, tool = %tool, elapsed_us, fuel, outcome, %arguments, "call")
            }
            None => {
                tracing::info!(plugin = %plugin, tool = %tool, elapsed_us, fuel, outcome, "call")
            }
        }
    }
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
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::InvalidArguments => "invalid-arguments",
            Outcome::BadOutput => "bad-output",
            Outcome::InputRequired => "input-required",
            Outcome::Refused(label) | Outcome::Failed(label) => label,
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
    /// The tools, or why the plugin would not load.
    pub tools: Result<Vec<ToolDef>, String>,
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
    let tools = Plugin::load_from(sandbox, path, files)
        .await
        .map(|plugin| plugin.tools().cloned().collect())
        .map_err(|err| format!("{err:#}"));
    Ok(Inspection {
        name: plugin_name(path),
        bytes,
        manifest,
        contract,
        imports,
        tools,
    })
}
