//! Glue between the public types and the generated bindings, used by the
//! code that [`plugin!`](crate::plugin) expands to. Not part of the API.

use std::collections::BTreeMap;

use crate::bindings::corral::plugin::icons as wit_icons;
use crate::bindings::corral::plugin::types as wit;
use crate::bindings::exports::corral::plugin::completion as wit_completion;
use crate::bindings::exports::corral::plugin::prompts as wit_prompts;
use crate::bindings::exports::corral::plugin::resources as wit_resources;
use crate::bindings::exports::corral::plugin::tools as wit_tools;
use crate::content::{
    Annotations, Content, EmbeddedResource, ResourceContents, ResourceLink, Role,
};
use crate::prompt::{Prompt, PromptError, PromptResult};
use crate::resource::{Contents, ReadError, Resource, ResourceTemplate};
use crate::result::CallResult;
use crate::tool::{Icon, Tool};

/// Everything a plugin exports, as `plugin!` lists it.
pub struct Plugin {
    pub tools: Vec<Tool>,
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
}

/// What a read answers: the listed resource at `uri`, else the first
/// template that matches it, else not found.
pub fn read(plugin: &Plugin, uri: &str) -> Result<Vec<Contents>, ReadError> {
    if let Some(resource) = plugin.resources.iter().find(|r| r.uri == uri) {
        return resource.read();
    }
    crate::client::start_call();
    crate::state::start_call();
    for template in &plugin.templates {
        if let Some(variables) = template.matches(uri) {
            return template.read_matched(uri, variables);
        }
    }
    Err(ReadError::NotFound)
}

/// What a prompt get answers.
pub fn get(
    plugin: &Plugin,
    name: &str,
    arguments: Vec<(String, String)>,
) -> Result<PromptResult, PromptError> {
    match plugin.prompts.iter().find(|p| p.name == name) {
        Some(prompt) => {
            crate::client::start_call();
            crate::state::start_call();
            prompt.get_checked(arguments)
        }
        None => Err(PromptError::InvalidArguments(format!(
            "unknown prompt: {name}"
        ))),
    }
}

/// What completion answers: a prompt's argument (by the plugin's own
/// name) or a template's variable (by its text, or a listed resource's URI
/// that it matches); anything unknown has nothing to suggest.
pub fn complete(
    plugin: &Plugin,
    prompt: Option<&str>,
    template: Option<&str>,
    name: &str,
    value: &str,
    context: Vec<(String, String)>,
) -> crate::Completions {
    let context: BTreeMap<String, String> = context.into_iter().collect();
    if let Some(prompt) = prompt {
        return match plugin.prompts.iter().find(|p| p.name == prompt) {
            Some(prompt) => prompt.run_completer(name, value, &context),
            None => Default::default(),
        };
    }
    let template = template.unwrap_or_default();
    match plugin.templates.iter().find(|t| t.uri_template == template) {
        Some(found) => found.run_completer(name, value, &context),
        None => Default::default(),
    }
}

/// Answers `tools.list`.
pub fn list_tools(tools: Vec<Tool>) -> Vec<wit_tools::Tool> {
    tools.into_iter().map(tool_to_wit).collect()
}

/// Answers `tools.call`.
pub fn call(tools: Vec<Tool>, name: &str, arguments: &str) -> wit_tools::CallResult {
    let result = match tools.iter().find(|tool| tool.name == name) {
        Some(tool) => tool.call(arguments),
        None => CallResult::error(format!("unknown tool: {name}")),
    };
    wit_tools::CallResult {
        content: result.content.into_iter().map(content_to_wit).collect(),
        structured_content: result.structured_content.map(|value| value.to_string()),
        is_error: result.is_error,
    }
}

