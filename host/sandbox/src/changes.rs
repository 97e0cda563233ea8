//! Plugins' word that their tool lists changed (`host.tools-changed`,
//! contract 0.3.0), collected for whoever serves them to list them again.
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
