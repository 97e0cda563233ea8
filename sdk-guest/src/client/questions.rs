//! The requests a tool can make of the client, how several go into one ask,
//! and how each answer is read back into its type.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{AskError, Elicitation, Root, form, transport};
use crate::bindings::corral::plugin::client as wit;
use crate::content::Role;
use crate::result::{Audio, Image};

/// One request on its way to the host, before its key is settled.
#[doc(hidden)]
pub struct Pending {
    key: Option<String>,
    /// The automatic key's prefix: `elicit`, `url`, `sample`, `roots`.
    prefix: &'static str,
    request: Result<wit::Request, AskError>,
}

/// Something [`ask`](super::ask) can ask: one request, a tuple of requests
/// or a `Vec` of one kind. The answers come back in the same shape.
pub trait Questions {
    /// The typed answers, in the shape of the questions.
    type Answers;
    /// How to find this value's answers among all of them.
    #[doc(hidden)]
    type Shape;
    #[doc(hidden)]
    fn prepare(self, out: &mut Vec<Pending>) -> Self::Shape;
    #[doc(hidden)]
    fn answers(
        shape: Self::Shape,
        responses: &mut dyn Iterator<Item = wit::InputResponse>,
    ) -> Result<Self::Answers, AskError>;
}

/// One request and the type of its answer.
trait Question {
    type Answer;
    fn pending(self) -> Pending;
    fn answer(response: wit::InputResponse) -> Result<Self::Answer, AskError>;
}

macro_rules! single_question {
    ($($ty:ty => $answer:ty),*) => {$(
        impl Questions for $ty {
            type Answers = $answer;
            type Shape = ();
            fn prepare(self, out: &mut Vec<Pending>) {
                out.push(self.pending());
            }
            fn answers(
                _: (),
                responses: &mut dyn Iterator<Item = wit::InputResponse>,
            ) -> Result<Self::Answers, AskError> {
                <$ty as Question>::answer(next(responses)?)
            }
        }
    )*};
}

single_question!(
    Confirm => bool,
    OpenUrl => Elicitation<()>,
    Sampling => Sampled,
    ListRoots => Vec<Root>
);

impl<T: DeserializeOwned> Questions for Form<T> {
    type Answers = Elicitation<T>;
    type Shape = ();
    fn prepare(self, out: &mut Vec<Pending>) {
        out.push(self.pending());
    }
    fn answers(
        _: (),
        responses: &mut dyn Iterator<Item = wit::InputResponse>,
    ) -> Result<Self::Answers, AskError> {
        Self::answer(next(responses)?)
    }
}

impl<Q: Questions> Questions for Vec<Q> {
    type Answers = Vec<Q::Answers>;
    type Shape = Vec<Q::Shape>;
    fn prepare(self, out: &mut Vec<Pending>) -> Self::Shape {
        self.into_iter().map(|q| q.prepare(out)).collect()
    }
    fn answers(
        shape: Self::Shape,
        responses: &mut dyn Iterator<Item = wit::InputResponse>,
    ) -> Result<Self::Answers, AskError> {
        shape
            .into_iter()
            .map(|shape| Q::answers(shape, responses))
            .collect()
    }
}

macro_rules! tuple_questions {
    ($($name:ident),+) => {
        impl<$($name: Questions),+> Questions for ($($name,)+) {
            type Answers = ($($name::Answers,)+);
            type Shape = ($($name::Shape,)+);
            #[allow(non_snake_case)]
            fn prepare(self, out: &mut Vec<Pending>) -> Self::Shape {
                let ($($name,)+) = self;
                ($($name.prepare(out),)+)
            }
            #[allow(non_snake_case)]
            fn answers(
                shape: Self::Shape,
                responses: &mut dyn Iterator<Item = wit::InputResponse>,
            ) -> Result<Self::Answers, AskError> {
                let ($($name,)+) = shape;
                Ok(($($name::answers($name, responses)?,)+))
            }
        }
    };
}

tuple_questions!(A);
tuple_questions!(A, B);
tuple_questions!(A, B, C);
tuple_questions!(A, B, C, D);
tuple_questions!(A, B, C, D, E);
tuple_questions!(A, B, C, D, E, F);
tuple_questions!(A, B, C, D, E, F, G);
tuple_questions!(A, B, C, D, E, F, G, H);

