//! Traces, as an operator's tracing backend sees them: the real `corral
//! serve` exports to a real OTLP/HTTP receiver on loopback
//! (tests/support/otlp.rs, the official `opentelemetry-proto` definitions
//! decoding each request), and the tests read the span trees back: a
//! stdio call continuing the client's trace from `_meta.traceparent`, a
//! call that asks the user and touches state, an HTTP call continuing the
//! trace of its `traceparent` header, and a receiver that is down, which
//! must cost the calls nothing.

#[path = "../support/otlp.rs"]
mod otlp;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::http::HttpServer;
use crate::support::{PATIENCE, Server, conformance_folder, example, folder_with};
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use otlp::{
    OtlpReceiver, Span, attr_int, attr_str, child, child_names, describe_all, find, has, hex, kind,
    resource_str,
};

/// The client's trace: what every `traceparent` below continues.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";
/// `SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK`: the span's parent is remote.
const IS_REMOTE: u32 = 0x200;

fn traceparent(trace_id: &str, parent_id: &str) -> String {
    format!("00-{trace_id}-{parent_id}-01")
}

/// A folder serving the calc example.
fn calc_folder() -> tempfile::TempDir {
    folder_with(&[("calc.wasm", &example("calc"))])
}

/// `corral serve DIR --otlp-endpoint RECEIVER` on stdio, initialized in
/// 2025-11-25 with the client `capabilities`.
fn traced_server(dir: &std::path::Path, receiver: &OtlpReceiver, capabilities: Value) -> Server {
    let endpoint = receiver.endpoint();
    let mut server = Server::start_with(dir, &["--otlp-endpoint", &endpoint]);
    server.result(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": { "name": "corral-tests", "version": "0" }
        }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    server
}

/// The spans of the trace `trace_id` (hex), once the span named `root` and
/// every name of `names` are among them.
fn trace_with(receiver: &OtlpReceiver, trace_id: &str, root: &str, names: &[&str]) -> Vec<Span> {
    let of_trace = |spans: &[Span]| -> Vec<Span> {
        spans
            .iter()
            .filter(|span| hex(&span.trace_id) == trace_id)
            .cloned()
            .collect()
    };
    let spans = receiver.wait_for(
        |spans| {
            let trace = of_trace(spans);
            has(&trace, root) && names.iter().all(|name| has(&trace, name))
        },
        PATIENCE,
    );
    of_trace(&spans)
}

/// The request span `request` continues the client's span `parent_id` of
/// trace `trace_id`.
fn assert_continues(request: &Span, trace_id: &str, parent_id: &str, spans: &[Span]) {
    assert_eq!(hex(&request.trace_id), trace_id, "{}", describe_all(spans));
    assert_eq!(
        hex(&request.parent_span_id),
        parent_id,
        "{}",
        describe_all(spans)
    );
    assert_eq!(
        request.flags & IS_REMOTE,
        IS_REMOTE,
        "the parent is remote: {}",
        describe_all(spans)
    );
    assert_eq!(kind(request), SpanKind::Server, "{}", describe_all(spans));
}

/// Every span of `spans` lies within its parent's time, and has a status
/// other than an error unless `errors` names it.
fn assert_well_formed(spans: &[Span], errors: &[&str]) {
    for span in spans {
        assert!(
            span.start_time_unix_nano > 0 && span.start_time_unix_nano <= span.end_time_unix_nano,
            "{}",
            describe_all(spans)
        );
        if let Some(parent) = spans
            .iter()
            .find(|parent| parent.span_id == span.parent_span_id)
        {
            assert!(
                parent.start_time_unix_nano <= span.start_time_unix_nano
                    && span.end_time_unix_nano <= parent.end_time_unix_nano,
                "{:?} outside its parent {:?}:\n{}",
                span.name,
                parent.name,
                describe_all(spans)
            );
        }
        let code = span.status.as_ref().map_or(0, |status| status.code);
        if !errors.contains(&span.name.as_str()) {
            assert_ne!(code, StatusCode::Error as i32, "{}", describe_all(spans));
        }
    }
}

