//! An exchange: a POST's frame handed to a session, and what that causes
//! turned into the response (202, one JSON body, or an SSE stream), with
//! what ends when the exchange does.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::StatusCode;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::body::{HttpResponse, empty, json_response, sse_response};
use crate::ToolHost;
use crate::jsonrpc::{self, Frame, Incoming, Notification};
use crate::session::{Outbox, Session};

/// Bytes of progress and log notifications queued for one SSE stream whose
/// client does not read; past them such notifications are dropped.
const MAX_UNSENT_NOTIFICATION_BYTES: usize = 1 << 20;

/// What a POST's frame holds, for routing.
pub(super) struct FrameSummary {
    /// Whether anything in it expects an answer.
    expects_answer: bool,
    /// The method of a single request.
    pub(super) method: Option<String>,
    /// The ids of its requests.
    request_ids: Vec<Value>,
    /// The id an error about the whole POST answers with: the message's id
    /// when the frame is one message that has one (an invalid message's
    /// included), null otherwise.
    pub(super) reply_id: Value,
    /// The POST's `traceparent` header: its requests' spans continue that
    /// trace unless their `_meta` carries their own.
    pub(super) traceparent: Option<String>,
}

impl FrameSummary {
    pub(super) fn of(frame: &Frame) -> Self {
        let items: Vec<&Incoming> = match frame {
            Frame::Single(item) => vec![item],
            Frame::Batch(items) if !items.is_empty() => items.iter().collect(),
            Frame::Batch(_) | Frame::Unparseable(_) => return FrameSummary::no_message(),
        };
        let expects_answer = items
            .iter()
            .any(|item| matches!(item, Incoming::Request(_) | Incoming::Invalid { .. }));
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
        let reply_id = match frame {
            Frame::Single(Incoming::Request(request)) => request.id.clone(),
            Frame::Single(Incoming::Invalid { id, .. }) => id.clone(),
            _ => Value::Null,
        };
        FrameSummary {
            expects_answer,
            method,
            request_ids,
            reply_id,
            traceparent: None,
        }
    }

    /// The id of the `subscriptions/listen` stream the frame opens. Only a
    /// single request does (the session refuses one in a batch, whose
    /// answer it would hold), so a batch's ending never cancels a request of
    /// the id its refused listen request had.
    fn listen_id(&self) -> Option<&Value> {
        (self.method.as_deref() == Some("subscriptions/listen")).then_some(&self.reply_id)
    }

    /// A frame without a message (an empty batch, or one that does not
    /// parse): the session answers it with an error.
    fn no_message() -> Self {
        FrameSummary {
            expects_answer: true,
            method: None,
            request_ids: Vec::new(),
            reply_id: Value::Null,
            traceparent: None,
        }
    }
}

/// The era a POST is served in, which decides what ends with its exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    /// In a legacy session, which outlives the exchange.
    Legacy,
    /// In a session of the exchange's own, which ends with it.
    Stateless,
}

