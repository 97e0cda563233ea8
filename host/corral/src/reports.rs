//! What the server reports about its plugins (loaded, reloaded, removed,
//! failed to load): on stderr, and to every session that subscribed, which
//! passes each message on to its client's log at the level it asked for.

use tokio::sync::broadcast;

use corral_tool::{HostLog, LogLevel};

/// Messages kept for a slow session before the oldest are dropped.
const BACKLOG: usize = 64;

/// The server's log for clients.
#[derive(Debug)]
pub struct Reports {
    logs: broadcast::Sender<HostLog>,
}

impl Default for Reports {
    fn default() -> Self {
        Reports {
            logs: broadcast::Sender::new(BACKLOG),
        }
    }
}

impl Reports {
    /// Reports `message` on stderr and to every subscribed session.
    pub fn report(&self, level: LogLevel, message: String) {
        self.report_apart(level, message.clone(), message);
    }

    /// Reports `message` on stderr, and `told`, what a client may see of
    /// it (a plugin's file name rather than its path, a reason cut short),
    /// to every subscribed session.
    pub fn report_apart(&self, level: LogLevel, message: String, told: String) {
        match level {
            LogLevel::Debug => tracing::debug!("{message}"),
            LogLevel::Info | LogLevel::Notice => tracing::info!("{message}"),
            LogLevel::Warning => tracing::warn!("{message}"),
            _ => tracing::error!("{message}"),
        }
        // No receivers (no session yet) is fine.
        let _ = self.logs.send(HostLog {
            level,
            logger: "corral".into(),
            message: told,
        });
    }

    /// The messages reported from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<HostLog> {
        self.logs.subscribe()
    }
}
