//! The compile cache: compiled plugins kept on disk, so that a restart (or a
//! reload of a file seen before) skips Cranelift.
//!
//! An entry is keyed by the BLAKE3 hash of the component's bytes and by the
//! engine's compatibility hash ([`Engine::precompile_compatibility_hash`]),
//! so a different wasmtime or engine configuration never picks up another's
//! artifact:
//!
//! ```text
//! <cache dir>/<engine hash>/<component blake3>.cwasm         the artifact
//! <cache dir>/<engine hash>/<component blake3>.cwasm.blake3  its own blake3
//! ```
//!
//! BLAKE3 rather than SHA-256: a warm start hashes every plugin and every
//! artifact it loads, and BLAKE3 is several times faster; both are
//! collision-resistant.
//!
//! Both files are written to a temporary name and renamed into place, never
//! written in place. An entry is trusted only when the artifact's digest
//! matches the one stored beside it; otherwise (or when wasmtime refuses to
//! deserialize it) the component is compiled again and the entry
//! overwritten. A cache that cannot be written (read-only disk, no home
//! folder) only costs speed: compiling always works.
//!
//! Loads of the same component that overlap (a folder of copies, plugins
//! loaded in parallel) share one compile or one deserialization.
//!
//! A cache belongs to whoever makes it: a [`Sandbox`](crate::Sandbox)
//! compiles through the one its [options](crate::SandboxOptions::cache)
//! name, and without one (the default, and what library users and unit
//! tests get) it just compiles. Sandboxes may share a cache (it is behind an
//! `Arc`), and then share its overlapping loads too.

use std::collections::HashMap;
use std::hash::Hasher;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use anyhow::{Context as _, Result};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The cache the command line asks for: none when `disabled`, else one in
/// `dir`, else in the [default folder](default_dir) when there is one.
pub fn configured(dir: Option<PathBuf>, disabled: bool) -> Option<CompileCache> {
    if disabled {
        return None;
    }
    let dir = dir.or_else(default_dir);
    if dir.is_none() {
        tracing::warn!("no compile cache: neither XDG_CACHE_HOME nor HOME is set");
    }
    dir.map(CompileCache::new)
}

/// The default cache folder: `$XDG_CACHE_HOME/corral`, else `~/.cache/corral`.
pub fn default_dir() -> Option<PathBuf> {
    crate::user_dirs::base("XDG_CACHE_HOME", ".cache").map(|base| base.join("corral"))
}

/// Where a load's compiled code came from: what its log line says, so that
/// a build and a server sharing a cache can be seen compiling once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Cranelift compiled it for this load (a miss, or no cache at all).
    Compiled,
    /// Read from a verified entry of the compile cache.
    Cached,
    /// Another load of the same bytes in this process, at the same time,
    /// compiled or read it, and this one waited for it.
    Shared,
}

impl std::fmt::Display for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Provenance::Compiled => "compiled",
            Provenance::Cached => "cached",
            Provenance::Shared => "shared",
        })
    }
}

/// Compiled components on disk, under one folder.
#[derive(Debug)]
pub struct CompileCache {
    dir: PathBuf,
    /// Whether a failure to write has been reported (once is enough).
    warned: AtomicBool,
    /// Loads in progress, by entry key.
    loading: Mutex<HashMap<String, SharedLoad>>,
    /// Temporary files made so far, numbering the next one.
    temporaries: AtomicU64,
    /// Held by the one compile that runs at a time. Each compile already
    /// uses every core (wasmtime compiles functions in parallel), so one at
    /// a time costs nothing, and it lets the function cache work across
    /// plugins: components built by one toolchain share most of their code
    /// (every Python plugin carries CPython), and the second compiles from
    /// what the first cached: the six Python examples, cold, in 25 s, the
    /// first in 11 s and each other in 3 s.
    compiling: Mutex<()>,
}

/// Where one component's entry lives.
struct Entry {
    /// The engine and content key, naming the entry.
    key: String,
    artifact: PathBuf,
    digest: PathBuf,
}

/// A load of one entry that others may be waiting for; the error as text,
/// since every waiter gets a copy.
type SharedLoad = Arc<OnceLock<Result<Component, String>>>;

