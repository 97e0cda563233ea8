//! Authorization of HTTP requests: Corral as an OAuth 2.1 resource server
//! (the MCP authorization spec, 2025-06-18 onwards).
//!
//! A request's bearer token becomes a [`Principal`] (issuer, subject,
//! scopes) or a [`Refusal`] (401, with the `WWW-Authenticate` challenge
//! that sends a client to the Protected Resource Metadata, RFC 9728).
//!
//! - A JWT access token (RFC 9068) must be signed by a key of its issuer's
//!   JWKS (see `issuer`), name a trusted issuer exactly in `iss`, name this
//!   resource in `aud` (RFC 8707: a token for another server is refused, so
//!   no token passes through to, or comes from, somewhere else), and be
//!   within `exp` and `nbf` give or take [`LEEWAY`].
//! - An opaque token is introspected (RFC 7662) when the server is given
//!   introspection credentials; its answer must be active, for this
//!   resource, and of a trusted issuer.
//!
//! Every piece is bounded: a token over [`MAX_TOKEN_BYTES`] is refused
//! unread; the issuers' documents are capped in size and fetch time (see
//! `fetch`); keys are refetched at most once per interval (see `issuer`);
//! validated tokens are cached by their hash, at most [`MAX_CACHED_TOKENS`]
//! of them, each no longer than its `exp` (an introspected one no longer
//! than [`INTROSPECTION_CACHE`], so that revocation shows).
//!
//! The token goes no further than this module: nothing of it is logged,
//! and only the principal travels on.

mod fetch;
mod issuer;
mod jwt;
mod signin;

pub(crate) use fetch::form_encode;
pub use signin::{SIGN_IN_FOR, SIGN_IN_PATH, SignIn, WebClient, random_text};

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use corral_tool::{Principal, Scopes};
use fetch::Fetcher;
use issuer::Issuer;
use jwt::Jwt;

/// The longest token read. Real access tokens are a few kilobytes at most.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// Clock skew tolerated on `exp`, `nbf` and `iat`.
pub const LEEWAY: Duration = Duration::from_secs(30);
/// The most validated tokens remembered.
const MAX_CACHED_TOKENS: usize = 10_000;
/// How long an introspected token is trusted before it is asked about again.
const INTROSPECTION_CACHE: Duration = Duration::from_secs(60);
/// The largest introspection answer read.
const MAX_INTROSPECTION_BYTES: usize = 64 * 1024;

/// How the server authorizes HTTP requests.
#[derive(Debug, Clone)]
pub struct AuthOptions {
    /// This server's canonical URI (RFC 8707 / RFC 9728 `resource`), which
    /// tokens' `aud` must name.
    pub resource: String,
    /// The issuers trusted, exactly as their tokens' `iss` will say.
    pub issuers: Vec<String>,
    /// Audiences accepted besides `resource`, for an issuer that names its
    /// API by another identifier (Microsoft Entra ID's v2 tokens carry the
    /// API's client id).
    pub audiences: Vec<String>,
    /// Scopes every request needs, whatever it reaches.
    pub scopes: Vec<String>,
    /// Client credentials for token introspection (RFC 7662) of opaque
    /// tokens; without them only JWTs are accepted.
    pub introspection: Option<(String, String)>,
    /// The least time between two fetches of one issuer's keys.
    pub key_refetch_interval: Duration,
    /// How long one fetch from an issuer may take, whole.
    pub fetch_timeout: Duration,
    /// Corral's own registration at the (first) issuer, to sign browsers
    /// in to its pages (see `signin`); without it, no page signs anyone in.
    pub web_client: Option<WebClient>,
}

impl AuthOptions {
    pub fn new(resource: String, issuers: Vec<String>) -> AuthOptions {
        AuthOptions {
            resource,
            issuers,
            audiences: Vec::new(),
            scopes: Vec::new(),
            introspection: None,
            key_refetch_interval: Duration::from_secs(30),
            fetch_timeout: Duration::from_secs(5),
            web_client: None,
        }
    }
}

