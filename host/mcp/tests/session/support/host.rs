//! A fake [`ToolHost`]: a catalog of tools with fixed, known answers, each
//! there to exercise one part of the protocol, and the host events (tool list
//! changes, server logs) a test triggers by hand.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use corral_mcp::{HostEvents, HostLog, ToolHost, UnknownTool};
use corral_tool::{
    Annotations, AskError, CallContext, CallEvent, CallOutput, Client, CompleteError,
    CompletionRef, CompletionRequest, Completions, Content, Icon, InputKind, InputRequest,
    LogLevel, NotLoaded, Offers, PromptArgument, PromptDef, PromptError, PromptMessage,
    PromptOutput, ReadError, ResourceContents, ResourceDef, ResourceItem, ResourceTemplateDef,
    Role, Scopes, Target, TaskSupport, ToolAnnotations, ToolDef,
};
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, broadcast, watch};

/// `add`: integers `a` and `b`; answers their sum as structured content,
/// and as its text the same JSON (as the spec advises a tool with
/// structured output).
pub fn add() -> ToolDef {
    ToolDef {
        output_schema: Some(json!({
            "type": "object",
            "properties": { "sum": { "type": "integer" } },
            "required": ["sum"],
        })),
        ..tool(
            "add",
            "Adds two integers",
            json!({
                "type": "object",
                "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
                "required": ["a", "b"],
            }),
        )
    }
}

/// `echo`: answers its arguments object as JSON text.
pub fn echo() -> ToolDef {
    tool("echo", "Echoes its arguments", json!({ "type": "object" }))
}

/// `media`: answers one item of every content type but text: an image, an
/// audio clip, a resource link and two embedded resources (text and blob),
/// some with content annotations.
pub fn media() -> ToolDef {
    tool(
        "media",
        "Returns every kind of content",
        json!({ "type": "object", "additionalProperties": false }),
    )
}

