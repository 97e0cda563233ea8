//! Legacy sessions (`Mcp-Session-Id`): started by `initialize`, used by
//! later POSTs, a GET's standalone stream, ended by DELETE, by idleness, or
//! at shutdown.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

use super::body::{HttpResponse, empty, method_not_allowed, plain, rpc_error, sse_response};
use super::exchange::{Era, FrameSummary, exchange};
use super::{SESSION_HEADER, Server, accepts, session_header};
use crate::jsonrpc::{self, Frame, RpcError};
use crate::session::{Outbox, Session};
use crate::{Revision, ToolHost};
use corral_tool::Principal;

/// How often idle legacy sessions are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// One legacy (initialized) client.
pub(super) struct LegacySession<H> {
    session: Arc<Session<H>>,
    /// The open GET stream, where messages that answer no request go.
    standalone: Arc<Mutex<Option<mpsc::UnboundedSender<Value>>>>,
    last_used: Mutex<Instant>,
    /// The key of the principal that opened it (under OAuth): only that
    /// principal's requests find it; anyone else's get 404, as for a
    /// session that does not exist.
    owner: Option<String>,
}

impl<H: ToolHost> LegacySession<H> {
    fn owned_by(&self, caller: Option<&Principal>) -> bool {
        self.owner.as_deref() == caller.map(Principal::key).as_deref()
    }

    fn touch(&self) {
        *self.last_used.lock().unwrap() = Instant::now();
    }

    fn has_open_stream(&self) -> bool {
        self.standalone
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|sender| !sender.is_closed())
    }

    fn close_standalone(&self) {
        self.standalone.lock().unwrap().take();
    }
}

impl<H: ToolHost> Server<H> {
    /// A POST in the legacy session `id` names.
    pub(super) async fn post_in_session(
        &self,
        id: &str,
        version: Option<&str>,
        frame: Frame,
        summary: &FrameSummary,
        caller: Option<Arc<Principal>>,
    ) -> HttpResponse {
        let Some(legacy) = self.session(id, caller.as_deref()) else {
            return session_not_found(summary.reply_id.clone());
        };
        if let Some(version) = version
            && Revision::parse(version).is_none()
        {
            let supported: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
            return rpc_error(
                StatusCode::BAD_REQUEST,
                summary.reply_id.clone(),
                RpcError::new(
                    jsonrpc::code::UNSUPPORTED_PROTOCOL_VERSION,
                    format!(
                        "Unsupported protocol version: the MCP-Protocol-Version header says {version} (supported: {})",
                        supported.join(", ")
                    ),
                )
                .with_data(serde_json::json!({ "supported": supported, "requested": version })),
            );
        }
        legacy.touch();
        legacy.session.set_caller(caller);
        exchange(&legacy.session, frame, summary, &self.closing, Era::Legacy).await
    }

    /// A new legacy session answers `initialize`.
    pub(super) async fn initialize(
        self: &Arc<Self>,
        frame: Frame,
        summary: &FrameSummary,
        caller: Option<Arc<Principal>>,
    ) -> HttpResponse {
        if self.sessions.lock().unwrap().len() >= self.http.max_sessions {
            return too_many_sessions(summary.reply_id.clone());
        }
        let standalone: Arc<Mutex<Option<mpsc::UnboundedSender<Value>>>> = Arc::default();
        let notify = standalone_outbox(standalone.clone());
        let session = Session::new(self.host.clone(), self.options.clone(), notify);
        let owner = caller.as_deref().map(Principal::key);
        session.set_caller(caller);
        let id = new_session_id();
        session.set_transport("tcp", Some(id.clone()));
        let mut response = exchange(&session, frame, summary, &self.closing, Era::Legacy).await;
        if response.status().is_success() {
            let mut sessions = self.sessions.lock().unwrap();
            // Checked again: initializations that overlap all passed the
            // first check.
            if sessions.len() >= self.http.max_sessions {
                drop(sessions);
                tokio::spawn(async move { session.finish().await });
                return too_many_sessions(summary.reply_id.clone());
            }
            sessions.insert(
                id.clone(),
                Arc::new(LegacySession {
                    session,
                    standalone,
                    last_used: Mutex::new(Instant::now()),
                    owner,
                }),
            );
            metrics::gauge!("corral_sessions").set(sessions.len() as f64);
            drop(sessions);
            tracing::debug!("session {id} started");
            response.headers_mut().insert(
                SESSION_HEADER,
                HeaderValue::from_str(&id).expect("a hex id is a valid header value"),
            );
        }
        response
    }

    /// GET: a legacy session's standalone SSE stream.
    /// The legacy session `id`, if `caller` may use it.
    fn session(&self, id: &str, caller: Option<&Principal>) -> Option<Arc<LegacySession<H>>> {
        let legacy = self.sessions.lock().unwrap().get(id).cloned()?;
        if legacy.owned_by(caller) {
            Some(legacy)
        } else {
            tracing::warn!(
                "refused session {id} to {}: another principal opened it",
                caller.map_or("a caller without a token".into(), Principal::describe)
            );
            None
        }
    }

