//! Secrets: values a plugin may read (through `wasi:config/store`) and that
//! never leave the sandbox in its output.
//!
//! The sandbox knows only the port: a [`SecretSource`] answers "the value of
//! this name for this plugin", and [`SecretSources`] asks them in the
//! operator's order. The sources themselves (Corral's own store, a folder,
//! the environment) live in the `corral` crate. A plugin's grant is its
//! manifest's `[secrets]` table; every value granted to a call is resolved
//! at the start of that call, so a changed value takes effect at the next
//! call. What the plugin sends out is scanned for the exact values and each
//! occurrence replaced with a marker ([`redact`]).

pub mod config;
pub(crate) mod output;

use std::fmt;
use std::sync::Arc;

use crate::manifest::SecretGrant;

/// One place secret values come from (Corral's store, a folder, the environment).
pub trait SecretSource: Send + Sync + 'static {
    /// What it is, for messages and listings: never a value.
    fn describe(&self) -> String;
    /// The value of `name` for `plugin`, if this source holds one.
    fn get(&self, plugin: &str, name: &str) -> std::io::Result<Option<String>>;
}

/// The sources in the operator's order: the first that holds a value wins.
#[derive(Clone, Default)]
pub struct SecretSources(Vec<Arc<dyn SecretSource>>);

impl SecretSources {
    /// The sources, first asked first.
    pub fn new(sources: Vec<Arc<dyn SecretSource>>) -> Self {
        SecretSources(sources)
    }

    /// The value of `name` for `plugin` from the first source that holds
    /// one, with that source's [`SecretSource::describe`]; `None` when no
    /// source holds it. A source's error stops the search (a store that
    /// cannot be read must not let a later source's value win silently).
    pub fn resolve(&self, plugin: &str, name: &str) -> std::io::Result<Option<(String, String)>> {
        for source in &self.0 {
            if let Some(value) = source.get(plugin, name)? {
                return Ok(Some((value, source.describe())));
            }
        }
        Ok(None)
    }

    /// Each source's description, in order.
    pub fn describe(&self) -> Vec<String> {
        self.0.iter().map(|source| source.describe()).collect()
    }

    /// Whether there is no source at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for SecretSources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Descriptions only: a source never describes itself by a value.
        f.debug_tuple("SecretSources")
            .field(&self.describe())
            .finish()
    }
}

/// The secrets one call may read: each granted name that has a value, in
/// the grant's order, and the required ones that have none. Its `Debug`
/// shows names only.
#[derive(Clone, Default)]
pub struct Granted {
    values: Vec<(String, String)>,
    missing: Vec<String>,
}

impl Granted {
    /// Asks `sources` for each secret `grants` names, for `plugin`.
    pub fn resolve(
        sources: &SecretSources,
        plugin: &str,
        grants: &[SecretGrant],
    ) -> Result<Granted, String> {
        let mut granted = Granted::default();
        for grant in grants {
            match sources.resolve(plugin, &grant.name) {
                Ok(Some((value, _source))) => granted.values.push((grant.name.clone(), value)),
                Ok(None) if grant.required => granted.missing.push(grant.name.clone()),
                Ok(None) => {}
                // The source's error, never a value: sources describe
                // themselves and their failures without one.
                Err(err) => {
                    return Err(format!(
                        "the secret {} cannot be read: {err} (secret sources: {})",
                        grant.name,
                        sources.describe().join(", ")
                    ));
                }
            }
        }
        Ok(granted)
    }

    /// The value of `name`, if it is granted and has one.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(granted, _)| granted == name)
            .map(|(_, value)| value.as_str())
    }

    /// Each granted name that has a value, with it.
    pub fn values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// The required secrets no source holds.
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// `text` with these values redacted (see [`redact`]).
    pub fn redact(&self, text: &str) -> (String, usize) {
        redact(text, &self.values)
    }

    /// Redacts `text` in place, adding what it replaced to `count`.
    pub fn redact_in_place(&self, text: &mut String, count: &mut usize) {
        if self.values.is_empty() {
            return;
        }
        let (redacted, found) = self.redact(text);
        if found > 0 {
            *text = redacted;
            *count += found;
        }
    }
}

impl fmt::Debug for Granted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.values.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Granted")
            .field("names", &names)
            .field("missing", &self.missing)
            .finish()
    }
}

