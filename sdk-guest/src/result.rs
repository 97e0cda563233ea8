//! Tool results and the conversions into them.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::content::{Content, EmbeddedResource, ResourceLink};

/// The result of one tool call, for full control over what the client sees.
///
/// Most tools return something simpler (text, [`Json`], [`Image`], ...) that
/// converts into a `CallResult` through [`IntoToolResult`]. Build one by hand
/// to mix several kinds of content:
///
/// ```
/// use corral_sdk::{CallResult, ResourceLink};
/// let result = CallResult::new()
///     .text("Here is the chart and its data.")
///     .image(vec![0x89, b'P', b'N', b'G'], "image/png")
///     .resource_text("chart://data.csv", "text/csv", "x,y\n1,2\n")
///     .resource_link(ResourceLink::new("https://example.com/about", "about"));
/// assert_eq!(result.content.len(), 4);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallResult {
    /// What the model sees.
    pub content: Vec<Content>,
    /// A JSON object conforming to the tool's output schema, if it has one.
    pub structured_content: Option<Value>,
    /// True for a tool execution error: `content` explains what went wrong.
    pub is_error: bool,
}

impl CallResult {
    /// An empty, successful result.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tool execution error with `message` as its text.
    pub fn error(message: impl fmt::Display) -> Self {
        Self {
            content: vec![Content::text(message.to_string())],
            structured_content: None,
            is_error: true,
        }
    }

    /// Appends a content item.
    pub fn with(mut self, content: impl Into<Content>) -> Self {
        self.content.push(content.into());
        self
    }

    /// Appends text.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.with(Content::text(text))
    }

    /// Appends an image, e.g. `.image(png_bytes, "image/png")`.
    pub fn image(self, data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        self.with(Content::image(data, mime_type))
    }

    /// Appends audio, e.g. `.audio(wav_bytes, "audio/wav")`.
    pub fn audio(self, data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        self.with(Content::audio(data, mime_type))
    }

    /// Appends a link to a resource.
    pub fn resource_link(self, link: ResourceLink) -> Self {
        self.with(link)
    }

    /// Appends an embedded text resource.
    pub fn resource_text(
        self,
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        self.with(EmbeddedResource::text(uri, text).mime_type(mime_type))
    }

    /// Appends an embedded binary resource.
    pub fn resource_blob(
        self,
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        data: impl Into<Vec<u8>>,
    ) -> Self {
        self.with(EmbeddedResource::blob(uri, data).mime_type(mime_type))
    }

    /// Sets the structured content: any JSON value, though only an object
    /// reaches clients before MCP 2026-07-28 as `structuredContent`. Clients
    /// that cannot read it get the result's text: the host adds the JSON as
    /// text only to a result with no text item (or to every result, when
    /// the plugin's manifest sets `[results] mirror-structured`), so give a
    /// text item what the model and those clients should read. A tool that
    /// returns structured content this way should declare its schema with
    /// [`Tool::output_schema`](crate::Tool::output_schema) (an object schema,
    /// so an object); [`Json`] does both for you.
    pub fn structured(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Marks the result as a tool execution error.
    pub fn mark_error(mut self) -> Self {
        self.is_error = true;
        self
    }
}

