//! The Streamable HTTP transport: one endpoint (`/mcp` by default) that
//! takes JSON-RPC messages by POST and answers each with a JSON body or an
//! SSE stream, in both eras of the protocol.
//!
//! This layer only maps HTTP onto [`Session`]s; the protocol itself (eras,
//! revisions, dispatch) is the session's business.
//!
//! # Sessions
//!
//! - A POST of `initialize` without an `Mcp-Session-Id` header starts a
//!   legacy session; its id (128 random bits) comes back in `Mcp-Session-Id`
//!   and every later request of that client carries it. A GET with the id
//!   opens the session's one standalone SSE stream, where messages that
//!   answer no request go (`notifications/tools/list_changed`, host log
//!   messages); a DELETE ends the session. An unknown or ended id gets 404,
//!   and a session idle for longer than its idle timeout (no request, no
//!   open GET stream) is ended.
//! - Any other POST without `Mcp-Session-Id` is a stateless (2026-07-28)
//!   exchange: it must carry the `MCP-Protocol-Version` header, and it is
//!   served by a session of its own that ends with the exchange. Nothing is
//!   shared between two stateless POSTs, so replicas behind a load balancer
//!   need no shared state, and one client's request ids never meet
//!   another's. Protocol errors of a stateless exchange map to HTTP statuses
//!   (404 for an unknown method, 400 for bad params, versions and headers).
//!   When the client closes the connection before its answer is complete,
//!   the exchange's requests are cancelled (in a legacy session a closed
//!   connection cancels nothing, as that era's spec asks, but a
//!   `subscriptions/listen` stream ends with its connection).
//!
//! # Responses
//!
//! The transport waits for the first message the POST causes. When that is
//! the final answer (the response to a single request, or a batch's array),
//! it is sent as one `application/json` body; otherwise (a progress or log
//! notification came first, or a `subscriptions/listen` acknowledgement) the
//! response is an SSE stream that carries every message of the POST and
//! ends when its work is done. A POST of only notifications or responses
//! gets 202 and no body.
//!
//! # Security
//!
//! Every request passes, in order: the Host check (DNS rebinding: on a
//! loopback address only loopback host names, or the configured ones, are
//! accepted), the Origin check (a browser's Origin must be a loopback origin
//! or a configured one), and the bearer token when one is configured.
//!
//! What a client can make the server hold is bounded: open connections
//! (beyond `max_connections` a connection is answered 503 and closed),
//! request headers and bodies (each must arrive within 10 s; a body is
//! limited in size, and an announced `Content-Length` over the limit is
//! refused before anything is read), legacy sessions, and the progress and
//! log notifications queued for an SSE stream its client does not read
//! (dropped past 1 MiB; responses never are). Framing RFC 9112 forbids is
//! refused: a second `Host` header (400), a transfer coding other than
//! `chunked` (501).
//!
//! A browser page from an origin named with `--allowed-origin` may call the
//! endpoint directly (CORS): its preflight `OPTIONS` passes the Host and
//! Origin checks only (a browser sends no credentials with it) and is
//! answered with the methods and headers it asks for; every response to
//! such an origin names it in `Access-Control-Allow-Origin` and exposes the
//! session, version and `WWW-Authenticate` headers to the page's script.
//! Other origins, loopback ones included, get no CORS headers, so a browser
//! keeps their pages from reading the answers.
//!
//! # Shutdown
//!
//! When `shutdown` resolves the listener closes, the streams that never end
//! on their own (GET streams, listen streams) end, and requests in flight
//! finish and are answered, for at most the grace period.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame as BodyFrame, Incoming as IncomingBody, SizeHint};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::jsonrpc::{self, Frame, Incoming, Notification, RpcError};
use super::session::{Outbox, ServerOptions, Session};
use super::{Revision, ToolHost};

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The path of the MCP endpoint.
    pub path: String,
    /// When set, every request must carry `Authorization: Bearer <token>`.
    pub bearer_token: Option<String>,
    /// Host names (without port) accepted in the `Host` header, besides the
    /// loopback names a loopback listener always accepts. Empty on a
    /// non-loopback listener: any host (the bearer token protects it).
    pub allowed_hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) accepted besides loopback ones.
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Legacy sessions unused for this long are ended.
    pub session_idle_timeout: Duration,
    /// At most this many legacy sessions at once; `initialize` beyond gets 503.
    pub max_sessions: usize,
    /// At most this many connections open at once; a connection beyond is
    /// answered 503 and closed.
    pub max_connections: usize,
    /// How long requests in flight may take to finish at shutdown.
    pub shutdown_grace: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            path: "/mcp".into(),
            bearer_token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            max_connections: 512,
            shutdown_grace: Duration::from_secs(35),
        }
    }
}