fn tool_to_wit(tool: Tool) -> wit_tools::Tool {
    let input_schema = tool.input_schema().to_string();
    let output_schema = tool.get_output_schema().map(|schema| schema.to_string());
    let title = tool.title.map(String::from);
    let annotations = wit_tools::ToolAnnotations {
        title: title.clone(),
        read_only_hint: tool.read_only,
        destructive_hint: tool.destructive,
        idempotent_hint: tool.idempotent,
        open_world_hint: tool.open_world,
    };
    let has_annotations = annotations.title.is_some()
        || annotations.read_only_hint.is_some()
        || annotations.destructive_hint.is_some()
        || annotations.idempotent_hint.is_some()
        || annotations.open_world_hint.is_some();
    wit_tools::Tool {
        name: tool.name.into(),
        title,
        description: tool.description.map(String::from),
        input_schema,
        output_schema,
        annotations: has_annotations.then_some(annotations),
        icons: tool.icons.into_iter().map(icon_to_wit).collect(),
        task_support: tool.task_support.map(|support| match support {
            crate::TaskSupport::Forbidden => wit_tools::TaskSupport::Forbidden,
            crate::TaskSupport::Optional => wit_tools::TaskSupport::Optional,
            crate::TaskSupport::Required => wit_tools::TaskSupport::Required,
        }),
    }
}

/// Answers `resources.list`.
pub fn list_resources(plugin: Plugin) -> wit_resources::Listing {
    wit_resources::Listing {
        resources: plugin
            .resources
            .into_iter()
            .map(|r| wit_resources::Resource {
                uri: r.uri.into(),
                name: r.name.into(),
                title: r.meta.title.map(String::from),
                description: r.meta.description.map(String::from),
                mime_type: r.meta.mime_type.map(String::from),
                size: r.size,
                annotations: r.meta.annotations.map(annotations_to_wit),
                icons: r.meta.icons.into_iter().map(icon_to_wit).collect(),
            })
            .collect(),
        templates: plugin
            .templates
            .into_iter()
            .map(|t| wit_resources::ResourceTemplate {
                uri_template: t.uri_template.into(),
                name: t.name.into(),
                title: t.meta.title.map(String::from),
                description: t.meta.description.map(String::from),
                mime_type: t.meta.mime_type.map(String::from),
                annotations: t.meta.annotations.map(annotations_to_wit),
                icons: t.meta.icons.into_iter().map(icon_to_wit).collect(),
            })
            .collect(),
    }
}

/// Answers `resources.read`.
pub fn read_resource(
    plugin: &Plugin,
    uri: &str,
) -> Result<Vec<wit_resources::Contents>, wit_resources::ReadError> {
    match read(plugin, uri) {
        Ok(contents) => Ok(contents
            .into_iter()
            .map(|c| wit_resources::Contents {
                uri: c.uri,
                mime_type: c.mime_type,
                body: contents_to_wit(c.body),
            })
            .collect()),
        Err(ReadError::NotFound) => Err(wit_resources::ReadError::NotFound),
        Err(ReadError::Failed(message)) => Err(wit_resources::ReadError::Failed(message)),
    }
}

/// Answers `completion.complete`.
pub fn complete_reference(
    plugin: &Plugin,
    reference: wit_completion::Reference,
    name: &str,
    value: &str,
    context: Vec<(String, String)>,
) -> wit_completion::Completions {
    let completions = match &reference {
        wit_completion::Reference::Prompt(prompt) => {
            complete(plugin, Some(prompt), None, name, value, context)
        }
        wit_completion::Reference::ResourceTemplate(template) => {
            complete(plugin, None, Some(template), name, value, context)
        }
    };
    wit_completion::Completions {
        values: completions.values,
        total: completions.total,
        has_more: completions.has_more,
    }
}

/// Answers `prompts.list`.
pub fn list_prompts(prompts: Vec<Prompt>) -> Vec<wit_prompts::Prompt> {
    prompts
        .into_iter()
        .map(|p| wit_prompts::Prompt {
            arguments: p
                .arguments()
                .into_iter()
                .map(|a| wit_prompts::PromptArgument {
                    name: a.name,
                    title: a.title,
                    description: a.description,
                    required: a.required,
                })
                .collect(),
            name: p.name.into(),
            title: p.title.map(String::from),
            description: p.description.map(String::from),
            icons: p.icons.into_iter().map(icon_to_wit).collect(),
        })
        .collect()
}

