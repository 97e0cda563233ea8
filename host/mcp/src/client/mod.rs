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
pub use state::{StateKey, Subject};
pub use stateless::StatelessClient;

use serde_json::Value;

use crate::Revision;
use corral_tool::{ClientCapabilities, InputKind, InputRequest};

/// What a client declared it can answer (at `initialize`, or in a stateless
/// request's `_meta`), as this crate needs it: the capabilities a tool sees,
/// and what only shapes the requests sent to the client.
#[derive(Debug, Clone, Copy, Default)]
pub struct Declared {
    pub capabilities: ClientCapabilities,
    /// `sampling.context`: the client takes `includeContext` values other
    /// than "none" (see [`leave_out_undeclared_context`]).
    pub sampling_context: bool,
}

impl Declared {
    /// Reads MCP `ClientCapabilities`.
    pub fn from_json(capabilities: &Value) -> Declared {
        Declared {
            capabilities: ClientCapabilities::from_json(capabilities),
            sampling_context: capabilities
                .get("sampling")
                .and_then(|sampling| sampling.get("context"))
                .is_some_and(Value::is_object),
        }
    }
}

/// Leaves `includeContext` out of a sampling request to a client of
/// `revision` that did not declare `sampling.context`: from 2025-11-25 on,
/// its values other than "none" are soft-deprecated, and servers "SHOULD
/// only use these values if the client declares
/// ClientCapabilities.sampling.context". Left out, it means "none" (which a
/// client was always free to treat it as: it MAY ignore it). Earlier
/// revisions have no such capability, and take it as the tool asked.
pub fn leave_out_undeclared_context(
    request: &mut InputRequest,
    revision: Revision,
    declared: Declared,
) {
    if request.kind == InputKind::Sample
        && revision >= Revision::V2025_11_25
        && !declared.sampling_context
    {
        request.params.remove("includeContext");
    }
}
