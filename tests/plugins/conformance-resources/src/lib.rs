//! Test fixture: the resources, resource templates, prompts and completions
//! that the server scenarios of the official MCP conformance suite (npm
//! `@modelcontextprotocol/conformance`) read, get and complete by name,
//! answering exactly what each scenario's description asks for. The suite's
//! tools are in `tests/plugins/conformance`, which serves beside this one.
//!
//! Written against the raw bindings of world `plugin-full`, so that it
//! depends on nothing but the contract. It has two tools, both for tests
//! that need the plugin to change something while they watch:
//! - `test_trigger_prompt_change` adds `test_added_prompt` to the prompt
//!   list, or takes it away (kept in its store, bucket `default`), and says
//!   `host.prompts-changed`: the suite's listen scenario calls it by name;
//! - `test_update_watched_resource` says `host.resource-updated` for
//!   `test://watched-resource`, so that a client subscribed to it hears
//!   `notifications/resources/updated`.

wit_bindgen::generate!({ world: "plugin-full", path: "../../../wit" });

/// The `wasi:keyvalue` store behind `test_trigger_prompt_change`.
mod keyvalue {
    wit_bindgen::generate!({ world: "wasi:keyvalue/imports", path: "../../../wit/keyvalue" });
}

use corral::plugin::client::{
    self, ElicitationAnswer, FormElicitation, InputRequest, InputResponse, Request,
};
use corral::plugin::host;
use corral::plugin::types::{
    BinaryContent, Content, EmbeddedResource, ResourceContents, Role, TextContent,
};
use exports::corral::plugin::completion::{self, Completions, Reference};
use exports::corral::plugin::prompts::{
    self, GetError, Prompt, PromptArgument, PromptMessage, PromptResult,
};
use exports::corral::plugin::resources::{
    self, Contents, Listing, ReadError, Resource, ResourceTemplate,
};
use exports::corral::plugin::tools::{self, CallResult, Tool};

struct ConformanceResources;

export!(ConformanceResources);

pub const STATIC_TEXT: &str = "test://static-text";
pub const STATIC_BINARY: &str = "test://static-binary";
pub const WATCHED: &str = "test://watched-resource";
pub const TEMPLATE: &str = "test://template/{id}/data";

/// A 1x1 PNG.
const PIXEL_PNG: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// What `arg1` of `test_prompt_with_arguments` completes to (the values of
/// the scenario's own example, and a few that start as its probe does).
const ARG1_VALUES: [&str; 6] = ["paris", "park", "party", "test", "testing", "tested"];

/// What `{id}` of the template completes to.
const ID_VALUES: [&str; 5] = ["123", "124", "125", "200", "300"];

/// The store's bucket and key: whether `test_added_prompt` is listed.
const BUCKET: &str = "default";
const ADDED_PROMPT: &str = "added-prompt";

fn resource(uri: &str, name: &str, description: &str, mime_type: &str) -> Resource {
    Resource {
        uri: uri.into(),
        name: name.into(),
        title: None,
        description: Some(description.into()),
        mime_type: Some(mime_type.into()),
        size: None,
        annotations: None,
        icons: vec![],
    }
}

fn text_contents(uri: &str, mime_type: &str, text: String) -> Contents {
    Contents {
        uri: uri.into(),
        mime_type: Some(mime_type.into()),
        body: ResourceContents::Text(text),
    }
}

/// The `{id}` of a URI that matches [`TEMPLATE`].
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

impl resources::Guest for ConformanceResources {
    fn list() -> Listing {
        Listing {
            // The static text first: the caching scenario reads the first.
            resources: vec![
                resource(
                    STATIC_TEXT,
                    "static-text",
                    "A static text resource for testing.",
                    "text/plain",
                ),
                resource(
                    STATIC_BINARY,
                    "static-binary",
                    "A static binary resource (a 1x1 PNG) for testing.",
                    "image/png",
                ),
                resource(
                    WATCHED,
                    "watched-resource",
                    "A resource to subscribe to; test_update_watched_resource says it changed.",
                    "text/plain",
                ),
            ],
            templates: vec![ResourceTemplate {
                uri_template: TEMPLATE.into(),
                name: "template-data".into(),
                title: None,
                description: Some("Data for any id, with the id substituted.".into()),
                mime_type: Some("application/json".into()),
                annotations: None,
                icons: vec![],
            }],
        }
    }

