//! JSON-RPC batches (2025-03-26): what may not be in one, and the memory
//! their answer may hold.

use super::*;

/// The most messages one JSON-RPC batch may hold. Each request in it runs at
/// once, and its answer is held until the last one ends.
pub(super) const MAX_BATCH_ITEMS: usize = 256;

/// Why `request` must not be part of a batch, if it must not. A batch's
/// answer is one array, held until its last request ends, so nothing in it
/// may wait without bound, and nothing in it may change how the rest is
/// served:
/// - `initialize` negotiates the revision the other requests are served in;
/// - a request of the stateless era (2026-07-28: `subscriptions/listen`,
///   `server/discover`, or a `_meta` naming a protocol version) belongs to a
///   revision that has no batches, which only 2025-03-26 has; and a listen
///   stream, which ends only when the client cancels it or the session
///   ends, would hold the whole batch's answer as long.
///
/// A tool asking the client for input would make a batch wait on the
/// client too; that is refused where calls are made: a call in a batch asks
/// nothing (see `LegacyClient::in_batch`).
pub(super) fn batch_refusal(request: &Request) -> Option<RpcError> {
    let message = if request.method == "initialize" {
        "Invalid Request: initialize must not be part of a batch".to_string()
    } else if STATELESS_ONLY_METHODS.contains(&request.method.as_str()) {
        format!(
            "Invalid Request: {} belongs to protocol revision {}, and JSON-RPC batches to {}: send it on its own, outside a batch",
            request.method,
            Revision::V2026_07_28,
            Revision::V2025_03_26
        )
    } else if Era::is_stateless(request) {
        format!(
            "Invalid Request: a request whose `_meta` carries \"{META_PROTOCOL_VERSION}\" is of the stateless era (protocol revision {}), and JSON-RPC batches belong to {}: send it on its own, outside a batch",
            Revision::V2026_07_28,
            Revision::V2025_03_26
        )
    } else {
        return None;
    };
    Some(RpcError::invalid_request(message))
}

/// The most host memory the answer to a batch may hold (its responses as
/// JSON values, about four times the 16 MiB of output at which stdio stops
/// reading): the same requests sent one by one would have been answered,
/// and their answers written, as each ended.
const MAX_BATCH_ANSWER_BYTES: usize = 64 << 20;

/// `response` if the batch's answer, holding `held` bytes, has room for it
/// (and then counted in `held`); otherwise an error response in its place.
pub(super) fn within_batch_budget(response: Value, held: &AtomicUsize) -> Value {
    let size = heap_bytes(&response);
    let before = held.fetch_add(size, Ordering::Relaxed);
    if before.saturating_add(size) <= MAX_BATCH_ANSWER_BYTES {
        return response;
    }
    held.fetch_sub(size, Ordering::Relaxed);
    crate::telemetry::budget_refused("batch_answer");
    let id = response.get("id").cloned().unwrap_or(Value::Null);
    let error = RpcError::new(
        jsonrpc::code::INTERNAL_ERROR,
        format!(
            "Internal error: this response would take the batch's answer past {} MiB; send the request on its own",
            MAX_BATCH_ANSWER_BYTES >> 20
        ),
    );
    jsonrpc::error_response(id, &error)
}

/// About how much heap memory `value` holds: its strings, its arrays' slots,
/// and its objects' B-tree nodes (up to 11 entries each).
fn heap_bytes(value: &Value) -> usize {
    const SLOT: usize = std::mem::size_of::<Value>();
    const ENTRY: usize = SLOT + std::mem::size_of::<String>();
    const NODE_ENTRIES: usize = 11;
    match value {
        Value::String(text) => text.len(),
        Value::Array(items) => items.len() * SLOT + items.iter().map(heap_bytes).sum::<usize>(),
        Value::Object(map) => {
            let nodes = map.len().div_ceil(NODE_ENTRIES);
            nodes * NODE_ENTRIES * ENTRY
                + map
                    .iter()
                    .map(|(key, inner)| key.len() + heap_bytes(inner))
                    .sum::<usize>()
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_answer_holds_at_most_its_budget() {
        let held = AtomicUsize::new(0);
        let big = json!({ "jsonrpc": "2.0", "id": 7, "result": { "text": "x".repeat(40 << 20) } });
        assert_eq!(within_batch_budget(big.clone(), &held), big);
        let refused = within_batch_budget(big, &held);
        assert_eq!(refused["id"], 7);
        assert_eq!(refused["error"]["code"], jsonrpc::code::INTERNAL_ERROR);
        assert!(held.load(Ordering::Relaxed) < MAX_BATCH_ANSWER_BYTES);
        // Objects count their nodes, not just their text.
        let objects = json!((0..1000).map(|i| json!({ "a": i })).collect::<Vec<_>>());
        assert!(heap_bytes(&objects) > 1000 * 11 * 56);
    }
}
