//! The value of a header that mirrors part of a stateless request's body
//! (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), decoded as the Streamable HTTP
//! transport encodes it.
//!
//! A client sends a value that a header cannot carry as it is (non-ASCII
//! text, control characters, leading or trailing spaces, or text that
//! itself looks encoded) as `=?base64?{Base64 of its UTF-8}?=`; anything
//! else is the value itself, around which HTTP ignores spaces and tabs.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::HeaderMap;

/// What marks an encoded value, before and after its Base64 text.
const ENCODED_PREFIX: &str = "=?base64?";
const ENCODED_SUFFIX: &str = "?=";

/// The longest value decoded, in bytes as sent: beyond it a request is
/// refused rather than decoded (common proxies refuse header lines past
/// 8 KiB anyway).
pub(super) const MAX_VALUE_BYTES: usize = 16 * 1024;

/// Why a mirrored header's value cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum BadValue {
    /// The header came more than once: which one would a proxy route on?
    Repeated,
    TooLong,
    /// A byte that is neither visible ASCII, space nor tab.
    InvalidCharacters,
    /// `=?base64?...?=` around text that is not canonical, padded Base64.
    InvalidBase64,
    /// Base64 of bytes that are not UTF-8.
    NotUtf8,
}

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadValue::Repeated => f.write_str("it is sent more than once"),
            BadValue::TooLong => write!(f, "it is longer than {MAX_VALUE_BYTES} bytes"),
            BadValue::InvalidCharacters => f.write_str(
                "it holds characters a header value cannot carry as they are (send such values as =?base64?...?=)",
            ),
            BadValue::InvalidBase64 => {
                f.write_str("its =?base64?...?= text is not valid, padded Base64")
            }
            BadValue::NotUtf8 => f.write_str("its =?base64?...?= text does not decode to UTF-8"),
        }
    }
}

/// The decoded value of header `name` in `headers`: `Ok(None)` when the
/// header is absent.
pub(super) fn mirrored_value(headers: &HeaderMap, name: &str) -> Result<Option<String>, BadValue> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(BadValue::Repeated);
    }
    decode(value.as_bytes()).map(Some)
}

/// A header value as sent (bytes) to the text it carries.
fn decode(raw: &[u8]) -> Result<String, BadValue> {
    if raw.len() > MAX_VALUE_BYTES {
        return Err(BadValue::TooLong);
    }
    if !raw
        .iter()
        .all(|&byte| byte == b'\t' || (b' '..=b'~').contains(&byte))
    {
        return Err(BadValue::InvalidCharacters);
    }
    // Visible ASCII, spaces and tabs: valid UTF-8.
    let text = std::str::from_utf8(raw)
        .expect("ASCII is UTF-8")
        .trim_matches([' ', '\t']);
    let Some(encoded) = text
        .strip_prefix(ENCODED_PREFIX)
        .and_then(|rest| rest.strip_suffix(ENCODED_SUFFIX))
    else {
        // Without both markers the value is literal text.
        return Ok(text.to_string());
    };
    let bytes = STANDARD
        .decode(encoded)
        .map_err(|_| BadValue::InvalidBase64)?;
    String::from_utf8(bytes).map_err(|_| BadValue::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn encoded_values_are_decoded_and_others_are_literal() {
        let decoded = |raw: &str| decode(raw.as_bytes());
        assert_eq!(decoded("=?base64?YWRk?=").unwrap(), "add");
        assert_eq!(
            decoded("=?base64?SGVsbG8sIOS4lueVjA==?=").unwrap(),
            "Hello, 世界"
        );
        assert_eq!(decoded("=?base64?IHBhZGRlZCA=?=").unwrap(), " padded ");
        assert_eq!(decoded("=?base64??=").unwrap(), "");
        // The spec's table: a literal that looks encoded travels encoded.
        assert_eq!(
            decoded("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=").unwrap(),
            "=?base64?literal?="
        );
        // Without both markers, or with markers of another case: literal.
        for literal in [
            "SGVsbG8=",
            "=?base64?SGVsbG8=",
            "SGVsbG8=?=",
            "=?BASE64?SGVsbG8=?=",
            "=?base64?=",
        ] {
            assert_eq!(decoded(literal).unwrap(), literal);
        }
        // Spaces and tabs around a value are not part of it (RFC 9110 5.5).
        assert_eq!(decoded(" \tus-west1 \t").unwrap(), "us-west1");
        assert_eq!(decoded(" =?base64?YWRk?= ").unwrap(), "add");
    }

    #[test]
    fn undecodable_values_are_refused_with_the_reason() {
        let decoded = |raw: &[u8]| decode(raw);
        assert_eq!(decoded(b"=?base64?SGVsbG8?="), Err(BadValue::InvalidBase64));
        assert_eq!(
            decoded(b"=?base64?SGVs!!!bG8=?="),
            Err(BadValue::InvalidBase64)
        );
        // Bits past the last byte must be zero: one value, one encoding.
        assert_eq!(decoded(b"=?base64?YWRl?="), Ok("ade".into()));
        assert_eq!(decoded(b"=?base64?YR==?="), Err(BadValue::InvalidBase64));
        assert_eq!(decoded(b"=?base64?/w==?="), Err(BadValue::NotUtf8));
        assert_eq!(
            decoded("r\u{e9}gion".as_bytes()),
            Err(BadValue::InvalidCharacters)
        );
        assert_eq!(decoded(b"a\x01b"), Err(BadValue::InvalidCharacters));
        let long = format!("=?base64?{}?=", "A".repeat(MAX_VALUE_BYTES));
        assert_eq!(decoded(long.as_bytes()), Err(BadValue::TooLong));
    }

    #[test]
    fn a_header_sent_twice_is_refused_and_an_absent_one_is_none() {
        let mut headers = HeaderMap::new();
        assert_eq!(mirrored_value(&headers, "mcp-name"), Ok(None));
        headers.append("mcp-name", HeaderValue::from_static("=?base64?YWRk?="));
        assert_eq!(mirrored_value(&headers, "mcp-name"), Ok(Some("add".into())));
        headers.append("mcp-name", HeaderValue::from_static("add"));
        assert_eq!(
            mirrored_value(&headers, "mcp-name"),
            Err(BadValue::Repeated)
        );
    }
}