/// `forecast`: a tool with every optional field (title, output schema,
/// annotations, icons, task support); answers a sentence and structured
/// content (an object), which the sentence does not hold as JSON.
pub fn forecast() -> ToolDef {
    ToolDef {
        title: Some("Weather Forecast".into()),
        output_schema: Some(json!({
            "type": "object",
            "properties": {
                "conditions": { "type": "string" },
                "temperature": { "type": "number" },
            },
        })),
        annotations: Some(ToolAnnotations {
            title: Some("Forecast".into()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(true),
        }),
        icons: vec![Icon {
            src: "https://example.com/sun.png".into(),
            mime_type: Some("image/png".into()),
            sizes: vec!["48x48".into()],
            theme: Some("light".into()),
        }],
        task_support: Some(TaskSupport::Optional),
        task: Default::default(),
        ..tool(
            "forecast",
            "Forecasts the weather",
            json!({
                "type": "object",
                "properties": { "location": { "type": "string" } },
            }),
        )
    }
}

/// `fail`: always a tool execution error.
pub fn fail() -> ToolDef {
    tool(
        "fail",
        "Always fails",
        json!({ "type": "object", "additionalProperties": false }),
    )
}

/// `countdown`: reports progress "step 1" to "step 3" of 3 (step 2 twice: the
/// repeat must not reach the client), logging at debug, info, warning and
/// error along the way, then answers "liftoff".
pub fn countdown() -> ToolDef {
    tool(
        "countdown",
        "Counts down, reporting progress and logging",
        json!({ "type": "object", "additionalProperties": false }),
    )
}

/// `wait`: runs until it is cancelled (see [`FakeHost::wait_started`]).
pub fn wait() -> ToolDef {
    tool(
        "wait",
        "Waits until cancelled",
        json!({ "type": "object", "additionalProperties": false }),
    )
}

/// `roster`: answers a sentence and structured content that is not an
/// object but an array (which 2026-07-28 allows), without an output schema.
pub fn roster() -> ToolDef {
    tool(
        "roster",
        "Lists the team",
        json!({ "type": "object", "additionalProperties": false }),
    )
}

/// `gauge`: answers structured content (an object) and no content at all:
/// the protocol layer adds its JSON as the result's text.
pub fn gauge() -> ToolDef {
    ToolDef {
        output_schema: Some(json!({
            "type": "object",
            "properties": { "level": { "type": "number" } },
        })),
        ..tool(
            "gauge",
            "Reads the water level",
            json!({ "type": "object", "additionalProperties": false }),
        )
    }
}

/// `greet`: asks the client for a name (an elicitation form, key
/// `user_name`), then answers "Hello, NAME!"; a declined form is "Hello,
/// stranger!", and an [`AskError`] a tool error with its Debug text.
pub fn greet() -> ToolDef {
    tool("greet", "Asks for a name", json!({ "type": "object" }))
}

/// `survey`: asks two rounds, the name (`step1`) then the favourite colour
/// (`step2`), and answers "NAME likes COLOR".
pub fn survey() -> ToolDef {
    tool("survey", "Asks twice", json!({ "type": "object" }))
}

/// `context`: one ask of two requests, a sampling (`question`) and the
/// roots (`client_roots`); answers both results as JSON text.
pub fn context() -> ToolDef {
    tool(
        "context",
        "Samples and lists roots at once",
        json!({ "type": "object" }),
    )
}

/// `visit`: asks the client to visit a URL (an elicitation in URL mode,
/// key `visit`), and answers the result's action.
pub fn visit() -> ToolDef {
    tool(
        "visit",
        "Sends the user to a URL",
        json!({ "type": "object" }),
    )
}

/// `capabilities`: answers what the client declared, as the Debug text of
/// its [`corral_tool::ClientCapabilities`], asking nothing.
pub fn capabilities() -> ToolDef {
    tool(
        "capabilities",
        "Tells what the client can answer",
        json!({ "type": "object" }),
    )
}

/// `marathon`: asks one elicitation after another (keys `r1`, `r2`...)
/// until one fails, then answers how many were answered and why it stopped.
pub fn marathon() -> ToolDef {
    tool("marathon", "Asks without end", json!({ "type": "object" }))
}

/// `moody`: asks a question that differs on every run (it counts its
/// runs), as a tool whose questions depend on the time or chance does.
pub fn moody() -> ToolDef {
    tool(
        "moody",
        "Asks something new every time",
        json!({ "type": "object" }),
    )
}

/// `crowd`: one ask of five elicitation forms (keys `f1` to `f5`, field
/// `x` each), and answers how many were answered.
pub fn crowd() -> ToolDef {
    tool(
        "crowd",
        "Asks five things at once",
        json!({ "type": "object" }),
    )
}

/// `hear`: asks the client's model about an audio clip (a sampling request
/// with audio content, key `clip`), and answers the result as JSON text.
pub fn hear() -> ToolDef {
    tool("hear", "Samples about audio", json!({ "type": "object" }))
}

/// `recall`: a sampling request (key `recall`) asking the client to
/// include the context of this server (`includeContext: "thisServer"`),
/// and answers the result as JSON text.
pub fn recall() -> ToolDef {
    tool(
        "recall",
        "Samples with context",
        json!({ "type": "object" }),
    )
}

/// The tools that ask the client (not in the [`catalog`]: a host serves
/// them with [`FakeHost::serving`]).
pub fn asking() -> Vec<ToolDef> {
    vec![
        greet(),
        survey(),
        context(),
        visit(),
        capabilities(),
        marathon(),
        moody(),
        crowd(),
        hear(),
        recall(),
    ]
}

/// Every tool above, in the order they are listed.
pub fn catalog() -> Vec<ToolDef> {
    vec![
        add(),
        echo(),
        media(),
        forecast(),
        fail(),
        countdown(),
        wait(),
        roster(),
        gauge(),
    ]
}

/// A tool with a name, a description and an input schema only.
fn tool(name: &str, description: &str, input_schema: Value) -> ToolDef {
    ToolDef {
        name: name.into(),
        title: None,
        description: Some(description.into()),
        input_schema,
        output_schema: None,
        annotations: None,
        icons: vec![],
        task_support: None,
        task: Default::default(),
        held_bytes: 0,
    }
}

/// Serves a list of tools from [`catalog`], answering calls as each tool's
/// documentation says.
pub struct FakeHost {
    tools: Mutex<Arc<[ToolDef]>>,
    /// What [`FakeHost::with_features`] serves besides tools (nothing by
    /// default).
    features: Mutex<Features>,
    tools_changed: watch::Sender<u64>,
    resources_changed: watch::Sender<u64>,
    prompts_changed: watch::Sender<u64>,
    resource_updated: broadcast::Sender<String>,
    /// Whether the host has finished starting ([`ToolHost::ready`]).
    started: watch::Sender<bool>,
    logs: broadcast::Sender<HostLog>,
    /// The plugin files that failed to load ([`ToolHost::not_loaded`]).
    not_loaded: Mutex<Arc<[NotLoaded]>>,
    /// Notified when a `wait` call starts running.
    wait_started: Notify,
    /// Notified when a `wait` call's work is dropped (it never ends otherwise).
    wait_stopped: Notify,
    /// The scopes some targets need ([`ToolHost::required_scopes`]).
    scopes: Mutex<Vec<(String, Scopes)>>,
}

impl FakeHost {
    /// Serving the whole [`catalog`].
    pub fn new() -> Self {
        Self::serving(catalog())
    }

    /// Serving `tools` (each one of the [`catalog`]'s).
    pub fn serving(tools: Vec<ToolDef>) -> Self {
        FakeHost {
            tools: Mutex::new(tools.into()),
            features: Mutex::new(Features::none()),
            tools_changed: watch::Sender::new(0),
            resources_changed: watch::Sender::new(0),
            prompts_changed: watch::Sender::new(0),
            resource_updated: broadcast::Sender::new(16),
            started: watch::Sender::new(true),
            logs: broadcast::Sender::new(16),
            not_loaded: Mutex::new(Arc::new([])),
            wait_started: Notify::new(),
            wait_stopped: Notify::new(),
            scopes: Mutex::new(Vec::new()),
        }
    }

    /// Needing `scope` for each of `targets` (`tool:NAME`, `prompt:NAME`,
    /// `resource:URI`, `template:TEMPLATE`), as an `[access]` policy says.
    pub fn with_scope(self, scope: &str, targets: &[&str]) -> Self {
        self.scopes.lock().unwrap().extend(
            targets
                .iter()
                .map(|target| (target.to_string(), Scopes::new([scope.to_string()]))),
        );
        self
    }

    /// Not ready until [`FakeHost::finish_starting`], as a server still
    /// loading its plugins.
    pub fn starting(self) -> Self {
        self.started.send_replace(false);
        self
    }

    /// Ready from now on.
    pub fn finish_starting(&self) {
        self.started.send_replace(true);
    }

    /// Serving also the resources, templates and prompts of [`features`],
    /// completing their arguments.
    pub fn with_features(self) -> Self {
        *self.features.lock().unwrap() = features();
        self
    }

    /// Serving also `features`.
    pub fn with(self, features: Features) -> Self {
        *self.features.lock().unwrap() = features;
        self
    }

    /// Replaces what is served besides tools and signals that the resource
    /// and prompt lists changed, as a reload does.
    pub fn set_features(&self, features: Features) {
        *self.features.lock().unwrap() = features;
        self.resources_changed
            .send_modify(|generation| *generation += 1);
        self.prompts_changed
            .send_modify(|generation| *generation += 1);
    }

    /// Signals that the resource list changed (alone).
    pub fn touch_resources(&self) {
        self.resources_changed
            .send_modify(|generation| *generation += 1);
    }

    /// Signals that the prompt list changed (alone).
    pub fn touch_prompts(&self) {
        self.prompts_changed
            .send_modify(|generation| *generation += 1);
    }

    /// Says that the resource at `uri` changed, as `host.resource-updated`.
    pub fn update(&self, uri: &str) {
        // Fails only when no session follows the host.
        let _ = self.resource_updated.send(uri.into());
    }

    /// Replaces the tool list and signals the change, as a reload does.
    pub fn set_tools(&self, tools: Vec<ToolDef>) {
        *self.tools.lock().unwrap() = tools.into();
        self.tools_changed
            .send_modify(|generation| *generation += 1);
    }

    /// A server log message for clients (as a failed reload sends).
    pub fn log(&self, level: LogLevel, logger: &str, message: &str) {
        let log = HostLog {
            level,
            logger: logger.into(),
            message: message.into(),
        };
        // Fails only when no session follows the host.
        let _ = self.logs.send(log);
    }

    /// Says that `files` failed to load, as a folder with broken plugins.
    pub fn with_not_loaded(self, files: &[(&str, &str)]) -> Self {
        *self.not_loaded.lock().unwrap() = files
            .iter()
            .map(|(file, reason)| NotLoaded::new(file.to_string(), reason, false))
            .collect();
        self
    }

    /// Resolves once a `wait` call has started (at once if one did before).
    pub async fn wait_started(&self) {
        self.wait_started.notified().await
    }

    /// Resolves once a `wait` call's work has been dropped.
    pub async fn wait_stopped(&self) {
        self.wait_stopped.notified().await
    }
}

/// Notifies `wait_stopped` when a `wait` call's future is dropped.
struct StopSignal<'a>(&'a Notify);

