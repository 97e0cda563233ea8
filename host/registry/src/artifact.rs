//! The WebAssembly OCI artifact: how a component is laid out in a registry.
//!
//! Corral writes the layout of the CNCF TAG Runtime's "Wasm OCI Artifact"
//! (the one `wkg` and `oci-wasm` use), so that other tools can pull what
//! Corral pushes and the other way round: an OCI image manifest whose
//! config is `application/vnd.wasm.config.v0+json` (`architecture: wasm`,
//! `os: wasip2`, the layer digests and the component's imports and
//! exports) and whose single layer is the component, `application/wasm`.
//!
//! The plugin's manifest (`NAME.toml`, its limits and grants) travels as
//! the manifest annotation [`PLUGIN_MANIFEST_ANNOTATION`], verbatim. A
//! second layer would break tools that accept exactly one; an annotation
//! keeps the layout standard, and, being inside the OCI manifest, it is
//! covered by the manifest digest and so by any signature: nobody can
//! widen a signed plugin's grants.

use std::collections::BTreeMap;

use oci_client::manifest::{OciDescriptor, OciImageManifest};
use serde::{Deserialize, Serialize};

use crate::digest::{is_sha256_digest, sha256_digest};

/// The OCI image manifest media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The wasm artifact's config media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The manifest annotation holding the plugin's `NAME.toml`.
pub const PLUGIN_MANIFEST_ANNOTATION: &str = "dev.corral.plugin.manifest";
/// The layer annotation holding the component's file name.
pub const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";
/// The manifest annotation holding when the artifact was made.
pub const CREATED_ANNOTATION: &str = "org.opencontainers.image.created";

/// An OCI manifest larger than this is refused: the distribution spec
/// lets registries refuse manifests over 4 MiB.
pub const MAX_MANIFEST_BYTES: usize = 4 << 20;
/// A wasm config larger than this is refused (the import and export names
/// of even a large component take a few KiB).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// A component larger than this is refused before it is downloaded (the
/// largest interpreted plugins, Python with its runtime, are ~40 MiB).
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;
/// A plugin manifest larger than this is refused.
pub const MAX_PLUGIN_MANIFEST_BYTES: usize = 256 << 10;

/// The world a component lives in, as the config records it: the
/// world-key names of its imports and exports
/// (`wasi:cli/environment@0.2.0`, `corral:plugin/tools@0.2.0`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ComponentWorld {
    #[serde(default)]
    pub imports: Vec<String>,
    #[serde(default)]
    pub exports: Vec<String>,
    /// The WIT world the component targets, when known (`wkg` writes it).
    #[serde(default)]
    pub target: Option<String>,
}

/// The wasm config (`application/vnd.wasm.config.v0+json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(default)]
    pub author: Option<String>,
    pub architecture: String,
    pub os: String,
    #[serde(default)]
    pub layer_digests: Vec<String>,
    #[serde(default)]
    pub component: Option<ComponentWorld>,
}

/// An artifact ready to push: the blobs and the manifest's exact bytes
/// (the bytes pushed are the bytes hashed and signed).
#[derive(Debug, Clone)]
pub struct Artifact {
    pub wasm: Vec<u8>,
    pub config: Vec<u8>,
    pub manifest: Vec<u8>,
}

impl Artifact {
    /// The artifact of the component `wasm`, published as `file_name`,
    /// with its plugin manifest's text, made at `created` (RFC 3339).
    pub fn new(
        file_name: &str,
        wasm: Vec<u8>,
        plugin_manifest: Option<&str>,
        world: ComponentWorld,
        created: &str,
    ) -> Artifact {
        let layer_digest = sha256_digest(&wasm);
        let config = WasmConfig {
            created: Some(created.to_owned()),
            author: None,
            architecture: "wasm".into(),
            os: "wasip2".into(),
            layer_digests: vec![layer_digest.clone()],
            component: Some(world),
        };
        let config = serde_json::to_vec(&config).expect("a config always serializes");
        let mut annotations = BTreeMap::from([(CREATED_ANNOTATION.to_owned(), created.to_owned())]);
        if let Some(text) = plugin_manifest {
            annotations.insert(PLUGIN_MANIFEST_ANNOTATION.to_owned(), text.to_owned());
        }
        let manifest = OciImageManifest {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.into()),
            config: descriptor(CONFIG_MEDIA_TYPE, &config, None),
            layers: vec![descriptor(
                LAYER_MEDIA_TYPE,
                &wasm,
                Some(BTreeMap::from([(
                    TITLE_ANNOTATION.to_owned(),
                    file_name.to_owned(),
                )])),
            )],
            subject: None,
            artifact_type: None,
            annotations: Some(annotations),
        };
        let manifest = serde_json::to_vec(&manifest).expect("a manifest always serializes");
        Artifact {
            wasm,
            config,
            manifest,
        }
    }
}

