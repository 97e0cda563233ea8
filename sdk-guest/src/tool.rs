//! Tool definitions.

use std::borrow::Cow;

use schemars::{JsonSchema, SchemaGenerator};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::result::{CallResult, IntoToolResult};
use crate::schema::{close, schema_for};

type Handler = Box<dyn Fn(&str) -> Result<CallResult, serde_json::Error>>;
type Text = Cow<'static, str>;

/// One tool: a name, a handler function and metadata for the client.
///
/// ```
/// use corral_sdk::{NoArgs, Tool};
/// let tool = Tool::new("ping", |_: NoArgs| "pong")
///     .title("Ping")
///     .description("Check that the plugin answers.")
///     .read_only()
///     .idempotent();
/// assert_eq!(tool.call("{}").content, vec![corral_sdk::Content::text("pong")]);
/// ```
pub struct Tool {
    pub(crate) name: Text,
    pub(crate) title: Option<Text>,
    pub(crate) description: Option<Text>,
    pub(crate) read_only: Option<bool>,
    pub(crate) destructive: Option<bool>,
    pub(crate) idempotent: Option<bool>,
    pub(crate) open_world: Option<bool>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) task_support: Option<TaskSupport>,
    input_schema: fn() -> Value,
    /// The Rust type of the arguments, for the message when its schema is
    /// not an object (checked natively only).
    #[cfg_attr(target_family = "wasm", allow(dead_code))]
    arguments_type: &'static str,
    /// Whether the input schema refuses properties the argument type does
    /// not name (see [`Tool::open_arguments`]).
    closed: bool,
    output_schema: fn() -> Option<Value>,
    handler: Handler,
}

/// Whether a tool's calls may run as tasks (see [`Tool::task_support`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never: every call answers in its own request.
    Forbidden,
    /// When the client takes tasks and the call runs long.
    Optional,
    /// Only as a task: a client that cannot take one is refused.
    Required,
}

impl Tool {
    /// A tool called `name` (1-64 characters of `[A-Za-z0-9_-]`, unique in
    /// the plugin) that runs `handler`.
    ///
    /// The arguments object is deserialized into `A`, whose JSON Schema is
    /// the tool's input schema; the return value becomes the result through
    /// [`IntoToolResult`], which also supplies the output schema.
    pub fn new<A, R, F>(name: impl Into<Cow<'static, str>>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        R: IntoToolResult,
        F: Fn(A) -> R + 'static,
    {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
            icons: Vec::new(),
            task_support: None,
            input_schema: schema_for::<A>,
            arguments_type: std::any::type_name::<A>(),
            closed: true,
            output_schema: R::output_schema,
            handler: Box::new(move |arguments| {
                let args = serde_json::from_str::<A>(arguments)?;
                Ok(handler(args).into_result())
            }),
        }
    }

    /// Sets the human-readable title (sent both as the tool's `title` and as
    /// the `title` annotation, for older clients).
    pub fn title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description: what the tool does and when to use it, written
    /// for a language model.
    pub fn description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Hints that the tool does not modify its environment.
    pub fn read_only(mut self) -> Self {
        self.read_only = Some(true);
        self
    }

    /// Hints that the tool may perform destructive updates.
    pub fn destructive(mut self) -> Self {
        self.destructive = Some(true);
        self
    }

    /// Hints that calling the tool twice with the same arguments has no
    /// further effect.
    pub fn idempotent(mut self) -> Self {
        self.idempotent = Some(true);
        self
    }

    /// Sets the read-only hint explicitly, `false` included (clients assume
    /// `false` when nothing is said; a plugin mirroring another server's
    /// annotations may need to say it).
    pub fn read_only_hint(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }

    /// Sets the destructive hint explicitly: `false` says that the tool
    /// only adds (clients assume `true` when nothing is said).
    pub fn destructive_hint(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }

    /// Sets the idempotent hint explicitly, `false` included.
    pub fn idempotent_hint(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }

    /// Hints that the tool interacts with an open world of external entities
    /// (clients assume this when nothing is said).
    pub fn open_world(mut self) -> Self {
        self.open_world = Some(true);
        self
    }

    /// Hints that the tool's world is closed: it does not reach out to
    /// external entities.
    pub fn closed_world(mut self) -> Self {
        self.open_world = Some(false);
        self
    }