#[test]
fn a_stdio_call_continues_the_clients_trace_with_the_mcp_conventions() {
    let receiver = OtlpReceiver::start();
    let folder = calc_folder();
    let mut server = traced_server(folder.path(), &receiver, json!({}));
    let id = server.send_request(
        "tools/call",
        json!({
            "name": "add",
            "arguments": { "a": 1, "b": 2 },
            "_meta": { "traceparent": traceparent(TRACE_ID, PARENT_ID) },
        }),
    );
    let response = server.response_to(&id);
    assert_eq!(response["result"]["isError"], false, "{response}");

    let spans = trace_with(
        &receiver,
        TRACE_ID,
        "tools/call add",
        &[
            "corral.plugin.call",
            "corral.plugin.prepare",
            "corral.plugin.instantiate",
            "corral.plugin.run",
        ],
    );
    let request = find(&spans, "tools/call add");
    assert_continues(request, TRACE_ID, PARENT_ID, &spans);
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "pipe"),
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", "add"),
    ] {
        assert_eq!(
            attr_str(request, key).as_deref(),
            Some(value),
            "{key}: {}",
            describe_all(&spans)
        );
    }
    assert_eq!(
        attr_str(request, "jsonrpc.request.id"),
        Some(id.to_string()),
        "{}",
        describe_all(&spans)
    );
    // Neither a session (stdio has none) nor an error.
    for absent in ["mcp.session.id", "error.type", "rpc.response.status_code"] {
        assert_eq!(attr_str(request, absent), None, "{absent}");
    }

    let call = child(&spans, request, "corral.plugin.call");
    assert_eq!(kind(call), SpanKind::Internal);
    assert_eq!(attr_str(call, "corral.plugin").as_deref(), Some("calc"));
    assert_eq!(attr_str(call, "corral.kind").as_deref(), Some("tool"));
    assert_eq!(attr_str(call, "corral.outcome").as_deref(), Some("ok"));
    assert!(
        attr_int(call, "corral.fuel").is_some_and(|fuel| fuel > 0),
        "{}",
        describe_all(&spans)
    );
    child(&spans, call, "corral.plugin.prepare");
    child(&spans, call, "corral.plugin.instantiate");
    child(&spans, call, "corral.plugin.run");
    assert_well_formed(&spans, &[]);

    let resources = receiver.resources();
    assert!(!resources.is_empty());
    for resource in &resources {
        assert_eq!(
            resource_str(resource, "service.name").as_deref(),
            Some("corral")
        );
        assert_eq!(
            resource_str(resource, "service.version").as_deref(),
            Some(env!("CARGO_PKG_VERSION"))
        );
    }
    assert!(receiver.refused().is_empty(), "{:?}", receiver.refused());
}