/// Why a request is not served: the HTTP status and the challenge's
/// parameters (RFC 6750, section 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 400 (`invalid_request`), 401 (`invalid_token` or no token), or 403
    /// (`insufficient_scope`).
    pub status: u16,
    /// The RFC 6750 error code; `None` for a request with no token at all.
    pub error: Option<&'static str>,
    /// Why, for the client's developer (never the token's text).
    pub description: String,
    /// The scopes the request needs.
    pub scope: Scopes,
}

/// A validated token's principal, and until when it stands.
type Validated = (Arc<Principal>, Instant);

/// Validates tokens for one resource.
pub struct Authorizer {
    options: AuthOptions,
    /// Where the metadata is served (see [`Authorizer::metadata_paths`]).
    metadata_paths: Vec<String>,
    base_scopes: Scopes,
    issuers: Vec<Issuer>,
    fetcher: Fetcher,
    /// Validated tokens by the SHA-256 of their text.
    cache: Mutex<HashMap<[u8; 32], Validated>>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("resource", &self.options.resource)
            .field("issuers", &self.options.issuers)
            .finish()
    }
}

impl Authorizer {
    /// Checks `options` (the resource is an absolute URI without fragment;
    /// issuers are https, or http on loopback).
    pub fn new(options: AuthOptions) -> anyhow::Result<Authorizer> {
        check_resource(&options.resource)?;
        if options.issuers.is_empty() {
            anyhow::bail!("authorization needs at least one trusted issuer (--oauth-issuer)");
        }
        for issuer in &options.issuers {
            fetch::check_url(issuer)
                .map_err(|problem| anyhow::anyhow!("--oauth-issuer {problem}"))?;
        }
        for scope in &options.scopes {
            if !is_scope_token(scope) {
                anyhow::bail!(
                    "{scope:?} is not a scope: a scope is 1 to 128 printable ASCII characters without spaces, quotes or backslashes"
                );
            }
        }
        let fetcher = Fetcher::new(options.fetch_timeout)?;
        let issuers = options
            .issuers
            .iter()
            .map(|id| Issuer::new(id.clone(), fetcher.clone(), options.key_refetch_interval))
            .collect();
        let (_, path) = split_origin(&options.resource);
        let mut metadata_paths = vec!["/.well-known/oauth-protected-resource".to_string()];
        if !path.is_empty() {
            metadata_paths.push(format!("/.well-known/oauth-protected-resource{path}"));
        }
        Ok(Authorizer {
            metadata_paths,
            base_scopes: Scopes::new(options.scopes.iter().cloned()),
            options,
            issuers,
            fetcher,
            cache: Mutex::default(),
        })
    }

    /// This server's canonical URI.
    pub fn resource(&self) -> &str {
        &self.options.resource
    }

    /// The issuers trusted.
    pub fn issuers(&self) -> &[String] {
        &self.options.issuers
    }

    /// The scopes every request needs.
    pub fn base_scopes(&self) -> &Scopes {
        &self.base_scopes
    }

    /// Fetches every issuer's metadata and keys in the background.
    pub fn warm(self: &Arc<Self>) {
        for index in 0..self.issuers.len() {
            let authorizer = self.clone();
            tokio::spawn(async move { authorizer.issuers[index].warm().await });
        }
    }

