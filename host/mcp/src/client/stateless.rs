//! Asking in the stateless era (2026-07-28): the server never sends the
//! client a request. A call that asks ends with an `input_required` result
//! naming what it needs; the client retries the call with the answers
//! (`inputResponses`) and the sealed `requestState` it was given, and the
//! tool runs again from the start.
//!
//! So a tool's asks are replayed: on the retry, ask #k of the run is
//! answered from round k of the state when it asks exactly what it asked
//! then (its fingerprint); the ask after those (the round the client was
//! just asked, or the very first ask of a call made without state) is
//! answered from `inputResponses` when every key it needs is there (other
//! keys are ignored); any other ask suspends the run: the session answers
//! `input_required` with its requests and a new state holding every round
//! answered so far. A client that answers round one without any state (as
//! the official conformance suite does) is thus served too.
//!
//! A tool that asks something else when run again (its earlier answers no
//! longer fit) gets an error instead of answers meant for other
//! questions. An ask needing a capability the request's `_meta` did not
//! declare ends the run, and the call is answered with error -32021 naming
//! it: a tool that can go without checks the capabilities first.
//!
//! Nothing here waits: every ask is answered, or suspends the run, at once.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::state::{
    self, Asked, CallState, MAX_LIFETIME_SECS, MAX_ROUNDS, Round, StateKey, Subject,
    arguments_hash, fingerprint,
};
use super::{Declared, leave_out_undeclared_context};
use crate::Revision;
use crate::jsonrpc::RpcError;
use corral_tool::{AskError, AskFuture, Client, ClientCapabilities, InputRequest};

/// The JSON-RPC error for a request whose tool needs a client capability
/// the request did not declare (2026-07-28, MissingRequiredClientCapability).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;

/// How a stateless run that asked ended, when it did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The client must answer `requests`, and send `state` back.
    InputRequired {
        requests: Vec<InputRequest>,
        state: String,
    },
    /// A request needs a capability the client did not declare (its
    /// [`corral_tool::InputKind::capability`] name).
    Undeclared(&'static str),
}

impl Outcome {
    /// The call's answer: an `input_required` result, or the -32021 error.
    pub fn into_answer(self) -> Result<Value, RpcError> {
        match self {
            Outcome::InputRequired { requests, state } => {
                let requests: Map<String, Value> = requests
                    .into_iter()
                    .map(|request| {
                        let asked = json!({
                            "method": request.kind.method(),
                            "params": request.params,
                        });
                        (request.key, asked)
                    })
                    .collect();
                Ok(json!({
                    "resultType": "input_required",
                    "inputRequests": requests,
                    "requestState": state,
                }))
            }
            Outcome::Undeclared(capability) => {
                let required = match capability {
                    "elicitation.url" => json!({ "elicitation": { "url": {} } }),
                    other => json!({ other: {} }),
                };
                Err(RpcError::new(
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!(
                        "Missing required client capability: the tool asks for `{capability}`, which the request's `_meta` \"io.modelcontextprotocol/clientCapabilities\" does not declare"
                    ),
                )
                .with_data(json!({ "requiredCapabilities": required })))
            }
        }
    }
}

/// What one run has done so far.
#[derive(Default)]
struct Run {
    /// Asks made (empty ones aside).
    asks: usize,
    /// The rounds answered in this run, in order: a new state holds them.
    answered: Vec<Round>,
    /// Set when the run asked what it cannot be answered now.
    outcome: Option<Outcome>,
}

