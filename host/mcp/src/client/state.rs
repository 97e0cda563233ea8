//! `requestState`: what a stateless call that asked the client carries from
//! one round to the next, sealed so that only a server holding the key can
//! read or make one.
//!
//! The stateless era keeps nothing on the server between a call and its
//! retry (the retry may reach another replica), so the answers of earlier
//! rounds travel with the client. The client must not be able to change
//! them, nor to reuse them for another call: a tool that asked "delete
//! these files?" and got "yes" must not find that "yes" in a retry of
//! another tool or of other arguments, and a state cannot be kept forever.
//! So the plaintext names the tool, holds the SHA-256 of the arguments and
//! an expiry, and is sealed with XChaCha20-Poly1305 (authenticated
//! encryption: any change, any byte added or removed, fails to open; the
//! answers are also kept from the eyes of anyone the client passes the state
//! to). XChaCha's 192-bit nonces are drawn at random: no counter to share
//! between replicas.
//!
//! The text is `base64url(version || nonce || ciphertext)`, without padding
//! and decoded strictly (the canonical encoding only), the version byte
//! bound as associated data so that a later format can never be read as
//! this one.

use std::fmt;
use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The format of the sealed text (its first byte).
const VERSION: u8 = 1;
/// Bound as associated data, beside the version byte: a ciphertext made by
/// this key for another purpose never opens as a state.
const PURPOSE: &[u8] = b"corral requestState";
const NONCE_BYTES: usize = 24;
const TAG_BYTES: usize = 16;

/// The largest `requestState` taken or issued (its text, in bytes). The
/// state holds every answer of the call so far; the client sends it back
/// with every retry.
pub const MAX_STATE_BYTES: usize = 256 * 1024;

/// The most rounds of input one call may ask for (the `input_required`
/// answers it gets): each re-runs the tool from the start.
pub const MAX_ROUNDS: usize = 8;

/// The longest a call's states live, from the first one issued (its
/// `born`), in seconds: an hour. Each state is valid for the server's
/// `state_ttl` (10 minutes by default) from its issue, but never past this:
/// a client that retries without the answers it was asked for is issued a
/// new state each time, holding the earlier rounds' answers; without this
/// bound, those answers (a "yes, delete them") would stay usable for as
/// long as it keeps retrying.
pub const MAX_LIFETIME_SECS: u64 = 60 * 60;

/// The key that seals `requestState`: 32 bytes, shared by replicas that
/// serve one client (`--state-key`), random per process otherwise.
///
/// Deliberately not `PartialEq`: `==` on bytes stops at the first that
/// differs, which tells a timing observer how much of a guess was right.
/// Nothing compares keys; should something need to, it must do so in
/// constant time.
///
/// ```compile_fail
/// let key = corral_mcp::StateKey::new([7; 32]);
/// assert!(key == key.clone());
/// ```
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl StateKey {
    /// A key from 32 bytes.
    pub fn new(bytes: [u8; 32]) -> StateKey {
        StateKey(bytes)
    }

    /// This process's own key, drawn at random once: states it seals open
    /// in this process only.
    pub fn process() -> StateKey {
        static KEY: OnceLock<StateKey> = OnceLock::new();
        KEY.get_or_init(|| {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).expect("the operating system's random source");
            StateKey(bytes)
        })
        .clone()
    }

    /// A key written as 64 hexadecimal digits or as base64 (standard or
    /// URL-safe, padded or not) of 32 bytes.
    pub fn parse(text: &str) -> Result<StateKey, String> {
        let text = text.trim();
        let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            (0..32)
                .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex digits"))
                .collect()
        } else {
            [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
                .iter()
                .find_map(|engine| engine.decode(text).ok())
                .ok_or_else(|| {
                    "a state key is 32 bytes, written as 64 hexadecimal digits or in base64 (such as the output of `openssl rand -hex 32`)".to_string()
                })?
        };
        let bytes: [u8; 32] = <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| {
            format!(
                "a state key is 32 bytes; this one is {} (write it as 64 hexadecimal digits, such as the output of `openssl rand -hex 32`)",
                bytes.len()
            )
        })?;
        Ok(StateKey(bytes))
    }
}

impl std::str::FromStr for StateKey {
    type Err = String;

    fn from_str(text: &str) -> Result<StateKey, String> {
        StateKey::parse(text)
    }
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A secret: never in logs.
        f.write_str("StateKey(..)")
    }
}

/// What a `requestState` says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallState {
    /// The request it belongs to: [`Subject::key`] of the tool called, the
    /// prompt got or the resource read.
    pub subject: String,
    /// [`arguments_hash`] of its arguments.
    pub arguments: String,
    /// Unix seconds when the call's first state was issued: sealed then
    /// and carried unchanged by every state issued after it.
    pub born: u64,
    /// Unix seconds after which the state is refused: at most
    /// [`MAX_LIFETIME_SECS`] after `born`.
    pub expires: u64,
    /// The rounds answered, in the order the tool asked them.
    pub rounds: Vec<Round>,
    /// The round the client was last asked, whose answers the retry brings.
    pub pending: Asked,
}

