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
//! `{a}-{b}` matches `x-y-z` with `a = x`, `b = y-z`.
//!
//! Every byte of the URI is looked at a bounded number of times, whatever
//! the number of expressions: an expression reads the URI only as far as
//! the text it takes (and the literal after it), so that the next part
//! starts where it stopped, or the match fails there. A query expression
//! reads only the pairs it claims, and of the first pair it does not, no
//! more than its longest name. Names are looked up in a sorted index, not
//! one by one. So matching costs at most [`UNITS_PER_BYTE`] work units per
//! byte of the URI and the template ([`UriTemplate::matches_counting`]
//! counts them), and a reader of many templates can bound its work across
//! all of them (see the `corral` crate's catalog).

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
    Expression(Expression),
}

/// One `{...}` of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expression {
    operator: Operator,
    names: Vec<String>,
    /// Indexes into `names` in the names' order, for a lookup in
    /// logarithmic time; empty when there are few names (looked at one by
    /// one).
    sorted: Box<[u16]>,
    /// The longest name's length in bytes: a longer one is none of them,
    /// found out without reading further.
    longest: usize,
}

/// Expressions with more names than this get a sorted index.
const SCANNED_NAMES: usize = 4;

impl Expression {
    fn new(operator: Operator, names: Vec<String>) -> Expression {
        let longest = names.iter().map(String::len).max().unwrap_or(0);
        let sorted = if names.len() > SCANNED_NAMES {
            // A template of at most 1,024 bytes has fewer than 512 names.
            let mut sorted: Vec<u16> = (0..names.len() as u16).collect();
            sorted.sort_by(|&a, &b| names[a as usize].cmp(&names[b as usize]));
            sorted.into_boxed_slice()
        } else {
            Box::default()
        };
        Expression {
            operator,
            names,
            sorted,
            longest,
        }
    }

    /// Whether `name` is one of the expression's names; adds what the
    /// lookup cost to `work` (at most the longest name's length per name
    /// compared, and a logarithmic number of names).
    fn has(&self, name: &[u8], work: &mut u64) -> bool {
        if name.len() > self.longest {
            *work += 1;
            return false;
        }
        let cost = name.len() as u64 + 1;
        if self.sorted.is_empty() {
            *work += cost * self.names.len() as u64;
            return self.names.iter().any(|n| n.as_bytes() == name);
        }
        let (mut low, mut high) = (0, self.sorted.len());
        while low < high {
            *work += cost;
            let middle = (low + high) / 2;
            match self.names[self.sorted[middle] as usize]
                .as_bytes()
                .cmp(name)
            {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }
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

    /// Whether the expansion is `name=value` pairs that a following
    /// expression may share (`{?q}{&page}`).
    fn is_query(self) -> bool {
        matches!(self, Operator::Query | Operator::QueryContinuation)
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
            Part::Expression(expression) => expression.names.iter().any(|n| n == name),
            Part::Literal(_) => false,
        })
    }

    /// Whether `uri` matches the template.
    pub fn matches(&self, uri: &str) -> bool {
        self.walk(uri, &mut 0, None)
    }

    /// Whether `uri` matches the template, adding the work it took to
    /// `work`: one unit per byte of the URI or the template looked at
    /// (a variable name looked up costs its length once per name compared,
    /// a logarithmic number). Linear: at most [`UNITS_PER_BYTE`] units per
    /// byte of the URI and the template together.
    pub fn matches_counting(&self, uri: &str, work: &mut u64) -> bool {
        self.walk(uri, work, None)
    }

    /// The variables `uri` gives the template (values as in the URI,
    /// percent-encoded), or `None` when it does not match. Linear in the
    /// lengths of `uri` and the template.
    pub fn variables(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut variables = Vec::new();
        self.walk(uri, &mut 0, Some(&mut variables))
            .then_some(variables)
    }

