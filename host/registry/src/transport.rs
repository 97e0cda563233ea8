//! Talking to a registry: oci-client underneath, and what it leaves to its
//! users: credentials from docker's config, plain HTTP for loopback only,
//! retries of transient failures, downloads resumed where they broke off
//! and checked against their digests, bounded sizes, and errors a user can
//! act on.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;
use oci_client::client::{BlobResponse, ClientConfig, ClientProtocol};
use oci_client::errors::{DigestError, OciDistributionError, OciErrorCode};
use oci_client::manifest::OciDescriptor;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest, Sha256};

use crate::digest::{hex, sha256_digest};
use crate::progress::Progress;
use crate::reference::is_loopback;

/// Attempts of one request before giving up, and the pause before each
/// retry: transient failures (a dropped connection, a 502 from a proxy, a
/// 429) are common on real networks; permanent ones (4xx) are not retried.
const BACKOFF: [Duration; 2] = [Duration::from_millis(200), Duration::from_secs(1)];
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A registry that sends nothing for this long is taken as gone.
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Uploads go in chunks of this size, so that progress can be shown.
const UPLOAD_CHUNK: usize = 4 << 20;

/// How to reach a registry.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Speak plain HTTP even though the registry is not on this machine.
    pub plain_http: bool,
    /// A user name and password given on the command line; otherwise
    /// docker's `config.json` (and its credential helpers) are asked.
    pub credentials: Option<(String, String)>,
}

/// What went wrong, in terms a user can act on.
#[derive(Debug)]
pub enum TransportError {
    /// The registry wants credentials, or refused the ones sent (from
    /// `given`: the command line or docker's config).
    Unauthorized {
        registry: String,
        given: Option<&'static str>,
    },
    /// No such repository, tag, manifest or blob.
    NotFound { what: String },
    /// The registry could not be reached, after retries.
    Unreachable { registry: String, reason: String },
    /// The registry's TLS certificate was refused (not retried).
    Untrusted {
        registry: String,
        reason: String,
        /// Signed by an authority this machine does not trust.
        unknown_issuer: bool,
    },
    /// The bytes received do not hash to the digest that names them.
    DigestMismatch {
        what: String,
        expected: String,
        found: String,
    },
    /// Something larger than allowed.
    TooLarge { what: String, limit: u64 },
    /// Anything else the registry answered, or a local failure.
    Other { reason: String },
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Unauthorized {
                registry,
                given: None,
            } => write!(
                f,
                "unauthorized: {registry} wants credentials; give them with --username and --password-stdin, or `docker login {registry}`"
            ),
            TransportError::Unauthorized {
                registry,
                given: Some(source),
            } => write!(
                f,
                "unauthorized: {registry} refused the credentials from {source} (check the user name and password, or the token's scopes)"
            ),
            TransportError::NotFound { what } => write!(f, "{what} is not in the registry"),
            TransportError::Unreachable { registry, reason } => {
                write!(f, "cannot reach the registry {registry}: {reason}")
            }
            TransportError::Untrusted {
                registry,
                reason,
                unknown_issuer: true,
            } => write!(
                f,
                "the TLS certificate of {registry} is not signed by an authority this machine trusts ({reason}); for a registry with a private CA, add the CA to the system's trusted certificates, or name a PEM file of it in SSL_CERT_FILE"
            ),
            TransportError::Untrusted {
                registry,
                reason,
                unknown_issuer: false,
            } => write!(
                f,
                "the TLS certificate of {registry} was refused ({reason})"
            ),
            TransportError::DigestMismatch {
                what,
                expected,
                found,
            } => write!(
                f,
                "the registry sent a {what} that does not match its digest (it hashes to {found}, not {expected}): it was changed in the registry or on the way"
            ),
            TransportError::TooLarge { what, limit } => {
                write!(f, "the {what} is larger than the {limit} bytes allowed")
            }
            TransportError::Other { reason } => f.write_str(reason),
        }
    }
}

impl std::error::Error for TransportError {}

/// One registry, with the credentials to use there.
pub struct Registry {
    client: Client,
    auth: RegistryAuth,
    /// `host:port`, as references name it.
    name: String,
    /// Where the credentials sent come from, if any are.
    credentials: Option<&'static str>,
}

