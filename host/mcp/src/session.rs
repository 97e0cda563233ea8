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
//! # Tools that ask the client
//!
//! A call's tool may ask the client for input (elicitation, sampling,
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
//!   It is acknowledged with `notifications/subscriptions/acknowledged` and
//!   its `notifications/tools/list_changed` (only when it asked for
//!   `notifications.toolsListChanged: true`, or `toolsListChanged: true` at
//!   the top of its params) carry it as
//!   `_meta["io.modelcontextprotocol/subscriptionId"]`. A stream the client
//!   cancels (`notifications/cancelled`) gets no response. A stream the
//!   session ends ([`Session::finish`]: the input closed, the server shuts
//!   down) gets what the 2026-07-28 pages ask of a server tearing one down:
//!   `notifications/cancelled` naming it (the cancellation page's MUST), then
//!   its completion result, `{"resultType": "complete", "_meta": {...
//!   subscriptionId}}` (the subscriptions page's graceful closure).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as CURSOR;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::client::{Declared, LegacyClient, Pending, StateKey, StatelessClient};
use super::jsonrpc::{self, Frame, Incoming, Notification, Request, RpcError};
use super::{HostEvents, HostLog, Revision, ToolHost, UnknownTool, shape};
use corral_tool::{CallContext, CallEvent, CallOutput, Client, EventSink, LogLevel, ToolDef};

pub use super::jsonrpc::Outbox;

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
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 500,
            list_changed: false,
            state_key: StateKey::process(),
            state_ttl: Duration::from_secs(10 * 60),
        }
    }
}

/// `log_level` before the client sets one: no log notifications.
const LOGGING_OFF: u8 = u8::MAX;

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

/// How long a client may cache a stateless `tools/list` result, and with
/// whom it may share it. A watching server's list changes whenever a plugin
/// file does; listen streams hear of that at once, and a minute bounds how
/// stale a client without one can get. A server that does not watch serves
/// one list for its whole life: an hour. The list is the same for every
/// caller (stdio has no per-request credentials), so it may be shared:
/// `cacheScope` "public".
const LIST_TTL_MS_WATCHING: u64 = 60_000;
const LIST_TTL_MS_FIXED: u64 = 3_600_000;
const LIST_CACHE_SCOPE: &str = "public";

/// How long a client may cache a `server/discover` result, and with whom it
/// may share it. What it states (versions, capabilities, the server's name
/// and version) is fixed for the life of the process, whatever the plugins
/// do: an hour, the spec's own example, bounds how long a client keeps it
/// across an upgrade. It is the same for every caller: "public".
const DISCOVER_TTL_MS: u64 = 3_600_000;
const DISCOVER_CACHE_SCOPE: &str = "public";

/// How a request arrived, which decides whether its tool may ask the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    /// On its own: answered as soon as it ends.
    Alone,
    /// In a JSON-RPC batch, whose answer waits for every request in it.
    InBatch,
}

/// How one request is served.
enum Era {
    /// In the session's negotiated revision, at the session's log level.
    Legacy,
    /// In a stateless revision, with what the request's `_meta` says.
    Stateless {
        revision: Revision,
        log_level: Option<LogLevel>,
    },
}

impl Era {
    /// Whether `request` is of the stateless era: its method exists only
    /// there, or its `_meta` names a protocol version. (Only the version
    /// selects the era: legacy revisions define other
    /// `io.modelcontextprotocol/` keys, `related-task` in 2025-11-25.)
    fn is_stateless(request: &Request) -> bool {
        STATELESS_ONLY_METHODS.contains(&request.method.as_str())
            || request
                .params
                .get("_meta")
                .and_then(Value::as_object)
                .is_some_and(|meta| meta.contains_key(META_PROTOCOL_VERSION))
    }

