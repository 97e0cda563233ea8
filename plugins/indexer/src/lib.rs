//! Corral example plugin: a folder indexer, a long tool that reports its
//! progress and may run as a task.
//!
//! `index_folder` walks a folder of its `[[dirs]]` grant (read-only) and
//! counts its files, bytes and lines of text per extension. It lists the
//! folder first (so that it knows how many files there are), then reads
//! each file, reporting `progress(done, total, message)` as it goes: a
//! client sees progress notifications, or, once the call has become a
//! task, the task's `statusMessage`. The first text file larger than
//! `large_file_bytes` makes it ask the user, once, whether to read such
//! files whole to count their lines (when the client can be asked).
//!
//! Its work is bounded: at most `max_files` files (100,000 at most),
//! `max_depth` levels of subfolders, 100,000 folders, 200 extensions in
//! the result. Symlinks are not followed (the sandbox would refuse those
//! that leave the grant anyway).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant};

use corral_sdk::client;
use corral_sdk::{CallResult, TaskSupport, Tool, ToolError, log, plugin, progress, serde_json};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Files indexed by default, and at most.
const DEFAULT_MAX_FILES: u32 = 10_000;
const MOST_FILES: u32 = 100_000;
/// Levels of subfolders entered by default, and at most.
const DEFAULT_MAX_DEPTH: u32 = 32;
const MOST_DEPTH: u32 = 64;
/// Folders listed at most, whatever the other bounds.
const MOST_FOLDERS: u64 = 100_000;
/// Text files larger than this are read whole only if the user agrees.
const DEFAULT_LARGE_FILE_BYTES: u64 = 16 << 20;
/// The longest pause after each file.
const MOST_PACE_MS: u32 = 1_000;
/// Extensions in the result, the largest first; the rest are summed as one.
const MOST_EXTENSIONS: usize = 200;
/// Extensions in the text summary.
const SUMMARY_EXTENSIONS: usize = 10;
/// The largest files the result names.
const LARGEST: usize = 5;
/// At most one progress report per this long at first (and one at each
/// phase's end)...
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// ... then per this fraction of the time the call has run, so that a long
/// call's reports stay within the host's 1,000 per call: 200 in the first
/// 50 s, then about 200 more each time the call's age is multiplied by e.
const SLOWER_AFTER: u32 = 200;
/// The host forwards at most this many progress reports per call...
const MOST_REPORTS: u32 = 1_000;
/// ... of which the last ones are kept for the phases' ends.
const RESERVED_REPORTS: u32 = 20;
/// Bytes read at a time; a file whose first block holds a NUL byte is binary.
const BLOCK: usize = 64 << 10;

/// What to index, and how far.
#[derive(Deserialize, JsonSchema)]
struct IndexArgs {
    /// The folder to index: a granted folder or a folder inside one, as an
    /// absolute path or relative to the first granted folder (default: the
    /// first granted folder).
    #[serde(default)]
    path: Option<String>,
    /// The most files to index (1-100000, default 10000). A folder with more
    /// is indexed up to this many, and the result says `truncated`.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    max_files: Option<u32>,
    /// How many levels of subfolders to enter (0-64, default 32; 0: only the
    /// folder's own files).
    #[serde(default)]
    #[schemars(range(max = 64))]
    max_depth: Option<u32>,
    /// Text files larger than this many bytes have their lines counted only
    /// if the user agrees, asked once (default 16 MiB). Without a client
    /// that can ask, their lines are not counted.
    #[serde(default)]
    #[schemars(range(min = 1))]
    large_file_bytes: Option<u64>,
    /// A pause after each file, in milliseconds (0-1000, default 0): to watch
    /// the progress (or a task) on a small folder.
    #[serde(default)]
    #[schemars(range(max = 1000))]
    pace_ms: Option<u32>,
}

