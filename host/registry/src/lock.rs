//! `corral.lock`: the digests a folder's pulled plugins must have.
//!
//! `corral pull` records, for each file it writes, where it came from and
//! the sha256 of the bytes written; `corral serve` refuses a listed file
//! whose bytes no longer match, so a pinned plugin cannot change under its
//! user. Files not listed are served as before (plugins copied by hand).
//!
//! The file is TOML but not named `*.toml`, so it is never taken for a
//! plugin's manifest:
//! ```toml
//! version = 1
//!
//! [plugins."calc.wasm"]
//! reference = "127.0.0.1:5000/demo/calc:1.0.0"
//! digest = "sha256:7413…"   # the OCI manifest digest (what a signature covers)
//! wasm = "sha256:24ea…"     # calc.wasm as written
//! manifest = "sha256:0528…" # calc.toml; absent: the artifact had none, and calc.toml must not exist
//! signer = "sha256:9f2c…"   # fingerprint of the key that verified it; absent: pulled unverified
//! pulled = "2026-11-23T13:51:55Z"
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::digest::{is_sha256_digest, sha256_digest};
use serde::{Deserialize, Serialize};

/// The lock's file name inside a plugin folder.
pub const LOCK_FILE: &str = "corral.lock";

/// The lock's format version.
const VERSION: u32 = 1;

/// A lock larger than this is refused unread: a folder of thousands of
/// pulled plugins stays far below it.
const MAX_LOCK_BYTES: u64 = 4 << 20;

/// The parsed `corral.lock` of one folder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    version: u32,
    /// By file name (`calc.wasm`).
    #[serde(default)]
    pub plugins: BTreeMap<String, Entry>,
}

/// What one pulled plugin file must be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The reference it was pulled by, as the user gave it.
    pub reference: String,
    /// The OCI manifest digest it resolved to.
    pub digest: String,
    /// `sha256:…` of the `.wasm` file as written.
    pub wasm: String,
    /// `sha256:…` of the `.toml` manifest as written; `None` when the
    /// artifact carried none, and then no manifest may appear beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// The fingerprint of the key whose signature was verified; `None`
    /// when pulled without `--verify-key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// When it was pulled (RFC 3339, UTC).
    pub pulled: String,
}

/// Why a lock could not be read.
#[derive(Debug)]
pub enum LockError {
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    TooLarge {
        path: PathBuf,
        bytes: u64,
    },
    Invalid {
        path: PathBuf,
        reason: String,
    },
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Unreadable { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            LockError::TooLarge { path, bytes } => write!(
                f,
                "{} is {bytes} bytes, over the {} MiB a lock may have",
                path.display(),
                MAX_LOCK_BYTES >> 20
            ),
            LockError::Invalid { path, reason } => {
                write!(f, "{} is not a valid lock: {reason}", path.display())
            }
        }
    }
}

impl std::error::Error for LockError {}

/// A file that differs from what the lock pins.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Which file differs: the `.wasm` or its manifest.
    pub what: String,
    pub reference: String,
    pub expected: Option<String>,
    pub found: Option<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digest = |digest: &Option<String>| match digest {
            Some(digest) => digest.clone(),
            None => "absent".to_owned(),
        };
        let pulled = match &self.expected {
            Some(expected) => format!("as {expected}"),
            None => "without one".to_owned(),
        };
        write!(
            f,
            "{} does not match {LOCK_FILE}: pulled from {} {pulled}, it is now {}; pull it again, or remove its entry from {LOCK_FILE} to serve it unpinned",
            self.what,
            self.reference,
            digest(&self.found),
        )
    }
}

impl std::error::Error for Mismatch {}

impl Lock {
    /// An empty lock.
    pub fn new() -> Lock {
        Lock {
            version: VERSION,
            plugins: BTreeMap::new(),
        }
    }

