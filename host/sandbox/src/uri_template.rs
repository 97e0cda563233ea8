//! RFC 6570 URI templates, the subset the contract allows (simple
//! expressions: `{name}`, `{+name}`, `{#name}`, `{/name}`, `{.name}`,
//! `{;name}`, `{?a,b}`, `{&a,b}`; no prefix or explode modifiers), parsed
//! once at load, and matched against a URI in linear time.
//!
//! Matching never backtracks, so that neither a template nor a URI can make
//! it slow (a regex engine that backtracks is one crafted template away from
//! exponential time). One pass goes through the template's parts in order:
//! a literal must follow where the URI stands; an expression takes the
//! characters its operator allows up to the first place where the literal
//! after it follows (found with `str::find`, linear), or as far as those
//! characters go when another expression or the end follows. So an earlier
//! expression takes the shortest value that lets the next literal match:
//! `{a}-{b}` matches `x-y-z` with `a = x`, `b = y-z`. Every position of the
//! URI is looked at a bounded number of times.

use std::fmt;

/// The longest template accepted, in bytes.
pub const MAX_TEMPLATE_BYTES: usize = 1024;

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
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

/// An expression's operator, which decides its characters and separators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParameter,
    Query,
    QueryContinuation,
}

impl Operator {
    fn of(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParameter,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// The character an expansion starts with, if any.
    fn prefix(self) -> Option<u8> {
        match self {
            Operator::Simple | Operator::Reserved => None,
            Operator::Fragment => Some(b'#'),
            Operator::Label => Some(b'.'),
            Operator::Path => Some(b'/'),
            Operator::PathParameter => Some(b';'),
            Operator::Query => Some(b'?'),
            Operator::QueryContinuation => Some(b'&'),
        }
    }

    /// Whether byte `b` may stand in this operator's expansion (`%` for
    /// percent-encoded bytes; its two digits are unreserved).
    fn allows(self, b: u8) -> bool {
        let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%');
        match self {
            Operator::Simple => unreserved || b == b',',
            Operator::Reserved | Operator::Fragment => {
                b.is_ascii_graphic()
                    && !matches!(
                        b,
                        b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
                    )
            }
            Operator::Label => unreserved || b == b',',
            Operator::Path => unreserved || matches!(b, b',' | b'/'),
            Operator::PathParameter => unreserved || matches!(b, b',' | b';' | b'='),
            Operator::Query | Operator::QueryContinuation => {
                unreserved || matches!(b, b',' | b'&' | b'=' | b'?')
            }
        }
    }
}

/// Why a template was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses `text`, refusing what the contract does not allow.
    pub fn parse(text: &str) -> Result<UriTemplate, TemplateError> {
        let fail = |message: String| Err(TemplateError(message));
        if text.len() > MAX_TEMPLATE_BYTES {
            return fail(format!("is longer than {MAX_TEMPLATE_BYTES} bytes"));
        }
        if text.is_empty() {
            return fail("is empty".into());
        }
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(at) if rest.as_bytes()[at] == b'}' => {
                    return fail(format!(
                        "has a `}}` with no `{{` at byte {}",
                        text.len() - rest.len() + at
                    ));
                }
                Some(0) => {
                    let Some(end) = rest.find('}') else {
                        return fail("has a `{` that is never closed".into());
                    };
                    parts.push(expression(&rest[1..end])?);
                    rest = &rest[end + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    let literal = &rest[..end];
                    if let Some(c) = literal
                        .chars()
                        .find(|c| c.is_control() || c.is_whitespace())
                    {
                        return fail(format!("has the character {c:?} outside an expression"));
                    }
                    parts.push(Part::Literal(literal.to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        Ok(UriTemplate { parts })
    }

    /// Whether the variable `name` appears in the template.
    pub fn has_variable(&self, name: &str) -> bool {
        self.parts.iter().any(|part| match part {
            Part::Expression { names, .. } => names.iter().any(|n| n == name),
            Part::Literal(_) => false,
        })
    }

    /// Whether `uri` matches the template.
    pub fn matches(&self, uri: &str) -> bool {
        self.variables(uri).is_some()
    }

    /// The variables `uri` gives the template (values as in the URI,
    /// percent-encoded), or `None` when it does not match. Linear in the
    /// lengths of `uri` and the template.
    pub fn variables(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let bytes = uri.as_bytes();
        let mut at = 0;
        let mut variables = Vec::new();
        for (index, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(literal) => {
                    if !uri[at..].starts_with(literal.as_str()) {
                        return None;
                    }
                    at += literal.len();
                }
                Part::Expression { operator, names } => {
                    // How far this operator's characters go from `at`.
                    let run = bytes[at..]
                        .iter()
                        .position(|&b| !operator.allows(b))
                        .map_or(bytes.len(), |n| at + n);
                    let end = match self.parts.get(index + 1) {
                        Some(Part::Literal(next)) => {
                            let found = at + uri[at..].find(next.as_str())?;
                            if found > run {
                                return None;
                            }
                            found
                        }
                        _ => run,
                    };
                    let end = at + claimed(*operator, names, &uri[at..end]);
                    split(*operator, names, &uri[at..end], &mut variables)?;
                    at = end;
                }
            }
        }
        (at == uri.len()).then_some(variables)
    }
}

/// Parses the inside of an expression (between the braces).
fn expression(inside: &str) -> Result<Part, TemplateError> {
    let fail = |message: String| Err(TemplateError(message));
    let mut chars = inside.chars();
    let (operator, list) = match chars.next().and_then(Operator::of) {
        Some(operator) => (operator, chars.as_str()),
        None => (Operator::Simple, inside),
    };
    if list.is_empty() {
        return fail(format!("has an expression `{{{inside}}}` with no variable"));
    }
    let mut names = Vec::new();
    for name in list.split(',') {
        if name.ends_with('*') || name.contains(':') {
            return fail(format!(
                "uses a prefix or explode modifier in `{{{inside}}}`, which Corral does not support (use simple expressions such as `{{name}}`)"
            ));
        }
        let valid = !name.is_empty()
            && !name.starts_with('.')
            && !name.ends_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'%'));
        if !valid {
            return fail(format!(
                "has an invalid variable name `{name}` in `{{{inside}}}`"
            ));
        }
        names.push(name.to_owned());
    }
    Ok(Part::Expression { operator, names })
}

/// How much of `text` a query expression (`{?a}`, `{&a}`) claims: its
/// pairs up to the first of a name it does not have, which belongs to the
/// next expression (`{?q}{&page}` against `?q=a&page=3`). All of it for
/// other operators.
fn claimed(operator: Operator, names: &[String], text: &str) -> usize {
    if !matches!(operator, Operator::Query | Operator::QueryContinuation) {
        return text.len();
    }
    let Some(body) = operator
        .prefix()
        .and_then(|prefix| text.strip_prefix(prefix as char))
    else {
        return 0;
    };
    // Each pair with the separator (or prefix) before it.
    let mut end = 0;
    for pair in body.split('&') {
        let name = pair.split_once('=').map_or(pair, |(name, _)| name);
        if !names.iter().any(|n| n == name) {
            break;
        }
        end += 1 + pair.len();
    }
    end.min(text.len())
}

/// Splits one expression's expansion `text` into its variables.
fn split(
    operator: Operator,
    names: &[String],
    text: &str,
    variables: &mut Vec<(String, String)>,
) -> Option<()> {
    if text.is_empty() {
        // Every variable undefined: an expression may expand to nothing.
        return Some(());
    }
    let body = match operator.prefix() {
        Some(prefix) => text.strip_prefix(prefix as char)?,
        None => text,
    };
    match operator {
        Operator::Simple | Operator::Reserved | Operator::Fragment => {
            for (name, value) in names.iter().zip(body.splitn(names.len(), ',')) {
                variables.push((name.clone(), value.to_owned()));
            }
        }
        Operator::Label | Operator::Path => {
            let separator = operator.prefix().expect("has one") as char;
            for (name, value) in names.iter().zip(body.splitn(names.len(), separator)) {
                variables.push((name.clone(), value.to_owned()));
            }
        }
        Operator::PathParameter | Operator::Query | Operator::QueryContinuation => {
            let separator = if operator == Operator::PathParameter {
                ';'
            } else {
                '&'
            };
            for pair in body.split(separator) {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                if !names.iter().any(|n| n == name) {
                    return None;
                }
                variables.push((name.to_owned(), value.to_owned()));
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template).unwrap().variables(uri)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn simple_expressions_match_one_segment() {
        assert_eq!(
            vars("handbook://{section}", "handbook://intro"),
            Some(pairs(&[("section", "intro")]))
        );
        assert_eq!(
            vars("handbook://{section}", "handbook://a/b"),
            None,
            "`/` is reserved"
        );
        assert_eq!(vars("handbook://{section}", "other://intro"), None);
        assert_eq!(
            vars("test://template/{id}/data", "test://template/123/data"),
            Some(pairs(&[("id", "123")]))
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template/123/data/more"),
            None
        );
        assert_eq!(
            vars("x://{a}-{b}", "x://x-y-z"),
            Some(pairs(&[("a", "x"), ("b", "y-z")]))
        );
        assert_eq!(
            vars("x://{a}.txt", "x://a.b.txt"),
            Some(pairs(&[("a", "a.b")]))
        );
        assert_eq!(
            vars("x://{a,b}", "x://1,2"),
            Some(pairs(&[("a", "1"), ("b", "2")]))
        );
    }

    #[test]
    fn operators_match_their_expansions() {
        assert_eq!(
            vars("file:///{+path}", "file:///a/b/c.md"),
            Some(pairs(&[("path", "a/b/c.md")]))
        );
        assert_eq!(
            vars("x://doc{#frag}", "x://doc#top"),
            Some(pairs(&[("frag", "top")]))
        );
        assert_eq!(vars("x://doc{#frag}", "x://doc"), Some(vec![]));
        assert_eq!(
            vars("x://h{/a,b}", "x://h/1/2"),
            Some(pairs(&[("a", "1"), ("b", "2")]))
        );
        assert_eq!(
            vars("x://f{.ext}", "x://f.md"),
            Some(pairs(&[("ext", "md")]))
        );
        assert_eq!(vars("x://m{;v}", "x://m;v=2"), Some(pairs(&[("v", "2")])));
        assert_eq!(
            vars("x://s{?q,page}", "x://s?q=rust&page=2"),
            Some(pairs(&[("q", "rust"), ("page", "2")]))
        );
        assert_eq!(
            vars("x://s{?q}", "x://s?other=1"),
            None,
            "an undeclared name"
        );
        assert_eq!(
            vars("x://s{?q}{&page}", "x://s?q=a&page=3"),
            Some(pairs(&[("q", "a"), ("page", "3")]))
        );
    }

    #[test]
    fn what_the_contract_does_not_allow_is_refused() {
        for (template, problem) in [
            ("x://{a*}", "explode"),
            ("x://{a:3}", "prefix"),
            ("x://{a", "never closed"),
            ("x://a}", "no `{`"),
            ("x://{}", "no variable"),
            ("x://{a b}", "invalid variable name"),
            ("x:// {a}", "outside an expression"),
            ("", "empty"),
        ] {
            let err = UriTemplate::parse(template).unwrap_err().to_string();
            assert!(err.contains(problem), "{template}: {err}");
        }
        let long = format!("x://{}", "a".repeat(MAX_TEMPLATE_BYTES));
        assert!(
            UriTemplate::parse(&long)
                .unwrap_err()
                .to_string()
                .contains("longer than 1024")
        );
    }

    #[test]
    fn catastrophic_templates_and_long_uris_stay_fast() {
        // What makes a backtracking matcher exponential: many adjacent
        // expressions over the same characters, and a URI that almost
        // matches.
        let adjacent = format!("x://{}!", "{a}a".repeat(200));
        let reserved = format!("x://{}!", "{+a}/".repeat(200));
        let uri = format!("x://{}", "a/".repeat(1_000));
        let started = Instant::now();
        for template in [&adjacent, &reserved] {
            let template = UriTemplate::parse(&template[..template.len().min(MAX_TEMPLATE_BYTES)]);
            if let Ok(template) = template {
                for _ in 0..100 {
                    assert!(!template.matches(&uri));
                    assert!(!template.matches(&"a".repeat(2_048)));
                }
            }
        }
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "{:?}",
            started.elapsed()
        );
    }
}