impl Drop for StopSignal<'_> {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

impl ToolHost for FakeHost {
    fn tools(&self) -> Arc<[ToolDef]> {
        self.tools.lock().unwrap().clone()
    }

    fn not_loaded(&self) -> Arc<[NotLoaded]> {
        self.not_loaded.lock().unwrap().clone()
    }

    async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> Result<CallOutput, UnknownTool> {
        if !self.tools().iter().any(|tool| tool.name == name) {
            return Err(UnknownTool);
        }
        if let Some(output) = asking_call(name, context.client.as_deref()).await {
            return Ok(output);
        }
        let events = context.events;
        let report = |event| {
            if let Some(events) = &events {
                events(event)
            }
        };
        Ok(match name {
            "add" => {
                let integer = |key| arguments.get(key).and_then(Value::as_i64);
                match (integer("a"), integer("b")) {
                    (Some(a), Some(b)) => structured(json!({ "sum": a + b })),
                    _ => CallOutput::error("add needs integers a and b"),
                }
            }
            "echo" => text(Value::Object(arguments).to_string()),
            "media" => media_output(),
            "forecast" => CallOutput {
                content: vec![Content::text("Partly cloudy, 22.5 °C")],
                structured: Some(json!({ "conditions": "Partly cloudy", "temperature": 22.5 })),
                is_error: false,
                failed: false,
            },
            "roster" => CallOutput {
                content: vec![Content::text("Two people: Ada and Bob")],
                structured: Some(json!(["Ada", "Bob"])),
                is_error: false,
                failed: false,
            },
            "gauge" => CallOutput {
                content: vec![],
                structured: Some(json!({ "level": 1.25 })),
                is_error: false,
                failed: false,
            },
            "fail" => CallOutput::error("the disk is full"),
            "countdown" => {
                for (done, message, level, log) in [
                    (1.0, "step 1", LogLevel::Debug, "ignition"),
                    (2.0, "step 2", LogLevel::Info, "engines running"),
                    (2.0, "step 2 again", LogLevel::Warning, "wobbling"),
                    (3.0, "step 3", LogLevel::Error, "lost a fin"),
                ] {
                    report(CallEvent::Progress {
                        done,
                        total: Some(3.0),
                        message: Some(message.into()),
                    });
                    report(CallEvent::Log {
                        level,
                        message: log.into(),
                    });
                }
                text("liftoff".into())
            }
            "wait" => {
                let _stopped = StopSignal(&self.wait_stopped);
                self.wait_started.notify_one();
                let never: Infallible = std::future::pending().await;
                match never {}
            }
            other => unreachable!("{other} is not in the catalog"),
        })
    }

