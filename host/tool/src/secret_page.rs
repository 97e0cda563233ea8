//! The page where a signed-in user sets their own secrets (a plugin's
//! `[secrets] NAME = { per = "principal" }`): what the HTTP transport,
//! which serves the page and signs the user in, asks of the host, which
//! knows the plugins' grants and keeps the values.

use std::future::Future;
use std::pin::Pin;

use crate::Principal;

/// What [`SecretPage::save`] returns.
pub type OwnSecretSaved<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// The host's side of the page.
pub trait SecretPage: Send + Sync + std::fmt::Debug {
    /// The description of `plugin`'s secret `name`, when a served plugin
    /// grants it per principal; `None` otherwise (the page refuses it).
    fn describe(&self, plugin: &str, name: &str) -> Option<String>;

    /// Whether the elicitation `id` (from the page's link) was made for
    /// `principal`'s `plugin` `name`, and lately.
    fn made_for(&self, id: &str, principal: &Principal, plugin: &str, name: &str) -> bool;

    /// Keeps `value` as `principal`'s own `name` for `plugin`, and wakes
    /// the calls waiting for it.
    fn save<'a>(
        &'a self,
        principal: &'a Principal,
        plugin: &'a str,
        name: &'a str,
        value: String,
    ) -> OwnSecretSaved<'a>;
}