impl CompileCache {
    /// A cache in `dir`, created on first write.
    pub fn new(dir: impl Into<PathBuf>) -> CompileCache {
        CompileCache {
            dir: dir.into(),
            warned: AtomicBool::new(false),
            loading: Mutex::new(HashMap::new()),
            temporaries: AtomicU64::new(0),
            compiling: Mutex::new(()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The component for `bytes`: deserialized from a verified cache entry,
    /// or compiled (and then stored), and which of the two. A call that
    /// overlaps another for the same component waits for it and shares its
    /// result.
    pub fn compile(&self, engine: &Engine, bytes: &[u8]) -> Result<(Component, Provenance)> {
        let entry = self.entry(engine, bytes);
        let shared: SharedLoad = self
            .loading
            .lock()
            .unwrap()
            .entry(entry.key.clone())
            .or_default()
            .clone();
        // Set only when this call did the work, not when it waited for another.
        let mut provenance = Provenance::Shared;
        let result = shared
            .get_or_init(|| {
                self.load_or_compile(engine, &entry, bytes)
                    .map(|(component, how)| {
                        provenance = how;
                        component
                    })
                    .map_err(|err| format!("{err:#}"))
            })
            .clone();
        // Done: later loads read the disk again (a finished load is not
        // kept in memory, or every replaced plugin version would be).
        let mut loading = self.loading.lock().unwrap();
        if loading
            .get(&entry.key)
            .is_some_and(|current| Arc::ptr_eq(current, &shared))
        {
            loading.remove(&entry.key);
        }
        result
            .map(|component| (component, provenance))
            .map_err(anyhow::Error::msg)
    }

    fn load_or_compile(
        &self,
        engine: &Engine,
        entry: &Entry,
        bytes: &[u8],
    ) -> Result<(Component, Provenance)> {
        match self.load(engine, entry) {
            Ok(Some(component)) => return Ok((component, Provenance::Cached)),
            Ok(None) => {}
            Err(err) => tracing::warn!(
                "compile cache: discarding {}: {err:#}; compiling again",
                entry.artifact.display()
            ),
        }
        let one_at_a_time = self
            .compiling
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let started = Instant::now();
        let artifact = engine.precompile_component(bytes)?;
        drop(one_at_a_time);
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "compiled {} bytes of component",
            bytes.len()
        );
        if let Err(err) = self.store(entry, &artifact)
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "compile cache: cannot write to {}: {err:#}; plugins are compiled at every start",
                self.dir.display()
            );
        }
        // SAFETY: the artifact was produced just now by this engine.
        let component = unsafe { Component::deserialize(engine, &artifact) }?;
        Ok((component, Provenance::Compiled))
    }

    fn entry(&self, engine: &Engine, bytes: &[u8]) -> Entry {
        let mut hasher = DigestHasher(blake3::Hasher::new());
        std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut hasher);
        let engine_key = hex(&hasher.0.finalize().as_bytes()[..16]);
        let content_key = blake3::hash(bytes).to_hex();
        let folder = self.dir.join(&engine_key);
        Entry {
            key: format!("{engine_key}/{content_key}"),
            artifact: folder.join(format!("{content_key}.cwasm")),
            digest: folder.join(format!("{content_key}.cwasm.blake3")),
        }
    }

    /// The cached component, `None` when there is no entry, or an error when
    /// the entry is there but not to be trusted.
    fn load(&self, engine: &Engine, entry: &Entry) -> Result<Option<Component>> {
        let expected = match std::fs::read_to_string(&entry.digest) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err).context("reading the digest"),
        };
        let artifact = match std::fs::read(&entry.artifact) {
            Ok(artifact) => artifact,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err).context("reading the artifact"),
        };
        if blake3::hash(&artifact).to_hex().as_str() != expected.trim() {
            anyhow::bail!("its digest does not match (corrupt or partly written)");
        }
        drop(artifact);
        // SAFETY: the file holds exactly the bytes this cache wrote from
        // `Engine::precompile_component` (checked by digest just above), in
        // a folder keyed by this engine's compatibility hash; wasmtime checks
        // the engine configuration again. Entries are replaced by rename,
        // never modified in place, so the mapping stays valid.
        let component = unsafe { Component::deserialize_file(engine, &entry.artifact) }
            .map_err(anyhow::Error::from)
            .context("deserializing")?;
        tracing::debug!("compile cache hit: {}", entry.artifact.display());
        Ok(Some(component))
    }

    /// Writes the artifact, then its digest, each by rename.
    fn store(&self, entry: &Entry, artifact: &[u8]) -> Result<()> {
        let folder = entry.artifact.parent().expect("entries live in a folder");
        std::fs::create_dir_all(folder)
            .with_context(|| format!("creating {}", folder.display()))?;
        self.write_by_rename(&entry.artifact, artifact)?;
        self.write_by_rename(&entry.digest, blake3::hash(artifact).to_hex().as_bytes())?;
        Ok(())
    }

    /// Writes `bytes` to a fresh temporary file beside `path`, then renames
    /// it over `path`, so that readers see the old file or the whole new
    /// one. No fsync: after a crash, a torn entry fails its digest and is
    /// rewritten.
    fn write_by_rename(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let (temporary, written) = loop {
            let mut temporary = path.as_os_str().to_owned();
            temporary.push(format!(
                ".tmp-{}-{}",
                std::process::id(),
                self.temporaries.fetch_add(1, Ordering::Relaxed)
            ));
            let temporary = PathBuf::from(temporary);
            // A name of its own: another cache on the same folder (in this
            // process, with its own count) may be writing the same entry.
            let file = std::fs::File::options()
                .write(true)
                .create_new(true)
                .open(&temporary);
            let written = match file {
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => Err(err),
                Ok(mut file) => {
                    let written = file.write_all(bytes);
                    drop(file);
                    written.and_then(|()| std::fs::rename(&temporary, path))
                }
            };
            break (temporary, written);
        };
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written.with_context(|| format!("writing {}", path.display()))
    }
}