fn next(
    responses: &mut dyn Iterator<Item = wit::InputResponse>,
) -> Result<wit::InputResponse, AskError> {
    responses
        .next()
        .ok_or_else(|| AskError::Failed("fewer answers than requests".into()))
}

fn wrong_kind(expected: &str) -> AskError {
    AskError::Failed(format!("expected {expected} answer, got another kind"))
}

pub(super) fn ask<Q: Questions>(questions: Q) -> Result<Q::Answers, AskError> {
    let mut pending = Vec::new();
    let shape = questions.prepare(&mut pending);
    // An empty `Vec` of questions: nothing to ask, no round trip.
    let responses = if pending.is_empty() {
        Vec::new()
    } else {
        let requests = settle_keys(pending)?;
        let count = requests.len();
        let responses = transport::ask(requests)?;
        if responses.len() != count {
            return Err(AskError::Failed(format!(
                "{} answers to {count} requests",
                responses.len()
            )));
        }
        responses
    };
    Q::answers(shape, &mut responses.into_iter())
}

thread_local! {
    /// How many automatic keys of each prefix this call has used.
    static KEYS: RefCell<HashMap<&'static str, u32>> = RefCell::new(HashMap::new());
}

pub(super) fn reset_keys() {
    KEYS.with(|keys| keys.borrow_mut().clear());
}

/// Gives every request its key: the author's, or the next automatic one of
/// its prefix that the author did not take in this ask.
fn settle_keys(pending: Vec<Pending>) -> Result<Vec<wit::InputRequest>, AskError> {
    let mut named = HashSet::new();
    for key in pending.iter().filter_map(|p| p.key.as_deref()) {
        check_key(key)?;
        if !named.insert(key.to_owned()) {
            return Err(AskError::Invalid(format!(
                "two requests in one ask share the key `{key}`"
            )));
        }
    }
    KEYS.with(|keys| {
        let mut keys = keys.borrow_mut();
        pending
            .into_iter()
            .map(|p| {
                let key = match p.key {
                    Some(key) => key,
                    None => loop {
                        let n = keys.entry(p.prefix).or_insert(0);
                        *n += 1;
                        let key = format!("{}-{n}", p.prefix);
                        if !named.contains(&key) {
                            break key;
                        }
                    },
                };
                let mut request = p.request?;
                if let wit::Request::ElicitUrl(url) = &mut request
                    && url.elicitation_id.is_empty()
                {
                    url.elicitation_id = elicitation_id(&key, &url.url);
                }
                Ok(wit::InputRequest { key, request })
            })
            .collect()
    })
}

/// 1-64 characters of `[A-Za-z0-9_.-]`, as the contract requires
/// (`input-request.key` in wit/plugin.wit; the host checks it again, in
/// host/sandbox/src/ask/requests.rs): checked here so that a typo fails
/// with the key in the message.
fn check_key(key: &str) -> Result<(), AskError> {
    let valid = (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if valid {
        Ok(())
    } else {
        Err(AskError::Invalid(format!(
            "the key `{key}` is not 1-64 characters of A-Z, a-z, 0-9, `_`, `.` and `-`"
        )))
    }
}

/// A URL elicitation's id when the author gives none: derived from its key
/// and URL rather than random, so that a re-run asks exactly the same.
fn elicitation_id(key: &str, url: &str) -> String {
    // FNV-1a: small, stable across platforms and releases.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes().chain([0]).chain(url.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{key}-{hash:016x}")
}

fn elicitation_answer(response: wit::InputResponse) -> Result<wit::ElicitationAnswer, AskError> {
    match response {
        wit::InputResponse::Elicitation(answer) => Ok(answer),
        _ => Err(wrong_kind("an elicitation")),
    }
}

/// A form for the user to fill in; its answer is an [`Elicitation<T>`].
///
/// ```
/// use corral_sdk::client::Form;
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Name {
///     /// Your first name
///     name: String,
/// }
/// let form = Form::<Name>::new("What is your name?").key("user_name");
/// assert_eq!(form.schema().unwrap()["properties"]["name"]["type"], "string");
/// ```
pub struct Form<T> {
    message: String,
    schema: Result<Value, String>,
    key: Option<String>,
    answer: PhantomData<fn() -> T>,
}

impl<T: schemars::JsonSchema> Form<T> {
    /// A form for `T` (see [`elicit`](super::elicit) for the types a form
    /// can hold), shown with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            schema: form::form_schema::<T>(),
            key: None,
            answer: PhantomData,
        }
    }
}

