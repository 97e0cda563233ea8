//! The documentation, checked (issue 24).
//!
//! - Every relative link in the repository's markdown names a file or folder
//!   that exists, and every `#anchor` a heading of its markdown file, by
//!   GitHub's rules; links with a scheme other than http, https and mailto,
//!   and absolute paths, are refused (the docs must read the same in a
//!   checkout, on GitHub and in a fork).
//! - `README.md` stays a five-minute read: at most 300 lines.
//! - README.md links every guide in docs/.
//! - The command blocks a reader types, marked with `<!-- test: run -->`
//!   right before them, run: each command exits with status 0 and the block
//!   prints what its `expect:` lines say; the manifests marked with
//!   `<!-- test: manifest -->` are valid (docs/development.md describes the
//!   marks).
//!
//! The checker is a small reader of markdown, only as much of it as links
//! need: fenced code blocks, code spans, HTML comments, ATX headings, inline
//! links and reference definitions. Its own tests, on tiny texts, come last.

mod support;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

/// The most lines `README.md` may have.
const README_MAX_LINES: usize = 300;

/// How long one marked command may run before it counts as failed.
const COMMAND_TIMEOUT_SECONDS: u32 = 180;

// ---------------------------------------------------------------------------
// Markdown, as far as links need it
// ---------------------------------------------------------------------------

/// One line of a markdown file.
struct Line<'a> {
    /// The line's number, from 1.
    number: usize,
    text: &'a str,
    /// Whether the line belongs to a fenced code block, its fences included.
    code: bool,
    /// For the opening fence of a code block: the block's content lines.
    block: Option<Vec<&'a str>>,
}

/// The lines of a markdown text, each marked as code or not. A fence is three
/// or more backticks or tildes, closed by a line of at least as many of the
/// same character; its indentation is not limited, so that fences inside list
/// items count too. An unclosed fence runs to the end of the text.
fn lines(text: &str) -> Vec<Line<'_>> {
    let all: Vec<&str> = text.lines().collect();
    let mut lines = Vec::with_capacity(all.len());
    let mut fence: Option<(char, usize, usize)> = None; // char, length, index of its line
    for (index, text) in all.iter().enumerate() {
        let trimmed = text.trim_start();
        let run = |c: char| trimmed.chars().take_while(|&x| x == c).count();
        match fence {
            None => {
                let opening = ['`', '~'].into_iter().find_map(|c| {
                    let n = run(c);
                    (n >= 3 && !(c == '`' && trimmed[n..].contains('`'))).then_some((c, n))
                });
                if let Some((c, n)) = opening {
                    fence = Some((c, n, index));
                }
                lines.push(Line {
                    number: index + 1,
                    text,
                    code: opening.is_some(),
                    block: None,
                });
            }
            Some((c, n, open)) => {
                let m = run(c);
                if m >= n && trimmed[m..].trim().is_empty() {
                    fence = None;
                    lines[open].block = Some(all[open + 1..index].to_vec());
                }
                lines.push(Line {
                    number: index + 1,
                    text,
                    code: true,
                    block: None,
                });
            }
        }
    }
    if let Some((_, _, open)) = fence {
        lines[open].block = Some(all[open + 1..].to_vec());
    }
    lines
}

/// The text of an ATX heading (`## Text`), or None for any other line.
fn heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &rest[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut text = rest.trim();
    // An optional closing sequence: ` ##`.
    let without_hashes = text.trim_end_matches('#');
    if without_hashes.is_empty() || without_hashes.ends_with([' ', '\t']) {
        text = without_hashes.trim_end();
    }
    Some(text)
}

