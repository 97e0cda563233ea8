//! Corral serves WebAssembly components as MCP tools.
//!
//! Data flows one way: the wire ([`mcp`]) dispatches to the [`catalog`],
//! which routes a tool name to a [`plugin`]; the plugin validates the
//! arguments against the tool's [`schema`], runs the call in a fresh
//! sandboxed instance, and checks the result, which the protocol layer then
//! shapes for the client's revision. [`tool`] holds the types they share.
//!
//! Beside that path: [`watch`] turns filesystem events into debounced
//! batches, [`reload`] applies them to the catalog as new snapshots, and
//! [`cache`] keeps compiled plugins on disk.

pub mod cache;
pub mod catalog;
pub mod manifest;
pub mod mcp;
pub mod memory;
pub mod plugin;
pub mod reload;
pub mod schema;
pub mod tool;
pub mod watch;
