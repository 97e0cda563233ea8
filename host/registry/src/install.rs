//! `corral pull`: an artifact from a registry into a plugin folder, in two
//! steps so that nothing in the folder changes until everything checked:
//! [`fetch`] resolves the reference, verifies the signature (when a key
//! is given), checks the layout, and downloads the component to a hidden
//! temporary file in the folder; the caller shows the grants, and then
//! [`Fetched::install`] writes the manifest, the lock, and renames the
//! component into place. A [`Fetched`] dropped uninstalled leaves the
//! folder as it was.

use std::path::{Path, PathBuf};

use crate::VerifyingKey;
use anyhow::{Context as _, Result, anyhow, bail};
use oci_client::manifest::OciImageManifest;

use crate::artifact::{
    self, Layout, MANIFEST_MEDIA_TYPE, MAX_COMPONENT_BYTES, MAX_CONFIG_BYTES, MAX_MANIFEST_BYTES,
};
use crate::cosign::{self, SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE, SignatureLayer};
use crate::digest::sha256_digest;
use crate::lock::{Entry, LOCK_FILE, Lock};
use crate::progress::Progress;
use crate::reference::{Reference, at_tag};
use crate::transport::Registry;

/// The key a pull must be signed by.
pub struct TrustedKey<'a> {
    pub key: &'a VerifyingKey,
    /// How the user named it (the file), for messages.
    pub name: &'a str,
    /// Its fingerprint, recorded in the lock.
    pub fingerprint: String,
}

/// A checked artifact whose component waits in a temporary file.
#[derive(Debug)]
pub struct Fetched {
    /// The reference as the user gave it.
    pub reference: String,
    /// The manifest digest it resolved to.
    pub digest: String,
    pub layout: Layout,
    /// The fingerprint of the key that verified its signature.
    pub signer: Option<String>,
    /// The component, downloaded and checked, not yet in place.
    part: PathBuf,
}

/// Resolves `reference`, verifies it is signed by `trusted` (if given),
/// and downloads the component into a hidden temporary file in `dir`.
pub async fn fetch(
    registry: &Registry,
    reference: &Reference,
    given: &str,
    trusted: Option<&TrustedKey<'_>>,
    dir: &Path,
) -> Result<Fetched> {
    let (manifest, digest) = registry
        .manifest(reference, &[MANIFEST_MEDIA_TYPE], MAX_MANIFEST_BYTES)
        .await?;
    let layout = artifact::check_manifest(&manifest)
        .map_err(|reason| anyhow!("{given} cannot be installed: {reason}"))?;
    let signer = match trusted {
        Some(trusted) => {
            verify(registry, reference, given, &digest, trusted).await?;
            Some(trusted.fingerprint.clone())
        }
        None => None,
    };
    let config = registry
        .blob(reference, &layout.config, MAX_CONFIG_BYTES)
        .await?;
    artifact::check_config(&config, &layout.layer)
        .map_err(|reason| anyhow!("{given} cannot be installed: {reason}"))?;
    let part = dir.join(format!(".corral-pull-{}.wasm.part", std::process::id()));
    let fetched = Fetched {
        reference: given.to_owned(),
        digest,
        signer,
        part,
        layout,
    };
    let mut progress = Progress::new(format!("pulling {given}"), fetched.layout.layer.size as u64);
    registry
        .blob_to_file(
            reference,
            &fetched.layout.layer,
            MAX_COMPONENT_BYTES,
            &fetched.part,
            &mut progress,
        )
        .await?;
    progress.finish();
    Ok(fetched)
}

