//! cosign's simple-signing signatures: what `cosign sign --key` stores
//! next to an artifact (before cosign 3's bundle format), made and checked
//! in-process.
//!
//! A signature of the manifest `sha256:abc…` lives in the same repository
//! under the tag `sha256-abc….sig`, an OCI image with one layer per
//! signature. Each layer's blob, of media type [`SIMPLE_SIGNING_MEDIA_TYPE`],
//! is the signed payload:
//! ```json
//! {"critical":{"identity":{"docker-reference":"127.0.0.1:5000/demo/calc"},
//!  "image":{"docker-manifest-digest":"sha256:abc…"},
//!  "type":"cosign container image signature"},"optional":null}
//! ```
//! and the layer's [`SIGNATURE_ANNOTATION`] holds the signature: base64 of
//! an ASN.1 DER ECDSA P-256 signature over SHA-256 of the payload bytes.
//!
//! What a signature vouches for is the manifest digest inside the payload,
//! so verifying checks the signature over the bytes exactly as stored
//! (never a re-serialization), then that digest. The docker-reference is
//! not checked, as cosign does not: an artifact copied to another registry
//! keeps its digest and its signatures.
//!
//! This module does not talk to registries; the transport fetches the
//! layers, and this decides.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};

/// The media type of a signature layer.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The payload's `critical.type`.
pub const PAYLOAD_TYPE: &str = "cosign container image signature";

/// At most this many layers of a signature image are checked: one
/// artifact rarely has more than a few signatures, and whoever can push
/// to the `.sig` tag must not make verification unbounded.
pub const MAX_LAYERS: usize = 64;
/// A payload larger than this is skipped unchecked; cosign's are ~250
/// bytes.
pub const MAX_PAYLOAD_BYTES: usize = 64 << 10;
/// A signature annotation longer than this cannot be a P-256 signature
/// (at most 72 bytes of DER, 96 of base64) and is skipped undecoded.
const MAX_SIGNATURE_CHARS: usize = 1024;

/// The tag holding the signatures of `manifest_digest`:
/// `sha256:abc…` -> `sha256-abc….sig`.
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replacen(':', "-", 1))
}

/// The simple-signing payload for `manifest_digest` as cosign writes it:
/// compact JSON, in cosign's key order. `docker_reference` is
/// `registry/repository`, without tag or digest.
pub fn payload(docker_reference: &str, manifest_digest: &str) -> Vec<u8> {
    // `Value`'s Display writes a JSON string literal, quoted and escaped.
    let reference = serde_json::Value::from(docker_reference);
    let digest = serde_json::Value::from(manifest_digest);
    format!(
        r#"{{"critical":{{"identity":{{"docker-reference":{reference}}},"image":{{"docker-manifest-digest":{digest}}},"type":"{PAYLOAD_TYPE}"}},"optional":null}}"#
    )
    .into_bytes()
}

/// The signature annotation's value for `payload`: base64 of the DER
/// ECDSA P-256 SHA-256 signature.
pub fn sign(key: &SigningKey, payload: &[u8]) -> String {
    let signature: Signature = key.sign(payload);
    BASE64.encode(signature.to_der().as_bytes())
}

/// One layer of a signature image, as the transport fetched it.
#[derive(Debug, Clone, PartialEq)]
pub struct SignatureLayer {
    /// The layer's blob: the simple-signing payload, as stored.
    pub payload: Vec<u8>,
    /// The layer's [`SIGNATURE_ANNOTATION`]: base64.
    pub signature: String,
}