/// The session header of the legacy era.
const SESSION_HEADER: &str = "mcp-session-id";
/// The revision header: the negotiated one in a legacy session, the
/// request's own in the stateless era.
const VERSION_HEADER: &str = "mcp-protocol-version";
/// Stateless requests restate their method and tool name in headers, so
/// that proxies can route without parsing the body; they must agree.
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
/// The JSON-RPC error for a header that disagrees with the body.
const HEADER_MISMATCH: i64 = -32020;
/// The `_meta` key naming a stateless request's revision.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// How long a client may take to send its request headers (also how long
/// an idle kept-alive connection stays open).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's body, once its headers
/// are in.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections over `max_connections` being answered 503 at once; beyond
/// this many, such a connection is closed unanswered.
const MAX_REFUSING: usize = 64;
/// Bytes of progress and log notifications queued for one SSE stream whose
/// client does not read; past them such notifications are dropped.
const MAX_UNSENT_NOTIFICATION_BYTES: usize = 1 << 20;
/// An SSE comment this often keeps idle streams open through proxies.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// How often idle legacy sessions are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// Serves MCP over HTTP until `shutdown` resolves, then shuts down
/// gracefully. Logs the address it listens on (useful with port 0).
pub async fn serve_http<H, S>(
    host: Arc<H>,
    options: ServerOptions,
    http: HttpOptions,
    shutdown: S,
) -> Result<()>
where
    H: ToolHost,
    S: Future<Output = ()>,
{
    let listener = TcpListener::bind(http.listen)
        .await
        .with_context(|| format!("listening on {}", http.listen))?;
    let local = listener.local_addr()?;
    tracing::info!("listening on http://{local}{}", http.path);
    let server = Arc::new(Server::new(host, options, http, local));
    let sweeper = tokio::spawn(server.clone().sweep_idle_sessions());

    raise_open_file_limit();
    let connections = Arc::new(Semaphore::new(server.http.max_connections));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let mut refusing_now = false;
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors and the like: wait, then go on.
                    tracing::warn!("accepting a connection: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(open) = connections.clone().try_acquire_owned() else {
            // Warned once per stretch of refusals: a flood must not flood stderr.
            if !refusing_now {
                refusing_now = true;
                let limit = server.http.max_connections;
                tracing::warn!("refusing connections: {limit} are open (--max-connections)");
            }
            refuse_connection(stream, &refusing, server.http.max_connections);
            continue;
        };
        refusing_now = false;
        let _ = stream.set_nodelay(true);
        let server = server.clone();
        let service = service_fn(move |request| {
            let server = server.clone();
            async move { Ok::<_, Infallible>(server.handle(request).await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!("connection from {peer}: {err}");
            }
            drop(open);
        });
    }

    tracing::info!("shutting down: finishing requests in flight");
    drop(listener);
    sweeper.abort();
    // Streams that would never end on their own end now; requests in flight
    // go on, and their connections close once answered.
    server.closing.cancel();
    let sessions: Vec<_> = server.sessions.lock().unwrap().drain().collect();
    for (_, legacy) in &sessions {
        legacy.close_standalone();
    }
    let grace = server.http.shutdown_grace;
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still running after {grace:?}; closing them");
    }
    // All sessions at once, under one more grace period: a server with many
    // sessions still stops within two.
    let mut finishing = tokio::task::JoinSet::new();
    for (_, legacy) in sessions {
        finishing.spawn(async move { legacy.session.finish().await });
    }
    if tokio::time::timeout(grace, finishing.join_all())
        .await
        .is_err()
    {
        tracing::warn!("sessions still finishing after {grace:?}; exiting");
    }
    Ok(())
}

/// Answers a connection over the limit with 503 and closes it, without
/// reading its request. The answer is written, and what the client sent
/// meanwhile drained for a moment, so that closing does not reset the
/// connection before the client reads the 503.
fn refuse_connection(mut stream: TcpStream, refusing: &Arc<Semaphore>, limit: usize) {
    let Ok(permit) = refusing.clone().try_acquire_owned() else {
        return; // Dropped: closed unanswered.
    };
    tokio::spawn(async move {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32000,"message":"Service Unavailable: the server has {limit} connections open, its limit; retry shortly"}}}}"#
        );
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let refused = async {
            stream.write_all(answer.as_bytes()).await?;
            stream.shutdown().await?;
            let mut sink = [0u8; 4096];
            while stream.read(&mut sink).await? > 0 {}
            std::io::Result::Ok(())
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), refused).await;
        drop(permit);
    });
}

/// Raises the soft limit on open files to the hard limit: each connection
/// takes a descriptor, and the usual soft limit (1024) is near the default
/// connection limit.
fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write `limit`.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0
                && limit.rlim_cur < limit.rlim_max
            {
                limit.rlim_cur = limit.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
    }
}

/// One legacy (initialized) client.
struct LegacySession<H> {
    session: Arc<Session<H>>,
    /// The open GET stream, where messages that answer no request go.
    standalone: Arc<Mutex<Option<mpsc::UnboundedSender<Value>>>>,
    last_used: Mutex<Instant>,
}

impl<H: ToolHost> LegacySession<H> {
    fn touch(&self) {
        *self.last_used.lock().unwrap() = Instant::now();
    }

    fn has_open_stream(&self) -> bool {
        self.standalone
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|sender| !sender.is_closed())
    }

    fn close_standalone(&self) {
        self.standalone.lock().unwrap().take();
    }
}

struct Server<H> {
    host: Arc<H>,
    options: ServerOptions,
    http: HttpOptions,
    /// Host names accepted in `Host` (lower case); empty: any.
    hosts: Vec<String>,
    sessions: Mutex<HashMap<String, Arc<LegacySession<H>>>>,
    /// Cancelled at shutdown: GET and listen streams end.
    closing: CancellationToken,
}

