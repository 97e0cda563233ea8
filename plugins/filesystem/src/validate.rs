//! The original's `validatePath`: which file a requested path names, and
//! whether it may be touched. The same checks in the same order with the
//! same error texts, except that symlinks are resolved by the plugin itself
//! (WASI has no `realpath`), one component at a time from the allowed
//! directory down, so that no step is taken outside the grants.
//!
//! This check is the plugin's; the sandbox's is the one that holds. The
//! host resolves every path the plugin opens inside the preopened
//! directory (cap-std), so a symlink swapped in after this check (the race
//! the original had) is refused by the host, not followed.

use std::io;

use unicode_normalization::UnicodeNormalization;

use crate::errors::{is_sandbox_refusal, node_message, too_many_links};
use crate::paths::{
    dirname, is_within, join, normalize_absolute, normalize_path, relative, resolve,
};

/// How many symlinks a path may go through (Linux's MAXSYMLINKS).
const MAX_LINKS: usize = 40;

/// The allowed directories: the guest paths of the plugin's preopens.
pub struct Allowed {
    pub dirs: Vec<String>,
    /// Whether each of `dirs` is granted read-write (`mode = "rw"`).
    pub writable: Vec<bool>,
}

/// Why resolving a path stopped.
enum Stop {
    /// A file system error, in Node's words for `realpath`.
    Io(io::Error),
    /// Too many symlinks.
    Loop,
    /// The path leads outside every allowed directory: where to.
    Outside(String),
    /// A symlink with an absolute target: the sandbox neither shows nor
    /// follows it (an absolute host path means nothing in the guest).
    AbsoluteLink(String),
    /// A component changed between two looks at it (a symlink that was no
    /// longer one): something is renaming paths under the check.
    Changed(String),
}

impl Allowed {
    /// The guest's preopened directories, in the manifest's order.
    #[cfg(target_family = "wasm")]
    pub fn from_preopens() -> Allowed {
        use wasip2::filesystem::types::DescriptorFlags;
        let (dirs, writable) = wasip2::filesystem::preopens::get_directories()
            .into_iter()
            .map(|(descriptor, path)| {
                let writable = descriptor
                    .get_flags()
                    .map(|flags| flags.contains(DescriptorFlags::MUTATE_DIRECTORY))
                    .unwrap_or(true);
                (normalize_absolute(&path), writable)
            })
            .unzip();
        Allowed { dirs, writable }
    }

    /// Refuses a write under a directory granted read-only, in words (the
    /// sandbox would refuse it anyway, with a bare "not permitted").
    pub fn check_writable(&self, path: &str) -> Result<(), String> {
        let Some(holder) = self.holder(path) else {
            return Ok(());
        };
        let index = self.dirs.iter().position(|dir| dir == holder);
        if index.is_some_and(|i| !self.writable.get(i).copied().unwrap_or(true)) {
            return Err(format!(
                "Access denied - read-only directory: {path} is in {holder}, which is granted read-only"
            ));
        }
        Ok(())
    }

    fn denied_outside(&self, what: &str, path: &str) -> String {
        format!(
            "Access denied - {what}: {path} not in {}",
            self.dirs.join(", ")
        )
    }

    fn outside_link(&self, target: &str) -> String {
        self.denied_outside("symlink target outside allowed directories", target)
    }

    fn changed(&self, path: &str) -> String {
        format!(
            "Access denied - {path} changed while it was being checked (renamed during the call?); try again"
        )
    }

    fn absolute_link(&self, link: &str) -> String {
        format!(
            "Access denied - symlink target outside allowed directories: {link} points to an absolute path, \
             which the sandbox does not follow (only relative symlinks that stay within {} are followed)",
            self.dirs.join(", ")
        )
    }