/// The client of one stateless request that may ask (`tools/call`,
/// `prompts/get`, `resources/read`).
pub struct StatelessClient {
    declared: Declared,
    key: StateKey,
    /// [`Subject::key`] of the request: the state is bound to it.
    subject: String,
    /// [`arguments_hash`] of the call's arguments, when the call may need
    /// it: to check the state it brought, or to seal one, which only a
    /// client that declared something it can be asked ever needs. A call
    /// with no state from a client that declares nothing spares the
    /// canonical text and its hash.
    ///
    /// It is computed when the call comes, not when a state is sealed: the
    /// host takes the arguments for the run, and keeping a copy until then
    /// would cost about what it saves. (A tool that never asks a client
    /// that declared something still pays for it.)
    arguments: Option<String>,
    /// How long a state issued now stays valid (within the call's
    /// [`MAX_LIFETIME_SECS`]).
    ttl: Duration,
    /// Unix seconds when the call came: states are checked and issued as of
    /// then.
    now: u64,
    /// The state the call brought, if any.
    state: Option<CallState>,
    /// `inputResponses`: answers by key, each an object.
    responses: Map<String, Value>,
    run: Mutex<Run>,
}

impl StatelessClient {
    /// The client of the request about `subject` with `arguments` (a
    /// tool's, a prompt's; none for a read), whose other params are
    /// `params` (with `requestState` and `inputResponses`, if any) and
    /// whose `_meta` declared `declared`; or the error for a state or
    /// answers that cannot be taken, such as a state issued to another
    /// request.
    pub fn for_request(
        params: &Map<String, Value>,
        declared: Declared,
        subject: Subject<'_>,
        arguments: &Map<String, Value>,
        key: StateKey,
        ttl: Duration,
    ) -> Result<StatelessClient, RpcError> {
        StatelessClient::for_call_at(params, declared, subject, arguments, key, ttl, unix_now())
    }