/// Hands `frame` to `session` and answers with what it causes. When
/// `closing` is cancelled (shutdown), a listen stream, which would never end
/// on its own, is ended by the session: `notifications/cancelled` naming
/// it, then its completion result, and the stream ends once they are sent.
/// In the stateless era `session` is the exchange's own, finished when the
/// exchange is over, and protocol errors are HTTP errors.
pub(super) async fn exchange<H: ToolHost>(
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
    session.handle_frame_traced(
        frame,
        bounded_outbox(sender, unsent.clone()),
        summary.traceparent.as_deref(),
    );
    let stateless = era == Era::Stateless;
    // What ends with the exchange however it ends, including the client
    // going away while this future waits: a stateless exchange's requests
    // and session; a legacy session's listen streams.
    let mut ending = ExchangeEnd::of(era, session, summary);
    if !summary.expects_answer {
        ExchangeEnd::answered(&mut ending);
        return empty(StatusCode::ACCEPTED);
    }
    let Some(first) = receiver.recv().await else {
        // Everything asked was cancelled: nothing to answer.
        ExchangeEnd::answered(&mut ending);
        return empty(StatusCode::ACCEPTED);
    };
    let is_final = first.is_array() || (first.get("id").is_some() && first.get("method").is_none());
    if is_final {
        ExchangeEnd::answered(&mut ending);
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
    let shutdown = summary
        .listen_id()
        .map(|_| end_listen_streams_at_shutdown(session, closing));
    // What ends with the stream: the exchange's end (moved in whole, so
    // that it drops here, told the outcome) and the shutdown watch.
    let on_drop = Box::new(move |complete: bool| {
        if let Some(mut ending) = ending {
            ending.answered = complete;
        }
        drop(shutdown);
    });
    sse_response(receiver, Some(first), Some(unsent), None, Some(on_drop))
}

/// Ends `session`'s listen streams when `closing` is cancelled, unless the
/// guard returned is dropped first (the stream ended before shutdown).
fn end_listen_streams_at_shutdown<H: ToolHost>(
    session: &Arc<Session<H>>,
    closing: &CancellationToken,
) -> DropGuard {
    let stream_ended = CancellationToken::new();
    let (session, closing, ended) = (
        Arc::downgrade(session),
        closing.clone(),
        stream_ended.clone(),
    );
    tokio::spawn(async move {
        tokio::select! {
            () = closing.cancelled() => {
                if let Some(session) = session.upgrade() {
                    session.end_listen_streams();
                }
            }
            () = ended.cancelled() => {}
        }
    });
    stream_ended.drop_guard()
}

/// The outbox of an exchange: every message goes to `sender`, but progress
/// and log notifications only while `unsent` (the bytes of those queued)
/// stays within [`MAX_UNSENT_NOTIFICATION_BYTES`].
fn bounded_outbox(sender: mpsc::UnboundedSender<Value>, unsent: Arc<AtomicUsize>) -> Outbox {
    Arc::new(move |message| {
        if jsonrpc::is_droppable(&message) {
            let size = jsonrpc::serialized_len(&message);
            if unsent.fetch_add(size, Ordering::Relaxed) + size > MAX_UNSENT_NOTIFICATION_BYTES {
                unsent.fetch_sub(size, Ordering::Relaxed);
                crate::telemetry::budget_refused("stream_queue");
                return;
            }
        }
        // Fails only once the client has gone; no one is left to tell.
        let _ = sender.send(message);
    })
}

/// The end of an exchange, run when it is dropped: requests left
/// unanswered (the client closed the connection) are cancelled, as
/// `notifications/cancelled` would, and a stateless exchange's session
/// finishes in the background. A legacy session's requests are not
/// cancelled (that era's spec: a disconnection is no cancellation), but
/// those that ask the client for input learn at once that it is gone.
struct ExchangeEnd<H: ToolHost> {
    session: Arc<Session<H>>,
    /// The requests ended if the exchange ends unanswered.
    request_ids: Vec<Value>,
    how: Ending,
    answered: bool,
}

/// What an exchange that ends unanswered does to its requests.
#[derive(Clone, Copy, PartialEq)]
enum Ending {
    /// A stateless exchange: its requests are cancelled and its session ends.
    Stateless,
    /// A legacy session's listen streams: cancelled.
    Listen,
    /// A legacy session's other requests: they go on, but cannot ask the
    /// client anything any more.
    Unreachable,
}

impl<H: ToolHost> ExchangeEnd<H> {
    /// What ends with an exchange of `era`, if anything: a stateless
    /// exchange's requests and session; a legacy session's listen requests,
    /// and its other requests' asks of the client.
    fn of(era: Era, session: &Arc<Session<H>>, summary: &FrameSummary) -> Option<Self> {
        let (request_ids, how) = match era {
            Era::Stateless => (summary.request_ids.clone(), Ending::Stateless),
            Era::Legacy if let Some(id) = summary.listen_id() => (vec![id.clone()], Ending::Listen),
            Era::Legacy if !summary.request_ids.is_empty() => {
                (summary.request_ids.clone(), Ending::Unreachable)
            }
            Era::Legacy => return None,
        };
        Some(ExchangeEnd {
            session: session.clone(),
            request_ids,
            how,
            answered: false,
        })
    }

    /// Marks the exchange answered: nothing is cancelled when it ends.
    fn answered(ending: &mut Option<Self>) {
        if let Some(ending) = ending {
            ending.answered = true;
        }
    }
}

impl<H: ToolHost> Drop for ExchangeEnd<H> {
    fn drop(&mut self) {
        if !self.answered && self.how == Ending::Unreachable {
            tracing::debug!(
                "the client left: its requests {:?} can no longer ask it anything",
                self.request_ids
            );
            self.session.connection_closed(&self.request_ids);
        } else if !self.answered {
            let what = if self.how == Ending::Stateless {
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
        if self.how == Ending::Stateless {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::jsonrpc::parse_frame;

    #[test]
    fn only_a_listen_request_on_its_own_opens_a_stream_that_ends_with_its_exchange() {
        let single =
            parse_frame(r#"{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{}}"#);
        let summary = FrameSummary::of(&single);
        assert_eq!(summary.listen_id(), Some(&json!(5)));
        // In a batch the session refuses it: when the exchange ends
        // unanswered, its requests are left unreachable, and nothing is
        // cancelled by the id the listen request had (another request of
        // the session may have it).
        let batch = parse_frame(
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}},{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{}}]"#,
        );
        let summary = FrameSummary::of(&batch);
        assert_eq!(summary.listen_id(), None);
        assert_eq!(summary.request_ids, [json!(1), json!(5)]);
    }
}
