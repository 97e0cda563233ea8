//! A real OTLP/HTTP trace receiver for the end-to-end suites: it listens on
//! a free loopback port, takes `POST /v1/traces` (protobuf) over HTTP/1.1
//! with keep-alive, decodes each body with the official
//! `opentelemetry-proto` definitions, answers `200` with an empty
//! `ExportTraceServiceResponse`, and keeps the spans for the test to read.
//! Every span received is also written to the test's capture (see
//! [`crate::support::capture`]): spans are what Corral sends, and must no
//! more hold a secret than its answers.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::resource::v1::Resource;
pub use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;

use crate::support::capture;

/// The largest request body the receiver takes (a batch of 512 spans is
/// far smaller).
const MAX_BODY: usize = 64 << 20;

/// What the receiver got so far.
#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    resources: Vec<Resource>,
    /// Each request's headers, names in lower case.
    headers: Vec<Vec<(String, String)>>,
    /// Requests that were not a well-formed `POST /v1/traces`.
    refused: Vec<String>,
}

/// A running receiver; stops listening when dropped.
pub struct OtlpReceiver {
    addr: SocketAddr,
    received: Arc<Mutex<Received>>,
    stopped: Arc<AtomicBool>,
}

impl OtlpReceiver {
    /// A receiver on a free loopback port, already accepting connections.
    pub fn start() -> OtlpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Received::default()));
        let stopped = Arc::new(AtomicBool::new(false));
        let (kept, stop) = (received.clone(), stopped.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let kept = kept.clone();
                std::thread::spawn(move || serve(stream, &kept));
            }
        });
        OtlpReceiver {
            addr,
            received,
            stopped,
        }
    }

    /// The base URL to give `--otlp-endpoint` (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every span received so far, in the order they arrived.
    pub fn spans(&self) -> Vec<Span> {
        self.received.lock().unwrap().spans.clone()
    }

    /// The resource of every export request received so far.
    pub fn resources(&self) -> Vec<Resource> {
        self.received.lock().unwrap().resources.clone()
    }

    /// The headers of every export request received so far.
    pub fn headers(&self) -> Vec<Vec<(String, String)>> {
        self.received.lock().unwrap().headers.clone()
    }

    /// Requests refused (not a `POST /v1/traces` of protobuf): none, in a
    /// passing test.
    pub fn refused(&self) -> Vec<String> {
        self.received.lock().unwrap().refused.clone()
    }

    /// The spans received, once `done` holds for them; fails after
    /// `timeout` with what arrived.
    pub fn wait_for(&self, done: impl Fn(&[Span]) -> bool, timeout: Duration) -> Vec<Span> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            if Instant::now() > deadline {
                panic!(
                    "the receiver's spans never matched within {timeout:?}; received:\n{}\nrefused: {:?}",
                    describe_all(&spans),
                    self.refused()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which sees it stopped.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

/// Serves one connection: requests until the client closes it.
fn serve(stream: TcpStream, received: &Mutex<Received>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(err) => {
                received.lock().unwrap().refused.push(err.clone());
                let _ = respond(&mut writer, 400, "text/plain", err.as_bytes(), true);
                return;
            }
        };
        let (status, body) = take(&request, received);
        let close = request.header("connection") == Some("close");
        let kind = if status == 200 {
            "application/x-protobuf"
        } else {
            "text/plain"
        };
        if respond(&mut writer, status, kind, &body, close).is_err() || close {
            return;
        }
    }
}

/// One HTTP request.
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(known, _)| known == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The next request of a connection, `None` when the client closed it.
fn read_request(reader: &mut BufReader<TcpStream>) -> Result<Option<Request>, String> {
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) | Err(_) => return Ok(None),
        Ok(_) => {}
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("a malformed request line: {line:?}"));
    };
    if version != "HTTP/1.1" {
        return Err(format!("not HTTP/1.1: {line:?}"));
    }
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader
            .read_line(&mut header)
            .map_err(|err| format!("reading headers: {err}"))?;
        let header = header.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let (name, value) = header
            .split_once(':')
            .ok_or_else(|| format!("a malformed header: {header:?}"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(known, _)| known == name)
            .map(|(_, value)| value.clone())
    };
    let body = if header("transfer-encoding").is_some_and(|coding| coding.contains("chunked")) {
        read_chunked(reader)?
    } else {
        let length: usize = header("content-length")
            .map(|length| {
                length
                    .parse()
                    .map_err(|_| format!("Content-Length {length:?}"))
            })
            .transpose()?
            .unwrap_or(0);
        if length > MAX_BODY {
            return Err(format!("a body of {length} bytes"));
        }
        let mut body = vec![0; length];
        reader
            .read_exact(&mut body)
            .map_err(|err| format!("reading the body: {err}"))?;
        body
    };
    Ok(Some(Request {
        method: method.to_owned(),
        path: path.to_owned(),
        headers,
        body,
    }))
}

/// A chunked body, trailers skipped.
fn read_chunked(reader: &mut BufReader<TcpStream>) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader
            .read_line(&mut size)
            .map_err(|err| format!("reading a chunk: {err}"))?;
        let size = size.trim_end().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size, 16).map_err(|_| format!("a chunk size {size:?}"))?;
        if size == 0 {
            loop {
                let mut trailer = String::new();
                reader
                    .read_line(&mut trailer)
                    .map_err(|err| format!("reading trailers: {err}"))?;
                if trailer.trim_end().is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err("a body over the limit".into());
        }
        let start = body.len();
        body.resize(start + size + 2, 0);
        reader
            .read_exact(&mut body[start..])
            .map_err(|err| format!("reading a chunk: {err}"))?;
        body.truncate(start + size);
    }
}

