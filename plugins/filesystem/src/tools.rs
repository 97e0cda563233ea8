//! The fourteen tools, each as the original's handler: validate the
//! path(s), do the file work, answer with the same text (and the same text
//! again as `structuredContent.content`).

use std::fs;
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use corral_sdk::serde_json::json;
use corral_sdk::{CallResult, Content, EmbeddedResource};
use serde::Serialize;

use crate::diff::two_files_patch;
use crate::errors::node_message;
use crate::glob::Glob;
use crate::paths::{join, relative};
use crate::schemas::*;
use crate::text::{file_url, format_size, head, js_date, locale_compare, pad_end, pad_start, tail};
use crate::validate::Allowed;

type Answer = Result<CallResult, String>;

/// The allowed directories of this call.
fn allowed() -> Allowed {
    #[cfg(target_family = "wasm")]
    {
        Allowed::from_preopens()
    }
    #[cfg(not(target_family = "wasm"))]
    {
        // Natively (unit tests) there are no preopens: nothing is allowed.
        Allowed {
            dirs: Vec::new(),
            writable: Vec::new(),
        }
    }
}

/// A text answer, also as `{"content": text}`.
fn text(text: String) -> Answer {
    let structured = json!({ "content": text });
    Ok(CallResult::new().text(text).structured(structured))
}

/// JavaScript's truthiness of an optional number.
fn truthy(value: Option<f64>) -> bool {
    value.is_some_and(|v| v != 0.0 && !v.is_nan())
}

/// `fs.readFile(path, 'utf-8')`: invalid UTF-8 reads as U+FFFD.
fn read_text(path: &str) -> Result<String, String> {
    read_bytes(path).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// `fs.readFile(path)`, with Node's errors: a directory opens but does
/// not read.
fn read_bytes(path: &str) -> Result<Vec<u8>, String> {
    if fs::metadata(path).is_ok_and(|meta| meta.is_dir()) {
        return Err(is_a_directory());
    }
    fs::read(path).map_err(|err| match err.kind() {
        io::ErrorKind::IsADirectory => is_a_directory(),
        _ => node_message(&err, "open", Some(path), None),
    })
}

fn is_a_directory() -> String {
    "EISDIR: illegal operation on a directory, read".into()
}

pub fn read_text_file(args: ReadTextArgs) -> Answer {
    let path = allowed().validate(&args.path)?;
    if truthy(args.head) && truthy(args.tail) {
        return Err("Cannot specify both head and tail parameters simultaneously".into());
    }
    let content = if let Some(lines) = args.tail.filter(|_| truthy(args.tail)) {
        let size = fs::metadata(&path)
            .map_err(|err| node_message(&err, "stat", Some(&path), None))?
            .len();
        if size == 0 {
            String::new()
        } else {
            let mut file = open_for_reading(&path)?;
            tail(&mut file, size, lines).map_err(|err| read_error(&err, &path))?
        }
    } else if let Some(lines) = args.head.filter(|_| truthy(args.head)) {
        let mut file = open_for_reading(&path)?;
        head(&mut file, lines).map_err(|err| read_error(&err, &path))?
    } else {
        read_text(&path)?
    };
    text(content)
}

fn open_for_reading(path: &str) -> Result<fs::File, String> {
    if fs::metadata(path).is_ok_and(|meta| meta.is_dir()) {
        return Err(is_a_directory());
    }
    fs::File::open(path).map_err(|err| node_message(&err, "open", Some(path), None))
}

fn read_error(err: &io::Error, path: &str) -> String {
    match err.kind() {
        io::ErrorKind::IsADirectory => is_a_directory(),
        _ => node_message(err, "read", Some(path), None),
    }
}

/// The original's MIME types, by lower-cased extension.
fn mime_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    // path.extname: from the last dot, unless the name starts with it.
    let extension = match name.rfind('.') {
        Some(0) | None => String::new(),
        Some(i) => name[i..].to_lowercase(),
    };
    match extension.as_str() {
        ".png" => "image/png",
        ".jpg" | ".jpeg" => "image/jpeg",
        ".gif" => "image/gif",
        ".webp" => "image/webp",
        ".bmp" => "image/bmp",
        ".svg" => "image/svg+xml",
        ".mp3" => "audio/mpeg",
        ".wav" => "audio/wav",
        ".ogg" => "audio/ogg",
        ".flac" => "audio/flac",
        _ => "application/octet-stream",
    }
}