/// Checks that the manifest `digest` carries a signature by `trusted`.
async fn verify(
    registry: &Registry,
    reference: &Reference,
    given: &str,
    digest: &str,
    trusted: &TrustedKey<'_>,
) -> Result<()> {
    let at = at_tag(reference, cosign::signature_tag(digest));
    let Some((manifest, _)) = registry
        .manifest_if_any(&at, &[MANIFEST_MEDIA_TYPE], MAX_MANIFEST_BYTES)
        .await?
    else {
        bail!(
            "{given} is not signed: there is no signature at {at} (sign it with `corral push --key` or `cosign sign --key`)"
        );
    };
    let manifest: OciImageManifest = serde_json::from_slice(&manifest).map_err(|err| {
        anyhow!("{given}: the signature manifest {at} is not an OCI manifest ({err})")
    })?;
    // Only the newest signatures are read (cosign appends), as many as
    // `cosign::verify` checks, and no payload larger than it reads.
    let signed: Vec<_> = manifest
        .layers
        .iter()
        .filter(|layer| layer.media_type == SIMPLE_SIGNING_MEDIA_TYPE)
        .collect();
    let max_payload = cosign::MAX_PAYLOAD_BYTES as u64;
    let mut layers = Vec::new();
    for layer in &signed[signed.len().saturating_sub(cosign::MAX_LAYERS)..] {
        // A layer that cannot be a signature still counts as one not by
        // this key, so that the message tallies what the image holds.
        let signature = layer
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(SIGNATURE_ANNOTATION));
        let fits = u64::try_from(layer.size).is_ok_and(|size| size <= max_payload);
        let (Some(signature), true) = (signature, fits) else {
            layers.push(SignatureLayer {
                payload: Vec::new(),
                signature: String::new(),
            });
            continue;
        };
        let payload = registry.blob(&at, layer, max_payload).await?;
        layers.push(SignatureLayer {
            payload,
            signature: signature.clone(),
        });
    }
    cosign::verify(&layers, trusted.key, digest).map_err(|err| {
        anyhow!(
            "{given} is not signed by {} ({}): {err}",
            trusted.name,
            trusted.fingerprint
        )
    })
}

impl Fetched {
    /// The file name the component would take in a folder: the layer's
    /// title, else the repository's last segment, with `.wasm`.
    pub fn default_name(&self, reference: &Reference) -> String {
        let title = self
            .layout
            .title
            .as_deref()
            .and_then(|title| title.strip_suffix(".wasm"))
            .filter(|stem| !stem.is_empty() && !stem.contains(['/', '\\']));
        match title {
            Some(stem) => stem.to_owned(),
            None => reference
                .repository()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned(),
        }
    }

    /// Puts the component into `dir` as `name.wasm`, with its manifest as
    /// `name.toml` (or none, removing a stale one), and records both in
    /// `dir`'s lock. The lock is written first: should the process stop
    /// half way, the folder refuses the files rather than serving unchecked
    /// ones; should a step fail, the lock and the manifest are put back as
    /// they were.
    pub fn install(mut self, dir: &Path, name: &str) -> Result<PathBuf> {
        let file = format!("{name}.wasm");
        let wasm = dir.join(&file);
        let toml = dir.join(format!("{name}.toml"));
        // What is installed and locked is what was checked: the file is
        // read back, not trusted to have stayed as downloaded.
        let written = std::fs::read(&self.part)
            .with_context(|| format!("reading back {}", self.part.display()))?;
        if sha256_digest(&written) != self.layout.layer.digest {
            bail!(
                "the component downloaded to {} changed on disk",
                self.part.display()
            );
        }
        let manifest = self.layout.plugin_manifest.clone();
        // Read now rather than before the download, so that another pull
        // into the folder meanwhile keeps its entry.
        let mut lock = Lock::read(dir)?;
        lock.plugins.insert(
            file,
            Entry {
                reference: self.reference.clone(),
                digest: self.digest.clone(),
                wasm: sha256_digest(&written),
                manifest: manifest
                    .as_deref()
                    .map(|text| sha256_digest(text.as_bytes())),
                signer: self.signer.clone(),
                pulled: crate::clock::now(),
            },
        );
        let lock_path = dir.join(LOCK_FILE);
        let before = [read_if_any(&lock_path)?, read_if_any(&toml)?];
        let toml_part = dir.join(format!(".{name}.toml.part"));
        let result = (|| {
            if let Some(text) = &manifest {
                std::fs::write(&toml_part, text)
                    .with_context(|| format!("writing {}", toml_part.display()))?;
            }
            lock.write(dir).context("writing the lock")?;
            match &manifest {
                Some(_) => std::fs::rename(&toml_part, &toml),
                None => remove_if_any(&toml),
            }
            .with_context(|| format!("writing {}", toml.display()))?;
            std::fs::rename(&self.part, &wasm)
                .with_context(|| format!("writing {}", wasm.display()))
        })();
        let _ = std::fs::remove_file(&toml_part);
        if let Err(err) = result {
            for (path, bytes) in [&lock_path, &toml].into_iter().zip(before) {
                if let Err(restoring) = restore(path, bytes) {
                    return Err(err.context(format!(
                        "and {} could not be put back ({restoring}): check the folder",
                        path.display()
                    )));
                }
            }
            return Err(err);
        }
        self.part = PathBuf::new();
        Ok(wasm)
    }
}

