//! RFC 6570 URI templates as the contract allows them (simple expressions
//! only: `{name}`, `{+name}`, `{#name}`, `{/name}`, `{.name}`, `{;name}`,
//! `{?a,b}`, `{&a,b}`): parsing with the host's bounds, and matching a URI
//! against a template to recover its variables.
//!
//! Matching is one left-to-right pass without backtracking: a variable's
//! value ends where the next literal (or the next expression's leading
//! character) first appears, or at a character its operator cannot expand
//! to. So `handbook://{section}` matches `handbook://intro` with
//! `section = "intro"`, and its cost is linear in the URI.

use std::collections::BTreeMap;

/// At most this many bytes in a template (the contract's bound).
pub(crate) const MAX_TEMPLATE_BYTES: usize = 1024;

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression {
        operator: Operator,
        names: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    /// `{name}`: unreserved characters only.
    Simple,
    /// `{+name}`: reserved characters too.
    Reserved,
    /// `{#name}`: `#` then reserved characters.
    Fragment,
    /// `{/name}`: `/` then a segment.
    Path,
    /// `{.name}`: `.` then a label.
    Label,
    /// `{;name}`: `;name=value`.
    PathParameter,
    /// `{?a,b}`: `?a=x&b=y`.
    Query,
    /// `{&a,b}`: `&a=x&b=y`.
    QueryContinuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Self> {
        Some(match c {
            '+' => Self::Reserved,
            '#' => Self::Fragment,
            '/' => Self::Path,
            '.' => Self::Label,
            ';' => Self::PathParameter,
            '?' => Self::Query,
            '&' => Self::QueryContinuation,
            _ => return None,
        })
    }

    /// The character an expansion starts with, if any.
    fn prefix(self) -> Option<char> {
        match self {
            Self::Simple | Self::Reserved => None,
            Self::Fragment => Some('#'),
            Self::Path => Some('/'),
            Self::Label => Some('.'),
            Self::PathParameter => Some(';'),
            Self::Query => Some('?'),
            Self::QueryContinuation => Some('&'),
        }
    }

    /// Whether a value may hold `c` (beyond the stop at the next literal).
    fn allows(self, c: char) -> bool {
        let unreserved = c.is_ascii_alphanumeric() || "-._~%".contains(c);
        match self {
            Self::Simple => unreserved,
            Self::Reserved | Self::Fragment => unreserved || ":/?#[]@!$&'()*+,;=".contains(c),
            Self::Path => {
                c != '/' && c != '?' && c != '#' && (unreserved || "!$&'()*+,;=:@".contains(c))
            }
            Self::Label => c != '.' && unreserved,
            Self::PathParameter | Self::Query | Self::QueryContinuation => {
                unreserved || "!$'()*+,:@/".contains(c)
            }
        }
    }
}

impl UriTemplate {
    /// Parses `template`, refusing what the host would refuse: more than
    /// 1,024 bytes, an unclosed or empty expression, a prefix (`:3`) or
    /// explode (`*`) modifier, a list outside `?` and `&`, a variable named
    /// twice, or no variable at all.
    pub(crate) fn parse(template: &str) -> Result<Self, String> {
        if template.len() > MAX_TEMPLATE_BYTES {
            return Err(format!(
                "is {} bytes, more than {MAX_TEMPLATE_BYTES}",
                template.len()
            ));
        }
        let mut parts = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(0) if rest.starts_with('}') => return Err("has a `}` without `{`".into()),
                Some(0) => {
                    let end = rest
                        .find('}')
                        .ok_or_else(|| "has a `{` without `}`".to_string())?;
                    let body = &rest[1..end];
                    let (operator, list) = match body.chars().next().and_then(Operator::from_char) {
                        Some(operator) => (operator, &body[1..]),
                        None => (Operator::Simple, body),
                    };
                    let names: Vec<String> = list.split(',').map(str::to_string).collect();
                    if names.len() > 1
                        && !matches!(operator, Operator::Query | Operator::QueryContinuation)
                    {
                        return Err(format!(
                            "lists variables in `{{{body}}}`: only `?` and `&` take several"
                        ));
                    }
                    for name in &names {
                        if name.is_empty()
                            || !name
                                .bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                        {
                            return Err(format!(
                                "has `{{{body}}}`: a variable is 1 or more of A-Z, a-z, 0-9, `_` and `.` (no `:` prefix or `*` explode modifier)"
                            ));
                        }
                        if seen.contains(name) {
                            return Err(format!("names variable `{name}` twice"));
                        }
                        seen.push(name.clone());
                    }
                    parts.push(Part::Expression { operator, names });
                    rest = &rest[end + 1..];
                }
                Some(at) => {
                    parts.push(Part::Literal(rest[..at].to_string()));
                    rest = &rest[at..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_string()));
                    rest = "";
                }
            }
        }
        if seen.is_empty() {
            return Err("has no `{variable}`".into());
        }
        Ok(Self { parts })
    }

    /// The template's variables, in order.
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|part| match part {
                Part::Literal(_) => &[][..],
                Part::Expression { names, .. } => &names[..],
            })
            .map(String::as_str)
    }

    /// Whether the template has variable `name`.
    pub(crate) fn has_variable(&self, name: &str) -> bool {
        self.variables().any(|variable| variable == name)
    }

    /// The variables of `uri` (percent-decoded) if it matches the template.
    /// A variable whose prefixed expression (`{/x}`, `{?x}`, ...) is absent
    /// from the URI is absent from the map.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut values = BTreeMap::new();
        let mut rest = uri;
        for (index, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Part::Expression { operator, names } => {
                    let stop = self.parts.get(index + 1).map(|next| match next {
                        Part::Literal(literal) => Stop::Literal(literal),
                        Part::Expression { operator, .. } => Stop::Char(operator.prefix()),
                    });
                    rest = match_expression(*operator, names, rest, stop, &mut values)?;
                }
            }
        }
        rest.is_empty().then_some(values)
    }
}