    /// The era of `request`, or the error for a stateless request whose
    /// `_meta` lacks what every stateless request must carry.
    fn of(request: &Request) -> Result<Era, RpcError> {
        if !Era::is_stateless(request) {
            return Ok(Era::Legacy);
        }
        let Some(meta) = request.params.get("_meta").and_then(Value::as_object) else {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: {} needs `_meta` with \"{META_PROTOCOL_VERSION}\" and \"{META_CLIENT_CAPABILITIES}\" (protocol revision {} has no initialize handshake)",
                request.method,
                Revision::V2026_07_28
            )));
        };
        let version = match meta.get(META_PROTOCOL_VERSION) {
            Some(Value::String(version)) => version,
            Some(_) => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: `_meta` \"{META_PROTOCOL_VERSION}\" must be a string, such as \"{}\"",
                    Revision::V2026_07_28
                )));
            }
            None => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: `_meta` must carry \"{META_PROTOCOL_VERSION}\" (such as \"{}\"); without an initialize handshake every request names its protocol version",
                    Revision::V2026_07_28
                )));
            }
        };
        let Some(revision) = Revision::stateless(version) else {
            let supported: Vec<&str> = Revision::STATELESS.iter().map(|r| r.as_str()).collect();
            return Err(RpcError::new(
                jsonrpc::code::UNSUPPORTED_PROTOCOL_VERSION,
                format!(
                    "Unsupported protocol version: {version} (supported without initialize: {})",
                    supported.join(", ")
                ),
            )
            .with_data(json!({ "supported": supported, "requested": version })));
        };
        if !meta
            .get(META_CLIENT_CAPABILITIES)
            .is_some_and(Value::is_object)
        {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: `_meta` must carry \"{META_CLIENT_CAPABILITIES}\" (an object, possibly empty) on every request of protocol revision {revision}"
            )));
        }
        let log_level = match meta.get(META_LOG_LEVEL) {
            None | Some(Value::Null) => None,
            Some(level) => Some(level.as_str().and_then(LogLevel::parse).ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "Invalid params: `_meta` \"{META_LOG_LEVEL}\" must be one of debug, info, notice, warning, error, critical, alert, emergency"
                ))
            })?),
        };
        Ok(Era::Stateless {
            revision,
            log_level,
        })
    }
}

/// One open `subscriptions/listen` stream.
struct Listener {
    /// The subscription id: the listen request's JSON-RPC id.
    id: Value,
    tools_list_changed: bool,
    /// Where the stream's notifications go.
    reply: Outbox,
}

/// Removes a listen stream from the session when it ends, however it ends
/// (including being aborted by a cancellation).
struct Deregister<'a> {
    listeners: &'a Mutex<HashMap<String, Listener>>,
    key: String,
}

