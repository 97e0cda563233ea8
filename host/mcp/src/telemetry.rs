//! What the protocol layer tells an operator: a span per request with
//! OpenTelemetry's MCP conventions (tracing target `corral_otel`, exported
//! by whoever installs a layer for it), and the request metrics. Nothing
//! here knows an exporter: without a recorder or a span layer these cost a
//! few atomic loads.
//!
//! Label values come only from bounded sets: a method the server knows (or
//! `other`), `ok` or `error`. The tool, the session and the URI go in the
//! span, never in a label.

use std::sync::OnceLock;
use std::time::Instant;

use metrics::{Counter, Gauge, Histogram};

use serde_json::{Map, Value};

use crate::jsonrpc::Request;

/// Every method the server answers, the only values of the `method` label.
const KNOWN_METHODS: [&str; 20] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tasks/update",
    "server/discover",
    "subscriptions/listen",
];

/// Where `method` is among the known ones: its own label, or else `other`,
/// so that a client inventing method names cannot add series.
fn method_index(method: &str) -> Option<usize> {
    KNOWN_METHODS.iter().position(|known| *known == method)
}

/// A method's handles, registered with the recorder at its first request
/// and kept: a request records with a few atomic operations. (Corral
/// installs its recorder before it serves anything.)
struct MethodMeters {
    ok: Counter,
    error: Counter,
    cancelled: Counter,
    duration: Histogram,
}

impl MethodMeters {
    fn register(method: &'static str) -> MethodMeters {
        let counter = |outcome: &'static str| metrics::counter!("corral_requests_total", "method" => method, "outcome" => outcome);
        MethodMeters {
            ok: counter("ok"),
            error: counter("error"),
            cancelled: counter("cancelled"),
            duration: metrics::histogram!(
                "mcp_server_operation_duration_seconds",
                "mcp_method_name" => method
            ),
        }
    }

    /// The handles of `method` (a known one, or `other`).
    fn of(method: &str) -> &'static MethodMeters {
        static KNOWN: [OnceLock<MethodMeters>; KNOWN_METHODS.len()] =
            [const { OnceLock::new() }; KNOWN_METHODS.len()];
        static OTHER: OnceLock<MethodMeters> = OnceLock::new();
        match method_index(method) {
            Some(index) => {
                KNOWN[index].get_or_init(|| MethodMeters::register(KNOWN_METHODS[index]))
            }
            None => OTHER.get_or_init(|| MethodMeters::register("other")),
        }
    }
}

/// The requests being served now.
fn in_flight() -> &'static Gauge {
    static IN_FLIGHT: OnceLock<Gauge> = OnceLock::new();
    IN_FLIGHT.get_or_init(|| metrics::gauge!("corral_requests_in_flight"))
}

/// How a request reached the server, for its span.
#[derive(Debug, Clone, Default)]
pub struct Transport {
    /// `network.transport`: `pipe` (stdio) or `tcp` (HTTP).
    pub network: &'static str,
    /// The legacy HTTP session's id, if the request came in one.
    pub session_id: Option<String>,
    /// The W3C trace context the transport carried (the HTTP
    /// `traceparent` header), used when the request's `_meta` has none.
    pub traceparent: Option<String>,
}

/// The span of `request`, made in `revision` (if known yet), as the MCP
/// conventions name it: `{method} {tool or prompt}`, kind server,
/// continuing the client's trace from `params._meta.traceparent` or the
/// transport's.
pub fn request_span(
    request: &Request,
    revision: Option<&str>,
    transport: &Transport,
) -> tracing::Span {
    // A method the server does not know is `_OTHER`, as OpenTelemetry
    // names an unknown HTTP method; what the client chose is cut.
    let method = match method_index(&request.method) {
        Some(index) => KNOWN_METHODS[index],
        None => "_OTHER",
    };
    let params = &request.params;
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(cut);
    let (target, tool, prompt, uri) = match method {
        "tools/call" => (text("name"), text("name"), None, None),
        "prompts/get" => (text("name"), None, text("name"), None),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            (None, None, None, text("uri"))
        }
        _ => (None, None, None, None),
    };
    let span = tracing::info_span!(
        target: "corral_otel",
        "mcp.request",
        "otel.name" = tracing::field::Empty,
        "otel.kind" = "server",
        "otel.status_code" = tracing::field::Empty,
        "traceparent" = tracing::field::Empty,
        "tracestate" = tracing::field::Empty,
        "mcp.method.name" = method,
        "mcp.session.id" = tracing::field::Empty,
        "mcp.protocol.version" = tracing::field::Empty,
        "jsonrpc.request.id" = tracing::field::Empty,
        "network.transport" = transport.network,
        "gen_ai.operation.name" = tracing::field::Empty,
        "gen_ai.tool.name" = tracing::field::Empty,
        "gen_ai.prompt.name" = tracing::field::Empty,
        "mcp.resource.uri" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
        "rpc.response.status_code" = tracing::field::Empty,
    );
    if span.is_disabled() {
        return span;
    }
    match &request.id {
        Value::String(id) => span.record("jsonrpc.request.id", cut(id)),
        id => span.record("jsonrpc.request.id", cut(&id.to_string())),
    };
    match target {
        Some(target) => span.record("otel.name", format!("{method} {target}")),
        None => span.record("otel.name", method),
    };
    if let Some(tool) = tool {
        span.record("gen_ai.operation.name", "execute_tool");
        span.record("gen_ai.tool.name", tool);
    }
    if let Some(prompt) = prompt {
        span.record("gen_ai.prompt.name", prompt);
    }
    if let Some(uri) = uri {
        span.record("mcp.resource.uri", uri);
    }
    if let Some(revision) = revision.or_else(|| stateless_revision(params)) {
        span.record("mcp.protocol.version", cut(revision));
    }
    if let Some(id) = &transport.session_id {
        span.record("mcp.session.id", id.as_str());
    }
    let meta = params.get("_meta").and_then(Value::as_object);
    let meta_text = |key: &str| {
        meta.and_then(|meta| meta.get(key))
            .and_then(Value::as_str)
            .map(cut)
    };
    match meta_text("traceparent") {
        Some(traceparent) => {
            span.record("traceparent", traceparent);
            if let Some(state) = meta_text("tracestate") {
                span.record("tracestate", state);
            }
        }
        None => {
            if let Some(traceparent) = &transport.traceparent {
                span.record("traceparent", cut(traceparent));
            }
        }
    }
    span
}

