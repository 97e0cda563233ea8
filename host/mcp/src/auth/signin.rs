//! Signing a browser in to Corral's own pages (the page where users set
//! their own secrets): Corral as an OAuth 2.1 client of its issuer, with
//! the authorization code grant and PKCE (RFC 7636, S256), asking for an
//! access token for this very resource (RFC 8707). That token is then
//! validated exactly as an MCP client's is ([`Authorizer::principal`]), so
//! the page's user is the same principal (issuer and subject) as the
//! user's MCP client: no second notion of identity, and nothing of the
//! token is kept once its principal is known.
//!
//! Each sign-in started is remembered by its `state` (128 random bits) for
//! [`STARTED_FOR`], at most [`MAX_STARTED`] at once: a flood of page loads
//! that never come back costs bounded memory.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::Authorizer;
use super::fetch::form_encode;
use corral_tool::Principal;

/// How long a browser has to come back from its issuer.
const STARTED_FOR: Duration = Duration::from_secs(10 * 60);
/// The most sign-ins under way at once.
const MAX_STARTED: usize = 10_000;
/// The largest token response read.
const MAX_TOKEN_RESPONSE_BYTES: usize = 64 * 1024;

/// Corral's registration at the issuer, for its pages: a confidential
/// client whose redirect URI is [`Authorizer::sign_in_redirect`].
#[derive(Clone)]
pub struct WebClient {
    pub id: String,
    pub secret: String,
}

impl std::fmt::Debug for WebClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebClient").field("id", &self.id).finish()
    }
}

/// A sign-in under way.
pub(super) struct Started {
    verifier: String,
    return_to: String,
    at: Instant,
}

/// What is read of the issuer's token response.
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
}

impl Authorizer {
    /// Whether this server signs browsers in (it has a web client).
    pub fn signs_in(&self) -> bool {
        self.options.web_client.is_some()
    }

    /// The redirect URI registered for the web client: `/corral/signin` at
    /// the resource's origin.
    pub fn sign_in_redirect(&self) -> String {
        format!("{}{}", self.origin(), SIGN_IN_PATH)
    }

    /// The resource's origin (`https://host[:port]`).
    pub fn origin(&self) -> &str {
        super::split_origin(&self.options.resource).0
    }

    /// Starts a sign-in that comes back to `return_to` (a path of this
    /// server): the issuer's authorization URL to send the browser to.
    pub async fn start_sign_in(&self, return_to: &str) -> Result<String, String> {
        let client = self
            .options
            .web_client
            .as_ref()
            .ok_or("this server signs no one in (no --oauth-web-client)")?;
        let issuer = &self.issuers[0];
        let endpoints = issuer.endpoints().await?;
        let state = random_text();
        let verifier = format!("{}{}", random_text(), random_text());
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        {
            let mut started = self.started.lock().unwrap();
            started.retain(|_, started| started.at.elapsed() < STARTED_FOR);
            if started.len() >= MAX_STARTED {
                return Err("too many sign-ins are under way: try again in a few minutes".into());
            }
            started.insert(
                state.clone(),
                Started {
                    verifier,
                    return_to: return_to.to_string(),
                    at: Instant::now(),
                },
            );
        }
        let mut scope = vec!["openid".to_string()];
        scope.extend(self.base_scopes.iter().cloned());
        let query = [
            ("response_type", "code"),
            ("client_id", client.id.as_str()),
            ("redirect_uri", &self.sign_in_redirect()),
            ("scope", &scope.join(" ")),
            ("state", &state),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("resource", &self.options.resource),
        ]
        .iter()
        .map(|(key, value)| format!("{key}={}", form_encode(value)))
        .collect::<Vec<_>>()
        .join("&");
        let separator = if endpoints.authorization.contains('?') {
            '&'
        } else {
            '?'
        };
        Ok(format!("{}{separator}{query}", endpoints.authorization))
    }

    /// Finishes the sign-in `state` with the issuer's `code`: the principal
    /// signed in, and where to send the browser.
    pub async fn finish_sign_in(
        &self,
        state: &str,
        code: &str,
    ) -> Result<(Arc<Principal>, String), String> {
        let client = self
            .options
            .web_client
            .as_ref()
            .ok_or("this server signs no one in")?;
        let started = self
            .started
            .lock()
            .unwrap()
            .remove(state)
            .filter(|started| started.at.elapsed() < STARTED_FOR)
            .ok_or("this sign-in is unknown or expired: start again from the page")?;
        let endpoints = self.issuers[0].endpoints().await?;
        let redirect = self.sign_in_redirect();
        let answer = self
            .fetcher
            .post_form(
                &endpoints.token,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", code),
                    ("redirect_uri", &redirect),
                    ("code_verifier", &started.verifier),
                    ("resource", &self.options.resource),
                ],
                (&client.id, &client.secret),
                MAX_TOKEN_RESPONSE_BYTES,
            )
            .await
            .map_err(|problem| format!("the issuer refused the sign-in: {problem}"))?;
        let token: TokenResponse = serde_json::from_slice(&answer)
            .map_err(|_| "the issuer's token response has no access_token".to_string())?;
        let principal = self
            .principal(&token.access_token)
            .await
            .map_err(|refusal| {
                format!(
                    "the token the sign-in gave is refused: {}",
                    refusal.description
                )
            })?;
        Ok((principal, started.return_to))
    }
}

/// The path the issuer sends a signed-in browser back to.
pub const SIGN_IN_PATH: &str = "/corral/signin";

/// 128 random bits, as URL-safe text.
pub fn random_text() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system's randomness");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
