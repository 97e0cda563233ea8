//! One MCP session, whatever carries it (stdio, or HTTP).
//!
//! A transport hands the session each incoming frame together with the
//! [`Outbox`] where that frame's messages go: its responses, and the progress
//! and log notifications of its requests. Every request runs in a task of its
//! own, so a slow tool call never delays a ping or another call; each task
//! holds a clone of its outbox until it has answered, so a transport that
//! needs to know when a frame is fully answered (an HTTP response stream)
//! learns it from the outbox being dropped. Messages that belong to no
//! request (`notifications/tools/list_changed` for an initialized client,
//! host log messages) go to the session's own `notify` outbox.
//!
//! A host whose tools change (hot reload) is followed by a task of the
//! session's own, which tells the client when the tool list changed and
//! passes the host's log messages on at the client's log level.
//!
//! # Tools, prompts and resources that ask the client
//!
//! A call's tool (and a `prompts/get`'s prompt, a `resources/read`'s
//! plugin: everything said here of calls holds for them) may ask the
//! client for input (elicitation, sampling,
//! roots) through the [`Client`] in its context, each era its own way (see
//! `client`): a legacy call sends the client JSON-RPC requests on the call's
//! own outbox and waits for the responses, which arrive as any message does
//! and are matched to the session's waiting requests; a stateless call ends
//! with `input_required` (or error -32021 for a capability its `_meta` did
//! not declare) and is run again on the client's retry. A stateless request
//! never causes a request to the client, and neither does a call that came
//! in a JSON-RPC batch (its asks fail at once: the batch's whole answer
//! would wait for the client's). [`Session::finish`] ends every wait for
//! the client at once.
//!
//! # Two eras on one connection
//!
//! The era is chosen per request. A request whose `_meta` carries
//! `io.modelcontextprotocol/protocolVersion`, and every `server/discover` and
//! `subscriptions/listen` request (methods only the stateless era has), is
//! served statelessly in the revision its `_meta` names (2026-07-28): it must
//! carry the protocol version and the client capabilities, it cannot see
//! `ping` or `logging/setLevel`, and its result says `resultType: "complete"`
//! and names the server in `_meta`. Other `io.modelcontextprotocol/` keys
//! (`related-task`, say) select nothing: legacy revisions define some too.
//! (`initialize` is the exception: it always selects the legacy era and never
//! negotiates a stateless revision.)
//! Nothing it does changes the session. Every other request is a legacy one:
//! it is served in the revision `initialize` negotiated (or the newest legacy
//! revision before any `initialize`, as before). So `initialize` only ever
//! affects requests without the stateless `_meta`, and a stateless request
//! before or after an `initialize` on the same connection is served the same.
//!
//! Stateless per-request settings, where the 2026-07-28 tools page leaves the
//! details open:
//! - a log level is `_meta["io.modelcontextprotocol/logLevel"]` (next to the
//!   other per-request keys); without it a call sends no `notifications/message`;
//! - a `subscriptions/listen` stream's id is the JSON-RPC id of its request.
//!   It is acknowledged with `notifications/subscriptions/acknowledged`
//!   stating what is honoured, and its `notifications/*/list_changed` (only
//!   for the lists it asked for in `notifications`, such as
//!   `toolsListChanged: true`, or at the top of its params) and
//!   `notifications/resources/updated` (for its `resourceSubscriptions`)
//!   carry it as `_meta["io.modelcontextprotocol/subscriptionId"]`. A stream the client
//!   cancels (`notifications/cancelled`) gets no response. A stream the
//!   session ends ([`Session::finish`]: the input closed, the server shuts
//!   down) gets what the 2026-07-28 pages ask of a server tearing one down:
//!   `notifications/cancelled` naming it (the cancellation page's MUST), then
//!   its completion result, `{"resultType": "complete", "_meta": {...
//!   subscriptionId}}` (the subscriptions page's graceful closure).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as CURSOR;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use super::client::{Declared, LegacyClient, Pending, StateKey, StatelessClient, Subject};
use super::jsonrpc::{self, Frame, Incoming, Notification, Request, RpcError};
use super::params::{self, PromptGet};
use super::telemetry::{self, Transport};
use super::{HostEvents, HostLog, Revision, ToolHost, UnknownTool, shape};
use corral_tool::{
    CallContext, CallEvent, CallOutput, Client, CompleteError, EventSink, LogLevel, Offers,
    Principal, PromptError, PromptOutput, ReadError, ResourceItem, Target,
};