/// What a stateless request that may ask the client is about: a state
/// issued to one is refused by every other (a "yes" given to one prompt
/// must not answer another, nor a tool's question).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject<'a> {
    /// `tools/call` of the tool of this name.
    Tool(&'a str),
    /// `prompts/get` of the prompt of this name.
    Prompt(&'a str),
    /// `resources/read` of this URI.
    Resource(&'a str),
}

impl Subject<'_> {
    /// The text a state names its request by: the method, a space, then
    /// the name or URI (neither method has a space, so no two subjects
    /// share a key).
    pub fn key(self) -> String {
        match self {
            Subject::Tool(name) => format!("tools/call {name}"),
            Subject::Prompt(name) => format!("prompts/get {name}"),
            Subject::Resource(uri) => format!("resources/read {uri}"),
        }
    }
}

/// One ask of the tool's, as it was asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    /// The requests' keys, in order.
    pub keys: Vec<String>,
    /// [`fingerprint`] of the requests.
    pub fingerprint: String,
}

/// One ask of the tool's and the client's answers to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    #[serde(flatten)]
    pub asked: Asked,
    /// The answers, in the order of the requests.
    pub answers: Vec<Map<String, Value>>,
}

/// Why a `requestState` was refused; each says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// Not opened by the key: altered, truncated, forged, or sealed by a
    /// server with another key.
    NotOurs,
    TooLarge,
    Expired,
    OtherSubject,
    OtherArguments,
    TooManyRounds,
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::NotOurs => f.write_str(
                "requestState was altered or was not issued by this server (nor by one sharing its state key); call the tool again without it",
            ),
            StateError::TooLarge => write!(
                f,
                "requestState is larger than {} KiB, more than this server ever issues",
                MAX_STATE_BYTES / 1024
            ),
            StateError::Expired => f.write_str(
                "requestState has expired: the answers took too long; call the tool again without it",
            ),
            StateError::OtherSubject => f.write_str(
                "requestState belongs to another request (a call of another tool, or another prompt or resource); send it with the request that received it",
            ),
            StateError::OtherArguments => f.write_str(
                "requestState belongs to a call with other arguments; send it with the arguments of the call that received it",
            ),
            StateError::TooManyRounds => write!(
                f,
                "requestState holds more than {MAX_ROUNDS} rounds of input, more than this server ever issues"
            ),
        }
    }
}

/// Seals `state`, or `None` when its text would pass [`MAX_STATE_BYTES`].
pub fn seal(key: &StateKey, state: &CallState) -> Option<String> {
    let plaintext = serde_json::to_vec(state).expect("a state always serializes");
    // base64 makes 4 characters of every 3 bytes.
    let sealed_len = 1 + NONCE_BYTES + plaintext.len() + TAG_BYTES;
    if sealed_len.div_ceil(3) * 4 > MAX_STATE_BYTES {
        return None;
    }
    let mut nonce = [0u8; NONCE_BYTES];
    getrandom::fill(&mut nonce).expect("the operating system's random source");
    let cipher = XChaCha20Poly1305::new((&key.0).into());
    let aad = associated_data();
    let ciphertext = cipher
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: &plaintext,
                aad: &aad,
            },
        )
        .expect("sealing a bounded plaintext does not fail");
    let mut sealed = Vec::with_capacity(sealed_len);
    sealed.push(VERSION);
    sealed.extend_from_slice(&nonce);
    sealed.extend_from_slice(&ciphertext);
    let text = URL_SAFE_NO_PAD.encode(sealed);
    (text.len() <= MAX_STATE_BYTES).then_some(text)
}

