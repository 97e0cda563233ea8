//! `client.ask`: a plugin's requests of the client during a call (contract
//! 0.2.0), from the guest's records to the [`Client`] port and back.
//!
//! One ask is checked whole before anything is sent (`requests`: keys,
//! counts, sizes, form schemas as MCP allows them), handed to the call's
//! client, and waited for; each answer is checked against its request
//! (`answers`: an accepted form against its schema, sizes) before the
//! plugin sees it.
//!
//! Waiting is bounded twice over, as a waiting call holds one of its
//! plugin's `concurrency` slots (and an instance) all along. The plugin's
//! `input-wait` is the time one call may wait for its client in all its
//! asks together: each ask waits at most what is left, and once nothing
//! is, an ask is `timed-out` at once. And at most half of the plugin's
//! calls ([`WaitingCalls`]) may wait at once, so that clients that never
//! answer cannot take every slot of a plugin from everyone else.
//!
//! Waiting is not compute. The guest is blocked in an async host function,
//! so it burns no fuel; and the call's compute timeout is paused for as
//! long as an ask waits ([`Pause`], read by the sandbox's timer). The store
//! yields at epoch ticks and renews its deadline as it does, so a guest
//! resuming after a long wait runs on as before.
//!
//! [`AskError::Suspended`] is not for the plugin: the run must end where it
//! stands (the protocol layer answers "input required", and will run the
//! call again with the answers). The host function then traps with
//! [`InputRequired`], which the sandbox recognises.

mod answers;
mod form;
mod requests;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use corral_tool::{AskError, Client, ClientCapabilities};

use crate::bindings::client;
use crate::secrets::Granted;
use crate::units::human_bytes;
pub use crate::waiting::WaitingCalls;

pub use answers::MAX_FORM_CONTENT;
pub use requests::{MAX_ASK_BYTES, MAX_REQUEST_BYTES, MAX_REQUESTS};

/// Asks one call may make.
pub const MAX_ASKS: u32 = 32;

/// Bytes of answers one ask may hand the plugin, in all (form contents,
/// sampled text and media, roots): what lands in its memory at once.
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

/// Work units checking one accepted form may take, at most: a form is a
/// few primitive fields, and it is checked on the async worker.
const MAX_FORM_UNITS: u64 = 20_000;

/// The trap that ends a run whose client will answer later: never seen by
/// the plugin, recognised by the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputRequired;

impl fmt::Display for InputRequired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the call waits for the client's input")
    }
}

impl std::error::Error for InputRequired {}

/// The time a call has spent waiting for its client, shared by the host
/// function (which waits) and the sandbox's timer (which does not count it).
/// Both run in the call's own task, never at once: atomics only because
/// the store's data must be `Send + Sync` to share it.
#[derive(Debug, Default)]
pub struct Pause {
    waiting: AtomicBool,
    /// Nanoseconds waited, in the waits that are over.
    waited: AtomicU64,
}

impl Pause {
    /// Whether an ask is waiting now.
    pub fn waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire)
    }

    /// The time waited in the waits that are over.
    pub fn waited(&self) -> Duration {
        Duration::from_nanos(self.waited.load(Ordering::Acquire))
    }

    /// Marks a wait, until the guard is dropped (also when the call is
    /// cancelled mid-wait).
    fn begin(&self) -> Waiting<'_> {
        self.waiting.store(true, Ordering::Release);
        Waiting {
            pause: self,
            since: Instant::now(),
        }
    }
}

struct Waiting<'a> {
    pause: &'a Pause,
    since: Instant,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let nanos = u64::try_from(self.since.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.pause.waited.fetch_add(nanos, Ordering::AcqRel);
        self.pause.waiting.store(false, Ordering::Release);
    }
}

/// What one call may ask of its client, and how much it has asked.
pub struct Asking {
    client: Option<Arc<dyn Client>>,
    /// The time the call may wait for its client, in all its asks.
    input_wait: Duration,
    validation_units: u64,
    asks: u32,
    /// The time waited so far (also read by the sandbox's timer).
    pause: Arc<Pause>,
    /// The plugin's calls waiting at once.
    waiting: Arc<WaitingCalls>,
}

impl Asking {
    pub fn new(
        client: Option<Arc<dyn Client>>,
        input_wait: Duration,
        validation_units: u64,
        pause: Arc<Pause>,
        waiting: Arc<WaitingCalls>,
    ) -> Asking {
        Asking {
            client,
            input_wait,
            validation_units,
            asks: 0,
            pause,
            waiting,
        }
    }

    /// What the client can answer: nothing without a client.
    pub fn capabilities(&self) -> client::ClientCapabilities {
        let ClientCapabilities {
            elicitation_form,
            elicitation_url,
            sampling,
            roots,
        } = self
            .client
            .as_ref()
            .map(|client| client.capabilities())
            .unwrap_or_default();
        client::ClientCapabilities {
            elicitation_form,
            elicitation_url,
            sampling,
            roots,
        }
    }