impl<T> Form<T> {
    /// A form with a schema written by hand (an object of primitive
    /// properties, as MCP elicitation allows; the host checks it), for
    /// what no Rust type says, such as `enumNames`. The answer is
    /// deserialized into `T`, e.g. `serde_json::Value`.
    pub fn with_schema(message: impl Into<String>, schema: Value) -> Self {
        Self {
            message: message.into(),
            schema: Ok(schema),
            key: None,
            answer: PhantomData,
        }
    }

    /// Names the request (see [Keys](super#keys)).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The requested schema, or why `T` cannot be a form.
    pub fn schema(&self) -> Result<&Value, &str> {
        self.schema.as_ref().map_err(String::as_str)
    }
}

impl<T: DeserializeOwned> Question for Form<T> {
    type Answer = Elicitation<T>;

    fn pending(self) -> Pending {
        let message = self.message;
        Pending {
            key: self.key,
            prefix: "elicit",
            request: self.schema.map_err(AskError::Invalid).map(|schema| {
                wit::Request::ElicitForm(wit::FormElicitation {
                    message,
                    requested_schema: schema.to_string(),
                })
            }),
        }
    }

    fn answer(response: wit::InputResponse) -> Result<Self::Answer, AskError> {
        Ok(match elicitation_answer(response)? {
            wit::ElicitationAnswer::Accept(content) => {
                Elicitation::Accepted(serde_json::from_str(&content).map_err(|error| {
                    AskError::Failed(format!("the form's answer does not fit: {error}"))
                })?)
            }
            wit::ElicitationAnswer::Decline => Elicitation::Declined,
            wit::ElicitationAnswer::Cancel => Elicitation::Cancelled,
        })
    }
}

/// A yes-or-no question: a form with one boolean field, `confirm`. Its
/// answer is true only if the user accepted and ticked it.
pub struct Confirm {
    form: Form<ConfirmAnswer>,
}

#[derive(serde::Deserialize)]
struct ConfirmAnswer {
    #[serde(default)]
    confirm: bool,
}

impl Confirm {
    /// Asks `message`, e.g. "Delete 3 files? This cannot be undone."
    pub fn new(message: impl Into<String>) -> Self {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": "Yes, go ahead", "default": false},
            },
            "required": ["confirm"],
        });
        Self {
            form: Form::with_schema(message, schema),
        }
    }

    /// Names the request (see [Keys](super#keys)).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.form = self.form.key(key);
        self
    }
}

impl Question for Confirm {
    type Answer = bool;

    fn pending(self) -> Pending {
        self.form.pending()
    }

    fn answer(response: wit::InputResponse) -> Result<bool, AskError> {
        Ok(Form::<ConfirmAnswer>::answer(response)?
            .accepted()
            .is_some_and(|answer| answer.confirm))
    }
}

/// A URL for the user to visit; its answer is an [`Elicitation<()>`]:
/// whether the user agreed to go.
pub struct OpenUrl {
    message: String,
    url: String,
    id: Option<String>,
    key: Option<String>,
}

impl OpenUrl {
    /// Asks the user to visit `url` (http or https), saying why in `message`.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            url: url.into(),
            id: None,
            key: None,
        }
    }

    /// Sets the elicitation id (by default derived from the key and URL,
    /// the same on every run).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Names the request (see [Keys](super#keys)).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl Question for OpenUrl {
    type Answer = Elicitation<()>;

    fn pending(self) -> Pending {
        Pending {
            key: self.key,
            prefix: "url",
            request: Ok(wit::Request::ElicitUrl(wit::UrlElicitation {
                message: self.message,
                url: self.url,
                // Filled in from the key once it is settled.
                elicitation_id: self.id.unwrap_or_default(),
            })),
        }
    }

    fn answer(response: wit::InputResponse) -> Result<Self::Answer, AskError> {
        Ok(match elicitation_answer(response)? {
            wit::ElicitationAnswer::Accept(_) => Elicitation::Accepted(()),
            wit::ElicitationAnswer::Decline => Elicitation::Declined,
            wit::ElicitationAnswer::Cancel => Elicitation::Cancelled,
        })
    }
}