/// Answers `prompts.get`.
pub fn get_prompt(
    plugin: &Plugin,
    name: &str,
    arguments: Vec<(String, String)>,
) -> Result<wit_prompts::PromptResult, wit_prompts::GetError> {
    match get(plugin, name, arguments) {
        Ok(result) => Ok(wit_prompts::PromptResult {
            description: result.description,
            messages: result
                .messages
                .into_iter()
                .map(|m| wit_prompts::PromptMessage {
                    role: role_to_wit(m.role),
                    content: content_to_wit(m.content),
                })
                .collect(),
        }),
        Err(PromptError::InvalidArguments(message)) => {
            Err(wit_prompts::GetError::InvalidArguments(message))
        }
        Err(PromptError::Failed(message)) => Err(wit_prompts::GetError::Failed(message)),
    }
}

/// The contract's worlds as `component-type` custom sections (see
/// build.rs), one of which `plugin!` embeds.
pub mod worlds {
    /// `plugin`: tools.
    pub const PLUGIN: [u8; PLUGIN_LEN] = *include_bytes!(concat!(env!("OUT_DIR"), "/plugin.bin"));
    pub const PLUGIN_LEN: usize = include_bytes!(concat!(env!("OUT_DIR"), "/plugin.bin")).len();
    /// `plugin-full`: tools, resources, prompts and completion.
    pub const FULL: [u8; FULL_LEN] = *include_bytes!(concat!(env!("OUT_DIR"), "/plugin-full.bin"));
    pub const FULL_LEN: usize = include_bytes!(concat!(env!("OUT_DIR"), "/plugin-full.bin")).len();
    /// `resource-plugin`: resources and completion.
    pub const RESOURCES: [u8; RESOURCES_LEN] =
        *include_bytes!(concat!(env!("OUT_DIR"), "/resource-plugin.bin"));
    pub const RESOURCES_LEN: usize =
        include_bytes!(concat!(env!("OUT_DIR"), "/resource-plugin.bin")).len();
}

fn icon_to_wit(icon: Icon) -> wit_icons::Icon {
    wit_icons::Icon {
        src: icon.src,
        mime_type: icon.mime_type,
        sizes: icon.sizes,
        theme: icon.theme,
    }
}

fn content_to_wit(content: Content) -> wit::Content {
    match content {
        Content::Text { text, annotations } => wit::Content::Text(wit::TextContent {
            text,
            annotations: annotations.map(annotations_to_wit),
        }),
        Content::Image {
            data,
            mime_type,
            annotations,
        } => wit::Content::Image(wit::BinaryContent {
            data,
            mime_type,
            annotations: annotations.map(annotations_to_wit),
        }),
        Content::Audio {
            data,
            mime_type,
            annotations,
        } => wit::Content::Audio(wit::BinaryContent {
            data,
            mime_type,
            annotations: annotations.map(annotations_to_wit),
        }),
        Content::ResourceLink(ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
            size,
            annotations,
        }) => wit::Content::ResourceLink(wit::ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
            size,
            annotations: annotations.map(annotations_to_wit),
        }),
        Content::Resource(EmbeddedResource {
            uri,
            mime_type,
            contents,
            annotations,
        }) => wit::Content::EmbeddedResource(wit::EmbeddedResource {
            uri,
            mime_type,
            contents: contents_to_wit(contents),
            annotations: annotations.map(annotations_to_wit),
        }),
    }
}

fn annotations_to_wit(annotations: Annotations) -> wit::Annotations {
    wit::Annotations {
        audience: annotations.audience.into_iter().map(role_to_wit).collect(),
        priority: annotations.priority,
        last_modified: annotations.last_modified,
    }
}

fn role_to_wit(role: Role) -> wit::Role {
    match role {
        Role::User => wit::Role::User,
        Role::Assistant => wit::Role::Assistant,
    }
}

fn contents_to_wit(contents: ResourceContents) -> wit::ResourceContents {
    match contents {
        ResourceContents::Text(text) => wit::ResourceContents::Text(text),
        ResourceContents::Blob(data) => wit::ResourceContents::Blob(data),
    }
}