    /// Asks the client `requests`; the outer error ends the run
    /// ([`InputRequired`]). The call's `secrets` are redacted from what is
    /// sent (every key, message, schema, URL and text, as the JSON the
    /// client gets), the occurrences added to `redacted`.
    pub async fn ask(
        &mut self,
        requests: Vec<client::InputRequest>,
        secrets: Option<&Granted>,
        redacted: &mut usize,
    ) -> wasmtime::Result<Result<Vec<client::InputResponse>, client::AskError>> {
        self.asks = self.asks.saturating_add(1);
        if self.asks > MAX_ASKS {
            return Ok(Err(client::AskError::Invalid(format!(
                "a call asks the client at most {MAX_ASKS} times"
            ))));
        }
        let (mut requests, expected) = match requests::build(requests) {
            Ok(built) => built,
            Err(message) => return Ok(Err(client::AskError::Invalid(message))),
        };
        // What the client will see (and a task's record keep): a plugin
        // must not hand its secret to the client in an ask.
        if let Some(granted) = secrets.filter(|granted| granted.redacts_anything()) {
            for request in &mut requests {
                granted.redact_in_place(&mut request.key, redacted);
                let mut params = serde_json::Value::Object(std::mem::take(&mut request.params));
                granted.redact_json(&mut params, redacted);
                if let serde_json::Value::Object(params) = params {
                    request.params = params;
                }
            }
        }
        let Some(client) = self.client.clone() else {
            // A caller that can answer nothing (`corral call`) declared nothing.
            let capability = requests[0].kind.capability();
            return Ok(Err(client::AskError::Undeclared(capability.into())));
        };
        // What a waiting client cannot be asked is told first, whatever
        // the load: a tool falls back on `undeclared`, not on a busy
        // plugin. (A client that answers at once decides for itself: the
        // stateless era ends the call with -32021 instead.)
        let declared = client.capabilities();
        if !client.answers_at_once()
            && let Some(request) = requests.iter().find(|r| !declared.allows(r.kind))
        {
            return Ok(Err(client::AskError::Undeclared(
                request.kind.capability().into(),
            )));
        }
        // The call's waits share one `input-wait`: once it is spent, no
        // more is sent.
        let left = self.input_wait.saturating_sub(self.pause.waited());
        if left.is_zero() {
            return Ok(Err(client::AskError::TimedOut));
        }
        // A client that answers at once (the stateless era's) holds no
        // waiting slot: only calls that may wait on a person count.
        let _slot = if client.answers_at_once() {
            None
        } else {
            let Some(slot) = self.waiting.try_wait() else {
                return Ok(Err(client::AskError::Failed(format!(
                    "too many calls of this plugin wait for their clients (at most {}); \
                     nothing was asked: ask again later, or go on without the answers",
                    self.waiting.max()
                ))));
            };
            Some(slot)
        };
        let keys: Vec<String> = requests.iter().map(|r| r.key.clone()).collect();
        let answered = {
            let _waiting = self.pause.begin();
            tokio::time::timeout(left, client.ask(requests)).await
        };
        let answers = match answered {
            Err(_elapsed) => return Ok(Err(client::AskError::TimedOut)),
            Ok(Err(AskError::Suspended)) => return Err(wasmtime::Error::new(InputRequired)),
            Ok(Err(AskError::Undeclared(capability))) => {
                return Ok(Err(client::AskError::Undeclared(capability.into())));
            }
            Ok(Err(err @ (AskError::Failed(_) | AskError::Unavailable(_)))) => {
                return Ok(Err(client::AskError::Failed(err.to_string())));
            }
            Ok(Ok(answers)) => answers,
        };
        if answers.len() != expected.len() {
            return Ok(Err(client::AskError::Failed(format!(
                "the client gave {} answers to {} requests",
                answers.len(),
                expected.len()
            ))));
        }
        let budget = self.validation_units.min(MAX_FORM_UNITS);
        let mut total = 0usize;
        let mut converted = Vec::with_capacity(answers.len());
        for ((answer, expected), key) in answers.into_iter().zip(&expected).zip(&keys) {
            let response = match answers::convert(key, expected, answer, budget) {
                Ok(response) => response,
                Err(message) => return Ok(Err(client::AskError::Failed(message))),
            };
            total = total.saturating_add(answers::guest_bytes(&response));
            if total > MAX_ANSWER_BYTES {
                return Ok(Err(client::AskError::Failed(format!(
                    "the client's answers to this ask come to more than {}, the most one ask may hand the plugin",
                    human_bytes(MAX_ANSWER_BYTES)
                ))));
            }
            converted.push(response);
        }
        Ok(Ok(converted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_of_a_plugins_calls_may_wait_at_once() {
        assert_eq!(WaitingCalls::for_concurrency(32).max(), 16);
        assert_eq!(WaitingCalls::for_concurrency(3).max(), 1);
        assert_eq!(WaitingCalls::for_concurrency(1).max(), 1);
    }
}