/// One piece of a sampling conversation, or of the model's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingContent {
    /// Text.
    Text(String),
    /// An image.
    Image(Image),
    /// Audio.
    Audio(Audio),
}

/// What context from MCP servers the client should add to the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeContext {
    /// None.
    None,
    /// From this server only.
    ThisServer,
    /// From every server the client is connected to.
    AllServers,
}

/// A request for the client's model to continue a conversation, built up
/// message by message. Its answer is a [`Sampled`].
///
/// ```
/// use corral_sdk::client::{IncludeContext, Sampling};
/// let request = Sampling::prompt("What is the capital of France?")
///     .system("Answer in one word.")
///     .max_tokens(10)
///     .temperature(0.0)
///     .model_hint("claude-3-5-haiku")
///     .speed_priority(0.8)
///     .include_context(IncludeContext::None)
///     .key("capital_question");
/// ```
#[derive(Debug, Clone)]
pub struct Sampling {
    key: Option<String>,
    request: wit::SamplingRequest,
}

impl Default for Sampling {
    fn default() -> Self {
        Self::new()
    }
}

impl Sampling {
    /// The `max_tokens` of a request that sets none: enough for a few
    /// paragraphs, small enough not to surprise whoever pays for them.
    pub const DEFAULT_MAX_TOKENS: u32 = 1024;

    /// An empty conversation; add messages with [`user`](Self::user) and
    /// [`assistant`](Self::assistant).
    pub fn new() -> Self {
        Self {
            key: None,
            request: wit::SamplingRequest {
                messages: Vec::new(),
                system_prompt: None,
                max_tokens: Self::DEFAULT_MAX_TOKENS,
                temperature: None,
                stop_sequences: Vec::new(),
                model_preferences: None,
                include_context: None,
            },
        }
    }

    /// A conversation of one user message.
    pub fn prompt(text: impl Into<String>) -> Self {
        Self::new().user(text)
    }

    /// Appends a text message from the user.
    pub fn user(self, text: impl Into<String>) -> Self {
        self.message(Role::User, SamplingContent::Text(text.into()))
    }

    /// Appends a text message from the assistant (the model).
    pub fn assistant(self, text: impl Into<String>) -> Self {
        self.message(Role::Assistant, SamplingContent::Text(text.into()))
    }

    /// Appends a message of any content.
    pub fn message(mut self, role: Role, content: SamplingContent) -> Self {
        self.request.messages.push(wit::SamplingMessage {
            role: role_to_wit(role),
            content: content_to_wit(content),
        });
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.request.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the most tokens the model may produce
    /// (default [`DEFAULT_MAX_TOKENS`](Self::DEFAULT_MAX_TOKENS)).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.request.max_tokens = max_tokens;
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.request.temperature = Some(temperature);
        self
    }

    /// Adds a sequence at which the model stops.
    pub fn stop_sequence(mut self, stop: impl Into<String>) -> Self {
        self.request.stop_sequences.push(stop.into());
        self
    }

    fn preferences(&mut self) -> &mut wit::ModelPreferences {
        self.request
            .model_preferences
            .get_or_insert_with(|| wit::ModelPreferences {
                hints: Vec::new(),
                cost_priority: None,
                speed_priority: None,
                intelligence_priority: None,
            })
    }

    /// Adds a model name or family the client should prefer (most
    /// preferred first); the client decides.
    pub fn model_hint(mut self, name: impl Into<String>) -> Self {
        self.preferences().hints.push(name.into());
        self
    }

    /// How much cost matters, from 0.0 to 1.0.
    pub fn cost_priority(mut self, priority: f64) -> Self {
        self.preferences().cost_priority = Some(priority);
        self
    }

