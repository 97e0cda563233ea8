//! The protocol in process: a [`corral_mcp::Session`] serving a fake tool
//! host, driven with raw JSON lines as a transport drives it, and every
//! answer checked whole against what the MCP revisions (and JSON-RPC 2.0)
//! say the server sends. No plugins, no processes: the whole suite runs in
//! well under a second.

mod support;

mod asks;
mod authorization;
mod batches;
mod calls;
mod events;
mod handshake;
mod listing;
mod prompts;
mod resources;
mod stateless;
mod wire;
