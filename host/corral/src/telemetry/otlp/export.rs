//! The exporter: a bounded queue of finished spans, emptied by a thread of
//! its own that sends them in batches (up to [`BATCH_SPANS`], or whatever
//! arrived within [`BATCH_EVERY`]) as OTLP/HTTP protobuf. A call only ever
//! `try_send`s its spans: when the queue is full (the receiver is slow or
//! down) a span is dropped and counted, never waited for.
//!
//! Counters: `corral_trace_spans_exported_total` (spans the receiver took),
//! `corral_trace_spans_dropped_total` (spans dropped for a full queue),
//! `corral_trace_export_failures_total` (export requests that failed: the
//! receiver unreachable, too slow, or answering other than 2xx; their spans
//! are lost). A failure is logged at most once a minute.

use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::time::{Duration, Instant};

use prost::Message as _;

use super::config::OtlpConfig;
use super::proto::{
    ExportTraceServiceRequest, InstrumentationScope, KeyValue, Resource, ResourceSpans, ScopeSpans,
    Value,
};
use super::record::SpanRecord;

/// How many finished spans wait for export at most.
pub const QUEUE_SPANS: usize = 4096;
/// The most spans one export request carries.
pub const BATCH_SPANS: usize = 512;
/// How long a span waits for its batch to fill before the batch is sent.
pub const BATCH_EVERY: Duration = Duration::from_secs(1);
/// How often the exporter's thread looks at the queue.
const LOOK_EVERY: Duration = Duration::from_millis(100);
/// How long one export request may take.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the [`OtlpGuard`] waits for the queue to be sent at exit.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);
/// The least time between two warnings of failed exports.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// What the queue carries to the exporter's thread.
pub enum Message {
    /// A finished span.
    Span(Box<SpanRecord>),
    /// Send everything queued before `deadline`, then say so on the channel.
    Flush(Instant, mpsc::Sender<()>),
}

/// The producers' end of the queue: the layer's.
#[derive(Clone)]
pub struct Queue {
    sender: SyncSender<Message>,
}

impl Queue {
    /// A queue of `capacity` spans, and its consumers' end.
    pub fn bounded(capacity: usize) -> (Queue, Receiver<Message>) {
        let (sender, receiver) = mpsc::sync_channel(capacity);
        (Queue { sender }, receiver)
    }