/// What a POST's frame holds, for routing.
struct FrameSummary {
    /// Whether anything in it expects an answer.
    expects_answer: bool,
    /// The method of a single request.
    method: Option<String>,
    /// Whether a request in it opens a `subscriptions/listen` stream.
    listens: bool,
    /// The ids of its requests.
    request_ids: Vec<Value>,
    /// The ids of its `subscriptions/listen` requests.
    listen_ids: Vec<Value>,
}

impl FrameSummary {
    fn of(frame: &Frame) -> Self {
        let items: Vec<&Incoming> = match frame {
            Frame::Single(item) => vec![item],
            Frame::Batch(items) if items.is_empty() => {
                return FrameSummary {
                    expects_answer: true,
                    method: None,
                    listens: false,
                    request_ids: Vec::new(),
                    listen_ids: Vec::new(),
                };
            }
            Frame::Batch(items) => items.iter().collect(),
            Frame::Unparseable(_) => {
                return FrameSummary {
                    expects_answer: true,
                    method: None,
                    listens: false,
                    request_ids: Vec::new(),
                    listen_ids: Vec::new(),
                };
            }
        };
        let expects_answer = items
            .iter()
            .any(|item| matches!(item, Incoming::Request(_) | Incoming::Invalid { .. }));
        let listens = items.iter().any(
            |item| matches!(item, Incoming::Request(request) if request.method == "subscriptions/listen"),
        );
        let method = match frame {
            Frame::Single(Incoming::Request(request)) => Some(request.method.clone()),
            _ => None,
        };
        let request_ids = items
            .iter()
            .filter_map(|item| match item {
                Incoming::Request(request) => Some(request.id.clone()),
                _ => None,
            })
            .collect();
        let listen_ids = items
            .iter()
            .filter_map(|item| match item {
                Incoming::Request(request) if request.method == "subscriptions/listen" => {
                    Some(request.id.clone())
                }
                _ => None,
            })
            .collect();
        FrameSummary {
            expects_answer,
            method,
            listens,
            request_ids,
            listen_ids,
        }
    }
}

type HttpResponse = http::Response<ResponseBody>;

impl<H: ToolHost> Server<H> {
    fn new(host: Arc<H>, options: ServerOptions, http: HttpOptions, local: SocketAddr) -> Self {
        let mut hosts: Vec<String> = http
            .allowed_hosts
            .iter()
            .map(|host| host.trim_matches(['[', ']']).to_ascii_lowercase())
            .collect();
        if local.ip().is_loopback() {
            hosts.extend(["localhost", "127.0.0.1", "::1"].map(String::from));
        }
        Server {
            host,
            options,
            http,
            hosts,
            sessions: Mutex::new(HashMap::new()),
            closing: CancellationToken::new(),
        }
    }

    async fn handle(self: Arc<Self>, request: http::Request<IncomingBody>) -> HttpResponse {
        if let Some(refusal) = framing_error(request.headers()) {
            return refusal;
        }
        if request.uri().path() != self.http.path {
            return plain(
                StatusCode::NOT_FOUND,
                "not found: the MCP endpoint is elsewhere",
            );
        }
        let cors_origin = request.headers().get(header::ORIGIN).map(|origin| {
            (
                origin.clone(),
                self.cors_allowed(origin.to_str().unwrap_or("")),
            )
        });
        let preflight = request.method() == Method::OPTIONS;
        let mut response = if let Some(refusal) = self.refusal(request.headers(), !preflight) {
            refusal
        } else {
            match *request.method() {
                Method::POST => self.post(request).await,
                Method::GET => self.get(request.headers()),
                Method::DELETE => self.delete(request.headers()).await,
                Method::OPTIONS => preflight_response(request.headers()),
                _ => method_not_allowed(ALLOWED_METHODS, "method not allowed"),
            }
        };
        if let Some((origin, cors)) = cors_origin {
            let headers = response.headers_mut();
            headers.insert(header::VARY, HeaderValue::from_static("Origin"));
            if cors {
                headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
                headers.insert(
                    header::ACCESS_CONTROL_EXPOSE_HEADERS,
                    HeaderValue::from_static(
                        "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate",
                    ),
                );
            }
        }
        response
    }

