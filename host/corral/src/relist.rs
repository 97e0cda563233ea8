//! Re-listing: a plugin whose calls said that its tool list changed
//! (`host.tools-changed`, contract 0.3.0) has `list` called again, and the
//! catalog serves the new list, as it does after a file change.
//!
//! Each re-list is bounded as a load is (the plugin's limits on `list`, and
//! the metadata checks and budgets), and a plugin is re-listed at most once
//! per [`INTERVAL`]: a call that says it in a loop, or a burst of calls
//! that each say it, costs one re-list at once and then at most one per
//! interval, the last of them after the last word, so no change is lost. A
//! re-list that fails leaves the plugin's previous tools serving, and is
//! reported like a failed reload. A plugin that says its resources or
//! prompts changed is re-listed the same way (each `list` it exports).
//!
//! Updated resources are published here too ([`relay_updates`]), through
//! the same throttle, per URI.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::catalog::Catalog;
use crate::reports::Reports;
use corral_sandbox::Sandbox;
use corral_tool::LogLevel;

/// The least time between the starts of two re-lists of one plugin.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// Re-lists the plugins the sandbox's calls mark, into `catalog`, until
/// the task is aborted. Must be called inside a tokio runtime.
pub async fn run(sandbox: Arc<Sandbox>, catalog: Arc<Catalog>, reports: Arc<Reports>) {
    let mut throttle: Throttle<PathBuf> = Throttle::new(INTERVAL);
    let mut running: JoinSet<Relisted> = JoinSet::new();
    // Which plugin each running task re-lists.
    let mut tasks: HashMap<tokio::task::Id, PathBuf> = HashMap::new();
    loop {
        let due = throttle.next_due();
        tokio::select! {
            marked = sandbox.tools_changed().taken() => {
                for path in marked {
                    throttle.signal(path);
                }
            }
            Some(joined) = running.join_next_with_id(), if !running.is_empty() => match joined {
                Ok((id, relisted)) => {
                    let path = tasks.remove(&id).expect("every task is named");
                    throttle.finished(&path);
                    if relisted == Relisted::Stale {
                        throttle.signal(path);
                    }
                }
                // A panic is a bug in the host, not the plugin's: its
                // previous tools keep serving, and its next word is heard.
                Err(err) => {
                    tracing::error!("a re-list task failed: {err}");
                    if let Some(path) = tasks.remove(&err.id()) {
                        throttle.finished(&path);
                    }
                }
            },
            () = sleep_until(due), if due.is_some() => {}
        }
        for path in throttle.start_due(Instant::now()) {
            let catalog = catalog.clone();
            let reports = reports.clone();
            let task = running.spawn({
                let path = path.clone();
                async move { relist(&catalog, &reports, &path).await }
            });
            tasks.insert(task.id(), path);
        }
    }
}

/// Publishes the updated resources the sandbox's calls mark
/// (`host.resource-updated`, already filtered to what each plugin serves)
/// to the catalog's subscribers, each URI at most once per [`INTERVAL`]:
/// a URI said again within it is published once more when it ends, so the
/// last word is never lost. Holds at most
/// [`corral_sandbox::changes::MAX_PENDING_UPDATES`] URIs; a flood of
/// distinct ones beyond is dropped. Runs until the task is aborted.
pub async fn relay_updates(sandbox: Arc<Sandbox>, catalog: Arc<Catalog>) {
    let mut throttle: Throttle<String> = Throttle::new(INTERVAL);
    loop {
        let due = throttle.next_due();
        tokio::select! {
            marked = sandbox.resource_updates().taken() => {
                for uri in marked {
                    let room = throttle.plugins.len() < corral_sandbox::changes::MAX_PENDING_UPDATES;
                    if room || throttle.plugins.contains_key(&uri) {
                        throttle.signal(uri);
                    } else {
                        tracing::debug!("too many updated resources at once; dropping {uri}");
                    }
                }
            }
            () = sleep_until(due), if due.is_some() => {}
        }
        for uri in throttle.start_due(Instant::now()) {
            throttle.finished(&uri);
            catalog.publish_updated(uri);
        }
    }
}

async fn sleep_until(due: Option<Instant>) {
    if let Some(due) = due {
        tokio::time::sleep_until(due).await;
    }
}

