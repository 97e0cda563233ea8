//! How many calls of one plugin may wait for their clients at once: a
//! waiting call holds one of its plugin's `concurrency` slots all along, so
//! clients that never answer must not take them all. Both a plugin's own
//! asks (`ask`) and the host's ask for a caller's own secret
//! (`secrets::own`) wait within it.

use std::sync::Arc;

use tokio::sync::Semaphore;

/// The calls of one plugin that may wait for their clients at once: half
/// of its `concurrency` (at least one). Shared by the plugin's calls; a
/// call holds a slot only while one of its asks waits.
#[derive(Debug)]
pub struct WaitingCalls {
    slots: Arc<Semaphore>,
    max: u32,
}

impl WaitingCalls {
    /// The bound for a plugin running at most `concurrency` calls at once.
    pub fn for_concurrency(concurrency: u32) -> Arc<WaitingCalls> {
        let max = (concurrency / 2).max(1);
        Arc::new(WaitingCalls {
            slots: Arc::new(Semaphore::new(max as usize)),
            max,
        })
    }

    /// How many calls may wait at once.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// A slot to wait in, if one is free: held until dropped.
    pub fn try_wait(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.slots.clone().try_acquire_owned().ok()
    }
}
