//! `corral dev DIR`: the plugin author's loop. DIR is a plugin project (what
//! `corral new` writes: sources, a manifest, and `./build`, which writes
//! `NAME.wasm` beside them by rename). This module watches the project's
//! sources and runs `./build` again whenever one changes; `main.rs` serves
//! DIR meanwhile, and the folder's own watcher (`watch.rs`, `reload.rs`)
//! loads each new `NAME.wasm` as it lands, so a client connected to `corral
//! dev` sees every successful build at once and each call's audit line is
//! on stderr.
//!
//! A build's output goes to stderr as it comes (stdout is the protocol), and
//! its outcome is reported to clients' logs too, with the end of the output
//! of a failed build, so an author working in the MCP Inspector sees the
//! compiler's error there. A failed build leaves the last good `NAME.wasm`
//! serving. Builds never overlap: changes saved during one start one more
//! build after it.
//!
//! The sources are the project's files that its `.gitignore` does not
//! ignore (the templates' ignore their build outputs), minus what no
//! author edits: dependencies and build folders, hidden files (editors'
//! swap files), backups and temporaries, and `*.wasm`.

use std::collections::VecDeque;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use notify::event::{EventKind, ModifyKind};
use notify::{Event, RecursiveMode, Watcher as _};
use tokio::io::AsyncReadExt as _;
use tokio::sync::mpsc;

use corral_tool::LogLevel;

use crate::reports::Reports;

/// How long the sources must be quiet after a change before a build
/// starts: an editor's save, or a `git checkout`, is several events.
const QUIET: Duration = Duration::from_millis(300);

/// How much of a failed build's output (its end) goes to clients' logs.
const REPORTED_TAIL: usize = 4 * 1024;

/// Folders no author edits, wherever they are in the project.
const BUILD_FOLDERS: [&str; 7] = [
    ".git",
    ".build",
    "target",
    "node_modules",
    "__pycache__",
    ".venv",
    "toolchain",
];

/// A plugin project: its folder and what in it is source.
#[derive(Debug, Clone)]
pub struct Project {
    dir: PathBuf,
    ignored: Vec<Pattern>,
}

/// One line of a `.gitignore`, in the forms the templates and most projects
/// use: a name anywhere (`__pycache__/`), a path from the project's root
/// (`/target/`, `/NAME.wasm`), or a name ending (`*.o`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    Name(String),
    Rooted(String),
    Suffix(String),
}

