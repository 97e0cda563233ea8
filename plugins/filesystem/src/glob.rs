//! The part of minimatch (10.2, with `{ dot: true }`) that the original's
//! `search_files` and `directory_tree` use, for relative paths:
//!
//! - `*` (any run of characters but `/`), `?` (one character), `[...]`
//!   classes (`[!...]`/`[^...]` negated, ranges, `[:alpha:]`-style names),
//!   `\` escapes;
//! - `**` as a whole path segment: zero or more segments (at the end of a
//!   pattern, one or more), never `.` or `..`;
//! - `{a,b}` and `{1..3}` brace expansion, a leading `!` negating, a
//!   leading `#` matching nothing (a comment), `""` matching only `""`;
//! - dotfiles match like any name (`dot: true`), but a pattern segment
//!   with magic never matches `.` or `..`.
//!
//! Not supported: extglobs (`+(a|b)`, `@(...)`, `!(...)`, `?(...)`,
//! `*(...)`); a pattern that has one is refused with an error rather than
//! matched differently.

/// A pattern segment's pieces.
#[derive(Debug, Clone)]
enum Piece {
    Literal(char),
    One,
    Star,
    Class {
        negated: bool,
        items: Vec<ClassItem>,
    },
}

#[derive(Debug, Clone)]
enum ClassItem {
    Char(char),
    Range(char, char),
    Named(String),
}

#[derive(Debug, Clone)]
enum Segment {
    Globstar,
    Literal(String),
    Magic(Vec<Piece>),
}

/// A compiled pattern.
pub struct Glob {
    negate: bool,
    /// `None`: a comment, matching nothing.
    alternatives: Option<Vec<Vec<Segment>>>,
    empty: bool,
}

impl Glob {
    pub fn new(pattern: &str) -> Result<Glob, String> {
        if pattern.starts_with('#') {
            return Ok(Glob {
                negate: false,
                alternatives: None,
                empty: false,
            });
        }
        if pattern.is_empty() {
            return Ok(Glob {
                negate: false,
                alternatives: Some(Vec::new()),
                empty: true,
            });
        }
        if has_extglob(pattern) {
            return Err(format!(
                "Unsupported glob pattern: {pattern} (extended globs such as +(a|b) are not supported)"
            ));
        }
        let bangs = pattern.chars().take_while(|&c| c == '!').count();
        let negate = bangs % 2 == 1;
        let body = &pattern[bangs..];
        let mut alternatives = Vec::new();
        for expanded in brace_expand(body) {
            let parts: Vec<&str> = split_slashes(&expanded);
            let parts = level_one_optimize(parts);
            alternatives.push(parts.into_iter().map(parse_segment).collect());
        }
        Ok(Glob {
            negate,
            alternatives: Some(alternatives),
            empty: false,
        })
    }

    pub fn matches(&self, path: &str) -> bool {
        let Some(alternatives) = &self.alternatives else {
            return false;
        };
        if self.empty {
            return path.is_empty();
        }
        let file: Vec<&str> = split_slashes(path);
        let hit = alternatives
            .iter()
            .any(|pattern| match_segments(&file, pattern));
        hit != self.negate
    }
}

/// minimatch's `slashSplit`: on runs of `/`.
fn split_slashes(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = text;
    loop {
        match rest.find('/') {
            Some(i) => {
                parts.push(&rest[..i]);
                rest = rest[i..].trim_start_matches('/');
            }
            None => {
                parts.push(rest);
                return parts;
            }
        }
    }
}

/// minimatch's `levelOneOptimize`: repeated `**` collapsed, `x/..`
/// dropped.
fn level_one_optimize(parts: Vec<&str>) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for part in parts {
        let prev = out.last().copied();
        if part == "**" && prev == Some("**") {
            continue;
        }
        if part == ".." && prev.is_some_and(|p| p != ".." && p != "." && p != "**") {
            out.pop();
            continue;
        }
        out.push(part);
    }
    if out.is_empty() { vec![""] } else { out }
}

fn has_extglob(pattern: &str) -> bool {
    let chars: Vec<char> = pattern.chars().collect();
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
            continue;
        }
        if matches!(c, '+' | '@' | '!' | '?' | '*') && chars.get(i + 1) == Some(&'(') {
            // A leading run of `!` is negation, not an extglob.
            if c == '!' && chars[..i].iter().all(|&p| p == '!') {
                continue;
            }
            return true;
        }
    }
    false
}