    /// The original's `validatePath`: the real path that `requested` names
    /// (or, for a path that does not exist yet, where it would be), or why
    /// it may not be used.
    pub fn validate(&self, requested: &str) -> Result<String, String> {
        if self.dirs.is_empty() {
            // The original refuses to start without one; a plugin is loaded
            // anyway, so each call says what is missing.
            return Err(
                "Access denied - no allowed directories: the plugin's manifest \
                 (filesystem.toml) grants none; add a [[dirs]] entry for each folder it may use"
                    .into(),
            );
        }
        let expanded = expand_home(requested);
        if is_windows_drive(&expanded) {
            return Err(format!(
                "Access denied - Windows-style path received on a POSIX host: {requested}"
            ));
        }
        let absolute = if expanded.starts_with('/') {
            resolve("/", &expanded)
        } else {
            self.resolve_relative(&expanded)
        };
        if !is_within(&normalize_path(&absolute), &self.dirs) {
            return Err(self.denied_outside("path outside allowed directories", &absolute));
        }
        match self.realpath(&absolute) {
            Ok(real) if is_within(&normalize_path(&real), &self.dirs) => Ok(real),
            Ok(real) | Err(Stop::Outside(real)) => Err(self.outside_link(&real)),
            Err(Stop::Io(err)) if err.kind() == io::ErrorKind::NotFound => {
                self.resolve_missing(&absolute)
            }
            Err(Stop::Io(err)) => Err(node_message(&err, "realpath", Some(&absolute), None)),
            Err(Stop::Loop) => Err(too_many_links("realpath", &absolute)),
            Err(Stop::AbsoluteLink(link)) => Err(self.absolute_link(&link)),
            Err(Stop::Changed(path)) => Err(self.changed(&path)),
        }
    }

    /// A relative path is taken against the first allowed directory it
    /// stays within, else against the first one.
    fn resolve_relative(&self, relative_path: &str) -> String {
        for dir in &self.dirs {
            let candidate = resolve(dir, relative_path);
            if is_within(&normalize_path(&candidate), &self.dirs) {
                return candidate;
            }
        }
        let first = self.dirs.first().map(String::as_str).unwrap_or("/");
        resolve(first, relative_path)
    }

    /// The longest allowed directory holding `path`.
    fn holder(&self, path: &str) -> Option<&str> {
        let mut dirs: Vec<&String> = self.dirs.iter().collect();
        dirs.sort_by_key(|dir| std::cmp::Reverse(dir.len()));
        dirs.into_iter()
            .find(|dir| is_within(&normalize_path(path), std::slice::from_ref(dir)))
            .map(String::as_str)
    }

    /// `realpath(3)` within the grants: each component looked at with
    /// `lstat`, each symlink read and followed, from the allowed directory
    /// that holds `absolute` (allowed directories are real paths: they are
    /// the preopens' own names).
    fn realpath(&self, absolute: &str) -> Result<String, Stop> {
        let Some(base) = self.holder(absolute) else {
            return Err(Stop::Outside(absolute.to_string()));
        };
        let mut current = base.to_string();
        let mut todo: Vec<String> = components(&relative(base, absolute));
        todo.reverse(); // a stack: the next component last
        let mut links = 0;
        while let Some(part) = todo.pop() {
            if part == "." || part.is_empty() {
                continue;
            }
            if part == ".." {
                current = dirname(&current);
                if !is_within(&current, &self.dirs) {
                    return Err(Stop::Outside(rest_of(&current, &todo)));
                }
                continue;
            }
            let next = join(&current, &part);
            let meta = std::fs::symlink_metadata(&next).map_err(Stop::Io)?;
            if !meta.file_type().is_symlink() {
                if !todo.is_empty() && !meta.is_dir() {
                    return Err(Stop::Io(io::Error::from(io::ErrorKind::NotADirectory)));
                }
                current = next;
                continue;
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(Stop::Loop);
            }
            // The host refuses to read an absolute target (cap-std treats
            // it as an escape); that refusal is all the guest learns.
            let target = match std::fs::read_link(&next) {
                Ok(target) => target,
                Err(err) if is_sandbox_refusal(&err) => return Err(Stop::AbsoluteLink(next)),
                Err(err) if err.kind() == io::ErrorKind::InvalidInput => {
                    return Err(Stop::Changed(next));
                }
                Err(err) => return Err(Stop::Io(err)),
            };
            let target = target.to_string_lossy().into_owned();
            if target.starts_with('/') {
                // Only the grants can be looked at: a target outside them
                // is reported as where it points, lexically.
                let target = normalize_absolute(&target);
                let Some(holder) = self.holder(&target) else {
                    return Err(Stop::Outside(rest_of(&target, &todo)));
                };
                current = holder.to_string();
                let mut parts = components(&relative(holder, &target));
                parts.reverse();
                todo.extend(parts);
            } else {
                let mut parts = components(&target);
                parts.reverse();
                todo.extend(parts);
            }
        }
        Ok(current)
    }

