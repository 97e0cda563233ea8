//! What a session passes on to its client of the host's events: list
//! changes, updated resources, and the server's own reports for the
//! client's log (with the plugins that failed to load).

use super::*;

/// Passes the host's events on to the session's client until the session
/// is gone or the host stops sending.
pub(super) async fn follow_host<H: ToolHost>(session: Weak<Session<H>>, mut events: HostEvents) {
    // Only changes from now on are news to this session.
    events.tools_changed.borrow_and_update();
    events.resources_changed.borrow_and_update();
    events.prompts_changed.borrow_and_update();
    let (mut tools_open, mut logs_open) = (true, true);
    let (mut resources_open, mut prompts_open, mut updates_open) = (true, true, true);
    loop {
        tokio::select! {
            changed = events.tools_changed.changed(), if tools_open => match changed {
                Ok(()) => {
                    events.tools_changed.borrow_and_update();
                    let Some(session) = session.upgrade() else { return };
                    session.list_changed(List::Tools);
                }
                Err(_) => tools_open = false,
            },
            changed = events.resources_changed.changed(), if resources_open => match changed {
                Ok(()) => {
                    events.resources_changed.borrow_and_update();
                    let Some(session) = session.upgrade() else { return };
                    session.list_changed(List::Resources);
                }
                Err(_) => resources_open = false,
            },
            changed = events.prompts_changed.changed(), if prompts_open => match changed {
                Ok(()) => {
                    events.prompts_changed.borrow_and_update();
                    let Some(session) = session.upgrade() else { return };
                    session.list_changed(List::Prompts);
                }
                Err(_) => prompts_open = false,
            },
            updated = events.resource_updated.recv(), if updates_open => match updated {
                Ok(uri) => {
                    let Some(session) = session.upgrade() else { return };
                    session.resource_updated(&uri);
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!("{missed} resource update(s) not passed on to the client");
                }
                Err(broadcast::error::RecvError::Closed) => updates_open = false,
            },
            log = events.logs.recv(), if logs_open => match log {
                Ok(log) => {
                    let Some(session) = session.upgrade() else { return };
                    session.host_log(log);
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!("{missed} host log message(s) not passed on to the client");
                }
                Err(broadcast::error::RecvError::Closed) => logs_open = false,
            },
            else => return,
        }
    }
}

/// A list whose changes clients hear of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    Tools,
    Resources,
    Prompts,
}

impl List {
    fn notification(self) -> &'static str {
        match self {
            List::Tools => "notifications/tools/list_changed",
            List::Resources => "notifications/resources/list_changed",
            List::Prompts => "notifications/prompts/list_changed",
        }
    }
}

impl<H: ToolHost> Session<H> {
    /// `notifications/*/list_changed` for `list`, when the capability was
    /// declared: plain to an initialized (legacy) client whose `initialize`
    /// declared the list (tools always are), and tagged with its
    /// subscription id to every open listen stream that asked for it and
    /// was acknowledged.
    fn list_changed(&self, list: List) {
        if !self.options.list_changed {
            return;
        }
        let method = list.notification();
        let offered = *self.offered.lock().unwrap();
        let declared = match list {
            List::Tools => true,
            List::Resources => offered.resources,
            List::Prompts => offered.prompts,
        };
        if declared && self.revision.lock().unwrap().is_some() {
            tracing::debug!("telling the client: {method}");
            (self.notify)(jsonrpc::notification(method, None));
        }
        for listener in self.listeners.lock().unwrap().values() {
            let asked = match list {
                List::Tools => listener.tools_list_changed,
                List::Resources => listener.resources_list_changed,
                List::Prompts => listener.prompts_list_changed,
            };
            if asked {
                tracing::debug!("telling listen stream {}: {method}", listener.id);
                (listener.reply)(jsonrpc::notification(
                    method,
                    Some(json!({ "_meta": { META_SUBSCRIPTION_ID: listener.id } })),
                ));
            }
        }
    }

    /// `notifications/resources/updated` for `uri`: to the legacy client if
    /// it subscribed to it, and tagged to every listen stream with it in
    /// `resourceSubscriptions`.
    fn resource_updated(&self, uri: &str) {
        const METHOD: &str = "notifications/resources/updated";
        if self.subscriptions.lock().unwrap().contains(uri) {
            (self.notify)(jsonrpc::notification(METHOD, Some(json!({ "uri": uri }))));
        }
        for listener in self.listeners.lock().unwrap().values() {
            if listener.resource_subscriptions.contains(uri) {
                (listener.reply)(jsonrpc::notification(
                    METHOD,
                    Some(json!({ "uri": uri, "_meta": { META_SUBSCRIPTION_ID: listener.id } })),
                ));
            }
        }
    }

    /// `notifications/message` at or above the client's log level (or
    /// [`HOST_REPORTS_BY_DEFAULT`] until it sets one), once it has said it
    /// is initialized: what was reported before reaches it then, as
    /// [`Session::tell_not_loaded`].
    fn host_log(&self, log: HostLog) {
        let least = match self.log_level.load(Ordering::Relaxed) {
            LOGGING_OFF => HOST_REPORTS_BY_DEFAULT as u8,
            level => level,
        };
        if (log.level as u8) < least || !self.reports_open.load(Ordering::Relaxed) {
            return;
        }
        let params =
            json!({ "level": log.level.as_str(), "logger": log.logger, "data": log.message });
        (self.notify)(jsonrpc::notification("notifications/message", Some(params)));
    }

    /// Tells the client which plugins failed to load, as an error in its
    /// log: they failed before it could ask. Done when it has just
    /// initialized, and, over HTTP, when it opens the session's stream
    /// afterwards ([`Session::stream_opened`]): until then a notification
    /// has nowhere to go.
    pub(super) fn tell_not_loaded(&self) {
        let failed = self.host.not_loaded();
        if failed.is_empty() {
            return;
        }
        self.host_log(HostLog {
            level: LogLevel::Error,
            logger: "corral".into(),
            message: format!(
                "{} plugin file(s) failed to load:\n{}",
                failed.len(),
                corral_tool::not_loaded_lines(&failed)
            ),
        });
    }

    /// The transport opened the stream where notifications that answer no
    /// request go (Streamable HTTP's GET): the plugins that failed to load
    /// are told there, if the client has initialized (if not, they are
    /// told when it does).
    pub fn stream_opened(&self) {
        if self.reports_open.load(Ordering::Relaxed) {
            self.tell_not_loaded();
        }
    }
}
