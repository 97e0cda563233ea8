//! Hot reload: the first load of a folder, then every change the watcher
//! reports, applied to the catalog as one new snapshot at a time.
//!
//! New versions load off the request path (requests keep reading the
//! current snapshot meanwhile). A file that fails to load (truncated,
//! invalid, hostile metadata, a bad manifest) leaves the previous version of
//! its plugin serving, and is reported on stderr and to clients' logs; its
//! next change is tried again. A manifest (`NAME.toml`) change reloads its
//! plugin (`NAME.wasm`). Every new snapshot re-applies the catalog's
//! collision rule across all plugins, and clients hear of it only when the
//! tool list they see changed.
//!
//! Each batch reads the folder's `corral.lock` once and loads only files
//! that match what it pins; a changed file is a load failure like any
//! other. A change to the lock itself reconsiders every plugin, since it
//! may pin, unpin or re-pin any of them; a lock that cannot be read leaves
//! the snapshot as it is until the lock is fixed.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::catalog::{self, Catalog, Snapshot, file_name};
use crate::relist;
use crate::reports::Reports;
use crate::watch::{self, Batch, FolderWatcher};
use corral_registry::lock::{LOCK_FILE, Lock};
use corral_sandbox::{Plugin, Sandbox};
use corral_tool::{LogLevel, NotLoaded};

/// Loads a folder's plugins into a catalog and keeps them current.
#[derive(Clone)]
pub struct Reloader {
    sandbox: Arc<Sandbox>,
    dir: PathBuf,
    catalog: Arc<Catalog>,
    reports: Arc<Reports>,
}

/// What one batch did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Plugins loaded, new or replacing a previous version, by file name.
    pub loaded: Vec<String>,
    /// Plugins taken out because their file is gone.
    pub removed: Vec<String>,
    /// Files that failed to load (a previous version, if any, still serves);
    /// `corral.lock` when the lock could not be read (nothing changed).
    pub failed: Vec<String>,
    /// Whether the served tool list changed (and subscribers were told).
    pub tools_changed: bool,
}

/// A folder being served: the reload task and, when watching, the watcher.
/// Dropping it stops watching.
#[derive(Debug)]
pub struct Reloading {
    watcher: Option<FolderWatcher>,
    task: JoinHandle<()>,
    /// Re-lists plugins that say their tools changed; only while watching
    /// (with `--no-watch` the tool list is fixed, and clients are told so).
    relisting: Option<JoinHandle<()>>,
    /// Publishes updated resources to the sessions that follow them.
    updating: JoinHandle<()>,
}

impl Reloading {
    /// Whether changes to the folder are picked up.
    pub fn is_watching(&self) -> bool {
        self.watcher.is_some()
    }
}

impl Drop for Reloading {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(relisting) = &self.relisting {
            relisting.abort();
        }
        self.updating.abort();
    }
}

/// Starts serving `dir` into `catalog`: the first load runs in the
/// background (the catalog becomes ready when it ends), then, if `watch`,
/// every change to the folder is applied as it comes, and every plugin
/// that says its tools changed is listed again ([`relist`]), with what
/// happened told to `reports`. When the watcher cannot start, the folder is served
/// as first loaded, with a warning. A `corral.lock` that cannot be read is
/// an error here, before anything is served: serving the folder unchecked
/// would defeat it. Must be called inside a tokio runtime.
pub fn start(
    sandbox: Arc<Sandbox>,
    dir: &Path,
    catalog: Arc<Catalog>,
    reports: Arc<Reports>,
    watch: bool,
) -> Result<Reloading> {
    let reloader = Reloader::new(sandbox, dir, catalog, reports)?;
    // Watch before the first scan, so that no change falls between the two.
    let (watcher, batches) = if watch {
        match watch::watch(&reloader.dir, watch::QUIET) {
            Ok((watcher, batches)) => (Some(watcher), Some(batches)),
            Err(err) => {
                tracing::warn!("not watching for changes: {err:#}");
                (None, None)
            }
        }
    } else {
        (None, None)
    };
    // Read once the watcher runs, like the files: a `corral pull` landing
    // meanwhile is seen whole, lock and file, either here or as a change.
    // A malformed lock stops the start.
    let lock = Lock::read(&reloader.dir)?;
    let relisting = watcher.is_some().then(|| {
        tokio::spawn(relist::run(
            reloader.sandbox.clone(),
            reloader.catalog.clone(),
            reloader.reports.clone(),
        ))
    });
    let updating = tokio::spawn(relist::relay_updates(
        reloader.sandbox.clone(),
        reloader.catalog.clone(),
    ));
    let task = tokio::spawn(reloader.run(lock, batches));
    Ok(Reloading {
        watcher,
        task,
        relisting,
        updating,
    })
}

