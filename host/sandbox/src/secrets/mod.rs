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
pub mod own;

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
    /// What [`Granted::redact`] replaces: every form of every value.
    forms: Forms,
}

impl Granted {
    /// Asks `sources` for each secret `grants` names, for `plugin`; but
    /// for a call `by_principal`, not for those that are each principal's
    /// own (see [`own`], and [`Granted::add`]).
    pub fn resolve(
        sources: &SecretSources,
        plugin: &str,
        grants: &[SecretGrant],
        by_principal: bool,
    ) -> Result<Granted, String> {
        let mut granted = Granted::default();
        for grant in grants {
            if by_principal && grant.per_principal {
                continue;
            }
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
        granted.forms = Forms::of(&granted.values);
        Ok(granted)
    }

    /// Adds the value of `name` (a principal's own).
    pub fn add(&mut self, name: String, value: String) {
        self.values.push((name, value));
        self.forms = Forms::of(&self.values);
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
        self.forms.apply(text)
    }

    /// Whether any value is long enough to be redacted.
    pub fn redacts_anything(&self) -> bool {
        !self.forms.0.is_empty()
    }

    /// Redacts `text` in place, adding what it replaced to `count`.
    pub fn redact_in_place(&self, text: &mut String, count: &mut usize) {
        if !self.redacts_anything() {
            return;
        }
        let (redacted, found) = self.redact(text);
        if found > 0 {
            *text = redacted;
            *count += found;
        }
    }

    /// Redacts JSON `value` in place: every string and object key (each
    /// unescaped, as parsed), and a number whose digits hold a value
    /// (which becomes a string: the marker). What it replaced is added to
    /// `count`. JSON text is redacted by parsing it and redacting this
    /// way ([`Granted::redact_json_text`]): whatever escapes a plugin's
    /// serializer chose (`\u00e9`, `\u0026`, `\/`), a parsed string holds the
    /// value itself.
    pub fn redact_json(&self, value: &mut serde_json::Value, count: &mut usize) {
        use serde_json::Value;
        if !self.redacts_anything() {
            return;
        }
        match value {
            Value::String(text) => self.redact_in_place(text, count),
            Value::Number(number) => {
                let (redacted, found) = self.redact(&number.to_string());
                if found > 0 {
                    *value = Value::String(redacted);
                    *count += found;
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.redact_json(item, count);
                }
            }
            Value::Object(map) => {
                let keyed = map.keys().any(|key| self.redact(key).1 > 0);
                if keyed {
                    let old = std::mem::take(map);
                    for (mut key, item) in old {
                        self.redact_in_place(&mut key, count);
                        map.insert(key, item);
                    }
                }
                for item in map.values_mut() {
                    self.redact_json(item, count);
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// Redacts `text`, JSON text, in place: parsed, redacted as
    /// [`Granted::redact_json`] does and written again when anything was
    /// replaced; text that is not JSON is redacted as text.
    pub fn redact_json_text(&self, text: &mut String, count: &mut usize) {
        if !self.redacts_anything() {
            return;
        }
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(mut value) => {
                let mut found = 0;
                self.redact_json(&mut value, &mut found);
                if found > 0 {
                    *text = value.to_string();
                    *count += found;
                }
            }
            Err(_) => self.redact_in_place(text, count),
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
/// occurrences were replaced. Each value is looked for as it is and in
/// the forms serializers give it inside a quoted string (see
/// [`escaped_forms`]), so that a value with a quote, a backslash, a
/// control character or a non-ASCII character is found in JSON text and
/// in Debug output too. Values shorter than [`MIN_REDACTED_BYTES`] are
/// left alone. Longer forms are replaced first, so a value that contains
/// another is replaced whole. Linear in `text` per form.
pub fn redact<N: AsRef<str>, V: AsRef<str>>(text: &str, secrets: &[(N, V)]) -> (String, usize) {
    Forms::of(secrets).apply(text)
}

/// [`redact`] for bytes that may not be UTF-8 (a value a plugin stored):
/// each run of valid UTF-8 is redacted, other bytes are kept as they are.
/// (A value is UTF-8 text, so an occurrence never straddles an invalid
/// byte.)
pub fn redact_bytes<N: AsRef<str>, V: AsRef<str>>(
    bytes: &[u8],
    secrets: &[(N, V)],
) -> (Vec<u8>, usize) {
    let forms = Forms::of(secrets);
    if let Ok(text) = std::str::from_utf8(bytes) {
        let (text, count) = forms.apply(text);
        return (text.into_bytes(), count);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut count = 0;
    for chunk in bytes.utf8_chunks() {
        let (text, found) = forms.apply(chunk.valid());
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(chunk.invalid());
        count += found;
    }
    (out, count)
}

/// The forms of `value` that are looked for besides the value itself:
/// as JSON escapes it in a string (`"` and `\` and control characters,
/// as serde_json, JavaScript and Python's `ensure_ascii=False` do), the
/// same with every character outside printable ASCII as `\uXXXX` (Python's default,
/// Java's; lower- and upper-case hex), and as Rust's `Debug` shows a
/// string or a character at a time (Corral's own messages and
/// listings). Without the quotes around; only those that differ from the
/// value.
pub fn escaped_forms(value: &str) -> Vec<String> {
    let json = serde_json::to_string(value).expect("a string serializes");
    let json = json[1..json.len() - 1].to_owned();
    // Every character outside printable ASCII as `\uXXXX` (UTF-16 units),
    // as Python's `ensure_ascii` writes it (lower case) and Java's
    // serializers (upper case).
    let ascii = |upper: bool| {
        let mut out = String::with_capacity(json.len());
        for c in value.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                ' '..='~' => out.push(c),
                _ => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        if upper {
                            out.push_str(&format!("\\u{unit:04X}"));
                        } else {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                }
            }
        }
        out
    };
    let debug = format!("{value:?}");
    let debug = debug[1..debug.len() - 1].to_owned();
    let per_char: String = value.chars().flat_map(char::escape_debug).collect();
    let mut forms = Vec::new();
    for form in [json.clone(), ascii(false), ascii(true), debug, per_char] {
        if form != value && !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms
}

/// Every form of every value to replace, each with its marker, longest
/// first.
#[derive(Clone, Default)]
struct Forms(Vec<(String, String)>);

impl Forms {
    fn of<N: AsRef<str>, V: AsRef<str>>(secrets: &[(N, V)]) -> Forms {
        let mut forms = Vec::new();
        for (name, value) in secrets {
            let (name, value) = (name.as_ref(), value.as_ref());
            if value.len() < MIN_REDACTED_BYTES {
                continue;
            }
            let marker = marker(name);
            forms.push((marker.clone(), value.to_owned()));
            for form in escaped_forms(value) {
                forms.push((marker.clone(), form));
            }
        }
        forms.sort_by_key(|(_, form)| std::cmp::Reverse(form.len()));
        Forms(forms)
    }

    fn apply(&self, text: &str) -> (String, usize) {
        let mut text = std::borrow::Cow::Borrowed(text);
        let mut count = 0;
        for (marker, form) in &self.0 {
            let found = text.matches(form.as_str()).count();
            if found > 0 {
                count += found;
                text = std::borrow::Cow::Owned(text.replace(form.as_str(), marker));
            }
        }
        (text.into_owned(), count)
    }
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

    /// A value with a quote, a backslash, controls, a slash and
    /// non-ASCII letters (one outside the Basic Multilingual Plane).
    const ESCAPED: &str = "s3cr3t-corral-test-\"q\"\\b\n\t\u{1b}/é-𝄞";

    #[test]
    fn a_value_is_found_as_serializers_and_debug_escape_it() {
        let secrets = [("TOKEN", ESCAPED)];
        let marker = marker("TOKEN");
        let python_ascii = "s3cr3t-corral-test-\\\"q\\\"\\\\b\\n\\t\\u001b/\\u00e9-\\ud834\\udd1e";
        for text in [
            // As serde_json, JavaScript and Python's ensure_ascii=False write it.
            serde_json::to_string(&serde_json::json!({ "t": ESCAPED })).unwrap(),
            // As Python's json.dumps writes it by default.
            format!("{{\"t\": \"{python_ascii}\"}}"),
            // The same with upper-case hex digits (Java's).
            format!(
                "{{\"t\": \"{}\"}}",
                python_ascii
                    .replace("u00e9", "u00E9")
                    .replace("ud834\\udd1e", "uD834\\uDD1E")
                    .replace("u001b", "u001B")
            ),
            // As Rust's Debug shows it, whole and a character at a time.
            format!("{:?}", ESCAPED),
            format!(
                "'{}'",
                ESCAPED
                    .chars()
                    .flat_map(char::escape_debug)
                    .collect::<String>()
            ),
            // As it is.
            format!("<{ESCAPED}>"),
        ] {
            let (redacted, count) = redact(&text, &secrets);
            assert_eq!(count, 1, "{text} -> {redacted}");
            assert!(redacted.contains(&marker), "{redacted}");
            assert!(!redacted.contains("s3cr3t-corral-test-"), "{redacted}");
        }
    }

    fn granted(values: &[(&str, &str)]) -> Granted {
        let values: Vec<(String, String)> = values
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        Granted {
            forms: Forms::of(&values),
            values,
            missing: Vec::new(),
        }
    }

    #[test]
    fn json_text_is_redacted_whatever_its_escapes() {
        let granted = granted(&[("TOKEN", "s3cr3t-corral-test-&<é>")]);
        // Every character escaped (as a hostile or an HTML-safe
        // serializer may), in a value, a key, and a number that is a value.
        let escaped: String = "s3cr3t-corral-test-&<é>"
            .chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect();
        let mut text =
            format!(r#"{{"a": "x {escaped} y", "{escaped}": [1, "{escaped}"], "n": 12345678901}}"#);
        let mut count = 0;
        granted.redact_json_text(&mut text, &mut count);
        assert_eq!(count, 3, "{text}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let marker = marker("TOKEN");
        assert_eq!(
            value,
            serde_json::json!({"a": format!("x {marker} y"), marker.clone(): [1, marker], "n": 12345678901u64})
        );
        // A number that is a value becomes the marker.
        let granted = self::granted(&[("PIN", "12345678901")]);
        let mut text = r#"{"n":12345678901}"#.to_owned();
        let mut count = 0;
        granted.redact_json_text(&mut text, &mut count);
        assert_eq!(
            (text.as_str(), count),
            (r#"{"n":"[redacted secret PIN]"}"#, 1)
        );
        // Not JSON: redacted as text.
        let granted = self::granted(&[("TOKEN", ESCAPED)]);
        let mut text = format!("not json {ESCAPED}");
        let mut count = 0;
        granted.redact_json_text(&mut text, &mut count);
        assert_eq!(text, "not json [redacted secret TOKEN]");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_redacted_around_what_is_not() {
        let secrets = [("TOKEN", "s3cr3t-corral-test-é")];
        let mut bytes = b"\xff\xfe".to_vec();
        bytes.extend_from_slice("s3cr3t-corral-test-é".as_bytes());
        bytes.extend_from_slice(b"\xe2 \"s3cr3t-corral-test-\\u00e9\"\x80");
        let (redacted, count) = redact_bytes(&bytes, &secrets);
        assert_eq!(count, 2);
        let mut expected = b"\xff\xfe[redacted secret TOKEN]\xe2 \"".to_vec();
        expected.extend_from_slice(b"[redacted secret TOKEN]\"\x80");
        assert_eq!(redacted, expected);
        let (redacted, count) = redact_bytes("plain s3cr3t-corral-test-é".as_bytes(), &secrets);
        assert_eq!(
            (redacted.as_slice(), count),
            (&b"plain [redacted secret TOKEN]"[..], 1)
        );
    }

    #[test]
    fn a_value_containing_another_is_replaced_whole() {
        let secrets = [("INNER", "password"), ("OUTER", "my-password-long")];
        let (text, count) = redact("x my-password-long y password", &secrets);
        assert_eq!(text, "x [redacted secret OUTER] y [redacted secret INNER]");
        assert_eq!(count, 2);
    }
}
