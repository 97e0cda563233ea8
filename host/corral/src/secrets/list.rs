//! `corral secret list`: each secret with where its value comes from under
//! the operator's order, never the value.
//!
//! Without a folder: what Corral's store holds. With one: every secret its
//! plugins' manifests grant, each with the source that holds it, or
//! `missing` (and the command that sets it).

use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, Result};
use corral_sandbox::{Manifest, SecretSources};

/// One granted secret as a plugin's manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Granted {
    pub name: String,
    pub description: String,
    pub required: bool,
    /// Each user's own (`per = "principal"`).
    pub per_principal: bool,
}

/// The secrets `manifest` grants, by name.
pub fn granted(manifest: &Manifest) -> Vec<Granted> {
    manifest
        .secrets
        .iter()
        .map(|grant| Granted {
            name: grant.name.clone(),
            description: grant.description.clone(),
            required: grant.required,
            per_principal: grant.per_principal,
        })
        .collect()
}

/// The values of the secrets granted to the plugins of `dir` that
/// `sources` hold (name, value), for redacting what Corral prints about
/// the folder (`corral state list`). A source's error leaves that value
/// out: what cannot be read here is not redacted, and is reported by the
/// calls that need it.
pub fn granted_values(sources: &SecretSources, dir: &Path) -> Vec<(String, String)> {
    let mut values = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return values;
    };
    for path in entries.filter_map(|entry| entry.ok().map(|entry| entry.path())) {
        if path.extension().is_none_or(|ext| ext != "wasm") {
            continue;
        }
        let Ok(manifest) = Manifest::for_plugin(&path) else {
            continue;
        };
        let plugin = corral_sandbox::plugin_name(&path);
        for grant in &manifest.secrets {
            if let Ok(Some((value, _))) = sources.resolve(&plugin, &grant.name) {
                values.push((grant.name.clone(), value));
            }
        }
    }
    values
}

/// Where `plugin`'s secret `name` comes from under `sources`: the
/// description of the source that holds it, else `missing` with the
/// command that sets it, or the source's error (never a value).
pub fn origin(
    sources: &SecretSources,
    plugin: &str,
    name: &str,
    required: bool,
) -> Result<String, String> {
    match sources.resolve(plugin, name) {
        Ok(Some((_value, source))) => Ok(source),
        Ok(None) => {
            let which = if required { "required" } else { "optional" };
            Err(format!(
                "missing ({which}): `corral secret set {plugin} {name}` sets it"
            ))
        }
        Err(err) => Err(format!("unreadable: {err}")),
    }
}

/// Prints the list for `--secrets spec`, of `dir`'s grants if given.
pub fn print(spec: &str, dir: Option<&Path>, out: &mut impl Write) -> Result<()> {
    let sources = super::sources(spec)?;
    let mut rows: Vec<[String; 3]> = Vec::new();
    match dir {
        None => {
            let store = super::writable_store(spec)?;
            for (plugin, names) in store.read()? {
                for name in names.keys() {
                    rows.push([
                        plugin.clone(),
                        name.clone(),
                        origin(&sources, &plugin, name, false).unwrap_or_else(|err| err),
                    ]);
                }
            }
            if rows.is_empty() {
                writeln!(
                    out,
                    "{} holds no secrets: `corral secret set PLUGIN NAME` sets one",
                    store.path().display()
                )?;
                return Ok(());
            }
        }
        Some(dir) => {
            let mut plugins: Vec<_> = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read the folder {}", dir.display()))?
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|path| path.extension().is_some_and(|ext| ext == "wasm"))
                .collect();
            plugins.sort();
            for path in plugins {
                let plugin = corral_sandbox::plugin_name(&path);
                let manifest = match Manifest::for_plugin(&path) {
                    Ok(manifest) => manifest,
                    Err(err) => {
                        rows.push([plugin, "-".into(), format!("manifest not read: {err}")]);
                        continue;
                    }
                };
                for grant in granted(&manifest) {
                    let from = origin(&sources, &plugin, &grant.name, grant.required)
                        .unwrap_or_else(|err| err);
                    // Over authorized HTTP each user's own; the operator's
                    // sources serve calls without a principal.
                    let from = if grant.per_principal {
                        format!(
                            "each user's own over OAuth (Corral's page); without a user: {from}"
                        )
                    } else {
                        from
                    };
                    rows.push([plugin.clone(), grant.name, from]);
                }
            }
            if rows.is_empty() {
                writeln!(out, "no plugin in {} is granted a secret", dir.display())?;
                return Ok(());
            }
        }
    }
    let width = |column: usize| rows.iter().map(|row| row[column].len()).max().unwrap_or(0);
    let (plugins, names) = (width(0).max(6), width(1).max(4));
    writeln!(out, "{:plugins$}  {:names$}  FROM", "PLUGIN", "NAME")?;
    for [plugin, name, from] in &rows {
        writeln!(out, "{plugin:plugins$}  {name:names$}  {from}")?;
    }
    Ok(())
}