pub use super::jsonrpc::Outbox;

mod batch;
mod host_events;
mod lifecycle;
mod offered;
mod paging;
mod stateless;
mod tasks;
mod tools;

use batch::{MAX_BATCH_ITEMS, batch_refusal, within_batch_budget};
use host_events::follow_host;
use offered::{is_offered_method, offers_method, read_error};
use paging::{cacheable, list_page};
use stateless::{Era, Listener};
use tools::{ToolCall, event_sink};

/// Settings of the protocol layer.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Whether the server sends `notifications/tools/list_changed` (declared
    /// as the `tools.listChanged` capability).
    pub list_changed: bool,
    /// Seals the `requestState` of stateless calls that ask the client for
    /// input. Replicas that serve one client share it; by default it is
    /// this process's own (drawn at random).
    pub state_key: StateKey,
    /// How long a `requestState` stays valid once issued: the time a client
    /// has to answer one round. Never past an hour from the call's first
    /// state, however often it is reissued (`MAX_LIFETIME_SECS` in
    /// `client::state`).
    pub state_ttl: Duration,
    /// The tasks calls become (shared by every session of the server), and
    /// the store that keeps them.
    pub tasks: Arc<crate::tasks::Tasks>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 500,
            list_changed: false,
            state_key: StateKey::process(),
            state_ttl: Duration::from_secs(10 * 60),
            tasks: Arc::default(),
        }
    }
}

/// `log_level` before the client sets one: no plugin's log messages.
const LOGGING_OFF: u8 = u8::MAX;

/// The least level of the server's own reports (see [`HostLog`]) that a
/// client gets before it sets a level: the spec leaves that to the server.
/// A plugin that failed to load, and a `corral dev` build's outcome, are
/// news to a plugin's author in any client, whose SDK sets no level by
/// default; a plugin reloading as it should is not.
const HOST_REPORTS_BY_DEFAULT: LogLevel = LogLevel::Notice;

/// The stateless revision a request is made in.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The client's capabilities, on every stateless request.
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The minimum level of `notifications/message` for one stateless request.
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Names the server in the `_meta` of every stateless result.
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Tags the notifications of one `subscriptions/listen` stream.
const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Methods that exist only in the stateless era: a request for one is
/// stateless whatever its `_meta` says.
const STATELESS_ONLY_METHODS: [&str; 2] = ["server/discover", "subscriptions/listen"];

/// How a request arrived, which decides whether its tool may ask the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    /// On its own: answered as soon as it ends.
    Alone,
    /// In a JSON-RPC batch, whose answer waits for every request in it.
    InBatch,
}

/// The server, as it names itself in `_meta` (2026-07-28) and in
/// `serverInfo` (`title` from 2025-06-18 on).
fn server_info() -> Value {
    json!({ "name": "corral", "title": "Corral", "version": env!("CARGO_PKG_VERSION") })
}

/// A stateless result as every result of that era is: typed (`resultType`
/// is required: "complete" unless it says already, as an `input_required`
/// one does), and naming the server in `_meta` (a SHOULD on every result),
/// beside whatever `_meta` the result has already.
fn complete(mut result: Value) -> Value {
    if let Value::Object(fields) = &mut result {
        fields
            .entry("resultType")
            .or_insert_with(|| "complete".into());
        let meta = fields
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(META_SERVER_INFO.into(), server_info());
        }
    }
    result
}

