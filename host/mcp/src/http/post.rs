//! POST: the checks of its headers and body, and the routing of its frame
//! (to a legacy session, to a new one by `initialize`, or to a stateless
//! exchange, whose headers must restate the body).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Incoming as IncomingBody};
use serde_json::Value;

use super::body::{HttpResponse, closing_connection, plain, rpc_error};
use super::exchange::{Era, FrameSummary, exchange};
use super::{Server, VERSION_HEADER, accepts, header_str, session_header};
use crate::jsonrpc::{self, Frame, Incoming, Request, RpcError};
use crate::session::Session;
use crate::{Revision, ToolHost};

/// Stateless requests restate their method and tool name in headers, so
/// that proxies can route without parsing the body; they must agree.
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
/// The JSON-RPC error for a stateless request whose headers are missing,
/// unreadable, or disagree with its body (MCP 2026-07-28, Streamable HTTP).
const HEADER_MISMATCH: i64 = -32020;
/// The `_meta` key naming a stateless request's revision.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// How long a client may take to send a request's body, once its headers
/// are in.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);

impl<H: ToolHost> Server<H> {
    /// POST: the frame in the body goes to the legacy session its
    /// `Mcp-Session-Id` names, starts one (`initialize`), or is a stateless
    /// exchange.
    pub(super) async fn post(
        self: Arc<Self>,
        request: http::Request<IncomingBody>,
    ) -> HttpResponse {
        let headers = request.headers().clone();
        let body = match read_body(request.into_body(), self.http.max_body_bytes).await {
            Ok(body) => body,
            Err(refusal) => return refusal,
        };
        let frame = parse_body(&body);
        let summary = FrameSummary::of(&frame);
        // Refused before the body's own errors, but read first, so that the
        // refusal carries the request's id when the body has one.
        if let Some(refusal) = media_refusal(&headers, &summary.reply_id) {
            return refusal;
        }
        if let Frame::Unparseable(error) = &frame {
            return rpc_error(StatusCode::BAD_REQUEST, Value::Null, error.clone());
        }
        let version = header_str(&headers, VERSION_HEADER).map(str::trim);

        if let Some(id) = session_header(&headers) {
            return self.post_in_session(&id, version, frame, &summary).await;
        }

        let stateless_version =
            version.filter(|version| Revision::parse(version).is_none_or(Revision::is_stateless));
        if summary.method.as_deref() == Some("initialize") {
            return match stateless_version {
                // The stateless era has no handshake: like any method it does
                // not have, initialize is not found there.
                Some(version) => initialize_not_found(version, frame),
                None => self.initialize(frame, &summary).await,
            };
        }
        self.post_stateless(&headers, stateless_version, frame, &summary)
            .await
    }

    /// A POST without a session: a stateless exchange under `version`, the
    /// MCP-Protocol-Version header unless it names a legacy revision;
    /// without one it is refused.
    async fn post_stateless(
        &self,
        headers: &HeaderMap,
        version: Option<&str>,
        frame: Frame,
        summary: &FrameSummary,
    ) -> HttpResponse {
        let Some(version) = version else {
            // Without a session this is a stateless request, whose required
            // MCP-Protocol-Version header is missing: a HeaderMismatch.
            return rpc_error(
                StatusCode::BAD_REQUEST,
                summary.reply_id.clone(),
                RpcError::new(
                    HEADER_MISMATCH,
                    format!(
                        "Header mismatch: the MCP-Protocol-Version header is missing, and without an Mcp-Session-Id header this is a stateless request. Send initialize first (revisions up to {}), or make stateless requests with the header MCP-Protocol-Version: {}",
                        Revision::NEWEST_LEGACY,
                        Revision::V2026_07_28
                    ),
                ),
            );
        };
        if let Some(refusal) = header_mismatch(headers, version, &frame) {
            return refusal;
        }
        // A session of its own for this exchange, ended with it.
        let session = Session::new(self.host.clone(), self.options.clone(), Arc::new(|_| {}));
        exchange(&session, frame, summary, &self.closing, Era::Stateless).await
    }
}

/// The refusal of a POST whose Accept header does not allow both answers
/// (JSON and SSE) or whose body is not JSON, if it is one; `id` is the
/// request's.
fn media_refusal(headers: &HeaderMap, id: &Value) -> Option<HttpResponse> {
    if !accepts(headers, "application/json") || !accepts(headers, "text/event-stream") {
        return Some(rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            id.clone(),
            RpcError::new(
                -32000,
                "Not Acceptable: the Accept header must allow both application/json and text/event-stream",
            ),
        ));
    }
    let content_type = header_str(headers, header::CONTENT_TYPE.as_str()).unwrap_or("");
    if !content_type
        .split(';')
        .next()
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
    {
        return Some(rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            id.clone(),
            RpcError::new(
                -32000,
                "Unsupported Media Type: the body must be application/json",
            ),
        ));
    }
    None
}

