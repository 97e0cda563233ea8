//! Each user's own secrets (`[secrets] NAME = { per = "principal" }`): on a
//! server with authorization, a call reads the value its caller set, never
//! the operator's, and a caller who has set none is asked for it.
//!
//! The sandbox knows only the port, [`OwnSecrets`]: the values (encrypted
//! at rest) and the page where a signed-in user enters one live in the
//! `corral` crate and the HTTP transport. What lives here is the asking: a
//! call whose caller lacks a required secret asks the client with a
//! URL-mode elicitation (MCP 2025-11-25) naming the page, before the plugin
//! runs. The client answers at once whether the user agreed to open it
//! (in the stateless era, 2026-07-28, the call ends `input_required` and
//! is retried with that answer); the value itself never passes through the
//! client: the call then waits, within its plugin's `input-wait`, until
//! the page has stored it, tells the client the elicitation is complete,
//! and runs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use corral_tool::{AskError, CallEvent, Client, InputKind, InputRequest, Principal};
use serde_json::{Map, Value, json};

use crate::manifest::SecretGrant;
use crate::waiting::WaitingCalls;

/// A future of the port.
pub type OwnFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An elicitation opened for a caller's missing secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The elicitation's id (random; the page checks who opens it).
    pub id: String,
    /// The page where the caller enters the value, naming the elicitation
    /// (the page refuses whoever it was not made for).
    pub url: String,
    /// The same page without the elicitation: for a user to open by hand,
    /// and for a stateless client (see [`request`]).
    pub page: String,
}

/// Where each principal's own secrets are kept, and the page that takes
/// them.
pub trait OwnSecrets: Send + Sync + std::fmt::Debug + 'static {
    /// The value `principal` set for `plugin`'s secret `name`.
    fn get<'a>(
        &'a self,
        principal: &'a Principal,
        plugin: &'a str,
        name: &'a str,
    ) -> OwnFuture<'a, Result<Option<String>, String>>;

    /// Opens an elicitation of `plugin`'s `name` for `principal`: `Err`
    /// says why there is no page to send them to.
    fn open(&self, principal: &Principal, plugin: &str, name: &str) -> Result<Opened, String>;

    /// Waits at most `timeout` for `principal`'s value of `plugin`'s
    /// `name`; whether it came.
    fn wait<'a>(
        &'a self,
        principal: &'a Principal,
        plugin: &'a str,
        name: &'a str,
        timeout: Duration,
    ) -> OwnFuture<'a, bool>;
}

/// Why a call cannot have its caller's secrets.
#[derive(Debug)]
pub enum Lacking {
    /// The run must end here: the client will be asked (stateless era).
    Suspended,
    /// The call fails with this message.
    Failed(String),
}