/// The protocol state of one client: its negotiated revision and log
/// level, its requests in flight and its listen streams.
pub struct Session<H> {
    host: Arc<H>,
    options: ServerOptions,
    /// Where messages that answer no request go.
    notify: Outbox,
    /// Set by `initialize`.
    revision: Mutex<Option<Revision>>,
    /// What the client declared at `initialize` (legacy calls may ask it).
    client_capabilities: Mutex<Declared>,
    /// What `initialize` declared the server offers: the list changes the
    /// legacy client hears of.
    offered: Mutex<Offers>,
    /// The resource URIs the legacy client subscribed to (at most
    /// [`params::MAX_SUBSCRIPTIONS`]).
    subscriptions: Mutex<BTreeSet<String>>,
    /// The requests sent to the client that wait for its response.
    pending: Arc<Pending>,
    /// The minimum level of log notifications, as a `LogLevel` index.
    log_level: Arc<AtomicU8>,
    /// The server's reports may reach the client: it sent
    /// `notifications/initialized` or `logging/setLevel` (legacy era). Our
    /// choice, not the spec's (which allows log messages earlier): a client
    /// still in its handshake has nowhere to show them, and what was
    /// reported meanwhile is told once this opens (see
    /// [`Session::tell_not_loaded`]).
    reports_open: AtomicBool,
    /// Requests running, by the JSON text of their id, for cancellation.
    /// Each with a number of its own: a client that reuses the id of a
    /// request still in flight (a protocol error) must not make the first
    /// one's end deregister the second.
    in_flight: Mutex<HashMap<String, (u64, CancellationToken)>>,
    /// Numbers the requests, for `in_flight`.
    requests: AtomicU64,
    /// Open `subscriptions/listen` streams, by the JSON text of their id.
    listeners: Mutex<HashMap<String, Listener>>,
    /// Set by `end_listen_streams` (and `finish`): listen streams end.
    closing: watch::Sender<bool>,
    /// Every task of this session's requests.
    tasks: TaskTracker,
    /// The task following the host's events, if the host has any.
    follower: Mutex<Option<JoinHandle<()>>>,
    /// Owns the tasks this session creates (2025-11-25) when no principal
    /// calls: random, so that no other session sees them.
    owner: String,
    /// Who calls, over authorized HTTP (see [`Session::set_caller`]).
    caller: Mutex<Option<Arc<Principal>>>,
    /// The ids of this session's tasks, oldest first, for `tasks/list`.
    task_ids: Mutex<std::collections::VecDeque<String>>,
    /// How its requests arrive, for their spans.
    transport: Mutex<Transport>,
}

impl<H: ToolHost> Session<H> {
    /// A session serving `host`; messages that answer no request go to
    /// `notify`. Must be called inside a tokio runtime.
    pub fn new(host: Arc<H>, options: ServerOptions, notify: Outbox) -> Arc<Self> {
        let session = Arc::new(Session {
            host,
            options,
            notify,
            revision: Mutex::new(None),
            client_capabilities: Mutex::new(Declared::default()),
            offered: Mutex::new(Offers::default()),
            subscriptions: Mutex::new(BTreeSet::new()),
            pending: Arc::new(Pending::default()),
            log_level: Arc::new(AtomicU8::new(LOGGING_OFF)),
            reports_open: AtomicBool::new(false),
            in_flight: Mutex::new(HashMap::new()),
            requests: AtomicU64::new(0),
            listeners: Mutex::new(HashMap::new()),
            closing: watch::Sender::new(false),
            tasks: TaskTracker::new(),
            follower: Mutex::new(None),
            owner: crate::tasks::random_id(),
            caller: Mutex::new(None),
            task_ids: Mutex::new(std::collections::VecDeque::new()),
            transport: Mutex::new(Transport {
                network: "pipe",
                ..Transport::default()
            }),
        });
        if let Some(events) = session.host.subscribe() {
            // The follower holds the session weakly, so that dropping the
            // session without `finish` does not leak it.
            let follower = tokio::spawn(follow_host(Arc::downgrade(&session), events));
            *session.follower.lock().unwrap() = Some(follower);
        }
        session
    }

    /// Handles one incoming frame. Its responses, and the notifications of
    /// the requests it carries, go to `reply`; requests run in tasks of
    /// their own, each holding a clone of `reply` until it has answered.
    /// Must be called inside a tokio runtime (from any thread).
    pub fn handle_frame(self: &Arc<Self>, frame: Frame, reply: Outbox) {
        self.handle_frame_traced(frame, reply, None)
    }

    /// Says how this session's requests arrive (HTTP, and in which legacy
    /// session), for their spans.
    pub fn set_transport(&self, network: &'static str, session_id: Option<String>) {
        let mut transport = self.transport.lock().unwrap();
        transport.network = network;
        transport.session_id = session_id;
    }

