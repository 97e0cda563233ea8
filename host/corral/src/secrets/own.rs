//! Each user's own secrets (`[secrets] NAME = { per = "principal" }`),
//! kept encrypted in the state store, and the elicitations that ask a user
//! for one.
//!
//! A value is sealed with AES-256-GCM under the operator's key
//! (`--secrets-key-file`, or `CORRAL_SECRETS_KEY`): a fresh random nonce
//! each time, and the principal, plugin and name as associated data, so a
//! sealed value copied to another user's entry, plugin or name does not
//! open. The store (SQLite, or Redis shared by replicas) never sees a value
//! in clear; whoever reads it without the key learns which users set which
//! names, and nothing more. Values live in the host's namespace
//! `corral.secrets@KEY` (see [`corral_sandbox::naming::own_secrets_namespace`]),
//! one bucket per plugin, which no plugin can open.
//!
//! An elicitation is opened by a call whose caller lacks a required value
//! ([`corral_sandbox::secrets::own`]); the page where they enter it
//! ([`OwnSecretPage`], served by the HTTP transport) checks that whoever
//! signs in there is the principal it was opened for, saves the value and
//! wakes the waiting call. An elicitation's id is a random nonce and a MAC,
//! under a key derived from the operator's, of the nonce, principal,
//! plugin, name and hour: unique per elicitation, yet nothing is kept for
//! it, so any replica checks it. A value saved through another replica
//! reaches a waiting call at its next look at the store.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use base64::Engine;
use corral_sandbox::naming::own_secrets_namespace;
use corral_sandbox::state::{Backend, Namespace, StateError};
use corral_sandbox::{Opened, OwnFuture, OwnSecrets};
use corral_tool::{OwnSecretSaved, Principal, SecretPage};
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use crate::catalog::Catalog;

/// The longest value a user may set, in bytes.
pub const MAX_VALUE_BYTES: usize = 16 * 1024;
/// The most bytes one principal's secrets take in the store, all plugins.
const QUOTA: u64 = 2 << 20;
/// An elicitation's id changes every this many seconds; the page takes
/// the current one and the one before.
const ID_PERIOD_SECS: u64 = 60 * 60;
/// How often a waiting call looks at the store (for a value saved through
/// another replica).
const POLL: Duration = Duration::from_secs(2);
/// The format of a sealed value: this byte, the nonce, then the ciphertext
/// and its tag.
const VERSION: u8 = 1;

/// Principals' own secrets, sealed in a state store.
pub struct OwnStore {
    backend: Arc<dyn Backend>,
    key: LessSafeKey,
    random: SystemRandom,
    /// Makes elicitation ids (a key of its own, derived from the
    /// operator's).
    ids: ring::hmac::Key,
    /// The page's URL (`https://HOST/corral/secrets`) and the issuer it
    /// signs users in with, or why there is no page.
    page: Result<(String, String), String>,
    /// Bumped at every save: wakes the calls waiting for a value.
    saved: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for OwnStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnStore")
            .field("backend", &self.backend.describe())
            .field("page", &self.page)
            .finish()
    }
}

