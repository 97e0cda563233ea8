//! Where the values of plugins' `[secrets]` grants come from (`--secrets`),
//! and `corral secret`, which sets, lists and removes them.
//!
//! The sandbox knows only the port, [`corral_sandbox::SecretSource`]; the
//! sources live here, one module each, beside the state backends
//! ([`crate::state`]): Corral's own [`store`] (a private file written by
//! `corral secret set`), a [`folder`] of files (Docker's `/run/secrets`, a
//! mounted Kubernetes Secret), and the server's [`env`]ironment under a
//! prefix. The operator orders them with `--secrets` (default
//! `store,env:CORRAL_SECRET_`): the first that holds a value wins. Every
//! value is read at the call that uses it, never kept, so a changed file
//! takes effect at the next call.

pub mod env;
pub mod folder;
pub mod list;
pub mod own;
pub mod prompt;
pub mod store;

#[cfg(test)]
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};
use corral_sandbox::{SecretSource, SecretSources};

/// The order of `--secrets` when none is given.
pub const DEFAULT_SPEC: &str = "store,env:CORRAL_SECRET_";

/// The sources `--secrets SPEC` names, in its order: a comma-separated list
/// of `store` (Corral's store, see [`store::default_path`]), `store:PATH`,
/// `folder:DIR` and `env:PREFIX`; `none` for no source at all.
pub fn sources(spec: &str) -> Result<SecretSources> {
    let mut sources: Vec<Arc<dyn SecretSource>> = Vec::new();
    if spec.trim() == "none" {
        return Ok(SecretSources::new(sources));
    }
    for item in spec.split(',').map(str::trim) {
        let source: Arc<dyn SecretSource> = match item.split_once(':') {
            None if item == "store" => match store::default_path() {
                Ok(path) => Arc::new(store::Store::new(path)),
                // Without a home, the default order goes on without the
                // store; an order that names it says where it is.
                Err(_) if spec == DEFAULT_SPEC => continue,
                Err(err) => bail!("--secrets {spec}: {err}"),
            },
            None if item == "env" => Arc::new(env::Env::new(env::DEFAULT_PREFIX)),
            Some(("store", path)) if !path.is_empty() => Arc::new(store::Store::new(path)),
            Some(("folder", dir)) if !dir.is_empty() => Arc::new(folder::Folder::new(dir)),
            Some(("env", prefix)) if !prefix.is_empty() => Arc::new(env::Env::new(prefix)),
            _ => bail!(
                "--secrets {spec}: {item:?} is no source; expected a comma-separated list of store (Corral's store, `corral secret set`), store:PATH, folder:DIR (a file per secret, as Docker and Kubernetes mount them) and env:PREFIX (the variable PREFIX+NAME), first asked first, or none"
            ),
        };
        sources.push(source);
    }
    Ok(SecretSources::new(sources))
}

/// The store `corral secret set` and `remove` write: the first `store` of
/// `spec`, else the default one.
pub fn writable_store(spec: &str) -> Result<store::Store> {
    for item in spec.split(',').map(str::trim) {
        match item.split_once(':') {
            None if item == "store" => return Ok(store::Store::new(store::default_path()?)),
            Some(("store", path)) if !path.is_empty() => return Ok(store::Store::new(path)),
            _ => {}
        }
    }
    Ok(store::Store::new(store::default_path()?))
}

/// Whether `name` may name a secret, as a manifest's `[secrets]` table
/// names them: `[A-Z_][A-Z0-9_]*`, at most 128 bytes.
pub fn is_secret_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= 128
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_specs_name_their_sources_in_order() {
        let sources = sources("store:/tmp/s.toml, folder:/run/secrets,env:APP_").unwrap();
        assert_eq!(
            sources.describe(),
            [
                "store /tmp/s.toml",
                "folder /run/secrets",
                "environment APP_*"
            ]
        );
        assert!(super::sources("none").unwrap().is_empty());
        for bad in ["", "vault", "folder:", "env:", "store,", "keyring:x"] {
            let err = super::sources(bad).err().unwrap().to_string();
            assert!(err.starts_with(&format!("--secrets {bad}:")), "{err}");
        }
        assert_eq!(
            writable_store("env:X,store:/tmp/a.toml,store:/tmp/b.toml")
                .unwrap()
                .path(),
            Path::new("/tmp/a.toml")
        );
    }

    #[test]
    fn the_environment_source_reads_prefix_and_name() {
        // PATH is set in any test's environment; the prefix is empty here
        // only to reach it without changing the environment.
        let path = std::env::var("PATH").unwrap();
        assert_eq!(env::Env::new("").get("any", "PATH").unwrap(), Some(path));
        assert_eq!(
            env::Env::new("CORRAL_SECRET_TEST_NOTHING_")
                .get("any", "PATH")
                .unwrap(),
            None
        );
    }
}
