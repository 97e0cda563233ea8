//! Redaction of what a call sends out of the sandbox: every string of its
//! answer that a client or the host log can see, and the failure it ended
//! with; structured content as JSON (see [`Granted::redact_json_text`]).
//! (A request it asks its client is redacted in `ask`, as the JSON it is
//! sent as.) Binary content (image, audio, blobs) is left as it is: it
//! reaches clients base64-encoded, where an exact value does not appear.

use super::Granted;
use crate::bindings::{Response, prompts, resources, types};

/// Redacts `response` in place; adds what it replaced to `count`.
pub(crate) fn response(granted: &Granted, response: &mut Response, count: &mut usize) {
    let mut text = |text: &mut String| granted.redact_in_place(text, count);
    match response {
        // Lists are made without secrets (see `Sandbox::run`).
        Response::Tools(_) | Response::Resources(_) | Response::Prompts(_) => {}
        Response::Called(result) => {
            for item in &mut result.content {
                content(item, &mut text);
            }
            // JSON text: parsed, so that a value is found however the
            // plugin's serializer escaped it (the client gets it parsed).
            if let Some(structured) = &mut result.structured_content {
                granted.redact_json_text(structured, count);
            }
        }
        Response::Read(Ok(items)) => {
            for item in items {
                resource_contents(item, &mut text);
            }
        }
        Response::Read(Err(resources::ReadError::Failed(message))) => text(message),
        Response::Read(Err(resources::ReadError::NotFound)) => {}
        Response::Got(Ok(result)) => {
            if let Some(description) = &mut result.description {
                text(description);
            }
            for message in &mut result.messages {
                content(&mut message.content, &mut text);
            }
        }
        Response::Got(Err(
            prompts::GetError::InvalidArguments(message) | prompts::GetError::Failed(message),
        )) => text(message),
        Response::Completed(completions) => {
            for value in &mut completions.values {
                text(value);
            }
        }
    }
}

fn content(item: &mut types::Content, text: &mut impl FnMut(&mut String)) {
    match item {
        types::Content::Text(item) => text(&mut item.text),
        types::Content::Image(_) | types::Content::Audio(_) => {}
        types::Content::ResourceLink(link) => {
            text(&mut link.uri);
            text(&mut link.name);
            for field in [&mut link.title, &mut link.description]
                .into_iter()
                .flatten()
            {
                text(field);
            }
        }
        types::Content::EmbeddedResource(embedded) => {
            text(&mut embedded.uri);
            if let types::ResourceContents::Text(body) = &mut embedded.contents {
                text(body);
            }
        }
    }
}

fn resource_contents(item: &mut resources::Contents, text: &mut impl FnMut(&mut String)) {
    text(&mut item.uri);
    if let types::ResourceContents::Text(body) = &mut item.body {
        text(body);
    }
}
