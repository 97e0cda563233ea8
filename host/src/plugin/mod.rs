//! Plugins: loading a component from a file and running its tools in the sandbox.
//!
//! Loading compiles the component once, resolves its imports once
//! (`InstancePre`), calls `list` under limits and validates the answer. Each
//! call then gets a fresh instance: argument validation, the sandboxed call,
//! and validation of what the plugin returned.

mod bindings;
mod metadata;
mod output;
mod sandbox;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result, anyhow};
use serde_json::{Map, Value};

pub use metadata::{is_valid_tool_name, printable};
pub use sandbox::{Failure, Limits, Sandbox, human_bytes, human_duration};

use crate::schema;
use crate::tool::{CallOutput, EventSink, ToolDef};
use bindings::PluginPre;
use metadata::CheckedTool;
use sandbox::CallState;

/// A loaded plugin: a prepared component and its validated tools.
pub struct Plugin {
    /// From the file name: `calc.wasm` is `calc`.
    name: Arc<str>,
    path: PathBuf,
    sandbox: Arc<Sandbox>,
    pre: PluginPre<CallState>,
    limits: Limits,
    tools: Vec<CheckedTool>,
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

impl Plugin {
    /// Loads the component at `path`. Every failure names the step that failed.
    pub async fn load(sandbox: &Arc<Sandbox>, path: &Path) -> Result<Plugin> {
        let started = Instant::now();
        let name: Arc<str> = plugin_name(path).into();
        let bytes = tokio::fs::read(path).await.context("reading the file")?;
        let compiler = sandbox.clone();
        let component = tokio::task::spawn_blocking(move || compiler.compile(&bytes))
            .await?
            .context("not a valid WebAssembly component")?;
        let pre = sandbox
            .prepare(&component)
            .context("the component's imports cannot be satisfied")?;
        let limits = Limits::default();
        let listed = sandbox
            .list(&pre, &name, &limits)
            .await
            .map_err(|failure| anyhow!("`list` failed: {failure}"))?;
        let tools = metadata::check_tools(listed.value).map_err(|problems| anyhow!(problems))?;
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
            limits,
            tools,
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

    /// Calls tool number `index` (in [`Plugin::tools`] order) with `arguments`.
    ///
    /// Every problem becomes a tool execution error the model can act on:
    /// arguments that break the input schema (each violation with its JSON
    /// pointer), a limit hit, a trap, or a result that breaks the tool's own
    /// output schema.
    pub async fn call(
        &self,
        index: usize,
        arguments: &Map<String, Value>,
        events: Option<EventSink>,
    ) -> CallOutput {
        let tool = &self.tools[index];
        let name = &tool.def.name;
        let started = Instant::now();
        let arguments_value = Value::Object(arguments.clone());
        let violations = tool.input.violations(&arguments_value);
        if !violations.is_empty() {
            return CallOutput::error(format!(
                "Invalid arguments for tool `{name}`:\n{}",
                schema::describe(&violations)
            ));
        }
        let arguments_text = arguments_value.to_string();
        let run = self
            .sandbox
            .call(
                &self.pre,
                &self.name,
                &self.limits,
                name,
                &arguments_text,
                events,
            )
            .await;
        let elapsed_us = started.elapsed().as_micros() as u64;
        match run {
            Ok(run) => {
                let output = output::check(run.value, tool, &self.limits);
                let outcome = if output.is_error { "error" } else { "ok" };
                tracing::info!(plugin = %self.name, tool = %name, elapsed_us, fuel = run.fuel_used, outcome, "call");
                output
            }
            Err(failure) => {
                tracing::warn!(plugin = %self.name, tool = %name, elapsed_us, "call failed: {failure}");
                CallOutput::error(format!("Tool `{name}` failed: {failure}"))
            }
        }
    }
}

/// The plugin's name: the file stem, with anything outside `[A-Za-z0-9_-]`
/// replaced by `_` so that it can prefix tool names.
pub fn plugin_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "plugin".into()
    } else {
        name
    }
}