    /// The one pass: each part in order, never going back further than
    /// the start of the part it matches, and every byte of the URI looked
    /// at a bounded number of times (see the module's documentation).
    fn walk(&self, uri: &str, work: &mut u64, mut out: Option<&mut Vec<(String, String)>>) -> bool {
        let bytes = uri.as_bytes();
        let mut at = 0;
        for (index, part) in self.parts.iter().enumerate() {
            // What a part costs whatever its length.
            *work += PART_UNITS;
            let expression = match part {
                Part::Literal(literal) => {
                    *work += literal.len() as u64;
                    if !bytes[at..].starts_with(literal.as_bytes()) {
                        return false;
                    }
                    at += literal.len();
                    continue;
                }
                Part::Expression(expression) => expression,
            };
            let operator = expression.operator;
            // Where the expression's text ends at the latest: where the
            // literal after it first follows (every byte before it one the
            // operator allows), or as far as those bytes go.
            let end = match self.parts.get(index + 1) {
                Some(Part::Literal(next)) => {
                    let rest = &uri[at..];
                    let found = if rest.starts_with(next.as_str()) {
                        Some(0)
                    } else if next.len() == 1 {
                        rest.find(char::from(next.as_bytes()[0]))
                    } else {
                        rest.find(next.as_str())
                    };
                    let Some(offset) = found else {
                        *work += (bytes.len() - at + 2 * next.len()) as u64;
                        return false;
                    };
                    *work += (2 * offset + 2 * next.len()) as u64;
                    if !bytes[at..at + offset].iter().all(|&b| operator.allows(b)) {
                        return false;
                    }
                    at + offset
                }
                // A query expression reads its pairs only as far as it
                // claims them (`claim_query` stops at the first byte it
                // does not allow): the rest is the next expression's, to
                // be read again by it.
                _ if operator.is_query() => bytes.len(),
                _ => {
                    let run = bytes[at..]
                        .iter()
                        .position(|&b| !operator.allows(b))
                        .map_or(bytes.len(), |n| at + n);
                    *work += (run - at + 1) as u64;
                    run
                }
            };
            if operator.is_query() {
                at = claim_query(expression, uri, at, end, work, &mut out);
            } else {
                if !split(expression, &uri[at..end], work, &mut out) {
                    return false;
                }
                at = end;
            }
        }
        at == bytes.len()
    }
}

/// The most work units matching one URI against one template costs, per
/// byte of the two together (the sum over its steps; the tests check it).
pub const UNITS_PER_BYTE: u64 = 16;

/// The most work one read may spend matching its URI against every
/// served template, and one call's updated URIs against its plugin's
/// (`host.resource-updated`): a few milliseconds of one core. A 2,048-byte
/// URI that nearly matches 1,000 templates of 1 KiB (the bounds of one
/// plugin; `tests/plugins/hostile-resources`) costs 3.4 million units, 3 to
/// 10 ms on a busy two-core machine (the matcher before this one, which did
/// not count, took over 200 ms).
pub const MATCH_UNITS: u64 = 4_000_000;

/// Matching that costs at most this many units runs where the request or
/// the call runs (tens of microseconds); beyond, on a blocking thread.
pub const INLINE_MATCH_UNITS: u64 = 20_000;

/// What each part of a template costs to match besides the bytes it reads
/// (a template of 1,024 bytes has at most 683 parts, since an expression
/// takes three bytes at least).
const PART_UNITS: u64 = 4;

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
    Ok(Part::Expression(Expression::new(operator, names)))
}

/// Where what a query expression (`{?a}`, `{&a}`) claims from `at` ends:
/// its pairs, no further than `end` or the first byte it does not allow,
/// up to the first of a name it does not have, which belongs to the next
/// expression (`{?q}{&page}` against `?q=a&page=3`). Each claimed pair's
/// variable goes to `out`. Reads the bytes it claims and at most the
/// longest name's length (and two) past them.
fn claim_query(
    expression: &Expression,
    uri: &str,
    at: usize,
    end: usize,
    work: &mut u64,
    out: &mut Option<&mut Vec<(String, String)>>,
) -> usize {
    let bytes = uri.as_bytes();
    let operator = expression.operator;
    let prefix = operator.prefix().expect("a query expression has one");
    *work += 1;
    if at >= end || bytes[at] != prefix {
        return at;
    }
    let mut claimed = at;
    let mut start = at + 1;
    loop {
        // The name: up to `=`, `&` or the end, and never past the longest
        // name's length (and one, to tell a longer name).
        let limit = end.min(start + expression.longest + 1);
        let mut i = start;
        while i < limit && !matches!(bytes[i], b'=' | b'&') && operator.allows(bytes[i]) {
            i += 1;
        }
        *work += (i - start + 1) as u64;
        if !expression.has(&bytes[start..i], work) {
            return claimed;
        }
        // The value: after the `=`, up to the next `&` or the end.
        let value = if i < end && bytes[i] == b'=' {
            i + 1
        } else {
            i
        };
        let mut j = value;
        while j < end && bytes[j] != b'&' && operator.allows(bytes[j]) {
            j += 1;
        }
        *work += (j - i + 1) as u64;
        if let Some(out) = out {
            out.push((uri[start..i].to_owned(), uri[value..j].to_owned()));
        }
        claimed = j;
        if j < end && bytes[j] == b'&' {
            start = j + 1;
        } else {
            return claimed;
        }
    }
}