/// The most of a client's text a span holds in one attribute: a span
/// waits in the export queue, and 4,096 of them must stay small.
const MAX_CLIENT_TEXT: usize = 256;

/// `text`, cut to [`MAX_CLIENT_TEXT`] bytes at a character boundary.
fn cut(text: &str) -> &str {
    if text.len() <= MAX_CLIENT_TEXT {
        return text;
    }
    let mut end = MAX_CLIENT_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn stateless_revision(params: &Map<String, Value>) -> Option<&str> {
    params
        .get("_meta")?
        .get("io.modelcontextprotocol/protocolVersion")?
        .as_str()
}

/// One request being served: counted in flight from its start, and, when
/// it ends ([`Served::end`]) or is dropped (cancelled), counted by outcome
/// with its duration.
pub struct Served {
    meters: &'static MethodMeters,
    started: Instant,
    ended: bool,
}

impl Served {
    pub fn start(method: &str) -> Served {
        in_flight().increment(1.0);
        Served {
            meters: MethodMeters::of(method),
            started: Instant::now(),
            ended: false,
        }
    }

    /// The request answered with `response`: its outcome goes on `span`
    /// too.
    pub fn end(mut self, response: &Value, span: &tracing::Span) {
        self.ended = true;
        let error = response.pointer("/error/code").and_then(Value::as_i64);
        if let Some(code) = error {
            span.record("otel.status_code", "error");
            span.record("error.type", code.to_string());
            span.record("rpc.response.status_code", code.to_string());
        } else if response.pointer("/result/isError") == Some(&Value::Bool(true)) {
            span.record("otel.status_code", "error");
            span.record("error.type", "tool_error");
        }
        let meters = self.meters;
        self.record(match error {
            Some(_) => &meters.error,
            None => &meters.ok,
        });
    }

    fn record(&self, outcome: &Counter) {
        in_flight().decrement(1.0);
        outcome.increment(1);
        self.meters
            .duration
            .record(self.started.elapsed().as_secs_f64());
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if !self.ended {
            self.record(&self.meters.cancelled);
        }
    }
}

/// Counts an HTTP response by its status (`corral_http_responses_total`),
/// with the handle of each status kept.
pub fn http_response(status: http::StatusCode) {
    static BY_STATUS: [OnceLock<Counter>; 500] = [const { OnceLock::new() }; 500];
    let code = status.as_u16();
    let Some(slot) = BY_STATUS.get(usize::from(code).wrapping_sub(100)) else {
        return;
    };
    slot.get_or_init(
        || metrics::counter!("corral_http_responses_total", "status" => code.to_string()),
    )
    .increment(1);
}

/// Work refused because a host budget was reached.
pub fn budget_refused(budget: &'static str) {
    metrics::counter!("corral_budget_refusals_total", "budget" => budget).increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_the_server_does_not_know_is_labelled_other() {
        assert_eq!(
            method_index("tools/call").map(|i| KNOWN_METHODS[i]),
            Some("tools/call")
        );
        assert_eq!(method_index("tools/call2"), None);
        assert_eq!(method_index(""), None);
        assert!(std::ptr::eq(MethodMeters::of("x"), MethodMeters::of("y")));
    }

    #[test]
    fn a_clients_text_is_cut_at_a_character_boundary() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(200);
        assert_eq!(cut(&long).len(), MAX_CLIENT_TEXT);
        let odd = format!("a{long}");
        assert_eq!(cut(&odd).len(), MAX_CLIENT_TEXT - 1);
    }
}
