//! One trusted issuer: its metadata, found by discovery (RFC 8414, then
//! OpenID Connect Discovery, in the order the MCP spec gives clients), and
//! its signing keys (JWKS), cached.
//!
//! Keys are fetched when first needed and again when a token names a key
//! the cache lacks (the issuer rotated) or the cache is older than
//! [`KEYS_MAX_AGE`], but never more than once per `refetch_interval`,
//! however many tokens name unknown keys: a flood of made-up `kid`s costs
//! the issuer one request per interval. One fetch runs at a time; a request
//! that finds one running waits for it rather than starting another. A
//! failed fetch keeps the keys there were.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::fetch::Fetcher;
use super::jwt::{Alg, PublicKey, candidates, parse_jwks};

/// The largest metadata document read.
const MAX_METADATA_BYTES: usize = 256 * 1024;
/// The largest JWKS read.
const MAX_JWKS_BYTES: usize = 256 * 1024;
/// Keys older than this are fetched again when next needed.
const KEYS_MAX_AGE: Duration = Duration::from_secs(60 * 60);

/// What this server uses of an issuer's metadata.
#[derive(Debug, Clone, Deserialize)]
struct Metadata {
    issuer: String,
    jwks_uri: Option<String>,
    introspection_endpoint: Option<String>,
    authorization_endpoint: Option<String>,
    token_endpoint: Option<String>,
}

/// Where a browser signs in at an issuer, and where its code is exchanged.
pub(super) struct Endpoints {
    pub(super) authorization: String,
    pub(super) token: String,
}

/// A trusted issuer and what is cached of it.
pub(super) struct Issuer {
    /// Its identifier, exactly as configured (and as tokens' `iss` must be).
    pub(super) id: String,
    fetcher: Fetcher,
    refetch_interval: Duration,
    cached: Mutex<Cached>,
    /// Held while fetching: one fetch at a time.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Cached {
    metadata: Option<Metadata>,
    keys: Arc<[PublicKey]>,
    /// When the keys were last fetched successfully.
    fetched: Option<Instant>,
    /// When a fetch was last tried, successful or not.
    tried: Option<Instant>,
}