/// GitHub's anchor for a heading's text: the rendered text (links as their
/// text, no HTML tags), lowercased, every character but letters, digits, `-`,
/// `_` and spaces dropped, spaces turned into `-`.
fn slug(heading: &str) -> String {
    let mut rendered = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find(['[', '<']) {
        rendered.push_str(&rest[..open]);
        rest = &rest[open..];
        if rest.starts_with('<') {
            match rest.find('>') {
                Some(close) => rest = &rest[close + 1..],
                None => {
                    rendered.push_str(rest);
                    rest = "";
                }
            }
            continue;
        }
        // `[text](destination)`: keep the text.
        match (rest.find("]("), rest.find(')')) {
            (Some(middle), Some(_)) => {
                let after = &rest[middle + 2..];
                match after.find(')') {
                    Some(close) => {
                        rendered.push_str(&rest[1..middle]);
                        rest = &after[close + 1..];
                    }
                    None => {
                        rendered.push('[');
                        rest = &rest[1..];
                    }
                }
            }
            _ => {
                rendered.push('[');
                rest = &rest[1..];
            }
        }
    }
    rendered.push_str(rest);
    rendered
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors a markdown text defines: one per heading outside code blocks
/// (`-1`, `-2`, ... appended to repeats, as GitHub does), and explicit
/// `<a id="...">` or `<a name="...">` anchors.
fn anchors(text: &str) -> HashSet<String> {
    let mut anchors = HashSet::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in lines(text).iter().filter(|line| !line.code) {
        if let Some(heading) = heading(line.text) {
            let slug = slug(heading);
            let count = seen.entry(slug.clone()).or_insert(0);
            anchors.insert(match *count {
                0 => slug,
                n => format!("{slug}-{n}"),
            });
            *count += 1;
        }
        for attribute in ["id=\"", "name=\""] {
            let mut rest = line.text;
            while let Some(at) = rest.find("<a ") {
                rest = &rest[at + 3..];
                let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
                if let Some(start) = tag.find(attribute) {
                    let value = &tag[start + attribute.len()..];
                    if let Some(end) = value.find('"') {
                        anchors.insert(value[..end].to_string());
                    }
                }
            }
        }
    }
    anchors
}

/// A link's destination, and the line it is on.
#[derive(Debug, PartialEq)]
struct Link {
    line: usize,
    destination: String,
}

/// The byte ranges of `text` that are code spans or HTML comments, where
/// `](` is no link. A code span opens with a run of backticks and closes at
/// the next run of exactly as many; a run with no match is literal.
fn masked(text: &str) -> Vec<bool> {
    let bytes = text.as_bytes();
    let mut mask = vec![false; bytes.len()];
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"<!--") {
            let end = text[i + 4..]
                .find("-->")
                .map_or(bytes.len(), |at| i + 4 + at + 3);
            mask[i..end].fill(true);
            i = end;
            continue;
        }
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let mut j = i + run;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let other = bytes[j..].iter().take_while(|&&b| b == b'`').count();
                if other == run {
                    close = Some(j + other);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                mask[i..end].fill(true);
                i = end;
            }
            None => i += run,
        }
    }
    mask
}

/// The destination of an inline link whose `](` ends just before `text`:
/// `<...>`, or up to a space or the `)` that balances the parentheses.
fn destination(text: &str) -> Option<&str> {
    let text = text.trim_start();
    if let Some(rest) = text.strip_prefix('<') {
        return rest.find('>').map(|end| &rest[..end]);
    }
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(&text[..at]),
            ')' => depth -= 1,
            c if c.is_whitespace() => return Some(&text[..at]),
            _ => {}
        }
    }
    None
}

/// Every link of a markdown text outside code: inline links and images
/// (`[text](destination)`, `![alt](destination)`) and reference definitions
/// (`[label]: destination`). Paragraphs are read whole, so that a code span
/// may run over several lines.
fn links(text: &str) -> Vec<Link> {
    let mut links = Vec::new();
    let mut paragraph: Vec<&Line> = Vec::new();
    let lines = lines(text);
    for line in &lines {
        if line.code || line.text.trim().is_empty() {
            paragraph_links(&paragraph, &mut links);
            paragraph.clear();
        } else {
            paragraph.push(line);
        }
    }
    paragraph_links(&paragraph, &mut links);
    links
}

/// The links of one paragraph (consecutive lines outside code), added to `links`.
fn paragraph_links(paragraph: &[&Line], links: &mut Vec<Link>) {
    let Some(first) = paragraph.first() else {
        return;
    };
    let joined = paragraph
        .iter()
        .map(|line| line.text)
        .collect::<Vec<_>>()
        .join("\n");
    let mask = masked(&joined);
    let line_at = |offset: usize| first.number + joined[..offset].matches('\n').count();
    let mut from = 0;
    while let Some(at) = joined[from..].find("](") {
        let at = from + at;
        from = at + 2;
        if mask[at] {
            continue;
        }
        if let Some(destination) = destination(&joined[at + 2..]) {
            links.push(Link {
                line: line_at(at),
                destination: destination.to_string(),
            });
        }
    }
    let mut offset = 0;
    for line in joined.split('\n') {
        let start = offset;
        offset += line.len() + 1;
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if indent > 3 || !trimmed.starts_with('[') || mask[start + indent] {
            continue;
        }
        let Some(close) = trimmed.find(']') else {
            continue;
        };
        if let Some(definition) = trimmed[close..].strip_prefix("]:")
            && let Some(destination) = definition.split_whitespace().next()
        {
            links.push(Link {
                line: line_at(start),
                destination: destination.trim_matches(['<', '>']).to_string(),
            });
        }
    }
}

