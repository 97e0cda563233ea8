//! Responses and their bodies: plain text, JSON, JSON-RPC errors, and SSE
//! streams.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame as BodyFrame, Incoming, SizeHint};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::jsonrpc::{self, RpcError};

/// An SSE comment this often keeps idle streams open through proxies.
const KEEPALIVE: Duration = Duration::from_secs(15);

pub(super) type HttpResponse = http::Response<ResponseBody>;

/// How long a client may take to send a request's body, once its headers
/// are in.
pub(super) const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request's body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyFailure {
    /// Over the limit: announced so, or found so as it arrived.
    TooLarge,
    /// Not all there within [`BODY_TIMEOUT`].
    TimedOut,
    /// The connection failed while it arrived.
    Unreadable,
}

/// Reads a request's body, of at most `limit` bytes, within
/// [`BODY_TIMEOUT`]. An announced `Content-Length` over the limit is
/// refused before a byte is read (or waited for). Each caller answers a
/// failure its own way (a JSON-RPC error, a page).
pub(super) async fn read_limited(body: Incoming, limit: usize) -> Result<Bytes, BodyFailure> {
    if body
        .size_hint()
        .exact()
        .is_some_and(|announced| announced > limit as u64)
    {
        return Err(BodyFailure::TooLarge);
    }
    let read = Limited::new(body, limit).collect();
    match tokio::time::timeout(BODY_TIMEOUT, read).await {
        Err(_) => Err(BodyFailure::TimedOut),
        Ok(Ok(body)) => Ok(body.to_bytes()),
        Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => Err(BodyFailure::TooLarge),
        Ok(Err(err)) => {
            tracing::debug!("reading a request body: {err}");
            Err(BodyFailure::Unreadable)
        }
    }
}

/// `response`, after which the connection closes: its request's body was
/// not read, so nothing after it on the connection can be trusted.
pub(super) fn closing_connection(mut response: HttpResponse) -> HttpResponse {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A response with no body.
pub(super) fn empty(status: StatusCode) -> HttpResponse {
    http::Response::builder()
        .status(status)
        .body(ResponseBody::empty())
        .unwrap()
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> HttpResponse {
    http::Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(ResponseBody::full(Bytes::from_static(text.as_bytes())))
        .unwrap()
}

/// A text made at run time, of the media type `content_type`.
pub(super) fn text(status: StatusCode, content_type: &'static str, text: String) -> HttpResponse {
    http::Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(ResponseBody::full(Bytes::from(text)))
        .unwrap()
}

/// 405, with the methods that are allowed.
pub(super) fn method_not_allowed(allow: &'static str, text: &'static str) -> HttpResponse {
    let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, text);
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

pub(super) fn rpc_error(status: StatusCode, id: Value, error: RpcError) -> HttpResponse {
    json_response(status, &jsonrpc::error_response(id, &error))
}

pub(super) fn json_response(status: StatusCode, message: &Value) -> HttpResponse {
    let body = serde_json::to_vec(message).expect("a JSON value always serializes");
    http::Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(ResponseBody::full(Bytes::from(body)))
        .unwrap()
}

pub(super) fn sse_response(
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
pub(super) enum ResponseBody {
    Full(Option<Bytes>),
    Sse(Box<SseBody>),
}

impl ResponseBody {
    pub(super) fn empty() -> Self {
        ResponseBody::Full(None)
    }

    pub(super) fn full(bytes: Bytes) -> Self {
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
pub(super) struct SseBody {
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