impl Reloader {
    /// A reloader for the plugins in `dir`.
    pub fn new(
        sandbox: Arc<Sandbox>,
        dir: &Path,
        catalog: Arc<Catalog>,
        reports: Arc<Reports>,
    ) -> Result<Reloader> {
        // One spelling of every path, matching what the watcher reports.
        let dir = dir
            .canonicalize()
            .with_context(|| format!("opening {}", dir.display()))?;
        Ok(Reloader {
            sandbox,
            dir,
            catalog,
            reports,
        })
    }

    /// The folder, as a canonical path.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The first load, checked against `lock` (the folder's, read at
    /// startup), then every batch until the watcher stops.
    pub async fn run(self, lock: Lock, batches: Option<mpsc::Receiver<Batch>>) {
        self.load_initial(lock).await;
        let Some(mut batches) = batches else { return };
        while let Some(mut batch) = batches.recv().await {
            // Batches that queued up during the last reload are one reload.
            while let Ok(more) = batches.try_recv() {
                batch.paths.extend(more.paths);
                batch.rescan |= more.rescan;
            }
            self.apply(&batch).await;
        }
    }

    /// Loads every plugin in the folder in parallel, checked against
    /// `lock`, and publishes the first snapshot, which makes the catalog
    /// ready even if nothing loaded.
    pub async fn load_initial(&self, lock: Lock) {
        let snapshot = match catalog::load_dir(&self.sandbox, &self.dir, lock, &self.reports).await
        {
            Ok(loaded) => {
                for failure in loaded.failed {
                    self.catalog.failed_to_load(failure);
                }
                loaded.snapshot
            }
            Err(err) => {
                self.reports.report(LogLevel::Error, format!("{err:#}"));
                Snapshot::default()
            }
        };
        self.catalog.publish(snapshot);
    }

