//! Traces over OTLP/HTTP: a `tracing_subscriber` layer that turns the
//! spans of target [`TARGET`] into OpenTelemetry spans and exports them
//! (protobuf, `POST /v1/traces`) to the receiver `--otlp-endpoint` or the
//! standard `OTEL_*` variables name ([`OtlpConfig`]).
//!
//! The layers below (`corral-mcp`, `corral-sandbox`) only open ordinary
//! `tracing` spans with that target; this module gives them ids, parents,
//! times and attributes (`record`), keeps each open span's record in the
//! registry's span extensions, and hands it, once closed, to the
//! exporter's bounded queue (`export`), which a thread of its own sends.
//! A span's parent is the nearest enclosing span of the target; a root
//! span continues the trace of the `traceparent` field it carries
//! (`context`), else starts one. Spans of a trace whose remote parent is
//! not sampled (flags `00`) are not exported, as OpenTelemetry SDKs'
//! default parent-based sampler does.
//!
//! Install it behind a per-layer filter for the target, so that no other
//! span costs it anything and it costs the other layers nothing:
//! `registry().with(fmt.with_filter(env_filter)).with(layer.with_filter(
//! Targets::new().with_target(TARGET, Level::TRACE)))`. The env filter of
//! the fmt layer should then turn the target off (`corral_otel=off`): an
//! env filter's directive for `corral` also matches `corral_otel`, and the
//! fmt layer would print every exported span's fields as the context of
//! each log line.

mod config;
mod context;
mod export;
pub mod proto;
mod record;

use std::borrow::Cow;

use tracing::Subscriber;
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

pub use config::OtlpConfig;
pub use export::OtlpGuard;

use export::Queue;
use proto::{SpanKind, StatusCode};
use record::{Fields, SpanRecord, now_unix_nano};

/// The tracing target of the spans exported over OTLP.
pub const TARGET: &str = "corral_otel";

/// The exporter for `config`: the layer that records the spans, and the
/// guard that sends what is still queued when it is dropped (keep it until
/// the process ends). Starts the exporter's thread.
pub fn layer(config: OtlpConfig) -> (OtlpLayer, OtlpGuard) {
    let (queue, guard) = export::start(config);
    (OtlpLayer { queue }, guard)
}

/// The `tracing_subscriber` layer that records the spans of [`TARGET`] and
/// queues each, once closed, for export. Spans of other targets are
/// ignored (it may be installed without a filter, though it should not:
/// see the module's docs).
pub struct OtlpLayer {
    queue: Queue,
}

impl<S> Layer<S> for OtlpLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let metadata = attrs.metadata();
        if metadata.target() != TARGET {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let mut record = SpanRecord {
            trace_id: [0; 16],
            span_id: context::new_span_id(),
            parent_span_id: None,
            remote_parent: false,
            trace_state: String::new(),
            trace_flags: 0x01,
            adoptable: false,
            name: Cow::Borrowed(metadata.name()),
            kind: SpanKind::Internal,
            start_unix_nano: now_unix_nano(),
            end_unix_nano: 0,
            attributes: Vec::new(),
            dropped_attributes: 0,
            status: StatusCode::Unset,
            status_message: String::new(),
        };
        // The nearest enclosing span that has a record: the parent.
        let local_parent = span.scope().skip(1).find_map(|ancestor| {
            let mut extensions = ancestor.extensions_mut();
            let parent = extensions.get_mut::<SpanRecord>()?;
            parent.adoptable = false;
            Some((
                parent.trace_id,
                parent.span_id,
                parent.trace_flags,
                parent.trace_state.clone(),
            ))
        });
        match (local_parent, fields.remote()) {
            (Some((trace_id, span_id, flags, trace_state)), _) => {
                record.trace_id = trace_id;
                record.parent_span_id = Some(span_id);
                record.trace_flags = flags;
                record.trace_state = trace_state;
            }
            (None, Some((parent, trace_state))) => record.adopt(parent, trace_state),
            (None, None) => {
                record.trace_id = context::new_trace_id();
                record.adoptable = true;
            }
        }
        record.apply(fields);
        span.extensions_mut().insert(record);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        let Some(record) = extensions.get_mut::<SpanRecord>() else {
            return;
        };
        let mut fields = Fields::default();
        values.record(&mut fields);
        // A root span may learn its remote parent after it started, as
        // long as no child took its trace id yet.
        if record.adoptable
            && let Some((parent, trace_state)) = fields.remote()
        {
            record.adopt(parent, trace_state);
        }
        record.apply(fields);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(mut record) = span.extensions_mut().remove::<SpanRecord>() else {
            return;
        };
        if !record.sampled() {
            return;
        }
        record.end_unix_nano = now_unix_nano();
        self.queue.push(Box::new(record));
    }
}

