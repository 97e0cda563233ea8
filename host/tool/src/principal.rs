//! Who is calling, and what an item needs of them: the vocabulary of
//! authorization that crosses the [`ToolHost`](crate::ToolHost) port as
//! plain data.
//!
//! The HTTP transport validates a bearer token and yields a [`Principal`];
//! the host keys per-user state and rate limits by [`Principal::key`] and
//! names it in its audit line. The token itself never crosses the port.
//! What an item needs is [`Scopes`]: every scope listed must be granted.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// An authenticated caller: the issuer that vouched for it, its subject at
/// that issuer, and the scopes its token grants.
#[derive(Clone, PartialEq, Eq)]
pub struct Principal {
    /// The issuer's identifier (the token's `iss`), exactly as configured.
    pub issuer: String,
    /// The subject (the token's `sub`, or the client id of a token that
    /// names no subject).
    pub subject: String,
    /// The scopes the token grants.
    pub scopes: BTreeSet<String>,
}

impl Principal {
    /// The principal's identity, without its scopes: equal for two tokens of
    /// the same user at the same issuer, different for the same subject at
    /// two issuers. 32 hex digits (the first 128 bits of the SHA-256 of
    /// issuer and subject), so it can name a namespace or a key, and says
    /// nothing of who it is.
    pub fn key(&self) -> String {
        principal_key(&self.issuer, &self.subject)
    }

    /// Whether the token grants every scope of `needed`.
    pub fn grants(&self, needed: &Scopes) -> bool {
        needed.iter().all(|scope| self.scopes.contains(scope))
    }

    /// For logs: issuer and subject, never the scopes' or a token's text.
    pub fn describe(&self) -> String {
        format!("{} at {}", self.subject, self.issuer)
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("issuer", &self.issuer)
            .field("subject", &self.subject)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Whether `presented` equals `expected` (a token, a form token, a MAC),
/// in a time that does not depend on where they differ: the one comparison
/// of secrets the transport, the page and the host use.
pub fn same_secret(presented: &str, expected: &str) -> bool {
    let (a, b) = (presented.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// See [`Principal::key`].
fn principal_key(issuer: &str, subject: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update((issuer.len() as u64).to_be_bytes());
    hash.update(issuer.as_bytes());
    hash.update(subject.as_bytes());
    hash.finalize()[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The scopes an item needs: all of them must be granted. Empty: anyone
/// signed in (and, without authorization, anyone).
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct Scopes(Arc<[String]>);

impl Scopes {
    pub fn new(scopes: impl IntoIterator<Item = String>) -> Self {
        let set: BTreeSet<String> = scopes.into_iter().collect();
        Scopes(set.into_iter().collect())
    }

    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Both sets together, sorted, without repeats.
    pub fn union(&self, other: &Scopes) -> Scopes {
        Scopes::new(self.iter().chain(other.iter()).cloned())
    }

    /// The value of a `scope` parameter: space-separated (RFC 6749, 3.3).
    pub fn joined(&self) -> String {
        self.0.join(" ")
    }
}

/// What a request reaches, for the scopes it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A tool, by the name clients call it.
    Tool(&'a str),
    /// A prompt, by its name.
    Prompt(&'a str),
    /// A resource, by URI (a listed one or one a template matches).
    Resource(&'a str),
    /// A resource template, by its template.
    ResourceTemplate(&'a str),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(issuer: &str, subject: &str, scopes: &[&str]) -> Principal {
        Principal {
            issuer: issuer.into(),
            subject: subject.into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_principal_is_its_issuer_and_subject_and_not_its_scopes() {
        let alice = principal("https://a.example", "alice", &["x"]);
        let alice_more = principal("https://a.example", "alice", &["x", "y"]);
        let alice_elsewhere = principal("https://b.example", "alice", &["x"]);
        // The length prefix keeps ("ab", "c") and ("a", "bc") apart.
        let split = principal("https://a.example/", "lice", &[]);
        assert_eq!(alice.key(), alice_more.key());
        assert_ne!(alice.key(), alice_elsewhere.key());
        assert_ne!(alice.key(), split.key());
        assert_eq!(alice.key().len(), 32);
    }

    #[test]
    fn every_needed_scope_must_be_granted() {
        let reader = principal("i", "s", &["files:read"]);
        assert!(reader.grants(&Scopes::default()));
        assert!(reader.grants(&Scopes::new(["files:read".into()])));
        assert!(!reader.grants(&Scopes::new(["files:read".into(), "files:write".into()])));
        let both = Scopes::new(["b".into(), "a".into()]).union(&Scopes::new(["a".into()]));
        assert_eq!(both.joined(), "a b");
    }
}
