//! Checking what a call returned before it reaches the client.
//!
//! Structured content must be a JSON object and must conform to the tool's
//! output schema when it has one (the spec's MUST); a plugin that breaks its
//! own schema yields a tool execution error, never a silent pass. Results are
//! capped in size.

use serde_json::Value;

use super::bindings::{tools, types};
use super::metadata::CheckedTool;
use super::sandbox::{Limits, human_bytes};
use crate::schema;
use crate::tool::{Annotations, CallOutput, Content, ResourceContents, Role};

/// Converts and validates a plugin's call result.
pub fn check(result: tools::CallResult, tool: &CheckedTool, limits: &Limits) -> CallOutput {
    let name = &tool.def.name;
    let size = result_size(&result);
    if size > limits.output_bytes {
        return CallOutput::error(format!(
            "Tool `{name}` returned {} of output, more than the limit of {}",
            human_bytes(size),
            human_bytes(limits.output_bytes)
        ));
    }
    let structured = match result
        .structured_content
        .as_deref()
        .map(serde_json::from_str::<Value>)
    {
        None => None,
        Some(Ok(value @ Value::Object(_))) => Some(value),
        Some(Ok(_)) => {
            return CallOutput::error(format!(
                "Tool `{name}` returned structured content that is not a JSON object"
            ));
        }
        Some(Err(err)) => {
            return CallOutput::error(format!(
                "Tool `{name}` returned structured content that is not valid JSON: {err}"
            ));
        }
    };
    if let Some(output_schema) = &tool.output
        && !result.is_error
    {
        let Some(value) = &structured else {
            return CallOutput::error(format!(
                "Tool `{name}` declares an output schema but returned no structured content"
            ));
        };
        let violations = output_schema.violations(value);
        if !violations.is_empty() {
            return CallOutput::error(format!(
                "Tool `{name}` returned structured content that does not match its output schema:\n{}",
                schema::describe(&violations)
            ));
        }
    }
    CallOutput {
        content: result.content.into_iter().map(content).collect(),
        structured,
        is_error: result.is_error,
    }
}

/// Bytes of text and data in a result, to enforce the output cap before any
/// copying or base64 encoding.
fn result_size(result: &tools::CallResult) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let content: usize = result
        .content
        .iter()
        .map(|item| match item {
            types::Content::Text(t) => t.text.len(),
            types::Content::Image(b) | types::Content::Audio(b) => b.data.len() + b.mime_type.len(),
            types::Content::ResourceLink(l) => {
                l.uri.len() + l.name.len() + opt(&l.title) + opt(&l.description) + opt(&l.mime_type)
            }
            types::Content::EmbeddedResource(r) => {
                r.uri.len()
                    + opt(&r.mime_type)
                    + match &r.contents {
                        types::ResourceContents::Text(t) => t.len(),
                        types::ResourceContents::Blob(b) => b.len(),
                    }
            }
        })
        .sum();
    content + opt(&result.structured_content)
}

fn content(item: types::Content) -> Content {
    match item {
        types::Content::Text(t) => Content::Text {
            text: t.text,
            annotations: t.annotations.map(annotations),
        },
        types::Content::Image(b) => Content::Image {
            data: b.data,
            mime_type: b.mime_type,
            annotations: b.annotations.map(annotations),
        },
        types::Content::Audio(b) => Content::Audio {
            data: b.data,
            mime_type: b.mime_type,
            annotations: b.annotations.map(annotations),
        },
        types::Content::ResourceLink(l) => Content::ResourceLink {
            uri: l.uri,
            name: l.name,
            title: l.title,
            description: l.description,
            mime_type: l.mime_type,
            size: l.size,
            annotations: l.annotations.map(annotations),
        },
        types::Content::EmbeddedResource(r) => Content::Resource {
            uri: r.uri,
            mime_type: r.mime_type,
            contents: match r.contents {
                types::ResourceContents::Text(t) => ResourceContents::Text(t),
                types::ResourceContents::Blob(b) => ResourceContents::Blob(b),
            },
            annotations: r.annotations.map(annotations),
        },
    }
}

fn annotations(a: types::Annotations) -> Annotations {
    Annotations {
        audience: a
            .audience
            .into_iter()
            .map(|role| match role {
                types::Role::User => Role::User,
                types::Role::Assistant => Role::Assistant,
            })
            .collect(),
        // Out-of-range priorities are clamped rather than passed on.
        priority: a
            .priority
            .filter(|p| p.is_finite())
            .map(|p| p.clamp(0.0, 1.0)),
        last_modified: a.last_modified,
    }
}