impl OwnStore {
    /// A store in `backend` sealed with `key`; its page at `page`, signing
    /// users in with an issuer (or the reason there is no page, for the
    /// message a caller then gets).
    pub fn new(
        backend: Arc<dyn Backend>,
        key: [u8; 32],
        page: Result<(String, String), String>,
    ) -> OwnStore {
        let derive = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key);
        let ids = ring::hmac::Key::new(
            ring::hmac::HMAC_SHA256,
            ring::hmac::sign(&derive, b"corral elicitation ids v1").as_ref(),
        );
        let key = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &key).expect("a 32-byte key"));
        OwnStore {
            backend,
            key,
            ids,
            random: SystemRandom::new(),
            page,
            saved: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Seals `principal`'s `value` of `plugin`'s `name` and stores it.
    pub async fn save(
        &self,
        principal: &Principal,
        plugin: &str,
        name: &str,
        value: &str,
    ) -> Result<(), String> {
        if value.len() > MAX_VALUE_BYTES {
            return Err(format!(
                "the value is {} bytes, more than the {MAX_VALUE_BYTES} a secret may have",
                value.len()
            ));
        }
        let key = principal.key();
        let sealed = self.seal(&key, plugin, name, value.as_bytes())?;
        let ns = namespace(&key, plugin);
        let entry = vec![(name.to_string(), sealed)];
        self.blocking(move |backend| backend.set_many(&ns, &entry, QUOTA))
            .await?;
        self.saved.send_modify(|count| *count += 1);
        Ok(())
    }

    /// Removes `principal`'s value of `plugin`'s `name`.
    pub async fn remove(
        &self,
        principal: &Principal,
        plugin: &str,
        name: &str,
    ) -> Result<(), String> {
        let ns = namespace(&principal.key(), plugin);
        let keys = vec![name.to_string()];
        self.blocking(move |backend| backend.delete_many(&ns, &keys))
            .await
    }

    /// The MAC part of an elicitation id: of `nonce`, `principal`'s
    /// `plugin` `name` and `period` (hours since the epoch), 16 hex digits.
    fn elicitation_mac(
        &self,
        nonce: &str,
        principal: &Principal,
        plugin: &str,
        name: &str,
        period: u64,
    ) -> String {
        let input = format!("{nonce}\0{}\0{plugin}\0{name}\0{period}", principal.key());
        hex(&ring::hmac::sign(&self.ids, input.as_bytes()).as_ref()[..8])
    }

    /// Whether `id` is of an elicitation of `principal`'s `plugin` `name`
    /// made this period or the one before.
    pub fn made_for(&self, id: &str, principal: &Principal, plugin: &str, name: &str) -> bool {
        let Some((nonce, mac)) = id.split_at_checked(16) else {
            return false;
        };
        let now = current_period();
        [now, now.saturating_sub(1)].iter().any(|period| {
            let expected = self.elicitation_mac(nonce, principal, plugin, name, *period);
            corral_tool::same_secret(mac, &expected)
        })
    }

    fn seal(&self, key: &str, plugin: &str, name: &str, value: &[u8]) -> Result<Vec<u8>, String> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .map_err(|_| "no randomness for a nonce".to_string())?;
        let mut sealed = value.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(associated(key, plugin, name)),
                &mut sealed,
            )
            .map_err(|_| "the value could not be sealed".to_string())?;
        let mut stored = Vec::with_capacity(1 + NONCE_LEN + sealed.len());
        stored.push(VERSION);
        stored.extend_from_slice(&nonce);
        stored.extend_from_slice(&sealed);
        Ok(stored)
    }

    fn open_sealed(
        &self,
        key: &str,
        plugin: &str,
        name: &str,
        stored: &[u8],
    ) -> Result<String, String> {
        let unreadable = || {
            "it does not open with this server's key (--secrets-key-file or CORRAL_SECRETS_KEY): \
             was the key changed? Enter it again"
                .to_string()
        };
        let Some((&VERSION, rest)) = stored.split_first() else {
            return Err(unreadable());
        };
        if rest.len() < NONCE_LEN {
            return Err(unreadable());
        }
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| unreadable())?;
        let mut sealed = sealed.to_vec();
        let value = self
            .key
            .open_in_place(nonce, Aad::from(associated(key, plugin, name)), &mut sealed)
            .map_err(|_| unreadable())?;
        String::from_utf8(value.to_vec()).map_err(|_| unreadable())
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Backend) -> Result<T, StateError> + Send + 'static,
    ) -> Result<T, String> {
        let backend = self.backend.clone();
        tokio::task::spawn_blocking(move || work(&*backend))
            .await
            .map_err(|err| format!("the store's worker failed: {err}"))?
            .map_err(|err| err.to_string())
    }
}

