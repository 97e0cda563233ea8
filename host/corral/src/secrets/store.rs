//! Corral's own store of secrets: one TOML file, a table per plugin and a
//! value per name, written by `corral secret set` and read at each call.
//!
//! The file is `$CORRAL_SECRETS_FILE`, else `$XDG_CONFIG_HOME/corral/secrets.toml`,
//! else `~/.config/corral/secrets.toml`. It is created 0600 in a folder
//! created 0700, replaced whole by rename (never half-written), and not read
//! at all when anyone but its owner may read or write it. A change holds an
//! exclusive lock on `.NAME.lock` beside it from its read to its rename, so
//! that two at once never lose one another's update.

use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use corral_sandbox::SecretSource;

/// The largest store file read: far more than any set of credentials.
const MAX_FILE_BYTES: u64 = 4 << 20;

/// How long a change waits for another to let go of the store's lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The variable that names the store's file instead of the default.
pub const FILE_VARIABLE: &str = "CORRAL_SECRETS_FILE";

/// The store's file: `$CORRAL_SECRETS_FILE`, or `secrets.toml` in Corral's
/// folder of the user's configuration.
pub fn default_path() -> io::Result<PathBuf> {
    if let Some(path) = std::env::var_os(FILE_VARIABLE).filter(|path| !path.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    corral_sandbox::user_dirs::base("XDG_CONFIG_HOME", ".config")
        .map(|config| config.join("corral/secrets.toml"))
        .ok_or_else(|| {
            io::Error::other(format!(
                "no configuration folder for Corral's secrets (neither XDG_CONFIG_HOME nor HOME is set): name a file with {FILE_VARIABLE}"
            ))
        })
}

/// Corral's own store: the file at `path`.
#[derive(Clone, Debug)]
pub struct Store {
    path: PathBuf,
}

/// The store's contents: plugin -> name -> value.
pub type Entries = std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

impl Store {
    /// The store kept in `path` (which need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Store {
        Store { path: path.into() }
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Everything the store holds; nothing when its file does not exist.
    /// Refused when others may read or write the file.
    pub fn read(&self) -> io::Result<Entries> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Entries::new()),
            Err(err) => return Err(context(err, &format!("cannot open {}", self.shown()))),
        };
        let meta = file.metadata()?;
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} belongs to another user (uid {}): Corral reads secrets only from a file of its own user's",
                    self.shown(),
                    meta.uid()
                ),
            ));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} may be read or written by others (mode {:o}): run `chmod 600 {}`, and change any secret it holds that others may have read",
                    self.shown(),
                    meta.mode() & 0o777,
                    self.path.display()
                ),
            ));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is larger than {MAX_FILE_BYTES} bytes", self.shown()),
            ));
        }
        let mut text = String::new();
        file.take(MAX_FILE_BYTES)
            .read_to_string(&mut text)
            .map_err(|err| context(err, &format!("cannot read {}", self.shown())))?;
        // The parser's message quotes the line it stopped at, which may hold
        // a value: say only where.
        toml::from_str::<Entries>(&text).map_err(|err| {
            let at = err
                .span()
                .map(|span| format!(" at line {}", text[..span.start].lines().count().max(1)))
                .unwrap_or_default();
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is not a table of plugins, each of names and string values{at}: fix it, or remove it and set the secrets again",
                    self.shown()
                ),
            )
        })
    }

    /// Sets `plugin`'s secret `name` to `value`, creating the file (0600)
    /// and its folder (0700) when missing; the file is replaced whole.
    pub fn set(&self, plugin: &str, name: &str, value: &str) -> io::Result<()> {
        check_names(plugin, name)?;
        let _lock = self.lock()?;
        let mut entries = self.read()?;
        entries
            .entry(plugin.to_string())
            .or_default()
            .insert(name.to_string(), value.to_string());
        self.write(&entries)
    }

    /// Removes `plugin`'s secret `name`; whether there was one.
    pub fn remove(&self, plugin: &str, name: &str) -> io::Result<bool> {
        let _lock = self.lock()?;
        let mut entries = self.read()?;
        let Some(names) = entries.get_mut(plugin) else {
            return Ok(false);
        };
        if names.remove(name).is_none() {
            return Ok(false);
        }
        if names.is_empty() {
            entries.remove(plugin);
        }
        self.write(&entries)?;
        Ok(true)
    }

    /// The store's folder, created (0700) when missing.
    fn folder(&self) -> io::Result<&Path> {
        let folder = match self.path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder,
            _ => Path::new("."),
        };
        if !folder.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(folder)
                .map_err(|err| context(err, &format!("cannot create {}", folder.display())))?;
        }
        Ok(folder)
    }

    /// The store's name, for the files beside it.
    fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "secrets.toml".into())
    }

    /// An exclusive lock on `.NAME.lock` beside the store (created 0600,
    /// never removed: removing it would let two changes lock two files),
    /// held until the file returned is dropped. The store itself cannot be
    /// locked: each change replaces it. Waits at most [`LOCK_WAIT`].
    fn lock(&self) -> io::Result<std::fs::File> {
        let path = self.folder()?.join(format!(".{}.lock", self.file_name()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|err| context(err, &format!("cannot open {}", path.display())))?;
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "another change of {} has held its lock ({}) for {} s: try again once it is done",
                            self.shown(),
                            path.display(),
                            LOCK_WAIT.as_secs()
                        ),
                    ));
                }
                Err(std::fs::TryLockError::Error(err)) => {
                    return Err(context(err, &format!("cannot lock {}", path.display())));
                }
            }
        }
    }

    /// Replaces the file with `entries`: a new file beside it, created
    /// 0600, synced, then renamed over it (under [`Store::lock`]).
    fn write(&self, entries: &Entries) -> io::Result<()> {
        let folder = self.folder()?;
        let mut text = String::from(
            "# Corral's secrets, written by `corral secret set PLUGIN NAME`: one table per\n# plugin, one value per name. Keep this file 0600.\n",
        );
        for (plugin, names) in entries {
            let mut table = toml::Table::new();
            for (name, value) in names {
                table.insert(name.clone(), toml::Value::String(value.clone()));
            }
            let mut outer = toml::Table::new();
            outer.insert(plugin.clone(), toml::Value::Table(table));
            text.push('\n');
            text.push_str(&toml::to_string(&outer).map_err(io::Error::other)?);
        }
        let file_name = self.file_name();
        let temporary = folder.join(format!(".{file_name}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        let written = (|| {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temporary)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temporary, &self.path)
        })();
        if let Err(err) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(context(
                err,
                &format!("cannot write {}", self.path.display()),
            ));
        }
        Ok(())
    }

    fn shown(&self) -> String {
        format!("Corral's secret store {}", self.path.display())
    }
}