impl Drop for Deregister<'_> {
    fn drop(&mut self) {
        self.listeners.lock().unwrap().remove(&self.key);
    }
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
    /// The requests sent to the client that wait for its response.
    pending: Arc<Pending>,
    /// The minimum level of log notifications, as a `LogLevel` index.
    log_level: Arc<AtomicU8>,
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
            pending: Arc::new(Pending::default()),
            log_level: Arc::new(AtomicU8::new(LOGGING_OFF)),
            in_flight: Mutex::new(HashMap::new()),
            requests: AtomicU64::new(0),
            listeners: Mutex::new(HashMap::new()),
            closing: watch::Sender::new(false),
            tasks: TaskTracker::new(),
            follower: Mutex::new(None),
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
        match frame {
            Frame::Unparseable(error) => reply(jsonrpc::error_response(Value::Null, &error)),
            Frame::Single(Incoming::Request(request)) if request.method == "initialize" => {
                // Answered in line: requests that follow it are served in
                // the revision it negotiates.
                reply(self.initialize(request));
            }
            Frame::Single(Incoming::Request(request)) => {
                let deliver = reply.clone();
                self.spawn_request(request, Arrival::Alone, reply, move |response| {
                    deliver(response)
                });
            }
            Frame::Single(Incoming::Notification(notification)) => self.notified(notification),
            Frame::Single(Incoming::Response(response)) => self.pending.resolve(response),
            Frame::Single(Incoming::Invalid { id, error }) => {
                reply(jsonrpc::error_response(id, &error))
            }
            Frame::Batch(items) => self.handle_batch(items, reply),
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
        self.tasks.spawn(async move {
            // Cancelled: the work is dropped where it stands.
            let response = cancel
                .run_until_cancelled(session.respond(request, arrival, reply))
                .await;
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

    fn handle_batch(self: &Arc<Self>, items: Vec<Incoming>, reply: Outbox) {
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
                    self.spawn_request(request, Arrival::InBatch, reply.clone(), move |response| {
                        let _ = answers.send(within_batch_budget(response, &held));
                    });
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
            "notifications/initialized" => tracing::debug!("client initialized"),
            other => tracing::debug!("ignoring notification {other}"),
        }
    }

    fn initialize(&self, request: Request) -> Value {
        let mut negotiated = self.revision.lock().unwrap();
        if negotiated.is_some() {
            let error =
                RpcError::invalid_request("Invalid Request: the session is already initialized");
            return jsonrpc::error_response(request.id, &error);
        }
        let requested = request
            .params
            .get("protocolVersion")
            .and_then(Value::as_str);
        let revision = Revision::negotiate(requested);
        *negotiated = Some(revision);
        *self.client_capabilities.lock().unwrap() = request
            .params
            .get("capabilities")
            .map(Declared::from_json)
            .unwrap_or_default();
        let client = request
            .params
            .get("clientInfo")
            .map(Value::to_string)
            .unwrap_or_default();
        tracing::info!(
            "initialized: protocol {revision} (client asked for {requested:?}) {client}"
        );
        let mut server_info = server_info();
        if !revision.has_structured_output()
            && let Some(fields) = server_info.as_object_mut()
        {
            // `Implementation.title` arrived in 2025-06-18.
            fields.remove("title");
        }
        jsonrpc::response(
            request.id,
            json!({
                "protocolVersion": revision.as_str(),
                "capabilities": {
                    "tools": { "listChanged": self.options.list_changed },
                    "logging": {},
                },
                "serverInfo": server_info,
            }),
        )
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
                Ok(complete(self.listen(request, reply).await))
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
                // Asks go to the client on the call's own outbox; a call
                // in a batch asks nothing (see `LegacyClient::in_batch`).
                let declared = *self.client_capabilities.lock().unwrap();
                let mut client = LegacyClient::new(
                    self.pending.clone(),
                    &request.id,
                    declared,
                    revision,
                    reply.clone(),
                );
                if arrival == Arrival::InBatch {
                    client = client.in_batch();
                }
                let client = Arc::new(client);
                let log_level = self.log_level.clone();
                let output = self
                    .call_tool(call, revision, log_level, reply, client)
                    .await?;
                Ok(shape::call_result_json(&output, revision))
            }
            "logging/setLevel" => self.set_log_level(&request.params),
            method => Err(RpcError::method_not_found(method)),
        }
    }

    /// A stateless request other than `subscriptions/listen`.
    async fn dispatch_stateless(
        &self,
        request: Request,
        revision: Revision,
        log_level: Option<LogLevel>,
        reply: Outbox,
    ) -> Result<Value, RpcError> {
        match request.method.as_str() {
            "server/discover" => Ok(self.discover()),
            "tools/list" => {
                self.host.ready().await;
                let mut result = self.list_tools(&request.params, revision)?;
                let ttl_ms = if self.options.list_changed {
                    LIST_TTL_MS_WATCHING
                } else {
                    LIST_TTL_MS_FIXED
                };
                result["ttlMs"] = ttl_ms.into();
                result["cacheScope"] = LIST_CACHE_SCOPE.into();
                Ok(result)
            }
            "tools/call" => {
                self.host.ready().await;
                let call = ToolCall::from_params(request.params)?;
                // Asks are answered from the call's own params (and its
                // state), declared in its `_meta` (checked by `Era::of`: an
                // object).
                let declared = call
                    .params
                    .get("_meta")
                    .and_then(|meta| meta.get(META_CLIENT_CAPABILITIES))
                    .map(Declared::from_json)
                    .unwrap_or_default();
                let client = Arc::new(StatelessClient::for_call(
                    &call.params,
                    declared,
                    &call.name,
                    &call.arguments,
                    self.options.state_key.clone(),
                    self.options.state_ttl,
                )?);
                let log_level = Arc::new(AtomicU8::new(log_level.map_or(LOGGING_OFF, |l| l as u8)));
                let output = self
                    .call_tool(call, revision, log_level, reply, client.clone())
                    .await?;
                // A run that asked what the client must answer first ends
                // with that, whatever the tool returned after.
                match client.outcome() {
                    Some(outcome) => outcome.into_answer(),
                    None => Ok(shape::call_result_json(&output, revision)),
                }
            }
            method @ ("ping" | "logging/setLevel") => Err(RpcError::new(
                jsonrpc::code::METHOD_NOT_FOUND,
                format!("Method not found: {method} is not part of protocol revision {revision}"),
            )),
            method => Err(RpcError::method_not_found(method)),
        }
    }

    /// `server/discover`: what a stateless client needs to know first.
    /// (`_meta` names the server, as on every stateless result; the body's
    /// `serverInfo` is kept for clients of the drafts that read it there.)
    fn discover(&self) -> Value {
        let supported: Vec<&str> = Revision::STATELESS.iter().map(|r| r.as_str()).collect();
        json!({
            "supportedVersions": supported,
            "capabilities": {
                "tools": { "listChanged": self.options.list_changed },
                "logging": {},
            },
            "serverInfo": server_info(),
            // A cacheable result (the MUST of DiscoverResult).
            "ttlMs": DISCOVER_TTL_MS,
            "cacheScope": DISCOVER_CACHE_SCOPE,
        })
    }

    /// A `subscriptions/listen` stream: acknowledged at once, then open until
    /// the client cancels it (its work dropped, unanswered) or the session
    /// ends it: then the stream is told, and its completion result (to be
    /// marked complete) is returned.
    async fn listen(&self, request: Request, reply: Outbox) -> Value {
        let params = &request.params;
        let tools_list_changed = params
            .get("notifications")
            .and_then(|n| n.get("toolsListChanged"))
            .or_else(|| params.get("toolsListChanged"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let key = request.id.to_string();
        // Registered before the acknowledgement, so that no change after it is missed.
        self.listeners.lock().unwrap().insert(
            key.clone(),
            Listener {
                id: request.id.clone(),
                tools_list_changed,
                reply: reply.clone(),
            },
        );
        let _registered = Deregister {
            listeners: &self.listeners,
            key,
        };
        // The acknowledgement states the filter the server honours: tool
        // list changes when asked for and the server watches its folder;
        // it offers no other subscription.
        let mut honoured = Map::new();
        if tools_list_changed && self.options.list_changed {
            honoured.insert("toolsListChanged".into(), true.into());
        }
        reply(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({
                "notifications": honoured,
                "_meta": { META_SUBSCRIPTION_ID: request.id },
            })),
        ));
        let mut closing = self.closing.subscribe();
        let _ = closing.wait_for(|closing| *closing).await;
        // The server tears the subscription down: the cancellation page asks
        // for notifications/cancelled naming it (tagged, as everything on
        // the stream is), the subscriptions page for its completion result.
        tracing::debug!("ending listen stream {}", request.id);
        reply(jsonrpc::notification(
            "notifications/cancelled",
            Some(json!({
                "requestId": request.id,
                "reason": "the server is ending this subscription: the session is over",
                "_meta": { META_SUBSCRIPTION_ID: request.id },
            })),
        ));
        json!({ "_meta": { META_SUBSCRIPTION_ID: request.id } })
    }

    fn list_tools(
        &self,
        params: &Map<String, Value>,
        revision: Revision,
    ) -> Result<Value, RpcError> {
        let tools = self.host.tools();
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(cursor)) => decode_cursor(cursor)
                .filter(|&offset| offset <= tools.len())
                .ok_or_else(|| RpcError::invalid_params(format!("Invalid cursor: {cursor}")))?,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `cursor` must be a string",
                ));
            }
        };
        let end = page_end(&tools, start, self.options.page_size.max(1));
        let page: Vec<Value> = tools[start..end]
            .iter()
            .map(|tool| shape::tool_json(tool, revision))
            .collect();
        let mut result = json!({ "tools": page });
        if end < tools.len() {
            result["nextCursor"] = encode_cursor(end).into();
        }
        Ok(result)
    }

    /// Runs `call` in either era: its events go to `reply` (log messages at
    /// or above `log_level`), and its tool may ask `client`, which is all
    /// that differs between the eras (with how the output becomes the
    /// answer, which the caller decides).
    async fn call_tool(
        &self,
        call: ToolCall,
        revision: Revision,
        log_level: Arc<AtomicU8>,
        reply: Outbox,
        client: Arc<dyn Client>,
    ) -> Result<CallOutput, RpcError> {
        let ToolCall {
            name,
            arguments,
            params,
        } = call;
        let progress_token = params
            .get("_meta")
            .and_then(|meta| meta.get("progressToken"))
            .filter(|token| token.is_string() || token.is_number())
            .cloned();
        let events = event_sink(reply, progress_token, &name, revision, log_level);
        let context = CallContext {
            events: Some(events),
            client: Some(client),
        };
        self.host
            .call(&name, arguments, context)
            .await
            .map_err(|UnknownTool| {
                RpcError::invalid_params(unknown_tool(&name, &self.host.tools()))
            })
    }

    fn set_log_level(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let level = params
            .get("level")
            .and_then(Value::as_str)
            .and_then(LogLevel::parse)
            .ok_or_else(|| {
                RpcError::invalid_params(
                    "Invalid params: `level` must be one of debug, info, notice, warning, error, critical, alert, emergency",
                )
            })?;
        self.log_level.store(level as u8, Ordering::Relaxed);
        Ok(json!({}))
    }
}