// ---------------------------------------------------------------------------
// Checking links
// ---------------------------------------------------------------------------

/// A link that does not resolve.
#[derive(Debug)]
struct Broken {
    file: PathBuf,
    line: usize,
    destination: String,
    reason: String,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: ({}) {}",
            self.file.display(),
            self.line,
            self.destination,
            self.reason
        )
    }
}

/// The scheme of a destination (`https` in `https://...`), if it has one.
fn scheme(destination: &str) -> Option<&str> {
    let colon = destination.find(':')?;
    let scheme = &destination[..colon];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)))
        .then_some(scheme)
}

/// `%20` and other escapes decoded (a link to `a file.md` is `a%20file.md`).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((high * 16 + low) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `path` without `.` and `..` components, or None when `..` would climb
/// above its first component.
fn normalized(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// Checks the links of the markdown files `files` (paths relative to
/// `root`), and returns every one that does not resolve.
fn check(root: &Path, files: &[PathBuf]) -> Vec<Broken> {
    let mut broken = Vec::new();
    let mut anchors_of: HashMap<PathBuf, HashSet<String>> = HashMap::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(file))
            .unwrap_or_else(|err| panic!("reading {}: {err}", file.display()));
        for link in links(&text) {
            if let Err(reason) = resolve(root, file, &link.destination, &mut anchors_of) {
                broken.push(Broken {
                    file: file.clone(),
                    line: link.line,
                    destination: link.destination,
                    reason,
                });
            }
        }
    }
    broken
}

/// Whether `destination`, a link in `file`, resolves; if not, why.
fn resolve(
    root: &Path,
    file: &Path,
    destination: &str,
    anchors_of: &mut HashMap<PathBuf, HashSet<String>>,
) -> Result<(), String> {
    if destination.is_empty() {
        return Err("an empty link".into());
    }
    if let Some(scheme) = scheme(destination) {
        return match scheme.to_ascii_lowercase().as_str() {
            "http" | "https" | "mailto" => Ok(()),
            other => Err(format!(
                "a `{other}:` link; only relative links, and http, https and mailto, are allowed"
            )),
        };
    }
    let (path, anchor) = match destination.split_once('#') {
        Some((path, anchor)) => (path, Some(percent_decoded(anchor))),
        None => (destination, None),
    };
    if path.starts_with('/') {
        return Err("an absolute path; use a path relative to this file".into());
    }
    let mut target = if path.is_empty() {
        file.to_path_buf()
    } else {
        let joined = file
            .parent()
            .unwrap_or(Path::new(""))
            .join(percent_decoded(path));
        normalized(&joined).ok_or("leaves the repository")?
    };
    let first = target.components().next();
    if matches!(first, Some(Component::Normal(name)) if name == "target")
        || target.components().any(|c| c.as_os_str() == "node_modules")
    {
        return Err("points into a build folder, which is not part of the repository".into());
    }
    let full = root.join(&target);
    if !full.exists() {
        return Err(format!("no such file or folder: {}", target.display()));
    }
    let Some(anchor) = anchor else {
        return Ok(());
    };
    if anchor.is_empty() {
        return Err("an empty anchor".into());
    }
    if full.is_dir() {
        // GitHub shows a folder's README.md below its listing.
        target = target.join("README.md");
        if !root.join(&target).is_file() {
            return Err("an anchor in a folder that has no README.md".into());
        }
    }
    if target.extension().is_some_and(|ext| ext == "md") {
        let anchors = anchors_of.entry(target.clone()).or_insert_with(|| {
            anchors(&std::fs::read_to_string(root.join(&target)).unwrap_or_default())
        });
        return if anchors.contains(&anchor) {
            Ok(())
        } else {
            Err(format!(
                "no heading of {} has the anchor #{anchor}",
                target.display()
            ))
        };
    }
    // GitHub's line anchors in other files: #L12 or #L12-L20.
    let line_numbers: Option<Vec<usize>> = anchor
        .split('-')
        .map(|part| part.strip_prefix('L').and_then(|n| n.parse().ok()))
        .collect();
    let lines = std::fs::read_to_string(&full).map_or(0, |text| text.lines().count());
    match line_numbers {
        Some(numbers) if (1..=2).contains(&numbers.len()) => {
            match numbers.iter().find(|&&n| n == 0 || n > lines) {
                Some(n) => Err(format!("{} has no line {n}", target.display())),
                None => Ok(()),
            }
        }
        _ => Err(format!(
            "#{anchor} in {}, which is no markdown file (only #L12 or #L12-L20 there)",
            target.display()
        )),
    }
}

