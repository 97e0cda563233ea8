//! A plugin's words on their way to a client or a log: the text of a
//! failure (`read-error::failed`, `get-error::failed` and
//! `invalid-arguments`), a log or progress message, a crash report or a
//! trap's message, its captured stdout and stderr.
//!
//! Each is measured against the plugin's `output` limit, as a result is
//! (a text over it is the plugin's fault, and its note says so), and every
//! one is cut to [`SHOWN_BYTES`] whatever that limit: no client or log
//! needs a megabyte of error, and every copy of it (the message formatted,
//! the JSON-RPC error encoded, the line written) would cost host memory
//! again. What is kept is the text's beginning and its end (where a
//! traceback names the exception, where a capture says how much it
//! dropped), around `… (N bytes cut) …`.
//!
//! Every path that passes a plugin's text on calls [`shown`] or [`cut`]:
//! the bound lives here only.

use crate::units::human_bytes;

/// The most of a plugin's text passed on in one message, in bytes (before
/// the note of what was cut).
pub const SHOWN_BYTES: usize = 4 * 1024;

/// A plugin's text as it may be passed on (see [`shown`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// At most [`SHOWN_BYTES`] of the text, and a note of what was cut.
    pub text: String,
    /// How long the plugin's text was, in bytes, when that is more than
    /// the output limit; `None` within it.
    pub over_limit: Option<usize>,
}

impl Shown {
    /// Why the text is the plugin's fault, when it is over the limit
    /// `output_limit`: `a message of 100 MiB, more than the output limit
    /// of 4 MiB`.
    pub fn over_limit_note(&self, output_limit: usize) -> Option<String> {
        self.over_limit.map(|bytes| {
            format!(
                "a message of {}, more than the output limit of {}",
                human_bytes(bytes),
                human_bytes(output_limit)
            )
        })
    }
}

/// `text` measured against `output_limit` and [`cut`].
pub fn shown(text: &str, output_limit: usize) -> Shown {
    Shown {
        text: cut(text),
        over_limit: (text.len() > output_limit).then_some(text.len()),
    }
}

/// `text` whole when it holds at most [`SHOWN_BYTES`]; else its first and
/// last bytes (half of [`SHOWN_BYTES`] each, at character boundaries)
/// around `… (N bytes cut) …`. The result owns no more memory than it
/// shows, however long `text` was.
pub fn cut(text: &str) -> String {
    if text.len() <= SHOWN_BYTES {
        return text.to_owned();
    }
    let half = SHOWN_BYTES / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let note = format!("… ({} bytes cut) …", tail - head);
    let mut shown = String::with_capacity(head + note.len() + text.len() - tail);
    shown.push_str(&text[..head]);
    shown.push_str(&note);
    shown.push_str(&text[tail..]);
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_passed_on_whole() {
        assert_eq!(cut("no such unit: furlong"), "no such unit: furlong");
        let exact = "x".repeat(SHOWN_BYTES);
        assert_eq!(cut(&exact), exact);
    }

    #[test]
    fn a_long_text_keeps_its_beginning_and_its_end_and_says_how_much_was_cut() {
        let text = format!("start{}end", "F".repeat(100 << 20));
        let shown = cut(&text);
        assert!(shown.starts_with("startFFF"), "{}", &shown[..20]);
        assert!(shown.ends_with("FFFend"));
        let cut_bytes = text.len() - SHOWN_BYTES;
        assert!(
            shown.contains(&format!("… ({cut_bytes} bytes cut) …")),
            "{shown}"
        );
        assert!(shown.len() < SHOWN_BYTES + 64, "{} bytes", shown.len());
        assert!(shown.capacity() < SHOWN_BYTES + 64);
    }

    #[test]
    fn the_cut_falls_between_characters() {
        // Four-byte characters, none at the half-way points.
        let text = format!("a{}", "🦀".repeat(10_000));
        let shown = cut(&text);
        assert!(shown.len() <= SHOWN_BYTES + 40);
        let kept = shown.matches('🦀').count() * 4 + 1;
        assert!(
            shown.contains(&format!("({} bytes cut)", text.len() - kept)),
            "{shown}"
        );
    }

    #[test]
    fn a_text_over_the_output_limit_says_so() {
        let within = shown("abc", 3);
        assert_eq!(within.over_limit, None);
        assert_eq!(within.over_limit_note(3), None);
        let over = shown(&"F".repeat(5 << 20), 4 << 20);
        assert_eq!(over.over_limit, Some(5 << 20));
        assert_eq!(
            over.over_limit_note(4 << 20).unwrap(),
            "a message of 5 MiB, more than the output limit of 4 MiB"
        );
        assert!(over.text.len() < SHOWN_BYTES + 64);
    }
}
