//! Asking in the legacy era: the server sends the client JSON-RPC requests
//! while a `tools/call` runs, and waits for the responses.
//!
//! A request goes out on the call's own outbox (stdout on stdio; the
//! POST's SSE stream over HTTP, so it reaches the client that made the
//! call), with an id of the session's own choosing ("corral-N"), registered
//! in the session's [`Pending`] map. The client's response comes back as any
//! message does (a line on stdin; a POST in the session) and is matched by
//! the JSON text of its id.
//!
//! Every waiting request is bounded: at most [`MAX_PENDING`] per session;
//! its answer at most [`MAX_ANSWER_BYTES`], and its ask's answers together
//! at most [`MAX_ASK_BYTES`] (measured as each arrives, before it is held:
//! an answer past either is dropped and fails the ask);
//! the wait itself is bounded by whoever awaits the ask (the sandbox's
//! `input-wait`); dropping the ask (that timeout, a cancelled call) takes its
//! requests out of the map and tells the client they are cancelled; when
//! the session ends, every waiting ask fails at once, so a call waiting on a
//! client that is gone does not hold the session open; and when the
//! connection a call came on closes (a legacy HTTP POST whose stream the
//! client dropped), the call's asks fail at once and so do its later ones:
//! its requests and its result could no longer reach the client.
//!
//! A call that came in a JSON-RPC batch (2025-03-26) asks nothing: every
//! ask fails at once, and nothing is sent to the client (see
//! [`LegacyClient::in_batch`]).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::{Declared, leave_out_undeclared_context};
use crate::Revision;
use crate::jsonrpc::{self, Outbox, Response};
use corral_tool::{AskError, AskFuture, Client, ClientCapabilities, InputKind, InputRequest};

/// The most requests of one session waiting for the client at once.
pub const MAX_PENDING: usize = 64;

/// The largest answer (a response's result, as JSON text) taken from the
/// client: what a tool asks for is a form's fields, a completion, a list of
/// roots; an image or audio completion fits too, up to the sandbox's 4 MiB
/// of media, which travel as base64 (a third larger) in their envelope.
pub const MAX_ANSWER_BYTES: usize = 6 << 20;

/// The most bytes of answers one ask may hold (its requests' results
/// together, as JSON text): an ask of many requests does not multiply
/// [`MAX_ANSWER_BYTES`].
pub const MAX_ASK_BYTES: usize = 16 << 20;

/// One request's answer, with its place among its ask's requests.
type Answer = (usize, Result<Map<String, Value>, AskError>);

/// What one waiting request's answer is sent to: its ask's channel, with
/// its place among the ask's requests.
struct Waiter {
    index: usize,
    answers: mpsc::UnboundedSender<Answer>,
    /// Bytes of answers its ask holds so far, shared by its requests.
    held: Arc<AtomicUsize>,
    /// The JSON text of the id of the call that asks.
    caller: String,
}

#[derive(Default)]
struct Waiting {
    by_id: HashMap<String, Waiter>,
    /// The calls with a client, by the JSON text of their ids.
    live: HashSet<String>,
    /// Those of `live` whose connection closed: they may ask no more. A
    /// call leaves both sets when its client is dropped (its call is over),
    /// so they hold at most the calls in flight.
    unreachable: HashSet<String>,
    /// Set when the session ends: no more asks.
    closed: bool,
}

/// The requests a session sent its client and waits for, by the JSON text
/// of their ids.
#[derive(Default)]
pub struct Pending {
    /// Numbers the requests: "corral-1", "corral-2"...
    next: AtomicU64,
    waiting: Mutex<Waiting>,
}