    /// The original's `resolveUnicodeEquivalentPath`, for a path that does
    /// not exist (yet): walks down from its allowed directory, matching each
    /// component exactly or, failing that, by its NFC form, and resolving
    /// symlinks; the first missing component ends the walk, and the rest is
    /// appended as it is.
    fn resolve_missing(&self, absolute: &str) -> Result<String, String> {
        let missing_parent = || format!("Parent directory does not exist: {}", dirname(absolute));
        let Some(base) = self.holder(absolute) else {
            return Ok(absolute.to_string());
        };
        let mut current = base.to_string();
        let parts = components(&relative(base, absolute));
        for (index, part) in parts.iter().enumerate() {
            let entries = match std::fs::read_dir(&current) {
                Ok(entries) => entries,
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(missing_parent()),
                Err(err) => return Err(node_message(&err, "scandir", Some(&current), None)),
            };
            let names: Vec<String> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect();
            let matches: Vec<&String> = match names.iter().find(|name| *name == part) {
                Some(exact) => vec![exact],
                None => {
                    let wanted: String = part.nfc().collect();
                    names
                        .iter()
                        .filter(|name| name.nfc().collect::<String>() == wanted)
                        .collect()
                }
            };
            if matches.len() > 1 {
                return Err(format!("Ambiguous Unicode path component: {part}"));
            }
            let Some(found) = matches.first() else {
                let rest = parts[index..].join("/");
                return Ok(join(&current, &rest));
            };
            current = match self.realpath(&join(&current, found)) {
                Ok(real) => real,
                Err(Stop::Outside(target)) => return Err(self.outside_link(&target)),
                Err(Stop::Io(err)) if err.kind() == io::ErrorKind::NotFound => {
                    return Err(missing_parent());
                }
                Err(Stop::Io(err)) => {
                    return Err(node_message(
                        &err,
                        "realpath",
                        Some(&join(&current, found)),
                        None,
                    ));
                }
                Err(Stop::Loop) => return Err(too_many_links("realpath", &join(&current, found))),
                Err(Stop::AbsoluteLink(link)) => return Err(self.absolute_link(&link)),
                Err(Stop::Changed(path)) => return Err(self.changed(&path)),
            };
            if !is_within(&normalize_path(&current), &self.dirs) {
                return Err(self.outside_link(&current));
            }
        }
        Ok(current)
    }
}

/// The non-empty components of a path.
fn components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|part| !part.is_empty())
        .map(String::from)
        .collect()
}

/// `path` followed by what is left on the stack `todo`, lexically.
fn rest_of(path: &str, todo: &[String]) -> String {
    let mut out = path.to_string();
    for part in todo.iter().rev() {
        out = format!("{out}/{part}");
    }
    normalize_absolute(&out)
}

/// The original's `expandHome`: `~` is the home directory. The guest has
/// one only if its manifest passes `HOME` in `[env]`.
fn expand_home(path: &str) -> String {
    if (path == "~" || path.starts_with("~/"))
        && let Ok(home) = std::env::var("HOME")
    {
        return join(&home, &path[1..]);
    }
    path.to_string()
}