    /// Whether a page from `origin` may read the endpoint's answers from a
    /// browser (CORS): only an origin named with `--allowed-origin`. Any
    /// loopback origin passes the Origin check, but a page on some local
    /// port is not thereby trusted to call tools from a browser.
    fn cors_allowed(&self, origin: &str) -> bool {
        self.http
            .allowed_origins
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(origin))
    }

    /// Whether a request from a browser page of `origin` passes the Origin
    /// check: a loopback origin, or one configured with `--allowed-origin`.
    fn origin_allowed(&self, origin: &str) -> bool {
        self.cors_allowed(origin) || origin_host(origin).is_some_and(|host| is_loopback_name(&host))
    }

    /// The Host, Origin and (with `credentials`) bearer token checks: the
    /// response refusing the request, if any.
    fn refusal(&self, headers: &HeaderMap, credentials: bool) -> Option<HttpResponse> {
        if !self.hosts.is_empty() {
            let host = headers
                .get(header::HOST)
                .and_then(|value| value.to_str().ok())
                .map(host_name);
            if !host.as_ref().is_some_and(|host| self.hosts.contains(host)) {
                tracing::warn!("refused a request for host {host:?} (DNS rebinding protection)");
                return Some(plain(
                    StatusCode::FORBIDDEN,
                    "forbidden: the Host header names a host this server does not serve",
                ));
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !self.origin_allowed(origin) {
                tracing::warn!("refused a request from origin {origin:?}");
                return Some(plain(
                    StatusCode::FORBIDDEN,
                    "forbidden: requests from this Origin are not allowed",
                ));
            }
        }
        if let Some(token) = self.http.bearer_token.as_ref().filter(|_| credentials) {
            let presented = headers
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(bearer_credentials);
            if !presented.is_some_and(|presented| same_secret(presented, token)) {
                let mut response = plain(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized: a bearer token is required",
                );
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return Some(response);
            }
        }
        None
    }

    async fn post(self: Arc<Self>, request: http::Request<IncomingBody>) -> HttpResponse {
        let headers = request.headers().clone();
        if !accepts(&headers, "application/json") || !accepts(&headers, "text/event-stream") {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                Value::Null,
                RpcError::new(
                    -32000,
                    "Not Acceptable: the Accept header must allow both application/json and text/event-stream",
                ),
            );
        }
        let content_type = header_str(&headers, header::CONTENT_TYPE.as_str()).unwrap_or("");
        if !content_type
            .split(';')
            .next()
            .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
        {
            return rpc_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                Value::Null,
                RpcError::new(
                    -32000,
                    "Unsupported Media Type: the body must be application/json",
                ),
            );
        }
        let limit = self.http.max_body_bytes;
        let too_large = || {
            closing_connection(rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                RpcError::new(
                    jsonrpc::code::INVALID_REQUEST,
                    format!("Payload Too Large: the body is limited to {limit} bytes"),
                ),
            ))
        };
        // Refused before a byte of the body is read (or waited for).
        if request
            .body()
            .size_hint()
            .exact()
            .is_some_and(|announced| announced > limit as u64)
        {
            return too_large();
        }
        let read = Limited::new(request.into_body(), limit).collect();
        let Ok(body) = tokio::time::timeout(BODY_TIMEOUT, read).await else {
            return closing_connection(rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                Value::Null,
                RpcError::new(
                    jsonrpc::code::INVALID_REQUEST,
                    format!(
                        "Request Timeout: the body did not arrive within {} s",
                        BODY_TIMEOUT.as_secs()
                    ),
                ),
            ));
        };
        let body = match body {
            Ok(body) => body.to_bytes(),
            Err(err) if err.is::<http_body_util::LengthLimitError>() => return too_large(),
            Err(err) => {
                tracing::debug!("reading a request body: {err}");
                return plain(
                    StatusCode::BAD_REQUEST,
                    "bad request: the body could not be read",
                );
            }
        };
        let frame = match std::str::from_utf8(&body) {
            Ok(text) => jsonrpc::parse_frame(text.trim()),
            Err(_) => Frame::Unparseable(RpcError::new(
                jsonrpc::code::PARSE_ERROR,
                "Parse error: the body is not valid UTF-8",
            )),
        };
        if let Frame::Unparseable(error) = &frame {
            return rpc_error(StatusCode::BAD_REQUEST, Value::Null, error.clone());
        }
        let summary = FrameSummary::of(&frame);
        let version = header_str(&headers, VERSION_HEADER).map(str::trim);

        if let Some(id) = header_str(&headers, SESSION_HEADER) {
            let Some(legacy) = self.sessions.lock().unwrap().get(id.trim()).cloned() else {
                return session_not_found();
            };
            if let Some(version) = version
                && Revision::parse(version).is_none()
            {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    Value::Null,
                    RpcError::new(
                        -32000,
                        format!("Bad Request: unsupported MCP-Protocol-Version {version}"),
                    ),
                );
            }
            legacy.touch();
            return exchange(&legacy.session, frame, &summary, &self.closing, Era::Legacy).await;
        }

        let stateless_version =
            version.filter(|version| Revision::parse(version).is_none_or(Revision::is_stateless));
        if summary.method.as_deref() == Some("initialize") {
            if let Some(version) = stateless_version {
                // The stateless era has no handshake: like any method it does
                // not have, initialize is not found there.
                let Frame::Single(Incoming::Request(request)) = frame else {
                    unreachable!("a single request has a method")
                };
                return rpc_error(
                    StatusCode::NOT_FOUND,
                    request.id,
                    RpcError::new(
                        jsonrpc::code::METHOD_NOT_FOUND,
                        format!(
                            "Method not found: initialize is not part of protocol revision {version} (MCP-Protocol-Version header); omit the header to start a {} session",
                            Revision::NEWEST_LEGACY
                        ),
                    ),
                );
            }
            return self.initialize(frame, &summary).await;
        }
        let Some(version) = stateless_version else {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                RpcError::new(
                    -32000,
                    format!(
                        "Bad Request: no Mcp-Session-Id header. Send initialize first, or make stateless requests with the header MCP-Protocol-Version: {}",
                        Revision::V2026_07_28
                    ),
                ),
            );
        };
        if let Some(refusal) = header_mismatch(&headers, version, &frame) {
            return refusal;
        }
        // A session of its own for this exchange, ended with it.
        let session = Session::new(self.host.clone(), self.options.clone(), Arc::new(|_| {}));
        exchange(&session, frame, &summary, &self.closing, Era::Stateless).await
    }

    /// A new legacy session answers `initialize`.
    async fn initialize(self: &Arc<Self>, frame: Frame, summary: &FrameSummary) -> HttpResponse {
        let too_many = || {
            rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Value::Null,
                RpcError::new(
                    -32000,
                    "Service Unavailable: too many sessions; try again later",
                ),
            )
        };
        if self.sessions.lock().unwrap().len() >= self.http.max_sessions {
            return too_many();
        }
        let standalone: Arc<Mutex<Option<mpsc::UnboundedSender<Value>>>> = Arc::default();
        let notify: Outbox = {
            let standalone = standalone.clone();
            Arc::new(move |message| {
                let mut stream = standalone.lock().unwrap();
                // Without an open GET stream there is nowhere to send it.
                if let Some(sender) = stream.as_ref()
                    && sender.send(message).is_err()
                {
                    *stream = None;
                }
            })
        };
        let session = Session::new(self.host.clone(), self.options.clone(), notify);
        let id = new_session_id();
        let mut response = exchange(&session, frame, summary, &self.closing, Era::Legacy).await;
        if response.status().is_success() {
            let mut sessions = self.sessions.lock().unwrap();
            // Checked again: initializations that overlap all passed the
            // first check.
            if sessions.len() >= self.http.max_sessions {
                drop(sessions);
                tokio::spawn(async move { session.finish().await });
                return too_many();
            }
            sessions.insert(
                id.clone(),
                Arc::new(LegacySession {
                    session,
                    standalone,
                    last_used: Mutex::new(Instant::now()),
                }),
            );
            tracing::debug!("session {id} started");
            response.headers_mut().insert(
                SESSION_HEADER,
                HeaderValue::from_str(&id).expect("a hex id is a valid header value"),
            );
        }
        response
    }

    /// GET: a legacy session's standalone SSE stream.
    fn get(&self, headers: &HeaderMap) -> HttpResponse {
        if !accepts(headers, "text/event-stream") {
            return plain(
                StatusCode::NOT_ACCEPTABLE,
                "not acceptable: the Accept header must allow text/event-stream",
            );
        }
        let Some(id) = header_str(headers, SESSION_HEADER) else {
            return method_not_allowed(
                "POST",
                "method not allowed: without a session there is no stream to GET; POST subscriptions/listen instead",
            );
        };
        let Some(legacy) = self.sessions.lock().unwrap().get(id.trim()).cloned() else {
            return session_not_found();
        };
        let (sender, receiver) = mpsc::unbounded_channel();
        {
            let mut stream = legacy.standalone.lock().unwrap();
            if stream.as_ref().is_some_and(|open| !open.is_closed()) {
                return plain(
                    StatusCode::CONFLICT,
                    "conflict: this session already has an open GET stream",
                );
            }
            *stream = Some(sender);
        }
        legacy.touch();
        sse_response(receiver, None, None, Some(&self.closing), None)
    }

    /// DELETE: the client ends its legacy session.
    async fn delete(&self, headers: &HeaderMap) -> HttpResponse {
        let Some(id) = header_str(headers, SESSION_HEADER) else {
            return method_not_allowed(
                "POST",
                "method not allowed: stateless requests have no session to delete",
            );
        };
        let Some(legacy) = self.sessions.lock().unwrap().remove(id.trim()) else {
            return session_not_found();
        };
        tracing::debug!("session {} ended by the client", id.trim());
        legacy.close_standalone();
        // Requests still running finish in the background.
        tokio::spawn(async move { legacy.session.finish().await });
        http::Response::builder()
            .status(StatusCode::OK)
            .body(ResponseBody::empty())
            .unwrap()
    }

    /// Ends legacy sessions that nobody used for the idle timeout (a call
    /// still running counts as use).
    async fn sweep_idle_sessions(self: Arc<Self>) {
        let mut ticks = tokio::time::interval(SWEEP_EVERY);
        loop {
            ticks.tick().await;
            let timeout = self.http.session_idle_timeout;
            let expired: Vec<(String, Arc<LegacySession<H>>)> = {
                let mut sessions = self.sessions.lock().unwrap();
                let idle: Vec<String> = sessions
                    .iter()
                    .filter(|(_, legacy)| {
                        !legacy.has_open_stream()
                            && !legacy.session.is_busy()
                            && legacy.last_used.lock().unwrap().elapsed() > timeout
                    })
                    .map(|(id, _)| id.clone())
                    .collect();
                idle.into_iter()
                    .filter_map(|id| sessions.remove_entry(&id))
                    .collect()
            };
            for (id, legacy) in expired {
                tracing::debug!("session {id} ended: idle for {timeout:?}");
                tokio::spawn(async move { legacy.session.finish().await });
            }
        }
    }
}