    /// [`Session::handle_frame`], for a frame that came with the W3C trace
    /// context `traceparent` (an HTTP header): its requests' spans continue
    /// that trace unless their `_meta` names another.
    pub fn handle_frame_traced(
        self: &Arc<Self>,
        frame: Frame,
        reply: Outbox,
        traceparent: Option<&str>,
    ) {
        let transport = {
            let mut transport = self.transport.lock().unwrap().clone();
            transport.traceparent = traceparent.map(str::to_owned);
            transport
        };
        match frame {
            Frame::Unparseable(error) => reply(jsonrpc::error_response(Value::Null, &error)),
            Frame::Single(Incoming::Request(request)) if request.method == "initialize" => {
                // Negotiated in line: requests that follow it are served in
                // the revision it negotiates. Answered once the host is
                // ready: the capabilities depend on what it offers.
                match self.negotiate(&request) {
                    Err(refusal) => reply(refusal),
                    Ok(revision) => {
                        let session = self.clone();
                        let span =
                            telemetry::request_span(&request, Some(revision.as_str()), &transport);
                        let served = telemetry::Served::start(&request.method);
                        self.tasks.spawn(
                            async move {
                                session.host.ready().await;
                                let response = session.initialize_result(request.id, revision);
                                served.end(&response, &tracing::Span::current());
                                reply(response);
                            }
                            .instrument(span),
                        );
                    }
                }
            }
            Frame::Single(Incoming::Request(request)) => {
                let deliver = reply.clone();
                self.spawn_request(
                    request,
                    Arrival::Alone,
                    &transport,
                    reply,
                    move |response| deliver(response),
                );
            }
            Frame::Single(Incoming::Notification(notification)) => self.notified(notification),
            Frame::Single(Incoming::Response(response)) => self.pending.resolve(response),
            Frame::Single(Incoming::Invalid { id, error }) => {
                reply(jsonrpc::error_response(id, &error))
            }
            Frame::Batch(items) => self.handle_batch(items, &transport, reply),
        }
    }

    /// Requests whose tasks have not finished yet, but for listen streams,
    /// which run until the client cancels them or the session ends.
    pub fn requests_running(&self) -> usize {
        let listening = self.listeners.lock().unwrap().len();
        self.tasks.len().saturating_sub(listening)
    }

    /// Ends the session: listen streams end (each told so, and answered
    /// with its completion result), calls waiting for the client's answers
    /// hear that none will come, requests in flight finish (their responses
    /// are delivered), and the host is no longer followed.
    pub async fn finish(&self) {
        tracing::debug!(
            "session ending; finishing {} request(s) in flight",
            self.tasks.len()
        );
        self.end_listen_streams();
        self.pending.close();
        self.tasks.close();
        self.tasks.wait().await;
        let follower = self.follower.lock().unwrap().take();
        if let Some(follower) = follower {
            follower.abort();
            let _ = follower.await;
        }
    }

    /// Ends the session's listen streams, those open and those opened
    /// later, each with `notifications/cancelled` naming it and then its
    /// completion result; nothing else of the session ends. A transport
    /// calls it when it shuts down streams that would never end on their
    /// own ([`Session::finish`] does too).
    pub fn end_listen_streams(&self) {
        self.closing.send_replace(true);
    }

    /// Requests sent to the client (on behalf of legacy calls that ask it
    /// for input) that wait for its response.
    pub fn requests_to_client(&self) -> usize {
        self.pending.len()
    }

    /// The connection that carried `request_ids` closed before they were
    /// answered. Legacy requests go on (the spec: a disconnection is no
    /// cancellation), but those that ask the client for input are told at
    /// once that it cannot be asked, now or later: neither their requests
    /// nor their results could reach it.
    pub fn connection_closed(&self, request_ids: &[Value]) {
        for id in request_ids {
            self.pending.unreachable(&id.to_string());
        }
    }

    /// Who makes the requests handed over from now on: set by an
    /// authorizing transport before each frame (a legacy session's
    /// principal is always the same one, but its token, and so its scopes,
    /// may change: a client that stepped up). Calls, reads and gets carry
    /// it to the host; lists show only what its scopes reach; tasks belong
    /// to it.
    pub fn set_caller(&self, caller: Option<Arc<Principal>>) {
        *self.caller.lock().unwrap() = caller;
    }

    /// See [`Session::set_caller`].
    fn caller(&self) -> Option<Arc<Principal>> {
        self.caller.lock().unwrap().clone()
    }

