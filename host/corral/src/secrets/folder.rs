//! Secrets as files in a folder, the way Docker (`/run/secrets/NAME`) and
//! Kubernetes (a Secret mounted as a volume: one file per key) provide them.
//!
//! Plugin `PLUGIN`'s secret `NAME` is the file `DIR/PLUGIN/NAME` if there
//! is one, else `DIR/NAME` (shared by every plugin granted `NAME`). One
//! trailing newline is stripped (what `echo` and most editors leave); a
//! file larger than 64 KiB, or one that is not UTF-8, is an error. A path
//! that resolves outside the folder (a symbolic link out of it) is refused;
//! links inside it, as Kubernetes makes them (`NAME -> ..data/NAME`), are
//! followed.

use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use corral_sandbox::SecretSource;

/// The largest secret file read.
pub const MAX_VALUE_BYTES: u64 = 64 * 1024;

/// A folder of secret files.
#[derive(Clone, Debug)]
pub struct Folder {
    dir: PathBuf,
}

impl Folder {
    /// The folder `dir` (which need not exist: then it holds nothing).
    pub fn new(dir: impl Into<PathBuf>) -> Folder {
        Folder { dir: dir.into() }
    }

    /// The value in `path`, if it is a file inside the folder.
    fn read(&self, path: &Path) -> io::Result<Option<String>> {
        let resolved = match std::fs::canonicalize(path) {
            Ok(resolved) => resolved,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => {
                return Err(io::Error::new(
                    err.kind(),
                    format!("{}: {err}", path.display()),
                ));
            }
        };
        let root = std::fs::canonicalize(&self.dir)?;
        if !resolved.starts_with(&root) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} leads out of the secrets folder {} (to {}): Corral reads only files inside it",
                    path.display(),
                    self.dir.display(),
                    resolved.display()
                ),
            ));
        }
        if !resolved.is_file() {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        std::fs::File::open(&resolved)?
            .take(MAX_VALUE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|err| io::Error::new(err.kind(), format!("{}: {err}", path.display())))?;
        if bytes.len() as u64 > MAX_VALUE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is larger than 64 KiB, more than any secret",
                    path.display()
                ),
            ));
        }
        let mut value = String::from_utf8(bytes).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not UTF-8 text", path.display()),
            )
        })?;
        if value.ends_with('\n') {
            value.pop();
            if value.ends_with('\r') {
                value.pop();
            }
        }
        Ok(Some(value))
    }
}

impl SecretSource for Folder {
    fn describe(&self) -> String {
        format!("folder {}", self.dir.display())
    }

    fn get(&self, plugin: &str, name: &str) -> io::Result<Option<String>> {
        // A name that could step out of the folder is nobody's secret here.
        let plain = |part: &str| {
            !part.is_empty() && !part.starts_with('.') && !part.contains(['/', '\\', '\0'])
        };
        if !plain(plugin) || !plain(name) || !self.dir.is_dir() {
            return Ok(None);
        }
        match self.read(&self.dir.join(plugin).join(name))? {
            Some(value) => Ok(Some(value)),
            None => self.read(&self.dir.join(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugins_own_file_comes_before_the_shared_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("github")).unwrap();
        std::fs::write(dir.path().join("github/TOKEN"), "own\n").unwrap();
        std::fs::write(dir.path().join("TOKEN"), "shared\r\n").unwrap();
        std::fs::write(dir.path().join("TWO_LINES"), "a\n\n").unwrap();
        let folder = Folder::new(dir.path());
        assert_eq!(
            folder.get("github", "TOKEN").unwrap().as_deref(),
            Some("own")
        );
        assert_eq!(
            folder.get("slack", "TOKEN").unwrap().as_deref(),
            Some("shared")
        );
        assert_eq!(
            folder.get("slack", "TWO_LINES").unwrap().as_deref(),
            Some("a\n")
        );
        assert_eq!(folder.get("slack", "NONE").unwrap(), None);
        // A plugin's folder is not a secret.
        assert_eq!(folder.get("slack", "github").unwrap(), None);
        assert_eq!(
            Folder::new(dir.path().join("absent"))
                .get("p", "TOKEN")
                .unwrap(),
            None
        );
    }

    #[test]
    fn kubernetes_links_inside_the_folder_are_followed_and_links_out_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path();
        // What a mounted Secret looks like: NAME -> ..data/NAME, ..data -> ..2026_...
        std::fs::create_dir(root.join("..2026_11_29")).unwrap();
        std::fs::write(root.join("..2026_11_29/TOKEN"), "from-kubernetes").unwrap();
        std::os::unix::fs::symlink("..2026_11_29", root.join("..data")).unwrap();
        std::os::unix::fs::symlink("..data/TOKEN", root.join("TOKEN")).unwrap();
        std::fs::write(outside.path().join("passwd"), "not yours").unwrap();
        std::os::unix::fs::symlink(outside.path().join("passwd"), root.join("ESCAPE")).unwrap();
        let folder = Folder::new(root);
        assert_eq!(
            folder.get("p", "TOKEN").unwrap().as_deref(),
            Some("from-kubernetes")
        );
        let err = folder.get("p", "ESCAPE").unwrap_err().to_string();
        assert!(err.contains("leads out of the secrets folder"), "{err}");
        assert!(!err.contains("not yours"), "{err}");
        // Names that would walk the tree are nobody's.
        assert_eq!(folder.get("..", "TOKEN").unwrap(), None);
        assert_eq!(folder.get("p", "../x").unwrap(), None);
    }

    #[test]
    fn a_file_too_large_or_not_text_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("BIG"), vec![b'a'; 64 * 1024 + 1]).unwrap();
        std::fs::write(dir.path().join("EXACT"), vec![b'a'; 64 * 1024]).unwrap();
        std::fs::write(dir.path().join("BINARY"), [0xff, 0xfe]).unwrap();
        let folder = Folder::new(dir.path());
        assert!(
            folder
                .get("p", "BIG")
                .unwrap_err()
                .to_string()
                .contains("64 KiB")
        );
        assert_eq!(folder.get("p", "EXACT").unwrap().unwrap().len(), 64 * 1024);
        assert!(
            folder
                .get("p", "BINARY")
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
    }
}
