//! Work a call leaves for after its answer: dropping its spent instance
//! (which resets the instance's pool slot) and writing its audit line.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Pieces of work that may wait at once; beyond this, a call does its own
/// at once.
const MAX_WAITING: usize = 64;

/// Work from calls whose answers are on their way, not yet run; beyond
/// [`MAX_WAITING`], a call does its own at once. (A caller making calls back
/// to back in one task, never yielding, would otherwise hold every spent
/// instance until it yields, and exhaust the instance pool.) The pool is the
/// sandbox's engine's, so each sandbox counts its own.
#[derive(Debug, Default)]
pub(crate) struct AfterAnswer {
    waiting: Arc<AtomicUsize>,
}

impl AfterAnswer {
    /// Runs `work` once the answer of the call at hand is on its way.
    ///
    /// The work goes to a task of its own, spawned from the call's task: the
    /// runtime puts a task spawned on a worker in that worker's next-to-run
    /// slot, which other workers cannot steal, so it runs on the same thread
    /// as soon as the call's task, which goes on to write the answer, is done.
    pub(crate) fn run(&self, work: impl FnOnce() + Send + 'static) {
        match (tokio::runtime::Handle::try_current(), self.enter()) {
            (Ok(runtime), Some(waiting)) => {
                runtime.spawn(async move {
                    work();
                    drop(waiting);
                });
            }
            _ => work(),
        }
    }

    /// Counts one more piece of waiting work, if there is room for it.
    fn enter(&self) -> Option<Waiting> {
        let waiting = Waiting(self.waiting.clone());
        (self.waiting.fetch_add(1, Ordering::Relaxed) < MAX_WAITING).then_some(waiting)
    }
}

/// Counts one waiting piece of work for as long as it lives.
struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_limit_work_runs_at_once_and_sandboxes_count_their_own() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (first, second) = (AfterAnswer::default(), AfterAnswer::default());
            let ran = Arc::new(AtomicUsize::new(0));
            let count = || {
                let ran = ran.clone();
                move || {
                    ran.fetch_add(1, Ordering::Relaxed);
                }
            };
            for _ in 0..MAX_WAITING + 3 {
                first.run(count());
            }
            // The task never yielded: only what was over the limit ran.
            assert_eq!(ran.load(Ordering::Relaxed), 3);
            assert_eq!(first.waiting.load(Ordering::Relaxed), MAX_WAITING);
            // Another sandbox's work waits as the first's would.
            second.run(count());
            assert_eq!(ran.load(Ordering::Relaxed), 3);
            // Once the task yields, the rest runs (the runtime may take more
            // than one yield to get through so many tasks).
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            assert_eq!(ran.load(Ordering::Relaxed), MAX_WAITING + 4);
            assert_eq!(first.waiting.load(Ordering::Relaxed), 0);
            assert_eq!(second.waiting.load(Ordering::Relaxed), 0);
        });
    }
}
