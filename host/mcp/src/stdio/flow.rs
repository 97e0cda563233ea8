//! Flow control on stdio: the one rule both kinds of output follow.
//!
//! Answers the client has not read yet wait in the output's backlog. Once
//! [`BACKLOG_PAUSE`] bytes wait, stdin is not read until fewer than half of
//! them do, and progress, log and resource update notifications are dropped instead of
//! queued (responses never are). Too many requests running holds reading
//! back too.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;
use tokio::sync::Notify;

use crate::ToolHost;
use crate::jsonrpc;
use crate::session::{Outbox, Session};

/// Unsent output at which stdin stops being read; reading resumes once
/// half of it is sent. Far above what a client that reads as it goes
/// leaves waiting (a pipe itself holds 64 KiB), and bounding what one that
/// does not can make the server hold.
pub const BACKLOG_PAUSE: usize = 16 << 20;

/// Requests running (listen streams aside) at which stdin stops being read
/// until one ends. Far above what tools can run at once (each plugin's
/// concurrency limit refuses more, and the sandbox has 256 instance slots).
pub const MAX_REQUESTS_RUNNING: usize = 1024;

/// Where a session's messages go: stdout, as a pipe or through a thread.
pub trait Output: Send + Sync + 'static {
    /// Sends `message` (one line of JSON), or queues it; drops it instead
    /// where [`Flow::admits`] says so.
    fn send(self: &Arc<Self>, message: Value);

    /// Bytes waiting to be written, or `None` once the output has failed
    /// (the client is gone: nothing will be written, nothing to wait for).
    fn unsent(&self) -> Option<usize>;

    /// Notified whenever the backlog falls below half of [`BACKLOG_PAUSE`],
    /// and when the output fails.
    fn room(&self) -> &Notify;

    /// Resolves once every message sent is written (or the client is
    /// gone, or gave up reading).
    fn finish(&self) -> impl Future<Output = Result<()>> + Send;

    /// The outbox that sends to this output.
    fn outbox(self: &Arc<Self>) -> Outbox {
        let output = self.clone();
        Arc::new(move |message| output.send(message))
    }
}

/// The output side of the rule: which messages a backlog still takes.
#[derive(Default)]
pub struct Flow {
    /// Notifications are being dropped: warned once per stretch.
    dropping: AtomicBool,
}

impl Flow {
    /// Whether `message` should be written or queued, with `unsent` bytes
    /// already waiting: always, unless that is [`BACKLOG_PAUSE`] or more
    /// and the message is a progress or log notification.
    pub fn admits(&self, unsent: usize, message: &Value) -> bool {
        if unsent < BACKLOG_PAUSE {
            // Stored only on a change: every answer passes here, from any
            // worker, and a store on each would bounce the flag between cores.
            if self.dropping.load(Ordering::Relaxed) {
                self.dropping.store(false, Ordering::Relaxed);
            }
            return true;
        }
        if !jsonrpc::is_droppable(message) {
            return true;
        }
        if !self.dropping.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "the client is not reading: progress, log and resource update notifications are dropped while {} MiB of output waits",
                BACKLOG_PAUSE >> 20
            );
        }
        false
    }
}

/// The input side of the rule: resolves at once while the client keeps up;
/// otherwise once it has read half the backlog (or is gone) and fewer than
/// [`MAX_REQUESTS_RUNNING`] requests run.
pub async fn wait_until_caught_up<H: ToolHost, O: Output>(output: &O, session: &Session<H>) {
    let behind = |limit: usize| output.unsent().is_some_and(|unsent| unsent >= limit);
    if behind(BACKLOG_PAUSE) {
        tracing::debug!("answers wait unread: reading no more requests until the client reads");
        loop {
            let room = output.room().notified();
            if !behind(BACKLOG_PAUSE / 2) {
                break;
            }
            room.await;
        }
    }
    // Requests are cheap to send and may be slow to answer: a client
    // sending faster than they finish waits for some to.
    while session.requests_running() >= MAX_REQUESTS_RUNNING {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_notifications_are_dropped_and_only_past_the_pause() {
        let flow = Flow::default();
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}});
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
        let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        for message in [&progress, &log, &changed, &response] {
            assert!(flow.admits(BACKLOG_PAUSE - 1, message), "{message}");
        }
        assert!(!flow.admits(BACKLOG_PAUSE, &progress));
        assert!(!flow.admits(BACKLOG_PAUSE, &log));
        assert!(flow.admits(BACKLOG_PAUSE, &changed));
        assert!(flow.admits(usize::MAX, &response));
        // Caught up again: admitted again.
        assert!(flow.admits(0, &progress));
    }
}