    fn subscribe(&self) -> Option<HostEvents> {
        Some(HostEvents {
            tools_changed: self.tools_changed.subscribe(),
            resources_changed: self.resources_changed.subscribe(),
            prompts_changed: self.prompts_changed.subscribe(),
            resource_updated: self.resource_updated.subscribe(),
            logs: self.logs.subscribe(),
        })
    }

    async fn ready(&self) {
        let mut started = self.started.subscribe();
        // The sender lives as long as the host.
        let _ = started.wait_for(|started| *started).await;
    }

    fn resources(&self) -> Arc<[ResourceDef]> {
        self.features.lock().unwrap().resources.clone()
    }

    fn required_scopes(&self, target: Target<'_>) -> Scopes {
        let key = match target {
            Target::Tool(name) => format!("tool:{name}"),
            Target::Prompt(name) => format!("prompt:{name}"),
            Target::Resource(uri) => format!("resource:{uri}"),
            Target::ResourceTemplate(template) => format!("template:{template}"),
        };
        let scopes = self.scopes.lock().unwrap();
        scopes
            .iter()
            .find(|(target, _)| *target == key)
            .map(|(_, scopes)| scopes.clone())
            .unwrap_or_default()
    }

    fn resource_templates(&self) -> Arc<[ResourceTemplateDef]> {
        self.features.lock().unwrap().templates.clone()
    }

