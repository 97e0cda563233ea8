//! cosign's key files, read and written in-process.
//!
//! `cosign generate-key-pair` writes two files, and Corral reads and writes
//! the same ones, so a key made by either tool signs for the other:
//! - `cosign.key`, a PEM block labelled `ENCRYPTED SIGSTORE PRIVATE KEY`
//!   (`ENCRYPTED COSIGN PRIVATE KEY` in older cosign) whose body is the
//!   JSON of go-securesystemslib's `encrypted` package:
//!   ```json
//!   {"kdf":{"name":"scrypt","params":{"N":65536,"r":8,"p":1},"salt":"<32 bytes>"},
//!    "cipher":{"name":"nacl/secretbox","nonce":"<24 bytes>"},
//!    "ciphertext":"<secretbox of the PKCS#8 DER private key>"}
//!   ```
//!   (byte strings in standard base64). The secretbox key is scrypt of the
//!   password and salt; an empty password is allowed, as in cosign.
//! - `cosign.pub`, a `PUBLIC KEY` PEM block (SPKI DER).
//!
//! Only ECDSA P-256 keys, cosign's default, are supported: one algorithm
//! keeps the verifier small, and other key kinds are named in the error so
//! the user knows what to regenerate.
//!
//! A key file may come from someone else (a teammate's public key, a file
//! in a repository), so reading is bounded: the PEM size, and the scrypt
//! cost, which the file itself chooses.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use crypto_secretbox::aead::{Aead, KeyInit};
use crypto_secretbox::{Key, Nonce, XSalsa20Poly1305};
use p256::ecdsa::{SigningKey, VerifyingKey};
use p256::pkcs8::der::Decode;
use p256::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, ObjectIdentifier,
    PrivateKeyInfoRef, SubjectPublicKeyInfoRef,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The private key's PEM label, as current cosign writes it.
pub const PRIVATE_KEY_LABEL: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
/// The label older cosign versions wrote; same content.
const LEGACY_PRIVATE_KEY_LABEL: &str = "ENCRYPTED COSIGN PRIVATE KEY";
/// The public key's PEM label.
pub const PUBLIC_KEY_LABEL: &str = "PUBLIC KEY";

/// A key file larger than this is refused unread: a cosign private key is
/// under 1 KiB, a public key a few hundred bytes.
pub const MAX_PEM_BYTES: usize = 64 << 10;

/// cosign's scrypt parameters, written into every key Corral generates.
const SCRYPT_LOG_N: u8 = 16;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
const SALT_BYTES: usize = 32;
const NONCE_BYTES: usize = 24;

/// Bounds on the scrypt parameters a key file may ask for. cosign uses
/// N = 2^16, r = 8, p = 1 (64 MiB, well under a second); a hostile file
/// could otherwise ask for terabytes or hours. scrypt's memory is
/// 128 * r * N bytes, its time p times that work.
const MAX_SCRYPT_LOG_N: u32 = 20;
const MAX_SCRYPT_MEMORY: u64 = 256 << 20;
const MAX_SCRYPT_P: u32 = 16;

/// A new key pair, as the two files `cosign generate-key-pair` writes.
#[derive(Clone)]
pub struct KeyPair {
    /// `cosign.key`: the encrypted private key.
    pub private_pem: String,
    /// `cosign.pub`: the public key.
    pub public_pem: String,
}

impl fmt::Debug for KeyPair {
    // The private key is encrypted, but a debug print has no reason to
    // copy it into logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyPair")
            .field("public_pem", &self.public_pem)
            .finish_non_exhaustive()
    }
}

