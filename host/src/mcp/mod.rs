//! The Model Context Protocol, tools only: wire framing, JSON-RPC, dispatch
//! per protocol revision, and result shaping.
//!
//! This layer knows nothing of WebAssembly. It serves whatever implements
//! [`ToolHost`].

mod http;
pub mod jsonrpc;
pub mod revision;
mod session;
mod shape;
mod stdio;

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};

use crate::tool::{CallOutput, EventSink, LogLevel, ToolDef};

pub use http::{HttpOptions, serve_http};
pub use revision::Revision;
pub use session::{Outbox, ServerOptions, Session};
pub use shape::{call_result_json, tool_json};
pub use stdio::{serve, serve_stdio};

/// The named tool does not exist (a JSON-RPC `-32602` error, unlike every
/// other call problem, which is a tool execution error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownTool;

/// What the protocol layer needs from the rest of the server.
pub trait ToolHost: Send + Sync + 'static {
    /// The tools to list, in a deterministic order.
    fn tools(&self) -> Arc<[ToolDef]>;

    /// Runs a tool. Problems with the call itself (bad arguments, limits,
    /// traps) are tool execution errors inside the output.
    fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        events: Option<EventSink>,
    ) -> impl Future<Output = Result<CallOutput, UnknownTool>> + Send;

    /// Resolves once the first tool list is known. `tools/list` and
    /// `tools/call` wait for it, so that no client sees an empty list while
    /// the server is still starting; `initialize`, `ping` and
    /// `server/discover` do not.
    fn ready(&self) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }

    /// What a session passes on to its client while it runs: tool list
    /// changes and server log messages. `None`: the tool list never changes.
    fn subscribe(&self) -> Option<HostEvents> {
        None
    }
}

/// One session's subscription to a [`ToolHost`]'s events.
#[derive(Debug)]
pub struct HostEvents {
    /// Marked changed each time the tool list visibly changes (several
    /// changes before the session looks may count as one).
    pub tools_changed: watch::Receiver<u64>,
    /// Messages for the client's log, such as a plugin that failed to reload.
    pub logs: broadcast::Receiver<HostLog>,
}

/// A server log message for clients (`notifications/message`).
#[derive(Debug, Clone, PartialEq)]
pub struct HostLog {
    pub level: LogLevel,
    /// The MCP `logger` field, naming what the message is about.
    pub logger: String,
    pub message: String,
}
