//! JWT access tokens (RFC 9068): the compact form split and decoded, the
//! signature checked with a key of the issuer's JWKS, and the claims read.
//!
//! Only asymmetric algorithms are accepted: `none` and the HMAC family are
//! refused before any key is looked at, so a token "signed" with an
//! issuer's public key as an HMAC secret never verifies. A key is used only
//! for the algorithm its type fits (and the one its `alg` names, if it
//! names one).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use ring::signature::{self, UnparsedPublicKey};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The signature algorithms accepted (JWA names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Alg {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Ps384,
    Ps512,
    Es256,
    Es384,
    EdDsa,
}

impl Alg {
    fn parse(name: &str) -> Result<Alg, String> {
        Ok(match name {
            "RS256" => Alg::Rs256,
            "RS384" => Alg::Rs384,
            "RS512" => Alg::Rs512,
            "PS256" => Alg::Ps256,
            "PS384" => Alg::Ps384,
            "PS512" => Alg::Ps512,
            "ES256" => Alg::Es256,
            "ES384" => Alg::Es384,
            "EdDSA" => Alg::EdDsa,
            "none" => return Err("an unsigned token (alg none)".into()),
            alg if alg.starts_with("HS") => {
                return Err(format!(
                    "a token signed with a shared secret ({alg}); only the issuer's asymmetric keys are trusted"
                ));
            }
            other => return Err(format!("an unsupported signature algorithm ({other:.20})")),
        })
    }
}

/// A key of an issuer's JWKS that can check signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PublicKey {
    pub(super) kid: Option<String>,
    /// The one algorithm the JWK allows, if it names one.
    alg: Option<String>,
    material: Material,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An uncompressed point (0x04 | x | y).
    P256(Vec<u8>),
    P384(Vec<u8>),
    Ed25519(Vec<u8>),
}

/// The fields of a JWK this server reads.
#[derive(Deserialize)]
struct Jwk {
    kty: String,
    kid: Option<String>,
    #[serde(rename = "use")]
    use_: Option<String>,
    alg: Option<String>,
    crv: Option<String>,
    n: Option<String>,
    e: Option<String>,
    x: Option<String>,
    y: Option<String>,
}

/// The most keys read from one JWKS.
pub(super) const MAX_KEYS: usize = 64;

/// The signing keys of a JWKS document. Keys this server cannot use (for
/// encryption, of another type, malformed) are skipped, not an error: an
/// issuer may publish keys for others.
pub(super) fn parse_jwks(document: &[u8]) -> Result<Vec<PublicKey>, String> {
    #[derive(Deserialize)]
    struct Jwks {
        keys: Vec<Value>,
    }
    let jwks: Jwks = serde_json::from_slice(document)
        .map_err(|err| format!("the JWKS is not a JSON object with `keys`: {err}"))?;
    Ok(jwks
        .keys
        .into_iter()
        .filter_map(|key| serde_json::from_value::<Jwk>(key).ok())
        .filter_map(public_key)
        .take(MAX_KEYS)
        .collect())
}

fn public_key(jwk: Jwk) -> Option<PublicKey> {
    if jwk.use_.as_deref().is_some_and(|u| u != "sig") {
        return None;
    }
    let bytes = |field: &Option<String>| field.as_deref().and_then(|v| B64URL.decode(v).ok());
    let material = match (jwk.kty.as_str(), jwk.crv.as_deref()) {
        ("RSA", _) => {
            let (n, e) = (bytes(&jwk.n)?, bytes(&jwk.e)?);
            // Fewer than 2048 bits is refused by the verifier anyway.
            Material::Rsa { n, e }
        }
        ("EC", Some(curve @ ("P-256" | "P-384"))) => {
            let (x, y) = (bytes(&jwk.x)?, bytes(&jwk.y)?);
            let size = if curve == "P-256" { 32 } else { 48 };
            if x.len() != size || y.len() != size {
                return None;
            }
            let point = [&[4u8][..], &x, &y].concat();
            if curve == "P-256" {
                Material::P256(point)
            } else {
                Material::P384(point)
            }
        }
        ("OKP", Some("Ed25519")) => Material::Ed25519(bytes(&jwk.x).filter(|x| x.len() == 32)?),
        _ => return None,
    };
    Some(PublicKey {
        kid: jwk.kid,
        alg: jwk.alg,
        material,
    })
}