/// A folder's index.
#[derive(Debug, Default, Serialize, JsonSchema)]
struct Index {
    /// The folder indexed, as the plugin sees it.
    folder: String,
    /// Files indexed.
    files: u64,
    /// Folders entered, the folder itself included.
    folders: u64,
    /// Bytes of the files indexed.
    bytes: u64,
    /// Lines of the text files whose lines were counted.
    lines: u64,
    /// Per extension (lowercase, without the dot; "(none)" for files
    /// without one), the most bytes first.
    extensions: Vec<ExtensionStats>,
    /// The largest files, largest first, relative to the folder.
    largest: Vec<FileSize>,
    /// Whether `max_files` or the folder bound stopped the walk before it
    /// saw every file.
    truncated: bool,
    /// What was not indexed, or not read whole.
    skipped: Skipped,
}

/// The files of one extension.
#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
struct ExtensionStats {
    extension: String,
    files: u64,
    bytes: u64,
    /// Lines of its text files whose lines were counted.
    lines: u64,
    /// Files with a NUL byte in their first 64 KiB: no lines counted.
    binary_files: u64,
}

/// One file and its size.
#[derive(Debug, Clone, Serialize, JsonSchema)]
struct FileSize {
    path: String,
    bytes: u64,
}

/// What the index left out.
#[derive(Debug, Default, Serialize, JsonSchema)]
struct Skipped {
    /// Folders deeper than `max_depth`, not entered.
    too_deep: u64,
    /// Symlinks, not followed.
    symlinks: u64,
    /// Entries that are neither files, folders nor symlinks.
    other: u64,
    /// Files and folders that could not be read.
    unreadable: u64,
    /// Large text files whose lines were not counted.
    large_files_uncounted: u64,
}

/// The bounds of one index.
struct Bounds {
    max_files: u64,
    max_depth: u32,
    large_file_bytes: u64,
    pace: Duration,
}

fn index_folder(args: IndexArgs) -> Result<CallResult, ToolError> {
    let max_files = args.max_files.unwrap_or(DEFAULT_MAX_FILES);
    if !(1..=MOST_FILES).contains(&max_files) {
        return Err(ToolError::new(format!(
            "max_files must be between 1 and {MOST_FILES}, got {max_files}"
        )));
    }
    let max_depth = args.max_depth.unwrap_or(DEFAULT_MAX_DEPTH);
    if max_depth > MOST_DEPTH {
        return Err(ToolError::new(format!(
            "max_depth must be at most {MOST_DEPTH}, got {max_depth}"
        )));
    }
    let pace_ms = args.pace_ms.unwrap_or(0);
    if pace_ms > MOST_PACE_MS {
        return Err(ToolError::new(format!(
            "pace_ms must be at most {MOST_PACE_MS}, got {pace_ms}"
        )));
    }
    let large_file_bytes = args.large_file_bytes.unwrap_or(DEFAULT_LARGE_FILE_BYTES);
    if large_file_bytes == 0 {
        return Err(ToolError::new("large_file_bytes must be at least 1"));
    }
    let folder = folder_to_index(args.path.as_deref(), &granted_folders())?;
    let bounds = Bounds {
        max_files: max_files.into(),
        max_depth,
        large_file_bytes,
        pace: Duration::from_millis(pace_ms.into()),
    };
    let index = build_index(&folder, &bounds, &mut ask_the_user);
    let text = summary(&index);
    let structured = serde_json::to_value(&index)
        .map_err(|err| ToolError::new(format!("internal error: {err}")))?;
    Ok(CallResult::new().text(text).structured(structured))
}

/// The guest paths of the plugin's `[[dirs]]` grants, in the manifest's
/// order (none natively, in unit tests).
fn granted_folders() -> Vec<String> {
    #[cfg(target_family = "wasm")]
    {
        wasip2::filesystem::preopens::get_directories()
            .into_iter()
            .map(|(_, path)| path)
            .collect()
    }
    #[cfg(not(target_family = "wasm"))]
    Vec::new()
}

