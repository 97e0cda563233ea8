//! Shaping tools, resources, prompts and their results into JSON for a
//! protocol revision.
//!
//! A client never receives a field its revision does not define: no `title`,
//! `outputSchema`, `structuredContent` or `resource_link` before 2025-06-18,
//! no audio before 2025-03-26, no `icons` before 2025-11-25, and `execution`
//! in 2025-11-25 only (the final 2026-07-28 `Tool` has none). Content the
//! client cannot receive as such is described in text instead of being
//! dropped silently.
//!
//! Structured content is added as JSON text only to a result that has no
//! text item of its own. The revisions with `structuredContent` advise a
//! tool to serialize it in a text block too, for clients that cannot read
//! it; a tool whose content already has text wrote that text for them, and
//! a second copy of the same data as JSON would only put it before the
//! model twice (and a file read on the wire three times over, not twice). So in every
//! revision a result with text gets its content as the tool wrote it, and a
//! result without text (structured content alone, or beside an image) gets
//! the JSON as its last text item, the only text older clients can show. A
//! plugin whose manifest asks for the JSON always gets it from the sandbox
//! (`CallOutput::with_structured_as_text`), so this rule stays the only one
//! here. A structured result that is not a JSON object (an array, a string,
//! ...) is `structuredContent` only from 2026-07-28 on; the older revisions
//! define it as an object, so there it reaches the client only as that JSON
//! text, under the same rule.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use super::Revision;
use corral_tool::{
    Annotations, CallOutput, Completions, Content, Icon, PromptDef, PromptOutput, ResourceContents,
    ResourceDef, ResourceItem, ResourceTemplateDef, ToolDef,
};

/// A tool definition (MCP `Tool`) for `revision`.
pub fn tool_json(tool: &ToolDef, revision: Revision) -> Value {
    let mut out = Map::new();
    insert_names(
        &mut out,
        &tool.name,
        &tool.title,
        &tool.description,
        revision,
    );
    out.insert("inputSchema".into(), tool.input_schema.clone());
    if revision.has_structured_output()
        && let Some(schema) = &tool.output_schema
    {
        out.insert("outputSchema".into(), schema.clone());
    }
    if revision.has_tool_annotations()
        && let Some(a) = &tool.annotations
    {
        let mut annotations = Map::new();
        insert_opt(&mut annotations, "title", &a.title);
        insert_opt(&mut annotations, "readOnlyHint", &a.read_only_hint);
        insert_opt(&mut annotations, "destructiveHint", &a.destructive_hint);
        insert_opt(&mut annotations, "idempotentHint", &a.idempotent_hint);
        insert_opt(&mut annotations, "openWorldHint", &a.open_world_hint);
        if !annotations.is_empty() {
            out.insert("annotations".into(), annotations.into());
        }
    }
    insert_icons(&mut out, &tool.icons, revision);
    if revision.has_task_support()
        && let Some(task_support) = tool.task_support
    {
        out.insert(
            "execution".into(),
            json!({ "taskSupport": task_support.as_str() }),
        );
    }
    Value::Object(out)
}

/// A call result (MCP `CallToolResult`) for `revision`.
pub fn call_result_json(output: &CallOutput, revision: Revision) -> Value {
    let mut content: Vec<Value> = output
        .content
        .iter()
        .map(|item| content_json(item, revision))
        .collect();
    let mut out = Map::new();
    if let Some(structured) = &output.structured {
        let as_structured_content = revision.has_structured_output()
            && (structured.is_object() || revision.has_structured_content_of_any_type());
        if as_structured_content {
            out.insert("structuredContent".into(), structured.clone());
        }
        // The tool's own text, not text this layer makes of other content
        // (audio or a link an older revision lacks), is what counts.
        if !output.has_text() {
            content.push(json!({ "type": "text", "text": structured.to_string() }));
        }
    }
    out.insert("content".into(), content.into());
    out.insert("isError".into(), output.is_error.into());
    Value::Object(out)
}

