//! Resources (documents at a URI) and resource templates (URI patterns).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::completion::{Completer, Completions};
use crate::content::{Annotations, ResourceContents};
use crate::tool::Icon;
use crate::uri_template::{UriTemplate, check_uri};

type Text = Cow<'static, str>;
type Reader = Box<dyn Fn() -> Result<Vec<Contents>, ReadError>>;
type TemplateReader =
    Box<dyn Fn(&str, BTreeMap<String, String>) -> Result<Vec<Contents>, ReadError>>;

/// One item of what a read returns: text or bytes at a URI.
#[derive(Debug, Clone, PartialEq)]
pub struct Contents {
    /// The URI of this item: the one read, or one under it.
    pub uri: String,
    /// e.g. `text/markdown`.
    pub mime_type: Option<String>,
    /// Text, or bytes (the host base64-encodes them as `blob`).
    pub body: ResourceContents,
}

impl Contents {
    /// Text at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            body: ResourceContents::Text(text.into()),
        }
    }

    /// Bytes at `uri`.
    pub fn blob(uri: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            body: ResourceContents::Blob(data.into()),
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// Bytes a read returns: the host base64-encodes them as `blob`.
///
/// ```
/// use corral_sdk::{Blob, Resource};
/// let logo = Resource::new("handbook://logo.png", "logo", || Blob(vec![0x89, b'P', b'N', b'G']))
///     .mime_type("image/png");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// Why a read has no contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// No resource at this URI: the client gets the protocol's "resource
    /// not found" error.
    NotFound,
    /// The read failed; the text says why and reaches the client.
    Failed(String),
}

impl ReadError {
    /// A failed read, with a message for the client.
    pub fn failed(message: impl std::fmt::Display) -> Self {
        Self::Failed(message.to_string())
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound => f.write_str("resource not found"),
            Self::Failed(message) => f.write_str(message),
        }
    }
}

impl From<String> for ReadError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

impl From<&str> for ReadError {
    fn from(message: &str) -> Self {
        Self::Failed(message.into())
    }
}

/// What a read function returns: text (`String`, `&str`), [`Blob`], one
/// [`Contents`] or a list of them, an `Option` (`None` is
/// [`ReadError::NotFound`]) or a `Result` whose error converts into a
/// [`ReadError`]. Text and bytes are placed at the URI read, with the
/// resource's MIME type.
pub trait IntoContents {
    /// The contents; an empty `uri` stands for the URI read, whose MIME type
    /// is then the resource's.
    fn into_contents(self) -> Result<Vec<Contents>, ReadError>;
}

impl IntoContents for String {
    fn into_contents(self) -> Result<Vec<Contents>, ReadError> {
        Ok(vec![Contents::text("", self)])
    }
}

impl IntoContents for &str {
    fn into_contents(self) -> Result<Vec<Contents>, ReadError> {
        Ok(vec![Contents::text("", self)])
    }
}

impl IntoContents for Cow<'static, str> {
    fn into_contents(self) -> Result<Vec<Contents>, ReadError> {
        Ok(vec![Contents::text("", self)])
    }
}

impl IntoContents for Blob {
    fn into_contents(self) -> Result<Vec<Contents>, ReadError> {
        Ok(vec![Contents::blob("", self.0)])
    }
}

impl IntoContents for Contents {
    fn into_contents(self) -> Result<Vec<Contents>, ReadError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<Contents> {
    fn into_contents(self) -> Result<Vec<Contents>, ReadError> {
        Ok(self)
    }
}

impl<T: IntoContents> IntoContents for Option<T> {
    fn into_contents(self) -> Result<Vec<Contents>, ReadError> {
        self.ok_or(ReadError::NotFound)?.into_contents()
    }
}

impl<T: IntoContents, E: Into<ReadError>> IntoContents for Result<T, E> {
    fn into_contents(self) -> Result<Vec<Contents>, ReadError> {
        self.map_err(Into::into)?.into_contents()
    }
}

/// What resources and templates describe alike.
#[derive(Default)]
pub(crate) struct Metadata {
    pub(crate) title: Option<Text>,
    pub(crate) description: Option<Text>,
    pub(crate) mime_type: Option<Text>,
    pub(crate) annotations: Option<Annotations>,
    pub(crate) icons: Vec<Icon>,
}

/// Checks a resource's or template's name as the host does.
fn check_name(kind: &str, name: &str) {
    assert!(
        (1..=128).contains(&name.chars().count()) && !name.chars().any(char::is_control),
        "{kind} name {name:?} is not 1-128 characters without control characters: Corral would not load the plugin",
    );
}

/// One resource: a document at a fixed URI, read by a function.
///
/// ```
/// use corral_sdk::Resource;
/// let intro = Resource::new("handbook://intro", "intro", || "# Welcome")
///     .title("Introduction")
///     .mime_type("text/markdown");
/// assert_eq!(intro.read().unwrap()[0].uri, "handbook://intro");
/// ```
pub struct Resource {
    pub(crate) uri: Text,
    pub(crate) name: Text,
    pub(crate) size: Option<u64>,
    pub(crate) meta: Metadata,
    reader: Reader,
}

macro_rules! metadata_builders {
    () => {
        /// Sets the human-readable title.
        pub fn title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
            self.meta.title = Some(title.into());
            self
        }

        /// Sets the description: what it holds, written for a language model.
        pub fn description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
            self.meta.description = Some(description.into());
            self
        }