pub fn read_media_file(args: PathArgs) -> Answer {
    let path = allowed().validate(&args.path)?;
    let mime = mime_type(&path);
    let bytes = read_bytes(&path)?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let (content, item) = if let Some(kind) = ["image", "audio"]
        .into_iter()
        .find(|k| mime.starts_with(&format!("{k}/")))
    {
        let item = json!({ "type": kind, "data": data, "mimeType": mime });
        let content = if kind == "image" {
            Content::image(bytes, mime)
        } else {
            Content::audio(bytes, mime)
        };
        (content, item)
    } else {
        let uri = file_url(&path);
        let item = json!({ "type": "resource", "resource": { "uri": uri, "mimeType": mime, "blob": data } });
        (
            EmbeddedResource::blob(uri, bytes).mime_type(mime).into(),
            item,
        )
    };
    Ok(CallResult::new()
        .with(content)
        .structured(json!({ "content": [item] })))
}

pub fn read_multiple_files(args: ReadMultipleArgs) -> Answer {
    let allowed = allowed();
    let results: Vec<String> = args
        .paths
        .iter()
        .map(|requested| {
            match allowed
                .validate(requested)
                .and_then(|path| read_text(&path))
            {
                Ok(content) => format!("{requested}:\n{content}\n"),
                Err(message) => format!("{requested}: Error - {message}"),
            }
        })
        .collect();
    text(results.join("\n---\n"))
}

/// 32 random hex digits, for a temporary file's name.
fn random_hex() -> String {
    #[cfg(target_family = "wasm")]
    let bytes = wasip2::random::random::get_random_bytes(16);
    #[cfg(not(target_family = "wasm"))]
    let bytes = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
        .to_le_bytes()
        .to_vec();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Replaces `path`'s content through a temporary file renamed over it, as
/// the original does (a reader never sees half a file). WASI has no
/// `chmod`, so unlike the original the file's permission bits are not
/// carried over: the new file gets the host's defaults.
fn replace_file(path: &str, content: &str) -> Result<(), String> {
    fs::metadata(path).map_err(|err| node_message(&err, "stat", Some(path), None))?;
    let temporary = format!("{path}.{}.tmp", random_hex());
    let written = fs::write(&temporary, content)
        .map_err(|err| node_message(&err, "open", Some(&temporary), None))
        .and_then(|()| {
            fs::rename(&temporary, path)
                .map_err(|err| node_message(&err, "rename", Some(&temporary), Some(path)))
        });
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

pub fn write_file(args: WriteArgs) -> Answer {
    let allowed = allowed();
    let path = allowed.validate(&args.path)?;
    allowed.check_writable(&path)?;
    // Exclusive creation first, as the original: an existing file (or
    // symlink) is replaced by rename rather than written through.
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(mut file) => file
            .write_all(args.content.as_bytes())
            .map_err(|err| node_message(&err, "write", Some(&path), None))?,
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            replace_file(&path, &args.content)?
        }
        Err(err) => return Err(node_message(&err, "open", Some(&path), None)),
    }
    text(format!("Successfully wrote to {}", args.path))
}

