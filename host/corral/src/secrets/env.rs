//! Secrets from the server's environment: the secret `NAME` of any plugin
//! granted it is the variable `PREFIX` + `NAME` (by default
//! `CORRAL_SECRET_GITHUB_TOKEN` for `GITHUB_TOKEN`).
//!
//! One variable names exactly one secret name, the same value for every
//! plugin granted that name: plugin names may hold `_` and capitals, so a
//! variable that also spelled the plugin could be read two ways. A value
//! for one plugin alone goes in Corral's store or in a folder's
//! `PLUGIN/NAME`. The environment is read at each call, but a process's
//! environment does not change from outside: rotating a value means
//! restarting the server (or using the store or a folder).

use std::io;

use corral_sandbox::SecretSource;

/// The prefix of the default order (`store,env:CORRAL_SECRET_`).
pub const DEFAULT_PREFIX: &str = "CORRAL_SECRET_";

/// The server's environment under a prefix.
#[derive(Clone, Debug)]
pub struct Env {
    prefix: String,
}

impl Env {
    /// Variables `prefix` + NAME.
    pub fn new(prefix: impl Into<String>) -> Env {
        Env {
            prefix: prefix.into(),
        }
    }

    /// The variable that holds `name`.
    pub fn variable(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}

impl SecretSource for Env {
    fn describe(&self) -> String {
        format!("environment {}*", self.prefix)
    }

    fn get(&self, _plugin: &str, name: &str) -> io::Result<Option<String>> {
        match std::env::var(self.variable(name)) {
            Ok(value) => Ok(Some(value)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the environment variable {} is not UTF-8",
                    self.variable(name)
                ),
            )),
        }
    }
}