impl Issuer {
    pub(super) fn new(id: String, fetcher: Fetcher, refetch_interval: Duration) -> Issuer {
        Issuer {
            id,
            fetcher,
            refetch_interval,
            cached: Mutex::default(),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The keys that may verify a token of `kid` and `alg`, fetching the
    /// JWKS first when the cache has none such and may be refreshed.
    pub(super) async fn keys_for(
        &self,
        kid: Option<&str>,
        alg: Alg,
    ) -> Result<Arc<[PublicKey]>, String> {
        let (keys, stale) = self.cached_keys();
        if !stale && candidates(&keys, kid, alg).next().is_some() {
            return Ok(keys);
        }
        let _fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let (keys, stale) = self.cached_keys();
        if !stale && candidates(&keys, kid, alg).next().is_some() {
            return Ok(keys);
        }
        if !self.may_fetch() {
            return if keys.is_empty() {
                Err(format!(
                    "the keys of issuer {} could not be fetched (tried less than {} s ago)",
                    self.id,
                    self.refetch_interval.as_secs()
                ))
            } else {
                Ok(keys)
            };
        }
        match self.fetch_keys().await {
            Ok(keys) => Ok(keys),
            Err(problem) => {
                tracing::warn!("issuer {}: {problem}", self.id);
                if keys.is_empty() {
                    Err(format!(
                        "the keys of issuer {} could not be fetched",
                        self.id
                    ))
                } else {
                    Ok(keys)
                }
            }
        }
    }

    /// The issuer's introspection endpoint, discovering it if need be.
    pub(super) async fn introspection_endpoint(&self) -> Result<String, String> {
        self.metadata()
            .await?
            .introspection_endpoint
            .ok_or_else(|| format!("issuer {} has no introspection_endpoint", self.id))
    }

    /// The issuer's authorization and token endpoints (both checked as
    /// every endpoint is: https, or http on loopback).
    pub(super) async fn endpoints(&self) -> Result<Endpoints, String> {
        let metadata = self.metadata().await?;
        let (Some(authorization), Some(token)) =
            (metadata.authorization_endpoint, metadata.token_endpoint)
        else {
            return Err(format!(
                "issuer {} names no authorization_endpoint and token_endpoint",
                self.id
            ));
        };
        super::fetch::check_url(&authorization)?;
        super::fetch::check_url(&token)?;
        Ok(Endpoints {
            authorization,
            token,
        })
    }

    /// The issuer's metadata, discovering it if need be.
    async fn metadata(&self) -> Result<Metadata, String> {
        let known = self.cached.lock().unwrap().metadata.clone();
        let metadata = match known {
            Some(metadata) => metadata,
            None => {
                let _fetching = self.fetching.lock().await;
                let known = self.cached.lock().unwrap().metadata.clone();
                match known {
                    Some(metadata) => metadata,
                    None if self.may_fetch() => {
                        self.cached.lock().unwrap().tried = Some(Instant::now());
                        self.discover().await?
                    }
                    None => return Err(format!("issuer {} is not reachable", self.id)),
                }
            }
        };
        Ok(metadata)
    }

    /// Fetches metadata (if not known yet) and keys now, if allowed: for a
    /// server starting, so that its first request need not wait, and
    /// mistakes in the configuration show at once.
    pub(super) async fn warm(&self) {
        let _fetching = self.fetching.lock().await;
        if self.may_fetch()
            && let Err(problem) = self.fetch_keys().await
        {
            tracing::warn!("issuer {}: {problem}", self.id);
        }
    }

    fn cached_keys(&self) -> (Arc<[PublicKey]>, bool) {
        let cached = self.cached.lock().unwrap();
        let stale = cached
            .fetched
            .is_none_or(|fetched| fetched.elapsed() > KEYS_MAX_AGE);
        (cached.keys.clone(), stale)
    }

    fn may_fetch(&self) -> bool {
        let cached = self.cached.lock().unwrap();
        cached
            .tried
            .is_none_or(|tried| tried.elapsed() >= self.refetch_interval)
    }

    /// Fetches the JWKS (discovering the metadata first if need be); the
    /// caller holds `fetching`.
    async fn fetch_keys(&self) -> Result<Arc<[PublicKey]>, String> {
        self.cached.lock().unwrap().tried = Some(Instant::now());
        let known = self.cached.lock().unwrap().metadata.clone();
        let metadata = match known {
            Some(metadata) => metadata,
            None => self.discover().await?,
        };
        let jwks_uri = metadata
            .jwks_uri
            .ok_or("its metadata has no jwks_uri: it publishes no signing keys")?;
        let document = self.fetcher.get_json(&jwks_uri, MAX_JWKS_BYTES).await?;
        let keys: Arc<[PublicKey]> = parse_jwks(&document)
            .map_err(|problem| format!("{jwks_uri}: {problem}"))?
            .into();
        tracing::debug!("issuer {}: {} signing key(s)", self.id, keys.len());
        let mut cached = self.cached.lock().unwrap();
        cached.keys = keys.clone();
        cached.fetched = Some(Instant::now());
        Ok(keys)
    }

    /// The issuer's metadata from the first well-known URL that has it.
    async fn discover(&self) -> Result<Metadata, String> {
        let mut problems = Vec::new();
        for url in metadata_urls(&self.id) {
            match self.fetcher.get_json(&url, MAX_METADATA_BYTES).await {
                Ok(document) => match serde_json::from_slice::<Metadata>(&document) {
                    Ok(metadata) if metadata.issuer == self.id => {
                        self.cached.lock().unwrap().metadata = Some(metadata.clone());
                        return Ok(metadata);
                    }
                    Ok(metadata) => problems.push(format!(
                        "{url} names issuer {:.200}, not {}: not used",
                        metadata.issuer, self.id
                    )),
                    Err(err) => problems.push(format!("{url}: not issuer metadata: {err}")),
                },
                Err(problem) => problems.push(problem),
            }
        }
        Err(format!("no metadata found: {}", problems.join("; ")))
    }
}

/// Where an issuer's metadata may be, in the order the MCP spec asks
/// clients to try: RFC 8414 and OpenID Connect with the well-known path
/// inserted, then OpenID Connect appended (for an issuer with a path).
fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let after_scheme = trimmed.find("://").map_or(0, |i| i + 3);
    let (origin, path) = match trimmed[after_scheme..].find('/') {
        Some(slash) => trimmed.split_at(after_scheme + slash),
        None => (trimmed, ""),
    };
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{trimmed}/.well-known/openid-configuration"));
    }
    urls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_the_spec_says() {
        assert_eq!(
            metadata_urls("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
    }
}