/// The values of `grants`' per-principal secrets that `principal` set,
/// asking (through `client`) for each required one they lack; `events`
/// hears of each elicitation completed.
pub async fn resolve(
    own: &dyn OwnSecrets,
    principal: &Principal,
    plugin: &str,
    grants: &[&SecretGrant],
    client: Option<&Arc<dyn Client>>,
    (input_wait, waiting): (Duration, &WaitingCalls),
    events: Option<&corral_tool::EventSink>,
) -> Result<Vec<(String, String)>, Lacking> {
    // A run answered from a record (the stateless era's retry) asks again
    // what it asked before, even the values set since: its later asks
    // must meet their own answers.
    let replayed = client
        .and_then(|client| client.replays_next())
        .unwrap_or_default();
    let asked_before = |grant: &SecretGrant| replayed.contains(&request_key(grant));
    let mut values = Vec::new();
    let mut missing = Vec::new();
    for grant in grants {
        match own.get(principal, plugin, &grant.name).await {
            Ok(Some(_)) if asked_before(grant) => missing.push(*grant),
            Ok(Some(value)) => values.push((grant.name.clone(), value)),
            Ok(None) if grant.required => missing.push(*grant),
            Ok(None) => {}
            Err(problem) => {
                return Err(Lacking::Failed(format!(
                    "your secret {} for plugin `{plugin}` cannot be read: {problem}",
                    grant.name
                )));
            }
        }
    }
    if missing.is_empty() {
        return Ok(values);
    }
    let names: Vec<&str> = missing.iter().map(|grant| grant.name.as_str()).collect();
    let client = client.filter(|client| client.capabilities().elicitation_url);
    let mut opened = Vec::with_capacity(missing.len());
    for grant in &missing {
        match own.open(principal, plugin, &grant.name) {
            Ok(elicitation) => opened.push(elicitation),
            Err(why) => {
                return Err(Lacking::Failed(format!(
                    "plugin `{plugin}` needs your own {} ({}), which you have not set, and {why}",
                    grant.name, grant.description
                )));
            }
        }
    }
    let Some(client) = client else {
        // The client cannot open a URL for its user: the message names the
        // page (no elicitation behind it: whoever signs in there sets their
        // own), for the user to open.
        let pages: Vec<String> = missing
            .iter()
            .zip(&opened)
            .map(|(grant, elicitation)| format!("{} at {}", grant.name, elicitation.page))
            .collect();
        return Err(Lacking::Failed(format!(
            "plugin `{plugin}` needs your own {}, which you have not set; this client cannot open a page for you (it did not declare URL-mode elicitation), so set {} yourself, signed in as you: {}, then call again",
            names.join(", "),
            if names.len() == 1 { "it" } else { "each" },
            pages.join(", ")
        )));
    };
    let requests: Vec<InputRequest> = missing
        .iter()
        .zip(&opened)
        .map(|(grant, elicitation)| request(plugin, grant, elicitation, !client.answers_at_once()))
        .collect();
    // A call waiting on a person holds a slot of its plugin, as a plugin's
    // own ask does: at most half of them wait at once.
    let too_many = || {
        Lacking::Failed(format!(
            "plugin `{plugin}` needs your own {}, but too many of its calls wait for their users (at most {}): call again later",
            names.join(", "),
            waiting.max()
        ))
    };
    let mut slot = if client.answers_at_once() {
        None
    } else {
        Some(waiting.try_wait().ok_or_else(too_many)?)
    };
    let began = Instant::now();
    let answers = match tokio::time::timeout(input_wait, client.ask(requests)).await {
        Err(_) => {
            return Err(Lacking::Failed(format!(
                "plugin `{plugin}` needs your own {}: the client did not answer within the plugin's input-wait ({} s)",
                names.join(", "),
                input_wait.as_secs()
            )));
        }
        Ok(Err(AskError::Suspended)) => return Err(Lacking::Suspended),
        Ok(Err(err)) => {
            return Err(Lacking::Failed(format!(
                "plugin `{plugin}` needs your own {}, and asking for it failed: {err}",
                names.join(", ")
            )));
        }
        Ok(Ok(answers)) => answers,
    };
    for (grant, answer) in missing.iter().zip(&answers) {
        let action = answer.get("action").and_then(Value::as_str).unwrap_or("");
        if action != "accept" {
            return Err(Lacking::Failed(format!(
                "plugin `{plugin}` needs your own {} ({}); the request to set it was {}",
                grant.name,
                grant.description,
                if action == "decline" {
                    "declined"
                } else {
                    "cancelled"
                }
            )));
        }
    }
    // The user agreed to open each page: now the values must arrive. This
    // wait holds a waiting slot in either era (a stateless retry waits
    // here too), so that at most half of the plugin's calls wait on people.
    if slot.is_none() {
        slot = Some(waiting.try_wait().ok_or_else(too_many)?);
    }
    let _slot = slot;
    for (grant, elicitation) in missing.iter().zip(&opened) {
        let left = input_wait.saturating_sub(began.elapsed());
        if !own.wait(principal, plugin, &grant.name, left).await {
            return Err(Lacking::Failed(format!(
                "plugin `{plugin}` needs your own {}: it was not entered at {} within the plugin's input-wait ({} s); call again once it is",
                grant.name,
                elicitation.page,
                input_wait.as_secs()
            )));
        }
        if let Some(events) = events {
            events(CallEvent::ElicitationComplete {
                id: elicitation.id.clone(),
            });
        }
        match own.get(principal, plugin, &grant.name).await {
            Ok(Some(value)) => values.push((grant.name.clone(), value)),
            Ok(None) => {
                return Err(Lacking::Failed(format!(
                    "your secret {} for plugin `{plugin}` was removed as it was set; call again",
                    grant.name
                )));
            }
            Err(problem) => {
                return Err(Lacking::Failed(format!(
                    "your secret {} for plugin `{plugin}` cannot be read: {problem}",
                    grant.name
                )));
            }
        }
    }
    Ok(values)
}

/// The URL-mode elicitation of `grant`'s value. Its key names the secret,
/// so a client of the stateless era answers it by that name. `bound`: the
/// URL names the elicitation, so that the page refuses whoever it was not
/// made for. A stateless call is asked the page alone (2026-07-28 has no
/// `elicitationId`, and its retry must ask exactly what it asked, in
/// whatever hour it comes); there the page keeps a value for whoever signs
/// in, which completes no one else's request either.
fn request(plugin: &str, grant: &SecretGrant, opened: &Opened, bound: bool) -> InputRequest {
    let mut params = Map::new();
    params.insert("mode".into(), json!("url"));
    params.insert(
        "message".into(),
        json!(format!(
            "The tool needs your own {} for plugin `{plugin}` ({}). Open the page to enter it; it goes to the server only, never through this client.",
            grant.name, grant.description
        )),
    );
    if bound {
        params.insert("url".into(), json!(opened.url));
        params.insert("elicitationId".into(), json!(opened.id));
    } else {
        params.insert("url".into(), json!(opened.page));
    }
    InputRequest {
        key: request_key(grant),
        kind: InputKind::ElicitUrl,
        params,
    }
}

