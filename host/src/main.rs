//! The `corral` command line.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use clap::{Parser, Subcommand};
use corral::catalog::{self, Catalog, Snapshot};
use corral::mcp::{self, Revision, ServerOptions, ToolHost};
use corral::plugin::Sandbox;
use corral::tool::{CallEvent, EventSink};
use serde_json::{Map, Value};
use tracing_subscriber::EnvFilter;

/// Serve WebAssembly components as MCP tools.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// Log level for stderr (error, warn, info, debug, trace, or a RUST_LOG filter).
    #[arg(long, global = true, env = "CORRAL_LOG")]
    log_level: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve every plugin (*.wasm component) in DIR over stdio (MCP).
    Serve {
        /// The plugin folder.
        dir: PathBuf,
        /// Tools per tools/list page.
        #[arg(long, default_value_t = ServerOptions::default().page_size)]
        page_size: usize,
    },
    /// Print the tools that `serve DIR` would offer.
    List {
        /// The plugin folder.
        dir: PathBuf,
        /// Print the tools as MCP JSON (newest revision) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run one tool call and print its result as MCP JSON.
    ///
    /// Exits with 1 when the result is a tool execution error.
    Call {
        /// The plugin folder.
        dir: PathBuf,
        /// The tool name, as `list` shows it.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_level.as_deref());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("starting the async runtime");
    match runtime.block_on(run(cli.command)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("corral: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Logs go to stderr only: stdout is the protocol.
fn init_logging(level: Option<&str>) {
    let filter = match level {
        Some(level) => EnvFilter::new(level),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}

async fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Serve { dir, page_size } => {
            let catalog = load(&dir).await?;
            let options = ServerOptions {
                page_size,
                ..ServerOptions::default()
            };
            mcp::serve_stdio(Arc::new(catalog), options).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::List { dir, json } => {
            let snapshot = load(&dir).await?.snapshot();
            print_tools(&snapshot, json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            dir,
            tool,
            arguments,
        } => {
            let arguments: Map<String, Value> =
                serde_json::from_str(&arguments).context("the arguments must be a JSON object")?;
            let catalog = load(&dir).await?;
            let Ok(output) = catalog.call(&tool, arguments, Some(print_events())).await else {
                bail!(
                    "unknown tool `{tool}`; `corral list {}` shows the tools",
                    dir.display()
                );
            };
            let result = mcp::call_result_json(&output, Revision::NEWEST_LEGACY);
            println!("{}", serde_json::to_string_pretty(&result)?);
            Ok(if output.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

async fn load(dir: &Path) -> Result<Catalog> {
    if !dir.is_dir() {
        bail!("{} is not a folder", dir.display());
    }
    let sandbox = Sandbox::new()?;
    let snapshot: Snapshot = catalog::load_dir(&sandbox, dir).await?;
    Ok(Catalog::new(snapshot))
}

fn print_tools(snapshot: &Snapshot, json: bool) {
    if json {
        let tools: Vec<Value> = snapshot
            .tools()
            .iter()
            .map(|tool| mcp::tool_json(tool, Revision::NEWEST_LEGACY))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "tools": tools })).unwrap()
        );
        return;
    }
    let width = snapshot
        .tools()
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0);
    for tool in snapshot.tools().iter() {
        let summary = tool
            .description
            .as_deref()
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        println!("{:width$}  {summary}", tool.name);
    }
}

/// For `corral call`: show progress and plugin logs on stderr.
fn print_events() -> EventSink {
    Arc::new(|event| match event {
        CallEvent::Progress {
            done,
            total,
            message,
        } => {
            let total = total.map(|t| format!("/{t}")).unwrap_or_default();
            eprintln!("progress {done}{total} {}", message.unwrap_or_default());
        }
        CallEvent::Log { .. } => {} // already logged to stderr by the sandbox
    })
}