/// Keeps the spans of an export request: the status and body to answer.
fn take(request: &Request, received: &Mutex<Received>) -> (u16, Vec<u8>) {
    let refuse = |why: String| {
        received.lock().unwrap().refused.push(why.clone());
        (400, why.into_bytes())
    };
    if request.method != "POST" || request.path != "/v1/traces" {
        return refuse(format!("{} {}", request.method, request.path));
    }
    if request.header("content-type") != Some("application/x-protobuf") {
        return refuse(format!("Content-Type {:?}", request.header("content-type")));
    }
    let export = match ExportTraceServiceRequest::decode(request.body.as_slice()) {
        Ok(export) => export,
        Err(err) => return refuse(format!("not an ExportTraceServiceRequest: {err}")),
    };
    let mut received = received.lock().unwrap();
    received.headers.push(request.headers.clone());
    for resource_spans in export.resource_spans {
        if let Some(resource) = resource_spans.resource {
            received.resources.push(resource);
        }
        for scope_spans in resource_spans.scope_spans {
            for span in scope_spans.spans {
                capture(&format!("otlp span: {}", describe(&span)));
                received.spans.push(span);
            }
        }
    }
    (200, ExportTraceServiceResponse::default().encode_to_vec())
}

fn respond(
    writer: &mut TcpStream,
    status: u16,
    kind: &str,
    body: &[u8],
    close: bool,
) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Bad Request" };
    let connection = if close { "close" } else { "keep-alive" };
    let mut response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: {connection}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(body);
    writer.write_all(&response)?;
    writer.flush()
}

// ---- reading spans -----------------------------------------------------------

/// `bytes` in lower-case hex, as a `traceparent` writes ids.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The span named `name`, failing with every span when there is none or
/// more than one.
pub fn find<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let mut found = spans.iter().filter(|span| span.name == name);
    match (found.next(), found.next()) {
        (Some(span), None) => span,
        (None, _) => panic!("no span {name:?} among:\n{}", describe_all(spans)),
        (Some(_), Some(_)) => panic!(
            "more than one span {name:?} among:\n{}",
            describe_all(spans)
        ),
    }
}

/// Every span named `name`.
pub fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|span| span.name == name).collect()
}

/// Whether a span named `name` was received.
pub fn has(spans: &[Span], name: &str) -> bool {
    spans.iter().any(|span| span.name == name)
}

/// The spans whose parent is `parent`, in the order they arrived.
pub fn children<'a>(spans: &'a [Span], parent: &Span) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|span| span.trace_id == parent.trace_id && span.parent_span_id == parent.span_id)
        .collect()
}

/// The child of `parent` named `name`, failing when it has none or more
/// than one.
pub fn child<'a>(spans: &'a [Span], parent: &Span, name: &str) -> &'a Span {
    let found: Vec<&Span> = children(spans, parent)
        .into_iter()
        .filter(|span| span.name == name)
        .collect();
    match found.as_slice() {
        [span] => span,
        _ => panic!(
            "{} children {name:?} of {:?} among:\n{}",
            found.len(),
            parent.name,
            describe_all(spans)
        ),
    }
}

/// The names of `parent`'s children, sorted.
pub fn child_names(spans: &[Span], parent: &Span) -> Vec<String> {
    let mut names: Vec<String> = children(spans, parent)
        .iter()
        .map(|span| span.name.clone())
        .collect();
    names.sort();
    names
}

fn value<'a>(span: &'a Span, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|attribute| attribute.key == key)
        .and_then(|attribute| attribute.value.as_ref()?.value.as_ref())
}

/// The string attribute `key` of `span`.
pub fn attr_str(span: &Span, key: &str) -> Option<String> {
    match value(span, key)? {
        Value::StringValue(text) => Some(text.clone()),
        _ => None,
    }
}

/// The integer attribute `key` of `span`.
pub fn attr_int(span: &Span, key: &str) -> Option<i64> {
    match value(span, key)? {
        Value::IntValue(number) => Some(*number),
        _ => None,
    }
}

/// The attribute `key` of `span` as text, whatever its type.
pub fn attr_text(span: &Span, key: &str) -> Option<String> {
    Some(match value(span, key)? {
        Value::StringValue(text) => text.clone(),
        Value::IntValue(number) => number.to_string(),
        Value::DoubleValue(number) => number.to_string(),
        Value::BoolValue(flag) => flag.to_string(),
        other => format!("{other:?}"),
    })
}

/// The string attribute `key` of a resource.
pub fn resource_str(resource: &Resource, key: &str) -> Option<String> {
    resource
        .attributes
        .iter()
        .find(|attribute| attribute.key == key)
        .and_then(
            |attribute| match attribute.value.as_ref()?.value.as_ref()? {
                Value::StringValue(text) => Some(text.clone()),
                _ => None,
            },
        )
}

/// The span's kind.
pub fn kind(span: &Span) -> SpanKind {
    SpanKind::try_from(span.kind).unwrap_or(SpanKind::Unspecified)
}

/// One line: name, kind, ids and attributes.
pub fn describe(span: &Span) -> String {
    let attributes: Vec<String> = span
        .attributes
        .iter()
        .map(|attribute| {
            format!(
                "{}={}",
                attribute.key,
                attr_text(span, &attribute.key).unwrap_or_default()
            )
        })
        .collect();
    format!(
        "{:?} kind={:?} trace={} span={} parent={} status={:?} [{}]",
        span.name,
        kind(span),
        hex(&span.trace_id),
        hex(&span.span_id),
        hex(&span.parent_span_id),
        span.status
            .as_ref()
            .map(|status| (status.code, &status.message)),
        attributes.join(", ")
    )
}

/// Every span, one a line.
pub fn describe_all(spans: &[Span]) -> String {
    spans.iter().map(describe).collect::<Vec<_>>().join("\n")
}