#[test]
fn a_call_that_asks_the_user_and_touches_state_has_a_span_for_each() {
    let receiver = OtlpReceiver::start();
    // The conformance fixture's every call reads its store (whether it
    // lists test_added_tool); test_elicitation then asks the user.
    let folder = conformance_folder("");
    let mut server = traced_server(folder.path(), &receiver, json!({ "elicitation": {} }));
    let trace_id = "0af7651916cd43dd8448eb211c80319c";
    let parent_id = "b7ad6b7169203331";
    let id = server.send_request(
        "tools/call",
        json!({
            "name": "test_elicitation",
            "arguments": { "message": "Who are you?" },
            "_meta": { "traceparent": traceparent(trace_id, parent_id) },
        }),
    );
    // The server asks the client; the client answers.
    let ask = loop {
        let message = server.recv();
        if message.get("method").is_some() && message.get("id").is_some() {
            break message;
        }
        assert!(
            message.get("id").is_none(),
            "a response before the ask: {message}"
        );
    };
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    server.send(&json!({
        "jsonrpc": "2.0",
        "id": ask["id"],
        "result": { "action": "accept", "content": { "username": "ada", "email": "ada@example.com" } },
    }));
    let response = server.response_to(&id);
    assert_eq!(response["result"]["isError"], false, "{response}");

    let spans = trace_with(
        &receiver,
        trace_id,
        "tools/call test_elicitation",
        &["corral.plugin.call", "elicitation/create", "state get"],
    );
    let request = find(&spans, "tools/call test_elicitation");
    assert_continues(request, trace_id, parent_id, &spans);
    assert_eq!(
        attr_str(request, "gen_ai.tool.name").as_deref(),
        Some("test_elicitation")
    );
    let call = child(&spans, request, "corral.plugin.call");
    assert_eq!(
        attr_str(call, "corral.plugin").as_deref(),
        Some("conformance")
    );
    assert_eq!(attr_str(call, "corral.outcome").as_deref(), Some("ok"));

    let names = child_names(&spans, call);
    let asked = child(&spans, call, "elicitation/create");
    assert_eq!(kind(asked), SpanKind::Client, "{}", describe_all(&spans));
    assert_eq!(
        attr_str(asked, "mcp.method.name").as_deref(),
        Some("elicitation/create")
    );
    assert!(
        attr_str(asked, "corral.outcome").is_some(),
        "{}",
        describe_all(&spans)
    );

    let state: Vec<&Span> = spans
        .iter()
        .filter(|span| span.name.starts_with("state "))
        .collect();
    assert!(!state.is_empty());
    for operation in &state {
        assert_eq!(
            operation.parent_span_id,
            call.span_id,
            "{:?} is a child of corral.plugin.call (its children: {names:?}):\n{}",
            operation.name,
            describe_all(&spans)
        );
        assert_eq!(kind(operation), SpanKind::Client);
        assert_eq!(
            attr_str(operation, "db.system.name").as_deref(),
            Some("sqlite"),
            "{}",
            describe_all(&spans)
        );
        let op = operation.name.strip_prefix("state ").unwrap();
        assert_eq!(
            attr_str(operation, "db.operation.name").as_deref(),
            Some(op)
        );
        // The plugin is named by the call it belongs to, not by the
        // operation: a per-user namespace's name would carry the user's key.
        assert_eq!(
            attr_str(operation, "corral.plugin"),
            None,
            "{}",
            describe_all(&spans)
        );
    }
    assert_well_formed(&spans, &[]);
}

#[test]
fn an_http_traceparent_header_continues_the_trace_when_meta_has_none() {
    let receiver = OtlpReceiver::start();
    let folder = calc_folder();
    let endpoint = receiver.endpoint();
    let http = HttpServer::start_on(
        folder.path(),
        "127.0.0.1:0",
        &["--otlp-endpoint", &endpoint],
        &[
            ("OTEL_SERVICE_NAME", "corral-under-test"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-otlp-token=to%20ken"),
        ],
    );
    let mut client = http.client();
    client.initialize("2025-11-25");
    let session = client.session.clone().unwrap();

    let header = traceparent(TRACE_ID, PARENT_ID);
    let id = client.id();
    let response = client.post(
        &json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "add", "arguments": { "a": 2, "b": 3 } },
        }),
        &[("traceparent", &header)],
    );
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.answer()["result"]["isError"], false);

    // With both, `_meta`'s wins.
    let meta_trace = "11111111111111111111111111111111";
    let meta_parent = "2222222222222222";
    let other_id = client.id();
    let response = client.post(
        &json!({
            "jsonrpc": "2.0", "id": other_id, "method": "tools/call",
            "params": {
                "name": "multiply",
                "arguments": { "a": 2, "b": 3 },
                "_meta": { "traceparent": traceparent(meta_trace, meta_parent) },
            },
        }),
        &[("traceparent", &header)],
    );
    assert_eq!(response.status, 200, "{}", response.text());

    let spans = trace_with(
        &receiver,
        TRACE_ID,
        "tools/call add",
        &["corral.plugin.call", "corral.plugin.run"],
    );
    let request = find(&spans, "tools/call add");
    assert_continues(request, TRACE_ID, PARENT_ID, &spans);
    assert_eq!(
        attr_str(request, "network.transport").as_deref(),
        Some("tcp")
    );
    assert_eq!(attr_str(request, "mcp.session.id"), Some(session));
    assert_eq!(
        attr_str(request, "jsonrpc.request.id"),
        Some(id.to_string())
    );
    child(&spans, request, "corral.plugin.call");
    assert!(
        !has(&spans, "tools/call multiply"),
        "the _meta trace is its own:\n{}",
        describe_all(&spans)
    );

    let spans = trace_with(&receiver, meta_trace, "tools/call multiply", &[]);
    assert_continues(
        find(&spans, "tools/call multiply"),
        meta_trace,
        meta_parent,
        &spans,
    );

    for resource in receiver.resources() {
        assert_eq!(
            resource_str(&resource, "service.name").as_deref(),
            Some("corral-under-test")
        );
    }
    for headers in receiver.headers() {
        assert!(
            headers.contains(&("x-otlp-token".into(), "to ken".into())),
            "{headers:?}"
        );
    }
}

