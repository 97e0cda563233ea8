//! Watching the plugin folder: filesystem events in, debounced batches of
//! "these files changed" out.
//!
//! Editors, `cp` and `cargo build` write a file in several steps, and each
//! step is an event. The watcher collects events until the folder has been
//! quiet for a moment, then hands over the set of plugin files (`*.wasm`),
//! manifests (`*.toml`) and `corral.lock` they touched, so that one change
//! means one reload. Other names (temporary files such as `corral pull`'s
//! `.corral-pull-PID.wasm.part` and `.NAME.toml.part`, editor backups) are
//! ignored; a file renamed into place shows up under its final name.
//!
//! Where the platform reports that a writer closed a file (inotify does), a
//! file still open for writing keeps the batch waiting a while longer, so
//! that a slow copy is not loaded half-written. Elsewhere a half-written file
//! simply fails to load, the previous version keeps serving, and the final
//! write's event triggers another batch.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{Event, RecursiveMode, Watcher as _};
use tokio::sync::mpsc;
use tokio::time::Instant;

use corral_registry::lock::LOCK_FILE;

/// How long the folder must be quiet before a batch is handed over.
pub const QUIET: Duration = Duration::from_millis(120);

/// How long a file still open for writing may hold a batch back.
pub const OPEN_FOR_WRITING: Duration = Duration::from_secs(2);

/// Whether the platform's watcher reports a writer closing a file.
const REPORTS_CLOSE_WRITE: bool = cfg!(any(target_os = "linux", target_os = "android"));

/// Plugin files, manifests and the lock that changed, by full path. A path
/// may name a file that no longer exists (it was deleted or renamed away).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Batch {
    pub paths: BTreeSet<PathBuf>,
    /// Events were lost (the kernel queue overflowed): look at every file.
    pub rescan: bool,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && !self.rescan
    }
}

/// Watches one folder for as long as it lives.
pub struct FolderWatcher {
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for FolderWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FolderWatcher").finish_non_exhaustive()
    }
}

/// Starts watching `dir` (not its subfolders). Batches arrive on the
/// receiver after `quiet` without events; it closes when the watcher is
/// dropped. Must be called inside a tokio runtime.
pub fn watch(dir: &Path, quiet: Duration) -> Result<(FolderWatcher, mpsc::Receiver<Batch>)> {
    let (events, raw) = mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
        let _ = events.send(event);
    })
    .context("starting the file watcher")?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .with_context(|| format!("watching {}", dir.display()))?;
    let (batches, receiver) = mpsc::channel(16);
    tokio::spawn(debounce(raw, batches, quiet));
    Ok((FolderWatcher { _watcher: watcher }, receiver))
}

/// Turns raw events into batches until either side goes away.
async fn debounce(
    mut raw: mpsc::UnboundedReceiver<notify::Result<Event>>,
    batches: mpsc::Sender<Batch>,
    quiet: Duration,
) {
    let mut pending = Debouncer::new(quiet);
    loop {
        let event = match pending.deadline() {
            None => raw.recv().await,
            Some(deadline) => match tokio::time::timeout_at(deadline, raw.recv()).await {
                Ok(event) => event,
                Err(_quiet) => {
                    if batches.send(pending.take()).await.is_err() {
                        return;
                    }
                    continue;
                }
            },
        };
        match event {
            None => return,
            Some(Ok(event)) => pending.add(&event, Instant::now()),
            Some(Err(err)) => {
                tracing::warn!("file watcher: {err}; rescanning the folder");
                pending.rescan(Instant::now());
            }
        }
    }
}

/// The batch being collected, and when it is due.
#[derive(Debug)]
struct Debouncer {
    quiet: Duration,
    batch: Batch,
    /// Files written to and not yet closed.
    writing: BTreeSet<PathBuf>,
    last_event: Option<Instant>,
}

impl Debouncer {
    fn new(quiet: Duration) -> Debouncer {
        Debouncer {
            quiet,
            batch: Batch::default(),
            writing: BTreeSet::new(),
            last_event: None,
        }
    }

    /// Adds one event. Reads and opens (the loader's own, among others)
    /// change nothing and do not delay the batch.
    fn add(&mut self, event: &Event, now: Instant) {
        if event.need_rescan() {
            self.rescan(now);
        }
        let writing = match event.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => Some(false),
            EventKind::Access(_) => return,
            EventKind::Create(_) | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any) => {
                Some(true)
            }
            EventKind::Modify(ModifyKind::Name(_)) | EventKind::Remove(_) => Some(false),
            _ => None,
        };
        let mut relevant = false;
        for path in event.paths.iter().filter(|path| is_watched_name(path)) {
            relevant = true;
            self.batch.paths.insert(path.clone());
            match writing {
                Some(true) if REPORTS_CLOSE_WRITE => {
                    self.writing.insert(path.clone());
                }
                Some(false) => {
                    self.writing.remove(path);
                }
                _ => {}
            }
        }
        if relevant {
            self.last_event = Some(now);
        }
    }

    fn rescan(&mut self, now: Instant) {
        self.batch.rescan = true;
        self.last_event = Some(now);
    }

    /// When the batch is due, if there is one.
    fn deadline(&self) -> Option<Instant> {
        let last = self.last_event?;
        if self.writing.is_empty() {
            Some(last + self.quiet)
        } else {
            Some(last + self.quiet.max(OPEN_FOR_WRITING))
        }
    }

    fn take(&mut self) -> Batch {
        self.last_event = None;
        self.writing.clear();
        std::mem::take(&mut self.batch)
    }
}