impl Pending {
    /// Hands the client's `response` to the request it answers; a response
    /// to nothing waiting (late, cancelled, never sent) is ignored.
    pub fn resolve(&self, response: Response) {
        let waiter = self
            .waiting
            .lock()
            .unwrap()
            .by_id
            .remove(&response.id.to_string());
        let Some(waiter) = waiter else {
            tracing::debug!(
                "ignoring a response to {}: no request of this session waits for it",
                response.id
            );
            return;
        };
        let answer = match response.outcome {
            Ok(Value::Object(result)) => within_bounds(result, &waiter.held),
            Ok(other) => Err(AskError::Failed(format!(
                "the client's result is not an object: {}",
                truncated(&other.to_string())
            ))),
            Err(error) => Err(AskError::Failed(truncated(&error.message))),
        };
        // The ask may have gone meanwhile; then no one needs the answer.
        let _ = waiter.answers.send((waiter.index, answer));
    }

    /// Ends every wait with [`AskError::Unavailable`], and every ask from now
    /// on: the session is over, no answer can come.
    pub fn close(&self) {
        let waiters: Vec<Waiter> = {
            let mut waiting = self.waiting.lock().unwrap();
            waiting.closed = true;
            waiting.by_id.drain().map(|(_, waiter)| waiter).collect()
        };
        for waiter in waiters {
            let _ = waiter.answers.send((
                waiter.index,
                Err(AskError::Unavailable(
                    "the client's session ended before it answered".into(),
                )),
            ));
        }
    }

    /// The connection call `caller` (the JSON text of its id) came on has
    /// closed: its waiting asks fail at once, and so do its later ones.
    pub fn unreachable(&self, caller: &str) {
        let waiters: Vec<Waiter> = {
            let mut waiting = self.waiting.lock().unwrap();
            if !waiting.live.contains(caller) {
                // No call of that id asks (a `tools/list`, a call already
                // over): nothing to remember.
                return;
            }
            waiting.unreachable.insert(caller.to_string());
            let ids: Vec<String> = waiting
                .by_id
                .iter()
                .filter(|(_, waiter)| waiter.caller == caller)
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter()
                .filter_map(|id| waiting.by_id.remove(id))
                .collect()
        };
        for waiter in waiters {
            let _ = waiter
                .answers
                .send((waiter.index, Err(AskError::Unavailable(UNREACHABLE.into()))));
        }
    }

    /// How many requests wait.
    pub fn len(&self) -> usize {
        self.waiting.lock().unwrap().by_id.len()
    }

    /// Registers `count` requests answered to `answers`: their ids, or why
    /// they cannot be sent.
    fn register(
        &self,
        count: usize,
        answers: &mpsc::UnboundedSender<Answer>,
        caller: &str,
    ) -> Result<Vec<Value>, AskError> {
        let held = Arc::new(AtomicUsize::new(0));
        let mut waiting = self.waiting.lock().unwrap();
        if waiting.closed {
            return Err(AskError::Unavailable(
                "the client's session has ended".into(),
            ));
        }
        if waiting.unreachable.contains(caller) {
            return Err(AskError::Unavailable(UNREACHABLE.into()));
        }
        if waiting.by_id.len() + count > MAX_PENDING {
            return Err(AskError::Unavailable(format!(
                "too many requests wait for this client already (at most {MAX_PENDING} per session); try again once it has answered some"
            )));
        }
        let ids = (0..count)
            .map(|index| {
                let number = self.next.fetch_add(1, Ordering::Relaxed) + 1;
                let id = Value::String(format!("corral-{number}"));
                waiting.by_id.insert(
                    id.to_string(),
                    Waiter {
                        index,
                        answers: answers.clone(),
                        held: held.clone(),
                        caller: caller.to_string(),
                    },
                );
                id
            })
            .collect();
        Ok(ids)
    }
}

/// Takes an ask's requests out of the map when the ask ends, however it
/// ends; those still unanswered (the ask was dropped: timed out, its call
/// cancelled) are cancelled with the client too, so that it stops asking
/// its user.
struct Registered<'a> {
    pending: &'a Pending,
    ids: Vec<Value>,
    reply: &'a Outbox,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let unanswered: Vec<&Value> = {
            let mut waiting = self.pending.waiting.lock().unwrap();
            self.ids
                .iter()
                .filter(|id| waiting.by_id.remove(&id.to_string()).is_some())
                .collect()
        };
        for id in unanswered {
            (self.reply)(jsonrpc::notification(
                "notifications/cancelled",
                Some(json!({
                    "requestId": id,
                    "reason": "the tool no longer waits for this answer",
                })),
            ));
        }
    }
}