/// Why no signature vouches for a manifest.
#[derive(Debug, Clone, PartialEq)]
pub enum VerifyError {
    /// The signature image has no layers.
    NoSignatures,
    /// None of the checked signatures is by this key (or valid at all).
    /// `unchecked` counts layers skipped by the bounds above.
    NotByKey { signatures: usize, unchecked: usize },
    /// A valid signature by this key, but over another manifest: the
    /// signature was copied (replayed) from another artifact, or the tag
    /// now points elsewhere than what was signed.
    WrongDigest { signed: String, expected: String },
    /// A valid signature by this key over something that is not a cosign
    /// image-signature payload.
    NotImagePayload,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::NoSignatures => write!(f, "the signature image has no signatures"),
            VerifyError::NotByKey {
                signatures,
                unchecked,
            } => {
                let plural = if *signatures == 1 { "" } else { "s" };
                write!(f, "{signatures} signature{plural}, none by this key")?;
                if *unchecked > 0 {
                    write!(
                        f,
                        " ({unchecked} more not checked: payloads over {} KiB, or beyond the \
                         newest {MAX_LAYERS})",
                        MAX_PAYLOAD_BYTES >> 10
                    )?;
                }
                Ok(())
            }
            VerifyError::WrongDigest { signed, expected } => write!(
                f,
                "signed by this key, but for {signed} not {expected} (a signature copied from \
                 another artifact, or a tag moved since signing)"
            ),
            VerifyError::NotImagePayload => write!(
                f,
                "signed by this key, but the payload is not a cosign image signature"
            ),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Ok if any layer is a valid signature by `key` of a payload naming
/// `manifest_digest`.
///
/// Only the newest 64 layers are checked: cosign appends each new
/// signature as the last layer, so these are the ones a re-signing (after
/// a key rotation, say) added. Payloads over 64 KiB are skipped. Skipped
/// layers are counted in [`VerifyError::NotByKey`].
pub fn verify(
    layers: &[SignatureLayer],
    key: &VerifyingKey,
    manifest_digest: &str,
) -> Result<(), VerifyError> {
    if layers.is_empty() {
        return Err(VerifyError::NoSignatures);
    }
    let newest = &layers[layers.len().saturating_sub(MAX_LAYERS)..];
    let mut unchecked = layers.len() - newest.len();
    let mut signatures = 0;
    // The first mismatch by this key, reported if nothing matches.
    let mut by_key: Option<VerifyError> = None;
    for layer in newest {
        if layer.payload.len() > MAX_PAYLOAD_BYTES {
            unchecked += 1;
            continue;
        }
        signatures += 1;
        if !signed_by(key, &layer.payload, &layer.signature) {
            continue;
        }
        let mismatch = match signed_digest(&layer.payload) {
            Some(signed) if signed == manifest_digest => return Ok(()),
            Some(signed) => VerifyError::WrongDigest {
                signed,
                expected: manifest_digest.to_owned(),
            },
            None => VerifyError::NotImagePayload,
        };
        by_key.get_or_insert(mismatch);
    }
    Err(by_key.unwrap_or(VerifyError::NotByKey {
        signatures,
        unchecked,
    }))
}

/// Whether `signature` (base64) is `key`'s signature of `payload`.
///
/// DER is what cosign writes; the fixed 64-byte r||s form is accepted
/// too, as other signers produce it. High-S signatures verify: Go's and
/// Python's ECDSA do not normalize S, and p256 does not require it.
fn signed_by(key: &VerifyingKey, payload: &[u8], signature: &str) -> bool {
    if signature.len() > MAX_SIGNATURE_CHARS {
        return false;
    }
    let Ok(bytes) = BASE64.decode(signature.trim()) else {
        return false;
    };
    let signature = match Signature::from_der(&bytes) {
        Ok(signature) => signature,
        Err(_) if bytes.len() == 64 => match Signature::from_slice(&bytes) {
            Ok(signature) => signature,
            Err(_) => return false,
        },
        Err(_) => return false,
    };
    key.verify(payload, &signature).is_ok()
}

/// The `docker-manifest-digest` a simple-signing payload vouches for, if
/// it is a cosign image-signature payload.
fn signed_digest(payload: &[u8]) -> Option<String> {
    let json: serde_json::Value = serde_json::from_slice(payload).ok()?;
    let critical = json.get("critical")?;
    if critical.get("type")?.as_str()? != PAYLOAD_TYPE {
        return None;
    }
    let digest = critical.get("image")?.get("docker-manifest-digest")?;
    Some(digest.as_str()?.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::elliptic_curve::ff::PrimeField;
    use p256::elliptic_curve::scalar::IsHigh;

    const DIGEST: &str = "sha256:7413c3d7cbb32bd5d1e2bd3e8a34e3f3e5f0ddcf6ee2bba2b2d5ad3ed3e2e1f0";
    const OTHER_DIGEST: &str =
        "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_slice(&[seed; 32]).unwrap()
    }

    fn layer(key: &SigningKey, digest: &str) -> SignatureLayer {
        let payload = payload("127.0.0.1:5000/demo/calc", digest);
        let signature = sign(key, &payload);
        SignatureLayer { payload, signature }
    }

    #[test]
    fn tag_and_payload_are_cosigns() {
        assert_eq!(signature_tag("sha256:abc"), "sha256-abc.sig");
        assert_eq!(
            String::from_utf8(payload("127.0.0.1:5000/demo/calc", "sha256:abc")).unwrap(),
            r#"{"critical":{"identity":{"docker-reference":"127.0.0.1:5000/demo/calc"},"image":{"docker-manifest-digest":"sha256:abc"},"type":"cosign container image signature"},"optional":null}"#
        );
    }

    /// A signature `cosign sign --key` made, from sigstore-rs
    /// (src/cosign/signature_layers.rs, https://github.com/sigstore/sigstore-rs,
    /// Apache-2.0). Verifying it over our own `payload` also shows that
    /// payload is byte for byte what cosign signs.
    #[test]
    fn verifies_a_signature_cosign_made() {
        let public = crate::keys::read_public(
            "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENptdY/l3nB0yqkXLBWkZWQwo6+cu
OSWS1X9vPavpiQOoTTGC0xX57OojUadxF1cdQmrsiReWg2Wn4FneJfa8xw==
-----END PUBLIC KEY-----
",
        )
        .unwrap();
        let digest = "sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b";
        let layers = [SignatureLayer {
            payload: payload("registry-testing.svc.lan/busybox", digest),
            signature: "MEUCIQD6q/COgzOyW0YH1Dk+CCYSt4uAhm3FDHUwvPI55zwnlwIgE0ZK58ZOWpZw8YVmBapJhBqCfdPekIknimuO0xH8Jh8=".to_owned(),
        }];
        assert_eq!(verify(&layers, &public, digest), Ok(()));
        assert_eq!(
            verify(&layers, &public, OTHER_DIGEST),
            Err(VerifyError::WrongDigest {
                signed: digest.to_owned(),
                expected: OTHER_DIGEST.to_owned()
            })
        );
    }

    #[test]
    fn sign_then_verify() {
        let signer = key(1);
        let layers = [layer(&signer, DIGEST)];
        assert_eq!(verify(&layers, signer.verifying_key(), DIGEST), Ok(()));
    }

    #[test]
    fn another_key_is_not_by_key() {
        let layers = [layer(&key(1), DIGEST), layer(&key(2), DIGEST)];
        let error = verify(&layers, key(3).verifying_key(), DIGEST).unwrap_err();
        assert_eq!(
            error,
            VerifyError::NotByKey {
                signatures: 2,
                unchecked: 0
            }
        );
        assert_eq!(error.to_string(), "2 signatures, none by this key");
        assert_eq!(
            verify(&[], key(3).verifying_key(), DIGEST),
            Err(VerifyError::NoSignatures)
        );
    }

    #[test]
    fn another_digest_is_named() {
        let signer = key(1);
        let error = verify(
            &[layer(&signer, OTHER_DIGEST)],
            signer.verifying_key(),
            DIGEST,
        )
        .unwrap_err();
        assert_eq!(
            error,
            VerifyError::WrongDigest {
                signed: OTHER_DIGEST.to_owned(),
                expected: DIGEST.to_owned()
            }
        );
        assert!(
            error.to_string().starts_with(&format!(
                "signed by this key, but for {OTHER_DIGEST} not {DIGEST}"
            )),
            "{error}"
        );
        // Any matching layer is enough, wherever it is.
        let layers = [layer(&signer, OTHER_DIGEST), layer(&signer, DIGEST)];
        assert_eq!(verify(&layers, signer.verifying_key(), DIGEST), Ok(()));
    }

    #[test]
    fn a_tampered_payload_is_not_by_key() {
        let signer = key(1);
        let mut tampered = layer(&signer, DIGEST);
        tampered.payload[10] ^= 1;
        assert!(matches!(
            verify(&[tampered], signer.verifying_key(), DIGEST),
            Err(VerifyError::NotByKey { signatures: 1, .. })
        ));
        // The same JSON re-serialized (here with a space) is other bytes:
        // verification is over the stored bytes, never a re-encoding.
        let mut spaced = layer(&signer, DIGEST);
        spaced.payload.insert(1, b' ');
        assert!(matches!(
            verify(&[spaced], signer.verifying_key(), DIGEST),
            Err(VerifyError::NotByKey { .. })
        ));
    }

    #[test]
    fn a_signed_non_image_payload_is_named() {
        let signer = key(1);
        let payload =
            br#"{"critical":{"type":"something else","image":{"docker-manifest-digest":"x"}}}"#;
        let layers = [SignatureLayer {
            payload: payload.to_vec(),
            signature: sign(&signer, payload),
        }];
        assert_eq!(
            verify(&layers, signer.verifying_key(), DIGEST),
            Err(VerifyError::NotImagePayload)
        );
    }

    #[test]
    fn high_s_and_fixed_form_signatures_verify() {
        let signer = key(1);
        let good = layer(&signer, DIGEST);
        let der = BASE64.decode(&good.signature).unwrap();
        let low = Signature::from_der(&der).unwrap().normalize_s();
        assert!(!bool::from(low.s().is_high()));

        // The same signature with s replaced by n - s: as valid, and what
        // Go's and Python's ECDSA produce half of the time.
        let high_s = -*low.s();
        let high = Signature::from_scalars(low.r().to_repr(), high_s.to_repr()).unwrap();
        assert!(bool::from(high.s().is_high()));
        let high_layer = SignatureLayer {
            signature: BASE64.encode(high.to_der().as_bytes()),
            ..good.clone()
        };
        assert_eq!(
            verify(&[high_layer], signer.verifying_key(), DIGEST),
            Ok(())
        );

        let fixed = SignatureLayer {
            signature: BASE64.encode(low.to_bytes()),
            ..good
        };
        assert_eq!(verify(&[fixed], signer.verifying_key(), DIGEST), Ok(()));
    }

    #[test]
    fn work_is_bounded_to_the_newest_layers() {
        let signer = key(1);
        let garbage = SignatureLayer {
            payload: b"not json".to_vec(),
            signature: "MEUCIQ==".to_owned(),
        };

        // 65 layers of garbage, then the good one: the oldest garbage layer
        // is not looked at, the good one is.
        let mut layers = vec![garbage.clone(); 65];
        layers.push(layer(&signer, DIGEST));
        assert_eq!(verify(&layers, signer.verifying_key(), DIGEST), Ok(()));

        // The good one first, then 64 newer layers: it is beyond the
        // bound, and the error says how many were not checked.
        let mut layers = vec![layer(&signer, DIGEST)];
        layers.extend(vec![garbage; 64]);
        let error = verify(&layers, signer.verifying_key(), DIGEST).unwrap_err();
        assert_eq!(
            error,
            VerifyError::NotByKey {
                signatures: 64,
                unchecked: 1
            }
        );
        assert!(error.to_string().contains("1 more not checked"), "{error}");

        // An oversized payload is skipped, even with a valid signature.
        let mut big = payload("127.0.0.1:5000/demo/calc", DIGEST);
        big.extend(vec![b' '; MAX_PAYLOAD_BYTES]);
        let oversized = SignatureLayer {
            signature: sign(&signer, &big),
            payload: big,
        };
        assert_eq!(
            verify(&[oversized], signer.verifying_key(), DIGEST),
            Err(VerifyError::NotByKey {
                signatures: 0,
                unchecked: 1
            })
        );
    }
}