    /// The URL of the Protected Resource Metadata: the well-known path
    /// inserted before the resource's path (RFC 9728, section 3.1).
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_origin(&self.options.resource);
        format!("{origin}/.well-known/oauth-protected-resource{path}")
    }

    /// The paths this server answers the metadata at: the root form and the
    /// one with the resource's path.
    pub fn metadata_paths(&self) -> &[String] {
        &self.metadata_paths
    }

    /// The Protected Resource Metadata document (RFC 9728), listing the
    /// base scopes and `known` (those the policy asks for somewhere) as
    /// supported.
    pub fn metadata(&self, known: &Scopes) -> Value {
        let supported = self.base_scopes.union(known).joined();
        let supported: Vec<&str> = supported.split(' ').filter(|s| !s.is_empty()).collect();
        json!({
            "resource": self.options.resource,
            "authorization_servers": self.options.issuers,
            "scopes_supported": supported,
            "bearer_methods_supported": ["header"],
            "resource_name": "Corral",
        })
    }

    /// The principal `authorization` (an `Authorization` header's value, if
    /// the request has one) stands for, with at least the base scopes.
    pub async fn authenticate(
        &self,
        authorization: Option<&str>,
    ) -> Result<Arc<Principal>, Refusal> {
        let Some(authorization) = authorization else {
            return Err(self.unauthorized(None, "a bearer token is required"));
        };
        let Some(token) = bearer_token(authorization) else {
            return Err(self.refusal(
                400,
                "invalid_request",
                "the Authorization header must be `Bearer <token>`",
            ));
        };
        if token.len() > MAX_TOKEN_BYTES {
            return Err(
                self.invalid_token(format!("the token is longer than {MAX_TOKEN_BYTES} bytes"))
            );
        }
        let principal = self.principal(token).await?;
        if !principal.grants(&self.base_scopes) {
            return Err(self.insufficient_scope(&Scopes::default()));
        }
        Ok(principal)
    }

    /// 403 `insufficient_scope` for a request that needs `needed` (beyond
    /// the base scopes, which the challenge names too).
    pub fn insufficient_scope(&self, needed: &Scopes) -> Refusal {
        let scope = self.base_scopes.union(needed);
        Refusal {
            status: 403,
            error: Some("insufficient_scope"),
            description: format!("this needs the scope(s) {}", scope.joined()),
            scope,
        }
    }

    /// 400 for a token in the query string, which the MCP spec forbids.
    pub fn token_in_query(&self) -> Refusal {
        self.refusal(
            400,
            "invalid_request",
            "access tokens are not accepted in the query string; send `Authorization: Bearer <token>`",
        )
    }

    /// The `WWW-Authenticate` value for `refusal`.
    pub fn challenge(&self, refusal: &Refusal) -> String {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        if let Some(error) = refusal.error {
            challenge.push_str(&format!(
                ", error=\"{error}\", error_description=\"{}\"",
                quoted_safe(&refusal.description)
            ));
        }
        if !refusal.scope.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", refusal.scope.joined()));
        }
        challenge
    }

    fn refusal(&self, status: u16, error: &'static str, description: &str) -> Refusal {
        Refusal {
            status,
            error: Some(error),
            description: description.into(),
            scope: self.base_scopes.clone(),
        }
    }

    fn unauthorized(&self, error: Option<&'static str>, description: &str) -> Refusal {
        Refusal {
            status: 401,
            error,
            description: description.into(),
            scope: self.base_scopes.clone(),
        }
    }

    fn invalid_token(&self, description: impl Into<String>) -> Refusal {
        let description = description.into();
        tracing::info!("refused a bearer token: {description}");
        self.unauthorized(Some("invalid_token"), &description)
    }

    /// The principal of a token of a valid form: from the cache, or
    /// validated now.
    async fn principal(&self, token: &str) -> Result<Arc<Principal>, Refusal> {
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((principal, until)) = self.cache.lock().unwrap().get(&hash)
            && Instant::now() < *until
        {
            return Ok(principal.clone());
        }
        let (principal, valid_for) = if jwt::looks_like_jwt(token) {
            self.validate_jwt(token).await?
        } else if self.options.introspection.is_some() {
            self.introspect(token).await?
        } else {
            return Err(self.invalid_token(
                "the token is not a JWT, and this server introspects no opaque tokens",
            ));
        };
        let principal = Arc::new(principal);
        self.remember(hash, principal.clone(), valid_for);
        Ok(principal)
    }

    fn remember(&self, hash: [u8; 32], principal: Arc<Principal>, valid_for: Duration) {
        let now = Instant::now();
        let mut cache = self.cache.lock().unwrap();
        if cache.len() >= MAX_CACHED_TOKENS {
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= MAX_CACHED_TOKENS {
                // Still full of live tokens: start again rather than grow.
                cache.clear();
            }
        }
        cache.insert(hash, (principal, now + valid_for));
    }

    async fn validate_jwt(&self, token: &str) -> Result<(Principal, Duration), Refusal> {
        let jwt = Jwt::decode(token)
            .map_err(|problem| self.invalid_token(format!("the token is refused: {problem}")))?;
        let Some(issuer) = jwt
            .claim_str("iss")
            .and_then(|iss| self.issuers.iter().find(|issuer| issuer.id == iss))
        else {
            return Err(self.invalid_token(format!(
                "the token's issuer ({:.100}) is not one this server trusts",
                jwt.claim_str("iss").unwrap_or("none named")
            )));
        };
        let keys = issuer
            .keys_for(jwt.kid.as_deref(), jwt.alg)
            .await
            .map_err(|problem| self.invalid_token(problem))?;
        if !jwt.verified_by(&keys) {
            return Err(self.invalid_token(format!(
                "the token's signature is not verified by any key of issuer {}",
                issuer.id
            )));
        }
        self.principal_of(&issuer.id, &Claims(&jwt.claims))
    }

    /// The principal of a token from `issuer` with `claims` (a verified
    /// JWT's, or an introspection's answer), and how long it stands: its
    /// times, its audience and its subject checked.
    fn principal_of(
        &self,
        issuer: &str,
        claims: &Claims,
    ) -> Result<(Principal, Duration), Refusal> {
        let valid_for = claims
            .check_times(now_secs())
            .map_err(|problem| self.invalid_token(problem))?;
        if !claims
            .audiences()
            .iter()
            .any(|aud| self.is_this_resource(aud))
        {
            return Err(self.invalid_token(format!(
                "the token is not for this server: its audience does not include {}",
                self.options.resource
            )));
        }
        let subject = claims
            .subject()
            .ok_or_else(|| self.invalid_token("the token names no subject (sub or client_id)"))?;
        let principal = Principal {
            issuer: issuer.to_owned(),
            subject,
            scopes: claims.scopes(),
        };
        Ok((principal, valid_for))
    }

    /// Asks the issuers, in order, about an opaque token (RFC 7662): the
    /// first that knows it as active decides.
    async fn introspect(&self, token: &str) -> Result<(Principal, Duration), Refusal> {
        let (client_id, secret) = self.options.introspection.as_ref().expect("checked");
        let mut problems = Vec::new();
        for issuer in &self.issuers {
            let endpoint = match issuer.introspection_endpoint().await {
                Ok(endpoint) => endpoint,
                Err(problem) => {
                    problems.push(problem);
                    continue;
                }
            };
            let answer = self
                .fetcher
                .post_form(
                    &endpoint,
                    &[("token", token), ("token_type_hint", "access_token")],
                    (client_id, secret),
                    MAX_INTROSPECTION_BYTES,
                )
                .await;
            let answer: serde_json::Map<String, Value> = match answer
                .and_then(|body| serde_json::from_slice(&body).map_err(|err| err.to_string()))
            {
                Ok(answer) => answer,
                Err(problem) => {
                    tracing::warn!("introspection at {endpoint}: {problem}");
                    problems.push(format!("issuer {} could not be asked", issuer.id));
                    continue;
                }
            };
            if answer.get("active") != Some(&Value::Bool(true)) {
                continue;
            }
            if answer
                .get("iss")
                .is_some_and(|iss| iss.as_str() != Some(&issuer.id))
            {
                return Err(self.invalid_token("the introspected token is of another issuer"));
            }
            let (principal, valid_for) = self.principal_of(&issuer.id, &Claims(&answer))?;
            return Ok((principal, valid_for.min(INTROSPECTION_CACHE)));
        }
        Err(self.invalid_token(if problems.is_empty() {
            "the token is not active at any trusted issuer".to_string()
        } else {
            format!(
                "the token could not be introspected: {}",
                problems.join("; ")
            )
        }))
    }

    /// Whether `audience` names this server: the resource exactly, or but
    /// for a trailing slash or the case of scheme and host (RFC 8707
    /// canonical URIs); or one of the other audiences configured, exactly.
    fn is_this_resource(&self, audience: &str) -> bool {
        canonical(audience) == canonical(&self.options.resource)
            || self.options.audiences.iter().any(|other| other == audience)
    }
}