/// The folder `path` names: absolute as given, relative to the first
/// granted folder otherwise (which is also the default).
fn folder_to_index(path: Option<&str>, granted: &[String]) -> Result<PathBuf, ToolError> {
    let first = granted.first();
    let folder = match (path, first) {
        (Some(path), _) if path.starts_with('/') => PathBuf::from(path),
        (Some(path), Some(first)) => Path::new(first).join(path),
        (None, Some(first)) => PathBuf::from(first),
        (_, None) => {
            return Err(ToolError::new(
                "no folder is granted: add a [[dirs]] entry to the plugin's manifest \
                 (indexer.toml), e.g. host = \"/home/me/projects\", guest = \"/folder\", \
                 mode = \"ro\"",
            ));
        }
    };
    match std::fs::metadata(&folder) {
        Ok(meta) if meta.is_dir() => Ok(folder),
        Ok(_) => Err(ToolError::new(format!(
            "{} is not a folder",
            folder.display()
        ))),
        Err(err) => Err(ToolError::new(format!(
            "cannot open {}: {err} (the granted folders are: {})",
            folder.display(),
            if granted.is_empty() {
                "none".to_owned()
            } else {
                granted.join(", ")
            }
        ))),
    }
}

/// The question about large text files, asked once per call, at the end:
/// how many were put off, their bytes, the threshold. True reads them whole.
type AskLarge<'a> = dyn FnMut(u64, u64, u64) -> bool + 'a;

/// Asks the user whether to read the large text files whole, when the
/// client can be asked; otherwise, or if asking fails, they are not.
fn ask_the_user(files: u64, bytes: u64, threshold: u64) -> bool {
    if !client::capabilities().elicitation_form {
        return false;
    }
    let question =
        client::Confirm::new(large_files_question(files, bytes, threshold)).key("read_large_files");
    match client::ask(question) {
        Ok(yes) => yes,
        Err(err) => {
            log::warn(format!(
                "could not ask whether to read the large files ({err}): their lines are not counted"
            ));
            false
        }
    }
}

fn large_files_question(files: u64, bytes: u64, threshold: u64) -> String {
    let (these, it, its, size) = if files == 1 {
        ("1 text file is".to_owned(), "it", "its", "its size is")
    } else {
        (
            format!("{} text files are", thousands(files)),
            "them",
            "their",
            "their sizes are",
        )
    };
    format!(
        "Every other file is indexed. {these} larger than {} ({} in all): read {it} whole to \
         count {its} lines too? (If not, only {size} counted.)",
        human_bytes(threshold),
        human_bytes(bytes),
    )
}

/// Reports progress in increasing values (the protocol drops any other),
/// less often as the call goes on, and at most [`MOST_REPORTS`] times. Its
/// unit is a folder listed or a file indexed: while listing, the folders
/// listed so far (with no total); then those and the files indexed, of
/// those and the files found.
struct Reporter {
    started: Instant,
    last: Option<Instant>,
    sent: u32,
    /// The folders listed, once the list is done.
    folders: u64,
    /// What was reported, for unit tests.
    #[cfg(test)]
    reported: Vec<(u64, Option<u64>, String)>,
}

impl Reporter {
    fn new() -> Reporter {
        Reporter {
            started: Instant::now(),
            last: None,
            sent: 0,
            folders: 0,
            #[cfg(test)]
            reported: Vec::new(),
        }
    }

    /// While listing: `folders` listed so far.
    fn listing(&mut self, folders: u64, message: impl FnOnce() -> String) {
        self.send(false, folders, None, message);
    }

    /// While reading: `done` files of `total`; `always` at a phase's end.
    fn files(&mut self, always: bool, done: u64, total: u64, message: impl FnOnce() -> String) {
        let folders = self.folders;
        self.send(always, folders + done, Some(folders + total), message);
    }

    fn send(
        &mut self,
        always: bool,
        done: u64,
        total: Option<u64>,
        message: impl FnOnce() -> String,
    ) {
        let now = Instant::now();
        if !always {
            let every = PROGRESS_EVERY.max(now.duration_since(self.started) / SLOWER_AFTER);
            if self.sent >= MOST_REPORTS - RESERVED_REPORTS
                || self
                    .last
                    .is_some_and(|last| now.duration_since(last) < every)
            {
                return;
            }
        }
        if self.sent >= MOST_REPORTS {
            return;
        }
        self.sent += 1;
        self.last = Some(now);
        let message = message();
        progress(done as f64, total.map(|t| t as f64), Some(&message));
        #[cfg(test)]
        self.reported.push((done, total, message));
    }
}

