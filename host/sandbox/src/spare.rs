//! A plugin's next instance, made ahead of its call.
//!
//! Instantiating CPython's component takes about half a millisecond, most
//! of it wasmtime filling the function table that libpython imports
//! (docs/benchmarks.md, "Where a call's time goes"). A plugin whose
//! instantiation takes that long ([`WORTH_MAKING_AHEAD`]) keeps one spare
//! instance, made once a call has run, and taken by the next call, which
//! then only runs. A client that leaves the plugin idle for longer than an
//! instantiation between its calls (a model deciding what to call next)
//! has each call answered that much sooner; one that calls back to back
//! waits for the spare instead, which is no longer than making its own.
//!
//! This module keeps the spare and orders the next; what a spare is, and
//! which plugins may have one, is the sandbox's (`Sandbox::spare_for`):
//! each call still runs in an instance no call ran in before.

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::sync::{Mutex, OwnedSemaphorePermit};

/// Instantiations at least this long are made ahead. Below, a spare
/// would save a call less than what taking it costs (a lock, a hand-over)
/// and would hold a pool slot for nothing: a Rust plugin instantiates in
/// a few microseconds, a JavaScript one in 20-30.
pub(crate) const WORTH_MAKING_AHEAD: Duration = Duration::from_micros(200);

/// Spares that may fail to be made in a row before a plugin has no more.
const MAX_FAILURES: u32 = 3;

/// Makes one spare, or says why it could not.
pub(crate) type Maker<T> =
    Box<dyn Fn() -> Pin<Box<dyn Future<Output = Result<T, String>> + Send>> + Send + Sync>;

/// A plugin's spare (a `T`), and what makes the next.
pub(crate) struct Spare<T> {
    plugin: Arc<str>,
    make: Maker<T>,
    /// The spare, if one is made, with its place among the server's
    /// spares. Locked while the next is being made: a call that arrives
    /// meanwhile waits for it, which is sooner than making its own.
    made: Arc<Mutex<Option<(T, OwnedSemaphorePermit)>>>,
    /// Spares that failed to be made, in a row. At [`MAX_FAILURES`] none
    /// is made any more: a plugin whose start traps, or hits a limit, then
    /// fails each call once, in the call's own instance, not once more
    /// ahead of it. (One failure may be the machine's: a busy moment past
    /// the time limit, the pool full.)
    failures: AtomicU32,
}

impl<T: Send + 'static> Spare<T> {
    pub(crate) fn new(plugin: Arc<str>, make: Maker<T>) -> Arc<Spare<T>> {
        Arc::new(Spare {
            plugin,
            make,
            made: Arc::new(Mutex::new(None)),
            failures: AtomicU32::new(0),
        })
    }

    fn usable(&self) -> bool {
        self.failures.load(Ordering::Relaxed) < MAX_FAILURES
    }

    /// The spare, if one is made, waiting for the one being made for at
    /// most `patience`. The timer is armed only if there is a wait.
    pub(crate) async fn take(&self, patience: Duration) -> Option<T> {
        if !self.usable() {
            return None;
        }
        let (spare, _room) = tokio::time::timeout(patience, self.made.lock())
            .await
            .ok()?
            .take()?;
        Some(spare)
    }

    /// Has the next spare made, in `room` (a place among the server's
    /// spares), when the last instantiation took `instantiation` (of a
    /// call's instance, or of the spare it took) and that is worth it,
    /// there is none and none is being made.
    ///
    /// Its slot is locked from now on, before the call's answer goes out,
    /// so that a call arriving before it is made waits for it rather than
    /// making its own. It is made on the worker that ran the call, once
    /// the call's task is done: made on another thread while the call
    /// runs, the instance's page-table changes and the call's (its
    /// copy-on-write faults) interrupt each other's CPU, which cost more
    /// than the instantiation saved (docs/benchmarks.md).
    pub(crate) fn order(
        self: &Arc<Self>,
        instantiation: Option<Duration>,
        room: impl FnOnce() -> Option<OwnedSemaphorePermit>,
    ) {
        if !self.usable() || instantiation.is_none_or(|took| took < WORTH_MAKING_AHEAD) {
            return;
        }
        let Ok(mut slot) = self.made.clone().try_lock_owned() else {
            return;
        };
        if slot.is_some() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let Some(room) = room() else {
            return;
        };
        let spare = self.clone();
        tokio::spawn(async move {
            match (spare.make)().await {
                Ok(made) => {
                    spare.failures.store(0, Ordering::Relaxed);
                    *slot = Some((made, room));
                }
                Err(failure) => {
                    spare.failures.fetch_add(1, Ordering::Relaxed);
                    report(&spare.plugin, failure);
                }
            }
        });
    }
}