/// Hands `frame` to `session` and answers with what it causes. `closing`
/// ends the stream at shutdown if it would never end on its own (a listen
/// stream); `ephemeral` is a stateless exchange's own session, finished
/// when the exchange is over, and makes protocol errors HTTP errors.
/// The era a POST is served in, which decides what ends with its exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    /// In a legacy session, which outlives the exchange.
    Legacy,
    /// In a session of the exchange's own, which ends with it.
    Stateless,
}

async fn exchange<H: ToolHost>(
    session: &Arc<Session<H>>,
    frame: Frame,
    summary: &FrameSummary,
    closing: &CancellationToken,
    era: Era,
) -> HttpResponse {
    let (sender, mut receiver) = mpsc::unbounded_channel();
    // Progress and log notifications wait here while the client does not
    // read its stream: past MAX_UNSENT_NOTIFICATION_BYTES they are dropped.
    let unsent = Arc::new(AtomicUsize::new(0));
    let reply: Outbox = {
        let unsent = unsent.clone();
        Arc::new(move |message| {
            if jsonrpc::is_droppable(&message) {
                let size = jsonrpc::serialized_len(&message);
                if unsent.fetch_add(size, Ordering::Relaxed) + size > MAX_UNSENT_NOTIFICATION_BYTES
                {
                    unsent.fetch_sub(size, Ordering::Relaxed);
                    return;
                }
            }
            // Fails only once the client has gone; no one is left to tell.
            let _ = sender.send(message);
        })
    };
    session.handle_frame(frame, reply);
    let stateless = era == Era::Stateless;
    // What ends with the exchange however it ends, including the client
    // going away while this future waits: a stateless exchange's requests
    // and session; a legacy session's listen streams.
    let mut ending = match era {
        Era::Stateless => Some(ExchangeEnd {
            session: session.clone(),
            request_ids: summary.request_ids.clone(),
            finish_session: true,
            answered: false,
        }),
        Era::Legacy if !summary.listen_ids.is_empty() => Some(ExchangeEnd {
            session: session.clone(),
            request_ids: summary.listen_ids.clone(),
            finish_session: false,
            answered: false,
        }),
        Era::Legacy => None,
    };
    let answered = |ending: &mut Option<ExchangeEnd<H>>| {
        if let Some(ending) = ending {
            ending.answered = true;
        }
    };
    if !summary.expects_answer {
        answered(&mut ending);
        return http::Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(ResponseBody::empty())
            .unwrap();
    }
    let Some(first) = receiver.recv().await else {
        // Everything asked was cancelled: nothing to answer.
        answered(&mut ending);
        return http::Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(ResponseBody::empty())
            .unwrap();
    };
    let is_final = first.is_array() || (first.get("id").is_some() && first.get("method").is_none());
    if is_final {
        answered(&mut ending);
        let status = if stateless {
            stateless_status(&first)
        } else {
            StatusCode::OK
        };
        return json_response(status, &first);
    }
    if jsonrpc::is_droppable(&first) {
        unsent.fetch_sub(jsonrpc::serialized_len(&first), Ordering::Relaxed);
    }
    let closing = Some(closing).filter(|_| summary.listens);
    let on_drop = ending.map(|ending| {
        Box::new(move |complete: bool| {
            // Moves the whole guard in, so that it drops here, told the outcome.
            let mut ending = ending;
            ending.answered = complete;
        }) as Box<dyn FnOnce(bool) + Send>
    });
    sse_response(receiver, Some(first), Some(unsent), closing, on_drop)
}

