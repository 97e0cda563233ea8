//! Protocol revisions and what each one allows on the wire.
//!
//! Every difference between revisions that the server honours is a method
//! here, so shaping code asks "does this revision have X?" instead of
//! comparing version strings.

use std::fmt;

/// An MCP protocol revision the server speaks, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
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

    /// The revision's date string, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
        }
    }

    /// Parses a revision date string; `None` for revisions this server does not know.
    pub fn parse(version: &str) -> Option<Revision> {
        Self::LEGACY.into_iter().find(|r| r.as_str() == version)
    }

    /// The revision to answer an `initialize` with: the client's when supported,
    /// otherwise the newest this server has (the spec's negotiation rule; the
    /// client decides whether it can live with it).
    pub fn negotiate(requested: Option<&str>) -> Revision {
        requested
            .and_then(Revision::parse)
            .unwrap_or(Revision::NEWEST_LEGACY)
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

    /// Tool `icons` and `execution` arrived in 2025-11-25.
    pub fn has_icons_and_execution(self) -> bool {
        self >= Revision::V2025_11_25
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
    fn only_2025_03_26_has_batches() {
        let with: Vec<_> = Revision::LEGACY
            .into_iter()
            .filter(|r| r.has_batches())
            .collect();
        assert_eq!(with, [Revision::V2025_03_26]);
    }
}
