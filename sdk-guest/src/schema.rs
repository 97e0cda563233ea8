//! JSON Schemas of Rust types, as tools declare their inputs and outputs.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::{Map, Value};

/// The JSON Schema (2020-12) of `T` as used for tool inputs and outputs:
/// no `$schema` (2020-12 is the default), no root `title`, a root
/// `"type": "object"` where the schema says nothing about the type, and
/// descriptions reflowed as rustdoc would render them (single line breaks
/// of multi-line doc comments become spaces; paragraphs stay).
pub(crate) fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    match &mut schema {
        Value::Object(root) => {
            root.remove("title");
            root.entry("type")
                .or_insert_with(|| Value::String("object".into()));
        }
        // `true` (anything goes, e.g. for `serde_json::Value`): any object.
        Value::Bool(true) => {
            let mut root = Map::new();
            root.insert("type".into(), "object".into());
            schema = Value::Object(root);
        }
        _ => {}
    }
    reflow_descriptions(&mut schema);
    schema
}

/// `schema`, closed: `"additionalProperties": false` on a root object
/// schema that lists its properties and says nothing of others (nor
/// combines schemas, as a flattened enum does), as the other languages'
/// scaffolds' schemas are.
pub(crate) fn close(mut schema: Value) -> Value {
    if let Value::Object(root) = &mut schema {
        let open = [
            "additionalProperties",
            "patternProperties",
            "unevaluatedProperties",
        ]
        .iter()
        .all(|key| !root.contains_key(*key));
        let combined = ["allOf", "anyOf", "oneOf", "$ref"]
            .iter()
            .any(|key| root.contains_key(*key));
        if root.contains_key("properties") && open && !combined {
            root.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    schema
}

pub(crate) fn reflow_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    ("description", Value::String(text)) if text.contains('\n') => {
                        *text = reflow(text);
                    }
                    // Literal values, not schemas.
                    ("default" | "examples" | "const" | "enum", _) => {}
                    (_, value) => reflow_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(reflow_descriptions),
        _ => {}
    }
}

/// Joins the lines of each paragraph with spaces, except before Markdown
/// list items.
fn reflow(text: &str) -> String {
    let is_item = |line: &str| {
        line.starts_with("- ")
            || line.starts_with("* ")
            || line.starts_with("+ ")
            || line
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    text.split("\n\n")
        .map(|paragraph| {
            let mut out = String::with_capacity(paragraph.len());
            for (i, line) in paragraph.lines().map(str::trim).enumerate() {
                if i > 0 {
                    out.push(if is_item(line) { '\n' } else { ' ' });
                }
                out.push_str(line);
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}