/// Why a call of `plugin` cannot run: the required secrets in `missing`
/// have no value, and the command that sets each.
pub fn missing_message(plugin: &str, missing: &[String], sources: &SecretSources) -> String {
    let commands: Vec<String> = missing
        .iter()
        .map(|name| format!("`corral secret set {plugin} {name}`"))
        .collect();
    let (noun, pronoun) = if missing.len() == 1 {
        ("secret", "it")
    } else {
        ("secrets", "each")
    };
    let sources = sources.describe();
    let sources = if sources.is_empty() {
        "this server has no secret sources".to_owned()
    } else {
        format!("secret sources: {}", sources.join(", "))
    };
    format!(
        "plugin `{plugin}` needs the {noun} {}, which no source holds ({sources}); set {pronoun} with {}",
        missing.join(", "),
        commands.join(", ")
    )
}

/// Values shorter than this many bytes are not redacted: a one- or
/// two-byte value would mangle every output it happened to occur in, and a
/// value that short is no secret worth the name. Corral warns when it
/// resolves one.
pub const MIN_REDACTED_BYTES: usize = 8;

/// The marker that replaces an occurrence of the secret `name`'s value.
pub fn marker(name: &str) -> String {
    format!("[redacted secret {name}]")
}

/// `text` with every exact occurrence of each value in `secrets` (pairs of
/// name and value) replaced with [`marker`]`(name)`, and how many
/// occurrences were replaced. Values shorter than [`MIN_REDACTED_BYTES`]
/// are left alone. Longer values are replaced first, so a value that
/// contains another is replaced whole. Linear in `text` per value.
pub fn redact<N: AsRef<str>, V: AsRef<str>>(text: &str, secrets: &[(N, V)]) -> (String, usize) {
    let mut order: Vec<(&str, &str)> = secrets
        .iter()
        .map(|(name, value)| (name.as_ref(), value.as_ref()))
        .filter(|(_, value)| value.len() >= MIN_REDACTED_BYTES)
        .collect();
    order.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
    let mut text = std::borrow::Cow::Borrowed(text);
    let mut count = 0;
    for (name, value) in order {
        let found = text.matches(value).count();
        if found > 0 {
            count += found;
            text = std::borrow::Cow::Owned(text.replace(value, &marker(name)));
        }
    }
    (text.into_owned(), count)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(&'static str, &'static str, &'static str);
    impl SecretSource for Fixed {
        fn describe(&self) -> String {
            format!("fixed {}", self.0)
        }
        fn get(&self, _plugin: &str, name: &str) -> std::io::Result<Option<String>> {
            Ok((name == self.1).then(|| self.2.to_string()))
        }
    }

    #[test]
    fn the_first_source_that_holds_a_value_wins() {
        let sources = SecretSources::new(vec![
            Arc::new(Fixed("one", "A", "from-one")),
            Arc::new(Fixed("two", "A", "from-two")),
            Arc::new(Fixed("three", "B", "b-value")),
        ]);
        assert_eq!(
            sources.resolve("p", "A").unwrap(),
            Some(("from-one".to_string(), "fixed one".to_string()))
        );
        assert_eq!(
            sources.resolve("p", "B").unwrap(),
            Some(("b-value".to_string(), "fixed three".to_string()))
        );
        assert_eq!(sources.resolve("p", "C").unwrap(), None);
        let debug = format!("{sources:?}");
        assert!(!debug.contains("from-one"), "{debug}");
        assert!(debug.contains("fixed two"), "{debug}");
    }

    #[test]
    fn redaction_replaces_exact_values_and_counts_them() {
        let secrets = [("TOKEN", "ghp_secret123"), ("SHORT", "abc")];
        let (text, count) = redact("a ghp_secret123 b ghp_secret123 abc", &secrets);
        assert_eq!(
            text,
            "a [redacted secret TOKEN] b [redacted secret TOKEN] abc"
        );
        assert_eq!(count, 2);
        let (text, count) = redact("nothing here", &secrets);
        assert_eq!((text.as_str(), count), ("nothing here", 0));
    }

    #[test]
    fn a_value_containing_another_is_replaced_whole() {
        let secrets = [("INNER", "password"), ("OUTER", "my-password-long")];
        let (text, count) = redact("x my-password-long y password", &secrets);
        assert_eq!(text, "x [redacted secret OUTER] y [redacted secret INNER]");
        assert_eq!(count, 2);
    }
}