    /// How much speed matters, from 0.0 to 1.0.
    pub fn speed_priority(mut self, priority: f64) -> Self {
        self.preferences().speed_priority = Some(priority);
        self
    }

    /// How much intelligence matters, from 0.0 to 1.0.
    pub fn intelligence_priority(mut self, priority: f64) -> Self {
        self.preferences().intelligence_priority = Some(priority);
        self
    }

    /// Sets what context from MCP servers the client should add.
    pub fn include_context(mut self, context: IncludeContext) -> Self {
        self.request.include_context = Some(match context {
            IncludeContext::None => wit::IncludeContext::None,
            IncludeContext::ThisServer => wit::IncludeContext::ThisServer,
            IncludeContext::AllServers => wit::IncludeContext::AllServers,
        });
        self
    }

    /// Names the request (see [Keys](super#keys)).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl Question for Sampling {
    type Answer = Sampled;

    fn pending(self) -> Pending {
        let request = if self.request.messages.is_empty() {
            Err(AskError::Invalid(
                "a sampling request needs a message".into(),
            ))
        } else {
            Ok(wit::Request::Sample(self.request))
        };
        Pending {
            key: self.key,
            prefix: "sample",
            request,
        }
    }

    fn answer(response: wit::InputResponse) -> Result<Sampled, AskError> {
        match response {
            wit::InputResponse::Sampling(sampled) => Ok(Sampled {
                role: match sampled.role {
                    wit::Role::User => Role::User,
                    wit::Role::Assistant => Role::Assistant,
                },
                content: match sampled.content {
                    wit::SamplingContent::Text(text) => SamplingContent::Text(text),
                    wit::SamplingContent::Image(media) => {
                        SamplingContent::Image(Image::new(media.data, media.mime_type))
                    }
                    wit::SamplingContent::Audio(media) => {
                        SamplingContent::Audio(Audio::new(media.data, media.mime_type))
                    }
                },
                model: sampled.model,
                stop_reason: sampled.stop_reason,
            }),
            _ => Err(wrong_kind("a sampling")),
        }
    }
}

/// The model's reply to a [`Sampling`] request.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// Who speaks: the assistant, in practice.
    pub role: Role,
    /// What it said.
    pub content: SamplingContent,
    /// The model that answered.
    pub model: String,
    /// Why it stopped, e.g. `endTurn`, `stopSequence`, `maxTokens`.
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// The reply's text, if it is text.
    pub fn text(&self) -> Option<&str> {
        match &self.content {
            SamplingContent::Text(text) => Some(text),
            _ => None,
        }
    }
}

/// A request for the client's roots; its answer is a `Vec<`[`Root`]`>`.
#[derive(Debug, Clone, Default)]
pub struct ListRoots {
    key: Option<String>,
}

impl ListRoots {
    /// Lists the roots.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the request (see [Keys](super#keys)).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl Question for ListRoots {
    type Answer = Vec<Root>;

    fn pending(self) -> Pending {
        Pending {
            key: self.key,
            prefix: "roots",
            request: Ok(wit::Request::ListRoots),
        }
    }

    fn answer(response: wit::InputResponse) -> Result<Vec<Root>, AskError> {
        match response {
            wit::InputResponse::Roots(roots) => Ok(roots
                .into_iter()
                .map(|root| Root {
                    uri: root.uri,
                    name: root.name,
                })
                .collect()),
            _ => Err(wrong_kind("a roots")),
        }
    }
}

fn role_to_wit(role: Role) -> wit::Role {
    match role {
        Role::User => wit::Role::User,
        Role::Assistant => wit::Role::Assistant,
    }
}

fn content_to_wit(content: SamplingContent) -> wit::SamplingContent {
    match content {
        SamplingContent::Text(text) => wit::SamplingContent::Text(text),
        SamplingContent::Image(image) => wit::SamplingContent::Image(wit::Media {
            data: image.data,
            mime_type: image.mime_type,
        }),
        SamplingContent::Audio(audio) => wit::SamplingContent::Audio(wit::Media {
            data: audio.data,
            mime_type: audio.mime_type,
        }),
    }
}