impl OwnSecrets for OwnStore {
    fn get<'a>(
        &'a self,
        principal: &'a Principal,
        plugin: &'a str,
        name: &'a str,
    ) -> OwnFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let key = principal.key();
            let ns = namespace(&key, plugin);
            let keys = vec![name.to_string()];
            let budget = (1 + NONCE_LEN + MAX_VALUE_BYTES + 16) as u64;
            let mut values = self
                .blocking(move |backend| backend.get_many(&ns, &keys, budget))
                .await?;
            match values.pop().flatten() {
                None => Ok(None),
                Some(stored) => match self.open_sealed(&key, plugin, name, &stored) {
                    Ok(value) => Ok(Some(value)),
                    // Sealed under another key: as good as missing, so the
                    // user is asked again rather than stuck.
                    Err(problem) => {
                        tracing::warn!(
                            "{}'s own {name} of plugin {plugin}: {problem}",
                            principal.describe()
                        );
                        Ok(None)
                    }
                },
            }
        })
    }

    fn open(&self, principal: &Principal, plugin: &str, name: &str) -> Result<Opened, String> {
        let (page, issuer) = self.page.as_ref().map_err(Clone::clone)?;
        if principal.issuer != *issuer {
            return Err(format!(
                "the page where you would set it signs users in with {issuer}, not with {} (yours)",
                principal.issuer
            ));
        }
        let mut nonce = [0u8; 8];
        self.random
            .fill(&mut nonce)
            .map_err(|_| "no randomness for an elicitation id".to_string())?;
        let nonce = hex(&nonce);
        let mac = self.elicitation_mac(&nonce, principal, plugin, name, current_period());
        let id = format!("{nonce}{mac}");
        let page = format!("{page}?plugin={plugin}&name={name}");
        Ok(Opened {
            url: format!("{page}&elicitation={id}"),
            id,
            page,
        })
    }

    fn wait<'a>(
        &'a self,
        principal: &'a Principal,
        plugin: &'a str,
        name: &'a str,
        timeout: Duration,
    ) -> OwnFuture<'a, bool> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + timeout;
            let mut saved = self.saved.subscribe();
            loop {
                if let Ok(Some(_)) = self.get(principal, plugin, name).await {
                    return true;
                }
                let poll = tokio::time::sleep(POLL);
                tokio::select! {
                    _ = saved.changed() => {}
                    _ = poll => {}
                    _ = tokio::time::sleep_until(deadline) => return false,
                }
            }
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Hours since the epoch: the period of elicitation ids.
fn current_period() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() / ID_PERIOD_SECS)
}

/// The sealed values' associated data: whose, for which plugin and name.
fn associated(key: &str, plugin: &str, name: &str) -> Vec<u8> {
    format!("corral own secret v1\0{key}\0{plugin}\0{name}").into_bytes()
}

fn namespace(principal_key: &str, plugin: &str) -> Namespace {
    Namespace {
        plugin: own_secrets_namespace(principal_key).into(),
        bucket: plugin.to_string(),
    }
}

/// The page's side: what a plugin of the served folder grants, and saving.
#[derive(Debug)]
pub struct OwnSecretPage {
    pub store: Arc<OwnStore>,
    pub catalog: Arc<Catalog>,
}

impl SecretPage for OwnSecretPage {
    fn describe(&self, plugin: &str, name: &str) -> Option<String> {
        let snapshot = self.catalog.snapshot();
        snapshot
            .plugins()
            .iter()
            .find(|loaded| loaded.name() == plugin)?
            .manifest()
            .secrets
            .iter()
            .find(|grant| grant.per_principal && grant.name == name)
            .map(|grant| grant.description.clone())
    }

    fn made_for(&self, id: &str, principal: &Principal, plugin: &str, name: &str) -> bool {
        self.store.made_for(id, principal, plugin, name)
    }

