//! POSIX path arithmetic as Node's `path` module does it (the original's
//! error texts name paths the way `path.resolve`, `path.join`,
//! `path.relative` and `path.dirname` write them), and the original's
//! `normalizePath` and `isPathWithinAllowedDirectories`. Pure functions of
//! strings: nothing here touches the file system.

/// `path.resolve(base, p)`: `p` if absolute, else `base/p`; then `.` and
/// `..` resolved, repeated and trailing slashes dropped.
pub fn resolve(base: &str, p: &str) -> String {
    if p.starts_with('/') {
        normalize_absolute(p)
    } else {
        normalize_absolute(&format!("{base}/{p}"))
    }
}

/// An absolute path with `.`, `..` and empty components resolved
/// lexically (`..` at the root stays at the root).
pub fn normalize_absolute(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `path.join(a, b)` for the joins the tools make: `a` absolute or
/// relative, `b` one or more components.
pub fn join(a: &str, b: &str) -> String {
    let joined = if a.is_empty() {
        b.to_string()
    } else if b.is_empty() {
        a.to_string()
    } else {
        format!("{a}/{b}")
    };
    normalize(&joined)
}

/// `path.normalize`: like [`normalize_absolute`], but a relative path stays
/// relative (leading `..` kept) and a trailing slash is kept.
pub fn normalize(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let absolute = p.starts_with('/');
    let trailing = p.ends_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|last| *last != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            part => parts.push(part),
        }
    }
    let mut out = parts.join("/");
    if absolute {
        out.insert(0, '/');
    }
    if out.is_empty() {
        out.push('.');
    }
    if trailing && !out.ends_with('/') {
        out.push('/');
    }
    out
}

/// `path.dirname`.
pub fn dirname(p: &str) -> String {
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return if p.starts_with('/') {
            "/".into()
        } else {
            ".".into()
        };
    }
    match trimmed.rfind('/') {
        Some(0) => "/".into(),
        Some(i) => trimmed[..i].to_string(),
        None => ".".into(),
    }
}

/// `path.relative(from, to)` when both are absolute, or both relative to
/// the same working directory (which then cancels out).
pub fn relative(from: &str, to: &str) -> String {
    let anchor = |p: &str| {
        if p.starts_with('/') {
            normalize_absolute(p)
        } else {
            // Any absolute stand-in for the working directory will do.
            normalize_absolute(&format!("/\u{0}cwd/{p}"))
        }
    };
    let (from, to) = (anchor(from), anchor(to));
    let from: Vec<&str> = from.split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = to.split('/').filter(|s| !s.is_empty()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out: Vec<&str> = vec![".."; from.len() - common];
    out.extend(&to[common..]);
    out.join("/")
}

/// The original's `normalizePath` on a POSIX host: surrounding whitespace
/// and one quote at each end dropped, repeated slashes collapsed, a
/// trailing slash dropped.
pub fn normalize_path(p: &str) -> String {
    let p = p.trim_matches(is_js_space);
    let p = p.strip_prefix(['"', '\'']).unwrap_or(p);
    let p = p.strip_suffix(['"', '\'']).unwrap_or(p);
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        if c == '/' && out.ends_with('/') {
            continue;
        }
        out.push(c);
    }
    if out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

/// JavaScript's `String.prototype.trim` whitespace.
fn is_js_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// The original's `isPathWithinAllowedDirectories`: `path` (normalized
/// and resolved) is one of `dirs` or below one, component-wise, so that
/// `/data_evil` is not within `/data`.
pub fn is_within(path: &str, dirs: &[String]) -> bool {
    if path.is_empty() || path.contains('\0') {
        return false;
    }
    let path = resolve("/", path);
    dirs.iter().any(|dir| {
        if dir.is_empty() || dir.contains('\0') {
            return false;
        }
        let dir = resolve("/", dir);
        path == dir || dir == "/" || path.starts_with(&format!("{dir}/"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_as_node_does() {
        assert_eq!(resolve("/data", "a/../b/./c/"), "/data/b/c");
        assert_eq!(resolve("/data", "/x//y/.."), "/x");
        assert_eq!(resolve("/data", "../../.."), "/");
        assert_eq!(join("sub", "x"), "sub/x");
        assert_eq!(join("/a/", "b"), "/a/b");
        assert_eq!(dirname("/a/b"), "/a");
        assert_eq!(dirname("/a"), "/");
        assert_eq!(relative("/a/b", "/a/b/c/d"), "c/d");
        assert_eq!(relative("/a/b", "/a/b"), "");
        assert_eq!(relative("sub", "sub/x/y"), "x/y");
    }

    #[test]
    fn a_sibling_with_the_same_prefix_is_outside() {
        let dirs = vec!["/data".to_string()];
        assert!(is_within("/data", &dirs));
        assert!(is_within("/data/x", &dirs));
        assert!(!is_within("/data_evil/x", &dirs));
        assert!(!is_within("/data/../etc", &dirs));
        assert!(!is_within("/data/\0", &dirs));
        assert_eq!(normalize_path(" '/data//x/' "), "/data/x");
    }
}
