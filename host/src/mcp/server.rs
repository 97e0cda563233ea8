//! One MCP session over a line-delimited byte stream (stdio).
//!
//! The reader classifies each line and answers protocol errors at once;
//! every request runs in a task of its own, so a slow tool call never delays
//! a ping or another call. Responses and notifications go through one
//! channel to a single writer that owns the output: nothing else writes there.
//! When the input closes, work in flight finishes, its responses are
//! written, and `serve` returns.
//!
//! A host whose tools change (hot reload) is followed by a task of the
//! session's own, which tells the client when the tool list changed and
//! passes the host's log messages on at the client's log level.
//!
//! # Two eras on one connection
//!
//! The era is chosen per request. A request whose `_meta` carries any
//! `io.modelcontextprotocol/...` key, and every `server/discover` and
//! `subscriptions/listen` request (methods only the stateless era has), is
//! served statelessly in the revision its `_meta` names (2026-07-28): it must
//! carry the protocol version and the client capabilities, it cannot see
//! `ping` or `logging/setLevel`, and its result says `resultType: "complete"`.
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
//!   `_meta["io.modelcontextprotocol/subscriptionId"]`. The stream gets no
//!   response: it ends with `notifications/cancelled`, or silently when the
//!   input closes.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as CURSOR;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::{AbortHandle, JoinSet};

use super::jsonrpc::{self, Frame, Incoming, Notification, Request, RpcError};
use super::{HostEvents, HostLog, Revision, ToolHost, UnknownTool, shape};
use crate::tool::{CallEvent, EventSink, LogLevel};

/// Settings of the protocol layer.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Whether the server sends `notifications/tools/list_changed` (declared
    /// as the `tools.listChanged` capability).
    pub list_changed: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 500,
            list_changed: false,
        }
    }
}

/// Serves MCP on the process's stdin and stdout until stdin closes.
pub async fn serve_stdio<H: ToolHost>(host: Arc<H>, options: ServerOptions) -> Result<()> {
    let stdin = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin());
    serve(host, options, stdin, std::io::stdout()).await
}

/// Serves MCP on `input` and `output` until `input` closes.
///
/// Each side gets a thread of its own doing plain blocking I/O: cheaper per
/// message than async stdio, which hands every read and write to a pool.
pub async fn serve<H, R, W>(host: Arc<H>, options: ServerOptions, input: R, output: W) -> Result<()>
where
    H: ToolHost,
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let (outbox, queue) = mpsc::unbounded_channel();
    let writer = std::thread::Builder::new()
        .name("corral-stdout".into())
        .spawn(move || write_messages(output, queue))?;
    let (line_sender, mut lines) = mpsc::channel(64);
    std::thread::Builder::new()
        .name("corral-stdin".into())
        .spawn(move || read_lines(input, line_sender))?;
    let session = Arc::new(Session {
        host,
        options,
        outbox,
        revision: Mutex::new(None),
        log_level: Arc::new(AtomicU8::new(LOGGING_OFF)),
        in_flight: Mutex::new(HashMap::new()),
        listeners: Mutex::new(HashMap::new()),
        closing: watch::Sender::new(false),
    });
    let follower = session
        .host
        .subscribe()
        .map(|events| tokio::spawn(session.clone().follow_host(events)));

    let mut tasks = JoinSet::new();
    while let Some(line) = lines.recv().await {
        while tasks.try_join_next().is_some() {}
        let frame = match std::str::from_utf8(&line) {
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => jsonrpc::parse_frame(text.trim()),
            Err(_) => Frame::Unparseable(RpcError::new(
                jsonrpc::code::PARSE_ERROR,
                "Parse error: the line is not valid UTF-8",
            )),
        };
        session.handle_frame(frame, &mut tasks);
    }
    tracing::debug!(
        "input closed; finishing {} request(s) in flight",
        tasks.len()
    );
    // Listen streams end with the input; calls in flight finish.
    session.closing.send_replace(true);
    while tasks.join_next().await.is_some() {}
    if let Some(follower) = follower {
        follower.abort();
        let _ = follower.await;
    }
    drop(session);
    let written = tokio::task::spawn_blocking(move || writer.join()).await?;
    written.map_err(|_| anyhow::anyhow!("the stdout writer panicked"))??;
    Ok(())
}