/// Indexes `folder` within `bounds`; `ask_large` decides, once, whether
/// large text files are read whole.
fn build_index(folder: &Path, bounds: &Bounds, ask_large: &mut AskLarge) -> Index {
    build_index_reporting(folder, bounds, ask_large, &mut Reporter::new())
}

fn build_index_reporting(
    folder: &Path,
    bounds: &Bounds,
    ask_large: &mut AskLarge,
    reporter: &mut Reporter,
) -> Index {
    let mut index = Index {
        folder: folder.display().to_string(),
        ..Index::default()
    };

    // First the list, so that the progress has a total.
    let files = list(folder, bounds, &mut index, reporter);
    let total = files.len() as u64;
    reporter.folders = index.folders;
    reporter.files(true, 0, total, || {
        format!(
            "found {} in {}{}; reading them",
            count(total, "file"),
            count(index.folders, "folder"),
            if index.truncated { " (truncated)" } else { "" }
        )
    });

    let mut extensions: BTreeMap<String, ExtensionStats> = BTreeMap::new();
    let mut largest: Vec<FileSize> = Vec::new();
    // Large text files, put off until every other file is indexed: their
    // path, extension and size.
    let mut large: Vec<(&Path, String, u64)> = Vec::new();
    let mut done = 0;
    for (path, bytes) in &files {
        let relative = relative_to(folder, path);
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_else(|| "(none)".to_owned());
        match first_look(path, *bytes, bounds.large_file_bytes) {
            Err(err) => {
                log::warn(format!("{relative}: {err}"));
                index.skipped.unreadable += 1;
            }
            Ok(look) => {
                let stats = extensions
                    .entry(extension.clone())
                    .or_insert_with(|| ExtensionStats {
                        extension: extension.clone(),
                        ..ExtensionStats::default()
                    });
                stats.files += 1;
                stats.bytes += bytes;
                index.files += 1;
                index.bytes += bytes;
                keep_largest(&mut largest, &relative, *bytes);
                match look {
                    Look::Binary => stats.binary_files += 1,
                    Look::Lines(lines) => {
                        stats.lines += lines;
                        index.lines += lines;
                    }
                    Look::Large => {
                        large.push((path, extension, *bytes));
                        // Done once read whole, or once the user said no.
                        continue;
                    }
                }
            }
        }
        done += 1;
        reporter.files(done == total, done, total, || {
            let put_off = match large.len() {
                0 => String::new(),
                n => format!(" ({n} large put off)"),
            };
            format!("indexed {done} of {total} files{put_off}: {relative}")
        });
        if !bounds.pace.is_zero() {
            sleep(bounds.pace);
        }
    }

    if !large.is_empty() {
        let bytes = large.iter().map(|(_, _, bytes)| bytes).sum();
        let files = large.len() as u64;
        reporter.files(true, done, total, || {
            format!(
                "indexed {done} of {total} files; {} ({}) left: read {} whole?",
                count(files, "large text file"),
                human_bytes(bytes),
                if files == 1 { "it" } else { "them" }
            )
        });
        let read_them = ask_large(files, bytes, bounds.large_file_bytes);
        for (path, extension, _) in large {
            let relative = relative_to(folder, path);
            let lines = if read_them {
                count_lines(path)
                    .inspect_err(|err| log::warn(format!("{relative}: {err}")))
                    .ok()
            } else {
                None
            };
            match lines {
                Some(lines) => {
                    if let Some(stats) = extensions.get_mut(&extension) {
                        stats.lines += lines;
                    }
                    index.lines += lines;
                }
                None => index.skipped.large_files_uncounted += 1,
            }
            done += 1;
            reporter.files(done == total, done, total, || {
                let what = if read_them { "read" } else { "left" };
                format!("indexed {done} of {total} files: {relative} ({what} whole)")
            });
            if read_them && !bounds.pace.is_zero() {
                sleep(bounds.pace);
            }
        }
    }

    let mut extensions: Vec<ExtensionStats> = extensions.into_values().collect();
    extensions.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(b.files.cmp(&a.files))
            .then(a.extension.cmp(&b.extension))
    });
    if extensions.len() > MOST_EXTENSIONS {
        let rest = extensions.split_off(MOST_EXTENSIONS - 1);
        let mut other = ExtensionStats {
            extension: format!("({} other extensions)", rest.len()),
            ..ExtensionStats::default()
        };
        for stats in rest {
            other.files += stats.files;
            other.bytes += stats.bytes;
            other.lines += stats.lines;
            other.binary_files += stats.binary_files;
        }
        extensions.push(other);
    }
    index.extensions = extensions;
    index.largest = largest;
    index
}

