//! Prompts: conversations a user picks from the client, filled in from
//! string arguments.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::completion::{Completer, Completions};
use crate::content::{Content, Role};
use crate::schema::schema_for;
use crate::tool::{Icon, is_valid_name};

type Text = Cow<'static, str>;
type Getter = Box<dyn Fn(Value) -> Result<PromptResult, PromptError>>;

/// At most this many arguments per prompt (the host's bound).
const MAX_ARGUMENTS: usize = 64;

/// One message of a prompt's conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: text, an image, audio, a resource link or an embedded
    /// resource.
    pub content: Content,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What getting a prompt returns: its messages and an optional description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptResult {
    /// A description of this particular conversation.
    pub description: Option<String>,
    /// The conversation.
    pub messages: Vec<PromptMessage>,
}

impl PromptResult {
    /// A conversation of `messages`.
    pub fn new(messages: impl IntoIterator<Item = PromptMessage>) -> Self {
        Self {
            description: None,
            messages: messages.into_iter().collect(),
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Why a prompt has no messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    /// The arguments do not fit the prompt; the text says how and reaches
    /// the client as an invalid-params error.
    InvalidArguments(String),
    /// Something else failed; the text says why.
    Failed(String),
}

impl PromptError {
    /// Arguments that do not fit, with a message for the client.
    pub fn invalid_arguments(message: impl std::fmt::Display) -> Self {
        Self::InvalidArguments(message.to_string())
    }

    /// A failure, with a message for the client.
    pub fn failed(message: impl std::fmt::Display) -> Self {
        Self::Failed(message.to_string())
    }
}

impl std::fmt::Display for PromptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidArguments(message) | Self::Failed(message) => f.write_str(message),
        }
    }
}