impl Registry {
    /// A client for the registry of `reference`. Plain HTTP is used for a
    /// loopback registry, or for any with `plain_http`; HTTPS otherwise,
    /// with the system's trusted roots and the usual proxy variables
    /// (`HTTPS_PROXY`, `NO_PROXY`).
    pub fn connect(reference: &Reference, options: &Options) -> Registry {
        // reqwest's rustls needs a process-wide crypto provider; ring is
        // the one already built for wasmtime-wasi-http. Installing twice
        // is refused harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let name = reference.registry().to_owned();
        let protocol = if options.plain_http {
            ClientProtocol::Http
        } else if is_loopback(&name) {
            ClientProtocol::HttpsExcept(vec![name.clone()])
        } else {
            ClientProtocol::Https
        };
        let client = Client::new(ClientConfig {
            protocol,
            connect_timeout: Some(CONNECT_TIMEOUT),
            read_timeout: Some(READ_TIMEOUT),
            user_agent: concat!("corral/", env!("CARGO_PKG_VERSION")),
            // The registry is not asked which platform to pick: an index
            // is refused, as a wasm artifact is a single manifest.
            platform_resolver: None,
            ..ClientConfig::default()
        });
        let (auth, credentials) = match &options.credentials {
            Some((user, password)) => (
                RegistryAuth::Basic(user.clone(), password.clone()),
                Some("--username"),
            ),
            None => match docker_credentials(reference.resolve_registry()) {
                RegistryAuth::Anonymous => (RegistryAuth::Anonymous, None),
                found => (found, Some("docker's config.json")),
            },
        };
        Registry {
            client,
            auth,
            name,
            credentials,
        }
    }

    /// The manifest `reference` names (by tag or digest): its exact bytes
    /// and digest, checked against the digest in `reference`, if any, and
    /// bounded in size.
    pub async fn manifest(
        &self,
        reference: &Reference,
        media_types: &[&str],
        max_bytes: usize,
    ) -> Result<(Vec<u8>, String), TransportError> {
        let (bytes, digest) = self
            .retrying(&format!("manifest {reference}"), || {
                self.client
                    .pull_manifest_raw(reference, &self.auth, media_types)
            })
            .await?;
        if bytes.len() > max_bytes {
            return Err(TransportError::TooLarge {
                what: format!("manifest {reference}"),
                limit: max_bytes as u64,
            });
        }
        let found = sha256_digest(&bytes);
        // oci-client checked the bytes against the digest asked for and the
        // one the registry named; this checks sha256 again, which is what
        // the lock records and signatures cover.
        let expected = reference.digest().unwrap_or(&digest);
        if expected.starts_with("sha256:") && found != expected {
            return Err(TransportError::DigestMismatch {
                what: "manifest".into(),
                expected: expected.to_owned(),
                found,
            });
        }
        Ok((bytes.to_vec(), found))
    }