/// Lists the files under `folder` with their sizes, in name order, within
/// `bounds`; counts folders and what it skips into `index`.
fn list(
    folder: &Path,
    bounds: &Bounds,
    index: &mut Index,
    reporter: &mut Reporter,
) -> Vec<(PathBuf, u64)> {
    let mut files = Vec::new();
    // Folders still to list, the next one last, with their depth.
    let mut pending = vec![(folder.to_path_buf(), 0u32)];
    while let Some((dir, depth)) = pending.pop() {
        index.folders += 1;
        let mut entries: Vec<_> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries.filter_map(Result::ok).collect(),
            Err(err) => {
                log::warn(format!("{}: {err}", dir.display()));
                index.skipped.unreadable += 1;
                continue;
            }
        };
        entries.sort_by_key(|entry| entry.file_name());
        let mut subfolders = Vec::new();
        for entry in entries {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                index.skipped.unreadable += 1;
                continue;
            };
            let kind = meta.file_type();
            if kind.is_symlink() {
                index.skipped.symlinks += 1;
            } else if kind.is_dir() {
                if depth >= bounds.max_depth {
                    index.skipped.too_deep += 1;
                } else {
                    subfolders.push(path);
                }
            } else if kind.is_file() {
                if files.len() as u64 == bounds.max_files {
                    index.truncated = true;
                    return files;
                }
                files.push((path, meta.len()));
            } else {
                index.skipped.other += 1;
            }
        }
        if index.folders + pending.len() as u64 + subfolders.len() as u64 > MOST_FOLDERS {
            index.truncated = true;
            let room = MOST_FOLDERS.saturating_sub(index.folders + pending.len() as u64);
            subfolders.truncate(room as usize);
        }
        // Reversed, so that the first by name is listed next.
        pending.extend(subfolders.into_iter().rev().map(|path| (path, depth + 1)));
        // Not after the last folder: the list's end is reported with the
        // folders' count, which must be larger.
        if !pending.is_empty() {
            let found = files.len() as u64;
            reporter.listing(index.folders, || {
                format!(
                    "listing: {} in {} so far",
                    count(found, "file"),
                    count(index.folders, "folder")
                )
            });
        }
    }
    files
}

/// What the first look at a file told.
#[derive(Debug, PartialEq)]
enum Look {
    /// A text file, read whole: its lines.
    Lines(u64),
    /// A NUL byte in its first block.
    Binary,
    /// A text file over the large file threshold, not read further.
    Large,
}

/// Reads the first block of `path` (of `bytes` bytes): a binary file stops
/// there, and so does a text file over `large` bytes; another text file is
/// read whole and its lines counted.
fn first_look(path: &Path, bytes: u64, large: u64) -> std::io::Result<Look> {
    let mut file = File::open(path)?;
    let mut block = vec![0u8; BLOCK];
    let n = read_block(&mut file, &mut block)?;
    let first = &block[..n];
    if first.contains(&0) {
        return Ok(Look::Binary);
    }
    if bytes > large {
        return Ok(Look::Large);
    }
    let mut lines = Lines::default();
    lines.add(first);
    while let n @ 1.. = read_block(&mut file, &mut block)? {
        lines.add(&block[..n]);
    }
    Ok(Look::Lines(lines.total()))
}

