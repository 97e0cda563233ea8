//! The [`Client`](corral_tool::Client) a running tool asks for input
//! (elicitation, sampling, roots), one per era of the protocol:
//!
//! - [`legacy`]: in a session opened by `initialize`, the server sends the
//!   client JSON-RPC requests during the call and waits for its responses,
//!   as MCP up to 2025-11-25 has it. The session keeps the requests waiting
//!   ([`legacy::Pending`]).
//! - [`stateless`]: a 2026-07-28 request has no session to answer on, so
//!   the call ends with `input_required` and is run again when the client
//!   retries with the answers; what must survive between the two travels
//!   with the client, sealed ([`state`]).
//!
//! Either way a tool asks only for what the client declared (at
//! `initialize`, or in the request's `_meta`), and nothing it asks holds the
//! server without bound: waiting requests are counted and cancelled with
//! their call, and states are limited in size, rounds and lifetime.

pub mod legacy;
pub mod state;
pub mod stateless;

pub use legacy::{LegacyClient, Pending};
pub use state::StateKey;
pub use stateless::StatelessClient;
