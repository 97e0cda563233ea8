//! Trace and span ids: new random ones, and the remote parent's from a
//! W3C `traceparent` (Trace Context Level 1), which a client sends in a
//! request's `_meta` or an HTTP header to have Corral's spans continue its
//! trace.

/// A remote parent span: the trace it belongs to, its id, and its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoteParent {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// The W3C trace flags. Bit 0, `sampled`, says whether the caller
    /// records its trace: when not, Corral's spans of that trace are not
    /// exported either (the default parent-based sampler of OpenTelemetry's
    /// SDKs).
    pub flags: u8,
}

/// Parses a `traceparent` value: `VERSION-TRACEID-PARENTID-FLAGS`, each
/// lower-case hex, version `ff` invalid, ids not all zero. A later version
/// may append fields after a `-`; version `00` may not. `None` for
/// anything else: an invalid value is ignored and the trace starts here.
pub fn parse_traceparent(value: &str) -> Option<RemoteParent> {
    let value = value.trim_matches([' ', '\t']);
    let bytes = value.as_bytes();
    if bytes.len() < 55 {
        return None;
    }
    let version = hex_byte(&bytes[0..2])?;
    if version == 0xff
        || (version == 0 && bytes.len() != 55)
        || (bytes.len() > 55 && bytes[55] != b'-')
    {
        return None;
    }
    if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
        return None;
    }
    let mut trace_id = [0u8; 16];
    for (i, byte) in trace_id.iter_mut().enumerate() {
        *byte = hex_byte(&bytes[3 + 2 * i..5 + 2 * i])?;
    }
    let mut span_id = [0u8; 8];
    for (i, byte) in span_id.iter_mut().enumerate() {
        *byte = hex_byte(&bytes[36 + 2 * i..38 + 2 * i])?;
    }
    let flags = hex_byte(&bytes[53..55])?;
    if trace_id == [0; 16] || span_id == [0; 8] {
        return None;
    }
    Some(RemoteParent {
        trace_id,
        span_id,
        flags,
    })
}

/// Two lower-case hex digits.
fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    Some(digit(pair[0])? << 4 | digit(pair[1])?)
}

/// A `tracestate` kept with the trace: at most 512 bytes of printable
/// ASCII (the limit the W3C spec lets a vendor cut to); anything else is
/// dropped rather than passed on.
pub fn clean_tracestate(value: &str) -> Option<String> {
    let value = value.trim_matches([' ', '\t']);
    (!value.is_empty() && value.len() <= 512 && value.bytes().all(|b| (0x20..0x7f).contains(&b)))
        .then(|| value.to_owned())
}

/// A new random trace id (never all zero).
pub fn new_trace_id() -> [u8; 16] {
    random_nonzero()
}

/// A new random span id (never all zero).
pub fn new_span_id() -> [u8; 8] {
    random_nonzero()
}

fn random_nonzero<const N: usize>() -> [u8; N] {
    let mut id = [0u8; N];
    while id == [0u8; N] {
        // The kernel's generator: a failure here means no randomness at
        // all, which would have stopped the process long before.
        getrandom::fill(&mut id).expect("the operating system's random numbers");
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_gives_its_ids_and_flags() {
        let parent = parse_traceparent(VALID).unwrap();
        assert_eq!(
            parent.trace_id,
            [
                0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e,
                0x47, 0x36
            ]
        );
        assert_eq!(
            parent.span_id,
            [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
        assert_eq!(parent.flags, 1);
        let unsampled = parse_traceparent(&VALID.replace("-01", "-00")).unwrap();
        assert_eq!(unsampled.flags, 0);
        // Surrounding blanks are allowed (an HTTP header's OWS).
        assert_eq!(parse_traceparent(&format!(" {VALID}\t")), Some(parent));
    }

    #[test]
    fn a_later_version_may_carry_more_fields() {
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-whatever";
        assert!(parse_traceparent(later).is_some());
        assert!(parse_traceparent(&later[..55]).is_some());
        // ... after a dash only.
        assert!(
            parse_traceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x").is_none()
        );
    }

    #[test]
    fn invalid_traceparents_are_ignored() {
        for invalid in [
            "",
            "garbage",
            // All-zero trace id, all-zero span id.
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            // Version ff, and version 00 with more after it.
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            // Upper case, non-hex, wrong lengths, wrong separators.
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "0-04bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0é",
        ] {
            assert_eq!(parse_traceparent(invalid), None, "{invalid:?}");
        }
    }

    #[test]
    fn a_tracestate_is_kept_only_when_printable_and_short() {
        assert_eq!(
            clean_tracestate(" congo=t61rcWkgMzE ").as_deref(),
            Some("congo=t61rcWkgMzE")
        );
        assert_eq!(clean_tracestate(""), None);
        assert_eq!(clean_tracestate("a=\u{7f}"), None);
        assert_eq!(clean_tracestate("a=\nb"), None);
        assert_eq!(clean_tracestate(&"a".repeat(513)), None);
    }

    #[test]
    fn new_ids_are_random_and_never_zero() {
        let (a, b) = (new_trace_id(), new_trace_id());
        assert_ne!(a, [0; 16]);
        assert_ne!(a, b);
        assert_ne!(new_span_id(), [0; 8]);
        assert_ne!(new_span_id(), new_span_id());
    }
}