/// The lines of `path`, read whole.
fn count_lines(path: &Path) -> std::io::Result<u64> {
    let mut file = File::open(path)?;
    let mut block = vec![0u8; BLOCK];
    let mut lines = Lines::default();
    while let n @ 1.. = read_block(&mut file, &mut block)? {
        lines.add(&block[..n]);
    }
    Ok(lines.total())
}

/// Fills `block` as far as the file goes: fewer bytes only at its end.
fn read_block(file: &mut File, block: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < block.len() {
        match file.read(&mut block[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// Counts lines across blocks: a last line without a newline counts too.
#[derive(Default)]
struct Lines {
    newlines: u64,
    last: Option<u8>,
}

impl Lines {
    fn add(&mut self, bytes: &[u8]) {
        self.newlines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        if let Some(&last) = bytes.last() {
            self.last = Some(last);
        }
    }

    fn total(&self) -> u64 {
        self.newlines + u64::from(self.last.is_some_and(|b| b != b'\n'))
    }
}

/// `path` as a path inside `folder`.
fn relative_to(folder: &Path, path: &Path) -> String {
    path.strip_prefix(folder)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Keeps the [`LARGEST`] largest files seen, largest first.
fn keep_largest(largest: &mut Vec<FileSize>, path: &str, bytes: u64) {
    if largest.len() == LARGEST && largest.last().is_some_and(|l| l.bytes >= bytes) {
        return;
    }
    let at = largest.partition_point(|l| l.bytes >= bytes);
    largest.insert(
        at,
        FileSize {
            path: path.to_owned(),
            bytes,
        },
    );
    largest.truncate(LARGEST);
}

/// The index in a few lines, for the model and for clients that show only
/// text.
fn summary(index: &Index) -> String {
    let mut text = format!(
        "{}: {} in {}, {}, {} of text{}.",
        index.folder,
        count(index.files, "file"),
        count(index.folders, "folder"),
        human_bytes(index.bytes),
        count(index.lines, "line"),
        if index.truncated {
            " (truncated: the folder holds more files than were indexed)"
        } else {
            ""
        }
    );
    if !index.extensions.is_empty() {
        let mut rows = vec![["extension", "files", "lines", "bytes"].map(String::from)];
        for stats in index.extensions.iter().take(SUMMARY_EXTENSIONS) {
            let lines = if stats.binary_files == stats.files {
                "-".to_owned()
            } else {
                thousands(stats.lines)
            };
            rows.push([
                stats.extension.clone(),
                thousands(stats.files),
                lines,
                human_bytes(stats.bytes),
            ]);
        }
        let width = |column: usize| rows.iter().map(|row| row[column].chars().count()).max();
        let widths = [0, 1, 2, 3].map(|column| width(column).unwrap_or(0));
        text.push('\n');
        for row in &rows {
            text.push_str(&format!(
                "\n{:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}",
                row[0],
                row[1],
                row[2],
                row[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
                w3 = widths[3],
            ));
        }
        if index.extensions.len() > SUMMARY_EXTENSIONS {
            text.push_str(&format!(
                "\n({} more extensions in the structured result)",
                index.extensions.len() - SUMMARY_EXTENSIONS
            ));
        }
    }
    let skipped = &index.skipped;
    let notes: Vec<String> = [
        (skipped.too_deep, "folders too deep"),
        (skipped.symlinks, "symlinks"),
        (skipped.other, "other entries"),
        (skipped.unreadable, "unreadable"),
        (
            skipped.large_files_uncounted,
            "large text files without a line count",
        ),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{} {what}", thousands(n)))
    .collect();
    if !notes.is_empty() {
        text.push_str(&format!("\n\nSkipped: {}.", notes.join(", ")));
    }
    text
}

/// `n` things: "1 file", "1,234 files".
fn count(n: u64, thing: &str) -> String {
    match n {
        1 => format!("1 {thing}"),
        n => format!("{} {thing}s", thousands(n)),
    }
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size in B, KiB, MiB or GiB, one decimal past bytes.
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

plugin! {
    Tool::new("index_folder", index_folder)
        .title("Index a folder")
        .description(
            "Walk a granted folder (read-only) and count its files, bytes and lines of text \
             per extension, with the largest files. It lists the folder, then reads every \
             file, reporting progress as it goes; a large folder takes a while (a client \
             that takes tasks gets a task to poll). Bounded by max_files and max_depth; \
             symlinks are not followed; binary files (a NUL byte in their first 64 KiB) \
             are counted by size only. The first text file larger than large_file_bytes \
             makes it ask the user, once, whether to read such files whole.",
        )
        .output_schema::<Index>()
        // A task when the client takes one (2026-07-28: once the call runs
        // past the manifest's task-after; 2025-11-25: when the client asks
        // for one); otherwise a call.
        .task_support(TaskSupport::Optional)
        .read_only()
        .idempotent()
        .closed_world(),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> Bounds {
        Bounds {
            max_files: 100,
            max_depth: 8,
            large_file_bytes: DEFAULT_LARGE_FILE_BYTES,
            pace: Duration::ZERO,
        }
    }

    fn never(_: u64, _: u64, _: u64) -> bool {
        panic!("asked about large files")
    }

    /// a.rs (2 lines), b.md (1 line, no newline), bin.dat (binary),
    /// sub/c.rs (3 lines), sub/deeper/d.txt (empty), README (1 line).
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.rs"), "fn a() {}\nfn b() {}\n").unwrap();
        std::fs::write(root.join("b.md"), "# title").unwrap();
        std::fs::write(root.join("bin.dat"), [1u8, 0, 2, 3]).unwrap();
        std::fs::write(root.join("README"), "hello\n").unwrap();
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::write(root.join("sub/c.RS"), "1\n2\n3\n").unwrap();
        std::fs::write(root.join("sub/deeper/d.txt"), "").unwrap();
        dir
    }

    fn stats<'a>(index: &'a Index, extension: &str) -> &'a ExtensionStats {
        index
            .extensions
            .iter()
            .find(|s| s.extension == extension)
            .unwrap_or_else(|| panic!("no {extension} in {index:?}"))
    }

    #[test]
    fn counts_files_lines_and_bytes_per_extension() {
        let dir = tree();
        let index = build_index(dir.path(), &bounds(), &mut never);
        assert_eq!(index.files, 6);
        assert_eq!(index.folders, 3);
        assert_eq!(index.lines, 2 + 1 + 1 + 3);
        assert_eq!(index.bytes, 20 + 7 + 4 + 6 + 6);
        let rs = stats(&index, "rs");
        assert_eq!((rs.files, rs.lines, rs.bytes), (2, 5, 26));
        assert_eq!(stats(&index, "dat").binary_files, 1);
        assert_eq!(stats(&index, "(none)").lines, 1);
        assert_eq!(stats(&index, "txt").lines, 0);
        assert_eq!(index.extensions[0].extension, "rs");
        assert_eq!(index.largest[0].path, "a.rs");
        assert!(!index.truncated);
        let text = summary(&index);
        assert!(
            text.contains("6 files in 3 folders, 43 B, 7 lines of text."),
            "{text}"
        );
        assert!(
            text.contains("\nextension  files  lines  bytes\nrs             2      5   26 B\n"),
            "{text}"
        );
        assert!(text.contains("\ndat            1      -    4 B"), "{text}");
    }

    #[test]
    fn the_bounds_hold() {
        let dir = tree();
        let shallow = Bounds {
            max_depth: 0,
            ..bounds()
        };
        let index = build_index(dir.path(), &shallow, &mut never);
        assert_eq!(
            (index.files, index.folders, index.skipped.too_deep),
            (4, 1, 1)
        );
        let few = Bounds {
            max_files: 3,
            ..bounds()
        };
        let index = build_index(dir.path(), &few, &mut never);
        assert_eq!(index.files, 3);
        assert!(index.truncated);
    }

    #[test]
    fn large_text_files_are_read_whole_only_if_the_user_agrees() {
        let dir = tree();
        let small = Bounds {
            large_file_bytes: 6,
            ..bounds()
        };
        let mut asked = Vec::new();
        let index = build_index(dir.path(), &small, &mut |files, bytes, threshold| {
            asked.push((files, bytes, threshold));
            false
        });
        // Asked once, at the end, of a.rs (20 bytes) and b.md (7 bytes):
        // README and sub/c.RS are 6 bytes, bin.dat is binary.
        assert_eq!(asked, vec![(2, 27, 6)]);
        assert_eq!(index.skipped.large_files_uncounted, 2);
        assert_eq!(index.lines, 1 + 3);
        assert_eq!((index.files, index.bytes), (6, 43));
        let index = build_index(dir.path(), &small, &mut |_, _, _| true);
        assert_eq!(index.lines, 7);
        assert_eq!(stats(&index, "rs").lines, 5);
        assert_eq!(index.skipped.large_files_uncounted, 0);
        assert_eq!(
            large_files_question(2, 27, 6),
            "Every other file is indexed. 2 text files are larger than 6 B (27 B in all): \
             read them whole to count their lines too? (If not, only their sizes are counted.)"
        );
    }

    #[test]
    fn progress_increases_and_ends_at_its_total() {
        let dir = tree();
        let paced = Bounds {
            // Past PROGRESS_EVERY: every file is reported.
            pace: Duration::from_millis(260),
            large_file_bytes: 6,
            ..bounds()
        };
        let mut reporter = Reporter::new();
        build_index_reporting(dir.path(), &paced, &mut |_, _, _| true, &mut reporter);
        let reported = reporter.reported;
        let messages: Vec<&str> = reported.iter().map(|(_, _, m)| m.as_str()).collect();
        // Listing: 2 of the 3 folders (not the last, so that the list's end
        // is larger); then the 3 folders and 6 files.
        assert_eq!(reported[0].0, 1, "{messages:?}");
        assert_eq!(reported[0].1, None);
        assert!(messages.contains(&"found 6 files in 3 folders; reading them"));
        assert!(
            messages.contains(
                &"indexed 4 of 6 files; 2 large text files (27 B) left: read them whole?"
            )
        );
        assert_eq!(
            *reported.last().unwrap(),
            (
                9,
                Some(9),
                "indexed 6 of 6 files: b.md (read whole)".to_owned()
            )
        );
        // Increasing, but for the question, which repeats the last file's.
        let mut values: Vec<u64> = reported.iter().map(|(done, _, _)| *done).collect();
        values.dedup();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{reported:?}");
        assert_eq!(values.len(), reported.len() - 1, "{reported:?}");
    }

    #[test]
    fn lines_are_counted_across_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("long.txt");
        let text = "x\n".repeat(BLOCK) + "last";
        std::fs::write(&path, &text).unwrap();
        let bytes = text.len() as u64;
        assert_eq!(
            first_look(&path, bytes, bytes).unwrap(),
            Look::Lines(BLOCK as u64 + 1)
        );
        assert_eq!(first_look(&path, bytes, bytes - 1).unwrap(), Look::Large);
        assert_eq!(count_lines(&path).unwrap(), BLOCK as u64 + 1);
    }

    #[test]
    fn the_folder_is_a_granted_one_or_inside_one() {
        let dir = tree();
        let root = dir.path().display().to_string();
        let granted = vec![root.clone()];
        assert_eq!(
            folder_to_index(None, &granted).unwrap(),
            PathBuf::from(&root)
        );
        assert_eq!(
            folder_to_index(Some("sub"), &granted).unwrap(),
            dir.path().join("sub")
        );
        let err = folder_to_index(Some("a.rs"), &granted).unwrap_err();
        assert!(err.message().contains("is not a folder"), "{err}");
        let err = folder_to_index(None, &[]).unwrap_err();
        assert!(err.message().contains("no folder is granted"), "{err}");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(count(1, "folder"), "1 folder");
        assert_eq!(count(1000, "line"), "1,000 lines");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(16 << 20), "16.0 MiB");
    }
}
