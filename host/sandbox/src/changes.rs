//! Plugins' word that their lists changed (`host.tools-changed`,
//! `resources-changed`, `prompts-changed`, contract 0.3.0), collected for
//! whoever serves them to list them again (every list at once: one word
//! costs the plugin's three `list` calls at most), and that resources were
//! updated (`host.resource-updated`), collected for whoever tells clients.
//!
//! A call that says so marks its plugin, by path, once it is over. The
//! marks are a set: a plugin marked a thousand times before anyone looks is
//! in it once, so a plugin that says it in a loop costs the host one entry,
//! never a queue. The reader takes the whole set at once, and decides when
//! to list (the `corral` crate lists each plugin at most once a second).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tokio::sync::Notify;

/// The plugins marked since the reader last looked.
#[derive(Debug, Default)]
pub struct ToolsChanged {
    marked: Mutex<BTreeSet<PathBuf>>,
    notify: Notify,
}

impl ToolsChanged {
    /// Marks the plugin at `path` as having changed its tool list.
    pub fn mark(&self, path: &Path) {
        let fresh = self.marked.lock().unwrap().insert(path.to_owned());
        if fresh {
            // Stores a permit when the reader is not waiting yet, so that a
            // mark between its look and its wait is not missed.
            self.notify.notify_one();
        }
    }

    /// Waits until at least one plugin is marked, then takes every mark.
    pub async fn taken(&self) -> BTreeSet<PathBuf> {
        loop {
            let marked = std::mem::take(&mut *self.marked.lock().unwrap());
            if !marked.is_empty() {
                return marked;
            }
            self.notify.notified().await;
        }
    }
}

/// The most URIs waiting to be published; the rest are dropped until the
/// reader takes them (a flood of distinct URIs costs the host this much).
pub const MAX_PENDING_UPDATES: usize = 10_000;

/// The URIs said updated (and served by the plugin that said so) since the
/// reader last looked: a set, so that a URI said a thousand times waits
/// once, and bounded by [`MAX_PENDING_UPDATES`].
#[derive(Debug, Default)]
pub struct ResourceUpdates {
    marked: Mutex<BTreeSet<String>>,
    notify: Notify,
}

impl ResourceUpdates {
    /// Marks `uri` as updated.
    pub fn mark(&self, uri: String) {
        let mut marked = self.marked.lock().unwrap();
        if marked.len() >= MAX_PENDING_UPDATES && !marked.contains(&uri) {
            tracing::debug!(
                "more than {MAX_PENDING_UPDATES} updated resources wait to be published; dropping {uri}"
            );
            return;
        }
        if marked.insert(uri) {
            self.notify.notify_one();
        }
    }

    /// Waits until at least one URI is marked, then takes every mark.
    pub async fn taken(&self) -> BTreeSet<String> {
        loop {
            let marked = std::mem::take(&mut *self.marked.lock().unwrap());
            if !marked.is_empty() {
                return marked;
            }
            self.notify.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn many_marks_of_one_plugin_are_taken_as_one() {
        let changes = ToolsChanged::default();
        for _ in 0..1000 {
            changes.mark(Path::new("/p/a.wasm"));
        }
        changes.mark(Path::new("/p/b.wasm"));
        let taken = changes.taken().await;
        assert_eq!(
            taken.into_iter().collect::<Vec<_>>(),
            [PathBuf::from("/p/a.wasm"), PathBuf::from("/p/b.wasm")]
        );
        let nothing_more = tokio::time::timeout(Duration::from_millis(50), changes.taken()).await;
        assert!(nothing_more.is_err(), "the marks were taken once");
    }

    #[tokio::test]
    async fn updated_uris_are_a_bounded_set() {
        let updates = ResourceUpdates::default();
        for _ in 0..3 {
            updates.mark("x://a".into());
        }
        for i in 0..MAX_PENDING_UPDATES + 50 {
            updates.mark(format!("x://{i}"));
        }
        let taken = updates.taken().await;
        assert_eq!(taken.len(), MAX_PENDING_UPDATES);
        assert!(taken.contains("x://a"));
    }

    #[tokio::test]
    async fn a_mark_made_while_the_reader_waits_wakes_it() {
        let changes = std::sync::Arc::new(ToolsChanged::default());
        let reader = tokio::spawn({
            let changes = changes.clone();
            async move { changes.taken().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        changes.mark(Path::new("/p/a.wasm"));
        let taken = tokio::time::timeout(Duration::from_secs(5), reader)
            .await
            .expect("woken")
            .unwrap();
        assert_eq!(taken.len(), 1);
    }
}