/// What a prompt function returns: text (one user message), one
/// [`PromptMessage`] or a list of them, a [`PromptResult`], or a `Result`
/// whose error converts into a [`PromptError`].
pub trait IntoPromptResult {
    /// The prompt's messages.
    fn into_prompt_result(self) -> Result<PromptResult, PromptError>;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> Result<PromptResult, PromptError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<PromptResult, PromptError> {
        Ok(PromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<PromptResult, PromptError> {
        Ok(PromptResult::new([self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<PromptResult, PromptError> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl IntoPromptResult for &str {
    fn into_prompt_result(self) -> Result<PromptResult, PromptError> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: Into<PromptError>> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<PromptResult, PromptError> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}

impl From<String> for PromptError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

impl From<&str> for PromptError {
    fn from(message: &str) -> Self {
        Self::Failed(message.into())
    }
}

/// One argument of a prompt, as listed to clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// 1-64 characters of `[A-Za-z0-9_-]`.
    pub name: String,
    /// A human-readable name, from the field's `#[schemars(title = ...)]`.
    pub title: Option<String>,
    /// From the field's doc comment.
    pub description: Option<String>,
    /// True unless the field is an `Option`.
    pub required: bool,
}

/// One prompt: a name, a function from arguments to messages, and metadata
/// for the client.
///
/// Its arguments are the fields of the function's argument type, a struct
/// that implements [`serde::Deserialize`] and [`schemars::JsonSchema`] whose
/// fields are `String` (required) or `Option<String>` (optional); doc
/// comments become the arguments' descriptions. A prompt without arguments
/// takes [`NoArgs`](crate::NoArgs).
///
/// ```
/// use corral_sdk::{Prompt, PromptMessage};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Review {
///     /// The code to review
///     code: String,
///     /// Who reads the review, e.g. "beginner"
///     audience: Option<String>,
/// }
///
/// let prompt = Prompt::new("review", |r: Review| {
///     let audience = r.audience.as_deref().unwrap_or("an expert");
///     PromptMessage::user(format!("Review this code for {audience}:\n{}", r.code))
/// })
/// .description("Review a piece of code")
/// .complete("audience", |typed, _| corral_sdk::complete_prefix(["beginner", "expert"], typed));
///
/// let result = prompt.get([("code", "fn main() {}")]).unwrap();
/// assert_eq!(result.messages.len(), 1);
/// assert_eq!(prompt.arguments()[1].required, false);
/// ```
pub struct Prompt {
    pub(crate) name: Text,
    pub(crate) title: Option<Text>,
    pub(crate) description: Option<Text>,
    pub(crate) icons: Vec<Icon>,
    arguments_schema: fn() -> Value,
    /// The argument type's fields in declared order (a schema's properties
    /// are sorted by name).
    field_order: fn() -> &'static [&'static str],
    getter: Getter,
    pub(crate) completers: Vec<(Text, Completer)>,
}

impl Prompt {
    /// A prompt called `name` (1-64 characters of `[A-Za-z0-9_-]`, unique
    /// in the plugin) whose messages `get` returns from its arguments.
    pub fn new<A, R, F>(name: impl Into<Cow<'static, str>>, get: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        R: IntoPromptResult,
        F: Fn(A) -> R + 'static,
    {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            icons: Vec::new(),
            arguments_schema: schema_for::<A>,
            field_order: field_order::<A>,
            getter: Box::new(move |arguments| {
                let arguments = serde_json::from_value::<A>(arguments)
                    .map_err(|error| PromptError::InvalidArguments(error.to_string()))?;
                get(arguments).into_prompt_result()
            }),
            completers: Vec::new(),
        }
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description: what the prompt is for.
    pub fn description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an icon from an `https:` or `data:` URI with its MIME type.
    pub fn icon(self, src: impl Into<String>, mime_type: impl Into<String>) -> Self {
        self.with_icon(Icon::new(src).mime_type(mime_type))
    }

    /// Adds an icon.
    pub fn with_icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Suggests values for argument `argument` as the user types:
    /// `complete` gets what was typed so far and the other arguments
    /// already chosen, and returns suggestions (at most 100 are sent; see
    /// [`Completions`]).
    pub fn complete<C, F>(mut self, argument: impl Into<Cow<'static, str>>, complete: F) -> Self
    where
        C: Into<Completions>,
        F: Fn(&str, &BTreeMap<String, String>) -> C + 'static,
    {
        self.completers.push((
            argument.into(),
            Box::new(move |typed, context| complete(typed, context).into()),
        ));
        self
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The prompt's arguments, from the fields of its argument type.
    pub fn arguments(&self) -> Vec<PromptArgument> {
        let schema = (self.arguments_schema)();
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let text = |property: &Value, key: &str| {
            property.get(key).and_then(Value::as_str).map(String::from)
        };
        let mut arguments: Vec<PromptArgument> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| PromptArgument {
                        name: name.clone(),
                        title: text(property, "title"),
                        description: text(property, "description"),
                        required: required.contains(&name.as_str()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let order = (self.field_order)();
        arguments.sort_by_key(|argument| {
            order
                .iter()
                .position(|field| *field == argument.name)
                .unwrap_or(usize::MAX)
        });
        arguments
    }

    /// Checks the prompt as the host would, returning its arguments.
    ///
    /// # Panics
    ///
    /// When its name or an argument's is one Corral would refuse to load,
    /// it has more than 64 arguments, an argument is not a string, or a
    /// completion names no argument.
    pub(crate) fn checked(&self) -> Vec<PromptArgument> {
        assert!(
            is_valid_name(&self.name),
            "prompt name {:?} is not 1-64 characters of A-Z, a-z, 0-9, `_` and `-`: Corral would not load the plugin",
            self.name
        );
        let arguments = self.arguments();
        assert!(
            arguments.len() <= MAX_ARGUMENTS,
            "prompt {} has {} arguments, more than {MAX_ARGUMENTS}: Corral would not load the plugin",
            self.name,
            arguments.len()
        );
        let schema = (self.arguments_schema)();
        for argument in &arguments {
            assert!(
                is_valid_name(&argument.name),
                "prompt {} has argument {:?}, not 1-64 characters of A-Z, a-z, 0-9, `_` and `-`: Corral would not load the plugin",
                self.name,
                argument.name
            );
            let property = &schema["properties"][&argument.name];
            assert!(
                is_string(property),
                "prompt {}'s argument `{}` is not a string (`String` or `Option<String>`): prompt arguments are strings",
                self.name,
                argument.name
            );
        }
        for (name, _) in &self.completers {
            assert!(
                arguments.iter().any(|argument| argument.name == *name),
                "prompt {} completes `{name}`, which is not one of its arguments",
                self.name
            );
        }
        arguments
    }

    /// Gets the prompt's messages for `arguments` (name and value pairs),
    /// as the host does for `prompts/get` once it has checked that every
    /// required argument is there and no other.
    ///
    /// # Panics
    ///
    /// When the prompt is one Corral would refuse (see above), or
    /// `arguments` lack a required argument or name one the prompt does not
    /// have (the host would refuse the request before calling the plugin).
    pub fn get<K, V>(
        &self,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<PromptResult, PromptError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let declared = self.checked();
        let arguments: Vec<(String, String)> = arguments
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect();
        for (name, _) in &arguments {
            assert!(
                declared.iter().any(|argument| argument.name == *name),
                "prompt {} has no argument `{name}`",
                self.name
            );
        }
        for argument in declared.iter().filter(|argument| argument.required) {
            assert!(
                arguments.iter().any(|(name, _)| *name == argument.name),
                "prompt {} requires argument `{}`",
                self.name,
                argument.name
            );
        }
        crate::client::start_call();
        crate::state::start_call();
        self.get_checked(arguments)
    }

    /// Gets the messages for arguments the host has checked.
    pub(crate) fn get_checked(
        &self,
        arguments: Vec<(String, String)>,
    ) -> Result<PromptResult, PromptError> {
        let object: Map<String, Value> = arguments
            .into_iter()
            .map(|(name, value)| (name, Value::String(value)))
            .collect();
        (self.getter)(Value::Object(object))
    }

    /// Suggestions for `argument` given what was typed, `value`, with no
    /// other argument chosen; see [`complete_with`](Self::complete_with).
    pub fn complete_value(&self, argument: &str, value: &str) -> Completions {
        self.complete_with(argument, value, &BTreeMap::new())
    }

    /// Suggestions for `argument` given what was typed, `value`, and the
    /// arguments already chosen, `context`, as the host asks for
    /// `completion/complete` (empty when nothing completes `argument`; cut
    /// to 100 values).
    ///
    /// # Panics
    ///
    /// When `argument` is not one of the prompt's (the host never asks for
    /// it), or the prompt is one Corral would refuse.
    pub fn complete_with(
        &self,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Completions {
        let declared = self.checked();
        assert!(
            declared.iter().any(|a| a.name == argument),
            "prompt {} has no argument `{argument}`",
            self.name
        );
        self.run_completer(argument, value, context)
    }

    pub(crate) fn run_completer(
        &self,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Completions {
        crate::completion::run(&self.completers, argument, value, context)
    }
}

/// The fields of struct `A` in declared order, as serde names them: a
/// deserializer that only notes the `fields` a struct asks for.
fn field_order<A: DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{Deserializer, Error, Visitor};

    #[derive(Debug)]
    struct Noted(&'static [&'static str]);

    impl std::fmt::Display for Noted {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("fields noted")
        }
    }

    impl std::error::Error for Noted {}

    impl Error for Noted {
        fn custom<T: std::fmt::Display>(_: T) -> Self {
            Noted(&[])
        }
    }

    struct FieldNoter;

    impl<'de> Deserializer<'de> for FieldNoter {
        type Error = Noted;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Noted> {
            Err(Noted(&[]))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Noted> {
            Err(Noted(fields))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    match A::deserialize(FieldNoter) {
        Err(Noted(fields)) => fields,
        Ok(_) => &[],
    }
}

/// Whether a property schema says its value is a string (perhaps null, as
/// `Option<String>`'s does).
fn is_string(property: &Value) -> bool {
    match property.get("type") {
        Some(Value::String(kind)) => kind == "string",
        Some(Value::Array(kinds)) => {
            kinds.iter().any(|kind| kind == "string")
                && kinds.iter().all(|kind| kind == "string" || kind == "null")
        }
        _ => false,
    }
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .field("title", &self.title)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}
