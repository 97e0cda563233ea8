//! Checking what a call returned before it reaches the client.
//!
//! Results are capped in size, counting everything the plugin returned
//! (every string, byte and annotation), before anything is copied or
//! encoded. Structured content must be JSON, of any kind (2026-07-28 allows
//! arrays, strings and the rest; the protocol layer keeps older revisions to
//! objects); when the tool has an output schema, the caller validates it
//! against that (the spec's MUST), within the validation budget: a plugin
//! that breaks its own schema yields a tool execution error, never a silent
//! pass.

use serde_json::Value;

use crate::bindings::{tools, types};
use crate::limits::Limits;
use crate::metadata::CheckedTool;
use crate::units::human_bytes;
use corral_tool::{Annotations, CallOutput, Content, ResourceContents, Role};

/// Bytes counted for each role of an annotation's audience (`"assistant",`).
const ROLE_BYTES: usize = 12;
/// Bytes counted for each number a result carries (a priority, a size).
const NUMBER_BYTES: usize = 8;

/// Bytes of the plugin's text shown on each side of where its structured
/// content stops being JSON.
const EXCERPT_BYTES: usize = 40;

/// Converts a plugin's call result and checks its size and the shape of its
/// structured content; messages name the tool `name`, as clients see it.
/// `Err` is a result the plugin got wrong (bad output), with what to tell
/// the client.
pub fn check(
    result: tools::CallResult,
    tool: &CheckedTool,
    name: &str,
    limits: &Limits,
) -> Result<CallOutput, String> {
    let size = result_size(&result);
    if size > limits.output_bytes {
        return Err(format!(
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
        Some(Ok(value)) => Some(value),
        Some(Err(err)) => {
            let text = result.structured_content.as_deref().unwrap_or_default();
            return Err(not_json(name, text, &err));
        }
    };
    if tool.output.is_some() && !result.is_error && structured.is_none() {
        return Err(format!(
            "Tool `{name}` declares an output schema but returned no structured content"
        ));
    }
    Ok(CallOutput {
        content: result.content.into_iter().map(content).collect(),
        structured,
        is_error: result.is_error,
        failed: false,
    })
}

/// What to tell of structured content `text` that is not JSON: the
/// parser's words, the text around where it stopped (at most
/// [`EXCERPT_BYTES`] each side, quoted so that control characters show),
/// and the fix for the usual cause, a non-finite number printed as a C or
/// Python program prints it (`inf`, `nan`, `Infinity`).
fn not_json(name: &str, text: &str, err: &serde_json::Error) -> String {
    let at = byte_offset(text, err.line(), err.column());
    let mut start = at.saturating_sub(EXCERPT_BYTES);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + EXCERPT_BYTES).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let (before, after) = (&text[start..at.min(end)], &text[at.min(end)..end]);
    let ellipsis = |cut: bool| if cut { "…" } else { "" };
    let mut message = format!(
        "Tool `{name}` returned structured content that is not valid JSON: {err}, here: {}{before:?} ⟵ {after:?}{}",
        ellipsis(start > 0),
        ellipsis(end < text.len())
    );
    let nearby = text[start..end].to_ascii_lowercase();
    if ["inf", "nan"].iter().any(|word| nearby.contains(word)) {
        message.push_str(
            " (JSON has no infinity or NaN: send null, or the number as a string, or leave the field out)",
        );
    }
    message
}

/// The byte offset of 1-based `line` and `column` (serde_json counts the
/// column in bytes) in `text`, clamped to its length.
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    // The column is the byte the parser stopped at; the excerpt's cut goes
    // before it.
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// Bytes of everything in a result (text, data, names, annotations), to
/// enforce the output cap before any copying or base64 encoding. Saturating:
/// the sum of a hostile result's parts must not wrap round to a small one.
pub(crate) fn result_size(result: &tools::CallResult) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let content = result.content.iter().fold(0usize, |total, item| {
        total.saturating_add(content_size(item))
    });
    content.saturating_add(opt(&result.structured_content))
}

/// Bytes of one content item (text, data, names, annotations), saturating.
pub(crate) fn content_size(item: &types::Content) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    match item {
        types::Content::Text(t) => t
            .text
            .len()
            .saturating_add(annotations_size(&t.annotations)),
        types::Content::Image(b) | types::Content::Audio(b) => b
            .data
            .len()
            .saturating_add(b.mime_type.len())
            .saturating_add(annotations_size(&b.annotations)),
        types::Content::ResourceLink(l) => [
            l.uri.len(),
            l.name.len(),
            opt(&l.title),
            opt(&l.description),
            opt(&l.mime_type),
            NUMBER_BYTES,
            annotations_size(&l.annotations),
        ]
        .into_iter()
        .fold(0, usize::saturating_add),
        types::Content::EmbeddedResource(r) => [
            r.uri.len(),
            opt(&r.mime_type),
            match &r.contents {
                types::ResourceContents::Text(t) => t.len(),
                types::ResourceContents::Blob(b) => b.len(),
            },
            annotations_size(&r.annotations),
        ]
        .into_iter()
        .fold(0, usize::saturating_add),
    }
}

/// Bytes an item's annotations take on the wire, about.
pub(crate) fn annotations_size(annotations: &Option<types::Annotations>) -> usize {
    annotations.as_ref().map_or(0, |a| {
        a.audience
            .len()
            .saturating_mul(ROLE_BYTES)
            .saturating_add(NUMBER_BYTES)
            .saturating_add(a.last_modified.as_ref().map_or(0, String::len))
    })
}

pub(crate) fn content(item: types::Content) -> Content {
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

pub(crate) fn annotations(a: types::Annotations) -> Annotations {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text_with(annotations: types::Annotations) -> tools::CallResult {
        tools::CallResult {
            content: vec![types::Content::Text(types::TextContent {
                text: "hi".into(),
                annotations: Some(annotations),
            })],
            structured_content: None,
            is_error: false,
        }
    }

    #[test]
    fn annotations_count_toward_the_output_size() {
        let roles = text_with(types::Annotations {
            audience: vec![types::Role::User; 1_000_000],
            priority: None,
            last_modified: None,
        });
        assert!(result_size(&roles) >= 12_000_000, "{}", result_size(&roles));
        let date = text_with(types::Annotations {
            audience: vec![],
            priority: Some(0.5),
            last_modified: Some("9".repeat(5 << 20)),
        });
        assert!(result_size(&date) > 5 << 20);
    }
}