fn parse_segment(text: &str) -> Segment {
    if text == "**" {
        return Segment::Globstar;
    }
    let chars: Vec<char> = text.chars().collect();
    let mut pieces = Vec::new();
    let mut magic = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() => {
                pieces.push(Piece::Literal(chars[i + 1]));
                i += 2;
                continue;
            }
            '*' => {
                magic = true;
                if !matches!(pieces.last(), Some(Piece::Star)) {
                    pieces.push(Piece::Star);
                }
            }
            '?' => {
                magic = true;
                pieces.push(Piece::One);
            }
            '[' => match parse_class(&chars[i + 1..]) {
                Some((piece, used)) => {
                    magic = true;
                    pieces.push(piece);
                    i += used + 1;
                    continue;
                }
                None => pieces.push(Piece::Literal('[')),
            },
            c => pieces.push(Piece::Literal(c)),
        }
        i += 1;
    }
    if !magic {
        let literal: String = pieces
            .iter()
            .map(|p| match p {
                Piece::Literal(c) => *c,
                _ => unreachable!("only literals"),
            })
            .collect();
        return Segment::Literal(literal);
    }
    Segment::Magic(pieces)
}

/// A class after its `[`: the piece and how many characters it used
/// (through its `]`), or `None` when it is not closed.
fn parse_class(chars: &[char]) -> Option<(Piece, usize)> {
    let mut i = 0;
    let negated = matches!(chars.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    while i < chars.len() {
        let c = chars[i];
        if c == ']' && !first {
            return Some((Piece::Class { negated, items }, i + 1));
        }
        first = false;
        if c == '[' && chars.get(i + 1) == Some(&':') {
            let rest: String = chars[i + 2..].iter().collect();
            if let Some(end) = rest.find(":]") {
                items.push(ClassItem::Named(rest[..end].to_string()));
                i += 2 + rest[..end].chars().count() + 2;
                continue;
            }
        }
        let c = if c == '\\' && i + 1 < chars.len() {
            i += 1;
            chars[i]
        } else {
            c
        };
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']') {
            items.push(ClassItem::Range(c, chars[i + 2]));
            i += 3;
        } else {
            items.push(ClassItem::Char(c));
            i += 1;
        }
    }
    None
}

fn class_has(items: &[ClassItem], c: char) -> bool {
    items.iter().any(|item| match item {
        ClassItem::Char(x) => *x == c,
        ClassItem::Range(a, b) => *a <= c && c <= *b,
        ClassItem::Named(name) => match name.as_str() {
            "alpha" => c.is_alphabetic(),
            "digit" => c.is_ascii_digit(),
            "alnum" => c.is_alphanumeric(),
            "upper" => c.is_uppercase(),
            "lower" => c.is_lowercase(),
            "space" => c.is_whitespace(),
            "punct" => c.is_ascii_punctuation(),
            "xdigit" => c.is_ascii_hexdigit(),
            "word" => c.is_alphanumeric() || c == '_',
            "blank" => c == ' ' || c == '\t',
            "cntrl" => c.is_control(),
            "graph" => !c.is_whitespace() && !c.is_control(),
            "print" => !c.is_control(),
            "ascii" => c.is_ascii(),
            _ => false,
        },
    })
}

fn match_pieces(pieces: &[Piece], text: &[char]) -> bool {
    match pieces.split_first() {
        None => text.is_empty(),
        Some((Piece::Star, rest)) => (0..=text.len()).any(|skip| match_pieces(rest, &text[skip..])),
        Some((piece, rest)) => {
            let Some((&c, tail)) = text.split_first() else {
                return false;
            };
            let ok = match piece {
                Piece::Literal(l) => *l == c,
                Piece::One => true,
                Piece::Class { negated, items } => class_has(items, c) != *negated,
                Piece::Star => unreachable!("handled above"),
            };
            ok && match_pieces(rest, tail)
        }
    }
}

fn match_segment(segment: &Segment, name: &str) -> bool {
    match segment {
        Segment::Literal(literal) => literal == name,
        Segment::Magic(pieces) => {
            name != "." && name != ".." && match_pieces(pieces, &name.chars().collect::<Vec<_>>())
        }
        Segment::Globstar => unreachable!("handled by match_segments"),
    }
}

