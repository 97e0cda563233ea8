//! Content items of a tool result.

/// Who a piece of content is meant for (MCP `Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints to the client about how to use a piece of content.
///
/// ```
/// use corral_sdk::{Annotations, Content, Role};
/// let c = Content::text("for the model only")
///     .with_annotations(Annotations::new().audience([Role::Assistant]).priority(0.5));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Annotations {
    /// Who the content is for; empty means unspecified.
    pub audience: Vec<Role>,
    /// Importance from 0.0 (least) to 1.0 (most).
    pub priority: Option<f64>,
    /// ISO 8601 timestamp of the last modification, e.g. `2025-05-03T14:30:00Z`.
    pub last_modified: Option<String>,
}

impl Annotations {
    /// Empty annotations.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets who the content is for.
    pub fn audience(mut self, roles: impl IntoIterator<Item = Role>) -> Self {
        self.audience = roles.into_iter().collect();
        self
    }

    /// Sets the importance, from 0.0 (least) to 1.0 (most).
    pub fn priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Sets the ISO 8601 timestamp of the last modification.
    pub fn last_modified(mut self, timestamp: impl Into<String>) -> Self {
        self.last_modified = Some(timestamp.into());
        self
    }
}

/// A link to a resource the client may fetch (MCP `resource_link`).
///
/// ```
/// use corral_sdk::ResourceLink;
/// let link = ResourceLink::new("https://example.com/report.csv", "report")
///     .mime_type("text/csv")
///     .description("The full report");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// A short name for the resource.
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What the resource is.
    pub description: Option<String>,
    /// The resource's MIME type.
    pub mime_type: Option<String>,
    /// Size in bytes, if known.
    pub size: Option<u64>,
    /// Hints for the client.
    pub annotations: Option<Annotations>,
}

impl ResourceLink {
    /// A link to `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
        }
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// Sets the annotations.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

/// The contents of an embedded resource.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceContents {
    /// Text contents.
    Text(String),
    /// Binary contents (the host base64-encodes them as `blob`).
    Blob(Vec<u8>),
}

/// A resource embedded in a result (MCP `resource` content).
///
/// ```
/// use corral_sdk::EmbeddedResource;
/// let csv = EmbeddedResource::text("report://today.csv", "a,b\n1,2\n").mime_type("text/csv");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// The resource's MIME type.
    pub mime_type: Option<String>,
    /// The contents.
    pub contents: ResourceContents,
    /// Hints for the client.
    pub annotations: Option<Annotations>,
}

impl EmbeddedResource {
    /// A text resource.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            contents: ResourceContents::Text(text.into()),
            annotations: None,
        }
    }

    /// A binary resource.
    pub fn blob(uri: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            contents: ResourceContents::Blob(data.into()),
            annotations: None,
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the annotations.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

/// One item of a tool result's `content` list.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Hints for the client.
        annotations: Option<Annotations>,
    },
    /// An image (the host base64-encodes `data`).
    Image {
        /// The encoded image, e.g. PNG bytes.
        data: Vec<u8>,
        /// e.g. `image/png`.
        mime_type: String,
        /// Hints for the client.
        annotations: Option<Annotations>,
    },
    /// Audio (the host base64-encodes `data`).
    Audio {
        /// The encoded audio, e.g. WAV bytes.
        data: Vec<u8>,
        /// e.g. `audio/wav`.
        mime_type: String,
        /// Hints for the client.
        annotations: Option<Annotations>,
    },
    /// A link to a resource.
    ResourceLink(ResourceLink),
    /// An embedded resource.
    Resource(EmbeddedResource),
}

impl Content {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text {
            text: text.into(),
            annotations: None,
        }
    }

    /// Image content, e.g. `Content::image(png_bytes, "image/png")`.
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
        }
    }

    /// Audio content, e.g. `Content::audio(wav_bytes, "audio/wav")`.
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
        }
    }

    /// Replaces the annotations of this item.
    pub fn with_annotations(mut self, new: Annotations) -> Self {
        match &mut self {
            Content::Text { annotations, .. }
            | Content::Image { annotations, .. }
            | Content::Audio { annotations, .. }
            | Content::ResourceLink(ResourceLink { annotations, .. })
            | Content::Resource(EmbeddedResource { annotations, .. }) => *annotations = Some(new),
        }
        self
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

impl From<ResourceLink> for Content {
    fn from(link: ResourceLink) -> Self {
        Content::ResourceLink(link)
    }
}

impl From<EmbeddedResource> for Content {
    fn from(resource: EmbeddedResource) -> Self {
        Content::Resource(resource)
    }
}