fn content_json(item: &Content, revision: Revision) -> Value {
    let mut out = Map::new();
    let annotations = match item {
        Content::Text { text, annotations } => {
            out.insert("type".into(), "text".into());
            out.insert("text".into(), text.clone().into());
            annotations
        }
        Content::Image {
            data,
            mime_type,
            annotations,
        } => {
            out.insert("type".into(), "image".into());
            out.insert("data".into(), BASE64.encode(data).into());
            out.insert("mimeType".into(), mime_type.clone().into());
            annotations
        }
        Content::Audio {
            data,
            mime_type,
            annotations,
        } if revision.has_audio() => {
            out.insert("type".into(), "audio".into());
            out.insert("data".into(), BASE64.encode(data).into());
            out.insert("mimeType".into(), mime_type.clone().into());
            annotations
        }
        Content::Audio {
            data,
            mime_type,
            annotations,
        } => {
            let text = format!(
                "[audio content ({mime_type}, {} bytes) omitted: protocol revision {revision} has no audio content]",
                data.len()
            );
            out.insert("type".into(), "text".into());
            out.insert("text".into(), text.into());
            annotations
        }
        Content::ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
            size,
            annotations,
        } if revision.has_structured_output() => {
            out.insert("type".into(), "resource_link".into());
            out.insert("uri".into(), uri.clone().into());
            out.insert("name".into(), name.clone().into());
            insert_opt(&mut out, "title", title);
            insert_opt(&mut out, "description", description);
            insert_opt(&mut out, "mimeType", mime_type);
            insert_opt(&mut out, "size", size);
            annotations
        }
        Content::ResourceLink {
            uri,
            name,
            title,
            description,
            annotations,
            ..
        } => {
            let label = title.as_deref().unwrap_or(name);
            let text = match description {
                Some(description) => format!("Resource link: {label} <{uri}>: {description}"),
                None => format!("Resource link: {label} <{uri}>"),
            };
            out.insert("type".into(), "text".into());
            out.insert("text".into(), text.into());
            annotations
        }
        Content::Resource {
            uri,
            mime_type,
            contents,
            annotations,
        } => {
            out.insert("type".into(), "resource".into());
            out.insert(
                "resource".into(),
                resource_contents_json(uri, mime_type, contents),
            );
            annotations
        }
    };
    if let Some(annotations) = annotations_json(annotations.as_ref(), revision) {
        out.insert("annotations".into(), annotations);
    }
    Value::Object(out)
}

/// `icons`, from 2025-11-25 on, when there are any.
fn insert_icons(out: &mut Map<String, Value>, icons: &[Icon], revision: Revision) {
    if !revision.has_icons() || icons.is_empty() {
        return;
    }
    let icons = icons
        .iter()
        .map(|icon| {
            let mut i = Map::new();
            i.insert("src".into(), icon.src.clone().into());
            insert_opt(&mut i, "mimeType", &icon.mime_type);
            if !icon.sizes.is_empty() {
                i.insert("sizes".into(), icon.sizes.clone().into());
            }
            insert_opt(&mut i, "theme", &icon.theme);
            Value::Object(i)
        })
        .collect::<Vec<_>>();
    out.insert("icons".into(), icons.into());
}

/// `name`, then `title` from 2025-06-18 on, then `description`: what
/// tools, resources, templates and prompts all begin with.
fn insert_names(
    out: &mut Map<String, Value>,
    name: &str,
    title: &Option<String>,
    description: &Option<String>,
    revision: Revision,
) {
    out.insert("name".into(), name.into());
    if revision.has_structured_output() {
        insert_opt(out, "title", title);
    }
    insert_opt(out, "description", description);
}

/// A resource (MCP `Resource`) for `revision`.
pub fn resource_json(resource: &ResourceDef, revision: Revision) -> Value {
    let mut out = Map::new();
    out.insert("uri".into(), resource.uri.clone().into());
    insert_names(
        &mut out,
        &resource.name,
        &resource.title,
        &resource.description,
        revision,
    );
    insert_opt(&mut out, "mimeType", &resource.mime_type);
    insert_opt(&mut out, "size", &resource.size);
    if let Some(annotations) = annotations_json(resource.annotations.as_ref(), revision) {
        out.insert("annotations".into(), annotations);
    }
    insert_icons(&mut out, &resource.icons, revision);
    Value::Object(out)
}