/// The end of an exchange, run when it is dropped: requests left
/// unanswered (the client closed the connection, or the server is shutting
/// down a listen stream) are cancelled, as `notifications/cancelled` would,
/// and a stateless exchange's session finishes in the background.
struct ExchangeEnd<H: ToolHost> {
    session: Arc<Session<H>>,
    /// The requests cancelled if the exchange ends unanswered.
    request_ids: Vec<Value>,
    /// Whether the session ends with the exchange (a stateless one).
    finish_session: bool,
    answered: bool,
}

impl<H: ToolHost> Drop for ExchangeEnd<H> {
    fn drop(&mut self) {
        if !self.answered {
            let what = if self.finish_session {
                "stateless"
            } else {
                "listen"
            };
            for id in self.request_ids.drain(..) {
                tracing::debug!("the client left: cancelling {what} request {id}");
                let mut params = serde_json::Map::new();
                params.insert("requestId".into(), id);
                let cancel = Notification {
                    method: "notifications/cancelled".into(),
                    params,
                };
                self.session.handle_frame(
                    Frame::Single(Incoming::Notification(cancel)),
                    Arc::new(|_| {}),
                );
            }
        }
        if self.finish_session {
            let session = self.session.clone();
            tokio::spawn(async move { session.finish().await });
        }
    }
}