    fn prompts(&self) -> Arc<[PromptDef]> {
        self.features.lock().unwrap().prompts.clone()
    }

    fn offers(&self) -> Offers {
        let features = self.features.lock().unwrap();
        Offers {
            resources: !features.resources.is_empty() || !features.templates.is_empty(),
            prompts: !features.prompts.is_empty(),
            completions: features.completions,
        }
    }

    async fn read_resource(
        &self,
        uri: &str,
        context: CallContext,
    ) -> Result<Vec<ResourceItem>, ReadError> {
        read(uri, context).await
    }

    async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        context: CallContext,
    ) -> Result<PromptOutput, PromptError> {
        if !self.prompts().iter().any(|prompt| prompt.name == name) {
            return Err(PromptError::Unknown(format!("unknown prompt `{name}`")));
        }
        get_prompt(name, arguments, context).await
    }

    async fn complete(
        &self,
        request: CompletionRequest,
        _context: CallContext,
    ) -> Result<Completions, CompleteError> {
        complete(request)
    }
}

/// An elicitation form asking `message`, with one required string field.
pub fn form(key: &str, message: &str, field: &str) -> InputRequest {
    let params = json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": { field: { "type": "string" } },
            "required": [field],
        },
    });
    InputRequest {
        key: key.into(),
        kind: InputKind::ElicitForm,
        params: params.as_object().unwrap().clone(),
    }
}

/// The sampling request of `context`.
pub fn question() -> InputRequest {
    let params = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": "What is the capital of France?" } }],
        "maxTokens": 100,
    });
    InputRequest {
        key: "question".into(),
        kind: InputKind::Sample,
        params: params.as_object().unwrap().clone(),
    }
}

/// The roots request of `context`.
pub fn roots_request() -> InputRequest {
    InputRequest {
        key: "client_roots".into(),
        kind: InputKind::ListRoots,
        params: Map::new(),
    }
}

/// A sampling request of one user message with `content`, and `extra`
/// params.
pub fn sampling(key: &str, content: Value, extra: Value) -> InputRequest {
    let mut params = json!({
        "messages": [{ "role": "user", "content": content }],
        "maxTokens": 100,
    });
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    InputRequest {
        key: key.into(),
        kind: InputKind::Sample,
        params: params.as_object().unwrap().clone(),
    }
}

/// The URL elicitation of `visit`.
pub fn url_request() -> InputRequest {
    let params = json!({
        "mode": "url",
        "message": "Sign in",
        "url": "https://example.com/login",
        "elicitationId": "login-1",
    });
    InputRequest {
        key: "visit".into(),
        kind: InputKind::ElicitUrl,
        params: params.as_object().unwrap().clone(),
    }
}

/// The field `field` of an accepted elicitation, "stranger" when declined.
fn field(answer: &Map<String, Value>, field: &str) -> String {
    answer
        .get("content")
        .and_then(|content| content.get(field))
        .and_then(Value::as_str)
        .unwrap_or("stranger")
        .to_string()
}