    fn read(uri: String) -> Result<Vec<Contents>, ReadError> {
        let contents = match uri.as_str() {
            STATIC_TEXT => text_contents(
                &uri,
                "text/plain",
                "This is the content of the static text resource.".into(),
            ),
            STATIC_BINARY => Contents {
                uri: uri.clone(),
                mime_type: Some("image/png".into()),
                body: ResourceContents::Blob(PIXEL_PNG.to_vec()),
            },
            WATCHED => text_contents(
                &uri,
                "text/plain",
                "This is the content of the watched resource.".into(),
            ),
            _ => {
                let id = template_id(&uri).ok_or(ReadError::NotFound)?;
                let json =
                    format!(r#"{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}"#);
                text_contents(&uri, "application/json", json)
            }
        };
        Ok(vec![contents])
    }
}

fn prompt(name: &str, description: &str, arguments: &[(&str, &str)]) -> Prompt {
    Prompt {
        name: name.into(),
        title: None,
        description: Some(description.into()),
        arguments: arguments
            .iter()
            .map(|(name, description)| PromptArgument {
                name: (*name).into(),
                title: None,
                description: Some((*description).into()),
                required: true,
            })
            .collect(),
        icons: vec![],
    }
}

fn user(content: Content) -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content,
    }
}

fn text(text: impl Into<String>) -> Content {
    Content::Text(TextContent {
        text: text.into(),
        annotations: None,
    })
}

fn messages(messages: Vec<PromptMessage>) -> Result<PromptResult, GetError> {
    Ok(PromptResult {
        description: None,
        messages,
    })
}

/// The value of argument `name` (the host passes every required one).
fn argument<'a>(arguments: &'a [(String, String)], name: &str) -> &'a str {
    arguments
        .iter()
        .find(|(key, _)| key == name)
        .map_or("", |(_, value)| value.as_str())
}

fn bucket() -> Option<keyvalue::wasi::keyvalue::store::Bucket> {
    keyvalue::wasi::keyvalue::store::open(BUCKET).ok()
}

/// Whether the store says `test_added_prompt` is listed.
fn added_prompt_listed() -> bool {
    bucket()
        .and_then(|bucket| bucket.get(ADDED_PROMPT).ok().flatten())
        .is_some_and(|value| value == b"true")
}

/// Asks the user for the context of `test_input_required_result_prompt`,
/// with the key and the form the suite's scenario documents.
fn ask_context() -> Result<String, GetError> {
    let request = InputRequest {
        key: "user_context".into(),
        request: Request::ElicitForm(FormElicitation {
            message: "What context should the prompt use?".into(),
            requested_schema: r#"{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}"#.into(),
        }),
    };
    let answers = client::ask(&[request])
        .map_err(|err| GetError::Failed(format!("could not ask for the context: {err:?}")))?;
    match answers.first() {
        Some(InputResponse::Elicitation(ElicitationAnswer::Accept(json))) => {
            let value: serde_json::Value = serde_json::from_str(json)
                .map_err(|err| GetError::Failed(format!("the answer is not JSON: {err}")))?;
            Ok(value["context"].as_str().unwrap_or_default().to_string())
        }
        Some(InputResponse::Elicitation(_)) => Err(GetError::Failed(
            "the user gave no context for the prompt".into(),
        )),
        _ => Err(GetError::Failed(
            "the client answered something else".into(),
        )),
    }
}

impl prompts::Guest for ConformanceResources {
    fn list() -> Vec<Prompt> {
        let mut prompts = vec![
            prompt(
                "test_simple_prompt",
                "A simple prompt without arguments.",
                &[],
            ),
            prompt(
                "test_prompt_with_arguments",
                "A prompt with two required arguments.",
                &[
                    ("arg1", "First test argument"),
                    ("arg2", "Second test argument"),
                ],
            ),
            prompt(
                "test_prompt_with_embedded_resource",
                "A prompt that embeds the resource it is given.",
                &[("resourceUri", "URI of the resource to embed")],
            ),
            prompt("test_prompt_with_image", "A prompt with an image.", &[]),
            prompt(
                "test_input_required_result_prompt",
                "A prompt that asks the user for its context first.",
                &[],
            ),
        ];
        if added_prompt_listed() {
            prompts.push(prompt(
                "test_added_prompt",
                "Listed or not, as test_trigger_prompt_change last left it.",
                &[],
            ));
        }
        prompts
    }