    /// Declares whether calls of the tool may run as tasks (MCP's tasks
    /// extension): [`TaskSupport::Forbidden`] keeps every call a plain
    /// call; [`TaskSupport::Required`] refuses a client that cannot take a
    /// task. Undeclared, Corral decides: a call of a client that takes
    /// tasks becomes one once it runs longer than the manifest's
    /// `task-after`.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = Some(support);
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

    /// Declares the output schema as the schema of `T`, for tools that build
    /// structured content by hand with [`CallResult::structured`]. Tools
    /// returning [`Json`](crate::Json) need not call this.
    pub fn output_schema<T: JsonSchema>(mut self) -> Self {
        self.output_schema = || Some(schema_for::<T>());
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's title, if set.
    pub fn get_title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The tool's description, if set.
    pub fn get_description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// Lets the input schema accept properties the argument type does not
    /// name (they are then ignored), as a schema written for another server
    /// may have to. By default the schema of a struct is closed
    /// (`"additionalProperties": false`): serde drops fields a struct does
    /// not name, so an argument the model misspelled would vanish without a
    /// word; closed, the host refuses the call and names the field.
    pub fn open_arguments(mut self) -> Self {
        self.closed = false;
        self
    }

    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> Value {
        let schema = (self.input_schema)();
        if self.closed { close(schema) } else { schema }
    }

    /// The JSON Schema of the structured content, if the tool has one.
    pub fn get_output_schema(&self) -> Option<Value> {
        (self.output_schema)()
    }

    /// Runs the tool with `arguments`, a JSON object as text (empty text
    /// counts as `{}`). Arguments that do not fit the tool's argument type
    /// give a tool execution error naming the problem.
    ///
    /// # Panics
    ///
    /// When Corral would refuse to load the plugin because of this tool, so
    /// that a plugin's own `cargo test` finds the mistake before a build
    /// does: a name that is not 1-64 characters of `[A-Za-z0-9_-]`, or
    /// arguments that are not an object (`|x: f64|`: MCP arguments are
    /// always a JSON object, so they must be a struct with named fields).
    pub fn call(&self, arguments: &str) -> CallResult {
        assert!(
            is_valid_name(&self.name),
            "tool name {:?} is not 1-64 characters of A-Z, a-z, 0-9, `_` and `-`: Corral would not load the plugin",
            self.name
        );
        // Natively only (the plugin's tests): in the component, Corral has
        // refused such a plugin at load, and the schema would be built on
        // every call.
        #[cfg(not(target_family = "wasm"))]
        self.assert_arguments_are_an_object();
        // Every run of a call numbers its requests to the client alike.
        crate::client::start_call();
        crate::state::start_call();
        let arguments = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        match (self.handler)(arguments) {
            Ok(result) => result,
            Err(error) => {
                CallResult::error(format!("invalid arguments for tool {}: {error}", self.name))
            }
        }
    }
}

impl Tool {
    #[cfg(not(target_family = "wasm"))]
    fn assert_arguments_are_an_object(&self) {
        let schema = self.input_schema();
        assert!(
            schema.get("type") == Some(&Value::from("object")),
            "the arguments of tool {:?} are a `{}`, whose JSON Schema is {schema}: MCP tool \
             arguments are always a JSON object, so Corral would not load the plugin. Take a \
             struct with named fields instead (`#[derive(Deserialize, JsonSchema)] struct Args \
             {{ x: f64 }}`, then `|args: Args|`), or `NoArgs` for a tool without arguments",
            self.name,
            self.arguments_type
        );
    }
}

/// Whether `name` is a tool name Corral loads (the host's rule, which every
/// client accepts).
pub(crate) fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("title", &self.title)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// An icon a client may show for a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// e.g. `image/svg+xml`.
    pub mime_type: Option<String>,
    /// Sizes such as `48x48`, or `any` for scalable formats.
    pub sizes: Vec<String>,
    /// `light` or `dark`, if the icon suits only one theme.
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the sizes, e.g. `["48x48", "96x96"]` or `["any"]`.
    pub fn sizes(mut self, sizes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.sizes = sizes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the theme the icon suits: `light` or `dark`.
    pub fn theme(mut self, theme: impl Into<String>) -> Self {
        self.theme = Some(theme.into());
        self
    }
}

/// The argument type of a tool that takes no arguments: an empty object,
/// with the schema `{"type":"object","additionalProperties":false}`.
///
/// ```
/// use corral_sdk::{NoArgs, Tool};
/// let tool = Tool::new("now", |_: NoArgs| "12:00");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

impl JsonSchema for NoArgs {
    fn schema_name() -> Cow<'static, str> {
        "NoArgs".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": false,
        })
    }
}