/// Reads lines until end of input or a read error, handing each to the session.
fn read_lines<R: BufRead>(mut input: R, lines: mpsc::Sender<Vec<u8>>) {
    loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) => {
                if lines.blocking_send(line).is_err() {
                    return;
                }
            }
            Err(err) => {
                tracing::error!("reading input: {err}");
                return;
            }
        }
    }
}

/// Writes each message as one line, flushing whenever the queue runs dry.
/// Ends when every sender is gone, or when the output fails (the client left).
fn write_messages<W: Write>(
    mut output: W,
    mut queue: mpsc::UnboundedReceiver<Value>,
) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(4096);
    while let Some(message) = queue.blocking_recv() {
        buffer.clear();
        append_line(&mut buffer, &message);
        while let Ok(message) = queue.try_recv() {
            append_line(&mut buffer, &message);
        }
        output.write_all(&buffer)?;
        output.flush()?;
    }
    Ok(())
}

fn append_line(buffer: &mut Vec<u8>, message: &Value) {
    serde_json::to_writer(&mut *buffer, message).expect("a JSON value always serializes");
    buffer.push(b'\n');
}

/// `log_level` before the client sets one: no log notifications.
const LOGGING_OFF: u8 = u8::MAX;

/// The prefix of the `_meta` keys that the protocol itself defines.
const META_PREFIX: &str = "io.modelcontextprotocol/";
/// The stateless revision a request is made in.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The client's capabilities, on every stateless request.
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The minimum level of `notifications/message` for one stateless request.
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
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
    /// The era of `request`, or the error for a stateless request whose
    /// `_meta` lacks what every stateless request must carry.
    fn of(request: &Request) -> Result<Era, RpcError> {
        let meta = request.params.get("_meta").and_then(Value::as_object);
        let stateless = STATELESS_ONLY_METHODS.contains(&request.method.as_str())
            || meta.is_some_and(|meta| meta.keys().any(|key| key.starts_with(META_PREFIX)));
        if !stateless {
            return Ok(Era::Legacy);
        }
        let Some(meta) = meta else {
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

/// Marks a stateless result as final (`resultType` is required on every
/// result of the stateless era; this server never asks for more input).
fn complete(mut result: Value) -> Value {
    if let Value::Object(fields) = &mut result {
        fields.insert("resultType".into(), "complete".into());
    }
    result
}

struct Session<H> {
    host: Arc<H>,
    options: ServerOptions,
    outbox: mpsc::UnboundedSender<Value>,
    /// Set by `initialize`.
    revision: Mutex<Option<Revision>>,
    /// The minimum level of log notifications, as a `LogLevel` index.
    log_level: Arc<AtomicU8>,
    /// Requests running, by the JSON text of their id, for cancellation.
    in_flight: Mutex<HashMap<String, AbortHandle>>,
    /// Open `subscriptions/listen` streams, by the JSON text of their id.
    listeners: Mutex<HashMap<String, Listener>>,
    /// Set once the input has closed: listen streams end.
    closing: watch::Sender<bool>,
}

impl<H: ToolHost> Session<H> {
    fn send(&self, message: Value) {
        // Fails only once the writer is gone (the client closed stdout);
        // there is no one left to tell.
        let _ = self.outbox.send(message);
    }

    /// The negotiated revision; requests before `initialize` get the newest.
    fn revision(&self) -> Revision {
        self.revision
            .lock()
            .unwrap()
            .unwrap_or(Revision::NEWEST_LEGACY)
    }

    fn handle_frame(self: &Arc<Self>, frame: Frame, tasks: &mut JoinSet<()>) {
        match frame {
            Frame::Unparseable(error) => self.send(jsonrpc::error_response(Value::Null, &error)),
            Frame::Single(Incoming::Request(request)) if request.method == "initialize" => {
                let response = self.initialize(request);
                self.send(response);
            }
            Frame::Single(Incoming::Request(request)) => {
                let session = self.clone();
                self.spawn_request(tasks, request, move |response| session.send(response));
            }
            Frame::Single(Incoming::Notification(notification)) => self.notified(notification),
            Frame::Single(Incoming::Response) => {}
            Frame::Single(Incoming::Invalid { id, error }) => {
                self.send(jsonrpc::error_response(id, &error))
            }
            Frame::Batch(items) => self.handle_batch(items, tasks),
        }
    }

    /// Runs `request` in a task of its own, cancellable by its id, and hands
    /// the response to `deliver` unless the request was cancelled.
    fn spawn_request<F>(self: &Arc<Self>, tasks: &mut JoinSet<()>, request: Request, deliver: F)
    where
        F: FnOnce(Value) + Send + 'static,
    {
        let key = request.id.to_string();
        let session = self.clone();
        let task_key = key.clone();
        // Holding the lock while spawning means the task cannot deregister
        // itself before it is registered.
        let mut in_flight = self.in_flight.lock().unwrap();
        let handle = tasks.spawn(async move {
            let response = session.respond(request).await;
            session.in_flight.lock().unwrap().remove(&task_key);
            if let Some(response) = response {
                deliver(response);
            }
        });
        in_flight.insert(key, handle);
    }

    fn handle_batch(self: &Arc<Self>, items: Vec<Incoming>, tasks: &mut JoinSet<()>) {
        let revision = *self.revision.lock().unwrap();
        if !revision.is_some_and(Revision::has_batches) {
            let message = match revision {
                Some(revision) => format!(
                    "Invalid Request: JSON-RPC batches are not part of protocol revision {revision}"
                ),
                None => "Invalid Request: JSON-RPC batches need protocol revision 2025-03-26, negotiated by a prior initialize".into(),
            };
            self.send(jsonrpc::error_response(
                Value::Null,
                &RpcError::invalid_request(message),
            ));
            return;
        }
        if items.is_empty() {
            let error = RpcError::invalid_request("Invalid Request: empty batch");
            self.send(jsonrpc::error_response(Value::Null, &error));
            return;
        }
        let (answers, mut collected) = mpsc::unbounded_channel();
        for item in items {
            match item {
                Incoming::Request(request) if request.method == "initialize" => {
                    let error = RpcError::invalid_request(
                        "Invalid Request: initialize must not be part of a batch",
                    );
                    let _ = answers.send(jsonrpc::error_response(request.id, &error));
                }
                Incoming::Request(request) => {
                    let answers = answers.clone();
                    self.spawn_request(tasks, request, move |response| {
                        let _ = answers.send(response);
                    });
                }
                Incoming::Notification(notification) => self.notified(notification),
                Incoming::Response => {}
                Incoming::Invalid { id, error } => {
                    let _ = answers.send(jsonrpc::error_response(id, &error));
                }
            }
        }
        drop(answers);
        // The batch's answer is one array, sent when every request has
        // answered or been cancelled (a cancelled request's sender is dropped).
        let session = self.clone();
        tasks.spawn(async move {
            let mut responses = Vec::new();
            while let Some(response) = collected.recv().await {
                responses.push(response);
            }
            if !responses.is_empty() {
                session.send(Value::Array(responses));
            }
        });
    }

    fn notified(&self, notification: Notification) {
        match notification.method.as_str() {
            "notifications/cancelled" => {
                let Some(id) = notification.params.get("requestId") else {
                    return;
                };
                if let Some(task) = self.in_flight.lock().unwrap().remove(&id.to_string()) {
                    // The spec: stop the work and send no response.
                    task.abort();
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
        let client = request
            .params
            .get("clientInfo")
            .map(Value::to_string)
            .unwrap_or_default();
        tracing::info!(
            "initialized: protocol {revision} (client asked for {requested:?}) {client}"
        );
        let mut server_info = json!({ "name": "corral", "version": env!("CARGO_PKG_VERSION") });
        if revision.has_structured_output() {
            server_info["title"] = "Corral".into();
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

    /// The response to `request`; `None` for a listen stream, which has none.
    async fn respond(&self, request: Request) -> Option<Value> {
        let id = request.id.clone();
        let result = match Era::of(&request) {
            Err(error) => Err(error),
            Ok(Era::Legacy) => self.dispatch(request).await,
            Ok(Era::Stateless { .. }) if request.method == "subscriptions/listen" => {
                self.listen(request).await;
                return None;
            }
            Ok(Era::Stateless {
                revision,
                log_level,
            }) => self
                .dispatch_stateless(request, revision, log_level)
                .await
                .map(complete),
        };
        Some(match result {
            Ok(result) => jsonrpc::response(id, result),
            Err(error) => jsonrpc::error_response(id, &error),
        })
    }

    async fn dispatch(&self, request: Request) -> Result<Value, RpcError> {
        match request.method.as_str() {
            "ping" => Ok(json!({})),
            "tools/list" => {
                self.host.ready().await;
                self.list_tools(&request.params, self.revision())
            }
            "tools/call" => {
                self.host.ready().await;
                let (revision, log_level) = (self.revision(), self.log_level.clone());
                self.call_tool(request.params, revision, log_level).await
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
                let log_level = Arc::new(AtomicU8::new(log_level.map_or(LOGGING_OFF, |l| l as u8)));
                self.call_tool(request.params, revision, log_level).await
            }
            method @ ("ping" | "logging/setLevel") => Err(RpcError::new(
                jsonrpc::code::METHOD_NOT_FOUND,
                format!("Method not found: {method} is not part of protocol revision {revision}"),
            )),
            method => Err(RpcError::method_not_found(method)),
        }
    }

    /// `server/discover`: what a stateless client needs to know first.
    fn discover(&self) -> Value {
        let supported: Vec<&str> = Revision::STATELESS.iter().map(|r| r.as_str()).collect();
        json!({
            "supportedVersions": supported,
            "capabilities": {
                "tools": { "listChanged": self.options.list_changed },
                "logging": {},
            },
            "serverInfo": {
                "name": "corral",
                "title": "Corral",
                "version": env!("CARGO_PKG_VERSION"),
            },
        })
    }

    /// A `subscriptions/listen` stream: acknowledged at once, then open until
    /// it is cancelled or the input closes; it never gets a response.
    async fn listen(&self, request: Request) {
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
        self.send(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({
                "notifications": honoured,
                "_meta": { META_SUBSCRIPTION_ID: request.id },
            })),
        ));
        let mut closing = self.closing.subscribe();
        let _ = closing.wait_for(|closing| *closing).await;
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
        let end = tools.len().min(start + self.options.page_size.max(1));
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

    async fn call_tool(
        &self,
        mut params: Map<String, Value>,
        revision: Revision,
        log_level: Arc<AtomicU8>,
    ) -> Result<Value, RpcError> {
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
        let progress_token = params
            .get("_meta")
            .and_then(|meta| meta.get("progressToken"))
            .filter(|token| token.is_string() || token.is_number())
            .cloned();
        let events = self.event_sink(progress_token, &name, revision, log_level);
        match self.host.call(&name, arguments, Some(events)).await {
            Ok(output) => Ok(shape::call_result_json(&output, revision)),
            Err(UnknownTool) => Err(RpcError::invalid_params(format!("Unknown tool: {name}"))),
        }
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

    /// Where a call's events go: progress notifications for the request's
    /// progress token (increasing values only, as the spec requires), and
    /// log notifications at or above `log_level` (the session's, or a
    /// stateless request's own).
    fn event_sink(
        &self,
        progress_token: Option<Value>,
        tool: &str,
        revision: Revision,
        log_level: Arc<AtomicU8>,
    ) -> EventSink {
        let outbox = self.outbox.clone();
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
                let _ = outbox.send(jsonrpc::notification(
                    "notifications/progress",
                    Some(params),
                ));
            }
            CallEvent::Log { level, message } => {
                if (level as u8) < log_level.load(Ordering::Relaxed) {
                    return;
                }
                let params = json!({ "level": level.as_str(), "logger": logger, "data": message });
                let _ = outbox.send(jsonrpc::notification("notifications/message", Some(params)));
            }
        })
    }
}

impl<H: ToolHost> Session<H> {
    /// Passes the host's events on to the client until the session ends.
    async fn follow_host(self: Arc<Self>, mut events: HostEvents) {
        // Only changes from now on are news to this session.
        events.tools_changed.borrow_and_update();
        let (mut tools_open, mut logs_open) = (true, true);
        loop {
            tokio::select! {
                changed = events.tools_changed.changed(), if tools_open => match changed {
                    Ok(()) => {
                        events.tools_changed.borrow_and_update();
                        self.tools_changed();
                    }
                    Err(_) => tools_open = false,
                },
                log = events.logs.recv(), if logs_open => match log {
                    Ok(log) => self.host_log(log),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::debug!("{missed} host log message(s) not passed on to the client");
                    }
                    Err(broadcast::error::RecvError::Closed) => logs_open = false,
                },
                else => return,
            }
        }
    }

    /// `notifications/tools/list_changed`, when the capability was declared:
    /// plain to an initialized (legacy) client, and tagged with its
    /// subscription id to every open listen stream that asked for it.
    fn tools_changed(&self) {
        if !self.options.list_changed {
            return;
        }
        if self.revision.lock().unwrap().is_some() {
            tracing::debug!("telling the client that the tool list changed");
            self.send(jsonrpc::notification(
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
                self.send(jsonrpc::notification(
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
        self.send(jsonrpc::notification("notifications/message", Some(params)));
    }
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