/// A resource template (MCP `ResourceTemplate`) for `revision`.
pub fn resource_template_json(template: &ResourceTemplateDef, revision: Revision) -> Value {
    let mut out = Map::new();
    out.insert("uriTemplate".into(), template.uri_template.clone().into());
    insert_names(
        &mut out,
        &template.name,
        &template.title,
        &template.description,
        revision,
    );
    insert_opt(&mut out, "mimeType", &template.mime_type);
    if let Some(annotations) = annotations_json(template.annotations.as_ref(), revision) {
        out.insert("annotations".into(), annotations);
    }
    insert_icons(&mut out, &template.icons, revision);
    Value::Object(out)
}

/// A prompt (MCP `Prompt`) for `revision`.
pub fn prompt_json(prompt: &PromptDef, revision: Revision) -> Value {
    let mut out = Map::new();
    insert_names(
        &mut out,
        &prompt.name,
        &prompt.title,
        &prompt.description,
        revision,
    );
    if !prompt.arguments.is_empty() {
        let arguments: Vec<Value> = prompt
            .arguments
            .iter()
            .map(|argument| {
                let mut a = Map::new();
                insert_names(
                    &mut a,
                    &argument.name,
                    &argument.title,
                    &argument.description,
                    revision,
                );
                a.insert("required".into(), argument.required.into());
                Value::Object(a)
            })
            .collect();
        out.insert("arguments".into(), arguments.into());
    }
    insert_icons(&mut out, &prompt.icons, revision);
    Value::Object(out)
}

/// What a read returns (MCP `ReadResourceResult`): each item text or a
/// base64 blob.
pub fn read_result_json(items: &[ResourceItem]) -> Value {
    let contents: Vec<Value> = items
        .iter()
        .map(|item| resource_contents_json(&item.uri, &item.mime_type, &item.contents))
        .collect();
    json!({ "contents": contents })
}

/// What `prompts/get` returns (MCP `GetPromptResult`) for `revision`: each
/// message's content shaped as a tool result's is (what the revision lacks
/// becomes text).
pub fn prompt_result_json(output: &PromptOutput, revision: Revision) -> Value {
    let messages: Vec<Value> = output
        .messages
        .iter()
        .map(|message| {
            json!({
                "role": message.role.as_str(),
                "content": content_json(&message.content, revision),
            })
        })
        .collect();
    let mut out = Map::new();
    insert_opt(&mut out, "description", &output.description);
    out.insert("messages".into(), messages.into());
    Value::Object(out)
}

/// What `completion/complete` returns (MCP `CompleteResult`), at most
/// [`corral_tool::MAX_COMPLETION_VALUES`] values: more are cut, and then
/// `hasMore` says so.
pub fn completion_json(completions: &Completions) -> Value {
    let max = corral_tool::MAX_COMPLETION_VALUES;
    let values = &completions.values[..completions.values.len().min(max)];
    let mut completion = Map::new();
    completion.insert("values".into(), values.to_vec().into());
    insert_opt(&mut completion, "total", &completions.total);
    let has_more = completions.has_more || completions.values.len() > max;
    completion.insert("hasMore".into(), has_more.into());
    json!({ "completion": completion })
}

/// A resource's contents (MCP `TextResourceContents` or
/// `BlobResourceContents`).
fn resource_contents_json(
    uri: &str,
    mime_type: &Option<String>,
    contents: &ResourceContents,
) -> Value {
    let mut resource = Map::new();
    resource.insert("uri".into(), uri.into());
    insert_opt(&mut resource, "mimeType", mime_type);
    match contents {
        ResourceContents::Text(text) => resource.insert("text".into(), text.clone().into()),
        ResourceContents::Blob(blob) => resource.insert("blob".into(), BASE64.encode(blob).into()),
    };
    Value::Object(resource)
}