impl SecretSource for Store {
    fn describe(&self) -> String {
        format!("store {}", self.path.display())
    }

    fn get(&self, plugin: &str, name: &str) -> io::Result<Option<String>> {
        Ok(self
            .read()?
            .get(plugin)
            .and_then(|names| names.get(name))
            .cloned())
    }
}

/// `err` with what was being done.
fn context(err: io::Error, doing: &str) -> io::Error {
    io::Error::new(err.kind(), format!("{doing}: {err}"))
}

/// Refuses a plugin name or a secret name that no plugin could have or
/// grant: what `set` stores must be reachable.
pub fn check_names(plugin: &str, name: &str) -> io::Result<()> {
    if plugin.is_empty() || !plugin.chars().all(corral_sandbox::naming::is_name_char) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{plugin:?} is no plugin's name: a plugin is named by its file's stem (letters, digits, - and _), as `corral list` shows its tools' plugins"
            ),
        ));
    }
    if !super::is_secret_name(name) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{name:?} is no secret's name: names are upper-case letters, digits and _, not starting with a digit, as the plugin's [secrets] table lists them (`corral inspect` shows them)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_new_store_is_a_private_file_in_a_private_folder() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("config/corral/secrets.toml"));
        assert_eq!(store.get("github", "TOKEN").unwrap(), None);
        store
            .set("github", "TOKEN", "s3cr3t \"quoted\"\nline")
            .unwrap();
        store.set("github", "OTHER", "two").unwrap();
        store.set("slack-bot", "TOKEN", "three").unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(store.path()), 0o600);
        assert_eq!(mode(store.path().parent().unwrap()), 0o700);
        assert_eq!(
            store.get("github", "TOKEN").unwrap().as_deref(),
            Some("s3cr3t \"quoted\"\nline")
        );
        assert_eq!(
            store.get("slack-bot", "TOKEN").unwrap().as_deref(),
            Some("three")
        );
        assert_eq!(store.get("slack-bot", "OTHER").unwrap(), None);
        assert!(store.remove("github", "TOKEN").unwrap());
        assert!(!store.remove("github", "TOKEN").unwrap());
        assert_eq!(store.get("github", "TOKEN").unwrap(), None);
        assert_eq!(
            store.get("github", "OTHER").unwrap().as_deref(),
            Some("two")
        );
        // Nothing left behind by the writes but the lock's file, private.
        let mut files: Vec<_> = std::fs::read_dir(store.path().parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        files.sort();
        assert_eq!(files, [".secrets.toml.lock", "secrets.toml"]);
        let lock = store.path().with_file_name(".secrets.toml.lock");
        assert_eq!(mode(&lock), 0o600);
    }

    #[test]
    fn a_change_waits_for_the_lock_and_loses_no_update() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("secrets.toml"));
        let held = store.lock().unwrap();
        let writer = {
            let store = store.clone();
            std::thread::spawn(move || store.set("p", "LATE", "after the lock"))
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        // Not written while the lock is held.
        assert!(!store.path().exists());
        drop(held);
        writer.join().unwrap().unwrap();
        assert_eq!(
            store.get("p", "LATE").unwrap().as_deref(),
            Some("after the lock")
        );
        // Threads of one process lock as processes do (one open file each).
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let store = store.clone();
                std::thread::spawn(move || store.set("p", &format!("N{i}"), &format!("v{i}")))
            })
            .collect();
        for thread in threads {
            thread.join().unwrap().unwrap();
        }
        let entries = store.read().unwrap();
        assert_eq!(entries["p"].len(), 17, "{:?}", entries["p"].keys());
    }

    #[test]
    fn a_store_others_may_read_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("secrets.toml"));
        store.set("p", "TOKEN", "s3cr3t-value").unwrap();
        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = store.get("p", "TOKEN").unwrap_err().to_string();
        assert!(err.contains("mode 644"), "{err}");
        assert!(
            err.contains(&format!("chmod 600 {}", store.path().display())),
            "{err}"
        );
        assert!(store.set("p", "TOKEN", "x").is_err());
    }

    #[test]
    fn a_malformed_store_is_refused_without_quoting_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.toml");
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .unwrap()
            .write_all(b"[p]\nTOKEN = \"s3cr3t-unterminated\n")
            .unwrap();
        let err = Store::new(&path).get("p", "TOKEN").unwrap_err().to_string();
        assert!(err.contains("at line 2"), "{err}");
        assert!(!err.contains("s3cr3t"), "{err}");
    }

    #[test]
    fn names_no_plugin_could_read_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("secrets.toml"));
        for (plugin, name) in [
            ("", "A"),
            ("a/b", "A"),
            ("p", ""),
            ("p", "1A"),
            ("p", "A-B"),
        ] {
            assert!(store.set(plugin, name, "v").is_err(), "{plugin} {name}");
        }
        assert!(!store.path().exists());
    }
}