/// Segments against a pattern: `**` takes zero or more segments (one or
/// more at the end), none of them `.` or `..`.
fn match_segments(file: &[&str], pattern: &[Segment]) -> bool {
    match pattern.split_first() {
        None => file.is_empty(),
        Some((Segment::Globstar, rest)) => {
            let min = usize::from(rest.is_empty());
            (min..=file.len()).any(|take| {
                file[..take].iter().all(|s| *s != "." && *s != "..")
                    && match_segments(&file[take..], rest)
            })
        }
        Some((segment, rest)) => file
            .split_first()
            .is_some_and(|(name, tail)| match_segment(segment, name) && match_segments(tail, rest)),
    }
}

/// Bash-style brace expansion as the `brace-expansion` package does it:
/// `a{b,c}d` → `abd`, `acd`; `{1..3}` → `1`, `2`, `3`; `{a..c}`; a brace
/// without a comma or a range stays as it is.
fn brace_expand(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    // The first `{` with a matching `}` that holds a top-level comma or a
    // range.
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == '{'
            && let Some((end, options)) = brace_body(&chars, i)
        {
            let pre: String = chars[..i].iter().collect();
            let post: String = chars[end + 1..].iter().collect();
            let mut out = Vec::new();
            for option in options {
                for tail in brace_expand(&post) {
                    for expanded in brace_expand(&option) {
                        out.push(format!("{pre}{expanded}{tail}"));
                    }
                }
            }
            return out;
        }
        i += 1;
    }
    vec![pattern.to_string()]
}

/// The closing brace of the `{` at `open` and the options inside, if it
/// is an expansion.
fn brace_body(chars: &[char], open: usize) -> Option<(usize, Vec<String>)> {
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let body: String = chars[open + 1..i].iter().collect();
                    if !commas.is_empty() {
                        let mut options = Vec::new();
                        let mut start = open + 1;
                        for &comma in &commas {
                            options.push(chars[start..comma].iter().collect());
                            start = comma + 1;
                        }
                        options.push(chars[start..i].iter().collect());
                        return Some((i, options));
                    }
                    return range(&body).map(|options| (i, options));
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `1..3`, `3..1`, `a..e`.
fn range(body: &str) -> Option<Vec<String>> {
    let (a, b) = body.split_once("..")?;
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        if (x - y).abs() > 10_000 {
            return None;
        }
        let values: Vec<i64> = if x <= y {
            (x..=y).collect()
        } else {
            (y..=x).rev().collect()
        };
        return Some(values.into_iter().map(|v| v.to_string()).collect());
    }
    let (mut ca, mut cb) = (a.chars(), b.chars());
    match (ca.next(), ca.next(), cb.next(), cb.next()) {
        (Some(x), None, Some(y), None) => {
            let values: Vec<char> = if x <= y {
                (x..=y).collect()
            } else {
                (y..=x).rev().collect()
            };
            Some(values.into_iter().map(String::from).collect())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(path: &str, pattern: &str) -> bool {
        Glob::new(pattern).unwrap().matches(path)
    }

    #[test]
    fn stars_stay_within_a_segment() {
        assert!(m("a.txt", "*.txt"));
        assert!(!m("sub/a.txt", "*.txt"));
        assert!(m(".hidden", "*"));
        assert!(m("sub/a.txt", "**/*.txt"));
        assert!(m("a.txt", "**/*.txt"));
        assert!(m("sub/deep/a.txt", "sub/**/a.txt"));
        assert!(m("sub/a.txt", "sub/**/a.txt"));
        assert!(!m("sub", "sub/**"));
        assert!(m("sub/x", "sub/**"));
        assert!(m("x", "**"));
    }

    #[test]
    fn classes_braces_negation() {
        assert!(m("a1", "a[0-9]"));
        assert!(!m("ab", "a[!b]"));
        assert!(m("b.md", "*.{md,txt}"));
        assert!(m("f2", "f{1..3}"));
        assert!(m("a.txt", "!*.md"));
        assert!(!m("a.txt", "#*"));
        assert!(m("", ""));
        assert!(m("{x}", "{x}"));
        assert!(Glob::new("+(a|b)").is_err());
    }
}
