//! A fake [`ToolHost`]: a catalog of tools with fixed, known answers, each
//! there to exercise one part of the protocol, and the host events (tool list
//! changes, server logs) a test triggers by hand.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use corral_mcp::{HostEvents, HostLog, ToolHost, UnknownTool};
use corral_tool::{
    Annotations, CallContext, CallEvent, CallOutput, Content, Icon, LogLevel, ResourceContents,
    Role, TaskSupport, ToolAnnotations, ToolDef,
};
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, broadcast, watch};

/// `add`: integers `a` and `b`; answers their sum as structured content,
/// mirrored as JSON text (as the spec asks of a tool with structured output).
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
        held_bytes: 0,
    }
}

/// Serves a list of tools from [`catalog`], answering calls as each tool's
/// documentation says.
pub struct FakeHost {
    tools: Mutex<Arc<[ToolDef]>>,
    tools_changed: watch::Sender<u64>,
    logs: broadcast::Sender<HostLog>,
    /// Notified when a `wait` call starts running.
    wait_started: Notify,
    /// Notified when a `wait` call's work is dropped (it never ends otherwise).
    wait_stopped: Notify,
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
            tools_changed: watch::Sender::new(0),
            logs: broadcast::Sender::new(16),
            wait_started: Notify::new(),
            wait_stopped: Notify::new(),
        }
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

    async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> Result<CallOutput, UnknownTool> {
        if !self.tools().iter().any(|tool| tool.name == name) {
            return Err(UnknownTool);
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
            },
            "roster" => CallOutput {
                content: vec![Content::text("Two people: Ada and Bob")],
                structured: Some(json!(["Ada", "Bob"])),
                is_error: false,
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
            logs: self.logs.subscribe(),
        })
    }
}

fn text(text: String) -> CallOutput {
    CallOutput {
        content: vec![Content::text(text)],
        structured: None,
        is_error: false,
    }
}

/// `value` as structured content, mirrored as JSON text.
fn structured(value: Value) -> CallOutput {
    CallOutput {
        content: vec![Content::text(value.to_string())],
        structured: Some(value),
        is_error: false,
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
    }
}