/// What one re-list did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relisted {
    /// Served (or failed, and reported): nothing more to do.
    Done,
    /// A reload replaced the plugin while its `list` ran: the result was
    /// dropped, and the new version is to be listed in turn (it may have
    /// been loaded before the call that marked it stored its change).
    Stale,
}

/// Calls `list` again on the plugin serving from `path`, and serves the
/// answer in its place.
async fn relist(catalog: &Catalog, reports: &Reports, path: &std::path::Path) -> Relisted {
    let snapshot = catalog.snapshot();
    let Some(plugin) = snapshot
        .plugins()
        .iter()
        .find(|plugin| plugin.path() == path)
        .cloned()
    else {
        // Removed since its call: nothing to list.
        return Relisted::Done;
    };
    drop(snapshot);
    match plugin.relist().await {
        Ok(new) => {
            let count = new.tools().len();
            match catalog.replace(&plugin, new) {
                None => Relisted::Stale,
                Some(changed) => {
                    // One line per re-list, whatever it changed: what a
                    // plugin's words cost is visible in the log.
                    tracing::info!(plugin = %plugin.name(), tools = count, changed, "listed again");
                    if changed {
                        reports.report(
                            LogLevel::Info,
                            format!("plugin {} changed its tools ({count} tools)", plugin.name()),
                        );
                    }
                    Relisted::Done
                }
            }
        }
        Err(err) => {
            reports.report(
                LogLevel::Error,
                format!(
                    "plugin {} said its tools changed, but listing them again failed (its previous tools keep serving): {err:#}",
                    plugin.name()
                ),
            );
            Relisted::Done
        }
    }
}

/// When each plugin may be re-listed: at most one re-list of a plugin at a
/// time, their starts at least `interval` apart, and a word that comes
/// while one runs or waits its turn is answered by the next one. Holds an
/// entry only for plugins with a re-list running, waiting, or started
/// within the interval.
///
/// Generic in what it throttles: the updated resources' URIs go through
/// one too ([`relay_updates`]), each URI a "plugin" whose re-list is its
/// publication and ends at once.
#[derive(Debug)]
struct Throttle<K> {
    interval: Duration,
    plugins: HashMap<K, Relisting>,
}

#[derive(Debug, Default)]
struct Relisting {
    /// When the last re-list started.
    started: Option<Instant>,
    running: bool,
    /// Marked since the last re-list started.
    pending: bool,
}

impl Relisting {
    /// When its next re-list may start, if one is wanted and none runs.
    fn due(&self, interval: Duration) -> Option<Option<Instant>> {
        (self.pending && !self.running).then(|| self.started.map(|started| started + interval))
    }
}

impl<K: Clone + Eq + std::hash::Hash + Ord> Throttle<K> {
    fn new(interval: Duration) -> Throttle<K> {
        Throttle {
            interval,
            plugins: HashMap::new(),
        }
    }

    /// The plugin at `path` said its tools changed.
    fn signal(&mut self, path: K) {
        self.plugins.entry(path).or_default().pending = true;
    }

    /// The re-list of the plugin at `path` ended.
    fn finished(&mut self, path: &K) {
        if let Some(plugin) = self.plugins.get_mut(path) {
            plugin.running = false;
        }
    }

    /// The earliest time a waiting re-list may start (`None`: none waits;
    /// a time in the past: now).
    fn next_due(&self) -> Option<Instant> {
        self.plugins
            .values()
            .filter_map(|plugin| plugin.due(self.interval))
            .map(|due| due.unwrap_or_else(Instant::now))
            .min()
    }