/// The repository's markdown files, relative to its root: those git tracks
/// or would track (new files included, ignored ones such as `target/` not),
/// or without git every `*.md` outside `target/`, `node_modules/` and
/// hidden folders.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let git = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "*.md",
        ])
        .current_dir(root)
        .stderr(Stdio::null())
        .output();
    let mut files: Vec<PathBuf> = match git {
        Ok(output) if output.status.success() => String::from_utf8(output.stdout)
            .unwrap()
            .split('\0')
            .filter(|name| !name.is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => {
            let mut found = Vec::new();
            walk(root, Path::new(""), &mut found);
            found
        }
    };
    files.retain(|file| {
        root.join(file).is_file()
            && !file.components().any(|c| {
                let name = c.as_os_str();
                name == "target" || name == "node_modules" || name == ".git"
            })
    });
    files.sort();
    files.dedup();
    files
}

fn walk(root: &Path, dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let relative = dir.join(&name);
        let name = name.to_string_lossy();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                walk(root, &relative, found);
            }
        } else if name.ends_with(".md") {
            found.push(relative);
        }
    }
}

// ---------------------------------------------------------------------------
// Blocks marked to be tested
// ---------------------------------------------------------------------------

/// What a mark asks of the fenced block after it.
#[derive(Debug, PartialEq)]
enum Mark {
    /// `<!-- test: run -->`: its commands run, each with status 0, and their
    /// standard output holds every `expect:` line.
    Run { expect: Vec<String> },
    /// `<!-- test: manifest -->`: it is a valid plugin manifest (`NAME.toml`).
    Manifest,
}

/// A fenced block marked to be tested.
#[derive(Debug, PartialEq)]
struct Marked {
    /// The line of the mark.
    line: usize,
    mark: Mark,
    /// The block's content lines.
    block: Vec<String>,
}

impl Marked {
    /// The commands of the block: each line that is neither blank nor a
    /// `#` comment, with its `\` continuation lines.
    fn commands(&self) -> Vec<String> {
        let mut commands: Vec<String> = Vec::new();
        let mut continued = false;
        for content in &self.block {
            let trimmed = content.trim();
            if continued {
                let last = commands.last_mut().unwrap();
                last.push('\n');
                last.push_str(content);
            } else if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            } else {
                commands.push(content.clone());
            }
            continued = trimmed.ends_with('\\');
        }
        commands
    }
}

/// The blocks of a markdown text marked to be tested. A mark is an HTML
/// comment, invisible on GitHub, that opens with `<!-- test: run` or
/// `<!-- test: manifest`; a `run` mark may hold `expect: TEXT` lines before
/// its `-->`. The next line that is not blank must open a fenced block.
fn marked(text: &str) -> Result<Vec<Marked>, String> {
    let lines = lines(text);
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let Some(rest) = line
            .text
            .trim()
            .strip_prefix("<!-- test:")
            .filter(|_| !line.code)
        else {
            i += 1;
            continue;
        };
        let number = line.number;
        // The mark's own text, up to `-->`.
        let mut body = vec![rest];
        while !body.last().unwrap().contains("-->") {
            i += 1;
            let next = lines
                .get(i)
                .ok_or_else(|| format!("line {number}: the mark has no `-->`"))?;
            body.push(next.text.trim());
        }
        let mut parts = body
            .iter()
            .map(|part| part.split("-->").next().unwrap().trim())
            .filter(|part| !part.is_empty());
        let mark = match parts.next() {
            Some("run") => {
                let mut expect = Vec::new();
                for part in parts {
                    match part.strip_prefix("expect:") {
                        Some(text) => expect.push(text.trim().to_string()),
                        None => {
                            return Err(format!(
                                "line {number}: `{part}` in the mark is neither empty nor `expect: TEXT`"
                            ));
                        }
                    }
                }
                Mark::Run { expect }
            }
            Some("manifest") if parts.next().is_none() => Mark::Manifest,
            _ => {
                return Err(format!(
                    "line {number}: a mark is `<!-- test: run -->` (with `expect:` lines) or `<!-- test: manifest -->`"
                ));
            }
        };
        i += 1;
        while lines.get(i).is_some_and(|line| line.text.trim().is_empty()) {
            i += 1;
        }
        let block: Vec<String> = lines
            .get(i)
            .and_then(|line| line.block.as_ref())
            .ok_or_else(|| format!("line {number}: the mark is not followed by a code block"))?
            .iter()
            .map(|line| line.to_string())
            .collect();
        let marked = Marked {
            line: number,
            mark,
            block,
        };
        if matches!(marked.mark, Mark::Run { .. }) && marked.commands().is_empty() {
            return Err(format!("line {number}: the marked block holds no command"));
        }
        found.push(marked);
        i += 1;
    }
    Ok(found)
}