#[test]
fn a_receiver_that_is_down_costs_the_calls_nothing() {
    // A port nobody listens on: every export is refused at once.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let folder = calc_folder();
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut server = Server::start_with(folder.path(), &["--otlp-endpoint", &endpoint]);
    server.initialize("2025-11-25");
    // The first call instantiates the plugin's compiled code: not timed.
    server.call("add", json!({ "a": 0, "b": 0 }));

    let calls = 200;
    let started = Instant::now();
    for i in 0..calls {
        let id = server.send_request(
            "tools/call",
            json!({
                "name": "add",
                "arguments": { "a": i, "b": 1 },
                "_meta": { "traceparent": traceparent(TRACE_ID, PARENT_ID) },
            }),
        );
        let response = server.response_within(&id, Duration::from_secs(5));
        assert_eq!(response["result"]["isError"], false, "{response}");
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(20),
        "{calls} calls took {elapsed:?}"
    );

    // The failure is told once, not once per export.
    let warning = "exporting traces to";
    server.stderr_containing(warning);
    for i in 0..20 {
        server.call("add", json!({ "a": i, "b": 1 }));
    }
    std::thread::sleep(Duration::from_millis(2500));
    server.call("add", json!({ "a": 1, "b": 1 }));
    let stderr = server.stderr();
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_call_that_becomes_a_task_stays_in_the_clients_trace() {
    // A task runs its call in a task of its own, after the request is
    // answered: the call's spans must still belong to the request's.
    let receiver = OtlpReceiver::start();
    let folder = calc_folder();
    std::fs::write(
        folder.path().join("calc.toml"),
        "[limits]\ntask-after = \"0 s\"\n",
    )
    .unwrap();
    let endpoint = receiver.endpoint();
    let mut server = Server::start_with(folder.path(), &["--otlp-endpoint", &endpoint]);
    let trace_id = "0af7651916cd43dd8448eb211c80319c";
    let parent_id = "b7ad6b7169203331";
    let created = server.modern_result(
        "tools/call",
        json!({
            "name": "add",
            "arguments": { "a": 1, "b": 2 },
            "_meta": {
                "io.modelcontextprotocol/clientCapabilities": {
                    "extensions": { "io.modelcontextprotocol/tasks": {} }
                },
                "traceparent": traceparent(trace_id, parent_id),
            },
        }),
    );
    assert_eq!(created["resultType"], "task", "{created}");
    let spans = trace_with(
        &receiver,
        trace_id,
        "tools/call add",
        &["corral.plugin.call", "corral.plugin.run"],
    );
    let request = find(&spans, "tools/call add");
    assert_continues(request, trace_id, parent_id, &spans);
    let call = find(&spans, "corral.plugin.call");
    assert_eq!(
        call.parent_span_id,
        request.span_id,
        "the task's call is the request's child:\n{}",
        describe_all(&spans)
    );
    assert_eq!(attr_str(call, "corral.outcome").as_deref(), Some("ok"));
}
