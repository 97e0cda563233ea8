//! `createTwoFilesPatch` of the npm `diff` package (8.0.4), which the
//! original's `edit_file` answers with: its line tokenizer, its variant of
//! Myers's algorithm (the same choice among equally short diffs, so the
//! same hunks) and its patch format, ported step for step.

use std::collections::HashMap;

/// A run of equal, added or removed tokens (lines).
struct Component {
    count: usize,
    added: bool,
    removed: bool,
    previous: Option<usize>,
}

#[derive(Clone, Copy)]
struct Path {
    old_pos: isize,
    last: Option<usize>,
}

/// jsdiff's line tokenizer: each line with its `\n` (or `\r\n`).
fn tokenize(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            lines.push(&text[start..=i]);
            start = i + 1;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

struct Differ<'a> {
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    arena: Vec<Component>,
}

impl Differ<'_> {
    fn push(
        &mut self,
        count: usize,
        added: bool,
        removed: bool,
        previous: Option<usize>,
    ) -> Option<usize> {
        self.arena.push(Component {
            count,
            added,
            removed,
            previous,
        });
        Some(self.arena.len() - 1)
    }

    fn add_to_path(&mut self, path: Path, added: bool, removed: bool, old_inc: isize) -> Path {
        let last = path.last;
        let component = match last {
            Some(i) if self.arena[i].added == added && self.arena[i].removed == removed => {
                let (count, previous) = (self.arena[i].count + 1, self.arena[i].previous);
                self.push(count, added, removed, previous)
            }
            _ => self.push(1, added, removed, last),
        };
        Path {
            old_pos: path.old_pos + old_inc,
            last: component,
        }
    }

    fn extract_common(&mut self, path: &mut Path, diagonal: isize) -> isize {
        let (new_len, old_len) = (self.new.len() as isize, self.old.len() as isize);
        let mut old_pos = path.old_pos;
        let mut new_pos = old_pos - diagonal;
        let mut common = 0;
        while new_pos + 1 < new_len
            && old_pos + 1 < old_len
            && self.old[(old_pos + 1) as usize] == self.new[(new_pos + 1) as usize]
        {
            new_pos += 1;
            old_pos += 1;
            common += 1;
        }
        if common > 0 {
            path.last = self.push(common, false, false, path.last);
        }
        path.old_pos = old_pos;
        new_pos
    }

    /// The components from first to last, each with its lines.
    fn build(&self, last: Option<usize>) -> Vec<(bool, bool, Vec<&str>)> {
        let mut chain = Vec::new();
        let mut next = last;
        while let Some(i) = next {
            chain.push(i);
            next = self.arena[i].previous;
        }
        chain.reverse();
        let (mut new_pos, mut old_pos) = (0, 0);
        let mut out = Vec::new();
        for i in chain {
            let c = &self.arena[i];
            if !c.removed {
                let lines = self.new[new_pos..new_pos + c.count].to_vec();
                new_pos += c.count;
                if !c.added {
                    old_pos += c.count;
                }
                out.push((c.added, false, lines));
            } else {
                out.push((false, true, self.old[old_pos..old_pos + c.count].to_vec()));
                old_pos += c.count;
            }
        }
        out
    }

    fn diff(mut self) -> Vec<(bool, bool, Vec<String>)> {
        let (new_len, old_len) = (self.new.len() as isize, self.old.len() as isize);
        let own = |v: Vec<(bool, bool, Vec<&str>)>| {
            v.into_iter()
                .map(|(a, r, lines)| (a, r, lines.into_iter().map(String::from).collect()))
                .collect()
        };
        let mut best: HashMap<isize, Path> = HashMap::new();
        let mut first = Path {
            old_pos: -1,
            last: None,
        };
        let new_pos = self.extract_common(&mut first, 0);
        if first.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
            return own(self.build(first.last));
        }
        best.insert(0, first);
        let (mut min_diagonal, mut max_diagonal) = (isize::MIN, isize::MAX);
        let max_edit = new_len + old_len;
        let mut edit = 1;
        while edit <= max_edit {
            let mut diagonal = min_diagonal.max(-edit);
            while diagonal <= max_diagonal.min(edit) {
                let remove_path = best.remove(&(diagonal - 1));
                let add_path = best.get(&(diagonal + 1)).copied();
                let can_add = add_path.is_some_and(|p| {
                    let pos = p.old_pos - diagonal;
                    0 <= pos && pos < new_len
                });
                let can_remove = remove_path.is_some_and(|p| p.old_pos + 1 < old_len);
                if !can_add && !can_remove {
                    best.remove(&diagonal);
                    diagonal += 2;
                    continue;
                }
                let mut base = if !can_remove
                    || (can_add && remove_path.unwrap().old_pos < add_path.unwrap().old_pos)
                {
                    self.add_to_path(add_path.unwrap(), true, false, 0)
                } else {
                    self.add_to_path(remove_path.unwrap(), false, true, 1)
                };
                let new_pos = self.extract_common(&mut base, diagonal);
                if base.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
                    return own(self.build(base.last));
                }
                best.insert(diagonal, base);
                if base.old_pos + 1 >= old_len {
                    max_diagonal = max_diagonal.min(diagonal - 1);
                }
                if new_pos + 1 >= new_len {
                    min_diagonal = min_diagonal.max(diagonal + 1);
                }
                diagonal += 2;
            }
            edit += 1;
        }
        unreachable!("an edit script is found within old + new edits")
    }
}