// ---------------------------------------------------------------------------
// The repository's documentation
// ---------------------------------------------------------------------------

#[test]
fn every_relative_link_and_anchor_in_the_markdown_resolves() {
    let root = support::repo_root();
    let files = markdown_files(&root);
    for expected in ["README.md", "docs/README.md", "sdk-guest/README.md"] {
        assert!(
            files.iter().any(|file| file == Path::new(expected)),
            "{expected} is not among the markdown files found: {files:?}"
        );
    }
    let broken = check(&root, &files);
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_readme_is_a_five_minute_read_of_at_most_300_lines() {
    let readme = std::fs::read_to_string(support::repo_root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move a subject into docs/"
    );
}

#[test]
fn every_docs_file_is_linked_from_the_readme() {
    let root = support::repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let linked: HashSet<String> = links(&readme)
        .into_iter()
        .map(|link| link.destination.split('#').next().unwrap().to_string())
        .collect();
    let unlinked: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| format!("docs/{}", entry.unwrap().file_name().to_string_lossy()))
        .filter(|path| path.ends_with(".md") && path != "docs/README.md" && !linked.contains(path))
        .collect();
    assert!(unlinked.is_empty(), "README.md does not link {unlinked:?}");
}

/// Runs every marked command block of the repository's markdown, as a reader
/// would after `scripts/setup`: from a scratch folder holding only `target`
/// (a link to the build's target folder, so that `target/release/corral`
/// and `target/plugins` are the ones under test), with the `corral` under
/// test first on `PATH` and the tests' own compile cache.
#[test]
fn the_marked_command_blocks_run() {
    let root = support::repo_root();
    let plugins = support::all_plugins_dir();
    assert!(plugins.join("calc.wasm").is_file());
    let binary = Path::new(env!("CARGO_BIN_EXE_corral"));
    let bin_dir = binary.parent().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(support::target_dir(), scratch.path().join("target")).unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();

    let mut ran = 0;
    let mut failures = Vec::new();
    for (file, block) in all_marked(&root) {
        let Mark::Run { expect } = &block.mark else {
            continue;
        };
        let mut stdout = String::new();
        for command in block.commands() {
            let output = support::user_command("timeout")
                .arg(COMMAND_TIMEOUT_SECONDS.to_string())
                .args(["bash", "-c", &command])
                .current_dir(scratch.path())
                .env("PATH", &path)
                .env("CORRAL_CACHE_DIR", support::test_cache_dir())
                .stdin(Stdio::null())
                .output()
                .expect("running bash");
            ran += 1;
            stdout.push_str(&String::from_utf8_lossy(&output.stdout));
            if !output.status.success() {
                let timed_out = if output.status.code() == Some(124) {
                    format!(" (stopped after {COMMAND_TIMEOUT_SECONDS} s)")
                } else {
                    String::new()
                };
                failures.push(format!(
                    "{}:{}: `{command}` exited with {}{timed_out}:\n{}{}",
                    file.display(),
                    block.line,
                    output.status,
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr),
                ));
            }
        }
        for expected in expect {
            if !stdout.contains(expected.as_str()) {
                failures.push(format!(
                    "{}:{}: the block's output does not contain `{expected}`:\n{stdout}",
                    file.display(),
                    block.line
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran > 0, "no command block is marked `<!-- test: run -->`");
}

/// The manifests the docs show, marked `<!-- test: manifest -->`, are
/// valid: they parse, and every limit and grant in them is accepted, as
/// `corral push` checks a manifest (a granted directory need not exist
/// here).
#[test]
fn the_marked_manifests_are_valid() {
    let root = support::repo_root();
    let mut checked = 0;
    for (file, block) in all_marked(&root) {
        if block.mark != Mark::Manifest {
            continue;
        }
        let text = block.block.join("\n");
        if let Err(err) = corral_sandbox::Manifest::parse_portable(&text, Path::new("plugin.toml"))
        {
            panic!(
                "{}:{}: the manifest is not valid: {err}",
                file.display(),
                block.line
            );
        }
        checked += 1;
    }
    assert!(
        checked > 0,
        "no manifest is marked `<!-- test: manifest -->`"
    );
}

/// Every marked block of the repository's markdown, with its file.
fn all_marked(root: &Path) -> Vec<(PathBuf, Marked)> {
    let mut all = Vec::new();
    for file in markdown_files(root) {
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        let blocks = marked(&text)
            .unwrap_or_else(|err| panic!("{}: a bad test mark: {err}", file.display()));
        all.extend(blocks.into_iter().map(|block| (file.clone(), block)));
    }
    all
}

// ---------------------------------------------------------------------------
// The checker itself, on tiny texts
// ---------------------------------------------------------------------------

/// Checks `file` among `files` (name, text), written to a fresh folder.
fn check_texts(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let names: Vec<PathBuf> = files
        .iter()
        .filter(|(name, _)| name.ends_with(".md"))
        .map(|(name, _)| PathBuf::from(name))
        .collect();
    check(dir.path(), &names)
        .iter()
        .map(|broken| {
            format!(
                "{}:{} {}",
                broken.file.display(),
                broken.line,
                broken.reason
            )
        })
        .collect()
}

#[test]
fn the_checker_passes_links_that_resolve() {
    let broken = check_texts(&[
        (
            "README.md",
            "# Top\n\nSee [the guide](docs/guide.md), [its part](docs/guide.md#a-part),\n\
             [a folder](docs/), [here](#top), [code](src/lib.rs#L2) and\n\
             [the web](https://example.com/x#y) or [mail](mailto:me@example.com).\n\n\
             [ref]: docs/guide.md#the-end\n",
        ),
        (
            "docs/guide.md",
            "# Guide\n\n## A part\n\nBack to [the top](../README.md#top).\n\n## The end\n",
        ),
        ("src/lib.rs", "fn a() {}\nfn b() {}\n"),
    ]);
    assert_eq!(broken, Vec::<String>::new());
}

#[test]
fn the_checker_fails_on_a_broken_link() {
    let broken = check_texts(&[(
        "README.md",
        "# Top\n\nSee\n[the guide](docs/missing.md) and ![a picture](logo.png).\n",
    )]);
    assert_eq!(
        broken,
        [
            "README.md:4 no such file or folder: docs/missing.md",
            "README.md:4 no such file or folder: logo.png",
        ]
    );
}

#[test]
fn the_checker_fails_on_a_missing_anchor() {
    let broken = check_texts(&[
        (
            "README.md",
            "# Top\n\n[a](#bottom) [b](guide.md#nowhere) [c](guide.md#part) [d](lib.rs#L9)\n",
        ),
        ("guide.md", "# Guide\n\n## Part 1\n"),
        ("lib.rs", "fn a() {}\n"),
    ]);
    assert_eq!(
        broken,
        [
            "README.md:3 no heading of README.md has the anchor #bottom",
            "README.md:3 no heading of guide.md has the anchor #nowhere",
            "README.md:3 no heading of guide.md has the anchor #part",
            "README.md:3 lib.rs has no line 9",
        ]
    );
}

#[test]
fn the_checker_refuses_other_schemes_absolute_paths_and_escapes() {
    let broken = check_texts(&[(
        "README.md",
        "[a](ftp://example.com/x) [b](file:///etc/passwd) [c](/docs/guide.md)\n\
         [d](../outside.md) [e](target/release/corral) [f]()\n",
    )]);
    assert_eq!(
        broken,
        [
            "README.md:1 a `ftp:` link; only relative links, and http, https and mailto, are allowed",
            "README.md:1 a `file:` link; only relative links, and http, https and mailto, are allowed",
            "README.md:1 an absolute path; use a path relative to this file",
            "README.md:2 leaves the repository",
            "README.md:2 points into a build folder, which is not part of the repository",
            "README.md:2 an empty link",
        ]
    );
}

#[test]
fn links_in_code_and_comments_are_not_links() {
    let text = "Text `[a](x.md)` and ``[b](`y.md`)``, <!-- [c](z.md) -->\n\
                a span `over\nlines [d](w.md)` too.\n\n\
                ```md\n[e](v.md)\n```\n\n\
                ~~~~\n```\n[f](u.md)\n```\n~~~~\n\n\
                [g](real.md) and [`h`](also.md)\n";
    let found: Vec<String> = links(text).into_iter().map(|l| l.destination).collect();
    assert_eq!(found, ["real.md", "also.md"]);
}

#[test]
fn link_destinations_are_read_as_commonmark_does() {
    let text =
        "[a](page.md \"a title\") [b](<with space.md>) [c](wiki/A_(b).md) [d]( spaced.md )\n";
    let found: Vec<String> = links(text).into_iter().map(|l| l.destination).collect();
    assert_eq!(
        found,
        ["page.md", "with space.md", "wiki/A_(b).md", "spaced.md"]
    );
}

#[test]
fn anchors_follow_githubs_rules() {
    let text = "# Corral\n\n## Quick start\n\n## The `corral new` command: LANG, NAME!\n\n\
                ### Quick start\n\n#### What `requestState` is, and what it protects\n\n\
                ## [Linked](elsewhere.md) heading ##\n\n## Ask before you act — again\n\n\
                ```sh\n# not a heading\n```\n\n#not-a-heading\n\n## snake_case and CAPS\n\n\
                <a id=\"custom\"></a>\n\n## Quick start\n";
    let mut found: Vec<String> = anchors(text).into_iter().collect();
    found.sort();
    assert_eq!(
        found,
        [
            "ask-before-you-act--again",
            "corral",
            "custom",
            "linked-heading",
            "quick-start",
            "quick-start-1",
            "quick-start-2",
            "snake_case-and-caps",
            "the-corral-new-command-lang-name",
            "what-requeststate-is-and-what-it-protects",
        ]
    );
}

#[test]
fn marked_blocks_are_read_with_their_expectations() {
    let text = "Try:\n\n<!-- test: run -->\n```sh\ncorral list target/plugins   # every tool\n\n\
                # a comment line \\\ncorral call target/plugins add \\\n  '{\"a\": 1, \"b\": 2}'\n```\n\n\
                <!-- test: run\nexpect: \"isError\": false\nexpect: add\n-->\n\n```sh\ncorral --help\n```\n\n\
                ```sh\ncorral serve target/plugins\n```\n\n<!-- test: manifest -->\n```toml\n[limits]\nfuel = 1\n```\n";
    let found = marked(text).unwrap();
    assert_eq!(
        found,
        [
            Marked {
                line: 3,
                mark: Mark::Run { expect: vec![] },
                block: vec![
                    "corral list target/plugins   # every tool".into(),
                    "".into(),
                    "# a comment line \\".into(),
                    "corral call target/plugins add \\".into(),
                    "  '{\"a\": 1, \"b\": 2}'".into(),
                ],
            },
            Marked {
                line: 12,
                mark: Mark::Run {
                    expect: vec!["\"isError\": false".into(), "add".into()],
                },
                block: vec!["corral --help".into()],
            },
            Marked {
                line: 25,
                mark: Mark::Manifest,
                block: vec!["[limits]".into(), "fuel = 1".into()],
            },
        ]
    );
    assert_eq!(
        found[0].commands(),
        [
            "corral list target/plugins   # every tool",
            "corral call target/plugins add \\\n  '{\"a\": 1, \"b\": 2}'",
        ]
    );
}

#[test]
fn a_mark_without_a_block_or_with_an_unknown_line_is_an_error() {
    for text in [
        "<!-- test: run -->\n\nSome text.\n",
        "<!-- test: run\nexpekt: x\n-->\n```sh\ntrue\n```\n",
        "<!-- test: run\nexpect: x\n",
        "<!-- test: walk -->\n```sh\ntrue\n```\n",
        "<!-- test: manifest\nexpect: x\n-->\n```toml\n```\n",
        "<!-- test: run -->\n```sh\n# only a comment\n```\n",
    ] {
        assert!(marked(text).is_err(), "accepted: {text}");
    }
}
