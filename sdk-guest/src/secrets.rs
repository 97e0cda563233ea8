//! Secrets the plugin's manifest grants (`[secrets]`): API keys and tokens
//! the operator provides, read through `wasi:config/store@0.2.0-draft`.
//!
//! ```toml
//! # NAME.toml, beside the plugin
//! [secrets]
//! GITHUB_TOKEN = { description = "Reads issues", required = true }
//! ```
//!
//! ```
//! use corral_sdk::secrets::{self, fake};
//!
//! fake::set([("GITHUB_TOKEN", "ghp_example_value")]);
//! assert_eq!(secrets::get("GITHUB_TOKEN")?.as_deref(), Some("ghp_example_value"));
//! assert_eq!(secrets::get("OTHER")?, None);
//! # Ok::<(), corral_sdk::secrets::SecretError>(())
//! ```
//!
//! Only the names the grant lists are readable: any other reads as `None`.
//! A required secret that has no value never reaches the plugin (its calls
//! fail before it runs, naming the secret and the command that sets it); an
//! optional one reads as `None`. Values are read at each call, so a changed
//! value takes effect at the next call. Whatever the plugin sends out (its
//! results, errors, log and progress messages, stderr) has each granted
//! value of 8 bytes or more replaced with `[redacted secret NAME]`: the
//! value is for calling an API, not for showing.
//!
//! A plugin that calls neither function does not import `wasi:config` (and
//! needs no grant). On native targets (unit tests) the values come from
//! [`fake`].

use std::fmt;

/// Why a secret could not be read: the host's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretError {
    /// The source the value comes from failed.
    Upstream(String),
    /// Reading it failed.
    Io(String),
}

impl fmt::Display for SecretError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretError::Upstream(message) | SecretError::Io(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for SecretError {}

impl From<SecretError> for crate::ToolError {
    fn from(error: SecretError) -> Self {
        crate::ToolError::new(error)
    }
}

/// The value of the secret `name`, if the manifest grants it and it has one.
pub fn get(name: &str) -> Result<Option<String>, SecretError> {
    imp::get(name)
}

/// Every granted secret that has a value, with its name.
pub fn get_all() -> Result<Vec<(String, String)>, SecretError> {
    imp::get_all()
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::SecretError;
    use crate::config::wasi::config::store;

    fn error(err: store::Error) -> SecretError {
        match err {
            store::Error::Upstream(message) => SecretError::Upstream(message),
            store::Error::Io(message) => SecretError::Io(message),
        }
    }

    pub(super) fn get(name: &str) -> Result<Option<String>, SecretError> {
        store::get(name).map_err(error)
    }

    pub(super) fn get_all() -> Result<Vec<(String, String)>, SecretError> {
        store::get_all().map_err(error)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::SecretError;

    pub(super) fn get(name: &str) -> Result<Option<String>, SecretError> {
        super::fake::with(|secrets| {
            Ok(secrets
                .iter()
                .find(|(granted, _)| granted == name)
                .map(|(_, value)| value.clone()))
        })
    }

    pub(super) fn get_all() -> Result<Vec<(String, String)>, SecretError> {
        super::fake::with(|secrets| Ok(secrets.clone()))
    }
}

/// Secrets for unit tests (native targets only), per thread: what
/// [`set`](fake::set) gave, none at first.
#[cfg(not(target_arch = "wasm32"))]
pub mod fake {
    use std::cell::RefCell;

    thread_local! {
        static SECRETS: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
    }

    /// Grants these secrets with these values, replacing what was set: any
    /// other name reads as `None`, as a name outside the manifest's grant
    /// (or one without a value) does in the host.
    pub fn set<N: Into<String>, V: Into<String>>(secrets: impl IntoIterator<Item = (N, V)>) {
        let secrets = secrets
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect();
        SECRETS.with(|cell| *cell.borrow_mut() = secrets);
    }

    /// No secrets.
    pub fn clear() {
        SECRETS.with(|cell| cell.borrow_mut().clear());
    }

    pub(super) fn with<T>(f: impl FnOnce(&Vec<(String, String)>) -> T) -> T {
        SECRETS.with(|cell| f(&cell.borrow()))
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn the_fake_grants_what_it_was_given() {
        fake::set([("A", "alpha-value"), ("B", "beta-value")]);
        assert_eq!(get("A").unwrap().as_deref(), Some("alpha-value"));
        assert_eq!(get("C").unwrap(), None);
        assert_eq!(get_all().unwrap().len(), 2);
        fake::clear();
        assert_eq!(get("A").unwrap(), None);
    }
}