/// Why a key could not be made or read. The messages are for users; the
/// caller prefixes the file name.
#[derive(Debug)]
pub enum KeyError {
    TooLarge {
        bytes: usize,
    },
    NotPem(String),
    /// A PEM block of another kind where a cosign private key was expected.
    NotCosignKey {
        label: String,
    },
    /// A PEM block of another kind where a public key was expected.
    NotPublicKey {
        label: String,
    },
    Malformed(String),
    /// scrypt parameters beyond the bounds above.
    ScryptTooCostly {
        n: u64,
        r: u32,
        p: u32,
    },
    WrongPassword,
    /// A well-formed key of another algorithm: `kind` reads "an Ed25519
    /// key", "an RSA key", …
    NotP256 {
        kind: String,
    },
    /// The system's random source failed, or a key could not be encoded.
    Generate(String),
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::TooLarge { bytes } => write!(
                f,
                "{bytes} bytes is too large for a key file (at most {MAX_PEM_BYTES})"
            ),
            KeyError::NotPem(reason) => write!(f, "not a PEM key file: {reason}"),
            KeyError::NotCosignKey { label } => write!(
                f,
                "this is a `{label}` PEM, not a cosign key file; Corral reads the encrypted \
                 `{PRIVATE_KEY_LABEL}` files that `cosign generate-key-pair` writes"
            ),
            KeyError::NotPublicKey { label } => write!(
                f,
                "this is a `{label}` PEM, not a public key; expected a `{PUBLIC_KEY_LABEL}` \
                 PEM such as cosign.pub"
            ),
            KeyError::Malformed(reason) => write!(f, "malformed key file: {reason}"),
            KeyError::ScryptTooCostly { n, r, p } => write!(
                f,
                "the key file asks for scrypt N={n}, r={r}, p={p}, more than Corral allows \
                 (N at most 2^{MAX_SCRYPT_LOG_N}, 128*r*N at most {} MiB, p at most \
                 {MAX_SCRYPT_P}; cosign uses N=65536, r=8, p=1)",
                MAX_SCRYPT_MEMORY >> 20
            ),
            KeyError::WrongPassword => write!(f, "cannot decrypt the key: wrong password"),
            KeyError::NotP256 { kind } => write!(
                f,
                "this is {kind}; Corral supports ECDSA P-256 keys (cosign's default)"
            ),
            KeyError::Generate(reason) => write!(f, "cannot generate a key: {reason}"),
        }
    }
}

impl std::error::Error for KeyError {}

/// go-securesystemslib's `encrypted` JSON. Field order is the wire order,
/// so a generated file reads like cosign's.
#[derive(Serialize, Deserialize)]
struct Encrypted {
    kdf: Kdf,
    cipher: Cipher,
    ciphertext: String,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: ScryptParams,
    salt: String,
}

#[derive(Serialize, Deserialize)]
struct ScryptParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    nonce: String,
}

/// A fresh P-256 key pair, the private key encrypted under `password`
/// exactly as `cosign generate-key-pair` does.
pub fn generate(password: &[u8]) -> Result<KeyPair, KeyError> {
    generate_with_cost(password, SCRYPT_LOG_N)
}

/// [`generate`] with scrypt's N = 2^`log_n`: tests use a cheap N, since
/// unoptimized scrypt at cosign's cost takes seconds.
fn generate_with_cost(password: &[u8], log_n: u8) -> Result<KeyPair, KeyError> {
    let key = random_signing_key()?;
    let private_der = key
        .to_pkcs8_der()
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    let public_der = key
        .verifying_key()
        .to_public_key_der()
        .map_err(|e| KeyError::Generate(e.to_string()))?;

    let salt: [u8; SALT_BYTES] = random_bytes()?;
    let nonce: [u8; NONCE_BYTES] = random_bytes()?;
    let params = scrypt::Params::new(log_n, SCRYPT_R, SCRYPT_P)
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    let ciphertext = secretbox(&derive_key(password, &salt, &params)?)
        .encrypt(Nonce::from_slice(&nonce), private_der.as_bytes())
        .map_err(|e| KeyError::Generate(e.to_string()))?;

    let encrypted = Encrypted {
        kdf: Kdf {
            name: "scrypt".to_owned(),
            params: ScryptParams {
                n: 1 << log_n,
                r: SCRYPT_R,
                p: SCRYPT_P,
            },
            salt: BASE64.encode(salt),
        },
        cipher: Cipher {
            name: "nacl/secretbox".to_owned(),
            nonce: BASE64.encode(nonce),
        },
        ciphertext: BASE64.encode(ciphertext),
    };
    let json = serde_json::to_vec(&encrypted).map_err(|e| KeyError::Generate(e.to_string()))?;
    Ok(KeyPair {
        private_pem: encode_pem(PRIVATE_KEY_LABEL, json),
        public_pem: encode_pem(PUBLIC_KEY_LABEL, public_der.as_bytes()),
    })
}