impl PublicKey {
    /// Whether this key may check a signature of `alg`.
    pub(super) fn fits(&self, alg: Alg) -> bool {
        let by_type = matches!(
            (&self.material, alg),
            (
                Material::Rsa { .. },
                Alg::Rs256 | Alg::Rs384 | Alg::Rs512 | Alg::Ps256 | Alg::Ps384 | Alg::Ps512
            ) | (Material::P256(_), Alg::Es256)
                | (Material::P384(_), Alg::Es384)
                | (Material::Ed25519(_), Alg::EdDsa)
        );
        by_type
            && self
                .alg
                .as_deref()
                .is_none_or(|named| Alg::parse(named) == Ok(alg))
    }

    fn verifies(&self, alg: Alg, message: &[u8], signature: &[u8]) -> bool {
        let rsa = |params: &'static signature::RsaParameters| match &self.material {
            Material::Rsa { n, e } => signature::RsaPublicKeyComponents { n, e }
                .verify(params, message, signature)
                .is_ok(),
            _ => false,
        };
        let point = |algorithm: &'static dyn signature::VerificationAlgorithm, key: &[u8]| {
            UnparsedPublicKey::new(algorithm, key)
                .verify(message, signature)
                .is_ok()
        };
        match (alg, &self.material) {
            (Alg::Rs256, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA256),
            (Alg::Rs384, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA384),
            (Alg::Rs512, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA512),
            (Alg::Ps256, _) => rsa(&signature::RSA_PSS_2048_8192_SHA256),
            (Alg::Ps384, _) => rsa(&signature::RSA_PSS_2048_8192_SHA384),
            (Alg::Ps512, _) => rsa(&signature::RSA_PSS_2048_8192_SHA512),
            (Alg::Es256, Material::P256(key)) => point(&signature::ECDSA_P256_SHA256_FIXED, key),
            (Alg::Es384, Material::P384(key)) => point(&signature::ECDSA_P384_SHA384_FIXED, key),
            (Alg::EdDsa, Material::Ed25519(key)) => point(&signature::ED25519, key),
            _ => false,
        }
    }
}

/// A token split and decoded, not yet verified.
pub(super) struct Jwt {
    pub(super) alg: Alg,
    pub(super) kid: Option<String>,
    pub(super) claims: Map<String, Value>,
    /// The header and payload as sent: what the signature covers.
    signing_input: String,
    signature: Vec<u8>,
}

/// Whether `token` has the shape of a JWS in compact form (three parts),
/// rather than an opaque token for introspection.
pub(super) fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

impl Jwt {
    /// Decodes `token`; what is wrong with it, for the 401's description.
    pub(super) fn decode(token: &str) -> Result<Jwt, String> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("not a signed JWT (three dot-separated parts)".into());
        };
        let decode = |part: &str, what: &str| {
            B64URL
                .decode(part)
                .map_err(|_| format!("its {what} is not base64url"))
        };
        let header: Map<String, Value> = serde_json::from_slice(&decode(header, "header")?)
            .map_err(|_| "its header is not a JSON object".to_string())?;
        let alg = header
            .get("alg")
            .and_then(Value::as_str)
            .ok_or("its header names no algorithm")?;
        let alg = Alg::parse(alg)?;
        if header.contains_key("crit") {
            return Err(
                "its header has critical extensions (crit) this server does not know".into(),
            );
        }
        if let Some(typ) = header.get("typ") {
            let typ = typ.as_str().unwrap_or("").to_ascii_lowercase();
            if !matches!(typ.as_str(), "at+jwt" | "application/at+jwt" | "jwt") {
                return Err(format!(
                    "it is not an access token (typ {typ:.30}); an ID token is not accepted"
                ));
            }
        }
        let kid = header.get("kid").and_then(Value::as_str).map(String::from);
        let claims: Map<String, Value> = serde_json::from_slice(&decode(payload, "payload")?)
            .map_err(|_| "its payload is not a JSON object".to_string())?;
        let signature = decode(signature, "signature")?;
        let signing_input = token[..token.rfind('.').unwrap_or(0)].to_string();
        Ok(Jwt {
            alg,
            kid,
            claims,
            signing_input,
            signature,
        })
    }

    /// The claim `name` if it is a string.
    pub(super) fn claim_str(&self, name: &str) -> Option<&str> {
        self.claims.get(name).and_then(Value::as_str)
    }

    /// Whether one of `keys` (those that fit the token's `kid` and
    /// algorithm) verifies the signature.
    pub(super) fn verified_by(&self, keys: &[PublicKey]) -> bool {
        candidates(keys, self.kid.as_deref(), self.alg)
            .any(|key| key.verifies(self.alg, self.signing_input.as_bytes(), &self.signature))
    }
}