    /// Whether the caller may see and reach `target`: always, without
    /// authorization.
    fn reaches(&self, target: Target<'_>) -> bool {
        let caller = self.caller.lock().unwrap();
        caller
            .as_ref()
            .is_none_or(|caller| caller.grants(&self.host.required_scopes(target)))
    }

    /// Refuses a request for `target` that the caller's scopes do not
    /// reach. An authorizing transport refuses such requests first (403,
    /// naming the scopes); this keeps the session itself from serving one.
    fn check_reach(&self, target: Target<'_>) -> Result<(), RpcError> {
        if self.reaches(target) {
            return Ok(());
        }
        let needed = self.host.required_scopes(target);
        Err(RpcError::invalid_params(format!(
            "Invalid params: the caller's token lacks the scope(s) {} needed for {target:?}",
            needed.joined()
        )))
    }

    /// The items of a list the caller may see (each reached as `target`
    /// says): all of them without authorization.
    fn visible<'a, T>(&self, items: &'a [T], target: impl Fn(&'a T) -> Target<'a>) -> Vec<&'a T> {
        items
            .iter()
            .filter(|&item| self.reaches(target(item)))
            .collect()
    }

    /// Who owns the tasks this session creates: its principal, so that
    /// another principal never sees them; without one, in the legacy era
    /// the session (random), and in the stateless era anyone with the id.
    fn task_owner(&self, era_owner: &str) -> String {
        match self.caller() {
            Some(caller) => format!("principal:{}", caller.key()),
            None => era_owner.to_owned(),
        }
    }

    /// Whether requests of this session are still running.
    pub fn is_busy(&self) -> bool {
        !self.tasks.is_empty()
    }

    /// The negotiated revision; requests before `initialize` get the newest.
    fn revision(&self) -> Revision {
        self.revision
            .lock()
            .unwrap()
            .unwrap_or(Revision::NEWEST_LEGACY)
    }

    /// Runs `request`, which arrived as `arrival` says, in a task of its
    /// own, cancellable by its id, and hands the response to `deliver`
    /// unless the request was cancelled. The request's notifications go to
    /// `reply`.
    fn spawn_request<F>(
        self: &Arc<Self>,
        request: Request,
        arrival: Arrival,
        transport: &Transport,
        reply: Outbox,
        deliver: F,
    ) where
        F: FnOnce(Value) + Send + 'static,
    {
        let key = request.id.to_string();
        // Registered before the task exists, so that it cannot deregister
        // before it is registered, and without holding the lock across the
        // spawn (a fast request would wait for it on another thread).
        let cancel = CancellationToken::new();
        let number = self.requests.fetch_add(1, Ordering::Relaxed);
        self.in_flight
            .lock()
            .unwrap()
            .insert(key.clone(), (number, cancel.clone()));
        let session = self.clone();
        let revision = self.revision.lock().unwrap().map(Revision::as_str);
        let span = telemetry::request_span(&request, revision, transport);
        let served = telemetry::Served::start(&request.method);
        let respond = session.clone().respond_owned(request, arrival, reply);
        self.tasks.spawn(async move {
            // Cancelled: the work is dropped where it stands.
            let response = cancel
                .run_until_cancelled(respond.instrument(span.clone()))
                .await;
            if let Some(response) = &response {
                served.end(response, &span);
            }
            {
                let mut in_flight = session.in_flight.lock().unwrap();
                if in_flight.get(&key).is_some_and(|(n, _)| *n == number) {
                    in_flight.remove(&key);
                }
            }
            // The token wins ties: a request cancelled in the poll that
            // finished it (its work woken by the client's answer to a
            // request of ours, sent after the cancellation) is not answered.
            if let Some(response) = response.filter(|_| !cancel.is_cancelled()) {
                deliver(response);
            }
        });
    }

    fn handle_batch(self: &Arc<Self>, items: Vec<Incoming>, transport: &Transport, reply: Outbox) {
        let revision = *self.revision.lock().unwrap();
        if !revision.is_some_and(Revision::has_batches) {
            let message = match revision {
                Some(revision) => format!(
                    "Invalid Request: JSON-RPC batches are not part of protocol revision {revision}"
                ),
                None => "Invalid Request: JSON-RPC batches need protocol revision 2025-03-26, negotiated by a prior initialize".into(),
            };
            reply(jsonrpc::error_response(
                Value::Null,
                &RpcError::invalid_request(message),
            ));
            return;
        }
        if items.is_empty() {
            let error = RpcError::invalid_request("Invalid Request: empty batch");
            reply(jsonrpc::error_response(Value::Null, &error));
            return;
        }
        if items.len() > MAX_BATCH_ITEMS {
            let error = RpcError::invalid_request(format!(
                "Invalid Request: a batch may hold at most {MAX_BATCH_ITEMS} messages; this one holds {}",
                items.len()
            ));
            telemetry::budget_refused("batch_items");
            reply(jsonrpc::error_response(Value::Null, &error));
            return;
        }
        let (answers, mut collected) = mpsc::unbounded_channel();
        // The answer is held whole until the last request ends, so what it
        // holds is counted as each response arrives, and a response that
        // would take it past MAX_BATCH_ANSWER_BYTES is replaced at once by an
        // error saying so: the batch holds no more than that, however many
        // of its requests answer at once.
        let held = Arc::new(AtomicUsize::new(0));
        for item in items {
            match item {
                Incoming::Request(request) => {
                    if let Some(error) = batch_refusal(&request) {
                        let _ = answers.send(jsonrpc::error_response(request.id, &error));
                        continue;
                    }
                    let answers = answers.clone();
                    let held = held.clone();
                    self.spawn_request(
                        request,
                        Arrival::InBatch,
                        transport,
                        reply.clone(),
                        move |response| {
                            let _ = answers.send(within_batch_budget(response, &held));
                        },
                    );
                }
                Incoming::Notification(notification) => self.notified(notification),
                Incoming::Response(response) => self.pending.resolve(response),
                Incoming::Invalid { id, error } => {
                    let _ = answers.send(jsonrpc::error_response(id, &error));
                }
            }
        }
        drop(answers);
        // The batch's answer is one array, sent when every request has
        // answered or been cancelled (a cancelled request's sender is dropped).
        self.tasks.spawn(async move {
            let mut responses = Vec::new();
            while let Some(response) = collected.recv().await {
                responses.push(response);
            }
            if !responses.is_empty() {
                reply(Value::Array(responses));
            }
        });
    }

    fn notified(&self, notification: Notification) {
        match notification.method.as_str() {
            "notifications/cancelled" => {
                let Some(id) = notification.params.get("requestId") else {
                    return;
                };
                if let Some((_, task)) = self.in_flight.lock().unwrap().remove(&id.to_string()) {
                    // The spec: stop the work and send no response.
                    task.cancel();
                    tracing::debug!("cancelled request {id}");
                }
            }
            "notifications/initialized" => {
                tracing::debug!("client initialized");
                self.reports_open.store(true, Ordering::Relaxed);
                self.tell_not_loaded();
            }
            other => tracing::debug!("ignoring notification {other}"),
        }
    }

    /// [`Session::respond`], owning the session (for a spawned task).
    async fn respond_owned(
        self: Arc<Self>,
        request: Request,
        arrival: Arrival,
        reply: Outbox,
    ) -> Value {
        self.respond(request, arrival, reply).await
    }

    /// The response to `request`, which arrived as `arrival` says. (A
    /// listen stream's comes only when the session ends it; one the client
    /// cancels is dropped before.)
    async fn respond(&self, request: Request, arrival: Arrival, reply: Outbox) -> Value {
        let id = request.id.clone();
        let result = match Era::of(&request) {
            Err(error) => Err(error),
            Ok(Era::Legacy) => self.dispatch(request, arrival, reply).await,
            Ok(Era::Stateless { .. }) if request.method == "subscriptions/listen" => {
                self.listen(request, reply).await.map(complete)
            }
            Ok(Era::Stateless {
                revision,
                log_level,
            }) => self
                .dispatch_stateless(request, revision, log_level, reply)
                .await
                .map(complete),
        };
        match result {
            Ok(result) => jsonrpc::response(id, result),
            Err(error) => jsonrpc::error_response(id, &error),
        }
    }

    async fn dispatch(
        &self,
        request: Request,
        arrival: Arrival,
        reply: Outbox,
    ) -> Result<Value, RpcError> {
        match request.method.as_str() {
            "ping" => Ok(json!({})),
            "tools/list" => {
                self.host.ready().await;
                self.list_tools(&request.params, self.revision())
            }
            "tools/call" => {
                self.host.ready().await;
                let revision = self.revision();
                let call = ToolCall::from_params(request.params)?;
                self.check_reach(Target::Tool(&call.name))?;
                if revision.has_task_support()
                    && let Some(policy) = self.legacy_task_request(&call)?
                {
                    let log_level = self.log_level.clone();
                    return self
                        .start_legacy_task(call, policy, revision, log_level)
                        .await;
                }
                let client = self.legacy_client(&request.id, revision, arrival, &reply);
                let log_level = self.log_level.clone();
                let output = self
                    .call_tool(call, revision, log_level, reply, client)
                    .await?;
                Ok(shape::call_result_json(&output, revision))
            }
            "logging/setLevel" => self.set_log_level(&request.params),
            method @ ("tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel")
                if self.revision().has_task_support() =>
            {
                self.legacy_task_method(method, &request.params, &request.id, arrival, reply)
                    .await
            }
            method if is_offered_method(method) => {
                self.host.ready().await;
                let revision = self.revision();
                if !offers_method(self.host.offers(), method) {
                    return Err(RpcError::method_not_found(method));
                }
                let log_level = self.log_level.clone();
                let params = request.params;
                match method {
                    "resources/subscribe" => self.subscribe(&params, true),
                    "resources/unsubscribe" => self.subscribe(&params, false),
                    "resources/read" => {
                        let uri = params::uri(&params, method)?;
                        self.check_reach(Target::Resource(&uri))?;
                        let client = self.legacy_client(&request.id, revision, arrival, &reply);
                        let read = self
                            .read(&uri, &params, revision, log_level, reply, client)
                            .await;
                        read.map(|items| shape::read_result_json(&items))
                            .map_err(|error| read_error(error, &uri, revision))
                    }
                    "prompts/get" => {
                        let get = PromptGet::from_params(params)?;
                        self.check_reach(Target::Prompt(&get.name))?;
                        self.check_prompt(&get)?;
                        let client = self.legacy_client(&request.id, revision, arrival, &reply);
                        let output = self
                            .get_prompt(&get, revision, log_level, reply, client)
                            .await;
                        output
                            .map(|output| shape::prompt_result_json(&output, revision))
                            .map_err(|error| self.prompt_error(error, &get.name))
                    }
                    method => {
                        self.serve_asking_nothing(method, &params, revision, log_level, reply)
                            .await
                    }
                }
            }
            method => Err(RpcError::method_not_found(method)),
        }
    }

    /// What a call, read or get (whose params are `params`) may use: its
    /// events go to `reply` (progress for its progress token, log messages
    /// named `logger` at or above `log_level`), and it may ask `client`.
    fn call_context(
        &self,
        params: &Map<String, Value>,
        logger: &str,
        revision: Revision,
        log_level: Arc<AtomicU8>,
        reply: Outbox,
        client: Option<Arc<dyn Client>>,
    ) -> CallContext {
        let progress_token = params
            .get("_meta")
            .and_then(|meta| meta.get("progressToken"))
            .filter(|token| token.is_string() || token.is_number())
            .cloned();
        let events = event_sink(reply, progress_token, logger, revision, log_level);
        CallContext {
            events: Some(events),
            client,
            as_task: false,
            principal: self.caller(),
        }
    }

    /// The client of the legacy request `id` (a call, read or get): asks go
    /// to the client on the request's own outbox; a request in a batch asks
    /// nothing (see `LegacyClient::in_batch`).
    fn legacy_client(
        &self,
        id: &Value,
        revision: Revision,
        arrival: Arrival,
        reply: &Outbox,
    ) -> Arc<dyn Client> {
        let declared = *self.client_capabilities.lock().unwrap();
        let client = LegacyClient::new(self.pending.clone(), id, declared, revision, reply.clone());
        Arc::new(match arrival {
            Arrival::InBatch => client.in_batch(),
            Arrival::Alone => client,
        })
    }
}

/// An internal error (-32603) with `message`: a plugin that failed.
fn internal_error(message: &str) -> RpcError {
    RpcError::new(
        jsonrpc::code::INTERNAL_ERROR,
        format!("Internal error: {message}"),
    )
}