    fn save<'a>(
        &'a self,
        principal: &'a Principal,
        plugin: &'a str,
        name: &'a str,
        value: String,
    ) -> OwnSecretSaved<'a> {
        Box::pin(async move { self.store.save(principal, plugin, name, &value).await })
    }
}

/// The operator's key: 32 bytes, written as 64 hex digits or in base64
/// (standard or URL-safe, padded or not), surrounding whitespace ignored.
pub fn parse_key(text: &str) -> Result<[u8; 32]> {
    let text = text.trim();
    let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        (0..32)
            .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    } else {
        let engines = [
            base64::engine::general_purpose::STANDARD,
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        match engines.iter().find_map(|engine| engine.decode(text).ok()) {
            Some(bytes) => bytes,
            None => bail!(
                "the key is neither 64 hex digits nor base64 (make one with `openssl rand -base64 32`)"
            ),
        }
    };
    <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| {
        anyhow::anyhow!(
            "the key is {} bytes, not 32 (make one with `openssl rand -base64 32`)",
            bytes.len()
        )
    })
}

/// The key in `path` (a file the operator keeps private).
pub fn read_key(path: &Path) -> Result<[u8; 32]> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--secrets-key-file {}", path.display()))?;
    parse_key(&text).with_context(|| format!("--secrets-key-file {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_sandbox::state::sqlite::Sqlite;

    fn principal(subject: &str) -> Principal {
        Principal {
            issuer: "https://issuer.example".into(),
            subject: subject.into(),
            scopes: Default::default(),
        }
    }

    fn store(dir: &Path, key: u8) -> OwnStore {
        let backend = Arc::new(Sqlite::new(dir.join("state.sqlite")));
        let page = (
            "https://h/corral/secrets".into(),
            "https://issuer.example".into(),
        );
        OwnStore::new(backend, [key; 32], Ok(page))
    }

    #[tokio::test]
    async fn values_are_sealed_per_user_and_open_only_with_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let own = store(dir.path(), 7);
        let (alice, bob) = (principal("alice"), principal("bob"));
        own.save(&alice, "gh", "TOKEN", "alice-value-123")
            .await
            .unwrap();
        assert_eq!(
            own.get(&alice, "gh", "TOKEN").await.unwrap().as_deref(),
            Some("alice-value-123")
        );
        assert_eq!(own.get(&bob, "gh", "TOKEN").await.unwrap(), None);
        assert_eq!(own.get(&alice, "other", "TOKEN").await.unwrap(), None);
        // The file holds no value in clear.
        let file = std::fs::read(dir.path().join("state.sqlite")).unwrap();
        assert!(!file.windows(15).any(|w| w == b"alice-value-123"));
        // Another key opens nothing: read as missing, so the user is asked
        // again rather than stuck.
        let other = store(dir.path(), 8);
        assert_eq!(other.get(&alice, "gh", "TOKEN").await.unwrap(), None);
        // A sealed value moved to another user's entry does not open.
        let backend = Sqlite::new(dir.path().join("state.sqlite"));
        let stolen = backend
            .get_many(&namespace(&alice.key(), "gh"), &["TOKEN".into()], 1 << 20)
            .unwrap()
            .pop()
            .flatten()
            .unwrap();
        backend
            .set_many(
                &namespace(&bob.key(), "gh"),
                &[("TOKEN".into(), stolen)],
                QUOTA,
            )
            .unwrap();
        assert_eq!(own.get(&bob, "gh", "TOKEN").await.unwrap(), None);
        own.remove(&alice, "gh", "TOKEN").await.unwrap();
        assert_eq!(own.get(&alice, "gh", "TOKEN").await.unwrap(), None);
        // An operator removes a user's values with `corral state clear`,
        // naming the namespace `corral state list` shows.
        own.save(&alice, "gh", "TOKEN", "alice-value-456")
            .await
            .unwrap();
        let state = corral_sandbox::state::StateStore(Arc::new(Sqlite::new(
            dir.path().join("state.sqlite"),
        )));
        let mut listed = Vec::new();
        crate::state::list(&state, None, &mut listed).unwrap();
        let namespace = format!("corral.secrets@{}", alice.key());
        assert!(String::from_utf8_lossy(&listed).contains(&namespace));
        assert_eq!(crate::state::clear(&state, &namespace).unwrap(), 1);
        assert_eq!(own.get(&alice, "gh", "TOKEN").await.unwrap(), None);
    }

    #[tokio::test]
    async fn an_elicitation_is_bound_to_its_principal_and_a_save_wakes_its_call() {
        let dir = tempfile::tempdir().unwrap();
        let own = Arc::new(store(dir.path(), 1));
        let alice = principal("alice");
        let opened = own.open(&alice, "gh", "TOKEN").unwrap();
        assert!(
            opened
                .url
                .starts_with("https://h/corral/secrets?plugin=gh&name=TOKEN&elicitation="),
            "{}",
            opened.url
        );
        // The page by hand: the same, without the elicitation.
        assert_eq!(opened.page, "https://h/corral/secrets?plugin=gh&name=TOKEN");
        assert_eq!(
            opened.url,
            format!("{}&elicitation={}", opened.page, opened.id)
        );
        // Each elicitation its own id, bound to its principal and secret.
        let again = own.open(&alice, "gh", "TOKEN").unwrap();
        assert_ne!(again.id, opened.id);
        assert!(own.made_for(&again.id, &alice, "gh", "TOKEN"));
        assert!(own.made_for(&opened.id, &alice, "gh", "TOKEN"));
        assert!(!own.made_for(&opened.id, &principal("bob"), "gh", "TOKEN"));
        assert!(!own.made_for(&opened.id, &alice, "gh", "OTHER"));
        assert!(!own.made_for("nope", &alice, "gh", "TOKEN"));
        let forged = format!("{}{}", &opened.id[..16], "0".repeat(16));
        assert!(!own.made_for(&forged, &alice, "gh", "TOKEN"));
        // A principal of another issuer has no page to go to.
        let elsewhere = Principal {
            issuer: "https://other.example".into(),
            ..alice.clone()
        };
        let err = own.open(&elsewhere, "gh", "TOKEN").unwrap_err();
        assert!(err.contains("signs users in with"), "{err}");
        // Another server key, other ids.
        let other = store(dir.path(), 2);
        assert!(!other.made_for(&opened.id, &alice, "gh", "TOKEN"));
        let waiter = {
            let own = own.clone();
            let alice = alice.clone();
            tokio::spawn(async move {
                own.wait(&alice, "gh", "TOKEN", Duration::from_secs(30))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        own.save(&alice, "gh", "TOKEN", "a-long-enough-value")
            .await
            .unwrap();
        assert!(waiter.await.unwrap());
        assert!(
            !own.wait(&principal("bob"), "gh", "TOKEN", Duration::from_millis(100))
                .await
        );
        let none = OwnStore::new(
            Arc::new(Sqlite::new(dir.path().join("s2.sqlite"))),
            [0; 32],
            Err("no page".into()),
        );
        assert_eq!(none.open(&alice, "gh", "TOKEN").unwrap_err(), "no page");
    }

    #[test]
    fn keys_are_hex_or_base64_of_32_bytes() {
        assert_eq!(parse_key(&"ab".repeat(32)).unwrap(), [0xab; 32]);
        let b64 = base64::engine::general_purpose::STANDARD.encode([9u8; 32]);
        assert_eq!(parse_key(&format!("  {b64}\n")).unwrap(), [9; 32]);
        let short = base64::engine::general_purpose::STANDARD.encode([9u8; 16]);
        assert!(
            parse_key(&short)
                .unwrap_err()
                .to_string()
                .contains("16 bytes, not 32")
        );
        assert!(parse_key("not a key!").is_err());
    }
}
