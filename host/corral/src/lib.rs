//! Corral serves WebAssembly components as MCP tools.
//!
//! This crate is the only one that knows both sides: the protocol
//! (`corral-mcp`) serves a [`ToolHost`](corral_tool::ToolHost), and
//! [`host`] is one: the [`catalog`] routes each tool name to a plugin of
//! the sandbox (`corral-sandbox`), and [`reports`] carries what the server
//! says about its plugins to clients' logs; [`access`] works out what the
//! served resources need of a caller's token. Beside that path: [`watch`]
//! turns filesystem events into debounced batches and [`reload`] applies
//! them to the catalog as new snapshots; [`relist`] does the same for a
//! plugin that says its tools changed. For plugin authors, apart from
//! serving: [`scaffold`] writes a new plugin project (`corral new`);
//! [`bindings`] writes a C or Go plugin's bindings to the [`contract`]
//! compiled into this binary, and [`componentize`] makes the component of
//! the module the author's compiler wrote; [`dev`] rebuilds a plugin
//! project whenever its sources change, while `corral dev` serves it.
//! For distribution: [`distribute`] pushes plugins to OCI registries and
//! pulls them into folders (`corral-registry` underneath), showing what
//! [`grants`] a pulled plugin asks for. [`state`] places the plugins'
//! durable stores and shows what they keep (`corral state`).
//! `main.rs` is the command line.
//!
//! Data flows one way, and the crate graph enforces it: wire -> dispatch
//! (`corral-mcp`) -> catalog lookup (here) -> validation, sandboxed call,
//! output checks (`corral-sandbox`) -> shaping for the client's revision
//! (`corral-mcp`) -> wire. `corral-tool` holds the types they share.

pub mod access;
pub mod bindings;
pub mod catalog;
pub mod componentize;
pub mod contract;
pub mod dev;
pub mod distribute;
pub mod grants;
pub mod host;
pub mod relist;
pub mod reload;
pub mod reports;
pub mod scaffold;
pub mod secrets;
pub mod state;
pub mod task_store;
pub mod telemetry;
pub mod watch;