        /// Sets the MIME type, e.g. `text/markdown`; text and bytes that a
        /// read returns carry it.
        pub fn mime_type(mut self, mime_type: impl Into<Cow<'static, str>>) -> Self {
            self.meta.mime_type = Some(mime_type.into());
            self
        }

        /// Sets hints for the client (audience, priority, last modified).
        pub fn annotations(mut self, annotations: Annotations) -> Self {
            self.meta.annotations = Some(annotations);
            self
        }

        /// Adds an icon from an `https:` or `data:` URI with its MIME type.
        pub fn icon(self, src: impl Into<String>, mime_type: impl Into<String>) -> Self {
            self.with_icon(Icon::new(src).mime_type(mime_type))
        }

        /// Adds an icon.
        pub fn with_icon(mut self, icon: Icon) -> Self {
            self.meta.icons.push(icon);
            self
        }

        /// The name.
        pub fn name(&self) -> &str {
            &self.name
        }

        /// The MIME type, if set.
        pub fn get_mime_type(&self) -> Option<&str> {
            self.meta.mime_type.as_deref()
        }
    };
}

impl Resource {
    /// A resource at `uri` (an absolute URI of at most 2,048 bytes, unique
    /// in the plugin) called `name` (1-128 characters), whose contents
    /// `reader` returns (see [`IntoContents`]).
    pub fn new<R, F>(
        uri: impl Into<Cow<'static, str>>,
        name: impl Into<Cow<'static, str>>,
        reader: F,
    ) -> Self
    where
        R: IntoContents,
        F: Fn() -> R + 'static,
    {
        Resource {
            uri: uri.into(),
            name: name.into(),
            size: None,
            meta: Metadata::default(),
            // Text and bytes get their URI and MIME type at read time
            // (`fill_in`), once the builders have set them.
            reader: Box::new(move || reader().into_contents()),
        }
    }

    metadata_builders!();

    /// Sets the size of the contents in bytes, if known.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Reads the resource, as the host does for `resources/read`.
    ///
    /// # Panics
    ///
    /// When the URI or the name is one Corral would refuse to load, so that
    /// a plugin's own `cargo test` finds the mistake before a build does.
    pub fn read(&self) -> Result<Vec<Contents>, ReadError> {
        check_uri(&self.uri).unwrap_or_else(|problem| {
            panic!(
                "resource URI {:?} {problem}: Corral would not load the plugin",
                self.uri
            )
        });
        check_name("resource", &self.name);
        crate::client::start_call();
        crate::state::start_call();
        let mut contents = (self.reader)()?;
        fill_in(&mut contents, &self.uri, self.meta.mime_type.as_deref());
        Ok(contents)
    }
}