/// JavaScript's `/^\s*/` match.
fn leading_space(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The original's `applyFileEdits` up to the diff: each edit replaces the
/// first exact occurrence, or else the first run of lines equal to it up
/// to surrounding whitespace (re-indented like the first of them).
fn apply_edits(content: &str, edits: &[Edit]) -> Result<String, String> {
    let mut modified = content.to_string();
    for edit in edits {
        let old = edit.old_text.replace("\r\n", "\n");
        let new = edit.new_text.replace("\r\n", "\n");
        if modified.contains(&old) {
            modified = modified.replacen(&old, &new, 1);
            continue;
        }
        let old_lines: Vec<&str> = old.split('\n').collect();
        let mut content_lines: Vec<String> = modified.split('\n').map(String::from).collect();
        let mut found = false;
        let last_start = content_lines.len() as isize - old_lines.len() as isize;
        for i in 0..=last_start.max(-1) {
            let i = i as usize;
            if last_start < 0 {
                break;
            }
            let window = &content_lines[i..i + old_lines.len()];
            if !old_lines
                .iter()
                .zip(window)
                .all(|(o, c)| o.trim() == c.trim())
            {
                continue;
            }
            let indent = leading_space(&content_lines[i]).to_string();
            let new_lines: Vec<String> = new
                .split('\n')
                .enumerate()
                .map(|(j, line)| {
                    if j == 0 {
                        return format!("{indent}{}", line.trim_start());
                    }
                    let old_indent = old_lines.get(j).map(|l| leading_space(l)).unwrap_or("");
                    let new_indent = leading_space(line);
                    if !old_indent.is_empty() && !new_indent.is_empty() {
                        let relative = new_indent.chars().count() as isize
                            - old_indent.chars().count() as isize;
                        format!(
                            "{indent}{}{}",
                            " ".repeat(relative.max(0) as usize),
                            line.trim_start()
                        )
                    } else {
                        line.to_string()
                    }
                })
                .collect();
            content_lines.splice(i..i + old_lines.len(), new_lines);
            modified = content_lines.join("\n");
            found = true;
            break;
        }
        if !found {
            return Err(format!(
                "Could not find exact match for edit:\n{}",
                edit.old_text
            ));
        }
    }
    Ok(modified)
}

pub fn edit_file(args: EditArgs) -> Answer {
    let allowed = allowed();
    let path = allowed.validate(&args.path)?;
    let content = read_text(&path)?.replace("\r\n", "\n");
    let modified = apply_edits(&content, &args.edits)?;
    let diff = two_files_patch(&path, &content, &modified, "original", "modified");
    let mut fence = 3;
    while diff.contains(&"`".repeat(fence)) {
        fence += 1;
    }
    let fence = "`".repeat(fence);
    let answer = format!("{fence}diff\n{diff}{fence}\n\n");
    if !args.dry_run {
        allowed.check_writable(&path)?;
        replace_file(&path, &modified)?;
    }
    text(answer)
}

pub fn create_directory(args: PathArgs) -> Answer {
    let allowed = allowed();
    let path = allowed.validate(&args.path)?;
    allowed.check_writable(&path)?;
    fs::create_dir_all(&path).map_err(|err| node_message(&err, "mkdir", Some(&path), None))?;
    text(format!("Successfully created directory {}", args.path))
}

/// A directory's entries, by name as Node lists them: name and whether it
/// is a directory (a symlink is not).
fn entries(path: &str) -> Result<Vec<(String, bool)>, String> {
    let listing =
        fs::read_dir(path).map_err(|err| node_message(&err, "scandir", Some(path), None))?;
    let mut out = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|err| node_message(&err, "scandir", Some(path), None))?;
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        out.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
    }
    // Node's readdir is libuv's scandir, which sorts names with strcmp.
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

fn marker(is_dir: bool) -> &'static str {
    if is_dir { "[DIR]" } else { "[FILE]" }
}

pub fn list_directory(args: PathArgs) -> Answer {
    let path = allowed().validate(&args.path)?;
    let lines: Vec<String> = entries(&path)?
        .into_iter()
        .map(|(name, is_dir)| format!("{} {name}", marker(is_dir)))
        .collect();
    text(lines.join("\n"))
}