/// Reads a request's body, of at most `limit` bytes, within
/// [`BODY_TIMEOUT`]; or the response refusing it.
async fn read_body(body: IncomingBody, limit: usize) -> Result<Bytes, HttpResponse> {
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
    if body
        .size_hint()
        .exact()
        .is_some_and(|announced| announced > limit as u64)
    {
        return Err(too_large());
    }
    let read = Limited::new(body, limit).collect();
    let Ok(body) = tokio::time::timeout(BODY_TIMEOUT, read).await else {
        return Err(closing_connection(rpc_error(
            StatusCode::REQUEST_TIMEOUT,
            Value::Null,
            RpcError::new(
                jsonrpc::code::INVALID_REQUEST,
                format!(
                    "Request Timeout: the body did not arrive within {} s",
                    BODY_TIMEOUT.as_secs()
                ),
            ),
        )));
    };
    match body {
        Ok(body) => Ok(body.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(err) => {
            tracing::debug!("reading a request body: {err}");
            Err(plain(
                StatusCode::BAD_REQUEST,
                "bad request: the body could not be read",
            ))
        }
    }
}

/// The JSON-RPC frame in a body.
fn parse_body(body: &Bytes) -> Frame {
    match std::str::from_utf8(body) {
        Ok(text) => jsonrpc::parse_frame(text.trim()),
        Err(_) => Frame::Unparseable(RpcError::new(
            jsonrpc::code::PARSE_ERROR,
            "Parse error: the body is not valid UTF-8",
        )),
    }
}

/// 404 to `initialize` under a stateless revision (`version`).
fn initialize_not_found(version: &str, frame: Frame) -> HttpResponse {
    let Frame::Single(Incoming::Request(request)) = frame else {
        unreachable!("a single request has a method")
    };
    rpc_error(
        StatusCode::NOT_FOUND,
        request.id,
        RpcError::new(
            jsonrpc::code::METHOD_NOT_FOUND,
            format!(
                "Method not found: initialize is not part of protocol revision {version} (MCP-Protocol-Version header); omit the header to start a {} session",
                Revision::NEWEST_LEGACY
            ),
        ),
    )
}

/// A stateless request restates its revision, method and target (tool
/// name, prompt name, resource URI) in headers; a header that is missing or
/// disagrees with the body is a HeaderMismatch: the response refusing the
/// request, if any.
fn header_mismatch(headers: &HeaderMap, version: &str, frame: &Frame) -> Option<HttpResponse> {
    let Frame::Single(Incoming::Request(request)) = frame else {
        return None;
    };
    let in_body = request
        .params
        .get("_meta")
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION));
    let Some(in_body) = in_body else {
        // Without it the session would serve the request in the legacy era.
        return Some(rpc_error(
            StatusCode::BAD_REQUEST,
            request.id.clone(),
            RpcError::invalid_params(format!(
                "Invalid params: a {version} request must carry `_meta` with \"{META_PROTOCOL_VERSION}\" (and the client capabilities); there is no initialize handshake"
            )),
        ));
    };
    let what = version_mismatch(version, in_body)
        .or_else(|| method_mismatch(headers, request))
        .or_else(|| name_mismatch(headers, request))?;
    Some(rpc_error(
        StatusCode::BAD_REQUEST,
        request.id.clone(),
        RpcError::new(HEADER_MISMATCH, format!("Header mismatch: {what}")),
    ))
}

/// How the MCP-Protocol-Version header (`version`) disagrees with the
/// revision the body's `_meta` names, if it does.
fn version_mismatch(version: &str, in_body: &Value) -> Option<String> {
    match in_body {
        Value::String(in_body) if in_body != version => Some(format!(
            "the MCP-Protocol-Version header says {version} but _meta says {in_body}"
        )),
        _ => None,
    }
}

/// How the Mcp-Method header disagrees with the body, if it does.
fn method_mismatch(headers: &HeaderMap, request: &Request) -> Option<String> {
    match header_str(headers, METHOD_HEADER).map(str::trim) {
        None => Some(format!(
            "the Mcp-Method header is missing (the body calls {})",
            request.method
        )),
        Some(method) if method != request.method => Some(format!(
            "the Mcp-Method header says {method} but the body calls {}",
            request.method
        )),
        Some(_) => None,
    }
}

/// How the Mcp-Name header disagrees with the target the body names, if it
/// does.
fn name_mismatch(headers: &HeaderMap, request: &Request) -> Option<String> {
    // The methods whose target the Mcp-Name header restates.
    let named = match request.method.as_str() {
        "tools/call" | "prompts/get" => request.params.get("name"),
        "resources/read" => request.params.get("uri"),
        _ => None,
    };
    let Some(Value::String(in_body)) = named else {
        return None;
    };
    match header_str(headers, NAME_HEADER).map(str::trim) {
        None => Some(format!(
            "the Mcp-Name header is missing (the body names {in_body})"
        )),
        Some(name) if name != in_body => Some(format!(
            "the Mcp-Name header says {name} but the body names {in_body}"
        )),
        Some(_) => None,
    }
}