impl Project {
    /// The project in `dir`, which must have an executable `./build`.
    pub fn open(dir: &Path) -> Result<Project> {
        let dir = dir
            .canonicalize()
            .with_context(|| format!("{} is not a folder", dir.display()))?;
        let build = dir.join("build");
        let executable = std::fs::metadata(&build).is_ok_and(|meta| {
            use std::os::unix::fs::PermissionsExt as _;
            meta.is_file() && meta.permissions().mode() & 0o111 != 0
        });
        if !executable {
            bail!(
                "{} has no executable ./build: `corral dev` runs in a plugin project, as \
                 `corral new LANGUAGE NAME` writes one (to serve a folder of built plugins, \
                 use `corral serve`)",
                dir.display()
            );
        }
        // Unreadable or absent: nothing but the built-in folders is ignored.
        let gitignore = std::fs::read_to_string(dir.join(".gitignore")).unwrap_or_default();
        Ok(Project {
            ignored: gitignore.lines().filter_map(Pattern::parse).collect(),
            dir,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether a change to `path` (inside the project) should rebuild.
    pub fn is_source(&self, path: &Path) -> bool {
        self.within(path).is_some_and(|(names, relative)| {
            names.last().is_some_and(|file| !is_generated(file)) && !self.excludes(&names, relative)
        })
    }

    /// Whether `folder` (inside the project) may hold sources: it is no
    /// build or dependency folder, not hidden and not ignored.
    pub fn may_hold_sources(&self, folder: &Path) -> bool {
        self.within(folder)
            .is_some_and(|(names, relative)| !names.is_empty() && !self.excludes(&names, relative))
    }

    /// `path`'s names below the project's folder, and the path relative to it.
    fn within<'a>(&self, path: &'a Path) -> Option<(Vec<&'a str>, &'a Path)> {
        let relative = path.strip_prefix(&self.dir).ok()?;
        let names = relative
            .components()
            .filter_map(|component| match component {
                Component::Normal(name) => name.to_str(),
                _ => None,
            })
            .collect();
        Some((names, relative))
    }

    /// Whether a path of these names is in a build folder, hidden or ignored.
    fn excludes(&self, names: &[&str], relative: &Path) -> bool {
        names
            .iter()
            .any(|name| BUILD_FOLDERS.contains(name) || name.starts_with('.'))
            || self
                .ignored
                .iter()
                .any(|pattern| pattern.ignores(names, relative))
    }
}

/// A file an editor or a build writes, never a source.
fn is_generated(file: &str) -> bool {
    file.starts_with('.')
        || file.ends_with('~')
        || [".wasm", ".tmp", ".swp", ".swx"]
            .iter()
            .any(|ending| file.ends_with(ending))
}

impl Pattern {
    fn parse(line: &str) -> Option<Pattern> {
        let line = line.trim();
        // Comments, blanks and negations (which only re-include) change nothing here.
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            return None;
        }
        let line = line.trim_end_matches('/');
        if let Some(rooted) = line.strip_prefix('/') {
            return Some(Pattern::Rooted(rooted.to_owned()));
        }
        if let Some(suffix) = line.strip_prefix('*')
            && !suffix.contains(['*', '/', '?', '['])
        {
            return Some(Pattern::Suffix(suffix.to_owned()));
        }
        (!line.contains(['*', '/', '?', '['])).then(|| Pattern::Name(line.to_owned()))
    }

    fn ignores(&self, names: &[&str], relative: &Path) -> bool {
        match self {
            Pattern::Name(name) => names.contains(&name.as_str()),
            Pattern::Rooted(path) => relative.starts_with(path),
            Pattern::Suffix(suffix) => names.iter().any(|name| name.ends_with(suffix.as_str())),
        }
    }
}

/// Keeps the watch going for as long as it lives.
pub struct Dev {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Dev {
    /// Stops the loop, and with it a running build (`kill_on_drop`).
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Runs `./build` once now and again after every change to the project's
/// sources, reporting each outcome to `reports`. `cache_dir` is the compile
/// cache the server uses, which the build's `corral compile` fills.
/// Must be called inside a tokio runtime.
pub fn start(project: Project, reports: Arc<Reports>, cache_dir: Option<PathBuf>) -> Result<Dev> {
    let (events, mut changes) = mpsc::unbounded_channel();
    let filter = project.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
        let relevant = match event {
            Ok(event) => {
                matches!(
                    event.kind,
                    EventKind::Create(_)
                        | EventKind::Remove(_)
                        | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Name(_))
                        | EventKind::Modify(ModifyKind::Any)
                ) && event.paths.iter().any(|path| filter.is_source(path))
            }
            // Lost events: a change may be among them.
            Err(_) => true,
        };
        if relevant {
            let _ = events.send(());
        }
    })
    .context("starting the file watcher")?;
    watch_sources(&mut watcher, &project)?;

    let task = tokio::spawn(async move {
        let builder = Builder {
            project,
            reports,
            cache_dir,
        };
        builder.build().await;
        while changes.recv().await.is_some() {
            // Quiet for a moment: one build for a burst of saves.
            loop {
                match tokio::time::timeout(QUIET, changes.recv()).await {
                    Ok(Some(())) => continue,
                    Ok(None) => return,
                    Err(_quiet) => break,
                }
            }
            builder.build().await;
            // Changes saved during the build are still queued: they start
            // the next round.
        }
    });
    Ok(Dev {
        _watcher: watcher,
        task,
    })
}

/// The project's folder itself (for files at its root), and each folder in
/// it that holds sources, recursively; not build and dependency folders,
/// which can be large (a Rust project's `target/`).
fn watch_sources(watcher: &mut notify::RecommendedWatcher, project: &Project) -> Result<()> {
    let dir = project.dir();
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .with_context(|| format!("watching {}", dir.display()))?;
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() && project.may_hold_sources(&path) {
            watcher
                .watch(&path, RecursiveMode::Recursive)
                .with_context(|| format!("watching {}", path.display()))?;
        }
    }
    Ok(())
}

struct Builder {
    project: Project,
    reports: Arc<Reports>,
    cache_dir: Option<PathBuf>,
}

