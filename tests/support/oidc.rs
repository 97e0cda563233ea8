//! The OAuth tests' authorization server: npm `oidc-provider` (installed by
//! `tests/oidc/setup`, configured by `tests/oidc/provider.mjs`) on loopback,
//! killed when dropped. Its signing key is made here, so that tests can also
//! sign tokens of their own with the issuer's real key (expired, for another
//! resource, with another `kid`...), and with anything else (`alg: none`,
//! HS256 keyed with the public key).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};

use super::{repo_root, run_setup};

/// The scopes the provider knows for every resource server.
pub const SCOPES: &str = "mcp files:read files:write admin";

/// The users who can sign in (any password) through the provider's pages.
pub const USERS: [&str; 2] = ["alice", "bob"];

/// A client registered with the provider in advance, for client_credentials:
/// its tokens' `sub` is its id.
#[derive(Clone, Debug)]
pub struct OidcClient {
    pub id: String,
    pub secret: String,
    /// The scopes it may ask for (space-separated).
    pub scope: String,
    /// For a web client (the authorization code grant) instead: where the
    /// provider sends the browser back.
    pub redirect_uri: Option<String>,
}

impl OidcClient {
    pub fn new(id: &str, scope: &str) -> OidcClient {
        OidcClient {
            id: id.to_string(),
            secret: format!("{id}-secret-{}", hex(&random_bytes::<16>())),
            scope: scope.to_string(),
            redirect_uri: None,
        }
    }

    /// A confidential web client (authorization code) redirecting to
    /// `redirect_uri`: as Corral registers for its secrets page.
    pub fn web(id: &str, redirect_uri: &str) -> OidcClient {
        OidcClient {
            redirect_uri: Some(redirect_uri.to_string()),
            ..OidcClient::new(id, "")
        }
    }
}

/// The node binary to run oidc-provider with (Node 22 LTS or later) and
/// the npm prefix holding it (`tests/oidc/setup`), once per test binary.
pub fn provider_setup() -> (String, String) {
    static DONE: OnceLock<(String, String)> = OnceLock::new();
    DONE.get_or_init(|| {
        let lines = run_setup("tests/oidc/setup");
        (lines[0].clone(), lines[1].clone())
    })
    .clone()
}

/// A running authorization server.
pub struct Issuer {
    child: Child,
    url: String,
    key: SigningKey,
    kid: String,
    stderr: Arc<Mutex<String>>,
    _config: tempfile::TempDir,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Issuer {
    /// Starts the provider on a free loopback port with `clients`
    /// pre-registered, and waits until it listens.
    pub fn start(clients: &[OidcClient]) -> Issuer {
        let (node, prefix) = provider_setup();
        let key = random_key();
        let kid = format!("corral-test-{}", hex(&random_bytes::<6>()));
        let mut jwk = public_jwk(&key, &kid);
        jwk["d"] = URL_SAFE_NO_PAD.encode(key.to_bytes()).into();
        let config = tempfile::tempdir().unwrap();
        let config_path = config.path().join("provider.json");
        let clients: Vec<Value> = clients
            .iter()
            .map(|client| match &client.redirect_uri {
                None => json!({
                    "client_id": client.id,
                    "client_secret": client.secret,
                    "scope": client.scope,
                }),
                Some(redirect) => json!({
                    "client_id": client.id,
                    "client_secret": client.secret,
                    "grant_types": ["authorization_code"],
                    "response_types": ["code"],
                    "redirect_uris": [redirect],
                }),
            })
            .collect();
        let settings = json!({ "key": jwk, "scopes": SCOPES, "clients": clients, "users": USERS });
        std::fs::write(&config_path, settings.to_string()).unwrap();
        let mut child = Command::new(&node)
            .arg(repo_root().join("tests/oidc/provider.mjs"))
            .arg(&prefix)
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting node tests/oidc/provider.mjs");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let mut issuer = Issuer {
            child,
            url: String::new(),
            key,
            kid,
            stderr,
            _config: config,
        };
        let line = receiver
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_default();
        let url = line.trim();
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "the provider printed no issuer ({line:?}); stderr:\n{}",
            issuer.stderr()
        );
        issuer.url = url.to_string();
        issuer
    }

    /// The issuer identifier and base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The `kid` of the provider's signing key.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// What the provider wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The public half of the provider's key, as its JWKS lists it.
    pub fn public_jwk(&self) -> Value {
        public_jwk(&self.key, &self.kid)
    }

    /// A client_credentials token request for `resource` (RFC 8707) with
    /// `scopes`: the HTTP status and the JSON answer.
    pub fn request_token(
        &self,
        client_id: &str,
        secret: &str,
        scopes: &str,
        resource: &str,
    ) -> (u16, Value) {
        let mut form = vec![("grant_type", "client_credentials"), ("resource", resource)];
        if !scopes.is_empty() {
            form.push(("scope", scopes));
        }
        let body: Vec<String> = form
            .iter()
            .map(|(name, value)| format!("{name}={}", form_encode(value)))
            .collect();
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form_encode(client_id),
            form_encode(secret)
        ));
        let (status, body) = http_post(
            &self.url,
            "/token",
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Authorization", &format!("Basic {basic}")),
            ],
            body.join("&").as_bytes(),
        );
        let answer = serde_json::from_slice(&body)
            .unwrap_or_else(|_| json!({ "unparsed": String::from_utf8_lossy(&body) }));
        (status, answer)
    }

    /// A JWT access token for `client` with `scopes`, for `resource`,
    /// through the provider's token endpoint (client_credentials). Fails
    /// when the provider refuses.
    pub fn token(&self, client: &OidcClient, scopes: &str, resource: &str) -> String {
        let (status, answer) = self.request_token(&client.id, &client.secret, scopes, resource);
        assert_eq!(
            status,
            200,
            "the provider refused a token: {answer}\n{}",
            self.stderr()
        );
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access_token in {answer}"))
            .to_string()
    }

    /// The JOSE header the provider puts on its access tokens.
    pub fn header(&self) -> Value {
        json!({ "alg": "ES256", "typ": "at+jwt", "kid": self.kid })
    }

    /// The claims of an access token as the provider issues them (RFC 9068),
    /// for `subject` with `scope`, for `resource`, valid for ten minutes
    /// from now: a starting point for crafted tokens.
    pub fn claims(&self, subject: &str, scope: &str, resource: &str) -> Value {
        let now = now();
        json!({
            "iss": self.url,
            "sub": subject,
            "aud": resource,
            "scope": scope,
            "client_id": "crafted",
            "iat": now,
            "exp": now + 600,
            "jti": hex(&random_bytes::<12>()),
        })
    }

    /// A JWS of `claims` under `header`, signed ES256 with the issuer's real
    /// key (whatever `header` says of the algorithm or key).
    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        let input = signing_input(header, claims);
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }

    /// Whether `token`'s ES256 signature is the issuer key's: true of the
    /// provider's own tokens, which is what lets tests sign crafted ones with
    /// [`Issuer::sign`] as the issuer would.
    pub fn signed_by_issuer(&self, token: &str) -> bool {
        let Some((input, signature)) = token.rsplit_once('.') else {
            return false;
        };
        let Ok(signature) = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| ())
            .and_then(|bytes| Signature::from_slice(&bytes).map_err(|_| ()))
        else {
            return false;
        };
        self.key
            .verifying_key()
            .verify(input.as_bytes(), &signature)
            .is_ok()
    }
}