pub fn list_directory_with_sizes(args: SizesArgs) -> Answer {
    let path = allowed().validate(&args.path)?;
    let detailed: Vec<(String, bool, u64)> = entries(&path)?
        .into_iter()
        .map(|(name, is_dir)| {
            // Followed through symlinks; what cannot be read counts 0.
            let size = fs::metadata(join(&path, &name))
                .map(|meta| meta.len())
                .unwrap_or(0);
            (name, is_dir, size)
        })
        .collect();
    let mut sorted = detailed.clone();
    if args.sort_by.as_deref() == Some("size") {
        sorted.sort_by_key(|entry| std::cmp::Reverse(entry.2));
    } else {
        sorted.sort_by(|a, b| locale_compare(&a.0, &b.0));
    }
    let mut lines: Vec<String> = sorted
        .iter()
        .map(|(name, is_dir, size)| {
            let size = if *is_dir {
                String::new()
            } else {
                pad_start(&format_size(*size), 10)
            };
            format!("{} {} {size}", marker(*is_dir), pad_end(name, 30))
        })
        .collect();
    let files = detailed.iter().filter(|e| !e.1).count();
    let dirs = detailed.len() - files;
    let total: u64 = detailed.iter().filter(|e| !e.1).map(|e| e.2).sum();
    lines.push(String::new());
    lines.push(format!("Total: {files} files, {dirs} directories"));
    lines.push(format!("Combined size: {}", format_size(total)));
    text(lines.join("\n"))
}

#[derive(Serialize)]
struct TreeEntry {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    children: Option<Vec<TreeEntry>>,
}

/// An exclude pattern of `directory_tree`: with a `*`, as it is; without,
/// also the name at any depth and anything below it.
struct Exclude(Vec<Glob>);

impl Exclude {
    fn new(pattern: &str) -> Result<Exclude, String> {
        if pattern.contains('*') {
            return Ok(Exclude(vec![Glob::new(pattern)?]));
        }
        Ok(Exclude(vec![
            Glob::new(pattern)?,
            Glob::new(&format!("**/{pattern}"))?,
            Glob::new(&format!("**/{pattern}/**"))?,
        ]))
    }

    fn matches(&self, path: &str) -> bool {
        self.0.iter().any(|glob| glob.matches(path))
    }
}

fn build_tree(
    allowed: &Allowed,
    root: &str,
    current: &str,
    excludes: &[Exclude],
) -> Result<Vec<TreeEntry>, String> {
    let path = allowed.validate(current)?;
    let mut out = Vec::new();
    for (name, is_dir) in entries(&path)? {
        let entry_path = join(current, &name);
        let relative_path = relative(root, &entry_path);
        if excludes
            .iter()
            .any(|exclude| exclude.matches(&relative_path))
        {
            continue;
        }
        let children = if is_dir {
            Some(build_tree(allowed, root, &entry_path, excludes)?)
        } else {
            None
        };
        out.push(TreeEntry {
            name,
            kind: if is_dir { "directory" } else { "file" },
            children,
        });
    }
    Ok(out)
}

pub fn directory_tree(args: TreeArgs) -> Answer {
    let allowed = allowed();
    let excludes = args
        .exclude_patterns
        .iter()
        .map(|p| Exclude::new(p))
        .collect::<Result<Vec<_>, _>>()?;
    let tree = build_tree(&allowed, &args.path, &args.path, &excludes)?;
    let json = corral_sdk::serde_json::to_string_pretty(&tree).map_err(|err| err.to_string())?;
    text(json)
}