/// `result`, if it is within [`MAX_ANSWER_BYTES`] and its ask, holding
/// `held` bytes of answers, has room for it (then counted in `held`);
/// otherwise the failure saying which bound it passed (and `result` is
/// dropped here, never held for the tool).
fn within_bounds(
    result: Map<String, Value>,
    held: &AtomicUsize,
) -> Result<Map<String, Value>, AskError> {
    let size = jsonrpc::serialized_len(&result);
    if size > MAX_ANSWER_BYTES {
        return Err(AskError::Failed(format!(
            "the client's answer is {} KiB, more than the {} MiB an answer may be",
            size / 1024,
            MAX_ANSWER_BYTES >> 20
        )));
    }
    let before = held.fetch_add(size, Ordering::Relaxed);
    if before.saturating_add(size) > MAX_ASK_BYTES {
        return Err(AskError::Failed(format!(
            "the client's answers to one ask pass the {} MiB an ask's answers may hold together",
            MAX_ASK_BYTES >> 20
        )));
    }
    Ok(result)
}

/// Why a call whose connection closed gets no answer.
const UNREACHABLE: &str =
    "the connection this call came on has closed: the client can no longer be asked";

/// Why a call that came in a batch gets no answer.
const IN_BATCH: &str = "this call came in a JSON-RPC batch, whose answer waits for every request in it, so it may not wait for the client: send the call on its own to be asked";

/// The client of one legacy `tools/call`: asks go to its outbox.
pub struct LegacyClient {
    pending: Arc<Pending>,
    /// The JSON text of the call's id.
    caller: String,
    /// What the client declared, as far as `revision` has it.
    declared: Declared,
    revision: Revision,
    reply: Outbox,
    /// Set for a call that came in a batch: it asks nothing.
    in_batch: bool,
}

impl LegacyClient {
    /// The client of a call in `revision`, whose client declared
    /// `declared` at `initialize`, answered through `reply`.
    pub fn new(
        pending: Arc<Pending>,
        caller: &Value,
        declared: Declared,
        revision: Revision,
        reply: Outbox,
    ) -> LegacyClient {
        let caller = caller.to_string();
        pending.waiting.lock().unwrap().live.insert(caller.clone());
        LegacyClient {
            pending,
            caller,
            declared: Declared {
                capabilities: in_revision(declared.capabilities, revision),
                ..declared
            },
            revision,
            reply,
            in_batch: false,
        }
    }

    /// The client of a call that came in a JSON-RPC batch: every ask fails
    /// at once with [`AskError::Unavailable`], and nothing is sent to the
    /// client.
    ///
    /// A batch's answer is one array, held until its last request ends. An
    /// ask waits for the client, and in 2025-03-26 (the only revision with
    /// batches) that means sampling, which the spec would have a person
    /// review first, or roots: the batch's every other answer, a `ping`'s
    /// included, would wait for that person, as long as the plugin's
    /// `input-wait` (up to an hour), or without end under a host that does
    /// not bound asks. A shorter timeout would still hold the batch, and
    /// would cut off a person in the middle of answering; failing at once is
    /// prompt and always the same, and the tool hears why and may go on
    /// without the answer (as it must whenever a client cannot be asked).
    /// The client declared what it declared: the capabilities are unchanged.
    pub fn in_batch(mut self) -> LegacyClient {
        self.in_batch = true;
        self
    }