/// The keys that may have signed a token of `kid` and `alg`: the one of
/// that id, or, for a token that names none, every key that fits.
pub(super) fn candidates<'a>(
    keys: &'a [PublicKey],
    kid: Option<&'a str>,
    alg: Alg,
) -> impl Iterator<Item = &'a PublicKey> {
    keys.iter()
        .filter(move |key| kid.is_none() || key.kid.as_deref() == kid)
        .filter(move |key| key.fits(alg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(value: &Value) -> String {
        B64URL.encode(value.to_string())
    }

    #[test]
    fn unsigned_and_shared_secret_tokens_are_refused_before_any_key() {
        let claims = b64(&serde_json::json!({"sub": "x"}));
        let none = format!("{}.{claims}.", b64(&serde_json::json!({"alg": "none"})));
        assert!(Jwt::decode(&none).err().unwrap().contains("alg none"));
        let hs = format!(
            "{}.{claims}.AAAA",
            b64(&serde_json::json!({"alg": "HS256"}))
        );
        assert!(Jwt::decode(&hs).err().unwrap().contains("HS256"));
        let id_token = format!(
            "{}.{claims}.AAAA",
            b64(&serde_json::json!({"alg": "RS256", "typ": "id_token"}))
        );
        assert!(Jwt::decode(&id_token).err().unwrap().contains("ID token"));
        assert!(Jwt::decode("a.b").is_err() && Jwt::decode("a.b.c.d.e").is_err());
    }

    #[test]
    fn an_es256_signature_verifies_with_its_key_only() {
        use ring::rand::SystemRandom;
        use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
        let random = SystemRandom::new();
        let make = || {
            let pkcs8 =
                EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
                .unwrap()
        };
        let (signer, other) = (make(), make());
        let jwk = |pair: &EcdsaKeyPair, kid: &str| {
            let point = pair.public_key().as_ref();
            serde_json::json!({"kty": "EC", "crv": "P-256", "kid": kid,
                "x": B64URL.encode(&point[1..33]), "y": B64URL.encode(&point[33..])})
        };
        let jwks = serde_json::json!({"keys": [jwk(&signer, "a"), jwk(&other, "b"),
            {"kty": "oct", "k": "c2VjcmV0"}]});
        let keys = parse_jwks(jwks.to_string().as_bytes()).unwrap();
        assert_eq!(keys.len(), 2, "the symmetric key is skipped");
        let input = format!(
            "{}.{}",
            b64(&serde_json::json!({"alg": "ES256", "kid": "a", "typ": "at+jwt"})),
            b64(&serde_json::json!({"sub": "alice"}))
        );
        let signature = signer.sign(&random, input.as_bytes()).unwrap();
        let token = format!("{input}.{}", B64URL.encode(signature.as_ref()));
        let jwt = Jwt::decode(&token).unwrap();
        assert_eq!(jwt.claim_str("sub"), Some("alice"));
        assert!(jwt.verified_by(&keys));
        assert!(
            !jwt.verified_by(&keys[1..]),
            "another key does not verify it"
        );
    }
}
