//! The Model Context Protocol, tools only: wire framing, JSON-RPC, dispatch
//! per protocol revision, and result shaping.
//!
//! This layer knows nothing of WebAssembly. It serves whatever implements
//! [`ToolHost`].

pub mod jsonrpc;
pub mod revision;
mod server;
mod shape;

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::tool::{CallOutput, EventSink, ToolDef};

pub use revision::Revision;
pub use server::{ServerOptions, serve, serve_stdio};
pub use shape::{call_result_json, tool_json};

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
}
