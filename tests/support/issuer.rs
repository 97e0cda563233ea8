//! An authorization server the attack tests control: it serves RFC 8414
//! metadata and a JWKS on loopback, signs tokens with its own ES256 key
//! (any claims, any header, so tests can forge what an attacker would),
//! introspects the opaque tokens a test registers (RFC 7662, for the
//! client `corral` with secret `s3cret`), counts how often its keys are
//! fetched, and can misbehave as a hostile or
//! broken issuer does: a JWKS endpoint that hangs, or that answers 100 MiB.
//!
//! The flows of real clients use the real provider (npm oidc-provider,
//! `oidc.rs`); this one exists for what a real provider will not do.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

/// How the JWKS endpoint answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jwks {
    /// The issuer's key.
    Honest,
    /// Never: it accepts the connection and sends nothing.
    Hangs,
    /// 100 MiB of a JSON document that never ends.
    Huge,
}

pub struct Issuer {
    pub url: String,
    pub kid: String,
    key: EcdsaKeyPair,
    jwks_fetches: Arc<AtomicUsize>,
    mode: Arc<Mutex<Jwks>>,
    /// Opaque tokens and what introspection says of each.
    opaque: Arc<Mutex<HashMap<String, Value>>>,
    introspections: Arc<AtomicUsize>,
}

/// The client the server introspects as, and its secret.
pub const INTROSPECTION_CLIENT: (&str, &str) = ("corral", "s3cret");

/// What its handlers share.
#[derive(Clone)]
struct Shared {
    metadata: Value,
    jwk: Value,
    fetches: Arc<AtomicUsize>,
    mode: Arc<Mutex<Jwks>>,
    opaque: Arc<Mutex<HashMap<String, Value>>>,
    introspections: Arc<AtomicUsize>,
}

impl Issuer {
    pub fn start(mode: Jwks) -> Issuer {
        let random = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
        let key =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
                .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let url = format!("http://{addr}");
        let kid = format!("key-{}", addr.port());
        let point = key.public_key().as_ref();
        let jwk = json!({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
            "x": B64URL.encode(&point[1..33]), "y": B64URL.encode(&point[33..])});
        let metadata = json!({
            "issuer": url,
            "jwks_uri": format!("{url}/jwks"),
            "authorization_endpoint": format!("{url}/authorize"),
            "token_endpoint": format!("{url}/token"),
            "introspection_endpoint": format!("{url}/introspect"),
        });
        let shared = Shared {
            metadata,
            jwk,
            fetches: Arc::new(AtomicUsize::new(0)),
            mode: Arc::new(Mutex::new(mode)),
            opaque: Arc::default(),
            introspections: Arc::new(AtomicUsize::new(0)),
        };
        let issuer = Issuer {
            url,
            kid,
            key,
            jwks_fetches: shared.fetches.clone(),
            mode: shared.mode.clone(),
            opaque: shared.opaque.clone(),
            introspections: shared.introspections.clone(),
        };
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = shared.clone();
                thread::spawn(move || {
                    let _ = answer(stream, &shared);
                });
            }
        });
        issuer
    }

    /// Registers the opaque `token`: introspection answers `answer` for it.
    pub fn opaque_token(&self, token: &str, answer: Value) {
        self.opaque
            .lock()
            .unwrap()
            .insert(token.to_string(), answer);
    }

    /// How many introspection requests it answered.
    pub fn introspections(&self) -> usize {
        self.introspections.load(Ordering::SeqCst)
    }

    /// How many times its JWKS was asked for.
    pub fn jwks_fetches(&self) -> usize {
        self.jwks_fetches.load(Ordering::SeqCst)
    }

    pub fn set_mode(&self, mode: Jwks) {
        *self.mode.lock().unwrap() = mode;
    }

    /// The JWK of its public key, as it publishes it.
    pub fn public_jwk(&self) -> Value {
        let point = self.key.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "kid": self.kid,
            "x": B64URL.encode(&point[1..33]), "y": B64URL.encode(&point[33..])})
    }

    /// An access token for `resource`, of `subject`, granting `scopes`,
    /// valid for an hour.
    pub fn token(&self, resource: &str, subject: &str, scopes: &str) -> String {
        self.sign(&self.header(), &self.claims(resource, subject, scopes))
    }

    /// The header it signs with.
    pub fn header(&self) -> Value {
        json!({"alg": "ES256", "typ": "at+jwt", "kid": self.kid})
    }

    /// The claims of [`Issuer::token`], to change before signing.
    pub fn claims(&self, resource: &str, subject: &str, scopes: &str) -> Value {
        let now = now();
        json!({
            "iss": self.url, "sub": subject, "aud": resource, "scope": scopes,
            "iat": now, "nbf": now, "exp": now + 3600, "client_id": "attack-tests",
            "jti": format!("{subject}-{}", rand_u64()),
        })
    }

    /// A compact JWS of `claims` under `header`, signed with its key
    /// (whatever `header` says the algorithm is).
    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            B64URL.encode(header.to_string()),
            B64URL.encode(claims.to_string())
        );
        let signature = self
            .key
            .sign(&SystemRandom::new(), input.as_bytes())
            .unwrap();
        format!("{input}.{}", B64URL.encode(signature.as_ref()))
    }
}