/// A tool execution error: the message goes back to the model as the text of
/// a result with `is-error: true`, so that it can correct itself.
///
/// Create one with [`ToolError::new`] from anything printable, or convert a
/// `String`, a `&str` or a common error type (`std::io::Error`,
/// `serde_json::Error`, parse errors, boxed errors) with `?` or `.into()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// An error with the given message.
    pub fn new(message: impl fmt::Display) -> Self {
        Self {
            message: message.to_string(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// An error describing `error` and its chain of sources, e.g.
    /// `reading config: No such file or directory (os error 2)`.
    pub fn from_error(error: &(dyn std::error::Error + 'static)) -> Self {
        let mut message = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        Self { message }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self { message }
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

macro_rules! tool_error_from {
    ($($ty:ty),* $(,)?) => {$(
        impl From<$ty> for ToolError {
            fn from(error: $ty) -> Self {
                Self::from_error(&error)
            }
        }
    )*};
}

tool_error_from!(
    std::io::Error,
    serde_json::Error,
    std::fmt::Error,
    std::num::ParseIntError,
    std::num::ParseFloatError,
    std::num::TryFromIntError,
    std::str::ParseBoolError,
    std::str::Utf8Error,
    std::string::FromUtf8Error,
    std::char::ParseCharError,
    std::time::SystemTimeError,
);

impl From<Box<dyn std::error::Error + Send + Sync>> for ToolError {
    fn from(error: Box<dyn std::error::Error + Send + Sync>) -> Self {
        Self::from_error(&*error)
    }
}

impl From<Box<dyn std::error::Error>> for ToolError {
    fn from(error: Box<dyn std::error::Error>) -> Self {
        Self::from_error(&*error)
    }
}

/// Anything a tool can return.
///
/// Implemented for text (`String`, `&'static str`, numbers, `bool`, `char`),
/// [`Json`], [`Image`], [`Audio`], [`Content`], `Vec<Content>`,
/// [`CallResult`] and `Result<R, E>` where `R: IntoToolResult` and
/// `E: Into<ToolError>`.
pub trait IntoToolResult {
    /// Converts the value into a result.
    fn into_result(self) -> CallResult;

    /// The JSON Schema of the structured content this type produces, if any.
    /// When present, it becomes the tool's output schema.
    fn output_schema() -> Option<Value> {
        None
    }
}

impl IntoToolResult for CallResult {
    fn into_result(self) -> CallResult {
        self
    }
}

impl IntoToolResult for Content {
    fn into_result(self) -> CallResult {
        CallResult::new().with(self)
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_result(self) -> CallResult {
        CallResult {
            content: self,
            ..CallResult::default()
        }
    }
}

impl IntoToolResult for String {
    fn into_result(self) -> CallResult {
        CallResult::new().text(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_result(self) -> CallResult {
        CallResult::new().text(self)
    }
}

macro_rules! display_result {
    ($($ty:ty),* $(,)?) => {$(
        impl IntoToolResult for $ty {
            fn into_result(self) -> CallResult {
                CallResult::new().text(self.to_string())
            }
        }
    )*};
}

display_result!(
    bool, char, f32, f64, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize,
);

impl<R: IntoToolResult, E: Into<ToolError>> IntoToolResult for Result<R, E> {
    fn into_result(self) -> CallResult {
        match self {
            Ok(value) => value.into_result(),
            Err(error) => CallResult::error(error.into().message),
        }
    }

    fn output_schema() -> Option<Value> {
        R::output_schema()
    }
}

/// Structured content: `T` is serialized as the result's
/// `structured-content` and, for clients that cannot read structured
/// content, as its one text block with the same JSON. The tool's output
/// schema is generated from `T`.
///
/// `T` must serialize as a JSON object (a struct with named fields or a
/// map).
///
/// ```
/// use corral_sdk::{IntoToolResult, Json};
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum {
///     /// The total
///     total: f64,
/// }
/// let result = Json(Sum { total: 3.0 }).into_result();
/// assert_eq!(result.structured_content, Some(serde_json::json!({"total": 3.0})));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_result(self) -> CallResult {
        // serde_json would quietly write it as null, which the output
        // schema then refuses without saying why.
        if let Some((path, value)) = crate::finite::first_non_finite(&self.0) {
            return CallResult::error(format!(
                "internal error: the result's `{path}` is {value}, which JSON cannot carry \
                 (it would be sent as null); return a finite number there, or make the field \
                 an Option and leave it out"
            ));
        }
        match serde_json::to_value(&self.0) {
            Ok(value @ Value::Object(_)) => {
                CallResult::new().text(value.to_string()).structured(value)
            }
            Ok(other) => CallResult::error(format!(
                "internal error: structured content must be a JSON object, not {}",
                json_kind(&other)
            )),
            Err(error) => CallResult::error(format!(
                "internal error: could not serialize the result: {error}"
            )),
        }
    }

    fn output_schema() -> Option<Value> {
        Some(crate::schema::schema_for::<T>())
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An image result, e.g. `Image::png(bytes)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// The encoded image.
    pub data: Vec<u8>,
    /// e.g. `image/png`.
    pub mime_type: String,
}

impl Image {
    /// An image of the given MIME type.
    pub fn new(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A PNG image.
    pub fn png(data: impl Into<Vec<u8>>) -> Self {
        Self::new(data, "image/png")
    }
}

impl From<Image> for Content {
    fn from(image: Image) -> Self {
        Content::image(image.data, image.mime_type)
    }
}

impl IntoToolResult for Image {
    fn into_result(self) -> CallResult {
        CallResult::new().with(self)
    }
}

/// An audio result, e.g. `Audio::wav(bytes)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audio {
    /// The encoded audio.
    pub data: Vec<u8>,
    /// e.g. `audio/wav`.
    pub mime_type: String,
}

impl Audio {
    /// Audio of the given MIME type.
    pub fn new(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// WAV audio.
    pub fn wav(data: impl Into<Vec<u8>>) -> Self {
        Self::new(data, "audio/wav")
    }
}

impl From<Audio> for Content {
    fn from(audio: Audio) -> Self {
        Content::audio(audio.data, audio.mime_type)
    }
}

impl IntoToolResult for Audio {
    fn into_result(self) -> CallResult {
        CallResult::new().with(self)
    }
}
