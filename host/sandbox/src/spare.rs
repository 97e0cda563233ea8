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
//! Each call still runs in an instance no call ran in before. A spare is
//! made as a call's instance is, with the plugin's grants and limits, but
//! for no call: instantiating runs nothing of the plugin's but its start
//! functions, with no arguments, no client, no principal and no events.
//! What is the call's own in the store (where its events go, its client,
//! its state's namespace) is handed over when the call takes it. A plugin
//! with `[secrets]` has no spare: its secrets are resolved for each call,
//! into its WASI environment too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Mutex, OwnedSemaphorePermit};
use wasmtime::Store;
use wasmtime::component::Instance;

use crate::bindings::{Exports03, PluginPre};
use crate::manifest::Manifest;
use crate::sandbox::{CallState, Sandbox};

/// Instantiations at least this long are made ahead. Below, a spare
/// would save a call less than what taking it costs (a lock, a hand-over)
/// and would hold a pool slot for nothing: a Rust plugin instantiates in
/// a few microseconds, a JavaScript one in 20-30.
pub(crate) const WORTH_MAKING_AHEAD: Duration = Duration::from_micros(200);

/// A plugin's spare instance, and what it takes to make the next.
pub struct Spare {
    sandbox: Arc<Sandbox>,
    pre: Arc<Exports03<CallState>>,
    plugin: Arc<str>,
    manifest: Manifest,
    /// The instance made ahead, if any. Locked while the next is being
    /// made: a call that arrives meanwhile waits for it, which is sooner
    /// than making its own.
    made: Arc<Mutex<Option<Made>>>,
    /// Cleared for good when making one fails: a plugin whose start traps,
    /// or hits a limit, then fails each call once, in the call's own
    /// instance, not once more ahead of it.
    usable: AtomicBool,
}

/// An instance made ahead, in its store, holding a place among the
/// server's spares.
pub(crate) struct Made {
    store: Store<CallState>,
    instance: Instance,
    _room: OwnedSemaphorePermit,
}

impl Made {
    /// The store and the instance, for the call that took them; the place
    /// among the spares is free again.
    pub(crate) fn into_parts(self) -> (Store<CallState>, Instance) {
        (self.store, self.instance)
    }
}

impl Spare {
    /// The spare of a plugin loaded as `pre`, if it may have one: a plugin
    /// of contract 0.3.0 without `[secrets]`.
    pub(crate) fn for_plugin(
        sandbox: &Arc<Sandbox>,
        pre: &PluginPre<CallState>,
        plugin: &Arc<str>,
        manifest: &Manifest,
    ) -> Option<Arc<Spare>> {
        let PluginPre::V0_3(pre) = pre else {
            return None;
        };
        if !manifest.secrets.is_empty() {
            return None;
        }
        Some(Arc::new(Spare {
            sandbox: sandbox.clone(),
            pre: pre.clone(),
            plugin: plugin.clone(),
            manifest: manifest.clone(),
            made: Arc::new(Mutex::new(None)),
            usable: AtomicBool::new(true),
        }))
    }

    pub(crate) fn pre(&self) -> &Exports03<CallState> {
        &self.pre
    }

    /// The spare instance, if one is made (waiting for the one being made).
    pub(crate) async fn take(&self) -> Option<Made> {
        if !self.usable.load(Ordering::Relaxed) {
            return None;
        }
        self.made.lock().await.take()
    }

    /// Has the next spare made, when the last instantiation took
    /// `instantiation` (of a call's instance, or of the spare it took) and
    /// that is worth it, there is none, none is being made, and the server
    /// has room for one more.
    ///
    /// Its slot is locked from now on, before the call's answer goes out,
    /// so that a call arriving before it is made waits for it rather than
    /// making its own.
    pub(crate) fn order(self: &Arc<Self>, instantiation: Option<Duration>) {
        if !self.usable.load(Ordering::Relaxed)
            || instantiation.is_none_or(|took| took < WORTH_MAKING_AHEAD)
        {
            return;
        }
        let Ok(mut slot) = self.made.clone().try_lock_owned() else {
            return;
        };
        if slot.is_some() {
            return;
        }
        let Some(room) = self.sandbox.spare_room() else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let spare = self.clone();
        // On the worker that ran the call, after it: made on another
        // thread while the call runs, the instance's page-table changes and
        // the call's (copy-on-write faults) interrupt each other's CPU,
        // which cost more than the instantiation saved (docs/benchmarks.md).
        tokio::spawn(async move {
            *slot = spare.make(room).await;
        });
    }

    async fn make(&self, room: OwnedSemaphorePermit) -> Option<Made> {
        let made = self
            .sandbox
            .spare_instance(&self.pre, &self.plugin, &self.manifest)
            .await;
        match made {
            Ok((store, instance)) => Some(Made {
                store,
                instance,
                _room: room,
            }),
            Err(failure) => {
                self.usable.store(false, Ordering::Relaxed);
                tracing::debug!(plugin = %self.plugin, "no spare instance: making one failed: {failure}");
                None
            }
        }
    }
}
