//! What the host offers a running tool: logging, progress reports, and
//! word that the plugin's tools, resources or prompts changed.

/// Write to the host's log.
///
/// Messages go to the host's log and, at or above the level the client asked
/// for, to the client as MCP log notifications. On native targets (unit
/// tests) they are written to stderr instead.
///
/// ```no_run
/// corral_sdk::log::info("fetching page 2 of 5");
/// ```
pub mod log {
    /// Severity of a log message, as in RFC 5424 and MCP logging.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Level {
        /// Detailed debugging information.
        Debug,
        /// Informational messages.
        Info,
        /// Normal but significant events.
        Notice,
        /// Warning conditions.
        Warning,
        /// Error conditions.
        Error,
        /// Critical conditions.
        Critical,
        /// Action must be taken immediately.
        Alert,
        /// The system is unusable.
        Emergency,
    }

    /// Writes `message` at `level`.
    pub fn log(level: Level, message: impl AsRef<str>) {
        imp::log(level, message.as_ref());
    }

    /// Writes `message` at debug level.
    pub fn debug(message: impl AsRef<str>) {
        log(Level::Debug, message);
    }

    /// Writes `message` at info level.
    pub fn info(message: impl AsRef<str>) {
        log(Level::Info, message);
    }

    /// Writes `message` at warning level.
    pub fn warn(message: impl AsRef<str>) {
        log(Level::Warning, message);
    }

    /// Writes `message` at error level.
    pub fn error(message: impl AsRef<str>) {
        log(Level::Error, message);
    }

    #[cfg(target_arch = "wasm32")]
    mod imp {
        use super::Level;
        use crate::bindings::corral::plugin::host;
        use crate::bindings::corral::plugin::types::LogLevel;

        pub(super) fn log(level: Level, message: &str) {
            let level = match level {
                Level::Debug => LogLevel::Debug,
                Level::Info => LogLevel::Info,
                Level::Notice => LogLevel::Notice,
                Level::Warning => LogLevel::Warning,
                Level::Error => LogLevel::Error,
                Level::Critical => LogLevel::Critical,
                Level::Alert => LogLevel::Alert,
                Level::Emergency => LogLevel::Emergency,
            };
            host::log(level, message);
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod imp {
        use super::Level;

        pub(super) fn log(level: Level, message: &str) {
            eprintln!("[{level:?}] {message}");
        }
    }
}

/// Reports progress of the current call: `done` should increase with every
/// report; `total` is the expected final value when known.
///
/// The host forwards reports to the client as `notifications/progress` when
/// the client asked for progress, and drops them otherwise. On native
/// targets (unit tests) this does nothing.
///
/// ```no_run
/// for i in 1..=3 {
///     corral_sdk::progress(i as f64, Some(3.0), Some("working"));
/// }
/// ```
pub fn progress(done: f64, total: Option<f64>, message: Option<&str>) {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::corral::plugin::host::progress(done, total, message);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (done, total, message);
}

/// Says that the plugin's tool list changed: what its [`plugin!`](crate::plugin)
/// list function returns depends on something this call changed, such as
/// its [`state`](crate::state).
///
/// Once the call is over, whatever its outcome, the host lists the plugin's
/// tools again (under the same limits and checks as at load), serves the new
/// list and tells clients that follow changes (`notifications/tools/list_changed`).
/// Calling it more than once, or from many calls at once, costs one listing:
/// the host lists a plugin at most once a second, and always after the last
/// call that said so. A server started with `--no-watch` keeps its tool list
/// as it was at startup and ignores this. On native targets (unit tests) it
/// does nothing.
///
/// ```no_run
/// // After storing a new note, whose tool the list now offers:
/// corral_sdk::tools_changed();
/// ```
pub fn tools_changed() {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::corral::plugin::host::tools_changed();
}

/// Says that the plugin's resources or resource templates changed: what
/// its [`plugin!`](crate::plugin) `resources` or `templates` return depends
/// on something this call changed. As [`tools_changed`], for
/// `notifications/resources/list_changed`. On native targets (unit tests)
/// it does nothing.
pub fn resources_changed() {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::corral::plugin::host::resources_changed();
}

/// Says that the plugin's prompts changed: what its [`plugin!`](crate::plugin)
/// `prompts` return depends on something this call changed. As
/// [`tools_changed`], for `notifications/prompts/list_changed`. On native
/// targets (unit tests) it does nothing.
pub fn prompts_changed() {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::corral::plugin::host::prompts_changed();
}

/// Says that the contents of the resource at `uri` changed: once the call
/// ends, clients that subscribed to `uri` are told
/// `notifications/resources/updated` (and read it again). A URI the plugin
/// does not serve (neither a listed resource nor one matching its
/// templates) is ignored; each call tells at most 100 distinct URIs, and
/// each subscriber hears of a URI at most once a second. On native targets
/// (unit tests) it does nothing.
///
/// ```no_run
/// // After a tool rewrote a note:
/// corral_sdk::resource_updated("notes://groceries");
/// ```
pub fn resource_updated(uri: &str) {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::corral::plugin::host::resource_updated(uri);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = uri;
}