/// Feeds what a `Hash` implementation writes into BLAKE3: a digest that,
/// unlike `DefaultHasher`'s, is the same across Rust releases.
struct DigestHasher(blake3::Hasher);

impl Hasher for DigestHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        unreachable!("only the BLAKE3 digest is used")
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component there is.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    fn artifacts(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for folder in std::fs::read_dir(dir).unwrap() {
            for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                if path.extension().is_some_and(|e| e == "cwasm") {
                    found.push(path);
                }
            }
        }
        found
    }

    #[test]
    fn a_second_compile_is_served_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::new(dir.path());
        let engine = Engine::default();
        let (_, first) = cache.compile(&engine, EMPTY_COMPONENT).unwrap();
        assert_eq!(first, Provenance::Compiled);
        let written = artifacts(dir.path());
        assert_eq!(written.len(), 1);
        let modified = std::fs::metadata(&written[0]).unwrap().modified().unwrap();
        let (_, second) = cache.compile(&engine, EMPTY_COMPONENT).unwrap();
        assert_eq!(
            second,
            Provenance::Cached,
            "the log says it was not compiled"
        );
        assert_eq!(
            std::fs::metadata(&written[0]).unwrap().modified().unwrap(),
            modified,
            "a hit does not rewrite the entry"
        );
    }

    #[test]
    fn a_corrupt_entry_is_recompiled_and_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::new(dir.path());
        let engine = Engine::default();
        cache.compile(&engine, EMPTY_COMPONENT).unwrap();
        let artifact = artifacts(dir.path()).remove(0);
        let good = std::fs::read(&artifact).unwrap();
        let mut bad = good.clone();
        let middle = bad.len() / 2;
        bad[middle] ^= 0xff;
        std::fs::write(&artifact, &bad).unwrap();
        cache.compile(&engine, EMPTY_COMPONENT).unwrap();
        assert_eq!(std::fs::read(&artifact).unwrap(), good);

        // A digest that matches garbage: wasmtime refuses it, and it is replaced.
        std::fs::write(&artifact, b"garbage").unwrap();
        let mut digest = artifact.as_os_str().to_owned();
        digest.push(".blake3");
        std::fs::write(&digest, blake3::hash(b"garbage").to_hex().as_bytes()).unwrap();
        cache.compile(&engine, EMPTY_COMPONENT).unwrap();
        assert_eq!(std::fs::read(&artifact).unwrap(), good);
    }

    #[test]
    fn engines_with_different_settings_do_not_share_entries() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::new(dir.path());
        cache.compile(&Engine::default(), EMPTY_COMPONENT).unwrap();
        let mut config = wasmtime::Config::new();
        config.consume_fuel(true);
        cache
            .compile(&Engine::new(&config).unwrap(), EMPTY_COMPONENT)
            .unwrap();
        assert_eq!(artifacts(dir.path()).len(), 2);
    }

    #[test]
    fn two_caches_on_one_folder_write_the_same_entry_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let caches = [CompileCache::new(dir.path()), CompileCache::new(dir.path())];
        std::thread::scope(|scope| {
            for cache in &caches {
                let engine = &engine;
                scope.spawn(move || {
                    for _ in 0..20 {
                        cache
                            .store(&cache.entry(engine, EMPTY_COMPONENT), b"artifact")
                            .unwrap();
                    }
                });
            }
        });
        let written = artifacts(dir.path());
        assert_eq!(written.len(), 1);
        assert_eq!(std::fs::read(&written[0]).unwrap(), b"artifact");
        let files = std::fs::read_dir(written[0].parent().unwrap())
            .unwrap()
            .count();
        assert_eq!(files, 2, "the artifact and its digest, no temporary left");
    }

    #[test]
    fn an_unwritable_cache_still_compiles() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let cache = CompileCache::new(file.path().join("below-a-file"));
        cache.compile(&Engine::default(), EMPTY_COMPONENT).unwrap();
    }
}