impl Builder {
    /// Runs `./build` to its end, its output on stderr, and reports how it went.
    async fn build(&self) {
        let dir = self.project.dir();
        self.reports
            .report(LogLevel::Info, format!("dev: building {}", dir.display()));
        let started = Instant::now();
        let mut command = tokio::process::Command::new(dir.join("build"));
        command
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            // A build still running when corral dev ends ends with it.
            .kill_on_drop(true);
        // The build's `corral` steps run this very corral, with the compile
        // cache it serves from, so the first call after a build is fast.
        if let Ok(me) = std::env::current_exe() {
            command.env("CORRAL", me);
        }
        if let Some(cache_dir) = &self.cache_dir {
            command.env("CORRAL_CACHE_DIR", cache_dir);
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(err) => {
                self.reports.report(
                    LogLevel::Error,
                    format!("dev: cannot run {}/build: {err}", dir.display()),
                );
                return;
            }
        };
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(REPORTED_TAIL)));
        let stdout = forward(child.stdout.take(), tail.clone());
        let stderr = forward(child.stderr.take(), tail.clone());
        let (status, (), ()) = tokio::join!(child.wait(), stdout, stderr);
        let seconds = started.elapsed().as_secs_f64();
        match status {
            // At notice, and a failure at warning: both reach a client that
            // set no log level (see corral_mcp's HOST_REPORTS_BY_DEFAULT).
            Ok(status) if status.success() => self.reports.report(
                LogLevel::Notice,
                format!("dev: ./build succeeded in {seconds:.1} s; serving what it built"),
            ),
            Ok(status) => {
                let tail = tail.lock().unwrap();
                let output = String::from_utf8_lossy(tail.as_slices().0).into_owned()
                    + &String::from_utf8_lossy(tail.as_slices().1);
                self.reports.report(
                    LogLevel::Warning,
                    format!(
                        "dev: ./build failed ({status}) after {seconds:.1} s; the last good build \
                         keeps serving. Fix the error and save to build again. Its output ended \
                         with:\n{}",
                        output.trim_end()
                    ),
                );
            }
            Err(err) => self.reports.report(
                LogLevel::Error,
                format!("dev: waiting for ./build failed: {err}"),
            ),
        }
    }
}

/// Copies a pipe of the build to stderr as it comes, keeping its last
/// [`REPORTED_TAIL`] bytes (both pipes together) in `tail`.
async fn forward(pipe: Option<impl tokio::io::AsyncRead + Unpin>, tail: Arc<Mutex<VecDeque<u8>>>) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut buffer = [0u8; 8192];
    loop {
        let read = match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let chunk = &buffer[..read];
        {
            use std::io::Write as _;
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(chunk);
            let _ = stderr.flush();
        }
        let mut tail = tail.lock().unwrap();
        tail.extend(chunk);
        let excess = tail.len().saturating_sub(REPORTED_TAIL);
        tail.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(gitignore: &str) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let build = dir.path().join("build");
        std::fs::write(&build, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&build, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join(".gitignore"), gitignore).unwrap();
        let project = Project::open(dir.path()).unwrap();
        (dir, project)
    }

    #[test]
    fn sources_are_what_the_gitignore_and_the_build_folders_leave() {
        let (_dir, project) = project("/target/\n/greet.wasm\n__pycache__/\n*.o\n# note\n");
        let root = project.dir().to_owned();
        for source in [
            "src/lib.rs",
            "Cargo.toml",
            "app.py",
            "plugin.js",
            "greet.toml",
            "build",
        ] {
            assert!(project.is_source(&root.join(source)), "{source}");
        }
        for generated in [
            "target/release/x",
            "greet.wasm",
            "greet.wasm.tmp",
            "pkg/__pycache__/tool.cpython-311.pyc",
            "src/main.o",
            ".build/core.wasm",
            "node_modules/x/index.js",
            "src/.greeting.c.swp",
            "src/greeting.c~",
            ".git/index",
        ] {
            assert!(!project.is_source(&root.join(generated)), "{generated}");
        }
        assert!(!project.is_source(Path::new("/elsewhere/src/lib.rs")));
    }

    #[test]
    fn folders_to_watch_are_those_that_may_hold_sources() {
        let (_dir, project) = project("/target/\n__pycache__/\ndist\n");
        let root = project.dir().to_owned();
        for folder in ["src", "src/tools", "plugin", "wit"] {
            assert!(project.may_hold_sources(&root.join(folder)), "{folder}");
        }
        for folder in [
            "target",
            "node_modules",
            ".build",
            ".git",
            "dist",
            "pkg/__pycache__",
        ] {
            assert!(!project.may_hold_sources(&root.join(folder)), "{folder}");
        }
        assert!(!project.may_hold_sources(&root));
        assert!(!project.may_hold_sources(Path::new("/elsewhere/src")));
    }

    #[test]
    fn a_folder_without_build_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let err = Project::open(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("has no executable ./build") && err.contains("corral new"),
            "{err}"
        );
    }
}