/// The signing key in a cosign private key file.
pub fn decrypt_private(pem: &str, password: &[u8]) -> Result<SigningKey, KeyError> {
    let block = parse_pem(pem)?;
    if block.tag() != PRIVATE_KEY_LABEL && block.tag() != LEGACY_PRIVATE_KEY_LABEL {
        return Err(KeyError::NotCosignKey {
            label: block.tag().to_owned(),
        });
    }
    let encrypted: Encrypted = serde_json::from_slice(block.contents())
        .map_err(|e| KeyError::Malformed(format!("not the JSON cosign writes: {e}")))?;
    if encrypted.kdf.name != "scrypt" {
        return Err(KeyError::Malformed(format!(
            "key derivation `{}`, where cosign uses scrypt",
            encrypted.kdf.name
        )));
    }
    if encrypted.cipher.name != "nacl/secretbox" {
        return Err(KeyError::Malformed(format!(
            "cipher `{}`, where cosign uses nacl/secretbox",
            encrypted.cipher.name
        )));
    }
    // Checked before anything is allocated or derived.
    let params = scrypt_params(&encrypted.kdf.params)?;
    let salt = decode_base64("salt", &encrypted.kdf.salt)?;
    let nonce = decode_base64("nonce", &encrypted.cipher.nonce)?;
    if nonce.len() != NONCE_BYTES {
        return Err(KeyError::Malformed(format!(
            "a {}-byte nonce, where secretbox takes {NONCE_BYTES}",
            nonce.len()
        )));
    }
    let ciphertext = decode_base64("ciphertext", &encrypted.ciphertext)?;

    // secretbox authenticates: any other password fails here rather than
    // producing garbage.
    let private_der = secretbox(&derive_key(password, &salt, &params)?)
        .decrypt(Nonce::from_slice(&nonce), ciphertext.as_slice())
        .map_err(|_| KeyError::WrongPassword)?;
    signing_key_from_pkcs8(&private_der)
}

/// The verifying key in a `PUBLIC KEY` PEM file (cosign.pub).
pub fn read_public(pem: &str) -> Result<VerifyingKey, KeyError> {
    let block = parse_pem(pem)?;
    if block.tag() != PUBLIC_KEY_LABEL {
        return Err(KeyError::NotPublicKey {
            label: block.tag().to_owned(),
        });
    }
    let der = block.contents();
    let info = SubjectPublicKeyInfoRef::from_der(der)
        .map_err(|e| KeyError::Malformed(format!("not a public key (SPKI): {e}")))?;
    require_p256(&info.algorithm)?;
    VerifyingKey::from_public_key_der(der)
        .map_err(|e| KeyError::Malformed(format!("not a valid P-256 public key: {e}")))
}

/// A key's identity as recorded in `corral.lock` and shown to users:
/// `sha256:` and the hex SHA-256 of its SPKI DER, the same bytes as the
/// body of its `.pub` file.
pub fn fingerprint(key: &VerifyingKey) -> String {
    let der = key
        .to_public_key_der()
        .expect("a valid P-256 point always encodes as SPKI");
    format!(
        "sha256:{}",
        crate::digest::hex(&Sha256::digest(der.as_bytes()))
    )
}

fn parse_pem(pem: &str) -> Result<pem::Pem, KeyError> {
    if pem.len() > MAX_PEM_BYTES {
        return Err(KeyError::TooLarge { bytes: pem.len() });
    }
    pem::parse(pem).map_err(|e| KeyError::NotPem(e.to_string()))
}

