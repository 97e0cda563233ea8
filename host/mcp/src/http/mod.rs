//! The Streamable HTTP transport: one endpoint (`/mcp` by default) that
//! takes JSON-RPC messages by POST and answers each with a JSON body or an
//! SSE stream, in both eras of the protocol.
//!
//! This layer only maps HTTP onto [`Session`]s; the protocol itself (eras,
//! revisions, dispatch) is the session's business.
//!
//! [`Session`]: crate::Session
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
//!   served by a session of its own that ends with the exchange. Its
//!   headers must restate its body (see `mirrored`), including the
//!   arguments a tool marks with `x-mcp-header`. Nothing is
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
//! So a legacy `tools/call` whose tool asks the client for input is
//! answered with an SSE stream: the server's requests (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) go on it, the client POSTs each
//! response in its session (202), and the call's own response ends the
//! stream. A stateless call that asks is answered at once instead, with
//! `input_required` (one JSON body), or -32021 (400) for a capability the
//! request did not declare. A batch's answer is one array, sent once
//! its last request ends, so nothing in a batch waits on the client: a
//! `subscriptions/listen` in a batch is refused (-32600), and a call in a
//! batch asks the client nothing (its asks fail at once).
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
//! on their own end (GET streams at once; listen streams once their session
//! has sent `notifications/cancelled` for them and their completion result),
//! and requests in flight finish and are answered, for at most the grace
//! period.

mod authorize;
mod body;
mod exchange;
mod guard;
mod header_value;
mod legacy;
mod listener;
mod mirrored;
mod post;
mod probes;
mod secret_page;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{HeaderMap, Method, StatusCode, header};
use hyper::body::Incoming as IncomingBody;
use tokio_util::sync::CancellationToken;

use super::ToolHost;
use super::session::ServerOptions;
use body::{HttpResponse, method_not_allowed, plain};
use guard::{accepted_hosts, add_cors_headers, framing_error, preflight_response};
use legacy::LegacySession;

pub use listener::serve_http;
pub use probes::{Probes, serve_probes};

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The path of the MCP endpoint.
    pub path: String,
    /// When set, every request must carry `Authorization: Bearer <token>`.
    pub bearer_token: Option<String>,
    /// When set, the server is an OAuth resource server: every request
    /// carries an access token its authorizer validates, which makes it
    /// some principal's (see `crate::auth`).
    pub authorizer: Option<Arc<crate::auth::Authorizer>>,
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
    /// The host's side of the page where signed-in users set their own
    /// secrets (`/corral/secrets`); served when the authorizer also signs
    /// browsers in.
    pub secret_page: Option<Arc<dyn corral_tool::SecretPage>>,
    /// `/metrics`, `/healthz` and `/readyz` (see `probes`).
    pub probes: Option<Arc<dyn Probes>>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            path: "/mcp".into(),
            bearer_token: None,
            authorizer: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            max_connections: 512,
            shutdown_grace: Duration::from_secs(35),
            secret_page: None,
            probes: None,
        }
    }
}

/// The session header of the legacy era.
const SESSION_HEADER: &str = "mcp-session-id";
/// The revision header: the negotiated one in a legacy session, the
/// request's own in the stateless era.
const VERSION_HEADER: &str = "mcp-protocol-version";
/// The methods the endpoint serves.
const ALLOWED_METHODS: &str = "GET, POST, DELETE, OPTIONS";

/// The endpoint, shared by every connection.
struct Server<H> {
    host: Arc<H>,
    options: ServerOptions,
    http: HttpOptions,
    /// Host names accepted in `Host` (lower case); empty: any.
    hosts: Vec<String>,
    sessions: Mutex<HashMap<String, Arc<LegacySession<H>>>>,
    /// Browsers signed in to the secrets page.
    pages: secret_page::PageSessions,
    /// Cancelled at shutdown: GET and listen streams end.
    closing: CancellationToken,
}

impl<H: ToolHost> Server<H> {
    fn new(host: Arc<H>, options: ServerOptions, http: HttpOptions, local: SocketAddr) -> Self {
        let hosts = accepted_hosts(&http, local);
        Server {
            host,
            options,
            http,
            hosts,
            sessions: Mutex::new(HashMap::new()),
            pages: Default::default(),
            closing: CancellationToken::new(),
        }
    }

    /// Answers one request, counted by the status of its answer.
    async fn handle(self: Arc<Self>, request: http::Request<IncomingBody>) -> HttpResponse {
        let response = self.route(request).await;
        crate::telemetry::http_response(response.status());
        response
    }

    /// Answers one request: the guards first, then by path and method.
    async fn route(self: Arc<Self>, request: http::Request<IncomingBody>) -> HttpResponse {
        if let Some(refusal) = framing_error(request.headers()) {
            return refusal;
        }
        let path = request.uri().path();
        if let Some(probes) = self
            .http
            .probes
            .as_ref()
            .filter(|_| probes::is_probe_path(path))
        {
            // Health checks carry no token; the metrics are the server's
            // business, behind the same checks as the endpoint.
            if path == "/metrics" {
                if let Some(refusal) = self.refusal(request.headers(), true) {
                    return refusal;
                }
                if let Err(refusal) = self.caller(&request).await {
                    return refusal;
                }
            }
            return probes::probe_response(probes, path, request.method()).await;
        }
        if let Some(metadata) = self
            .metadata_response(request.uri().path(), request.method())
            .await
        {
            return metadata;
        }
        if request.uri().path().starts_with("/corral/") && request.uri().path() != self.http.path {
            let path = request.uri().path().to_string();
            return match self.page_response(request).await {
                Some(response) => response,
                None => {
                    tracing::debug!("no page at {path}");
                    plain(StatusCode::NOT_FOUND, "not found")
                }
            };
        }
        if request.uri().path() != self.http.path {
            return plain(
                StatusCode::NOT_FOUND,
                "not found: the MCP endpoint is elsewhere",
            );
        }
        let cors_origin = self.cors_origin(request.headers());
        let preflight = request.method() == Method::OPTIONS;
        let mut response = if let Some(refusal) = self.refusal(request.headers(), !preflight) {
            refusal
        } else if preflight {
            // A browser sends no credentials with a preflight.
            preflight_response(request.headers())
        } else {
            match self.caller(&request).await {
                Err(refusal) => refusal,
                Ok(caller) => match *request.method() {
                    Method::POST => self.post(request, caller).await,
                    Method::GET => self.get(request.headers(), caller.as_deref()),
                    Method::DELETE => self.delete(request.headers(), caller.as_deref()).await,
                    _ => method_not_allowed(ALLOWED_METHODS, "method not allowed"),
                },
            }
        };
        add_cors_headers(&mut response, cors_origin);
        response
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The legacy session a request names in `Mcp-Session-Id`, if it names
/// one. A value that is not visible ASCII still names one: a session no
/// one was given (ids are hex), so it is not found (404), rather than the
/// request passing for one without a session.
fn session_header(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).trim().to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

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
}