    /// The lock of `dir`; an empty one when the folder has none.
    pub fn read(dir: &Path) -> Result<Lock, LockError> {
        let path = dir.join(LOCK_FILE);
        let unreadable = |error| LockError::Unreadable {
            path: path.clone(),
            error,
        };
        let bytes = match std::fs::metadata(&path) {
            Ok(meta) => meta.len(),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::new()),
            Err(err) => return Err(unreadable(err)),
        };
        if bytes > MAX_LOCK_BYTES {
            return Err(LockError::TooLarge { path, bytes });
        }
        let text = std::fs::read_to_string(&path).map_err(unreadable)?;
        Lock::parse(&text).map_err(|reason| LockError::Invalid { path, reason })
    }

    /// Parses a lock's text.
    pub fn parse(text: &str) -> Result<Lock, String> {
        if text.len() as u64 > MAX_LOCK_BYTES {
            return Err(format!("over {} MiB", MAX_LOCK_BYTES >> 20));
        }
        let lock: Lock = toml::from_str(text).map_err(|err| err.message().to_owned())?;
        if lock.version != VERSION {
            return Err(format!(
                "version {} (this Corral reads version {VERSION})",
                lock.version
            ));
        }
        for (file, entry) in &lock.plugins {
            if !file.ends_with(".wasm") || file.contains(['/', '\\']) {
                return Err(format!("`{file}` is not a plugin file name"));
            }
            for digest in [
                Some(&entry.digest),
                Some(&entry.wasm),
                entry.manifest.as_ref(),
            ]
            .into_iter()
            .flatten()
            {
                if !is_sha256_digest(digest) {
                    return Err(format!("{file}: `{digest}` is not a sha256 digest"));
                }
            }
        }
        Ok(lock)
    }

    /// The lock as its file's text.
    pub fn to_text(&self) -> String {
        let body = toml::to_string(self).expect("a lock always serializes");
        format!(
            "# Written by `corral pull`. `corral serve` refuses a file listed here whose\n# digest differs. Remove an entry to serve that file unpinned.\n{body}"
        )
    }

    /// Writes the lock into `dir` atomically (a temporary file renamed over
    /// it), so that a reader never sees half a lock.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let part = dir.join(format!(".{LOCK_FILE}.part"));
        std::fs::write(&part, self.to_text())?;
        std::fs::rename(&part, dir.join(LOCK_FILE)).inspect_err(|_| {
            let _ = std::fs::remove_file(&part);
        })
    }

    /// Checks the plugin file `file` (`calc.wasm`), with the bytes `wasm`
    /// and its manifest's bytes `manifest` (`None` when it has none),
    /// against the lock. A file the lock does not list passes.
    pub fn check(&self, file: &str, wasm: &[u8], manifest: Option<&[u8]>) -> Result<(), Mismatch> {
        let Some(entry) = self.plugins.get(file) else {
            return Ok(());
        };
        let found = sha256_digest(wasm);
        if found != entry.wasm {
            return Err(Mismatch {
                what: file.to_owned(),
                reference: entry.reference.clone(),
                expected: Some(entry.wasm.clone()),
                found: Some(found),
            });
        }
        let found = manifest.map(sha256_digest);
        if found != entry.manifest {
            return Err(Mismatch {
                what: format!("the manifest of {file}"),
                reference: entry.reference.clone(),
                expected: entry.manifest.clone(),
                found,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(wasm: &[u8], manifest: Option<&[u8]>) -> Entry {
        Entry {
            reference: "127.0.0.1:5000/demo/calc:1".into(),
            digest: sha256_digest(b"manifest"),
            wasm: sha256_digest(wasm),
            manifest: manifest.map(sha256_digest),
            signer: None,
            pulled: "2026-11-23T13:51:55Z".into(),
        }
    }

    #[test]
    fn a_lock_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Lock::read(dir.path()).unwrap(), Lock::new());
        let mut lock = Lock::new();
        lock.plugins
            .insert("calc.wasm".into(), entry(b"wasm", Some(b"toml")));
        lock.plugins
            .insert("echo.wasm".into(), entry(b"echo", None));
        lock.write(dir.path()).unwrap();
        assert_eq!(Lock::read(dir.path()).unwrap(), lock);
        assert!(!dir.path().join(".corral.lock.part").exists());
    }

    #[test]
    fn check_names_the_file_that_changed() {
        let mut lock = Lock::new();
        lock.plugins
            .insert("calc.wasm".into(), entry(b"wasm", Some(b"toml")));
        assert_eq!(lock.check("calc.wasm", b"wasm", Some(b"toml")), Ok(()));
        assert_eq!(lock.check("other.wasm", b"anything", None), Ok(()));
        let changed = lock
            .check("calc.wasm", b"wasm!", Some(b"toml"))
            .unwrap_err();
        assert_eq!(changed.what, "calc.wasm");
        let message = changed.to_string();
        assert!(message.contains("127.0.0.1:5000/demo/calc:1"), "{message}");
        assert!(message.contains(&sha256_digest(b"wasm!")), "{message}");
        let manifest = lock
            .check("calc.wasm", b"wasm", Some(b"grants"))
            .unwrap_err();
        assert_eq!(manifest.what, "the manifest of calc.wasm");
        let removed = lock.check("calc.wasm", b"wasm", None).unwrap_err();
        assert!(
            removed.to_string().contains("it is now absent"),
            "{removed}"
        );
        // A manifest added beside a plugin pulled without one is refused.
        lock.plugins
            .insert("echo.wasm".into(), entry(b"echo", None));
        assert!(lock.check("echo.wasm", b"echo", Some(b"grants")).is_err());
    }

    #[test]
    fn a_lock_over_its_bound_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let padding = " ".repeat(MAX_LOCK_BYTES as usize + 1);
        std::fs::write(
            dir.path().join(LOCK_FILE),
            format!("version = 1\n{padding}"),
        )
        .unwrap();
        let err = Lock::read(dir.path()).unwrap_err();
        assert!(matches!(err, LockError::TooLarge { .. }), "{err}");
        assert!(err.to_string().contains("over the 4 MiB"), "{err}");
        assert!(Lock::parse(&format!("version = 1\n{padding}")).is_err());
    }

    #[test]
    fn bad_locks_are_refused_with_the_reason() {
        for (text, reason) in [
            ("version = 2", "version 2"),
            ("version = 1\nextra = 1", "unknown field"),
            (
                "version = 1\n[plugins.\"../x.wasm\"]\nreference='r'\ndigest='sha256:00'\nwasm='w'\npulled='p'",
                "not a plugin file name",
            ),
            (
                "version = 1\n[plugins.\"x.wasm\"]\nreference='r'\ndigest='sha256:00'\nwasm='w'\npulled='p'",
                "not a sha256 digest",
            ),
        ] {
            let err = Lock::parse(text).unwrap_err();
            assert!(err.contains(reason), "{text}: {err}");
        }
    }
}