/// PEM as Go's `pem.Encode` writes it: LF line ends, 64 columns.
fn encode_pem(label: &str, contents: impl Into<Vec<u8>>) -> String {
    let config = pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF);
    pem::encode_config(&pem::Pem::new(label, contents), config)
}

fn decode_base64(field: &str, value: &str) -> Result<Vec<u8>, KeyError> {
    BASE64
        .decode(value)
        .map_err(|e| KeyError::Malformed(format!("{field} is not base64: {e}")))
}

/// The file's scrypt parameters, if within bounds.
fn scrypt_params(params: &ScryptParams) -> Result<scrypt::Params, KeyError> {
    let (n, r, p) = (params.n, params.r, params.p);
    if n < 2 || !n.is_power_of_two() {
        return Err(KeyError::Malformed(format!(
            "scrypt N={n} is not a power of two"
        )));
    }
    let log_n = n.trailing_zeros();
    // u64 cannot overflow: N <= 2^20 and r < 2^32 keep this under 2^59.
    let too_costly =
        log_n > MAX_SCRYPT_LOG_N || 128 * u64::from(r) * n > MAX_SCRYPT_MEMORY || p > MAX_SCRYPT_P;
    if too_costly {
        return Err(KeyError::ScryptTooCostly { n, r, p });
    }
    let log_n = u8::try_from(log_n).expect("log_n <= 20");
    scrypt::Params::new(log_n, r, p)
        .map_err(|e| KeyError::Malformed(format!("scrypt N={n}, r={r}, p={p}: {e}")))
}

fn derive_key(password: &[u8], salt: &[u8], params: &scrypt::Params) -> Result<Key, KeyError> {
    let mut key = Key::default();
    scrypt::scrypt(password, salt, params, key.as_mut_slice())
        .map_err(|e| KeyError::Malformed(format!("scrypt: {e}")))?;
    Ok(key)
}

fn secretbox(key: &Key) -> XSalsa20Poly1305 {
    XSalsa20Poly1305::new(key)
}

fn signing_key_from_pkcs8(der: &[u8]) -> Result<SigningKey, KeyError> {
    let info = PrivateKeyInfoRef::from_der(der)
        .map_err(|e| KeyError::Malformed(format!("the decrypted key is not PKCS#8: {e}")))?;
    require_p256(&info.algorithm)?;
    SigningKey::from_pkcs8_der(der)
        .map_err(|e| KeyError::Malformed(format!("not a valid P-256 private key: {e}")))
}

const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const P521: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.35");
const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
const RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const RSA_PSS: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.10");

/// Ok for an ECDSA P-256 key; otherwise says what the key is, so that the
/// user knows it must be regenerated rather than repaired.
fn require_p256(algorithm: &p256::pkcs8::AlgorithmIdentifierRef<'_>) -> Result<(), KeyError> {
    let (oid, curve) = algorithm
        .oids()
        .map_err(|e| KeyError::Malformed(format!("key algorithm: {e}")))?;
    let kind = match (oid, curve) {
        (EC_PUBLIC_KEY, Some(P256)) => return Ok(()),
        (EC_PUBLIC_KEY, Some(P384)) => "an ECDSA P-384 key".to_owned(),
        (EC_PUBLIC_KEY, Some(P521)) => "an ECDSA P-521 key".to_owned(),
        (EC_PUBLIC_KEY, _) => "an elliptic-curve key on another curve".to_owned(),
        (ED25519, _) => "an Ed25519 key".to_owned(),
        (RSA | RSA_PSS, _) => "an RSA key".to_owned(),
        (other, _) => format!("a key of another kind (algorithm {other})"),
    };
    Err(KeyError::NotP256 { kind })
}

fn random_bytes<const N: usize>() -> Result<[u8; N], KeyError> {
    let mut bytes = [0; N];
    getrandom::fill(&mut bytes)
        .map_err(|e| KeyError::Generate(format!("the system's random source: {e}")))?;
    Ok(bytes)
}