/// Plugin files and manifests (names ending in `.wasm` or `.toml`), and
/// the folder's `corral.lock`, which decides whether they may load.
pub fn is_watched_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext == "wasm" || ext == "toml")
        || path.file_name() == Some(OsStr::new(LOCK_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, MetadataKind, RemoveKind, RenameMode};

    fn event(kind: EventKind, path: &str) -> Event {
        Event::new(kind).add_path(PathBuf::from(path))
    }

    const QUIET: Duration = Duration::from_millis(100);

    #[test]
    fn a_burst_of_events_is_one_batch_due_after_the_quiet_period() {
        let mut debouncer = Debouncer::new(QUIET);
        let start = Instant::now();
        assert_eq!(debouncer.deadline(), None);
        debouncer.add(
            &event(EventKind::Create(CreateKind::File), "/p/a.wasm"),
            start,
        );
        let later = start + Duration::from_millis(50);
        debouncer.add(
            &event(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                "/p/a.wasm",
            ),
            later,
        );
        debouncer.add(
            &event(
                EventKind::Access(AccessKind::Close(AccessMode::Write)),
                "/p/a.wasm",
            ),
            later,
        );
        debouncer.add(
            &event(
                EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)),
                "/p/a.toml",
            ),
            later,
        );
        assert_eq!(debouncer.deadline(), Some(later + QUIET));
        let batch = debouncer.take();
        assert_eq!(
            batch.paths.iter().collect::<Vec<_>>(),
            [Path::new("/p/a.toml"), Path::new("/p/a.wasm")]
        );
        assert!(!batch.rescan);
        assert_eq!(debouncer.deadline(), None);
    }

    #[test]
    fn reads_and_other_names_are_ignored() {
        let mut debouncer = Debouncer::new(QUIET);
        let now = Instant::now();
        debouncer.add(
            &event(
                EventKind::Access(AccessKind::Open(AccessMode::Any)),
                "/p/a.wasm",
            ),
            now,
        );
        debouncer.add(
            &event(
                EventKind::Access(AccessKind::Close(AccessMode::Read)),
                "/p/a.wasm",
            ),
            now,
        );
        debouncer.add(
            &event(EventKind::Create(CreateKind::File), "/p/.a.wasm.swp"),
            now,
        );
        debouncer.add(
            &event(EventKind::Remove(RemoveKind::File), "/p/a.wasm.tmp"),
            now,
        );
        assert_eq!(debouncer.deadline(), None);
    }

    #[test]
    fn renames_count_under_both_names() {
        let mut debouncer = Debouncer::new(QUIET);
        let now = Instant::now();
        let rename = Event::new(EventKind::Modify(ModifyKind::Name(RenameMode::Both)))
            .add_path("/p/new.wasm.part".into())
            .add_path("/p/new.wasm".into());
        debouncer.add(&rename, now);
        assert_eq!(
            debouncer.take().paths.into_iter().collect::<Vec<_>>(),
            [PathBuf::from("/p/new.wasm")]
        );
    }

    #[test]
    fn the_lock_counts_and_the_temporary_files_of_a_pull_do_not() {
        let mut debouncer = Debouncer::new(QUIET);
        let now = Instant::now();
        for temporary in [
            "/p/.corral-pull-4242.wasm.part",
            "/p/.calc.toml.part",
            "/p/.corral.lock.part",
        ] {
            debouncer.add(&event(EventKind::Create(CreateKind::File), temporary), now);
        }
        assert_eq!(debouncer.deadline(), None);
        let rename = Event::new(EventKind::Modify(ModifyKind::Name(RenameMode::Both)))
            .add_path("/p/.corral.lock.part".into())
            .add_path("/p/corral.lock".into());
        debouncer.add(&rename, now);
        assert_eq!(
            debouncer.take().paths.into_iter().collect::<Vec<_>>(),
            [PathBuf::from("/p/corral.lock")]
        );
    }

    #[test]
    fn a_file_open_for_writing_holds_the_batch_back() {
        if !REPORTS_CLOSE_WRITE {
            return;
        }
        let mut debouncer = Debouncer::new(QUIET);
        let now = Instant::now();
        debouncer.add(
            &event(EventKind::Create(CreateKind::File), "/p/a.wasm"),
            now,
        );
        assert_eq!(debouncer.deadline(), Some(now + OPEN_FOR_WRITING));
        debouncer.add(
            &event(
                EventKind::Access(AccessKind::Close(AccessMode::Write)),
                "/p/a.wasm",
            ),
            now,
        );
        assert_eq!(debouncer.deadline(), Some(now + QUIET));
    }

    #[test]
    fn lost_events_ask_for_a_rescan() {
        let mut debouncer = Debouncer::new(QUIET);
        let overflow = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        debouncer.add(&overflow, Instant::now());
        assert!(debouncer.take().rescan);
    }
}