fn annotations_json(annotations: Option<&Annotations>, revision: Revision) -> Option<Value> {
    let a = annotations?;
    let mut out = Map::new();
    if !a.audience.is_empty() {
        let audience: Vec<Value> = a.audience.iter().map(|r| r.as_str().into()).collect();
        out.insert("audience".into(), audience.into());
    }
    insert_opt(&mut out, "priority", &a.priority);
    if revision.has_structured_output() {
        insert_opt(&mut out, "lastModified", &a.last_modified);
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

fn insert_opt<T: Clone + Into<Value>>(map: &mut Map<String, Value>, key: &str, value: &Option<T>) {
    if let Some(value) = value {
        map.insert(key.into(), value.clone().into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_tool::{Role, TaskSupport, ToolAnnotations};

    fn full_tool() -> ToolDef {
        ToolDef {
            name: "stats".into(),
            title: Some("Stats".into()),
            description: Some("Counts".into()),
            input_schema: json!({ "type": "object" }),
            output_schema: Some(json!({ "type": "object" })),
            annotations: Some(ToolAnnotations {
                read_only_hint: Some(true),
                ..Default::default()
            }),
            icons: vec![corral_tool::Icon {
                src: "https://example.com/i.png".into(),
                mime_type: Some("image/png".into()),
                sizes: vec!["48x48".into()],
                theme: None,
            }],
            task_support: Some(TaskSupport::Forbidden),
            task: Default::default(),
            held_bytes: 0,
        }
    }

    fn keys(value: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        keys
    }

    #[test]
    fn tool_fields_follow_the_revision() {
        let tool = full_tool();
        assert_eq!(
            keys(&tool_json(&tool, Revision::V2024_11_05)),
            ["description", "inputSchema", "name"]
        );
        assert_eq!(
            keys(&tool_json(&tool, Revision::V2025_03_26)),
            ["annotations", "description", "inputSchema", "name"]
        );
        assert_eq!(
            keys(&tool_json(&tool, Revision::V2025_06_18)),
            [
                "annotations",
                "description",
                "inputSchema",
                "name",
                "outputSchema",
                "title"
            ]
        );
        assert_eq!(
            keys(&tool_json(&tool, Revision::V2025_11_25)),
            [
                "annotations",
                "description",
                "execution",
                "icons",
                "inputSchema",
                "name",
                "outputSchema",
                "title"
            ]
        );
        // The stateless revision shapes tools as 2025-11-25 does, but for
        // `execution`, which its final text dropped.
        let mut newest = tool_json(&tool, Revision::V2025_11_25);
        newest.as_object_mut().unwrap().remove("execution");
        assert_eq!(tool_json(&tool, Revision::V2026_07_28), newest);
    }

    #[test]
    fn content_the_revision_lacks_becomes_text() {
        let output = CallOutput {
            content: vec![
                Content::Audio {
                    data: vec![1, 2, 3],
                    mime_type: "audio/wav".into(),
                    annotations: None,
                },
                Content::ResourceLink {
                    uri: "https://example.com/r".into(),
                    name: "r".into(),
                    title: None,
                    description: None,
                    mime_type: None,
                    size: None,
                    annotations: Some(Annotations {
                        audience: vec![Role::User],
                        priority: Some(0.5),
                        last_modified: Some("2025-05-03T14:30:00Z".into()),
                    }),
                },
            ],
            structured: Some(json!({ "n": 1 })),
            is_error: false,
            failed: false,
        };
        let old = call_result_json(&output, Revision::V2024_11_05);
        assert_eq!(old["content"][0]["type"], "text");
        assert!(
            old["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("audio/wav")
        );
        assert_eq!(old["content"][1]["type"], "text");
        assert_eq!(
            old["content"][1]["annotations"],
            json!({ "audience": ["user"], "priority": 0.5 })
        );
        assert_eq!(
            old["content"][2],
            json!({ "type": "text", "text": "{\"n\":1}" })
        );
        assert!(old.get("structuredContent").is_none());

        let new = call_result_json(&output, Revision::V2025_06_18);
        assert_eq!(
            new["content"][0],
            json!({ "type": "audio", "data": "AQID", "mimeType": "audio/wav" })
        );
        assert_eq!(new["content"][1]["type"], "resource_link");
        assert_eq!(
            new["content"][1]["annotations"]["lastModified"],
            "2025-05-03T14:30:00Z"
        );
        assert_eq!(new["structuredContent"], json!({ "n": 1 }));
        // No text of the tool's own (the audio and the link are not): the
        // JSON is added as text, as the spec advises.
        assert_eq!(
            new["content"][2],
            json!({ "type": "text", "text": "{\"n\":1}" })
        );
        assert_eq!(new["content"].as_array().unwrap().len(), 3);
    }

    fn text_and_structured(text: &str, structured: Value) -> CallOutput {
        CallOutput {
            content: vec![Content::text(text)],
            structured: Some(structured),
            is_error: false,
            failed: false,
        }
    }

    #[test]
    fn structured_content_is_sent_as_text_only_when_the_result_has_no_text() {
        // The tool's own text, whatever it says, is what clients without
        // structuredContent get: the JSON is not added beside it.
        for text in ["{ \"n\": 1 }", "n is 1", "{\"n\":2}", ""] {
            let own = text_and_structured(text, json!({ "n": 1 }));
            for revision in Revision::ALL {
                let result = call_result_json(&own, revision);
                assert_eq!(
                    result["content"],
                    json!([{ "type": "text", "text": text }]),
                    "{revision}"
                );
                assert_eq!(
                    result.get("structuredContent").cloned(),
                    revision.has_structured_output().then(|| json!({ "n": 1 })),
                    "{revision}"
                );
            }
        }
        // No text at all: the JSON is its last text item, in every revision.
        let image = Content::Image {
            data: vec![1],
            mime_type: "image/png".into(),
            annotations: None,
        };
        for content in [vec![], vec![image]] {
            let bare = CallOutput {
                content: content.clone(),
                structured: Some(json!({ "n": 1 })),
                is_error: false,
                failed: false,
            };
            for revision in Revision::ALL {
                let result = call_result_json(&bare, revision);
                let items = result["content"].as_array().unwrap();
                assert_eq!(items.len(), content.len() + 1, "{revision}");
                assert_eq!(
                    items.last().unwrap(),
                    &json!({ "type": "text", "text": "{\"n\":1}" }),
                    "{revision}"
                );
            }
        }
        // A result that asked for the JSON beside its text (a manifest's
        // `mirror-structured`) is shaped as it is: nothing more is added.
        let asked = text_and_structured("n is 1", json!({ "n": 1 })).with_structured_as_text();
        for revision in Revision::ALL {
            assert_eq!(
                call_result_json(&asked, revision)["content"],
                json!([
                    { "type": "text", "text": "n is 1" },
                    { "type": "text", "text": "{\"n\":1}" },
                ]),
                "{revision}"
            );
        }
    }

    #[test]
    fn structured_content_that_is_not_an_object_is_text_before_2026_07_28() {
        // With no text of the tool's own, the JSON is the text.
        let bare = CallOutput {
            content: vec![],
            structured: Some(json!(["ada", "bob"])),
            is_error: false,
            failed: false,
        };
        // With text, the text is what the older revisions get.
        let list = text_and_structured("two users", json!(["ada", "bob"]));
        for (output, text) in [
            (
                &bare,
                json!([{ "type": "text", "text": "[\"ada\",\"bob\"]" }]),
            ),
            (&list, json!([{ "type": "text", "text": "two users" }])),
        ] {
            for revision in Revision::ALL {
                let result = call_result_json(output, revision);
                assert_eq!(result["content"], text, "{revision}");
                let expected = revision
                    .has_structured_content_of_any_type()
                    .then(|| json!(["ada", "bob"]));
                assert_eq!(
                    result.get("structuredContent").cloned(),
                    expected,
                    "{revision}"
                );
            }
        }
    }
}