/// A uniformly random P-256 scalar: 32 random bytes, drawn again in the
/// (2^-32) case they are zero or not below the group order.
fn random_signing_key() -> Result<SigningKey, KeyError> {
    loop {
        let bytes: [u8; 32] = random_bytes()?;
        if let Ok(key) = SigningKey::from_slice(&bytes) {
            return Ok(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key written by `cosign generate-key-pair` with an empty password,
    /// from sigstore-rs (tests/data/keys/cosign_generated_encrypted_empty_private.key,
    /// https://github.com/sigstore/sigstore-rs, Apache-2.0).
    const COSIGN_KEY_EMPTY_PASSWORD: &str = "\
-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjo2NTUzNiwiciI6
OCwicCI6MX0sInNhbHQiOiJFY3pJR3Z0bnpFcCsxaEpudERnbGI1UnoxN3gwQVMy
YklvWGRNcDQrU1NJPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiJtSVVKbG1OMzNINExvZ0dhaG5MamdmK3R4SmJwci93MCJ9LCJj
aXBoZXJ0ZXh0IjoiM3FtS2FidXRuYm1WT1IvTkZGM2NDaUErTXp1WWQ5L0VERDVI
MVlUSGhQVzZsSzAvdjVqdDZCQzlsME12NGV5am9qZkl0d3B6a2JJOXQrZGx5VXZ3
VUgvMWZjbkFZT2dEdXRLQzkvSkNiOE02SVY2VHpVaDF5c0ZFWDFzeG9xb1FzeUpL
bjM0UVlldFNlaVdDaGtmUHUyZXByQjFEV0pwekdzTGZIakxNVTkzOEdmNk1xM1A0
N0ZSd2syZzY1cFZnSGMwVWV1L1N1OUs0Zmc9PSJ9
-----END ENCRYPTED SIGSTORE PRIVATE KEY-----
";

    /// An Ed25519 key in the same encrypted format, password "123", from
    /// sigstore-rs (tests/data/keys/ed25519_encrypted_private.key,
    /// https://github.com/sigstore/sigstore-rs, Apache-2.0).
    const SIGSTORE_ED25519_KEY: &str = "\
-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjozMjc2OCwiciI6
OCwicCI6MX0sInNhbHQiOiJ1elF5Snc4b1FjWCt1T3RlWDljSHpVOEhycWlJVzJV
ck9YbnpJb1ljaUtJPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiJKeUJDMS81K2E3emtxdnE5dVpTaHIvZDRwNXVjQW1WQSJ9LCJj
aXBoZXJ0ZXh0IjoiZC9TMndRaVJ0YjcwazFmZEd0ZzRFa0RXZ0ZJcU9NRWd3TDNI
bUtzWjBpdDlJcTFRSVplUGJoYWRTKzJORUZzWVA4TlhVOGpoT1dtb0QreWZwbkMz
dTBYQTRvcFBib2JwbEpleWJEUUtQdW1sa0tiRUc5MnRCa3pUMFJwNnA1dDdFeVVk
In0=
-----END ENCRYPTED SIGSTORE PRIVATE KEY-----
";

    /// A key pair as [`generate`] makes it, at a cost that keeps debug
    /// builds' tests fast; `generated_keys_are_in_cosign_format` uses the
    /// real one.
    fn cheap_pair(password: &[u8]) -> KeyPair {
        generate_with_cost(password, 4).unwrap()
    }

    /// A key file whose JSON is `json`.
    fn key_file(json: &str) -> String {
        encode_pem(PRIVATE_KEY_LABEL, json.as_bytes())
    }

    #[test]
    fn generated_keys_decrypt_with_their_password_only() {
        let pair = cheap_pair(b"correct horse");
        assert!(
            pair.private_pem
                .starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n")
        );
        assert!(pair.public_pem.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        assert!(!pair.private_pem.contains('\r'));

        let key = decrypt_private(&pair.private_pem, b"correct horse").unwrap();
        assert_eq!(key.verifying_key(), &read_public(&pair.public_pem).unwrap());
        assert!(matches!(
            decrypt_private(&pair.private_pem, b"correct horse!"),
            Err(KeyError::WrongPassword)
        ));
        assert_eq!(
            KeyError::WrongPassword.to_string(),
            "cannot decrypt the key: wrong password"
        );
    }

    #[test]
    fn generated_keys_are_in_cosign_format() {
        let pair = generate(b"").unwrap();
        let block = pem::parse(&pair.private_pem).unwrap();
        let json: serde_json::Value = serde_json::from_slice(block.contents()).unwrap();
        assert_eq!(json["kdf"]["name"], "scrypt");
        assert_eq!(
            json["kdf"]["params"],
            serde_json::json!({"N": 65536, "r": 8, "p": 1})
        );
        let salt = BASE64
            .decode(json["kdf"]["salt"].as_str().unwrap())
            .unwrap();
        assert_eq!(salt.len(), 32);
        assert_eq!(json["cipher"]["name"], "nacl/secretbox");
        let nonce = BASE64
            .decode(json["cipher"]["nonce"].as_str().unwrap())
            .unwrap();
        assert_eq!(nonce.len(), 24);
        // The JSON keys in cosign's order.
        let text = std::str::from_utf8(block.contents()).unwrap();
        assert!(
            text.starts_with(
                r#"{"kdf":{"name":"scrypt","params":{"N":65536,"r":8,"p":1},"salt":""#
            )
        );
    }

    #[test]
    fn the_empty_password_is_a_password_like_another() {
        // `COSIGN_PASSWORD=""`, cosign's answer to "no password".
        let pair = cheap_pair(b"");
        let key = decrypt_private(&pair.private_pem, b"").unwrap();
        assert_eq!(key.verifying_key(), &read_public(&pair.public_pem).unwrap());
        assert!(matches!(
            decrypt_private(&cheap_pair(b"").private_pem, b" "),
            Err(KeyError::WrongPassword)
        ));
    }

    #[test]
    fn reads_a_key_cosign_generated() {
        let key = decrypt_private(COSIGN_KEY_EMPTY_PASSWORD, b"").unwrap();
        // Its public key round-trips through a `.pub` file.
        let public = key.verifying_key();
        let der = public.to_public_key_der().unwrap();
        let pem = encode_pem(PUBLIC_KEY_LABEL, der.as_bytes());
        assert_eq!(&read_public(&pem).unwrap(), public);
    }

    #[test]
    fn reads_the_label_of_older_cosign() {
        let pair = cheap_pair(b"pw");
        let legacy = pair.private_pem.replace("SIGSTORE", "COSIGN");
        assert!(legacy.starts_with("-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----"));
        let key = decrypt_private(&legacy, b"pw").unwrap();
        assert_eq!(key.verifying_key(), &read_public(&pair.public_pem).unwrap());
    }

    #[test]
    fn other_key_algorithms_are_named() {
        let error = decrypt_private(SIGSTORE_ED25519_KEY, b"123").unwrap_err();
        assert_eq!(
            error.to_string(),
            "this is an Ed25519 key; Corral supports ECDSA P-256 keys (cosign's default)"
        );

        // An Ed25519 SubjectPublicKeyInfo: the algorithm 1.3.101.112 and 32 bytes.
        let mut spki = vec![
            0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
        ];
        spki.extend([7; 32]);
        let error = read_public(&encode_pem(PUBLIC_KEY_LABEL, spki)).unwrap_err();
        assert!(matches!(&error, KeyError::NotP256 { kind } if kind == "an Ed25519 key"));
    }

    #[test]
    fn unencrypted_and_mislabelled_pems_are_refused() {
        let pair = cheap_pair(b"");
        let key = decrypt_private(&pair.private_pem, b"").unwrap();
        let plain = key.to_pkcs8_der().unwrap();
        for label in ["PRIVATE KEY", "EC PRIVATE KEY"] {
            let pem = encode_pem(label, plain.as_bytes());
            let error = decrypt_private(&pem, b"").unwrap_err();
            assert!(matches!(&error, KeyError::NotCosignKey { label: l } if l == label));
            assert!(
                error.to_string().contains("not a cosign key file"),
                "{error}"
            );
        }
        assert!(matches!(
            decrypt_private(&pair.public_pem, b""),
            Err(KeyError::NotCosignKey { .. })
        ));
        assert!(matches!(
            read_public(COSIGN_KEY_EMPTY_PASSWORD),
            Err(KeyError::NotPublicKey { .. })
        ));
        assert!(matches!(read_public("hello"), Err(KeyError::NotPem(_))));
    }

    #[test]
    fn scrypt_cost_is_bounded_before_any_work() {
        let file = |n: u64, r: u32, p: u32| {
            key_file(&format!(
                r#"{{"kdf":{{"name":"scrypt","params":{{"N":{n},"r":{r},"p":{p}}},"salt":"AAAA"}},"cipher":{{"name":"nacl/secretbox","nonce":"AAAA"}},"ciphertext":"AAAA"}}"#
            ))
        };
        let started = std::time::Instant::now();
        for (n, r, p) in [
            (1 << 30, 8, 1),        // 128 GiB
            (1 << 21, 1, 1),        // log2(N) over 20
            (1 << 20, 8, 1),        // 1 GiB
            (1 << 16, 1 << 20, 1),  // r huge
            (1 << 16, 8, 17),       // p over 16
            (1 << 20, u32::MAX, 1), // the largest product
        ] {
            let error = decrypt_private(&file(n, r, p), b"").unwrap_err();
            assert!(
                matches!(error, KeyError::ScryptTooCostly { .. }),
                "N={n} r={r} p={p}: {error}"
            );
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(1));

        for n in [0, 1, 3, 65535] {
            let error = decrypt_private(&file(n, 8, 1), b"").unwrap_err();
            assert!(matches!(error, KeyError::Malformed(_)), "N={n}: {error}");
        }
        // r or p of zero: scrypt's own check, still before any work.
        assert!(matches!(
            decrypt_private(&file(1 << 4, 0, 1), b""),
            Err(KeyError::Malformed(_))
        ));
    }

    #[test]
    fn other_kdfs_ciphers_and_sizes_are_refused() {
        for (unknown, json) in [
            (
                "argon2",
                r#"{"kdf":{"name":"argon2","params":{"N":16,"r":8,"p":1},"salt":""},"cipher":{"name":"nacl/secretbox","nonce":""},"ciphertext":""}"#,
            ),
            (
                "aes-gcm",
                r#"{"kdf":{"name":"scrypt","params":{"N":16,"r":8,"p":1},"salt":""},"cipher":{"name":"aes-gcm","nonce":""},"ciphertext":""}"#,
            ),
        ] {
            let err = decrypt_private(&key_file(json), b"")
                .unwrap_err()
                .to_string();
            assert!(err.contains(unknown), "{err}");
        }
        let short_nonce = key_file(
            r#"{"kdf":{"name":"scrypt","params":{"N":16,"r":8,"p":1},"salt":""},"cipher":{"name":"nacl/secretbox","nonce":"AAAA"},"ciphertext":""}"#,
        );
        assert!(matches!(
            decrypt_private(&short_nonce, b""),
            Err(KeyError::Malformed(_))
        ));

        let huge = format!("{}{}", COSIGN_KEY_EMPTY_PASSWORD, " ".repeat(64 << 10));
        assert!(matches!(
            decrypt_private(&huge, b""),
            Err(KeyError::TooLarge { .. })
        ));
        assert!(matches!(read_public(&huge), Err(KeyError::TooLarge { .. })));
    }

    #[test]
    fn fingerprint_is_the_sha256_of_the_pub_file_body() {
        let pair = cheap_pair(b"");
        let key = read_public(&pair.public_pem).unwrap();
        let body = pem::parse(&pair.public_pem).unwrap().into_contents();
        let expected = format!("sha256:{}", crate::digest::hex(&Sha256::digest(&body)));
        assert_eq!(fingerprint(&key), expected);
        assert_eq!(expected.len(), "sha256:".len() + 64);
    }
}