/// The key of the request for `grant`'s value.
fn request_key(grant: &SecretGrant) -> String {
    format!("secret.{}", grant.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A store holding one value, whose page is anywhere.
    #[derive(Debug)]
    struct Holding(Option<String>);

    impl OwnSecrets for Holding {
        fn get<'a>(
            &'a self,
            _: &'a Principal,
            _: &'a str,
            _: &'a str,
        ) -> OwnFuture<'a, Result<Option<String>, String>> {
            Box::pin(std::future::ready(Ok(self.0.clone())))
        }
        fn open(&self, _: &Principal, _: &str, name: &str) -> Result<Opened, String> {
            let page = format!("https://h/corral/secrets?plugin=p&name={name}");
            Ok(Opened {
                id: format!("id-{name}"),
                url: format!("{page}&elicitation=id-{name}"),
                page,
            })
        }
        fn wait<'a>(
            &'a self,
            _: &'a Principal,
            _: &'a str,
            _: &'a str,
            _: Duration,
        ) -> OwnFuture<'a, bool> {
            Box::pin(std::future::ready(self.0.is_some()))
        }
    }

    /// A client of URL elicitation that accepts, and replays `replaying`.
    struct Accepting {
        replaying: Option<Vec<String>>,
        asked: Mutex<Vec<InputRequest>>,
    }

    impl Client for Accepting {
        fn capabilities(&self) -> corral_tool::ClientCapabilities {
            corral_tool::ClientCapabilities {
                elicitation_url: true,
                ..Default::default()
            }
        }
        fn ask(&self, requests: Vec<InputRequest>) -> corral_tool::AskFuture<'_> {
            let answers = requests
                .iter()
                .map(|_| json!({ "action": "accept" }).as_object().unwrap().clone())
                .collect();
            self.asked.lock().unwrap().extend(requests);
            Box::pin(std::future::ready(Ok(answers)))
        }
        fn answers_at_once(&self) -> bool {
            true
        }
        fn replays_next(&self) -> Option<Vec<String>> {
            self.replaying.clone()
        }
    }

    fn grant() -> SecretGrant {
        SecretGrant {
            name: "TOKEN".into(),
            description: "a token".into(),
            required: true,
            env: false,
            per_principal: true,
        }
    }

    async fn resolve_with(
        store: Holding,
        replaying: Option<Vec<String>>,
    ) -> (Result<Vec<(String, String)>, Lacking>, Vec<InputRequest>) {
        let client = Arc::new(Accepting {
            replaying,
            asked: Mutex::default(),
        });
        let principal = Principal {
            issuer: "https://i".into(),
            subject: "alice".into(),
            scopes: Default::default(),
        };
        let waiting = WaitingCalls::for_concurrency(2);
        let dyn_client: Arc<dyn Client> = client.clone();
        let grant = grant();
        let resolved = resolve(
            &store,
            &principal,
            "p",
            &[&grant],
            Some(&dyn_client),
            (Duration::from_secs(1), &waiting),
            None,
        )
        .await;
        let asked = client.asked.lock().unwrap().clone();
        (resolved, asked)
    }

    #[tokio::test]
    async fn a_value_set_is_read_without_asking_unless_a_retry_replays_its_ask() {
        let value = || Holding(Some("corral-test-secret-own".into()));
        let (resolved, asked) = resolve_with(value(), None).await;
        assert_eq!(
            resolved.unwrap(),
            [("TOKEN".into(), "corral-test-secret-own".into())]
        );
        assert!(asked.is_empty());
        // A retry whose state recorded the ask asks it again, the same.
        let (resolved, asked) = resolve_with(value(), Some(vec!["secret.TOKEN".into()])).await;
        assert_eq!(resolved.unwrap().len(), 1);
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].key, "secret.TOKEN");
        assert_eq!(asked[0].params["mode"], "url");
        // Statelessly, the page alone: the same URL whenever the retry comes.
        assert_eq!(
            asked[0].params["url"],
            "https://h/corral/secrets?plugin=p&name=TOKEN"
        );
        assert!(asked[0].params.get("elicitationId").is_none());
        // Another ask replayed (the plugin's own) is none of this.
        let (_, asked) = resolve_with(value(), Some(vec!["elicit-1".into()])).await;
        assert!(asked.is_empty());
        // No value: asked, accepted, and still none within input-wait.
        let (resolved, asked) = resolve_with(Holding(None), None).await;
        assert_eq!(asked.len(), 1);
        match resolved {
            Err(Lacking::Failed(message)) => {
                assert!(message.contains("was not entered"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }
}