/// `createTwoFilesPatch(name, name, old, new, old_header, new_header)`
/// with the default 4 lines of context.
pub fn two_files_patch(
    name: &str,
    old: &str,
    new: &str,
    old_header: &str,
    new_header: &str,
) -> String {
    const CONTEXT: usize = 4;
    let differ = Differ {
        old: tokenize(old),
        new: tokenize(new),
        arena: Vec::new(),
    };
    let mut diff = differ.diff();
    diff.push((false, false, Vec::new()));

    struct Hunk {
        old_start: usize,
        old_lines: usize,
        new_start: usize,
        new_lines: usize,
        lines: Vec<String>,
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    let (mut old_range_start, mut new_range_start) = (0usize, 0usize);
    let mut cur: Vec<String> = Vec::new();
    let (mut old_line, mut new_line) = (1usize, 1usize);
    let context_lines =
        |lines: &[String]| -> Vec<String> { lines.iter().map(|l| format!(" {l}")).collect() };
    for i in 0..diff.len() {
        let (added, removed, lines) = (diff[i].0, diff[i].1, diff[i].2.clone());
        if added || removed {
            if old_range_start == 0 {
                old_range_start = old_line;
                new_range_start = new_line;
                if i > 0 {
                    let prev = &diff[i - 1].2;
                    cur = context_lines(&prev[prev.len().saturating_sub(CONTEXT)..]);
                    old_range_start -= cur.len();
                    new_range_start -= cur.len();
                }
            }
            for line in &lines {
                cur.push(format!("{}{line}", if added { '+' } else { '-' }));
            }
            if added {
                new_line += lines.len();
            } else {
                old_line += lines.len();
            }
        } else {
            if old_range_start != 0 {
                if lines.len() <= CONTEXT * 2 && i + 2 < diff.len() {
                    cur.extend(context_lines(&lines));
                } else {
                    let size = lines.len().min(CONTEXT);
                    cur.extend(context_lines(&lines[..size]));
                    hunks.push(Hunk {
                        old_start: old_range_start,
                        old_lines: old_line - old_range_start + size,
                        new_start: new_range_start,
                        new_lines: new_line - new_range_start + size,
                        lines: std::mem::take(&mut cur),
                    });
                    old_range_start = 0;
                    new_range_start = 0;
                }
            }
            old_line += lines.len();
            new_line += lines.len();
        }
    }

    let mut out = vec![
        format!("Index: {name}"),
        "===================================================================".to_string(),
        format!("--- {name}\t{old_header}"),
        format!("+++ {name}\t{new_header}"),
    ];
    for hunk in hunks {
        let old_start = if hunk.old_lines == 0 {
            hunk.old_start - 1
        } else {
            hunk.old_start
        };
        let new_start = if hunk.new_lines == 0 {
            hunk.new_start - 1
        } else {
            hunk.new_start
        };
        out.push(format!(
            "@@ -{old_start},{} +{new_start},{} @@",
            hunk.old_lines, hunk.new_lines
        ));
        for line in hunk.lines {
            match line.strip_suffix('\n') {
                Some(line) => out.push(line.to_string()),
                None => {
                    out.push(line);
                    out.push("\\ No newline at end of file".into());
                }
            }
        }
    }
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_with_context() {
        let patch = two_files_patch("f", "a\nb\nc\n", "a\nB\nc\n", "original", "modified");
        assert_eq!(
            patch,
            "Index: f\n===================================================================\n--- f\toriginal\n+++ f\tmodified\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
    }

    #[test]
    fn no_newline_at_end() {
        let patch = two_files_patch("f", "a", "b", "original", "modified");
        assert!(patch.ends_with("@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"), "{patch}");
    }

    #[test]
    fn identical_texts_have_no_hunk() {
        let patch = two_files_patch("f", "a\n", "a\n", "original", "modified");
        assert!(patch.ends_with("+++ f\tmodified\n"), "{patch}");
    }
}