/// The output of the tools that ask the client, or `None` for the others.
async fn asking_call(name: &str, client: Option<&dyn Client>) -> Option<CallOutput> {
    if !asking().iter().any(|tool| tool.name == name) {
        return None;
    }
    let Some(client) = client else {
        return Some(CallOutput::error("no client to ask"));
    };
    let failed = |error: AskError| CallOutput::error(format!("{error:?}"));
    Some(match name {
        "greet" => match client
            .ask(vec![form("user_name", "What is your name?", "name")])
            .await
        {
            Ok(answers) => text(format!("Hello, {}!", field(&answers[0], "name"))),
            Err(error) => failed(error),
        },
        "survey" => {
            let first = form("step1", "Step 1: What is your name?", "name");
            let name = match client.ask(vec![first]).await {
                Ok(answers) => field(&answers[0], "name"),
                Err(error) => return Some(failed(error)),
            };
            let second = form("step2", "Step 2: What is your favorite color?", "color");
            match client.ask(vec![second]).await {
                Ok(answers) => text(format!("{name} likes {}", field(&answers[0], "color"))),
                Err(error) => failed(error),
            }
        }
        "context" => match client.ask(vec![question(), roots_request()]).await {
            Ok(answers) => {
                text(Value::Array(answers.into_iter().map(Value::Object).collect()).to_string())
            }
            Err(error) => failed(error),
        },
        "visit" => match client.ask(vec![url_request()]).await {
            Ok(answers) => text(
                answers[0]
                    .get("action")
                    .cloned()
                    .unwrap_or_default()
                    .to_string(),
            ),
            Err(error) => failed(error),
        },
        "capabilities" => text(format!("{:?}", client.capabilities())),
        "crowd" => {
            let asks = (1..=5)
                .map(|i| form(&format!("f{i}"), &format!("Field {i}"), "x"))
                .collect();
            match client.ask(asks).await {
                Ok(answers) => text(format!("{} answered", answers.len())),
                Err(error) => failed(error),
            }
        }
        "hear" | "recall" => {
            let ask = if name == "hear" {
                let clip = json!({ "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav" });
                sampling("clip", clip, json!({}))
            } else {
                let words = json!({ "type": "text", "text": "What did we do?" });
                sampling("recall", words, json!({ "includeContext": "thisServer" }))
            };
            match client.ask(vec![ask]).await {
                Ok(answers) => text(Value::Object(answers[0].clone()).to_string()),
                Err(error) => failed(error),
            }
        }
        "marathon" => {
            let mut answered = 0;
            loop {
                let round = answered + 1;
                let ask = form(&format!("r{round}"), &format!("Round {round}"), "x");
                match client.ask(vec![ask]).await {
                    Ok(_) => answered += 1,
                    Err(error) => break text(format!("{answered} answered, then {error:?}")),
                }
            }
        }
        "moody" => {
            static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            match client
                .ask(vec![form("mood", &format!("Question {run}"), "x")])
                .await
            {
                Ok(_) => text("answered".into()),
                Err(error) => failed(error),
            }
        }
        _ => unreachable!("{name} is one of the asking tools"),
    })
}

fn text(text: String) -> CallOutput {
    CallOutput {
        content: vec![Content::text(text)],
        structured: None,
        is_error: false,
        failed: false,
    }
}

/// `value` as structured content, and the same JSON as its text.
fn structured(value: Value) -> CallOutput {
    CallOutput {
        content: vec![Content::text(value.to_string())],
        structured: Some(value),
        is_error: false,
        failed: false,
    }
}

fn media_output() -> CallOutput {
    CallOutput {
        content: vec![
            Content::Image {
                data: b"\x89PNG".to_vec(),
                mime_type: "image/png".into(),
                annotations: Some(Annotations {
                    audience: vec![Role::User],
                    priority: Some(0.9),
                    last_modified: None,
                }),
            },
            Content::Audio {
                data: b"RIFF".to_vec(),
                mime_type: "audio/wav".into(),
                annotations: None,
            },
            Content::ResourceLink {
                uri: "file:///project/src/main.rs".into(),
                name: "main.rs".into(),
                title: Some("Main".into()),
                description: Some("Primary application entry point".into()),
                mime_type: Some("text/x-rust".into()),
                size: Some(42),
                annotations: Some(Annotations {
                    audience: vec![Role::User, Role::Assistant],
                    priority: Some(0.5),
                    last_modified: Some("2025-05-03T14:30:00Z".into()),
                }),
            },
            Content::Resource {
                uri: "file:///notes.txt".into(),
                mime_type: Some("text/plain".into()),
                contents: ResourceContents::Text("hello".into()),
                annotations: None,
            },
            Content::Resource {
                uri: "file:///data.bin".into(),
                mime_type: None,
                contents: ResourceContents::Blob(vec![1, 2, 3]),
                annotations: None,
            },
        ],
        structured: None,
        is_error: false,
        failed: false,
    }
}