/// `C:`, `C:\...` or `C:/...`.
fn is_windows_drive(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && (bytes.len() == 2 || bytes[2] == b'\\' || bytes[2] == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grant `data` beside `data_evil` and `outside`, in a fresh folder.
    fn grant() -> (tempfile::TempDir, String, Allowed) {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().to_str().unwrap().to_string();
        for dir in ["data/sub", "data_evil", "outside"] {
            std::fs::create_dir_all(format!("{base}/{dir}")).unwrap();
        }
        std::fs::write(format!("{base}/data/file.txt"), "in").unwrap();
        std::fs::write(format!("{base}/outside/secret.txt"), "out").unwrap();
        let data = format!("{base}/data");
        let allowed = Allowed {
            dirs: vec![data.clone()],
            writable: vec![true],
        };
        (root, base, allowed)
    }

    #[test]
    fn paths_outside_the_grant_are_refused_in_the_originals_words() {
        let (_root, base, allowed) = grant();
        let data = format!("{base}/data");
        for (asked, named) in [
            (format!("{base}/data_evil/x"), format!("{base}/data_evil/x")),
            (
                format!("{data}/../outside/secret.txt"),
                format!("{base}/outside/secret.txt"),
            ),
            (
                "../outside/secret.txt".to_string(),
                format!("{base}/outside/secret.txt"),
            ),
        ] {
            assert_eq!(
                allowed.validate(&asked).unwrap_err(),
                format!("Access denied - path outside allowed directories: {named} not in {data}")
            );
        }
    }

    #[test]
    fn symlinks_are_followed_only_within_the_grant() {
        let (_root, base, allowed) = grant();
        let data = format!("{base}/data");
        std::os::unix::fs::symlink("../file.txt", format!("{data}/sub/in")).unwrap();
        std::os::unix::fs::symlink("../outside/secret.txt", format!("{data}/out")).unwrap();
        std::os::unix::fs::symlink("../outside", format!("{data}/out_dir")).unwrap();
        assert_eq!(
            allowed.validate(&format!("{data}/sub/in")).unwrap(),
            format!("{data}/file.txt")
        );
        let refused = format!(
            "Access denied - symlink target outside allowed directories: {base}/outside/secret.txt not in {data}"
        );
        assert_eq!(
            allowed.validate(&format!("{data}/out")).unwrap_err(),
            refused
        );
        assert_eq!(
            allowed
                .validate(&format!("{data}/out_dir/secret.txt"))
                .unwrap_err(),
            refused
        );
    }

    #[test]
    fn a_missing_path_resolves_below_its_existing_parent() {
        let (_root, base, allowed) = grant();
        let data = format!("{base}/data");
        assert_eq!(
            allowed.validate("sub/new/deep.txt").unwrap(),
            format!("{data}/sub/new/deep.txt")
        );
        std::os::unix::fs::symlink("nowhere", format!("{data}/dangling")).unwrap();
        assert_eq!(
            allowed.validate(&format!("{data}/dangling")).unwrap_err(),
            format!("Parent directory does not exist: {data}")
        );
        assert_eq!(
            allowed.validate(&format!("{data}/file.txt/x")).unwrap_err(),
            format!("ENOTDIR: not a directory, realpath '{data}/file.txt/x'")
        );
    }

    #[test]
    fn unicode_forms_resolve_to_the_one_name_on_disk() {
        let (_root, base, allowed) = grant();
        let data = format!("{base}/data");
        std::fs::write(format!("{data}/cafe\u{301}"), "").unwrap();
        assert_eq!(
            allowed.validate(&format!("{data}/caf\u{e9}")).unwrap(),
            format!("{data}/cafe\u{301}")
        );
        std::fs::write(format!("{data}/\u{212b}"), "").unwrap();
        std::fs::write(format!("{data}/A\u{30a}"), "").unwrap();
        assert_eq!(
            allowed.validate(&format!("{data}/\u{c5}")).unwrap_err(),
            "Ambiguous Unicode path component: \u{c5}"
        );
    }

    #[test]
    fn without_grants_every_path_is_refused_in_words() {
        let allowed = Allowed {
            dirs: Vec::new(),
            writable: Vec::new(),
        };
        let err = allowed.validate("/anything").unwrap_err();
        assert!(
            err.starts_with("Access denied - no allowed directories"),
            "{err}"
        );
    }

    #[test]
    fn a_read_only_grant_refuses_writes_in_words() {
        let (_root, base, mut allowed) = grant();
        allowed.writable = vec![false];
        let err = allowed
            .check_writable(&format!("{base}/data/file.txt"))
            .unwrap_err();
        assert!(
            err.starts_with("Access denied - read-only directory: "),
            "{err}"
        );
    }
}