/// Opens `text` for the request whose [`Subject::key`] is `subject` and
/// whose arguments hash to `arguments`, at unix time `now`.
pub fn open(
    key: &StateKey,
    text: &str,
    subject: &str,
    arguments: &str,
    now: u64,
) -> Result<CallState, StateError> {
    if text.len() > MAX_STATE_BYTES {
        return Err(StateError::TooLarge);
    }
    // Strict: no padding, no other alphabet, no stray bits.
    let sealed = URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| StateError::NotOurs)?;
    let Some((&VERSION, rest)) = sealed.split_first() else {
        return Err(StateError::NotOurs);
    };
    if rest.len() < NONCE_BYTES + TAG_BYTES {
        return Err(StateError::NotOurs);
    }
    let (nonce, ciphertext) = rest.split_at(NONCE_BYTES);
    let cipher = XChaCha20Poly1305::new((&key.0).into());
    let aad = associated_data();
    let plaintext = cipher
        .decrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: ciphertext,
                aad: &aad,
            },
        )
        .map_err(|_| StateError::NotOurs)?;
    // Sealed by this key, so made by a server: a plaintext that does not
    // read is still not one this server understands.
    let state: CallState = serde_json::from_slice(&plaintext).map_err(|_| StateError::NotOurs)?;
    if state.subject != subject {
        return Err(StateError::OtherSubject);
    }
    if state.arguments != arguments {
        return Err(StateError::OtherArguments);
    }
    // Every state this server seals expires by `born` + MAX_LIFETIME_SECS;
    // checked again all the same.
    if now >= state.expires || now >= state.born.saturating_add(MAX_LIFETIME_SECS) {
        return Err(StateError::Expired);
    }
    if state.rounds.len() >= MAX_ROUNDS {
        return Err(StateError::TooManyRounds);
    }
    Ok(state)
}

fn associated_data() -> Vec<u8> {
    let mut aad = Vec::with_capacity(PURPOSE.len() + 1);
    aad.extend_from_slice(PURPOSE);
    aad.push(VERSION);
    aad
}

/// SHA-256 of the arguments' canonical JSON text (object keys sorted at
/// every level, whatever order they came in), base64url. The text is
/// hashed as it is written: nothing is copied.
pub fn arguments_hash(arguments: &Map<String, Value>) -> String {
    #[cfg(test)]
    HASHED.with(|hashed| hashed.set(hashed.get() + 1));
    let mut hashing = Hashing(Sha256::new());
    canonical_object(arguments, &mut hashing);
    digest(hashing)
}