    /// Like [`Registry::manifest`], but `None` when there is none.
    pub async fn manifest_if_any(
        &self,
        reference: &Reference,
        media_types: &[&str],
        max_bytes: usize,
    ) -> Result<Option<(Vec<u8>, String)>, TransportError> {
        match self.manifest(reference, media_types, max_bytes).await {
            Ok(found) => Ok(Some(found)),
            Err(TransportError::NotFound { .. }) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// A small blob, into memory, checked against its descriptor.
    pub async fn blob(
        &self,
        reference: &Reference,
        descriptor: &OciDescriptor,
        max_bytes: u64,
    ) -> Result<Vec<u8>, TransportError> {
        let mut bytes = Vec::new();
        self.download(reference, descriptor, max_bytes, &mut bytes, None)
            .await?;
        Ok(bytes)
    }

    /// A blob streamed into the file `path` (created or truncated), checked
    /// against its descriptor; a transfer that breaks off is resumed from
    /// where it stopped (HTTP ranges) rather than started over.
    pub async fn blob_to_file(
        &self,
        reference: &Reference,
        descriptor: &OciDescriptor,
        max_bytes: u64,
        path: &Path,
        progress: &mut Progress,
    ) -> Result<(), TransportError> {
        let mut file = std::fs::File::create(path).map_err(|err| TransportError::Other {
            reason: format!("cannot write {}: {err}", path.display()),
        })?;
        self.download(reference, descriptor, max_bytes, &mut file, Some(progress))
            .await?;
        file.sync_all().map_err(|err| TransportError::Other {
            reason: format!("cannot write {}: {err}", path.display()),
        })
    }

    async fn download(
        &self,
        reference: &Reference,
        descriptor: &OciDescriptor,
        max_bytes: u64,
        out: &mut dyn Write,
        mut progress: Option<&mut Progress>,
    ) -> Result<(), TransportError> {
        let size = u64::try_from(descriptor.size).unwrap_or(u64::MAX);
        let what = |descriptor: &OciDescriptor| format!("blob {}", descriptor.digest);
        if size > max_bytes {
            return Err(TransportError::TooLarge {
                what: what(descriptor),
                limit: max_bytes,
            });
        }
        // Only the registry itself is asked: a descriptor's `urls` could
        // send the client anywhere.
        let descriptor = OciDescriptor {
            urls: None,
            ..descriptor.clone()
        };
        self.client
            .store_auth_if_needed(reference.resolve_registry(), &self.auth)
            .await;
        let mut hasher = Sha256::new();
        let mut have = 0u64;
        let mut attempt = 0;
        loop {
            let response = self
                .client
                .pull_blob_stream_partial(reference, &descriptor, have, None)
                .await;
            let broke = match response {
                Ok(response) => {
                    let stream = match response {
                        BlobResponse::Full(stream) => {
                            // The registry ignored the range: start over.
                            if have > 0 {
                                return Err(TransportError::Other {
                                    reason: format!(
                                        "the registry restarted {} from its start after a broken transfer; pull again",
                                        what(&descriptor)
                                    ),
                                });
                            }
                            stream
                        }
                        BlobResponse::Partial(stream) => stream,
                    };
                    let mut stream = stream.stream;
                    let mut broke = None;
                    while let Some(chunk) = stream.next().await {
                        match chunk {
                            Ok(chunk) => {
                                have += chunk.len() as u64;
                                if have > size {
                                    return Err(TransportError::Other {
                                        reason: format!(
                                            "the registry sent more than the {size} bytes of {}",
                                            what(&descriptor)
                                        ),
                                    });
                                }
                                hasher.update(&chunk);
                                out.write_all(&chunk).map_err(|err| TransportError::Other {
                                    reason: format!("cannot write {}: {err}", what(&descriptor)),
                                })?;
                                if let Some(progress) = progress.as_deref_mut() {
                                    progress.set(have);
                                }
                            }
                            // oci-client checks whole responses against
                            // the digest itself and ends the stream with an
                            // error when they differ: that case is told
                            // apart below, by the bytes.
                            Err(err) => {
                                broke = Some(err.to_string());
                                break;
                            }
                        }
                    }
                    match broke {
                        Some(reason) if have < size => Some(reason),
                        _ => None,
                    }
                }
                Err(err) if is_transient(&err) => Some(err.to_string()),
                Err(err) => return Err(self.describe(err, &what(&descriptor))),
            };
            match broke {
                None => break,
                Some(reason) => {
                    let Some(pause) = BACKOFF.get(attempt) else {
                        return Err(TransportError::Unreachable {
                            registry: self.name.clone(),
                            reason: format!(
                                "{} broke off at {have} of {size} bytes: {reason}",
                                what(&descriptor)
                            ),
                        });
                    };
                    tracing::warn!(
                        "{} broke off at {have} of {size} bytes ({reason}); resuming",
                        what(&descriptor)
                    );
                    attempt += 1;
                    tokio::time::sleep(*pause).await;
                }
            }
        }
        let found = format!("sha256:{}", hex(&hasher.finalize()));
        if have != size || found != descriptor.digest {
            return Err(TransportError::DigestMismatch {
                what: what(&descriptor),
                expected: descriptor.digest.clone(),
                found,
            });
        }
        Ok(())
    }

    /// Uploads `bytes` unless the registry has them already (so a push
    /// that is run again after a failure resumes blob by blob).
    pub async fn push_blob(
        &self,
        reference: &Reference,
        bytes: &[u8],
        progress: &mut Progress,
    ) -> Result<(), TransportError> {
        let digest = sha256_digest(bytes);
        let what = format!("blob {digest}");
        self.client
            .store_auth_if_needed(reference.resolve_registry(), &self.auth)
            .await;
        let exists = self
            .retrying(&what, || self.client.blob_exists(reference, &digest))
            .await?;
        if exists {
            progress.set(bytes.len() as u64);
            return Ok(());
        }
        let data = bytes::Bytes::copy_from_slice(bytes);
        let mut attempt = 0;
        loop {
            // Chunks go through a stream so that each one moves the progress.
            let chunks: Vec<bytes::Bytes> = (0..data.len().max(1))
                .step_by(UPLOAD_CHUNK)
                .map(|at| data.slice(at..(at + UPLOAD_CHUNK).min(data.len())))
                .collect();
            let (sent, counted) = tokio::sync::watch::channel(0u64);
            let stream = futures_util::stream::iter(chunks).map(move |chunk| {
                sent.send_modify(|sent| *sent += chunk.len() as u64);
                Ok(chunk)
            });
            let pushing =
                self.client
                    .push_blob_stream(reference, stream, &digest, Some(data.len() as u64));
            let result = watch_progress(pushing, counted, progress).await;
            let result = match result {
                // Registries that refuse chunked uploads take one request.
                Err(OciDistributionError::SpecViolationError(_)) => self
                    .client
                    .push_blob(reference, data.clone(), &digest)
                    .await
                    .map(|_| String::new()),
                other => other,
            };
            match result {
                Ok(_) => return Ok(()),
                Err(err) if is_transient(&err) && attempt < BACKOFF.len() => {
                    tracing::warn!("pushing {what} failed ({err}); retrying");
                    tokio::time::sleep(BACKOFF[attempt]).await;
                    attempt += 1;
                }
                Err(err) => return Err(self.describe(err, &what)),
            }
        }
    }

    /// Pushes a manifest's exact bytes to `reference` (a tag or digest).
    pub async fn push_manifest(
        &self,
        reference: &Reference,
        bytes: &[u8],
        media_type: &str,
    ) -> Result<(), TransportError> {
        let content_type: http::HeaderValue =
            media_type.parse().map_err(|_| TransportError::Other {
                reason: format!("`{media_type}` is not a media type"),
            })?;
        let bytes = bytes::Bytes::copy_from_slice(bytes);
        self.client
            .store_auth_if_needed(reference.resolve_registry(), &self.auth)
            .await;
        self.retrying(&format!("manifest {reference}"), || {
            self.client
                .push_manifest_raw(reference, bytes.clone(), content_type.clone())
        })
        .await?;
        Ok(())
    }

    /// Runs `request` until it succeeds, fails for good, or runs out of
    /// retries.
    async fn retrying<T, F, Fut>(&self, what: &str, mut request: F) -> Result<T, TransportError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, OciDistributionError>>,
    {
        let mut attempt = 0;
        loop {
            match request().await {
                Ok(value) => return Ok(value),
                Err(err) if is_transient(&err) && attempt < BACKOFF.len() => {
                    tracing::debug!("{what}: {err}; retrying");
                    tokio::time::sleep(BACKOFF[attempt]).await;
                    attempt += 1;
                }
                Err(err) => return Err(self.describe(err, what)),
            }
        }
    }

    /// The user's view of `err`, which happened while getting `what`.
    fn describe(&self, err: OciDistributionError, what: &str) -> TransportError {
        let unauthorized = TransportError::Unauthorized {
            registry: self.name.clone(),
            given: self.credentials,
        };
        let not_found = TransportError::NotFound {
            what: what.to_owned(),
        };
        // oci-client reports an HTTP status either as its own error or, in
        // some calls (`blob_exists`, the HEAD before every upload), as
        // reqwest's: a 401 is the registry asking for credentials all the
        // same, wherever it surfaces.
        let status = match &err {
            OciDistributionError::ServerError { code, .. } => Some(*code),
            OciDistributionError::RequestError(request) => request.status().map(|s| s.as_u16()),
            _ => None,
        };
        match status {
            Some(401 | 403) => return unauthorized,
            Some(404) => return not_found,
            _ => {}
        }
        match err {
            OciDistributionError::DigestError(DigestError::VerificationError {
                expected,
                actual,
            }) => TransportError::DigestMismatch {
                what: what.to_owned(),
                expected,
                found: actual,
            },
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_) => unauthorized,
            OciDistributionError::ImageManifestNotFoundError(_) => not_found,
            OciDistributionError::RegistryError { ref envelope, .. } => {
                match envelope.errors.first().map(|e| &e.code) {
                    Some(OciErrorCode::Unauthorized | OciErrorCode::Denied) => unauthorized,
                    Some(
                        OciErrorCode::ManifestUnknown
                        | OciErrorCode::NameUnknown
                        | OciErrorCode::BlobUnknown
                        | OciErrorCode::NotFound,
                    ) => not_found,
                    _ => TransportError::Other {
                        reason: format!(
                            "the registry refused {what}: {}",
                            registry_text(&envelope.to_string())
                        ),
                    },
                }
            }
            OciDistributionError::RequestError(ref request)
                if let Some(problem) = certificate_problem(request) =>
            {
                TransportError::Untrusted {
                    registry: self.name.clone(),
                    reason: problem.to_string(),
                    unknown_issuer: matches!(
                        problem,
                        rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)
                    ),
                }
            }
            OciDistributionError::RequestError(ref request)
                if request.is_connect() || request.is_timeout() =>
            {
                TransportError::Unreachable {
                    registry: self.name.clone(),
                    reason: error_chain(request),
                }
            }
            OciDistributionError::RequestError(ref request) => TransportError::Other {
                reason: format!("{what}: {}", error_chain(request)),
            },
            OciDistributionError::ServerError { code, message, .. } => TransportError::Other {
                reason: format!(
                    "{what}: the registry answered {code}: {}",
                    registry_text(&message)
                ),
            },
            other => TransportError::Other {
                reason: format!("{what}: {}", registry_text(&other.to_string())),
            },
        }
    }
}