/// What a [`FakeHost`] serves besides tools.
#[derive(Clone)]
pub struct Features {
    pub resources: Arc<[ResourceDef]>,
    pub templates: Arc<[ResourceTemplateDef]>,
    pub prompts: Arc<[PromptDef]>,
    /// Whether `completion/complete` is offered.
    pub completions: bool,
}

impl Features {
    /// Nothing but tools.
    pub fn none() -> Features {
        Features {
            resources: Arc::new([]),
            templates: Arc::new([]),
            prompts: Arc::new([]),
            completions: false,
        }
    }
}

/// The resources, templates and prompts [`FakeHost::with_features`] serves:
/// - `doc://readme`: every optional field; reads as markdown text;
/// - `doc://logo`: reads as a PNG blob of bytes 0, 1, 2;
/// - `doc://secret`: asks the client for a passphrase (an elicitation form,
///   key `passphrase`, field `word`) and reads as "the secret is WORD";
/// - `doc://broken`: every read fails ("the disk is full");
/// - template `doc://notes/{topic}`: reads as "Notes on TOPIC", but
///   `doc://notes/missing` is not found;
/// - prompt `greeting` (argument `name` required, `style` optional):
///   reports progress 1 of 1 and logs "greeting NAME" at info, answers one
///   user message "Say hello to NAME" (", STYLE" when given);
/// - prompt `showcase`: a message of each content kind but text;
/// - prompt `confirm`: asks the client (key `user_context`, field
///   `context`) and answers the context as an assistant message;
/// - prompt `broken`: fails ("the template is gone");
/// - completion of `greeting`'s `name` (names starting with the value) and
///   of the template's `topic` (150 topics `t000`..: more than the 100 an
///   answer may carry).
pub fn features() -> Features {
    let readme = ResourceDef {
        uri: "doc://readme".into(),
        name: "readme".into(),
        title: Some("Read me".into()),
        description: Some("Start here".into()),
        mime_type: Some("text/markdown".into()),
        size: Some(12),
        annotations: Some(Annotations {
            audience: vec![Role::User],
            priority: Some(0.5),
            last_modified: Some("2025-05-03T14:30:00Z".into()),
        }),
        icons: vec![Icon {
            src: "https://example.com/doc.png".into(),
            mime_type: None,
            sizes: vec![],
            theme: None,
        }],
        held_bytes: 100,
    };
    let plain = |uri: &str, name: &str, mime: &str| ResourceDef {
        uri: uri.into(),
        name: name.into(),
        title: None,
        description: None,
        mime_type: Some(mime.into()),
        size: None,
        annotations: None,
        icons: vec![],
        held_bytes: 100,
    };
    let notes = ResourceTemplateDef {
        uri_template: "doc://notes/{topic}".into(),
        name: "notes".into(),
        title: Some("Notes".into()),
        description: Some("Notes by topic".into()),
        mime_type: Some("text/plain".into()),
        annotations: None,
        icons: vec![],
        held_bytes: 100,
    };
    let argument = |name: &str, title: Option<&str>, required: bool| PromptArgument {
        name: name.into(),
        title: title.map(Into::into),
        description: Some(format!("The {name}")),
        required,
    };
    let prompt = |name: &str, arguments: Vec<PromptArgument>| PromptDef {
        name: name.into(),
        title: None,
        description: Some(format!("The {name} prompt")),
        arguments,
        icons: vec![],
        held_bytes: 100,
    };
    Features {
        resources: vec![
            readme,
            plain("doc://logo", "logo", "image/png"),
            plain("doc://secret", "secret", "text/plain"),
            plain("doc://broken", "broken", "text/plain"),
        ]
        .into(),
        templates: vec![notes].into(),
        prompts: vec![
            PromptDef {
                title: Some("Greeting".into()),
                icons: vec![Icon {
                    src: "https://example.com/wave.png".into(),
                    mime_type: Some("image/png".into()),
                    sizes: vec![],
                    theme: None,
                }],
                ..prompt(
                    "greeting",
                    vec![
                        argument("name", Some("Name"), true),
                        argument("style", None, false),
                    ],
                )
            },
            prompt("showcase", vec![]),
            prompt("confirm", vec![]),
            prompt("broken", vec![]),
        ]
        .into(),
        completions: true,
    }
}

