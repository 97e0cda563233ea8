//! The Model Context Protocol, server side: wire framing, JSON-RPC, dispatch
//! per protocol revision of tools, resources, prompts and completion, and
//! result shaping.
//!
//! This crate knows nothing of WebAssembly: it serves whatever implements
//! [`ToolHost`] (from `corral-tool`), and Cargo keeps it so: it does not
//! depend on wasmtime or on the sandbox.

pub mod auth;
mod client;
mod http;
pub mod jsonrpc;
mod params;
pub mod revision;
mod session;
mod shape;
mod stdio;
pub mod tasks;
mod telemetry;

pub use client::StateKey;
pub use http::{HttpOptions, Probes, serve_http, serve_probes};
pub use revision::Revision;
pub use session::{Outbox, ServerOptions, Session};
pub use shape::{call_result_json, tool_json};
pub use stdio::{serve, serve_stdio};

pub use corral_tool::{HostEvents, HostLog, ToolHost, UnknownTool};