/// Text a registry sent, fit to show: at most 300 characters, control
/// characters escaped (a terminal escape must not rewrite the screen).
fn registry_text(text: &str) -> String {
    let mut shown: String = text
        .chars()
        .take(300)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().count() > 300 {
        shown.push('…');
    }
    shown
}

/// Whether retrying might help: the connection failed or timed out, or
/// the registry or a proxy said it is overloaded or failing (429, 5xx). A
/// refused certificate is refused again.
fn is_transient(err: &OciDistributionError) -> bool {
    match err {
        OciDistributionError::RequestError(err) => {
            (err.is_connect() || err.is_timeout() || err.is_body() || err.is_request())
                && certificate_problem(err).is_none()
        }
        OciDistributionError::ServerError { code, .. } => *code == 429 || *code >= 500,
        OciDistributionError::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|e| e.code == OciErrorCode::Toomanyrequests),
        OciDistributionError::IoError(_) => true,
        _ => false,
    }
}

/// An error and its causes, `a: b: c` (reqwest hides the useful part,
/// "Connection refused", in its sources).
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The certificate (or other TLS) failure behind `err`, if that is what
/// went wrong: rustls's verdict, which sits inside an `io::Error` whose
/// `source()` skips it, so each cause is also looked into.
fn certificate_problem<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> Option<&'a rustls::Error> {
    let mut cause = Some(err);
    while let Some(err) = cause {
        let found = err.downcast_ref::<rustls::Error>().or_else(|| {
            err.downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(
            found @ (rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented),
        ) = found
        {
            return Some(found);
        }
        cause = err.source();
    }
    None
}

/// Drives `pushing` while copying the bytes sent into `progress`.
async fn watch_progress<T>(
    pushing: impl Future<Output = T>,
    mut counted: tokio::sync::watch::Receiver<u64>,
    progress: &mut Progress,
) -> T {
    let mut pushing = std::pin::pin!(pushing);
    loop {
        tokio::select! {
            done = &mut pushing => return done,
            changed = counted.changed() => {
                if changed.is_err() {
                    return pushing.await;
                }
                progress.set(*counted.borrow_and_update());
            }
        }
    }
}

/// What docker's `config.json` holds for `registry` (its `auths`, or the
/// credential helper it names); anonymous when nothing is configured.
fn docker_credentials(registry: &str) -> RegistryAuth {
    use docker_credential::{CredentialRetrievalError as Missing, DockerCredential};
    // Docker keys Docker Hub's credentials by its v1 URL.
    let server = if registry == "index.docker.io" {
        "https://index.docker.io/v1/"
    } else {
        registry
    };
    match docker_credential::get_credential(server) {
        Ok(DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        Ok(DockerCredential::IdentityToken(token)) => RegistryAuth::Bearer(token),
        Err(
            Missing::ConfigNotFound | Missing::ConfigReadError | Missing::NoCredentialConfigured,
        ) => RegistryAuth::Anonymous,
        Err(err) => {
            tracing::warn!("ignoring docker's credentials for {registry}: {err}");
            RegistryAuth::Anonymous
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_transient_failures_are_retried() {
        let server = |code| OciDistributionError::ServerError {
            code,
            url: "u".into(),
            message: String::new(),
        };
        assert!(is_transient(&server(502)));
        assert!(is_transient(&server(429)));
        assert!(!is_transient(&server(404)));
        assert!(!is_transient(&server(401)));
        assert!(!is_transient(&OciDistributionError::UnauthorizedError {
            url: "u".into()
        }));
    }

    /// An error whose cause is an `io::Error`, as reqwest's are.
    #[derive(Debug)]
    struct Wrapped(std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("client error (Connect)")
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_refused_certificate_is_found_inside_an_io_error() {
        let refused = Wrapped(std::io::Error::other(rustls::Error::InvalidCertificate(
            rustls::CertificateError::UnknownIssuer,
        )));
        assert!(matches!(
            certificate_problem(&refused),
            Some(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer
            ))
        ));
        let unreachable = Wrapped(std::io::ErrorKind::ConnectionRefused.into());
        assert!(certificate_problem(&unreachable).is_none());
    }
}