/// One `tools/call`, as either era reads it.
struct ToolCall {
    /// The tool's name.
    name: String,
    arguments: Map<String, Value>,
    /// The call's other params: its `_meta` (with the progress token), and
    /// in the stateless era `requestState` and `inputResponses`.
    params: Map<String, Value>,
}

impl ToolCall {
    /// The call whose params are `params`, or the error for params that
    /// name no tool or bring arguments that are no object.
    fn from_params(mut params: Map<String, Value>) -> Result<ToolCall, RpcError> {
        let Some(Value::String(name)) = params.remove("name") else {
            return Err(RpcError::invalid_params(
                "Invalid params: tools/call needs a string `name`",
            ));
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `arguments` must be an object",
                ));
            }
        };
        Ok(ToolCall {
            name,
            arguments,
            params,
        })
    }
}

/// Where a call's events go (to `reply`): progress notifications for the
/// request's progress token (increasing values only, as the spec requires),
/// and log notifications at or above `log_level` (the session's, or a
/// stateless request's own).
fn event_sink(
    reply: Outbox,
    progress_token: Option<Value>,
    tool: &str,
    revision: Revision,
    log_level: Arc<AtomicU8>,
) -> EventSink {
    let logger = tool.to_string();
    let last_progress = Mutex::new(f64::NEG_INFINITY);
    Arc::new(move |event| match event {
        CallEvent::Progress {
            done,
            total,
            message,
        } => {
            let Some(token) = &progress_token else { return };
            let mut last = last_progress.lock().unwrap();
            if !done.is_finite() || done <= *last {
                return;
            }
            *last = done;
            let mut params = json!({ "progressToken": token, "progress": done });
            if let Some(total) = total.filter(|t| t.is_finite()) {
                params["total"] = total.into();
            }
            if let Some(message) = message.filter(|_| revision >= Revision::V2025_03_26) {
                params["message"] = message.into();
            }
            reply(jsonrpc::notification(
                "notifications/progress",
                Some(params),
            ));
        }
        CallEvent::Log { level, message } => {
            if (level as u8) < log_level.load(Ordering::Relaxed) {
                return;
            }
            let params = json!({ "level": level.as_str(), "logger": logger, "data": message });
            reply(jsonrpc::notification("notifications/message", Some(params)));
        }
    })
}

