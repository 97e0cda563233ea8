//! `corral push`: an artifact into a registry, and its signature beside it
//! where cosign keeps signatures, so that `cosign verify --key` accepts it.

use std::collections::BTreeMap;

use crate::SigningKey;
use oci_client::manifest::OciImageManifest;

use crate::artifact::{self, Artifact, MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES};
use crate::cosign::{self, SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE};
use crate::digest::sha256_digest;
use crate::progress::{Progress, mib};
use crate::reference::{Reference, at_tag, repository_name};
use crate::transport::{Registry, TransportError};

/// cosign's signature image config: an empty image whose layers are the
/// signed payloads (cosign's `pkg/oci/static`).
const SIGNATURE_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// Pushes `artifact` to `reference` (a tag) and returns the manifest's digest.
pub async fn push(
    registry: &Registry,
    reference: &Reference,
    artifact: &Artifact,
    file_name: &str,
) -> Result<String, TransportError> {
    let mut progress = Progress::new(format!("pushing {file_name}"), artifact.wasm.len() as u64);
    registry
        .push_blob(reference, &artifact.wasm, &mut progress)
        .await?;
    progress.finish();
    registry
        .push_blob(reference, &artifact.config, &mut Progress::new("", 0))
        .await?;
    registry
        .push_manifest(reference, &artifact.manifest, MANIFEST_MEDIA_TYPE)
        .await?;
    tracing::debug!("pushed {} of {file_name}", mib(artifact.wasm.len() as u64));
    Ok(sha256_digest(&artifact.manifest))
}

/// Signs the manifest `digest` of `reference`'s repository with `key`, as
/// `cosign sign --key` does: the simple-signing payload is pushed as a
/// layer of the manifest tagged `sha256-<hex>.sig`, its signature in the
/// layer's annotation. Signatures already there are kept (a second signer
/// adds a layer). Returns the signature's reference.
pub async fn sign(
    registry: &Registry,
    reference: &Reference,
    digest: &str,
    key: &SigningKey,
) -> Result<Reference, TransportError> {
    let payload = cosign::payload(&repository_name(reference), digest);
    let signature = cosign::sign(key, &payload);
    let at = at_tag(reference, cosign::signature_tag(digest));
    let mut layers = match registry
        .manifest_if_any(&at, &[MANIFEST_MEDIA_TYPE], MAX_MANIFEST_BYTES)
        .await?
    {
        Some((bytes, _)) => serde_json::from_slice::<OciImageManifest>(&bytes)
            .map(|existing| existing.layers)
            .map_err(|err| TransportError::Other {
                reason: format!("{at} is not a signature manifest: {err}"),
            })?,
        None => Vec::new(),
    };
    layers.push(artifact::descriptor(
        SIMPLE_SIGNING_MEDIA_TYPE,
        &payload,
        Some(BTreeMap::from([(
            SIGNATURE_ANNOTATION.to_owned(),
            signature,
        )])),
    ));
    let diff_ids: Vec<&str> = layers.iter().map(|layer| layer.digest.as_str()).collect();
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "",
        "config": {},
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    }))
    .expect("a config always serializes");
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.into()),
        config: artifact::descriptor(SIGNATURE_CONFIG_MEDIA_TYPE, &config, None),
        layers,
        subject: None,
        artifact_type: None,
        annotations: None,
    };
    let manifest = serde_json::to_vec(&manifest).expect("a manifest always serializes");
    let mut quiet = Progress::new("", 0);
    registry.push_blob(&at, &payload, &mut quiet).await?;
    registry.push_blob(&at, &config, &mut quiet).await?;
    registry
        .push_manifest(&at, &manifest, MANIFEST_MEDIA_TYPE)
        .await?;
    Ok(at)
}