/// The HTTP status of a stateless exchange's single answer.
fn stateless_status(answer: &Value) -> StatusCode {
    let Some(code) = answer.pointer("/error/code").and_then(Value::as_i64) else {
        return StatusCode::OK;
    };
    match code {
        jsonrpc::code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        jsonrpc::code::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// A stateless request restates its revision, method and target (tool
/// name, prompt name, resource URI) in headers; a header that is missing or
/// disagrees with the body is a HeaderMismatch: the response refusing the
/// request, if any.
fn header_mismatch(headers: &HeaderMap, version: &str, frame: &Frame) -> Option<HttpResponse> {
    let Frame::Single(Incoming::Request(request)) = frame else {
        return None;
    };
    let mismatch = |what: String| {
        Some(rpc_error(
            StatusCode::BAD_REQUEST,
            request.id.clone(),
            RpcError::new(HEADER_MISMATCH, format!("Header mismatch: {what}")),
        ))
    };
    match request
        .params
        .get("_meta")
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
    {
        Some(Value::String(in_body)) if in_body != version => {
            return mismatch(format!(
                "the MCP-Protocol-Version header says {version} but _meta says {in_body}"
            ));
        }
        Some(_) => {}
        // Without it the session would serve the request in the legacy era.
        None => {
            return Some(rpc_error(
                StatusCode::BAD_REQUEST,
                request.id.clone(),
                RpcError::invalid_params(format!(
                    "Invalid params: a {version} request must carry `_meta` with \"{META_PROTOCOL_VERSION}\" (and the client capabilities); there is no initialize handshake"
                )),
            ));
        }
    }
    match header_str(headers, METHOD_HEADER).map(str::trim) {
        None => {
            return mismatch(format!(
                "the Mcp-Method header is missing (the body calls {})",
                request.method
            ));
        }
        Some(method) if method != request.method => {
            return mismatch(format!(
                "the Mcp-Method header says {method} but the body calls {}",
                request.method
            ));
        }
        Some(_) => {}
    }
    // The methods whose target the Mcp-Name header restates.
    let named = match request.method.as_str() {
        "tools/call" | "prompts/get" => request.params.get("name"),
        "resources/read" => request.params.get("uri"),
        _ => None,
    };
    if let Some(Value::String(in_body)) = named {
        match header_str(headers, NAME_HEADER).map(str::trim) {
            None => {
                return mismatch(format!(
                    "the Mcp-Name header is missing (the body names {in_body})"
                ));
            }
            Some(name) if name != in_body => {
                return mismatch(format!(
                    "the Mcp-Name header says {name} but the body names {in_body}"
                ));
            }
            Some(_) => {}
        }
    }
    None
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// Whether the Accept header allows `media` (or is absent of any, which
/// HTTP reads as accepting anything, but a Streamable HTTP client always
/// sends one).
fn accepts(headers: &HeaderMap, media: &str) -> bool {
    let (kind, _) = media.split_once('/').unwrap_or((media, ""));
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|item| item.split(';').next().unwrap_or("").trim())
        .any(|item| {
            item.eq_ignore_ascii_case(media)
                || item == "*/*"
                || item
                    .strip_suffix("/*")
                    .is_some_and(|prefix| prefix.eq_ignore_ascii_case(kind))
        })
}

/// The host of a `Host` header value, without port or brackets, lower case.
fn host_name(host: &str) -> String {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.to_ascii_lowercase()
}

/// The host of an Origin (`scheme://host[:port]`).
fn origin_host(origin: &str) -> Option<String> {
    let (_, rest) = origin.split_once("://")?;
    Some(host_name(rest.split('/').next().unwrap_or("")))
}

fn is_loopback_name(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The credentials of an `Authorization: Bearer <token>` header value. The
/// scheme is case-insensitive (RFC 9110, section 11.1), so `bearer x` counts.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// Compares secrets without stopping at the first difference, so that the
/// time taken does not tell how much of a guess was right.
fn same_secret(presented: &str, expected: &str) -> bool {
    let (a, b) = (presented.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// 128 random bits in hex: unguessable, visible ASCII as the spec requires.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn session_not_found() -> HttpResponse {
    rpc_error(
        StatusCode::NOT_FOUND,
        Value::Null,
        RpcError::new(
            -32001,
            "Session not found: it ended or never existed; initialize again",
        ),
    )
}

/// A refusal of framing that RFC 9112 forbids or that the server does not
/// implement: a second `Host` header (400: which one names the target?), or
/// a transfer coding other than `chunked` alone (501: the body would be
/// read as if it were plain JSON).
fn framing_error(headers: &HeaderMap) -> Option<HttpResponse> {
    if headers.get_all(header::HOST).iter().count() > 1 {
        return Some(closing_connection(plain(
            StatusCode::BAD_REQUEST,
            "bad request: more than one Host header",
        )));
    }
    let codings: Vec<String> = headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .flat_map(|value| value.to_str().unwrap_or("?").split(','))
        .map(|coding| coding.trim().to_ascii_lowercase())
        .filter(|coding| !coding.is_empty())
        .collect();
    if codings.is_empty() || codings == ["chunked"] {
        return None;
    }
    Some(closing_connection(plain(
        StatusCode::NOT_IMPLEMENTED,
        "not implemented: the only transfer coding supported is chunked",
    )))
}

/// `response`, after which the connection closes: its request's body was
/// not read, so nothing after it on the connection can be trusted.
fn closing_connection(mut response: HttpResponse) -> HttpResponse {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn plain(status: StatusCode, text: &'static str) -> HttpResponse {
    http::Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(ResponseBody::full(Bytes::from_static(text.as_bytes())))
        .unwrap()
}

/// The methods the endpoint serves.
const ALLOWED_METHODS: &str = "GET, POST, DELETE, OPTIONS";

/// 204 to a CORS preflight (or any `OPTIONS`): the methods served, and the
/// request headers the browser asks to send (each request is still checked
/// when it comes). Browsers may cache the answer for ten minutes.
fn preflight_response(headers: &HeaderMap) -> HttpResponse {
    let mut response = http::Response::builder()
        .status(StatusCode::NO_CONTENT)
        .header(header::ALLOW, ALLOWED_METHODS)
        .header(header::ACCESS_CONTROL_ALLOW_METHODS, ALLOWED_METHODS)
        .header(header::ACCESS_CONTROL_MAX_AGE, "600")
        .body(ResponseBody::empty())
        .unwrap();
    if let Some(asked) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        response
            .headers_mut()
            .insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
    }
    response
}

/// 405, with the methods that are allowed.
fn method_not_allowed(allow: &'static str, text: &'static str) -> HttpResponse {
    let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, text);
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

fn rpc_error(status: StatusCode, id: Value, error: RpcError) -> HttpResponse {
    json_response(status, &jsonrpc::error_response(id, &error))
}

fn json_response(status: StatusCode, message: &Value) -> HttpResponse {
    let body = serde_json::to_vec(message).expect("a JSON value always serializes");
    http::Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(ResponseBody::full(Bytes::from(body)))
        .unwrap()
}

fn sse_response(
    receiver: mpsc::UnboundedReceiver<Value>,
    first: Option<Value>,
    unsent: Option<Arc<AtomicUsize>>,
    closing: Option<&CancellationToken>,
    on_drop: Option<Box<dyn FnOnce(bool) + Send>>,
) -> HttpResponse {
    let body = SseBody {
        receiver,
        unsent,
        first: first.map(|message| sse_event(&message)),
        closing: closing.map(|token| Box::pin(token.clone().cancelled_owned())),
        keepalive: tokio::time::interval_at(tokio::time::Instant::now() + KEEPALIVE, KEEPALIVE),
        complete: false,
        on_drop,
    };
    http::Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        // Proxies such as nginx would otherwise hold events back.
        .header("x-accel-buffering", "no")
        .body(ResponseBody::Sse(Box::new(body)))
        .unwrap()
}

/// Bytes an SSE event adds around its message's JSON.
const SSE_FRAMING: usize = "event: message\ndata: \n\n".len();

fn sse_event(message: &Value) -> Bytes {
    let mut event = b"event: message\ndata: ".to_vec();
    serde_json::to_writer(&mut event, message).expect("a JSON value always serializes");
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// A response body: a whole one, or an SSE stream.
pub(crate) enum ResponseBody {
    Full(Option<Bytes>),
    Sse(Box<SseBody>),
}

impl ResponseBody {
    fn empty() -> Self {
        ResponseBody::Full(None)
    }

    fn full(bytes: Bytes) -> Self {
        ResponseBody::Full(Some(bytes))
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<BodyFrame<Bytes>, Infallible>>> {
        match self.get_mut() {
            ResponseBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(BodyFrame::data(b)))),
            ResponseBody::Sse(sse) => sse.poll_event(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, ResponseBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            ResponseBody::Full(None) => SizeHint::with_exact(0),
            ResponseBody::Sse(_) => SizeHint::default(),
        }
    }
}

/// An SSE stream of the messages sent to one outbox; it ends when every
/// sender is gone, or at shutdown when it has a `closing` token.
pub(crate) struct SseBody {
    receiver: mpsc::UnboundedReceiver<Value>,
    /// Bytes of droppable notifications queued in `receiver`, when counted.
    unsent: Option<Arc<AtomicUsize>>,
    first: Option<Bytes>,
    closing: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    keepalive: tokio::time::Interval,
    /// Set once every sender is gone: everything was sent.
    complete: bool,
    /// Runs when the stream is dropped, told whether it was complete (or
    /// the client went away, or shutdown ended it).
    on_drop: Option<Box<dyn FnOnce(bool) + Send>>,
}

impl SseBody {
    /// `message` as an SSE event, no longer counted as waiting.
    fn event(&self, message: &Value) -> Bytes {
        let event = sse_event(message);
        if let Some(unsent) = &self.unsent
            && jsonrpc::is_droppable(message)
        {
            unsent.fetch_sub(event.len() - SSE_FRAMING, Ordering::Relaxed);
        }
        event
    }

    fn poll_event(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<BodyFrame<Bytes>, Infallible>>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(BodyFrame::data(first))));
        }
        if let Some(closing) = &mut self.closing
            && closing.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(None);
        }
        match self.receiver.poll_recv(cx) {
            Poll::Ready(Some(message)) => {
                // Several messages ready at once go out as one chunk.
                let mut chunk = self.event(&message).to_vec();
                while let Ok(message) = self.receiver.try_recv() {
                    chunk.extend_from_slice(&self.event(&message));
                }
                self.keepalive.reset();
                Poll::Ready(Some(Ok(BodyFrame::data(Bytes::from(chunk)))))
            }
            Poll::Ready(None) => {
                self.complete = true;
                Poll::Ready(None)
            }
            Poll::Pending => match self.keepalive.poll_tick(cx) {
                Poll::Ready(_) => Poll::Ready(Some(Ok(BodyFrame::data(Bytes::from_static(
                    b": keepalive\n\n",
                ))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl Drop for SseBody {
    fn drop(&mut self) {
        if let Some(on_drop) = self.on_drop.take() {
            on_drop(self.complete);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_lose_port_and_brackets() {
        assert_eq!(host_name("LocalHost:8080"), "localhost");
        assert_eq!(host_name("[::1]:3000"), "::1");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(
            origin_host("http://evil.example.com:80/x").as_deref(),
            Some("evil.example.com")
        );
        assert!(
            is_loopback_name("::1")
                && is_loopback_name("127.0.0.2")
                && is_loopback_name("localhost")
        );
        assert!(!is_loopback_name("evil.example.com"));
    }

    #[test]
    fn accept_headers() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream;q=0.9"),
        );
        assert!(accepts(&headers, "application/json") && accepts(&headers, "text/event-stream"));
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        assert!(!accepts(&headers, "text/event-stream"));
        headers.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
        assert!(accepts(&headers, "text/event-stream"));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("s3cret", "s3cret"));
        assert!(!same_secret("s3cre", "s3cret"));
        assert!(!same_secret("s3creT", "s3cret"));
    }

    #[test]
    fn session_ids_are_random_hex() {
        let (a, b) = (new_session_id(), new_session_id());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
