//! Signing a browser in to Corral's own pages (the page where users set
//! their own secrets): Corral as an OAuth 2.1 client of its issuer, with
//! the authorization code grant and PKCE (RFC 7636, S256), asking for an
//! access token for this very resource (RFC 8707). That token is then
//! validated exactly as an MCP client's is ([`Authorizer::principal`]), so
//! the page's user is the same principal (issuer and subject) as the
//! user's MCP client: no second notion of identity, and nothing of the
//! token is kept once its principal is known.
//!
//! A sign-in under way is kept by the browser that started it, not by the
//! server: its `state` (128 random bits), PKCE verifier and the page to
//! return to travel in an HttpOnly cookie scoped to the sign-in path
//! ([`SignIn`]), and the issuer's callback is taken only with the `state`
//! that cookie holds. So a callback link from someone else's sign-in
//! (login CSRF: signing the victim in as the attacker, to collect what the
//! victim then enters) is refused, page loads that never come back cost the
//! server nothing, and any replica finishes a sign-in another started.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::Authorizer;
use super::fetch::form_encode;
use corral_tool::{Principal, same_secret};

/// How long a browser has to come back from its issuer (the sign-in
/// cookie's lifetime).
pub const SIGN_IN_FOR: Duration = Duration::from_secs(10 * 60);
/// The longest page a sign-in returns to.
const MAX_RETURN_BYTES: usize = 1024;
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

/// A sign-in under way, as its browser keeps it (the sign-in cookie's
/// value): `STATE.VERIFIER.RETURN`, the page to return to in base64url.
pub struct SignIn {
    state: String,
    verifier: String,
    return_to: String,
}

impl SignIn {
    /// The cookie's value.
    pub fn cookie_value(&self) -> String {
        format!(
            "{}.{}.{}",
            self.state,
            self.verifier,
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&self.return_to)
        )
    }

    /// The sign-in a cookie's value holds, if it is one.
    pub fn from_cookie(value: &str) -> Option<SignIn> {
        let mut parts = value.splitn(3, '.');
        let (state, verifier, return_to) = (parts.next()?, parts.next()?, parts.next()?);
        let return_to = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(return_to)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())?;
        Some(SignIn {
            state: state.to_string(),
            verifier: verifier.to_string(),
            return_to,
        })
    }
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
    /// server): the issuer's authorization URL to send the browser to, and
    /// the sign-in for the browser to keep. `fresh` asks the issuer to sign
    /// the user in again (to change accounts).
    pub async fn start_sign_in(
        &self,
        return_to: &str,
        fresh: bool,
    ) -> Result<(String, SignIn), String> {
        let client = self
            .options
            .web_client
            .as_ref()
            .ok_or("this server signs no one in (no --oauth-web-client)")?;
        if return_to.len() > MAX_RETURN_BYTES {
            return Err("the page's address is too long".into());
        }
        let issuer = &self.issuers[0];
        let endpoints = issuer.endpoints().await?;
        let sign_in = SignIn {
            state: random_text(),
            verifier: format!("{}{}", random_text(), random_text()),
            return_to: return_to.to_string(),
        };
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(sign_in.verifier.as_bytes()));
        let mut scope = vec!["openid".to_string()];
        scope.extend(self.base_scopes.iter().cloned());
        let redirect = self.sign_in_redirect();
        let scope = scope.join(" ");
        let mut query = vec![
            ("response_type", "code"),
            ("client_id", client.id.as_str()),
            ("redirect_uri", redirect.as_str()),
            ("scope", scope.as_str()),
            ("state", sign_in.state.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", self.options.resource.as_str()),
        ];
        if fresh {
            query.push(("prompt", "login"));
        }
        let query = query
            .iter()
            .map(|(key, value)| format!("{key}={}", form_encode(value)))
            .collect::<Vec<_>>()
            .join("&");
        let separator = if endpoints.authorization.contains('?') {
            '&'
        } else {
            '?'
        };
        Ok((
            format!("{}{separator}{query}", endpoints.authorization),
            sign_in,
        ))
    }

    /// Finishes `sign_in` (the browser's) with the issuer's `state` and
    /// `code`: the principal signed in, and where to send the browser.
    pub async fn finish_sign_in(
        &self,
        sign_in: Option<SignIn>,
        state: &str,
        code: &str,
    ) -> Result<(Arc<Principal>, String), String> {
        let client = self
            .options
            .web_client
            .as_ref()
            .ok_or("this server signs no one in")?;
        let sign_in = sign_in
            .filter(|sign_in| same_secret(&sign_in.state, state))
            .ok_or(
                "this sign-in was not started by this browser (or it took over 10 minutes): open the page again",
            )?;
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
                    ("code_verifier", &sign_in.verifier),
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
        Ok((principal, sign_in.return_to))
    }

    /// The issuer the page signs users in with.
    pub fn sign_in_issuer(&self) -> &str {
        &self.issuers[0].id
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sign_in_travels_in_its_cookie() {
        let sign_in = SignIn {
            state: random_text(),
            verifier: random_text(),
            return_to: "/corral/secrets?plugin=p&name=N".into(),
        };
        let back = SignIn::from_cookie(&sign_in.cookie_value()).unwrap();
        assert_eq!(back.state, sign_in.state);
        assert_eq!(back.verifier, sign_in.verifier);
        assert_eq!(back.return_to, sign_in.return_to);
        assert!(SignIn::from_cookie("no dots").is_none());
        assert!(SignIn::from_cookie("a.b.!!").is_none());
    }
}