    fn get(name: String, arguments: Vec<(String, String)>) -> Result<PromptResult, GetError> {
        match name.as_str() {
            "test_simple_prompt" => {
                messages(vec![user(text("This is a simple prompt for testing."))])
            }
            "test_prompt_with_arguments" => messages(vec![user(text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument(&arguments, "arg1"),
                argument(&arguments, "arg2")
            )))]),
            "test_prompt_with_embedded_resource" => messages(vec![
                user(Content::EmbeddedResource(EmbeddedResource {
                    uri: argument(&arguments, "resourceUri").into(),
                    mime_type: Some("text/plain".into()),
                    contents: ResourceContents::Text(
                        "Embedded resource content for testing.".into(),
                    ),
                    annotations: None,
                })),
                user(text("Please process the embedded resource above.")),
            ]),
            "test_prompt_with_image" => messages(vec![
                user(Content::Image(BinaryContent {
                    data: PIXEL_PNG.to_vec(),
                    mime_type: "image/png".into(),
                    annotations: None,
                })),
                user(text("Please analyze the image above.")),
            ]),
            "test_input_required_result_prompt" => {
                let context = ask_context()?;
                messages(vec![user(text(format!(
                    "Prompt with the context the user gave: {context}"
                )))])
            }
            "test_added_prompt" => messages(vec![user(text("test_added_prompt is listed"))]),
            _ => Err(GetError::Failed(format!("no prompt {name}"))),
        }
    }
}

impl completion::Guest for ConformanceResources {
    fn complete(
        reference: Reference,
        name: String,
        value: String,
        _context: Vec<(String, String)>,
    ) -> Completions {
        let candidates: &[&str] = match (&reference, name.as_str()) {
            (Reference::Prompt(prompt), "arg1") if prompt == "test_prompt_with_arguments" => {
                &ARG1_VALUES
            }
            (Reference::ResourceTemplate(template), "id") if template == TEMPLATE => &ID_VALUES,
            _ => &[],
        };
        let values: Vec<String> = candidates
            .iter()
            .filter(|candidate| candidate.starts_with(value.as_str()))
            .map(|candidate| (*candidate).to_string())
            .collect();
        Completions {
            total: Some(values.len() as u32),
            values,
            has_more: false,
        }
    }
}

fn tool(name: &str, description: &str) -> Tool {
    Tool {
        name: name.into(),
        title: None,
        description: Some(description.into()),
        input_schema: r#"{"type":"object"}"#.into(),
        output_schema: None,
        annotations: None,
        icons: vec![],
        task_support: None,
    }
}

fn said(text_said: String, is_error: bool) -> CallResult {
    CallResult {
        content: vec![text(text_said)],
        structured_content: None,
        is_error,
    }
}

/// Adds `test_added_prompt` to the prompt list, or takes it away.
fn trigger_prompt_change() -> CallResult {
    let Some(bucket) = bucket() else {
        return said(
            "the store is not granted: [state] buckets = [\"default\"]".into(),
            true,
        );
    };
    let listed = !added_prompt_listed();
    let value: &[u8] = if listed { b"true" } else { b"false" };
    if let Err(err) = bucket.set(ADDED_PROMPT, value) {
        return said(format!("the store failed: {err:?}"), true);
    }
    host::prompts_changed();
    let now = if listed {
        "is listed from now on"
    } else {
        "is no longer listed"
    };
    said(format!("test_added_prompt {now}"), false)
}

impl tools::Guest for ConformanceResources {
    fn list() -> Vec<Tool> {
        vec![
            tool(
                "test_trigger_prompt_change",
                "Adds test_added_prompt to the prompt list, or takes it away: the list changes.",
            ),
            tool(
                "test_update_watched_resource",
                "Says that test://watched-resource changed, for its subscribers.",
            ),
        ]
    }

    fn call(name: String, _arguments: String) -> CallResult {
        match name.as_str() {
            "test_trigger_prompt_change" => trigger_prompt_change(),
            "test_update_watched_resource" => {
                host::resource_updated(WATCHED);
                said(format!("{WATCHED} changed"), false)
            }
            _ => said(format!("no tool {name}"), true),
        }
    }
}