/// The claims of a token (or an introspection answer) that matter here.
struct Claims<'a>(&'a serde_json::Map<String, Value>);

impl Claims<'_> {
    /// How long the token stays valid, or why it is not valid now.
    fn check_times(&self, now: u64) -> Result<Duration, String> {
        let time = |name: &str| match self.0.get(name) {
            None => Ok(None),
            Some(value) => value
                .as_f64()
                .filter(|t| t.is_finite() && *t >= 0.0)
                .map(|t| Some(t as u64))
                .ok_or(format!("the token's {name} is not a time")),
        };
        let leeway = LEEWAY.as_secs();
        let Some(exp) = time("exp")? else {
            return Err("the token has no expiry (exp)".into());
        };
        if now >= exp.saturating_add(leeway) {
            return Err("the token has expired".into());
        }
        if let Some(nbf) = time("nbf")?
            && now.saturating_add(leeway) < nbf
        {
            return Err("the token is not valid yet (nbf)".into());
        }
        if let Some(iat) = time("iat")?
            && now.saturating_add(leeway) < iat
        {
            return Err("the token was issued in the future (iat)".into());
        }
        Ok(Duration::from_secs(exp.saturating_sub(now).max(1)))
    }

    fn audiences(&self) -> Vec<&str> {
        match self.0.get("aud") {
            Some(Value::String(aud)) => vec![aud],
            Some(Value::Array(auds)) => auds.iter().take(64).filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }

    fn subject(&self) -> Option<String> {
        ["sub", "client_id"]
            .iter()
            .filter_map(|name| self.0.get(*name).and_then(Value::as_str))
            .find(|subject| !subject.is_empty() && subject.len() <= 1024)
            .map(String::from)
    }

    /// `scope` (space-separated, RFC 9068 and 7662), else `scp` (a string
    /// or an array: Entra ID and Okta).
    fn scopes(&self) -> BTreeSet<String> {
        let listed: Vec<&str> = match (self.0.get("scope"), self.0.get("scp")) {
            (Some(Value::String(scope)), _) | (None, Some(Value::String(scope))) => {
                scope.split(' ').collect()
            }
            (None, Some(Value::Array(scopes))) => scopes.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        listed
            .into_iter()
            .filter(|scope| is_scope_token(scope))
            .take(256)
            .map(String::from)
            .collect()
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// The credentials of an `Authorization: Bearer <token>` value (the scheme
/// is case-insensitive, RFC 9110 11.1).
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && !token.contains(' '))
        .then_some(token)
}

/// Whether `scope` is an RFC 6749 scope-token of at most 128 bytes.
pub fn is_scope_token(scope: &str) -> bool {
    (1..=128).contains(&scope.len())
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// Checks a resource URI: absolute `https://` (or `http://` on loopback),
/// with a host, without a fragment.
fn check_resource(resource: &str) -> anyhow::Result<()> {
    fetch::check_url(resource).map_err(|problem| anyhow::anyhow!("--resource {problem}"))?;
    if resource.contains('#') {
        anyhow::bail!("--resource {resource} has a fragment; the canonical URI has none");
    }
    let (origin, _) = split_origin(resource);
    if origin.ends_with("://") {
        anyhow::bail!("--resource {resource} names no host");
    }
    Ok(())
}

/// `scheme://authority` and the rest (path and query), without a
/// trailing slash.
fn split_origin(uri: &str) -> (&str, &str) {
    let uri = uri.trim_end_matches('/');
    let after_scheme = uri.find("://").map_or(0, |i| i + 3);
    match uri[after_scheme..].find('/') {
        Some(slash) => uri.split_at(after_scheme + slash),
        None => (uri, ""),
    }
}

/// A URI with its scheme and host lower case and no trailing slash.
fn canonical(uri: &str) -> String {
    let (origin, rest) = split_origin(uri);
    format!("{}{rest}", origin.to_ascii_lowercase())
}

/// `text` safe inside a quoted-string: no quotes, backslashes or controls.
fn quoted_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '\''
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(value: Value) -> serde_json::Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn times_are_checked_with_a_small_leeway() {
        let now = 1_000_000;
        let check = |value: Value| Claims(&claims(value)).check_times(now);
        assert!(check(json!({"exp": now + 60})).is_ok());
        assert!(check(json!({"exp": now - 10})).is_ok(), "within the leeway");
        assert!(
            check(json!({"exp": now - 120}))
                .unwrap_err()
                .contains("expired")
        );
        assert!(check(json!({})).unwrap_err().contains("no expiry"));
        assert!(
            check(json!({"exp": now + 600, "nbf": now + 300}))
                .unwrap_err()
                .contains("not valid yet")
        );
        assert!(check(json!({"exp": now + 600, "iat": now + 300})).is_err());
        assert!(check(json!({"exp": "tomorrow"})).is_err());
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let scopes = |value: Value| Claims(&claims(value)).scopes();
        assert_eq!(scopes(json!({"scope": "a b"})).len(), 2);
        assert_eq!(scopes(json!({"scp": ["a", "b", 3]})).len(), 2);
        assert_eq!(scopes(json!({"scp": "files:read"})).len(), 1);
        assert!(scopes(json!({"scope": "bad\"scope"})).is_empty());
    }

    #[test]
    fn the_audience_is_this_resource_in_canonical_form() {
        let authorizer = Authorizer::new(AuthOptions::new(
            "https://MCP.example.com/mcp".into(),
            vec!["https://login.example.com".into()],
        ))
        .unwrap();
        assert!(authorizer.is_this_resource("https://mcp.example.com/mcp/"));
        assert!(!authorizer.is_this_resource("https://mcp.example.com/other"));
        assert!(!authorizer.is_this_resource("https://mcp.example.com"));
        let mut options = AuthOptions::new(
            "https://mcp.example.com/mcp".into(),
            vec!["https://login.example.com".into()],
        );
        options.audiences = vec!["0f1e2d3c-api-client-id".into()];
        let entra = Authorizer::new(options).unwrap();
        assert!(entra.is_this_resource("0f1e2d3c-api-client-id"));
        assert!(!entra.is_this_resource("0F1E2D3C-API-CLIENT-ID"));
        assert_eq!(
            authorizer.metadata_url(),
            "https://MCP.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            authorizer.metadata_paths(),
            [
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource/mcp"
            ]
        );
    }

    #[test]
    fn configuration_mistakes_are_refused() {
        let new = |resource: &str, issuer: &str| {
            Authorizer::new(AuthOptions::new(resource.into(), vec![issuer.into()]))
        };
        assert!(new("https://mcp.example.com/mcp", "https://login.example.com").is_ok());
        assert!(new("http://127.0.0.1:8080/mcp", "http://127.0.0.1:9000").is_ok());
        assert!(new("https://mcp.example.com/mcp#x", "https://l.example.com").is_err());
        assert!(new("mcp.example.com", "https://l.example.com").is_err());
        assert!(new("https://mcp.example.com", "http://login.example.com").is_err());
    }

    #[test]
    fn bearer_credentials_are_read_strictly() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer a b"), None);
    }
}