    /// The plugins whose re-list starts now, marked as running; forgets
    /// the plugins with nothing to do.
    fn start_due(&mut self, now: Instant) -> Vec<K> {
        let interval = self.interval;
        self.plugins.retain(|_, plugin| {
            plugin.pending
                || plugin.running
                || plugin
                    .started
                    .is_some_and(|started| now < started + interval)
        });
        let mut starting = Vec::new();
        for (path, plugin) in &mut self.plugins {
            let ready = match plugin.due(interval) {
                Some(Some(due)) => now >= due,
                Some(None) => true,
                None => false,
            };
            if ready {
                plugin.pending = false;
                plugin.running = true;
                plugin.started = Some(now);
                starting.push(path.clone());
            }
        }
        starting.sort();
        starting
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn path(name: &str) -> PathBuf {
        PathBuf::from(format!("/p/{name}.wasm"))
    }

    #[test]
    fn the_first_word_is_answered_at_once() {
        let mut throttle = Throttle::new(SECOND);
        let now = Instant::now();
        assert_eq!(throttle.next_due(), None);
        throttle.signal(path("a"));
        assert!(throttle.next_due().is_some_and(|due| due <= Instant::now()));
        assert_eq!(throttle.start_due(now), [path("a")]);
        assert_eq!(throttle.next_due(), None, "it runs: nothing else is due");
    }

    #[test]
    fn a_burst_costs_one_relist_now_and_one_after_the_interval() {
        let mut throttle = Throttle::new(SECOND);
        let start = Instant::now();
        throttle.signal(path("a"));
        assert_eq!(throttle.start_due(start), [path("a")]);
        // A thousand words while the first re-list runs and after it ends.
        for step in 0..1000u64 {
            let now = start + Duration::from_micros(step * 500);
            throttle.signal(path("a"));
            if step == 10 {
                throttle.finished(&path("a"));
            }
            assert!(throttle.start_due(now).is_empty(), "step {step}");
        }
        assert_eq!(throttle.next_due(), Some(start + SECOND));
        assert!(
            throttle
                .start_due(start + SECOND - Duration::from_millis(1))
                .is_empty()
        );
        // The trailing re-list: the last word is not lost.
        assert_eq!(throttle.start_due(start + SECOND), [path("a")]);
        throttle.finished(&path("a"));
        assert_eq!(throttle.next_due(), None, "nothing was said since");
    }

    #[test]
    fn a_word_during_a_relist_waits_for_it_to_end() {
        let mut throttle = Throttle::new(SECOND);
        let start = Instant::now();
        throttle.signal(path("a"));
        throttle.start_due(start);
        throttle.signal(path("a"));
        // The interval has passed, but the first re-list still runs (a
        // slow `list`): one at a time.
        assert!(throttle.start_due(start + 3 * SECOND).is_empty());
        throttle.finished(&path("a"));
        assert_eq!(throttle.start_due(start + 3 * SECOND), [path("a")]);
    }

    #[test]
    fn plugins_are_throttled_apart() {
        let mut throttle = Throttle::new(SECOND);
        let start = Instant::now();
        throttle.signal(path("a"));
        assert_eq!(throttle.start_due(start), [path("a")]);
        throttle.finished(&path("a"));
        throttle.signal(path("a"));
        throttle.signal(path("b"));
        assert_eq!(
            throttle.start_due(start + Duration::from_millis(10)),
            [path("b")]
        );
        assert_eq!(throttle.start_due(start + SECOND), [path("a")]);
    }

    #[tokio::test]
    async fn an_updated_uri_is_published_at_once_then_at_most_once_a_second() {
        let sandbox = Sandbox::new(corral_sandbox::SandboxOptions::default()).unwrap();
        let catalog = Arc::new(Catalog::starting());
        let mut updated = catalog.resource_updated();
        let relay = tokio::spawn(relay_updates(sandbox.clone(), catalog.clone()));
        let started = Instant::now();
        sandbox.resource_updates().mark("x://a".into());
        let first = tokio::time::timeout(SECOND, updated.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(first, "x://a");
        // Said a hundred times more at once: published once more, a second
        // after the first (the last word is not lost).
        for _ in 0..100 {
            sandbox.resource_updates().mark("x://a".into());
            tokio::task::yield_now().await;
        }
        sandbox.resource_updates().mark("x://b".into());
        let second = tokio::time::timeout(SECOND, updated.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(second, "x://b", "another URI is not held back");
        let third = tokio::time::timeout(2 * SECOND, updated.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(third, "x://a");
        assert!(started.elapsed() >= SECOND, "{:?}", started.elapsed());
        let nothing = tokio::time::timeout(SECOND + SECOND / 2, updated.recv()).await;
        assert!(nothing.is_err(), "published twice in all: {nothing:?}");
        relay.abort();
    }

    #[test]
    fn plugins_with_nothing_to_do_are_forgotten() {
        let mut throttle = Throttle::new(SECOND);
        let start = Instant::now();
        throttle.signal(path("a"));
        throttle.start_due(start);
        throttle.finished(&path("a"));
        throttle.start_due(start + SECOND / 2);
        assert_eq!(throttle.plugins.len(), 1, "still within its interval");
        throttle.start_due(start + SECOND);
        assert!(throttle.plugins.is_empty());
    }
}