/// The descriptor of `bytes`.
pub fn descriptor(
    media_type: &str,
    bytes: &[u8],
    annotations: Option<BTreeMap<String, String>>,
) -> OciDescriptor {
    OciDescriptor {
        media_type: media_type.into(),
        digest: sha256_digest(bytes),
        size: bytes.len() as i64,
        urls: None,
        annotations,
        artifact_type: None,
    }
}

/// What a pulled OCI manifest says, once checked to be a wasm artifact.
#[derive(Debug, Clone)]
pub struct Layout {
    pub config: OciDescriptor,
    /// The component.
    pub layer: OciDescriptor,
    /// The component's file name, from the layer's title.
    pub title: Option<String>,
    /// The plugin's manifest text.
    pub plugin_manifest: Option<String>,
}

/// Checks that `manifest` is a wasm artifact Corral can install: the OCI
/// image manifest media type, the wasm config, exactly one `application/wasm`
/// layer, sha256 digests and sizes within bounds.
pub fn check_manifest(manifest: &[u8]) -> Result<Layout, String> {
    if manifest.len() > MAX_MANIFEST_BYTES {
        return Err(format!(
            "its manifest is {} bytes, over the {} MiB allowed",
            manifest.len(),
            MAX_MANIFEST_BYTES >> 20
        ));
    }
    let parsed: OciImageManifest = serde_json::from_slice(manifest)
        .map_err(|err| format!("its manifest is not an OCI image manifest ({err})"))?;
    if let Some(media_type) = parsed.media_type.as_deref()
        && media_type != MANIFEST_MEDIA_TYPE
    {
        return Err(format!(
            "its manifest is {media_type}, not an OCI image manifest ({MANIFEST_MEDIA_TYPE})"
        ));
    }
    if parsed.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(format!(
            "it is not a WebAssembly artifact: its config is {}, not {CONFIG_MEDIA_TYPE}",
            parsed.config.media_type
        ));
    }
    let [layer] = &parsed.layers[..] else {
        return Err(format!(
            "a WebAssembly artifact has exactly one layer; this one has {}",
            parsed.layers.len()
        ));
    };
    if layer.media_type != LAYER_MEDIA_TYPE {
        return Err(format!(
            "its layer is {}, not a component ({LAYER_MEDIA_TYPE})",
            layer.media_type
        ));
    }
    for (what, descriptor, max) in [
        ("config", &parsed.config, MAX_CONFIG_BYTES),
        ("component", layer, MAX_COMPONENT_BYTES),
    ] {
        if !is_sha256_digest(&descriptor.digest) {
            return Err(format!(
                "its {what} digest `{}` is not a sha256 digest",
                descriptor.digest
            ));
        }
        if descriptor.size < 0 || descriptor.size as u64 > max {
            return Err(format!(
                "its {what} is {} bytes, over the {} MiB allowed",
                descriptor.size,
                max >> 20
            ));
        }
    }
    let annotations = parsed.annotations.unwrap_or_default();
    let plugin_manifest = annotations.get(PLUGIN_MANIFEST_ANNOTATION).cloned();
    if plugin_manifest
        .as_ref()
        .is_some_and(|text| text.len() > MAX_PLUGIN_MANIFEST_BYTES)
    {
        return Err(format!(
            "its plugin manifest is over the {} KiB allowed",
            MAX_PLUGIN_MANIFEST_BYTES >> 10
        ));
    }
    let title = layer
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(TITLE_ANNOTATION))
        .cloned();
    Ok(Layout {
        config: parsed.config.clone(),
        layer: layer.clone(),
        title,
        plugin_manifest,
    })
}