async fn read(uri: &str, context: CallContext) -> Result<Vec<ResourceItem>, ReadError> {
    let item = |mime: &str, contents| ResourceItem {
        uri: uri.into(),
        mime_type: Some(mime.into()),
        contents,
    };
    match uri {
        "doc://readme" => Ok(vec![item(
            "text/markdown",
            ResourceContents::Text("# Read me".into()),
        )]),
        "doc://logo" => Ok(vec![item(
            "image/png",
            ResourceContents::Blob(vec![0, 1, 2]),
        )]),
        "doc://secret" => {
            let Some(client) = context.client else {
                return Err(ReadError::Failed("no client to ask".into()));
            };
            match client
                .ask(vec![form("passphrase", "The passphrase?", "word")])
                .await
            {
                Ok(answers) => Ok(vec![item(
                    "text/plain",
                    ResourceContents::Text(format!("the secret is {}", field(&answers[0], "word"))),
                )]),
                Err(error) => Err(ReadError::Failed(format!("{error:?}"))),
            }
        }
        "doc://broken" => Err(ReadError::Failed("the disk is full".into())),
        "doc://notes/missing" => Err(ReadError::NotFound),
        other => match other.strip_prefix("doc://notes/") {
            Some(topic) => Ok(vec![item(
                "text/plain",
                ResourceContents::Text(format!("Notes on {topic}")),
            )]),
            None => Err(ReadError::NotFound),
        },
    }
}

async fn get_prompt(
    name: &str,
    arguments: BTreeMap<String, String>,
    context: CallContext,
) -> Result<PromptOutput, PromptError> {
    let message = |role, content| PromptMessage { role, content };
    let messages = match name {
        "greeting" => {
            let who = arguments.get("name").cloned().unwrap_or_default();
            if let Some(events) = &context.events {
                events(CallEvent::Progress {
                    done: 1.0,
                    total: Some(1.0),
                    message: Some("greeting".into()),
                });
                events(CallEvent::Log {
                    level: LogLevel::Info,
                    message: format!("greeting {who}"),
                });
            }
            let text = match arguments.get("style") {
                Some(style) => format!("Say hello to {who}, {style}"),
                None => format!("Say hello to {who}"),
            };
            vec![message(Role::User, Content::text(text))]
        }
        "showcase" => media_output()
            .content
            .into_iter()
            .map(|content| message(Role::Assistant, content))
            .collect(),
        "confirm" => {
            let Some(client) = context.client else {
                return Err(PromptError::Failed("no client to ask".into()));
            };
            let ask = form(
                "user_context",
                "What context should the prompt use?",
                "context",
            );
            match client.ask(vec![ask]).await {
                Ok(answers) => vec![message(
                    Role::Assistant,
                    Content::text(field(&answers[0], "context")),
                )],
                Err(error) => return Err(PromptError::Failed(format!("{error:?}"))),
            }
        }
        "broken" => return Err(PromptError::Failed("the template is gone".into())),
        other => unreachable!("{other} is not a fake prompt"),
    };
    Ok(PromptOutput {
        description: Some(format!("The {name} prompt")),
        messages,
    })
}

fn complete(request: CompletionRequest) -> Result<Completions, CompleteError> {
    let candidates: Vec<String> = match (&request.reference, request.argument.as_str()) {
        (CompletionRef::Prompt(name), "name") if name == "greeting" => {
            ["Ada", "Alan", "Bob"].map(String::from).to_vec()
        }
        (CompletionRef::ResourceTemplate(uri), "topic") if uri == "doc://notes/{topic}" => {
            (0..150).map(|i| format!("t{i:03}")).collect()
        }
        (CompletionRef::Prompt(name), _) if name == "broken" => {
            return Err(CompleteError::Failed("the template is gone".into()));
        }
        (reference, argument) => {
            return Err(CompleteError::UnknownReference(format!(
                "nothing to complete for {reference:?} argument `{argument}`"
            )));
        }
    };
    let values: Vec<String> = candidates
        .into_iter()
        .filter(|value| value.starts_with(&request.value))
        .collect();
    Ok(Completions {
        total: Some(values.len() as u64),
        values,
        has_more: false,
    })
}
