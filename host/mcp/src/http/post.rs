//! POST: the checks of its headers and body, and the routing of its frame
//! (to a legacy session, to a new one by `initialize`, or to a stateless
//! exchange, whose headers must restate the body).

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};
use hyper::body::Incoming as IncomingBody;
use serde_json::Value;

use super::body::{
    BODY_TIMEOUT, BodyFailure, HttpResponse, closing_connection, plain, read_limited, rpc_error,
};
use super::exchange::{Era, FrameSummary, exchange};
use super::mirrored::{method_mismatch, name_mismatch, params_mismatch, version_mismatch};
use super::{Server, VERSION_HEADER, accepts, header_str, session_header};
use crate::jsonrpc::{self, Frame, Incoming, Request, RpcError};
use crate::session::Session;
use crate::{Revision, ToolHost};
use corral_tool::Principal;
use corral_tool::header_param::header_params;

/// The JSON-RPC error for a stateless request whose headers are missing,
/// unreadable, or disagree with its body (MCP 2026-07-28, Streamable HTTP).
const HEADER_MISMATCH: i64 = -32020;
/// The `_meta` key naming a stateless request's revision.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

impl<H: ToolHost> Server<H> {
    /// POST: the frame in the body goes to the legacy session its
    /// `Mcp-Session-Id` names, starts one (`initialize`), or is a stateless
    /// exchange.
    pub(super) async fn post(
        self: Arc<Self>,
        request: http::Request<IncomingBody>,
        caller: Option<Arc<Principal>>,
    ) -> HttpResponse {
        let headers = request.headers().clone();
        let body = match read_body(request.into_body(), self.http.max_body_bytes).await {
            Ok(body) => body,
            Err(refusal) => return refusal,
        };
        let frame = parse_body(&body);
        let mut summary = FrameSummary::of(&frame);
        summary.traceparent = header_str(&headers, "traceparent").map(str::to_owned);
        // Refused before the body's own errors, but read first, so that the
        // refusal carries the request's id when the body has one.
        if let Some(refusal) = media_refusal(&headers, &summary.reply_id) {
            return refusal;
        }
        if let Frame::Unparseable(error) = &frame {
            return rpc_error(StatusCode::BAD_REQUEST, Value::Null, error.clone());
        }
        if let Some(caller) = &caller
            && let Some(refusal) = self.scope_refusal(&frame, caller).await
        {
            return refusal;
        }
        let version = header_str(&headers, VERSION_HEADER).map(str::trim);

        if let Some(id) = session_header(&headers) {
            return self
                .post_in_session(&id, version, frame, &summary, caller)
                .await;
        }

        let stateless_version =
            version.filter(|version| Revision::parse(version).is_none_or(Revision::is_stateless));
        if summary.method.as_deref() == Some("initialize") {
            return match stateless_version {
                // The stateless era has no handshake: like any method it does
                // not have, initialize is not found there.
                Some(version) => initialize_not_found(version, frame),
                None => self.initialize(frame, &summary, caller).await,
            };
        }
        self.post_stateless(&headers, stateless_version, frame, &summary, caller)
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
        caller: Option<Arc<Principal>>,
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
        if let Frame::Single(Incoming::Request(request)) = &frame
            && let Some(refusal) = self.header_mismatch(headers, version, request).await
        {
            return refusal;
        }
        // A session of its own for this exchange, ended with it.
        let session = Session::new(self.host.clone(), self.options.clone(), Arc::new(|_| {}));
        session.set_caller(caller);
        session.set_transport("tcp", None);
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

/// Reads a request's body (see [`read_limited`]); or the JSON-RPC
/// response refusing it.
async fn read_body(body: IncomingBody, limit: usize) -> Result<Bytes, HttpResponse> {
    read_limited(body, limit)
        .await
        .map_err(|failure| match failure {
            BodyFailure::TooLarge => closing_connection({
                crate::telemetry::budget_refused("body");
                rpc_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Value::Null,
                    RpcError::new(
                        jsonrpc::code::INVALID_REQUEST,
                        format!("Payload Too Large: the body is limited to {limit} bytes"),
                    ),
                )
            }),
            BodyFailure::TimedOut => closing_connection({
                crate::telemetry::budget_refused("body_time");
                rpc_error(
                    StatusCode::REQUEST_TIMEOUT,
                    Value::Null,
                    RpcError::new(
                        jsonrpc::code::INVALID_REQUEST,
                        format!(
                            "Request Timeout: the body did not arrive within {} s",
                            BODY_TIMEOUT.as_secs()
                        ),
                    ),
                )
            }),
            BodyFailure::Unreadable => plain(
                StatusCode::BAD_REQUEST,
                "bad request: the body could not be read",
            ),
        })
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

impl<H: ToolHost> Server<H> {
    /// A stateless request restates its revision, method, target (tool
    /// name, prompt name, resource URI) and a called tool's marked
    /// parameters in headers; the response refusing it when a header is
    /// missing, unreadable or disagrees with the body, if one does.
    async fn header_mismatch(
        &self,
        headers: &HeaderMap,
        version: &str,
        request: &Request,
    ) -> Option<HttpResponse> {
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
        let mismatch = match version_mismatch(version, in_body)
            .or_else(|| method_mismatch(headers, request))
            .or_else(|| name_mismatch(headers, request))
        {
            Some(mismatch) => Some(mismatch),
            None => match self.param_mismatch(headers, request).await {
                Ok(mismatch) => mismatch,
                Err(refusal) => return Some(refusal),
            },
        }?;
        Some(rpc_error(
            StatusCode::BAD_REQUEST,
            request.id.clone(),
            RpcError::new(HEADER_MISMATCH, format!("Header mismatch: {mismatch}")),
        ))
    }

    /// How the Mcp-Param headers of a `tools/call` disagree with the
    /// arguments of the parameters its tool marks with `x-mcp-header`, if
    /// they do. A call the session will refuse anyway (no such tool, no
    /// name, arguments that are not an object) is left to it. Errs with the
    /// refusal when the tool's marks cannot be read, which a host that
    /// checks its tools (as Corral's sandbox does at load) never serves.
    async fn param_mismatch(
        &self,
        headers: &HeaderMap,
        request: &Request,
    ) -> Result<Option<String>, HttpResponse> {
        if request.method != "tools/call" {
            return Ok(None);
        }
        let Some(Value::String(name)) = request.params.get("name") else {
            return Ok(None);
        };
        let arguments = match request.params.get("arguments") {
            None => &serde_json::Map::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => return Ok(None),
        };
        // As the call itself will: the tool list is known once the host is ready.
        self.host.ready().await;
        let tools = self.host.tools();
        let Some(tool) = tools.iter().find(|tool| tool.name == *name) else {
            return Ok(None);
        };
        match header_params(&tool.input_schema) {
            Ok(params) => Ok(params_mismatch(headers, &params, arguments)),
            Err(problem) => {
                tracing::warn!("tool {name} has invalid x-mcp-header marks: {problem}");
                Err(rpc_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    request.id.clone(),
                    RpcError::new(
                        jsonrpc::code::INTERNAL_ERROR,
                        format!(
                            "Internal error: tool {name} cannot be called over HTTP, its x-mcp-header marks are invalid: {problem}"
                        ),
                    ),
                ))
            }
        }
    }
}