/// Gives text and bytes returned without a URI (see [`IntoContents`]) the
/// URI read and the resource's MIME type.
fn fill_in(contents: &mut [Contents], uri: &str, mime_type: Option<&str>) {
    for item in contents {
        if item.uri.is_empty() {
            item.uri = uri.to_string();
            if item.mime_type.is_none() {
                item.mime_type = mime_type.map(String::from);
            }
        }
    }
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A resource template: a URI pattern (RFC 6570) whose matching URIs a
/// function reads, given the URI's variables.
///
/// The variables are deserialized into the function's argument type, as a
/// tool's arguments are: a struct whose fields are the variables (as
/// `String`, or `Option<String>` for one that may be absent, such as
/// `{?page}`), or a `BTreeMap<String, String>` of all of them.
///
/// ```
/// use corral_sdk::ResourceTemplate;
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Section {
///     section: String,
/// }
///
/// let template = ResourceTemplate::new("handbook://{section}", "section", |s: Section| {
///     (s.section == "intro").then_some("# Welcome")
/// })
/// .mime_type("text/markdown")
/// .complete("section", |typed, _| corral_sdk::complete_prefix(["intro", "setup"], typed));
/// assert!(template.read("handbook://intro").is_ok());
/// assert_eq!(template.complete_value("section", "se").values, ["setup"]);
/// ```
pub struct ResourceTemplate {
    pub(crate) uri_template: Text,
    pub(crate) name: Text,
    pub(crate) meta: Metadata,
    reader: TemplateReader,
    pub(crate) completers: Vec<(Text, Completer)>,
}

impl ResourceTemplate {
    /// A template `uri_template` (at most 1,024 bytes, simple expressions
    /// only: `{name}`, `{+name}`, `{#name}`, `{/name}`, `{.name}`,
    /// `{;name}`, `{?a,b}`, `{&a,b}`; unique in the plugin) called `name`
    /// (1-128 characters), whose matching URIs `reader` reads from their
    /// variables.
    pub fn new<A, R, F>(
        uri_template: impl Into<Cow<'static, str>>,
        name: impl Into<Cow<'static, str>>,
        reader: F,
    ) -> Self
    where
        A: DeserializeOwned,
        R: IntoContents,
        F: Fn(A) -> R + 'static,
    {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            meta: Metadata::default(),
            reader: Box::new(move |uri, variables| {
                let object: Map<String, Value> = variables
                    .into_iter()
                    .map(|(name, value)| (name, Value::String(value)))
                    .collect();
                let arguments = serde_json::from_value::<A>(Value::Object(object))
                    .map_err(|error| ReadError::Failed(format!("{uri}: {error}")))?;
                reader(arguments).into_contents()
            }),
            completers: Vec::new(),
        }
    }

    metadata_builders!();

    /// Suggests values for the template's variable `variable` as the user
    /// types: `complete` gets what was typed so far and the other variables
    /// already chosen, and returns suggestions (at most 100 are sent; see
    /// [`Completions`]).
    pub fn complete<C, F>(mut self, variable: impl Into<Cow<'static, str>>, complete: F) -> Self
    where
        C: Into<Completions>,
        F: Fn(&str, &BTreeMap<String, String>) -> C + 'static,
    {
        self.completers.push((
            variable.into(),
            Box::new(move |typed, context| complete(typed, context).into()),
        ));
        self
    }

    /// The template's text.
    pub fn uri_template(&self) -> &str {
        &self.uri_template
    }

    /// The parsed template.
    ///
    /// # Panics
    ///
    /// When the template, its name or a completion is one Corral would
    /// refuse (or never ask for).
    pub(crate) fn checked(&self) -> UriTemplate {
        let template = UriTemplate::parse(&self.uri_template).unwrap_or_else(|problem| {
            panic!(
                "resource template {:?} {problem}: Corral would not load the plugin",
                self.uri_template
            )
        });
        check_name("resource template", &self.name);
        for (variable, _) in &self.completers {
            assert!(
                template.has_variable(variable),
                "resource template {:?} completes `{variable}`, which is not one of its variables",
                self.uri_template
            );
        }
        template
    }

    /// The variables of `uri` if it matches the template.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        UriTemplate::parse(&self.uri_template).ok()?.matches(uri)
    }

    /// Reads `uri`, which the host has matched against the template.
    pub(crate) fn read_matched(
        &self,
        uri: &str,
        variables: BTreeMap<String, String>,
    ) -> Result<Vec<Contents>, ReadError> {
        let mut contents = (self.reader)(uri, variables)?;
        fill_in(&mut contents, uri, self.meta.mime_type.as_deref());
        Ok(contents)
    }

    /// Reads `uri`, as the host does for `resources/read` of a URI that
    /// matches the template; one that does not match is
    /// [`ReadError::NotFound`].
    ///
    /// # Panics
    ///
    /// When the template or its name is one Corral would refuse to load.
    pub fn read(&self, uri: &str) -> Result<Vec<Contents>, ReadError> {
        let template = self.checked();
        crate::client::start_call();
        crate::state::start_call();
        let variables = template.matches(uri).ok_or(ReadError::NotFound)?;
        self.read_matched(uri, variables)
    }

    /// Suggestions for `variable` given what was typed, `value`, with no
    /// other variable chosen; see [`complete_with`](Self::complete_with).
    pub fn complete_value(&self, variable: &str, value: &str) -> Completions {
        self.complete_with(variable, value, &BTreeMap::new())
    }

    /// Suggestions for `variable` given what was typed, `value`, and the
    /// variables already chosen, `context`, as the host asks for
    /// `completion/complete` (empty when nothing completes `variable`; cut
    /// to 100 values).
    ///
    /// # Panics
    ///
    /// When `variable` is not one of the template's variables (the host
    /// never asks for it), or the template is one Corral would refuse.
    pub fn complete_with(
        &self,
        variable: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Completions {
        let template = self.checked();
        assert!(
            template.has_variable(variable),
            "resource template {:?} has no variable `{variable}`",
            self.uri_template
        );
        self.run_completer(variable, value, context)
    }

    pub(crate) fn run_completer(
        &self,
        variable: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Completions {
        crate::completion::run(&self.completers, variable, value, context)
    }
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("uri_template", &self.uri_template)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
