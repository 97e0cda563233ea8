//! Protocol revisions and what each one allows on the wire.
//!
//! Every difference between revisions that the server honours is a method
//! here, so shaping code asks "does this revision have X?" instead of
//! comparing version strings.
//!
//! Two eras share this type. The legacy revisions (2024-11-05 .. 2025-11-25)
//! are negotiated once per session by `initialize`. The stateless revision
//! 2026-07-28 has no handshake: every request names it in
//! `_meta["io.modelcontextprotocol/protocolVersion"]`, and `initialize` never
//! selects it.

use std::fmt;

/// An MCP protocol revision the server speaks, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

impl Revision {
    /// Every revision negotiable through `initialize`, oldest first.
    pub const LEGACY: [Revision; 4] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
    ];

    /// The newest revision negotiable through `initialize`.
    pub const NEWEST_LEGACY: Revision = Revision::V2025_11_25;

    /// Every stateless revision, selectable per request through `_meta`
    /// (never through `initialize`), oldest first.
    pub const STATELESS: [Revision; 1] = [Revision::V2026_07_28];

    /// Every revision the server speaks, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The revision's date string, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a revision date string; `None` for revisions this server does not know.
    pub fn parse(version: &str) -> Option<Revision> {
        Self::ALL.into_iter().find(|r| r.as_str() == version)
    }

    /// The revision to answer an `initialize` with: the client's when it is a
    /// supported legacy revision, otherwise the newest legacy one (the spec's
    /// negotiation rule; the client decides whether it can live with it). A
    /// stateless revision is never negotiated: asking for it gets the newest
    /// legacy revision too.
    pub fn negotiate(requested: Option<&str>) -> Revision {
        requested
            .and_then(Revision::parse)
            .filter(|revision| !revision.is_stateless())
            .unwrap_or(Revision::NEWEST_LEGACY)
    }

    /// The stateless revision named by a request's `_meta`, when this server
    /// speaks it; `None` for unknown and for legacy versions (those need
    /// `initialize`).
    pub fn stateless(version: &str) -> Option<Revision> {
        Revision::parse(version).filter(|revision| revision.is_stateless())
    }

    /// No handshake and no session: each request carries its revision and
    /// client capabilities in `_meta`, every result carries `resultType`,
    /// `ping` and `logging/setLevel` are gone, and list changes go only to
    /// `subscriptions/listen` streams.
    pub fn is_stateless(self) -> bool {
        self >= Revision::V2026_07_28
    }

    /// JSON-RPC batches were required by 2025-03-26 only; 2025-06-18 removed them.
    pub fn has_batches(self) -> bool {
        self == Revision::V2025_03_26
    }

    /// Tool annotations (readOnlyHint, ...) and audio content arrived in 2025-03-26.
    pub fn has_tool_annotations(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// Audio content arrived in 2025-03-26.
    pub fn has_audio(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// `title`, `outputSchema`, `structuredContent`, `resource_link`, and
    /// `lastModified` in content annotations arrived in 2025-06-18.
    pub fn has_structured_output(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Tool `icons` arrived in 2025-11-25 (and stay in 2026-07-28).
    pub fn has_icons(self) -> bool {
        self >= Revision::V2025_11_25
    }

    /// Tool `execution` (`taskSupport`) exists in 2025-11-25 only: the final
    /// 2026-07-28 text moved tasks out of the core protocol, and its `Tool`
    /// has no `execution`.
    pub fn has_task_support(self) -> bool {
        self == Revision::V2025_11_25
    }

    /// `structuredContent` may be any JSON value (an array, a string, ...)
    /// from 2026-07-28 on; before, it is a JSON object.
    pub fn has_structured_content_of_any_type(self) -> bool {
        self >= Revision::V2026_07_28
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_answers_known_versions_and_falls_back_to_newest() {
        for revision in Revision::LEGACY {
            assert_eq!(Revision::negotiate(Some(revision.as_str())), revision);
        }
        assert_eq!(
            Revision::negotiate(Some("2099-01-01")),
            Revision::NEWEST_LEGACY
        );
        assert_eq!(
            Revision::negotiate(Some("garbage")),
            Revision::NEWEST_LEGACY
        );
        assert_eq!(Revision::negotiate(None), Revision::NEWEST_LEGACY);
    }

    #[test]
    fn the_stateless_revision_is_never_negotiated() {
        assert_eq!(
            Revision::negotiate(Some("2026-07-28")),
            Revision::NEWEST_LEGACY
        );
        assert_eq!(
            Revision::stateless("2026-07-28"),
            Some(Revision::V2026_07_28)
        );
        for revision in Revision::LEGACY {
            assert!(!revision.is_stateless());
            assert_eq!(Revision::stateless(revision.as_str()), None);
        }
        assert!(!Revision::V2026_07_28.has_batches());
        assert!(Revision::V2026_07_28.has_icons());
        assert!(!Revision::V2026_07_28.has_task_support());
        assert!(Revision::V2026_07_28.has_structured_content_of_any_type());
        assert!(!Revision::V2025_11_25.has_structured_content_of_any_type());
    }

    #[test]
    fn only_2025_03_26_has_batches() {
        let with: Vec<_> = Revision::LEGACY
            .into_iter()
            .filter(|r| r.has_batches())
            .collect();
        assert_eq!(with, [Revision::V2025_03_26]);
    }
}