    /// [`StatelessClient::for_request`] at unix time `now`.
    fn for_call_at(
        params: &Map<String, Value>,
        declared: Declared,
        subject: Subject<'_>,
        arguments: &Map<String, Value>,
        key: StateKey,
        ttl: Duration,
        now: u64,
    ) -> Result<StatelessClient, RpcError> {
        let declares_any = {
            let c = declared.capabilities;
            c.elicitation_form || c.elicitation_url || c.sampling || c.roots
        };
        let state_text = match params.get("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `requestState` must be a string, as the server issued it",
                ));
            }
        };
        let hash = (state_text.is_some() || declares_any).then(|| arguments_hash(arguments));
        let subject = subject.key();
        let state = match (state_text, &hash) {
            (Some(text), Some(hash)) => Some(
                state::open(&key, text, &subject, hash, now).map_err(|problem| {
                    RpcError::invalid_params(format!("Invalid params: {problem}"))
                })?,
            ),
            _ => None,
        };
        let responses = match params.get("inputResponses") {
            None => Map::new(),
            Some(Value::Object(responses)) => {
                if let Some((key, _)) = responses.iter().find(|(_, answer)| !answer.is_object()) {
                    return Err(RpcError::invalid_params(format!(
                        "Invalid params: `inputResponses` \"{key}\" must be an object, the result of the request of that key"
                    )));
                }
                responses.clone()
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `inputResponses` must be an object of answers by request key",
                ));
            }
        };
        Ok(StatelessClient {
            declared,
            key,
            subject,
            arguments: hash,
            ttl,
            now,
            state,
            responses,
            run: Mutex::new(Run::default()),
        })
    }

    /// What the request declared the client can answer.
    pub fn declared(&self) -> Declared {
        self.declared
    }

    /// Whether the run must end here: it asked what the client must answer
    /// first (see [`StatelessClient::outcome`], which this leaves).
    pub fn ends_run(&self) -> bool {
        self.run.lock().unwrap().outcome.is_some()
    }

    /// How the run ended, if it did not complete: taken once.
    pub fn outcome(&self) -> Option<Outcome> {
        self.run.lock().unwrap().outcome.take()
    }

    fn answer(&self, requests: Vec<InputRequest>) -> Result<Vec<Map<String, Value>>, AskError> {
        let mut run = self.run.lock().unwrap();
        if run.outcome.is_some() {
            // The run should have ended at the suspension already.
            return Err(AskError::Suspended);
        }
        if let Some(request) = requests
            .iter()
            .find(|request| !self.declared.capabilities.allows(request.kind))
        {
            run.outcome = Some(Outcome::Undeclared(request.kind.capability()));
            return Err(AskError::Suspended);
        }
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let index = run.asks;
        run.asks += 1;
        let asked = Asked {
            keys: requests.iter().map(|request| request.key.clone()).collect(),
            fingerprint: fingerprint(&requests),
        };
        let (answered, pending) = match &self.state {
            Some(state) => (state.rounds.as_slice(), Some(&state.pending)),
            None => (&[][..], None),
        };
        let asked_differently = || {
            AskError::Failed(format!(
                "the tool asked differently when run again with the client's answers (ask {} of the call); its earlier answers do not fit, call the tool again without requestState",
                index + 1
            ))
        };
        if let Some(round) = answered.get(index) {
            if round.asked != asked {
                return Err(asked_differently());
            }
            run.answered.push(round.clone());
            return Ok(round.answers.clone());
        }
        if index == answered.len() {
            if pending.is_some_and(|pending| *pending != asked) {
                return Err(asked_differently());
            }
            let answers: Option<Vec<Map<String, Value>>> = asked
                .keys
                .iter()
                .map(|key| self.responses.get(key).and_then(Value::as_object).cloned())
                .collect();
            if let Some(answers) = answers {
                run.answered.push(Round {
                    asked,
                    answers: answers.clone(),
                });
                return Ok(answers);
            }
        }
        if run.answered.len() + 1 > MAX_ROUNDS {
            return Err(AskError::Unavailable(format!(
                "the call has asked the client for input {MAX_ROUNDS} times, the most one call may"
            )));
        }
        // A reissue keeps the first issue's time: retrying never extends the
        // call's life past MAX_LIFETIME_SECS from its first state.
        let born = self.state.as_ref().map_or(self.now, |state| state.born);
        let expires = self
            .now
            .saturating_add(self.ttl.as_secs())
            .min(born.saturating_add(MAX_LIFETIME_SECS));
        let state = CallState {
            subject: self.subject.clone(),
            // Some: this ask passed the capability check, so the client
            // declared something.
            arguments: self
                .arguments
                .clone()
                .expect("a client that can be asked has its call's arguments hashed"),
            born,
            expires,
            rounds: run.answered.clone(),
            pending: asked,
        };
        let Some(state) = state::seal(&self.key, &state) else {
            return Err(AskError::Unavailable(format!(
                "the client's answers so far, with these requests, pass the {} KiB a requestState may hold",
                state::MAX_STATE_BYTES / 1024
            )));
        };
        // Shaped for the client only now: the state fingerprints what the
        // tool asked, which it asks again on the retry. Every stateless
        // revision is later than 2025-11-25.
        let mut requests = requests;
        for request in &mut requests {
            leave_out_undeclared_context(request, Revision::V2026_07_28, self.declared);
        }
        run.outcome = Some(Outcome::InputRequired { requests, state });
        Err(AskError::Suspended)
    }
}

impl Client for StatelessClient {
    fn capabilities(&self) -> ClientCapabilities {
        self.declared.capabilities
    }