/// Passes the host's events on to the session's client until the session
/// is gone or the host stops sending.
async fn follow_host<H: ToolHost>(session: Weak<Session<H>>, mut events: HostEvents) {
    // Only changes from now on are news to this session.
    events.tools_changed.borrow_and_update();
    let (mut tools_open, mut logs_open) = (true, true);
    loop {
        tokio::select! {
            changed = events.tools_changed.changed(), if tools_open => match changed {
                Ok(()) => {
                    events.tools_changed.borrow_and_update();
                    let Some(session) = session.upgrade() else { return };
                    session.tools_changed();
                }
                Err(_) => tools_open = false,
            },
            log = events.logs.recv(), if logs_open => match log {
                Ok(log) => {
                    let Some(session) = session.upgrade() else { return };
                    session.host_log(log);
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!("{missed} host log message(s) not passed on to the client");
                }
                Err(broadcast::error::RecvError::Closed) => logs_open = false,
            },
            else => return,
        }
    }
}

impl<H: ToolHost> Session<H> {
    /// `notifications/tools/list_changed`, when the capability was declared:
    /// plain to an initialized (legacy) client, and tagged with its
    /// subscription id to every open listen stream that asked for it.
    fn tools_changed(&self) {
        if !self.options.list_changed {
            return;
        }
        if self.revision.lock().unwrap().is_some() {
            tracing::debug!("telling the client that the tool list changed");
            (self.notify)(jsonrpc::notification(
                "notifications/tools/list_changed",
                None,
            ));
        }
        for listener in self.listeners.lock().unwrap().values() {
            if listener.tools_list_changed {
                tracing::debug!(
                    "telling listen stream {} that the tool list changed",
                    listener.id
                );
                (listener.reply)(jsonrpc::notification(
                    "notifications/tools/list_changed",
                    Some(json!({ "_meta": { META_SUBSCRIPTION_ID: listener.id } })),
                ));
            }
        }
    }