    pub(super) fn get(&self, headers: &HeaderMap, caller: Option<&Principal>) -> HttpResponse {
        if !accepts(headers, "text/event-stream") {
            return plain(
                StatusCode::NOT_ACCEPTABLE,
                "not acceptable: the Accept header must allow text/event-stream",
            );
        }
        let Some(id) = session_header(headers) else {
            return method_not_allowed(
                "POST",
                "method not allowed: without a session there is no stream to GET; POST subscriptions/listen instead",
            );
        };
        let Some(legacy) = self.session(&id, caller) else {
            return session_not_found(Value::Null);
        };
        let (sender, receiver) = mpsc::unbounded_channel();
        {
            let mut stream = legacy.standalone.lock().unwrap();
            if stream.as_ref().is_some_and(|open| !open.is_closed()) {
                return plain(
                    StatusCode::CONFLICT,
                    "conflict: this session already has an open GET stream",
                );
            }
            *stream = Some(sender);
        }
        legacy.session.stream_opened();
        legacy.touch();
        sse_response(receiver, None, None, Some(&self.closing), None)
    }

    /// DELETE: the client ends its legacy session.
    pub(super) async fn delete(
        &self,
        headers: &HeaderMap,
        caller: Option<&Principal>,
    ) -> HttpResponse {
        let Some(id) = session_header(headers) else {
            return method_not_allowed(
                "POST",
                "method not allowed: stateless requests have no session to delete",
            );
        };
        if self.session(&id, caller).is_none() {
            return session_not_found(Value::Null);
        }
        let removed = {
            let mut sessions = self.sessions.lock().unwrap();
            let removed = sessions.remove(&id);
            metrics::gauge!("corral_sessions").set(sessions.len() as f64);
            removed
        };
        let Some(legacy) = removed else {
            return session_not_found(Value::Null);
        };
        tracing::debug!("session {id} ended by the client");
        legacy.close_standalone();
        // Requests still running finish in the background.
        tokio::spawn(async move { legacy.session.finish().await });
        empty(StatusCode::OK)
    }

    /// Ends legacy sessions that nobody used for the idle timeout (a call
    /// still running counts as use).
    pub(super) async fn sweep_idle_sessions(self: Arc<Self>) {
        let mut ticks = tokio::time::interval(SWEEP_EVERY);
        loop {
            ticks.tick().await;
            let timeout = self.http.session_idle_timeout;
            let expired: Vec<(String, Arc<LegacySession<H>>)> = {
                let mut sessions = self.sessions.lock().unwrap();
                let idle: Vec<String> = sessions
                    .iter()
                    .filter(|(_, legacy)| {
                        !legacy.has_open_stream()
                            && !legacy.session.is_busy()
                            && legacy.last_used.lock().unwrap().elapsed() > timeout
                    })
                    .map(|(id, _)| id.clone())
                    .collect();
                let expired = idle
                    .into_iter()
                    .filter_map(|id| sessions.remove_entry(&id))
                    .collect();
                metrics::gauge!("corral_sessions").set(sessions.len() as f64);
                expired
            };
            for (id, legacy) in expired {
                tracing::debug!("session {id} ended: idle for {timeout:?}");
                tokio::spawn(async move { legacy.session.finish().await });
            }
        }
    }

    /// At shutdown: takes every legacy session, its GET stream ended.
    pub(super) fn take_sessions(&self) -> Vec<Arc<LegacySession<H>>> {
        let sessions: Vec<_> = self.sessions.lock().unwrap().drain().collect();
        metrics::gauge!("corral_sessions").set(0.0);
        sessions
            .into_iter()
            .map(|(_, legacy)| {
                legacy.close_standalone();
                legacy
            })
            .collect()
    }
}

/// At shutdown: finishes `sessions`, all at once, within `grace`.
pub(super) async fn finish_sessions<H: ToolHost>(
    sessions: Vec<Arc<LegacySession<H>>>,
    grace: Duration,
) {
    let mut finishing = tokio::task::JoinSet::new();
    for legacy in sessions {
        finishing.spawn(async move { legacy.session.finish().await });
    }
    if tokio::time::timeout(grace, finishing.join_all())
        .await
        .is_err()
    {
        tracing::warn!("sessions still finishing after {grace:?}; exiting");
    }
}

/// The outbox of a legacy session's messages that answer no request: they
/// go to its open GET stream, if any.
fn standalone_outbox(standalone: Arc<Mutex<Option<mpsc::UnboundedSender<Value>>>>) -> Outbox {
    Arc::new(move |message| {
        let mut stream = standalone.lock().unwrap();
        // Without an open GET stream there is nowhere to send it.
        if let Some(sender) = stream.as_ref()
            && sender.send(message).is_err()
        {
            *stream = None;
        }
    })
}

/// 503 to an `initialize` (whose id is `id`) past the session limit.
fn too_many_sessions(id: Value) -> HttpResponse {
    crate::telemetry::budget_refused("sessions");
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        RpcError::new(
            -32000,
            "Service Unavailable: too many sessions; try again later",
        ),
    )
}

/// 128 random bits in hex: unguessable, visible ASCII as the spec requires.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// 404 to a request (whose id is `id`, null for GET and DELETE) naming a
/// session that ended or never existed. The code is the one the official
/// SDKs answer this with; the 2026-07-28 revision has no sessions to say.
fn session_not_found(id: Value) -> HttpResponse {
    rpc_error(
        StatusCode::NOT_FOUND,
        id,
        RpcError::new(
            -32001,
            "Session not found: it ended or never existed; initialize again",
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_random_hex() {
        let (a, b) = (new_session_id(), new_session_id());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