    fn ask(&self, requests: Vec<InputRequest>) -> AskFuture<'_> {
        let answer = self.answer(requests);
        Box::pin(std::future::ready(answer))
    }

    fn answers_at_once(&self) -> bool {
        // From the request's own answers and state, or by ending the run:
        // never by waiting for anyone.
        true
    }

    fn replays_next(&self) -> Option<Vec<String>> {
        let state = self.state.as_ref()?;
        let asks = self.run.lock().unwrap().asks;
        match state.rounds.get(asks) {
            Some(round) => Some(round.asked.keys.clone()),
            None if asks == state.rounds.len() => Some(state.pending.keys.clone()),
            None => None,
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_tool::InputKind;

    const T0: u64 = 1_000_000;

    fn question() -> InputRequest {
        InputRequest {
            key: "ok".into(),
            kind: InputKind::ElicitForm,
            params: json!({ "mode": "form", "message": "Go on?", "requestedSchema": { "type": "object", "properties": {} } })
                .as_object()
                .unwrap()
                .clone(),
        }
    }

    fn elicitation() -> Declared {
        Declared::from_json(&json!({ "elicitation": {} }))
    }

    /// The state issued to a call at `now`, bringing `params`, whose tool asks
    /// [`question`]; or the error for the state it brought.
    fn issued(params: Value, ttl: Duration, now: u64) -> Result<String, RpcError> {
        let client = StatelessClient::for_call_at(
            params.as_object().unwrap(),
            elicitation(),
            Subject::Tool("t"),
            &Map::new(),
            StateKey::new([3; 32]),
            ttl,
            now,
        )?;
        assert_eq!(client.answer(vec![question()]), Err(AskError::Suspended));
        match client.outcome() {
            Some(Outcome::InputRequired { state, .. }) => Ok(state),
            other => panic!("expected input_required, got {other:?}"),
        }
    }

    fn opened(state: &str, now: u64) -> CallState {
        let hash = arguments_hash(&Map::new());
        state::open(&StateKey::new([3; 32]), state, "tools/call t", &hash, now).unwrap()
    }

    #[test]
    fn retrying_without_answers_never_extends_a_call_past_its_lifetime() {
        let ttl = Duration::from_secs(10 * 60);
        let mut state = issued(json!({}), ttl, T0).unwrap();
        let first = opened(&state, T0);
        assert_eq!((first.born, first.expires), (T0, T0 + 600));
        // A client that retries every nine minutes without the answer is
        // issued a new state each time, born when the first was.
        let mut now = T0;
        // Bounded: without the lifetime, the reissues would go on forever.
        for _ in 0..20 {
            now += 9 * 60;
            match issued(json!({ "requestState": state }), ttl, now) {
                Ok(next) => {
                    let reissued = opened(&next, now);
                    assert_eq!(reissued.born, T0);
                    assert_eq!(reissued.expires, (now + 600).min(T0 + MAX_LIFETIME_SECS));
                    state = next;
                }
                Err(error) => {
                    assert!(error.message.contains("expired"), "{}", error.message);
                    break;
                }
            }
        }
        assert!((T0 + MAX_LIFETIME_SECS..T0 + MAX_LIFETIME_SECS + 9 * 60).contains(&now));
    }

    #[test]
    fn a_ttl_longer_than_the_lifetime_is_cut_to_it() {
        let state = issued(json!({}), Duration::from_secs(2 * 60 * 60), T0).unwrap();
        assert_eq!(opened(&state, T0).expires, T0 + MAX_LIFETIME_SECS);
    }

    /// How many times a call with `params` hashes its arguments (the
    /// arguments the states of [`issued`] are bound to, so that a state
    /// among the params opens).
    fn hashes(params: Value, declared: Declared) -> usize {
        let before = state::HASHED.with(|hashed| hashed.get());
        let client = StatelessClient::for_call_at(
            params.as_object().unwrap(),
            declared,
            Subject::Tool("t"),
            &Map::new(),
            StateKey::new([3; 32]),
            Duration::from_secs(600),
            T0,
        );
        assert!(client.is_ok(), "the call was refused");
        state::HASHED.with(|hashed| hashed.get()) - before
    }

    #[test]
    fn the_arguments_are_hashed_only_when_a_state_may_be_checked_or_sealed() {
        // Nothing to check, and nothing the tool could ask: no hash.
        assert_eq!(hashes(json!({}), Declared::default()), 0);
        let answers = json!({ "inputResponses": { "ok": { "action": "accept" } } });
        assert_eq!(hashes(answers, Declared::default()), 0);
        // A state to check, or a client the tool may ask (and seal a state
        // for): hashed once.
        let state = issued(json!({}), Duration::from_secs(600), T0).unwrap();
        assert_eq!(
            hashes(json!({ "requestState": state }), Declared::default()),
            1
        );
        assert_eq!(hashes(json!({}), elicitation()), 1);
    }
}