    async fn ask_all(
        &self,
        requests: Vec<InputRequest>,
    ) -> Result<Vec<Map<String, Value>>, AskError> {
        if let Some(request) = requests
            .iter()
            .find(|request| !self.declared.capabilities.allows(request.kind))
        {
            return Err(AskError::Undeclared(request.kind.capability()));
        }
        if !self.revision.has_audio() && requests.iter().any(has_audio) {
            return Err(AskError::Failed(format!(
                "the client speaks protocol revision {}: sampling audio needs protocol revision 2025-03-26 or later",
                self.revision
            )));
        }
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        if self.in_batch {
            return Err(AskError::Unavailable(IN_BATCH.into()));
        }
        let (sender, mut answers) = mpsc::unbounded_channel();
        let ids = self
            .pending
            .register(requests.len(), &sender, &self.caller)?;
        drop(sender);
        let _registered = Registered {
            pending: &self.pending,
            ids: ids.clone(),
            reply: &self.reply,
        };
        let count = requests.len();
        for (id, mut request) in ids.into_iter().zip(requests) {
            leave_out_undeclared_context(&mut request, self.revision, self.declared);
            let mut params = request.params;
            if self.revision < Revision::V2025_11_25 {
                // `mode` arrived with URL mode in 2025-11-25; before, every
                // elicitation is a form.
                params.remove("mode");
            }
            (self.reply)(json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": request.kind.method(),
                "params": params,
            }));
        }
        let mut results: Vec<Option<Map<String, Value>>> = vec![None; count];
        let mut missing = count;
        while missing > 0 {
            let Some((index, answer)) = answers.recv().await else {
                // Every waiter is gone without an answer: only `close` does
                // that, and it sends one first.
                return Err(AskError::Unavailable(
                    "the client's session ended before it answered".into(),
                ));
            };
            // The first error ends the ask; the other requests are cancelled
            // with the client as `_registered` drops.
            results[index] = Some(answer?);
            missing -= 1;
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every answer came"))
            .collect())
    }
}

impl Drop for LegacyClient {
    fn drop(&mut self) {
        // The call is over: its id may be used again.
        let mut waiting = self.pending.waiting.lock().unwrap();
        waiting.live.remove(&self.caller);
        waiting.unreachable.remove(&self.caller);
    }
}

impl Client for LegacyClient {
    fn capabilities(&self) -> ClientCapabilities {
        self.declared.capabilities
    }

    fn ask(&self, requests: Vec<InputRequest>) -> AskFuture<'_> {
        Box::pin(self.ask_all(requests))
    }
}

/// What the client can be asked in `revision`: elicitation arrived in
/// 2025-06-18, its URL mode in 2025-11-25; a client that declares them in
/// an older revision is not asked for them.
fn in_revision(mut declared: ClientCapabilities, revision: Revision) -> ClientCapabilities {
    if revision < Revision::V2025_06_18 {
        declared.elicitation_form = false;
    }
    if revision < Revision::V2025_11_25 {
        declared.elicitation_url = false;
    }
    declared
}

/// Whether `request` samples with audio content (a message's content, or
/// one of its blocks, of type "audio"): audio arrived in 2025-03-26, and a
/// client of an older revision would not know what it is sent.
fn has_audio(request: &InputRequest) -> bool {
    let is_audio = |content: &Value| content.get("type").and_then(Value::as_str) == Some("audio");
    request.kind == InputKind::Sample
        && request
            .params
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|messages| {
                messages
                    .iter()
                    .filter_map(|m| m.get("content"))
                    .any(|content| match content {
                        Value::Array(blocks) => blocks.iter().any(is_audio),
                        single => is_audio(single),
                    })
            })
}

/// The start of `text`, for an error message.
fn truncated(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remembered(pending: &Pending) -> (usize, usize) {
        let waiting = pending.waiting.lock().unwrap();
        (waiting.live.len(), waiting.unreachable.len())
    }

    #[test]
    fn only_calls_with_a_client_are_remembered_as_unreachable_and_only_while_they_run() {
        let pending = Arc::new(Pending::default());
        // A request that never asks (a tools/list whose connection closed).
        pending.unreachable("1");
        assert_eq!(remembered(&pending), (0, 0));
        let outbox: Outbox = Arc::new(|_| {});
        let client = LegacyClient::new(
            pending.clone(),
            &Value::from(2),
            crate::client::Declared::default(),
            Revision::V2025_11_25,
            outbox,
        );
        pending.unreachable("2");
        assert_eq!(remembered(&pending), (1, 1));
        drop(client);
        assert_eq!(remembered(&pending), (0, 0));
    }
}