fn report(plugin: &str, failure: impl Display) {
    tracing::debug!(plugin = %plugin, "no spare instance: making one failed: {failure}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spare whose makes give `outcomes` in turn, and the count of makes.
    fn spare(outcomes: Vec<Result<u32, String>>) -> (Arc<Spare<u32>>, Arc<AtomicU32>) {
        let outcomes = std::sync::Mutex::new(outcomes.into_iter());
        let makes = Arc::new(AtomicU32::new(0));
        let counted = makes.clone();
        let spare = Spare::new(
            "test".into(),
            Box::new(move || {
                counted.fetch_add(1, Ordering::Relaxed);
                let next = outcomes.lock().unwrap().next().expect("one more make");
                Box::pin(async move { next })
            }),
        );
        (spare, makes)
    }

    fn room() -> Option<OwnedSemaphorePermit> {
        Arc::new(tokio::sync::Semaphore::new(1))
            .try_acquire_owned()
            .ok()
    }

    const SLOW: Option<Duration> = Some(Duration::from_millis(1));

    #[tokio::test]
    async fn a_spare_is_taken_once_and_only_after_a_slow_instantiation() {
        let (spare, makes) = spare(vec![Ok(1), Ok(2)]);
        spare.order(Some(Duration::from_micros(10)), room);
        spare.order(None, room);
        assert_eq!(spare.take(Duration::ZERO).await, None, "fast: none made");
        spare.order(SLOW, room);
        // Ordered, not yet made: the take waits for it.
        assert_eq!(spare.take(Duration::from_secs(5)).await, Some(1));
        assert_eq!(spare.take(Duration::ZERO).await, None, "taken once");
        spare.order(SLOW, room);
        tokio::task::yield_now().await;
        // Made: a second order while it waits makes no other.
        spare.order(SLOW, room);
        assert_eq!(spare.take(Duration::ZERO).await, Some(2));
        assert_eq!(makes.load(Ordering::Relaxed), 2);
    }

    #[tokio::test]
    async fn without_room_or_after_failures_in_a_row_none_is_made() {
        let (spare, makes) = spare(vec![
            Err("trap".into()),
            Ok(1),
            Err("trap".into()),
            Err("trap".into()),
            Err("trap".into()),
        ]);
        spare.order(SLOW, || None);
        assert_eq!(spare.take(Duration::from_secs(5)).await, None, "no room");
        spare.order(SLOW, room);
        assert_eq!(spare.take(Duration::from_secs(5)).await, None, "failed");
        // A success resets the count of failures.
        spare.order(SLOW, room);
        assert_eq!(spare.take(Duration::from_secs(5)).await, Some(1));
        for _ in 0..MAX_FAILURES {
            spare.order(SLOW, room);
            assert_eq!(spare.take(Duration::from_secs(5)).await, None);
        }
        assert_eq!(makes.load(Ordering::Relaxed), 2 + MAX_FAILURES);
        // Past the failures, nothing is ordered.
        spare.order(SLOW, room);
        assert_eq!(spare.take(Duration::from_secs(5)).await, None);
        tokio::task::yield_now().await;
        assert_eq!(makes.load(Ordering::Relaxed), 2 + MAX_FAILURES);
    }
}