    /// Applies one batch of changes: loads what was added or changed (if
    /// it matches the folder's lock), removes what is gone, and publishes
    /// the result as one snapshot.
    pub async fn apply(&self, batch: &Batch) -> Outcome {
        let mut outcome = Outcome::default();
        // Read once per batch: every file of the batch is checked against
        // the same lock.
        let lock = match Lock::read(&self.dir) {
            Ok(lock) => Arc::new(lock),
            Err(err) => {
                // Nothing is loaded or removed: with no lock to check
                // against, the snapshot that serves stays as it is. The
                // lock's next change reconsiders every plugin.
                self.reports.report(
                    LogLevel::Error,
                    format!("{err}; the plugins keep serving as they were"),
                );
                outcome.failed.push(LOCK_FILE.to_owned());
                return outcome;
            }
        };
        let current = self.catalog.snapshot();
        let mut plugins: BTreeMap<PathBuf, Arc<Plugin>> = current
            .plugins()
            .iter()
            .map(|plugin| (plugin.path().to_owned(), plugin.clone()))
            .collect();
        let mut to_load = Vec::new();
        // What this batch changes: plugins whose files are gone, and new
        // versions.
        let mut gone: BTreeSet<PathBuf> = BTreeSet::new();
        let mut fresh: Vec<Arc<Plugin>> = Vec::new();
        for path in self.targets(batch, &plugins) {
            if path.is_file() {
                to_load.push(path);
                continue;
            }
            self.catalog.forget_failure(&file_name(&path));
            if let Some(removed) = plugins.remove(&path) {
                self.reports.report(
                    LogLevel::Info,
                    format!("plugin {} removed ({})", removed.name(), path.display()),
                );
                outcome.removed.push(file_name(&path));
                gone.insert(path);
            }
        }
        for (path, result) in catalog::load_all(&self.sandbox, &lock, to_load).await {
            match result {
                Ok(plugin) => {
                    self.reports.report(
                        LogLevel::Info,
                        format!(
                            "plugin {} reloaded from {} ({} tools)",
                            plugin.name(),
                            path.display(),
                            plugin.tools().len()
                        ),
                    );
                    self.catalog.forget_failure(&file_name(&path));
                    let plugin = Arc::new(plugin);
                    plugins.insert(path.clone(), plugin.clone());
                    fresh.push(plugin);
                    outcome.loaded.push(file_name(&path));
                }
                Err(err) => {
                    let previous_serves = plugins.contains_key(&path);
                    let consequence = if previous_serves {
                        "the previous version keeps serving"
                    } else {
                        "it is not served"
                    };
                    let reason = format!("{err:#}");
                    let failure = NotLoaded::new(file_name(&path), &reason, previous_serves);
                    let told = format!(
                        "plugin {} failed to load ({consequence}): {}",
                        failure.file, failure.reason
                    );
                    // Noted before it is reported: a client initializing
                    // between the two then hears it one way or the other.
                    self.catalog.failed_to_load(failure);
                    self.reports.report_apart(
                        LogLevel::Error,
                        format!(
                            "plugin {} failed to load ({consequence}): {reason}",
                            path.display()
                        ),
                        told,
                    );
                    outcome.failed.push(file_name(&path));
                }
            }
        }
        if outcome.loaded.is_empty() && outcome.removed.is_empty() {
            return outcome;
        }
        // Applied to the latest snapshot, not to `current`: a plugin
        // re-listed meanwhile (see `relist`) keeps its new tools unless this
        // batch replaced or removed it.
        outcome.tools_changed = self
            .catalog
            .update(|latest| {
                let mut plugins: BTreeMap<&Path, Arc<Plugin>> = latest
                    .plugins()
                    .iter()
                    .filter(|plugin| !gone.contains(plugin.path()))
                    .map(|plugin| (plugin.path(), plugin.clone()))
                    .collect();
                for plugin in &fresh {
                    plugins.insert(plugin.path(), plugin.clone());
                }
                Some(Snapshot::new(plugins.into_values().collect()))
            })
            .unwrap_or(false);
        tracing::info!(
            loaded = ?outcome.loaded,
            removed = ?outcome.removed,
            tools_changed = outcome.tools_changed,
            "catalog updated"
        );
        outcome
    }

    /// The plugin files a batch concerns: each changed `.wasm`, the `.wasm`
    /// beside each changed manifest, and for a rescan or a changed
    /// `corral.lock` every plugin file in the folder plus every plugin
    /// served now.
    fn targets(
        &self,
        batch: &Batch,
        serving: &BTreeMap<PathBuf, Arc<Plugin>>,
    ) -> BTreeSet<PathBuf> {
        let mut targets = BTreeSet::new();
        for path in &batch.paths {
            let Some(name) = path.file_name() else {
                continue;
            };
            let path = self.dir.join(name);
            match path.extension() {
                Some(ext) if ext == "wasm" => {
                    targets.insert(path);
                }
                Some(ext) if ext == "toml" => {
                    targets.insert(path.with_extension("wasm"));
                }
                _ => {}
            }
        }
        // The lock may have pinned, unpinned or re-pinned any file: those
        // it lists are in the folder or served, so a rescan covers them.
        let lock_changed = batch
            .paths
            .iter()
            .any(|path| path.file_name() == Some(OsStr::new(LOCK_FILE)));
        if batch.rescan || lock_changed {
            match catalog::plugin_files(&self.dir) {
                Ok(files) => targets.extend(files),
                Err(err) => tracing::error!("rescanning: {err:#}"),
            }
            targets.extend(serving.keys().cloned());
        }
        targets
    }
}