    /// Queues `span` without waiting: a full queue drops it and counts it.
    pub fn push(&self, span: Box<SpanRecord>) {
        match self.sender.try_send(Message::Span(span)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                metrics::counter!("corral_trace_spans_dropped_total").increment(1);
            }
            // The exporter's thread is gone (it could not start): nothing
            // is exported, and that was warned about once.
            Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

/// Sends what is queued when dropped (at the end of the process), for at
/// most [`FLUSH_TIMEOUT`]: the spans of the last calls are not lost, and a
/// receiver that is down does not hold the exit up.
#[must_use = "dropping the guard flushes the spans queued so far"]
pub struct OtlpGuard {
    queue: Queue,
}

impl Drop for OtlpGuard {
    fn drop(&mut self) {
        let deadline = Instant::now() + FLUSH_TIMEOUT;
        let (done, finished) = mpsc::channel();
        let mut flush = Message::Flush(deadline, done);
        // The queue may be full: the thread is exporting, and will make
        // room soon.
        loop {
            match self.queue.sender.try_send(flush) {
                Ok(()) => break,
                Err(TrySendError::Full(again)) if Instant::now() < deadline => {
                    flush = again;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return,
            }
        }
        let _ = finished.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    }
}

/// Starts the exporter's thread for `config`: the layer's queue and the
/// guard that flushes it.
pub fn start(config: OtlpConfig) -> (Queue, OtlpGuard) {
    let (queue, receiver) = Queue::bounded(QUEUE_SPANS);
    let guard = OtlpGuard {
        queue: queue.clone(),
    };
    let spawned = std::thread::Builder::new()
        .name("corral-otlp".into())
        .spawn(move || Exporter::new(config).run(receiver));
    if let Err(err) = spawned {
        tracing::warn!("traces will not be exported: no thread for the exporter: {err}");
    }
    (queue, guard)
}

/// The exporter's thread: its HTTP client on a runtime of its own.
struct Exporter {
    endpoint: String,
    headers: reqwest::header::HeaderMap,
    /// `service.name` and the rest, the same in every request.
    resource: Resource,
    /// `None` when the client could not be built (warned about once).
    client: Option<(tokio::runtime::Runtime, reqwest::Client)>,
    last_warning: Option<Instant>,
    failures_unwarned: u64,
}

impl Exporter {
    fn new(config: OtlpConfig) -> Exporter {
        let client = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(anyhow::Error::from)
            .and_then(|runtime| {
                // reqwest's rustls needs a process-wide crypto provider;
                // ring is the one the rest of the build has (a second
                // install fails, harmlessly).
                let _ = rustls::crypto::ring::default_provider().install_default();
                let client = reqwest::Client::builder()
                    .user_agent(concat!("corral/", env!("CARGO_PKG_VERSION")))
                    .redirect(reqwest::redirect::Policy::none())
                    .connect_timeout(EXPORT_TIMEOUT)
                    .build()?;
                Ok((runtime, client))
            });
        let client = client
            .inspect_err(|err| {
                tracing::warn!("traces will not be exported: no HTTP client: {err:#}");
            })
            .ok();
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &config.headers {
            // Checked when the configuration was read.
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_str(value),
            ) {
                headers.append(name, value);
            }
        }
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            reqwest::header::HeaderValue::from_static("application/x-protobuf"),
        );
        Exporter {
            endpoint: config.endpoint.clone(),
            headers,
            resource: resource(&config),
            client,
            last_warning: None,
            failures_unwarned: 0,
        }
    }

    /// Batches and sends until every producer is gone. The thread sleeps
    /// between looks at the queue ([`LOOK_EVERY`]) rather than waiting on
    /// it: a receiver blocked on the channel would be woken by every span
    /// queued, a cross-thread wake-up on the path of every call (seven
    /// per `tools/call`), which cost more than the call itself.
    fn run(mut self, queue: Receiver<Message>) {
        let mut batch: Vec<SpanRecord> = Vec::with_capacity(BATCH_SPANS);
        // When the batch under way must be sent: [`BATCH_EVERY`] after its
        // first span arrived.
        let mut due: Option<Instant> = None;
        loop {
            std::thread::sleep(LOOK_EVERY);
            loop {
                match queue.try_recv() {
                    Ok(Message::Span(span)) => {
                        batch.push(*span);
                        due.get_or_insert_with(|| Instant::now() + BATCH_EVERY);
                        if batch.len() >= BATCH_SPANS {
                            self.export(std::mem::take(&mut batch), EXPORT_TIMEOUT);
                            due = None;
                        }
                    }
                    Ok(Message::Flush(deadline, done)) => {
                        self.flush(&queue, &mut batch, deadline);
                        due = None;
                        let _ = done.send(());
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        self.export(std::mem::take(&mut batch), EXPORT_TIMEOUT);
                        return;
                    }
                }
            }
            if due.is_some_and(|due| Instant::now() >= due) {
                self.export(std::mem::take(&mut batch), EXPORT_TIMEOUT);
                due = None;
            }
        }
    }

    /// Sends `batch` and everything queued now, in batches, until `deadline`.
    fn flush(&mut self, queue: &Receiver<Message>, batch: &mut Vec<SpanRecord>, deadline: Instant) {
        loop {
            while batch.len() < BATCH_SPANS {
                match queue.try_recv() {
                    Ok(Message::Span(span)) => batch.push(*span),
                    // Another flush: this one answers it too.
                    Ok(Message::Flush(_, done)) => {
                        let _ = done.send(());
                    }
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if batch.is_empty() || left.is_zero() {
                batch.clear();
                return;
            }
            self.export(std::mem::take(batch), left);
        }
    }

    /// One export request of `spans`, within `timeout`.
    fn export(&mut self, spans: Vec<SpanRecord>, timeout: Duration) {
        if spans.is_empty() {
            return;
        }
        let count = spans.len() as u64;
        let body = request(self.resource.clone(), spans).encode_to_vec();
        let Some((runtime, client)) = &self.client else {
            metrics::counter!("corral_trace_export_failures_total").increment(1);
            return;
        };
        let sent = runtime.block_on(async {
            let response = client
                .post(&self.endpoint)
                .headers(self.headers.clone())
                .timeout(timeout)
                .body(body)
                .send()
                .await
                .map_err(|err| describe(&err))?;
            let status = response.status();
            // Read to the end, so that the connection is kept for the next
            // batch (a partial success is still a success).
            let _ = response.bytes().await;
            if status.is_success() {
                Ok(())
            } else {
                Err(format!("answered {status}"))
            }
        });
        match sent {
            Ok(()) => {
                metrics::counter!("corral_trace_spans_exported_total").increment(count);
            }
            Err(reason) => {
                metrics::counter!("corral_trace_export_failures_total").increment(1);
                self.warn(&reason, count);
            }
        }
    }

    /// Logs a failed export, at most once every [`WARN_EVERY`].
    fn warn(&mut self, reason: &str, lost: u64) {
        let now = Instant::now();
        if self
            .last_warning
            .is_some_and(|last| now.duration_since(last) < WARN_EVERY)
        {
            self.failures_unwarned += 1;
            return;
        }
        let since = match self.failures_unwarned {
            0 => String::new(),
            n => format!(" ({n} more failures since the last warning)"),
        };
        tracing::warn!(
            "exporting traces to {} failed: {reason}; {lost} spans lost{since}",
            self.endpoint_shown()
        );
        self.last_warning = Some(now);
        self.failures_unwarned = 0;
    }

    /// The endpoint without any user or password it holds.
    fn endpoint_shown(&self) -> String {
        match reqwest::Url::parse(&self.endpoint) {
            Ok(mut url) => {
                let _ = url.set_username("");
                let _ = url.set_password(None);
                url.to_string()
            }
            Err(_) => "the OTLP endpoint".into(),
        }
    }
}

/// Why a request failed, without its URL.
fn describe(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        return "no answer in time".into();
    }
    if err.is_connect() {
        return "could not connect".into();
    }
    let mut text = String::from("the request failed");
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The resource every span comes from.
fn resource(config: &OtlpConfig) -> Resource {
    let text = |text: &str| Value::StringValue(text.to_owned());
    Resource {
        attributes: vec![
            KeyValue::new("service.name", text(&config.service_name)),
            KeyValue::new("service.version", text(env!("CARGO_PKG_VERSION"))),
            KeyValue::new("telemetry.sdk.name", text("corral")),
            KeyValue::new("telemetry.sdk.language", text("rust")),
            KeyValue::new("telemetry.sdk.version", text(env!("CARGO_PKG_VERSION"))),
        ],
        dropped_attributes_count: 0,
    }
}

/// The export request of `spans`.
pub fn request(resource: Resource, spans: Vec<SpanRecord>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "corral".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    attributes: Vec::new(),
                    dropped_attributes_count: 0,
                }),
                spans: spans.into_iter().map(|span| span.into_proto()).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_without_waiting() {
        let (queue, receiver) = Queue::bounded(2);
        let span = || {
            Box::new(SpanRecord {
                trace_id: [1; 16],
                span_id: [2; 8],
                parent_span_id: None,
                remote_parent: false,
                trace_state: String::new(),
                trace_flags: 1,
                adoptable: false,
                name: "s".into(),
                kind: super::super::proto::SpanKind::Internal,
                start_unix_nano: 0,
                end_unix_nano: 0,
                attributes: Vec::new(),
                dropped_attributes: 0,
                status: super::super::proto::StatusCode::Unset,
                status_message: String::new(),
            })
        };
        let started = Instant::now();
        for _ in 0..100 {
            queue.push(span());
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(receiver.try_iter().count(), 2);
    }

    #[test]
    fn a_guard_whose_exporter_is_gone_returns_at_once() {
        let (queue, receiver) = Queue::bounded(1);
        drop(receiver);
        let started = Instant::now();
        drop(OtlpGuard { queue });
        assert!(started.elapsed() < Duration::from_millis(500));
    }
}