/// A JWS of `claims` under `header`, "signed" with HMAC-SHA256 keyed by
/// `secret` (an attacker's use of a public key as a shared secret).
pub fn hmac_token(header: &Value, claims: &Value, secret: &[u8]) -> String {
    let input = format!(
        "{}.{}",
        B64URL.encode(header.to_string()),
        B64URL.encode(claims.to_string())
    );
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let tag = ring::hmac::sign(&key, input.as_bytes());
    format!("{input}.{}", B64URL.encode(tag.as_ref()))
}

/// An unsigned token (`alg: none`).
pub fn unsigned_token(claims: &Value) -> String {
    format!(
        "{}.{}.",
        B64URL.encode(json!({"alg": "none", "typ": "at+jwt"}).to_string()),
        B64URL.encode(claims.to_string())
    )
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn rand_u64() -> u64 {
    let mut bytes = [0u8; 8];
    ring::rand::SecureRandom::fill(&SystemRandom::new(), &mut bytes).unwrap();
    u64::from_le_bytes(bytes)
}

fn answer(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    let mut authorization = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("authorization:") {
            authorization = line["authorization:".len()..].trim().to_string();
        }
    }
    let mut body = vec![0u8; length];
    std::io::Read::read_exact(&mut reader, &mut body)?;
    let path = request_line.split(' ').nth(1).unwrap_or("");
    let mut stream = stream;
    let send = |stream: &mut TcpStream, status: &str, body: &str| {
        write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    match path {
        "/.well-known/oauth-authorization-server" => {
            send(&mut stream, "200 OK", &shared.metadata.to_string())
        }
        "/introspect" => {
            shared.introspections.fetch_add(1, Ordering::SeqCst);
            let (client, secret) = INTROSPECTION_CLIENT;
            let expected = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{client}:{secret}"))
            );
            if authorization != expected {
                return send(
                    &mut stream,
                    "401 Unauthorized",
                    r#"{"error":"invalid_client"}"#,
                );
            }
            let body = String::from_utf8_lossy(&body);
            let token = body
                .split('&')
                .find_map(|pair| pair.strip_prefix("token="))
                .unwrap_or("");
            let answer = shared
                .opaque
                .lock()
                .unwrap()
                .get(token)
                .cloned()
                .unwrap_or(json!({"active": false}));
            send(&mut stream, "200 OK", &answer.to_string())
        }
        "/jwks" => {
            shared.fetches.fetch_add(1, Ordering::SeqCst);
            let mode = *shared.mode.lock().unwrap();
            match mode {
                Jwks::Honest => send(
                    &mut stream,
                    "200 OK",
                    &json!({ "keys": [shared.jwk] }).to_string(),
                ),
                Jwks::Hangs => {
                    thread::sleep(Duration::from_secs(120));
                    Ok(())
                }
                Jwks::Huge => {
                    write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{{\"keys\": [\""
                    )?;
                    let chunk = vec![b'A'; 1 << 20];
                    for _ in 0..100 {
                        stream.write_all(&chunk)?;
                    }
                    Ok(())
                }
            }
        }
        _ => send(&mut stream, "404 Not Found", "{}"),
    }
}