#[cfg(test)]
mod tests {
    //! The layer in a real registry, its spans received from the queue or
    //! over HTTP by a receiver in the test, decoded with the official
    //! definitions.

    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::mpsc::{Receiver, channel};
    use std::time::{Duration, Instant};

    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
    use opentelemetry_proto::tonic::trace::v1::Span as OfficialSpan;
    use prost::Message as _;
    use tracing::Level;
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;

    use super::export::Message;
    use super::*;

    /// A layer whose queue the test reads.
    fn test_layer() -> (OtlpLayer, Receiver<Message>) {
        let (queue, receiver) = Queue::bounded(1024);
        (OtlpLayer { queue }, receiver)
    }

    /// The spans closed so far, in the order they closed.
    fn closed(receiver: &Receiver<Message>) -> Vec<SpanRecord> {
        receiver
            .try_iter()
            .filter_map(|message| match message {
                Message::Span(span) => Some(*span),
                Message::Flush(..) => None,
            })
            .collect()
    }

    fn by_name<'a>(spans: &'a [SpanRecord], name: &str) -> &'a SpanRecord {
        spans
            .iter()
            .find(|span| span.name == name)
            .unwrap_or_else(|| panic!("no span {name} in {spans:#?}"))
    }

    fn attribute<'a>(span: &'a SpanRecord, key: &str) -> Option<&'a record::AttributeValue> {
        span.attributes
            .iter()
            .find(|(known, _)| *known == key)
            .map(|(_, value)| value)
    }

    /// The composition `telemetry` installs: the fmt layer behind its env
    /// filter, this one behind a filter for its target.
    fn run_installed(work: impl FnOnce()) -> Vec<SpanRecord> {
        let (layer, receiver) = test_layer();
        let subscriber = tracing_subscriber::registry()
            .with(layer.with_filter(Targets::new().with_target(TARGET, Level::TRACE)));
        tracing::subscriber::with_default(subscriber, work);
        closed(&receiver)
    }

    #[test]
    fn children_share_the_trace_and_name_their_parent() {
        let spans = run_installed(|| {
            let request = tracing::info_span!(
                target: TARGET,
                "request",
                otel.name = "tools/call add",
                otel.kind = "server",
                mcp.method.name = "tools/call",
            );
            let _request = request.enter();
            // A span of another target in between is not a parent.
            let between = tracing::info_span!("not_exported");
            let _between = between.enter();
            let call =
                tracing::info_span!(target: TARGET, "corral.plugin.call", corral.fuel = 5u64);
            call.in_scope(|| {
                tracing::info_span!(target: TARGET, "corral.plugin.instantiate").in_scope(|| {});
                tracing::info_span!(target: TARGET, "corral.plugin.run").in_scope(|| {});
            });
        });
        let names: Vec<&str> = spans.iter().map(|span| span.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "corral.plugin.instantiate",
                "corral.plugin.run",
                "corral.plugin.call",
                "tools/call add"
            ]
        );
        let request = by_name(&spans, "tools/call add");
        let call = by_name(&spans, "corral.plugin.call");
        assert_eq!(request.kind, SpanKind::Server);
        assert_eq!(request.parent_span_id, None);
        assert!(!request.remote_parent);
        assert_eq!(
            attribute(request, "mcp.method.name"),
            Some(&record::AttributeValue::Str("tools/call".into()))
        );
        assert_eq!(call.kind, SpanKind::Internal);
        assert_eq!(call.parent_span_id, Some(request.span_id));
        assert_eq!(
            attribute(call, "corral.fuel"),
            Some(&record::AttributeValue::Int(5))
        );
        for child in ["corral.plugin.instantiate", "corral.plugin.run"] {
            assert_eq!(by_name(&spans, child).parent_span_id, Some(call.span_id));
        }
        for span in &spans {
            assert_eq!(span.trace_id, request.trace_id);
            assert!(span.start_unix_nano <= span.end_unix_nano);
        }
        let ids: std::collections::HashSet<[u8; 8]> =
            spans.iter().map(|span| span.span_id).collect();
        assert_eq!(ids.len(), 4);
    }

    #[test]
    fn a_root_span_continues_a_valid_traceparent_only() {
        let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let spans = run_installed(|| {
            tracing::info_span!(
                target: TARGET,
                "remote",
                traceparent,
                tracestate = "congo=t61rcWkgMzE"
            )
            .in_scope(|| {
                tracing::info_span!(target: TARGET, "child").in_scope(|| {});
            });
            tracing::info_span!(
                target: TARGET,
                "zeros",
                traceparent = "00-00000000000000000000000000000000-b7ad6b7169203331-01"
            )
            .in_scope(|| {});
            tracing::info_span!(target: TARGET, "garbage", traceparent = "nope").in_scope(|| {});
        });
        let remote = by_name(&spans, "remote");
        let child = by_name(&spans, "child");
        let trace_id = [
            0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80,
            0x31, 0x9c,
        ];
        assert_eq!(remote.trace_id, trace_id);
        assert_eq!(
            remote.parent_span_id,
            Some([0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31])
        );
        assert!(remote.remote_parent);
        assert_eq!(remote.trace_state, "congo=t61rcWkgMzE");
        // The context fields are never attributes.
        assert!(remote.attributes.is_empty(), "{remote:?}");
        assert_eq!(child.trace_id, trace_id);
        assert_eq!(child.parent_span_id, Some(remote.span_id));
        assert!(!child.remote_parent);
        assert_eq!(child.trace_state, "congo=t61rcWkgMzE");
        for invalid in ["zeros", "garbage"] {
            let span = by_name(&spans, invalid);
            assert_eq!(span.parent_span_id, None, "{invalid}");
            assert_ne!(span.trace_id, trace_id);
            assert_ne!(span.trace_id, [0; 16]);
        }
        assert_ne!(
            by_name(&spans, "zeros").trace_id,
            by_name(&spans, "garbage").trace_id
        );
    }

    #[test]
    fn a_traceparent_recorded_later_counts_until_a_child_starts() {
        let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let spans = run_installed(|| {
            let early = tracing::info_span!(
                target: TARGET,
                "early",
                traceparent = tracing::field::Empty
            );
            early.record("traceparent", traceparent);
            early.in_scope(|| {});
            let late = tracing::info_span!(
                target: TARGET,
                "late",
                traceparent = tracing::field::Empty
            );
            late.in_scope(|| tracing::info_span!(target: TARGET, "child").in_scope(|| {}));
            late.record("traceparent", traceparent);
        });
        assert_eq!(
            by_name(&spans, "early").parent_span_id,
            Some([0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31])
        );
        let late = by_name(&spans, "late");
        assert_eq!(late.parent_span_id, None);
        assert_eq!(by_name(&spans, "child").trace_id, late.trace_id);
    }

    #[test]
    fn an_unsampled_remote_parent_exports_nothing() {
        let spans = run_installed(|| {
            tracing::info_span!(
                target: TARGET,
                "unsampled",
                traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
            )
            .in_scope(|| tracing::info_span!(target: TARGET, "child").in_scope(|| {}));
        });
        assert!(spans.is_empty(), "{spans:?}");
    }

    #[test]
    fn fields_recorded_later_are_kept_and_empty_ones_left_out() {
        let spans = run_installed(|| {
            let span = tracing::info_span!(
                target: TARGET,
                "request",
                otel.name = "tools/call",
                otel.status_code = tracing::field::Empty,
                error.type = tracing::field::Empty,
                never = tracing::field::Empty,
                jsonrpc.request.id = "1",
            );
            span.record("otel.name", "tools/call add");
            span.record("otel.status_code", "error");
            span.record("otel.status_message", "no such tool");
            span.record("error.type", "tool_error");
            span.record("jsonrpc.request.id", "2");
        });
        let span = &spans[0];
        assert_eq!(span.name, "tools/call add");
        assert_eq!(span.status, StatusCode::Error);
        assert_eq!(
            span.attributes,
            [
                (
                    "jsonrpc.request.id",
                    record::AttributeValue::Str("2".into())
                ),
                (
                    "error.type",
                    record::AttributeValue::Str("tool_error".into())
                ),
            ]
        );
    }

    #[test]
    fn other_targets_are_ignored_even_without_a_filter() {
        let (layer, receiver) = test_layer();
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::info_span!("elsewhere").in_scope(|| {
                tracing::info_span!(target: TARGET, "exported").in_scope(|| {});
            });
        });
        let spans = closed(&receiver);
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].parent_span_id, None);
    }

    /// A shared buffer for a fmt layer's output.
    #[derive(Clone, Default)]
    struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_fmt_layer_beside_it_logs_as_before() {
        let (layer, receiver) = test_layer();
        let logs = Buffer::default();
        let writer = logs.clone();
        let fmt = tracing_subscriber::fmt::layer()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .without_time()
            .with_target(false);
        let env_filter = tracing_subscriber::EnvFilter::new("warn,corral=info")
            .add_directive(format!("{TARGET}=off").parse().unwrap());
        let subscriber = tracing_subscriber::registry()
            .with(fmt.with_filter(env_filter))
            .with(layer.with_filter(Targets::new().with_target(TARGET, Level::TRACE)));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info_span!(target: TARGET, "request", mcp.method.name = "tools/call")
                .in_scope(|| {
                    tracing::info!(target: "corral", "a log line");
                    tracing::debug!(target: "corral", "filtered out");
                });
        });
        let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text, " INFO a log line\n");
        assert_eq!(closed(&receiver).len(), 1);
    }

    /// What the test's receiver passes on: each request's headers and body.
    type Exports = Receiver<(Vec<(String, String)>, ExportTraceServiceRequest)>;

    /// An OTLP/HTTP receiver on loopback that answers every request 200 and
    /// passes on each request's headers and decoded body.
    fn receiver() -> (String, Exports) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (sender, received) = channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let sender = sender.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut writer = stream;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        assert_eq!(line.trim_end(), "POST /v1/traces HTTP/1.1");
                        let mut headers = Vec::new();
                        loop {
                            let mut header = String::new();
                            reader.read_line(&mut header).unwrap();
                            let header = header.trim_end();
                            if header.is_empty() {
                                break;
                            }
                            let (name, value) = header.split_once(':').unwrap();
                            headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
                        }
                        let length: usize = headers
                            .iter()
                            .find(|(name, _)| name == "content-length")
                            .unwrap()
                            .1
                            .parse()
                            .unwrap();
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
                        writer
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n")
                            .unwrap();
                        if sender.send((headers, request)).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (base, received)
    }

    fn string(span: &OfficialSpan, key: &str) -> Option<String> {
        span.attributes.iter().find(|a| a.key == key).and_then(|a| {
            match a.value.as_ref()?.value.as_ref()? {
                AnyValue::StringValue(text) => Some(text.clone()),
                _ => None,
            }
        })
    }

    fn int(span: &OfficialSpan, key: &str) -> Option<i64> {
        span.attributes.iter().find(|a| a.key == key).and_then(|a| {
            match a.value.as_ref()?.value.as_ref()? {
                AnyValue::IntValue(number) => Some(*number),
                _ => None,
            }
        })
    }

    #[test]
    fn spans_reach_a_receiver_over_http_in_one_batch_with_the_resource() {
        let (base, received) = receiver();
        let config = OtlpConfig {
            endpoint: format!("{base}/v1/traces"),
            headers: vec![("x-api-key".into(), "k1".into())],
            service_name: "under-test".into(),
        };
        let (layer, guard) = layer(config);
        let subscriber = tracing_subscriber::registry()
            .with(layer.with_filter(Targets::new().with_target(TARGET, Level::TRACE)));
        let started = Instant::now();
        tracing::subscriber::with_default(subscriber, || {
            tracing::info_span!(target: TARGET, "parent", otel.kind = "server").in_scope(|| {
                for _ in 0..3 {
                    tracing::info_span!(target: TARGET, "child", n = 1).in_scope(|| {});
                }
            });
        });
        // Sent within the batch period, without the guard's help.
        let (headers, request) = received.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        let header = |name: &str| {
            headers
                .iter()
                .find(|(known, _)| known == name)
                .map(|(_, value)| value.as_str())
        };
        assert_eq!(header("content-type"), Some("application/x-protobuf"));
        assert_eq!(header("x-api-key"), Some("k1"));
        assert_eq!(request.resource_spans.len(), 1);
        let resource = request.resource_spans[0].resource.as_ref().unwrap();
        let resource: Vec<(String, String)> = resource
            .attributes
            .iter()
            .map(
                |a| match a.value.as_ref().unwrap().value.as_ref().unwrap() {
                    AnyValue::StringValue(text) => (a.key.clone(), text.clone()),
                    other => panic!("{other:?}"),
                },
            )
            .collect();
        for expected in [
            ("service.name", "under-test"),
            ("service.version", env!("CARGO_PKG_VERSION")),
            ("telemetry.sdk.name", "corral"),
            ("telemetry.sdk.language", "rust"),
        ] {
            assert!(
                resource.contains(&(expected.0.into(), expected.1.into())),
                "{expected:?} not in {resource:?}"
            );
        }
        let scope_spans = &request.resource_spans[0].scope_spans[0];
        assert_eq!(scope_spans.scope.as_ref().unwrap().name, "corral");
        let spans = &scope_spans.spans;
        assert_eq!(spans.len(), 4);
        let parent = spans.iter().find(|span| span.name == "parent").unwrap();
        assert_eq!(parent.kind, 2);
        assert_eq!(parent.trace_id.len(), 16);
        assert_eq!(parent.span_id.len(), 8);
        assert!(parent.parent_span_id.is_empty());
        for child in spans.iter().filter(|span| span.name == "child") {
            assert_eq!(child.trace_id, parent.trace_id);
            assert_eq!(child.parent_span_id, parent.span_id);
            assert_eq!(child.kind, 1);
            assert!(child.start_time_unix_nano >= parent.start_time_unix_nano);
            assert!(child.end_time_unix_nano <= parent.end_time_unix_nano);
            assert_eq!(int(child, "n"), Some(1));
        }
        drop(guard);
    }

    #[test]
    fn the_guard_sends_what_is_queued_at_exit() {
        let (base, received) = receiver();
        let (layer, guard) = layer(OtlpConfig {
            endpoint: format!("{base}/v1/traces"),
            headers: Vec::new(),
            service_name: "corral".into(),
        });
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::info_span!(target: TARGET, "last", outcome = "ok").in_scope(|| {});
        });
        drop(guard);
        // Sent by the time the guard is gone, whatever the batch period.
        let (_, request) = received
            .try_recv()
            .expect("the guard sent the span before it returned");
        let span = &request.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(span.name, "last");
        assert_eq!(string(span, "outcome").as_deref(), Some("ok"));
    }

    #[test]
    fn a_receiver_that_is_down_costs_the_spans_nothing_and_the_guard_at_most_its_bound() {
        // A port nobody listens on.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let (layer, guard) = layer(OtlpConfig {
            endpoint: format!("http://127.0.0.1:{port}/v1/traces"),
            headers: Vec::new(),
            service_name: "corral".into(),
        });
        let subscriber = tracing_subscriber::registry().with(layer);
        let started = Instant::now();
        tracing::subscriber::with_default(subscriber, || {
            for _ in 0..(export::QUEUE_SPANS * 2) {
                tracing::info_span!(target: TARGET, "lost").in_scope(|| {});
            }
        });
        assert!(started.elapsed() < Duration::from_secs(2));
        let started = Instant::now();
        drop(guard);
        assert!(started.elapsed() < export::FLUSH_TIMEOUT + Duration::from_millis(500));
    }
}