/// Splits the expansion `text` of an expression other than a query into
/// its variables (to `out`, when given); false when it cannot be one.
fn split(
    expression: &Expression,
    text: &str,
    work: &mut u64,
    out: &mut Option<&mut Vec<(String, String)>>,
) -> bool {
    *work += text.len() as u64 + 1;
    if text.is_empty() {
        // Every variable undefined: an expression may expand to nothing.
        return true;
    }
    let operator = expression.operator;
    let names = &expression.names;
    let body = match operator.prefix() {
        Some(prefix) => match text.strip_prefix(prefix as char) {
            Some(body) => body,
            None => return false,
        },
        None => text,
    };
    match operator {
        Operator::Simple | Operator::Reserved | Operator::Fragment => {
            if let Some(out) = out {
                for (name, value) in names.iter().zip(body.splitn(names.len(), ',')) {
                    out.push((name.clone(), value.to_owned()));
                }
            }
        }
        Operator::Label | Operator::Path => {
            if let Some(out) = out {
                let separator = operator.prefix().expect("has one") as char;
                for (name, value) in names.iter().zip(body.splitn(names.len(), separator)) {
                    out.push((name.clone(), value.to_owned()));
                }
            }
        }
        Operator::PathParameter => {
            for pair in body.split(';') {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                if !expression.has(name.as_bytes(), work) {
                    return false;
                }
                if let Some(out) = out {
                    out.push((name.to_owned(), value.to_owned()));
                }
            }
        }
        Operator::Query | Operator::QueryContinuation => {
            unreachable!("a query expression is claimed by `claim_query`")
        }
    }
    true
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

    /// The matcher before it counted its work, quadratic in the worst
    /// case: what the linear one must agree with.
    fn reference(template: &UriTemplate, uri: &str) -> Option<Vec<(String, String)>> {
        fn claimed(operator: Operator, names: &[String], text: &str) -> usize {
            if !operator.is_query() {
                return text.len();
            }
            let Some(body) = operator
                .prefix()
                .and_then(|prefix| text.strip_prefix(prefix as char))
            else {
                return 0;
            };
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
        fn split(
            operator: Operator,
            names: &[String],
            text: &str,
            variables: &mut Vec<(String, String)>,
        ) -> Option<()> {
            if text.is_empty() {
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
                    let separator = operator.prefix().unwrap() as char;
                    for (name, value) in names.iter().zip(body.splitn(names.len(), separator)) {
                        variables.push((name.clone(), value.to_owned()));
                    }
                }
                _ => {
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
        let bytes = uri.as_bytes();
        let mut at = 0;
        let mut variables = Vec::new();
        for (index, part) in template.parts.iter().enumerate() {
            match part {
                Part::Literal(literal) => {
                    if !uri[at..].starts_with(literal.as_str()) {
                        return None;
                    }
                    at += literal.len();
                }
                Part::Expression(Expression {
                    operator, names, ..
                }) => {
                    let run = bytes[at..]
                        .iter()
                        .position(|&b| !operator.allows(b))
                        .map_or(bytes.len(), |n| at + n);
                    let end = match template.parts.get(index + 1) {
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

    /// A small deterministic generator (xorshift), so that the comparison
    /// below is the same at every run.
    struct Dice(u64);

    impl Dice {
        fn roll(&mut self, sides: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % sides as u64) as usize
        }

        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.roll(from.len())]
        }
    }

    #[test]
    fn the_linear_matcher_agrees_with_the_one_it_replaced() {
        let mut dice = Dice(0x5eed_cafe_f00d_0001);
        let expressions = [
            "{a}",
            "{b}",
            "{a,b}",
            "{+a}",
            "{#a}",
            "{/a}",
            "{/a,b}",
            "{.a}",
            "{;a}",
            "{;a,b}",
            "{?a}",
            "{?a,b}",
            "{&a}",
            "{&b}",
            "{&a,b,c,d,e,f}",
            "{?a,b,c,d,e,f}",
            "{;a,b,c,d,e,f}",
        ];
        let literals = [
            "-", "/", ".", "a", "ab", "=", "&", "?", ";", ",", "!", "x/", "é",
        ];
        let pieces = [
            "a", "b", "c", "-", "/", ".", "=", "&", "?", ";", ",", "!", "%", "a=1", "b=2", "&a=",
            "?a=x", ";b", "é", "ab", "x/",
        ];
        let mut matched = 0;
        for _ in 0..20_000 {
            let mut template = String::from("x://");
            for _ in 0..dice.roll(5) + 1 {
                if dice.roll(2) == 0 {
                    template.push_str(dice.pick(&literals));
                } else {
                    template.push_str(dice.pick(&expressions));
                }
            }
            let template = UriTemplate::parse(&template).unwrap();
            for _ in 0..10 {
                let mut uri = String::from("x://");
                for _ in 0..dice.roll(8) {
                    uri.push_str(dice.pick(&pieces));
                }
                let expected = reference(&template, &uri);
                assert_eq!(template.variables(&uri), expected, "{template:?} {uri}");
                assert_eq!(template.matches(&uri), expected.is_some());
                matched += usize::from(expected.is_some());
            }
        }
        assert!(
            matched > 5_000,
            "the comparison matched only {matched} URIs"
        );
    }

    /// Templates and URIs that make a matcher rescan the rest of the URI
    /// for every expression, or look names up one by one: each as long as
    /// the bounds allow (templates 1,024 bytes, URIs 2,048), and a URI
    /// that nearly matches.
    fn worst_cases(uri_bytes: usize) -> Vec<(String, String)> {
        let fill = |unit: &str, bytes: usize| unit.repeat(bytes / unit.len());
        let names: Vec<String> = (0..200).map(|i| format!("n{i}")).collect();
        let many = names.join(",");
        let last = names.last().unwrap();
        let cut = |text: String| {
            let mut text = text;
            while text.len() > MAX_TEMPLATE_BYTES {
                // Drop whole expressions from the middle.
                let at = text[..text.len() - 2].rfind('{').unwrap();
                let close = at + text[at..].find('}').unwrap() + 1;
                text.replace_range(at..close, "");
            }
            text
        };
        vec![
            // An expression before every literal `a`, over a URI of `a`s.
            (
                cut(format!("x://{}!", "{a}a".repeat(256))),
                format!("x://{}", fill("a", uri_bytes - 4)),
            ),
            // Reserved expressions that each reach the end.
            (
                cut(format!("x://{}!", "{+a}/".repeat(256))),
                format!("x://{}", fill("a/", uri_bytes - 4)),
            ),
            // Adjacent expressions, the first taking everything.
            (
                cut(format!("x://{}!", "{a}".repeat(340))),
                format!("x://{}", fill("a", uri_bytes - 4)),
            ),
            // Query expressions that each claim nothing of a long pair.
            (
                cut(format!("x://{}", "{?a}".repeat(256))),
                format!("x://?{}", fill("b", uri_bytes - 5)),
            ),
            (
                cut(format!("x://{}", "{&a}".repeat(256))),
                format!("x://{}", fill("&b=1", uri_bytes - 4)),
            ),
            // One query of many names, and many pairs naming the last.
            (
                cut(format!("x://{{?{many}}}!")),
                format!("x://?{}", fill(&format!("{last}=1&"), uri_bytes - 5)),
            ),
            // Path parameters of many names.
            (
                cut(format!("x://{{;{many}}}!")),
                format!("x://{}", fill(&format!(";{last}"), uri_bytes - 4)),
            ),
            // A long literal, then an expression whose literal never comes.
            (
                format!("x://{}{{+a}}!", "a".repeat(MAX_TEMPLATE_BYTES - 10)),
                format!("x://{}", fill("a", uri_bytes - 4)),
            ),
        ]
    }

    fn work(template: &UriTemplate, uri: &str) -> u64 {
        let mut work = 0;
        template.matches_counting(uri, &mut work);
        work
    }

    #[test]
    fn matching_work_is_linear_in_the_uri_and_the_template() {
        for ((template, short), (_, long)) in worst_cases(1_024).into_iter().zip(worst_cases(2_048))
        {
            assert!(template.len() <= MAX_TEMPLATE_BYTES, "{template}");
            let parsed = UriTemplate::parse(&template).unwrap();
            let (at_short, at_long) = (work(&parsed, &short), work(&parsed, &long));
            let bytes = (template.len() + long.len()) as u64;
            assert!(
                at_long <= UNITS_PER_BYTE * bytes,
                "{template}: {at_long} units for {bytes} bytes"
            );
            // Twice the URI costs at most about twice the work (a
            // quadratic matcher's would be four times).
            assert!(
                at_long <= 2 * at_short + 2 * template.len() as u64,
                "{template}: {at_short} units, then {at_long} for twice the URI"
            );
        }
    }

    #[test]
    fn matching_work_does_not_grow_with_the_number_of_expressions() {
        // The case that made reads slow: the old matcher scanned the rest
        // of a 2,048-byte URI once per expression (over 500,000 units).
        let uri = format!("x://{}", "a".repeat(2_044));
        let few = UriTemplate::parse("x://{a}a{a}a!").unwrap();
        let many = UriTemplate::parse(&format!("x://{}!", "{a}a".repeat(254))).unwrap();
        let (few, many) = (work(&few, &uri), work(&many, &uri));
        assert!(many <= 4 * (1_024 + 2_048), "{many} units");
        // What the 252 more expressions cost is their own length's worth,
        // not the URI's once each.
        assert!(
            many < few + 4 * 1_024,
            "{few} units with 2 expressions, {many} with 254"
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