/// Checks a pulled config: a wasm config whose layer digests name `layer`.
pub fn check_config(config: &[u8], layer: &OciDescriptor) -> Result<(), String> {
    let config: WasmConfig = serde_json::from_slice(config)
        .map_err(|err| format!("its config is not a wasm config ({err})"))?;
    if config.architecture != "wasm" {
        return Err(format!(
            "its config's architecture is `{}`, not `wasm`",
            config.architecture
        ));
    }
    if !config.layer_digests.is_empty() && !config.layer_digests.contains(&layer.digest) {
        return Err(format!(
            "its config does not list its layer {} among its layer digests",
            layer.digest
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(manifest: Option<&str>) -> Artifact {
        let world = ComponentWorld {
            imports: vec!["wasi:cli/environment@0.2.0".into()],
            exports: vec!["corral:plugin/tools@0.2.0".into()],
            target: None,
        };
        Artifact::new(
            "calc.wasm",
            b"\0asm component".to_vec(),
            manifest,
            world,
            "2026-11-23T13:51:55Z",
        )
    }

    #[test]
    fn an_artifact_has_the_standard_layout_and_checks_back() {
        let built = artifact(Some("[limits]\nfuel = 1\n"));
        let json: serde_json::Value = serde_json::from_slice(&built.manifest).unwrap();
        assert_eq!(json["schemaVersion"], 2);
        assert_eq!(json["mediaType"], MANIFEST_MEDIA_TYPE);
        assert_eq!(json["config"]["mediaType"], CONFIG_MEDIA_TYPE);
        assert_eq!(json["layers"][0]["mediaType"], LAYER_MEDIA_TYPE);
        assert_eq!(json["layers"][0]["digest"], sha256_digest(&built.wasm));
        assert_eq!(
            json["layers"][0]["annotations"][TITLE_ANNOTATION],
            "calc.wasm"
        );
        let config: serde_json::Value = serde_json::from_slice(&built.config).unwrap();
        assert_eq!(config["architecture"], "wasm");
        assert_eq!(config["os"], "wasip2");
        assert_eq!(config["layerDigests"][0], sha256_digest(&built.wasm));
        assert_eq!(
            config["component"]["exports"][0],
            "corral:plugin/tools@0.2.0"
        );
        let layout = check_manifest(&built.manifest).unwrap();
        assert_eq!(layout.title.as_deref(), Some("calc.wasm"));
        assert_eq!(
            layout.plugin_manifest.as_deref(),
            Some("[limits]\nfuel = 1\n")
        );
        check_config(&built.config, &layout.layer).unwrap();
        assert!(
            check_manifest(&artifact(None).manifest)
                .unwrap()
                .plugin_manifest
                .is_none()
        );
    }

    #[test]
    fn other_artifacts_are_refused_with_the_reason() {
        let built = artifact(None);
        let mut json: serde_json::Value = serde_json::from_slice(&built.manifest).unwrap();
        let refused = |json: &serde_json::Value| {
            check_manifest(&serde_json::to_vec(json).unwrap()).unwrap_err()
        };
        let mut image = json.clone();
        image["config"]["mediaType"] = "application/vnd.oci.image.config.v1+json".into();
        assert!(refused(&image).contains("not a WebAssembly artifact"));
        let mut two = json.clone();
        two["layers"] = serde_json::json!([json["layers"][0], json["layers"][0]]);
        assert!(refused(&two).contains("exactly one layer; this one has 2"));
        let mut huge = json.clone();
        huge["layers"][0]["size"] = (MAX_COMPONENT_BYTES + 1).into();
        assert!(refused(&huge).contains("over the 256 MiB allowed"));
        json["layers"][0]["digest"] = "md5:00".into();
        assert!(refused(&json).contains("not a sha256 digest"));
        let other_layer = descriptor(LAYER_MEDIA_TYPE, b"other", None);
        assert!(
            check_config(&built.config, &other_layer)
                .unwrap_err()
                .contains("does not list its layer")
        );
    }
}