/// The bytes of `path`, or `None` when there is no such file.
fn read_if_any(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(anyhow!("reading {}: {err}", path.display())),
    }
}

fn remove_if_any(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Puts `path` back as it was: `bytes`, or no file.
fn restore(path: &Path, bytes: Option<Vec<u8>>) -> std::io::Result<()> {
    match bytes {
        Some(bytes) => std::fs::write(path, bytes),
        None => remove_if_any(path),
    }
}

impl Drop for Fetched {
    /// An uninstalled download leaves nothing behind.
    fn drop(&mut self) {
        if !self.part.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{Artifact, ComponentWorld};
    use std::collections::BTreeMap;

    /// A fetched artifact, its download waiting in `dir`.
    fn fetched(dir: &Path, manifest: Option<&str>) -> Fetched {
        let artifact = Artifact::new(
            "calc.wasm",
            b"\0asm new".to_vec(),
            manifest,
            ComponentWorld::default(),
            "2026-11-23T00:00:00Z",
        );
        let part = dir.join(".corral-pull-test.wasm.part");
        std::fs::write(&part, &artifact.wasm).unwrap();
        Fetched {
            reference: "127.0.0.1:5000/demo/calc:2".into(),
            digest: sha256_digest(&artifact.manifest),
            layout: artifact::check_manifest(&artifact.manifest).unwrap(),
            signer: None,
            part,
        }
    }

    /// Every file in `dir` with its bytes (directories as empty).
    fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&path).unwrap_or_default())
            })
            .collect()
    }

    #[test]
    fn an_install_that_fails_half_way_puts_the_lock_and_manifest_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), Lock::new().to_text()).unwrap();
        std::fs::write(dir.path().join("calc.toml"), "[limits]\nfuel = 1\n").unwrap();
        // The last step, renaming the component into place, fails: a
        // folder that is not empty stands where it goes.
        std::fs::create_dir_all(dir.path().join("calc.wasm/inside")).unwrap();
        let before = snapshot(dir.path());
        let fetched = fetched(dir.path(), Some("[limits]\nfuel = 2\n"));
        let err = fetched.install(dir.path(), "calc").unwrap_err();
        assert!(format!("{err:#}").contains("calc.wasm"), "{err:#}");
        assert_eq!(snapshot(dir.path()), before);
    }

    #[test]
    fn an_install_writes_the_files_and_the_lock_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("calc.toml"), "stale").unwrap();
        let fetched = fetched(dir.path(), None);
        let digest = fetched.digest.clone();
        fetched.install(dir.path(), "calc").unwrap();
        let files: Vec<String> = snapshot(dir.path()).into_keys().collect();
        // The artifact has no manifest: a stale one is removed.
        assert_eq!(files, ["calc.wasm", LOCK_FILE]);
        let lock = Lock::read(dir.path()).unwrap();
        let entry = &lock.plugins["calc.wasm"];
        assert_eq!(entry.digest, digest);
        assert_eq!(entry.manifest, None);
        assert_eq!(lock.check("calc.wasm", b"\0asm new", None), Ok(()));
    }
}