// How many times this thread computed `arguments_hash` (tests check that
// calls that need none compute none).
#[cfg(test)]
thread_local! {
    pub static HASHED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// SHA-256 of what an ask asks (each request's key, kind and params, in
/// order), base64url: the same ask asked again has the same fingerprint.
/// (The canonical text of `[[key, capability, params], ...]`.)
pub fn fingerprint(requests: &[corral_tool::InputRequest]) -> String {
    let mut hashing = Hashing(Sha256::new());
    let out = &mut hashing;
    put(out, b"[");
    for (i, request) in requests.iter().enumerate() {
        if i > 0 {
            put(out, b",");
        }
        put(out, b"[");
        scalar(out, &request.key);
        put(out, b",");
        scalar(out, request.kind.capability());
        put(out, b",");
        canonical_object(&request.params, out);
        put(out, b"]");
    }
    put(out, b"]");
    digest(hashing)
}

/// Canonical text goes straight into the hash.
struct Hashing(Sha256);

impl std::io::Write for Hashing {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn put(out: &mut Hashing, bytes: &[u8]) {
    out.0.update(bytes);
}

/// `value` as JSON text (a string escaped as serde_json escapes it).
fn scalar<T: Serialize + ?Sized>(out: &mut Hashing, value: &T) {
    serde_json::to_writer(out, value).expect("writing to a hash does not fail");
}

fn digest(hashing: Hashing) -> String {
    URL_SAFE_NO_PAD.encode(hashing.0.finalize())
}

/// `value` as JSON text with every object's keys sorted, so that its hash
/// does not depend on how serde_json keeps maps (`preserve_order`).
fn canonical(value: &Value, out: &mut Hashing) {
    match value {
        Value::Array(items) => {
            put(out, b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    put(out, b",");
                }
                canonical(item, out);
            }
            put(out, b"]");
        }
        Value::Object(map) => canonical_object(map, out),
        other => scalar(out, other),
    }
}

fn canonical_object(map: &Map<String, Value>, out: &mut Hashing) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    put(out, b"{");
    for (i, (key, item)) in entries.into_iter().enumerate() {
        if i > 0 {
            put(out, b",");
        }
        scalar(out, key);
        put(out, b":");
        canonical(item, out);
    }
    put(out, b"}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> CallState {
        CallState {
            subject: "t".into(),
            arguments: arguments_hash(&Map::new()),
            born: 500,
            expires: 1_000,
            rounds: vec![Round {
                asked: Asked {
                    keys: vec!["a".into()],
                    fingerprint: "f".into(),
                },
                answers: vec![json!({ "action": "accept" }).as_object().unwrap().clone()],
            }],
            pending: Asked {
                keys: vec!["b".into()],
                fingerprint: "g".into(),
            },
        }
    }

    #[test]
    fn a_sealed_state_opens_with_its_key_only() {
        let key = StateKey::new([7; 32]);
        let hash = arguments_hash(&Map::new());
        let text = seal(&key, &state()).unwrap();
        assert_eq!(open(&key, &text, "t", &hash, 999), Ok(state()));
        let other = StateKey::new([8; 32]);
        assert_eq!(
            open(&other, &text, "t", &hash, 999),
            Err(StateError::NotOurs)
        );
        // Two seals of one state differ (random nonces).
        assert_ne!(seal(&key, &state()).unwrap(), text);
    }

    #[test]
    fn any_change_to_the_text_is_refused() {
        let key = StateKey::new([7; 32]);
        let hash = arguments_hash(&Map::new());
        let text = seal(&key, &state()).unwrap();
        let mut flipped = text.clone().into_bytes();
        flipped[30] = if flipped[30] == b'A' { b'B' } else { b'A' };
        for altered in [
            format!("{text}-TAMPERED"),
            format!("{text}A"),
            format!("{text}="),
            text[..text.len() - 1].to_string(),
            text[..text.len() / 2].to_string(),
            String::from_utf8(flipped).unwrap(),
            String::new(),
            "not base64!".into(),
        ] {
            assert_eq!(
                open(&key, &altered, "t", &hash, 999),
                Err(StateError::NotOurs),
                "{altered}"
            );
        }
    }

    #[test]
    fn a_state_is_bound_to_its_tool_arguments_and_time() {
        let key = StateKey::new([7; 32]);
        let hash = arguments_hash(&Map::new());
        let text = seal(&key, &state()).unwrap();
        assert_eq!(
            open(&key, &text, "u", &hash, 999),
            Err(StateError::OtherSubject)
        );
        let other = arguments_hash(json!({ "x": 1 }).as_object().unwrap());
        assert_eq!(
            open(&key, &text, "t", &other, 999),
            Err(StateError::OtherArguments)
        );
        assert_eq!(
            open(&key, &text, "t", &hash, 1_000),
            Err(StateError::Expired)
        );
        let huge = "A".repeat(MAX_STATE_BYTES + 1);
        assert_eq!(
            open(&key, &huge, "t", &hash, 999),
            Err(StateError::TooLarge)
        );
        let mut long = state();
        long.rounds = vec![long.rounds[0].clone(); MAX_ROUNDS];
        let text = seal(&key, &long).unwrap();
        assert_eq!(
            open(&key, &text, "t", &hash, 999),
            Err(StateError::TooManyRounds)
        );
    }

    #[test]
    fn a_state_too_large_is_not_sealed() {
        let key = StateKey::new([7; 32]);
        let mut big = state();
        big.rounds[0].answers[0].insert("text".into(), "x".repeat(MAX_STATE_BYTES).into());
        assert_eq!(seal(&key, &big), None);
    }

    #[test]
    fn hashes_are_of_the_canonical_text() {
        // As computed before hashing streamed: SHA-256 of the text whole.
        let whole = |text: &str| URL_SAFE_NO_PAD.encode(Sha256::digest(text.as_bytes()));
        let arguments = json!({ "z": [1, { "b": "\"q\"", "a": 2.5 }], "a": null, "é": true });
        assert_eq!(
            arguments_hash(arguments.as_object().unwrap()),
            whole(r#"{"a":null,"z":[1,{"a":2.5,"b":"\"q\""}],"é":true}"#)
        );
        let request = corral_tool::InputRequest {
            key: "k".into(),
            kind: corral_tool::InputKind::Sample,
            params: json!({ "maxTokens": 5, "messages": [] })
                .as_object()
                .unwrap()
                .clone(),
        };
        assert_eq!(
            fingerprint(&[request.clone(), request]),
            whole(
                r#"[["k","sampling",{"maxTokens":5,"messages":[]}],["k","sampling",{"maxTokens":5,"messages":[]}]]"#
            )
        );
        assert_eq!(fingerprint(&[]), whole("[]"));
    }

    #[test]
    fn the_arguments_hash_ignores_key_order() {
        let a = json!({ "b": 1, "a": { "y": [1, 2], "x": null } });
        let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(
            arguments_hash(a.as_object().unwrap()),
            arguments_hash(b.as_object().unwrap())
        );
        let c = json!({ "b": 2, "a": { "y": [1, 2], "x": null } });
        assert_ne!(
            arguments_hash(a.as_object().unwrap()),
            arguments_hash(c.as_object().unwrap())
        );
    }

    #[test]
    fn keys_are_hex_or_base64_of_32_bytes() {
        let hex = "0f".repeat(32);
        assert_eq!(StateKey::parse(&hex).unwrap().0, [15; 32]);
        let b64 = STANDARD.encode([15u8; 32]);
        assert_eq!(StateKey::parse(&b64).unwrap().0, [15; 32]);
        assert!(StateKey::parse("abc").unwrap_err().contains("32 bytes"));
        assert!(
            StateKey::parse(&STANDARD.encode([1u8; 16]))
                .unwrap_err()
                .contains("16")
        );
        assert_eq!(format!("{:?}", StateKey::new([1; 32])), "StateKey(..)");
    }
}