/// A JWS of `claims` under `header`, signed HMAC-SHA256 with `secret` (the
/// issuer's public key, for the algorithm-confusion attack).
pub fn sign_hs256(header: &Value, claims: &Value, secret: &[u8]) -> String {
    let input = signing_input(header, claims);
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret).unwrap();
    mac.update(input.as_bytes());
    let tag = mac.finalize().into_bytes();
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(tag))
}

/// An unsigned JWS (`alg: none`) of `claims`: its signature is empty.
pub fn unsigned(claims: &Value) -> String {
    let input = signing_input(&json!({ "alg": "none", "typ": "at+jwt" }), claims);
    format!("{input}.")
}

/// The claims of a JWT (its payload), without checking anything.
pub fn decode_claims(token: &str) -> Value {
    let payload = token
        .split('.')
        .nth(1)
        .unwrap_or_else(|| panic!("not a JWT: {token}"));
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

/// The header of a JWT, without checking anything.
pub fn decode_header(token: &str) -> Value {
    let header = token.split('.').next().unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap()
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn signing_input(header: &Value, claims: &Value) -> String {
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}

fn public_jwk(key: &SigningKey, kid: &str) -> Value {
    let point = key.verifying_key().to_sec1_point(false);
    let bytes = point.as_bytes(); // 0x04, x, y
    json!({
        "kty": "EC",
        "crv": "P-256",
        "x": URL_SAFE_NO_PAD.encode(&bytes[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&bytes[33..65]),
        "kid": kid,
        "alg": "ES256",
        "use": "sig",
    })
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut file| file.read_exact(&mut bytes))
        .expect("reading /dev/urandom");
    bytes
}

fn random_key() -> SigningKey {
    loop {
        // Nearly every 32 random bytes are a valid scalar (below the order).
        if let Ok(key) = SigningKey::from_slice(&random_bytes::<32>()) {
            return key;
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `application/x-www-form-urlencoded` encoding of one value.
pub fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// One POST to `base` (`http://HOST:PORT`) on a connection of its own: the
/// status and the body.
fn http_post(base: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, Vec<u8>) {
    let authority = base.strip_prefix("http://").expect("an http:// URL");
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let end = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .expect("an HTTP response head");
    let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .expect("an HTTP status");
    let mut body = response[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    (status, body)
}

fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = chunked.windows(2).position(|window| window == b"\r\n") else {
            return body;
        };
        let size = std::str::from_utf8(&chunked[..line_end])
            .ok()
            .and_then(|size| usize::from_str_radix(size.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 {
            return body;
        }
        let start = line_end + 2;
        body.extend_from_slice(&chunked[start..start + size]);
        chunked = &chunked[start + size + 2..];
    }
}