/// Where a value ends besides a character its operator cannot expand to.
enum Stop<'a> {
    Literal(&'a str),
    Char(Option<char>),
}

/// The length of the value at the start of `rest`.
fn value_len(operator: Operator, rest: &str, stop: &Option<Stop>, extra_stop: &[char]) -> usize {
    let limit = match stop {
        Some(Stop::Literal(literal)) => rest.find(literal).unwrap_or(rest.len()),
        Some(Stop::Char(Some(c))) => rest.find(*c).unwrap_or(rest.len()),
        _ => rest.len(),
    };
    rest[..limit]
        .find(|c: char| !operator.allows(c) || extra_stop.contains(&c))
        .unwrap_or(limit)
}

fn match_expression<'u>(
    operator: Operator,
    names: &[String],
    rest: &'u str,
    stop: Option<Stop>,
    values: &mut BTreeMap<String, String>,
) -> Option<&'u str> {
    let rest = match operator.prefix() {
        None => rest,
        Some(prefix) => match rest.strip_prefix(prefix) {
            Some(after) => after,
            // An undefined variable expands to nothing.
            None => return Some(rest),
        },
    };
    match operator {
        Operator::Query | Operator::QueryContinuation | Operator::PathParameter => {
            let separator = if operator == Operator::PathParameter {
                ';'
            } else {
                '&'
            };
            let mut rest = rest;
            loop {
                let len = value_len(operator, rest, &stop, &[separator, '=']);
                let key = &rest[..len];
                if !names.iter().any(|name| name == key) || values.contains_key(key) {
                    return None;
                }
                rest = &rest[len..];
                let value = match rest.strip_prefix('=') {
                    Some(after) => {
                        let len = value_len(operator, after, &stop, &[separator]);
                        rest = &after[len..];
                        percent_decode(&after[..len])?
                    }
                    None => String::new(),
                };
                values.insert(key.to_string(), value);
                match rest.strip_prefix(separator) {
                    Some(after) if operator != Operator::PathParameter => rest = after,
                    _ => return Some(rest),
                }
            }
        }
        _ => {
            let len = value_len(operator, rest, &stop, &[]);
            values.insert(names[0].clone(), percent_decode(&rest[..len])?);
            Some(&rest[len..])
        }
    }
}

/// `text` with `%XX` escapes decoded; `None` if they are malformed or do
/// not decode to UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Whether `uri` is one the host accepts for a resource: an absolute URI
/// (a scheme, then `:`) of at most 2,048 bytes without spaces or control
/// characters.
pub(crate) fn check_uri(uri: &str) -> Result<(), String> {
    if uri.len() > 2048 {
        return Err(format!("is {} bytes, more than 2048", uri.len()));
    }
    let scheme = uri.split_once(':').map(|(scheme, _)| scheme).unwrap_or("");
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !scheme_ok {
        return Err("is not an absolute URI (a scheme such as `handbook:` first)".into());
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("holds a space or a control character".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn simple_variable() {
        let t = UriTemplate::parse("handbook://{section}").unwrap();
        assert_eq!(
            t.matches("handbook://intro"),
            Some(vars(&[("section", "intro")]))
        );
        assert_eq!(
            t.matches("handbook://a%20b"),
            Some(vars(&[("section", "a b")]))
        );
        assert_eq!(t.matches("handbook://a/b"), None);
        assert_eq!(t.matches("other://intro"), None);
        assert_eq!(t.variables().collect::<Vec<_>>(), ["section"]);
    }

    #[test]
    fn literals_between_variables() {
        let t = UriTemplate::parse("db://{table}/rows/{id}.json").unwrap();
        assert_eq!(
            t.matches("db://users/rows/42.json"),
            Some(vars(&[("table", "users"), ("id", "42")]))
        );
        assert_eq!(t.matches("db://users/rows/42.xml"), None);
    }

    #[test]
    fn operators() {
        let t = UriTemplate::parse("file://{+path}").unwrap();
        assert_eq!(
            t.matches("file:///a/b.md"),
            Some(vars(&[("path", "/a/b.md")]))
        );
        let t = UriTemplate::parse("x://h{/seg}{?q,n}").unwrap();
        assert_eq!(
            t.matches("x://h/one?q=a%26b&n=3"),
            Some(vars(&[("seg", "one"), ("q", "a&b"), ("n", "3")]))
        );
        assert_eq!(t.matches("x://h"), Some(vars(&[])));
        assert_eq!(t.matches("x://h?z=1"), None);
        let t = UriTemplate::parse("x://h{;v}{#f}").unwrap();
        assert_eq!(
            t.matches("x://h;v=2#top/x"),
            Some(vars(&[("v", "2"), ("f", "top/x")]))
        );
    }

    #[test]
    fn refuses_what_the_host_refuses() {
        for bad in [
            "x://{a",
            "x://a}",
            "x://{}",
            "x://{a:3}",
            "x://{a*}",
            "x://{a,b}",
            "x://{a}/{a}",
            "x://plain",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        assert!(UriTemplate::parse(&format!("x://{{a}}{}", "b".repeat(1024))).is_err());
    }

    #[test]
    fn uris() {
        assert!(check_uri("handbook://intro").is_ok());
        assert!(check_uri("file:///notes.md").is_ok());
        assert!(check_uri("intro").is_err());
        assert!(check_uri("x://a b").is_err());
        assert!(check_uri(&format!("x://{}", "a".repeat(2048))).is_err());
    }
}