pub fn move_file(args: MoveArgs) -> Answer {
    let allowed = allowed();
    let source = allowed.validate(&args.source)?;
    let destination = allowed.validate(&args.destination)?;
    allowed.check_writable(&source)?;
    allowed.check_writable(&destination)?;
    match fs::symlink_metadata(&destination) {
        Ok(_) => return Err(format!("Destination already exists: {destination}")),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            fs::rename(&source, &destination)
                .map_err(|err| node_message(&err, "rename", Some(&source), Some(&destination)))?;
        }
        Err(err) => return Err(node_message(&err, "lstat", Some(&destination), None)),
    }
    text(format!(
        "Successfully moved {} to {}",
        args.source, args.destination
    ))
}

fn search(
    allowed: &Allowed,
    root: &str,
    current: &str,
    pattern: &Glob,
    excludes: &[Glob],
    results: &mut Vec<String>,
) -> Result<(), String> {
    for (name, is_dir) in entries(current)? {
        let full = join(current, &name);
        // What fails here (a symlink out, an unreadable folder) is skipped.
        if allowed.validate(&full).is_err() {
            continue;
        }
        let relative_path = relative(root, &full);
        if excludes.iter().any(|glob| glob.matches(&relative_path)) {
            continue;
        }
        if pattern.matches(&relative_path) {
            results.push(full.clone());
        }
        if is_dir {
            let _ = search(allowed, root, &full, pattern, excludes, results);
        }
    }
    Ok(())
}

pub fn search_files(args: SearchArgs) -> Answer {
    let allowed = allowed();
    let root = allowed.validate(&args.path)?;
    let pattern = Glob::new(&args.pattern)?;
    let excludes = args
        .exclude_patterns
        .iter()
        .map(|p| Glob::new(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut results = Vec::new();
    search(&allowed, &root, &root, &pattern, &excludes, &mut results)?;
    if results.is_empty() {
        return text("No matches found".into());
    }
    text(results.join("\n"))
}

fn millis(time: io::Result<SystemTime>) -> Option<i64> {
    let time = time.ok()?;
    Some(match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_millis() as i64,
        Err(before) => -(before.duration().as_millis() as i64),
    })
}

pub fn get_file_info(args: PathArgs) -> Answer {
    let path = allowed().validate(&args.path)?;
    let meta = fs::metadata(&path).map_err(|err| node_message(&err, "stat", Some(&path), None))?;
    let date = |time: Option<i64>| time.map(js_date).unwrap_or_else(|| "Invalid Date".into());
    let modified = millis(meta.modified());
    // WASI has no birth time: the earliest time it does give stands in.
    let created = millis(meta.created()).or(modified);
    let lines = [
        format!("size: {}", meta.len()),
        format!("created: {}", date(created)),
        format!("modified: {}", date(modified)),
        format!("accessed: {}", date(millis(meta.accessed()))),
        format!("isDirectory: {}", meta.is_dir()),
        format!("isFile: {}", meta.is_file()),
        "permissions: unknown (WASI does not expose permission bits)".to_string(),
    ];
    text(lines.join("\n"))
}

pub fn list_allowed_directories(_: NoArgs) -> Answer {
    text(format!(
        "Allowed directories:\n{}",
        allowed().dirs.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old_text: old.into(),
            new_text: new.into(),
        }
    }

    #[test]
    fn an_exact_match_is_replaced_once() {
        assert_eq!(apply_edits("a b a", &[edit("a", "x")]).unwrap(), "x b a");
    }

    #[test]
    fn whitespace_flexible_matching_keeps_the_indentation() {
        let content = "fn f() {\n    let a = 1;\n    let b = 2;\n}\n";
        let out = apply_edits(
            content,
            &[edit(
                "let a = 1;\n  let b = 2;",
                "let a = 10;\n    let b = 20;",
            )],
        )
        .unwrap();
        assert_eq!(out, "fn f() {\n    let a = 10;\n      let b = 20;\n}\n");
    }

    #[test]
    fn no_match_is_an_error_naming_the_text() {
        assert_eq!(
            apply_edits("abc", &[edit("zzz", "y")]).unwrap_err(),
            "Could not find exact match for edit:\nzzz"
        );
    }
}