    /// `notifications/message` at or above the client's log level.
    fn host_log(&self, log: HostLog) {
        if (log.level as u8) < self.log_level.load(Ordering::Relaxed) {
            return;
        }
        let params =
            json!({ "level": log.level.as_str(), "logger": log.logger, "data": log.message });
        (self.notify)(jsonrpc::notification("notifications/message", Some(params)));
    }
}

/// The most messages one JSON-RPC batch may hold. Each request in it runs at
/// once, and its answer is held until the last one ends.
const MAX_BATCH_ITEMS: usize = 256;

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
fn batch_refusal(request: &Request) -> Option<RpcError> {
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
fn within_batch_budget(response: Value, held: &AtomicUsize) -> Value {
    let size = heap_bytes(&response);
    let before = held.fetch_add(size, Ordering::Relaxed);
    if before.saturating_add(size) <= MAX_BATCH_ANSWER_BYTES {
        return response;
    }
    held.fetch_sub(size, Ordering::Relaxed);
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

/// Host memory one `tools/list` page may take for its tools: a page ends
/// early, with a cursor, where the next tool would pass it (a page always has
/// at least one tool). Tool definitions are large once their schemas are
/// copied as JSON values, and several lists may be answered at once.
const MAX_PAGE_BYTES: usize = 16 << 20;

/// Where the page starting at `start` ends: after `page_size` tools, or
/// before the tool that would take it past [`MAX_PAGE_BYTES`].
fn page_end(tools: &[ToolDef], start: usize, page_size: usize) -> usize {
    let mut held = 0usize;
    let mut end = start;
    for tool in tools[start..].iter().take(page_size) {
        held = held.saturating_add(tool.held_bytes);
        if held > MAX_PAGE_BYTES && end > start {
            break;
        }
        end += 1;
    }
    end
}

fn encode_cursor(offset: usize) -> String {
    CURSOR.encode(format!("offset:{offset}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = CURSOR.decode(cursor).ok()?;
    std::str::from_utf8(&bytes)
        .ok()?
        .strip_prefix("offset:")?
        .parse()
        .ok()
}

/// The error for a tool that is not served: with the served names close to
/// it, so that a model that used a plugin's own name for a renamed tool, or
/// mistyped one, can retry with the right one.
fn unknown_tool(name: &str, served: &[ToolDef]) -> String {
    let hint = corral_tool::unknown_tool_hint(name, served.iter().map(|tool| &*tool.name));
    format!("Unknown tool: {name}{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(held_bytes: usize) -> ToolDef {
        ToolDef {
            name: "t".into(),
            title: None,
            description: None,
            input_schema: json!({ "type": "object" }),
            output_schema: None,
            annotations: None,
            icons: vec![],
            task_support: None,
            held_bytes,
        }
    }

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

    #[test]
    fn a_page_ends_at_its_size_or_its_memory_budget_with_at_least_one_tool() {
        let small: Vec<_> = (0..10).map(|_| tool(1)).collect();
        assert_eq!(page_end(&small, 0, 4), 4);
        assert_eq!(page_end(&small, 8, 4), 10);
        let large: Vec<_> = (0..10).map(|_| tool(MAX_PAGE_BYTES / 3)).collect();
        assert_eq!(page_end(&large, 0, 500), 3);
        assert_eq!(page_end(&large, 9, 500), 10);
        let huge: Vec<_> = (0..2).map(|_| tool(MAX_PAGE_BYTES * 2)).collect();
        assert_eq!(page_end(&huge, 0, 500), 1);
    }
}
