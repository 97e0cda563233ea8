//! Glue between the public types and the generated bindings, used by the
//! code that [`plugin!`](crate::plugin) expands to. Not part of the API.

use crate::bindings::corral::plugin::types as wit;
use crate::bindings::exports::corral::plugin::tools as wit_tools;
use crate::content::{
    Annotations, Content, EmbeddedResource, ResourceContents, ResourceLink, Role,
};
use crate::result::CallResult;
use crate::tool::{Icon, Tool};

/// Answers `tools.list`.
pub fn list(tools: Vec<Tool>) -> Vec<wit_tools::Tool> {
    tools.into_iter().map(tool_to_wit).collect()
}

/// Answers `tools.call`.
pub fn call(tools: Vec<Tool>, name: &str, arguments: &str) -> wit_tools::CallResult {
    let result = match tools.iter().find(|tool| tool.name == name) {
        Some(tool) => tool.call(arguments),
        None => CallResult::error(format!("unknown tool: {name}")),
    };
    result_to_wit(result)
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
        task_support: None,
    }
}

fn icon_to_wit(icon: Icon) -> wit_tools::Icon {
    wit_tools::Icon {
        src: icon.src,
        mime_type: icon.mime_type,
        sizes: icon.sizes,
        theme: icon.theme,
    }
}

fn result_to_wit(result: CallResult) -> wit_tools::CallResult {
    wit_tools::CallResult {
        content: result.content.into_iter().map(content_to_wit).collect(),
        structured_content: result.structured_content.map(|value| value.to_string()),
        is_error: result.is_error,
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
            contents: match contents {
                ResourceContents::Text(text) => wit::ResourceContents::Text(text),
                ResourceContents::Blob(data) => wit::ResourceContents::Blob(data),
            },
            annotations: annotations.map(annotations_to_wit),
        }),
    }
}

fn annotations_to_wit(annotations: Annotations) -> wit::Annotations {
    wit::Annotations {
        audience: annotations
            .audience
            .into_iter()
            .map(|role| match role {
                Role::User => wit::Role::User,
                Role::Assistant => wit::Role::Assistant,
            })
            .collect(),
        priority: annotations.priority,
        last_modified: annotations.last_modified,
    }
}
