//! Resources: documents a client reads by URI, and resource templates, URI
//! patterns whose matching URIs a plugin can read (MCP `resources/*`).

use crate::{Annotations, Icon, ResourceContents};

/// A resource as served to clients, after validation.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDef {
    /// The URI its plugin gives it (never renamed: see the catalog's rule
    /// for a URI two plugins claim).
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// Size of the contents in bytes, if known.
    pub size: Option<u64>,
    pub annotations: Option<Annotations>,
    pub icons: Vec<Icon>,
    /// Bytes of host memory one copy of this definition takes: what each
    /// `resources/list` answer that carries it costs, counted against the
    /// answer's budget.
    pub held_bytes: usize,
}

/// A resource template as served to clients, after validation.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceTemplateDef {
    /// An RFC 6570 URI template, as its plugin gives it.
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub annotations: Option<Annotations>,
    pub icons: Vec<Icon>,
    /// As [`ResourceDef::held_bytes`].
    pub held_bytes: usize,
}

/// One item of a read's result (MCP `TextResourceContents` or
/// `BlobResourceContents`).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceItem {
    /// The URI of this item: the one read, or one under it.
    pub uri: String,
    pub mime_type: Option<String>,
    pub contents: ResourceContents,
}

/// Why a read has no contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// No plugin serves the URI, or the plugin that does said it has no
    /// resource there: the protocol's "resource not found".
    NotFound,
    /// The read failed (the plugin said so, trapped, or hit a limit): the
    /// text says why, for the client (an internal error).
    Failed(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotFound => f.write_str("resource not found"),
            ReadError::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ReadError {}
