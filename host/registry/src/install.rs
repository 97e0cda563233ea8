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
use crate::lock::{Entry, Lock, sha256_digest};
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
    /// The component's size.
    pub bytes: u64,
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
        bytes: layout.layer.size as u64,
        layout,
    };
    let mut progress = Progress::new(format!("pulling {given}"), fetched.bytes);
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
        let Some(signature) = layer
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(SIGNATURE_ANNOTATION))
        else {
            continue;
        };
        if layer.size < 0 || layer.size as u64 > max_payload {
            continue;
        }
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
    /// `dir`'s lock. The lock is written first: should anything stop half
    /// way, the folder refuses the files rather than serving unchecked ones.
    pub fn install(mut self, dir: &Path, name: &str, mut lock: Lock) -> Result<PathBuf> {
        let wasm = dir.join(format!("{name}.wasm"));
        let toml = dir.join(format!("{name}.toml"));
        let toml_part = dir.join(format!(".{name}.toml.part"));
        let manifest = self.layout.plugin_manifest.clone();
        if let Some(text) = &manifest {
            std::fs::write(&toml_part, text)
                .with_context(|| format!("writing {}", toml_part.display()))?;
        }
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
        lock.plugins.insert(
            format!("{name}.wasm"),
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
        let result = (|| {
            lock.write(dir).context("writing the lock")?;
            match &manifest {
                Some(_) => std::fs::rename(&toml_part, &toml),
                None => match std::fs::remove_file(&toml) {
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    other => other,
                },
            }
            .with_context(|| format!("writing {}", toml.display()))?;
            std::fs::rename(&self.part, &wasm)
                .with_context(|| format!("writing {}", wasm.display()))
        })();
        let _ = std::fs::remove_file(&toml_part);
        result?;
        self.part = PathBuf::new();
        Ok(wasm)
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
