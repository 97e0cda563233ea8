//! Elicitation forms from Rust types.
//!
//! MCP elicitation accepts a deliberately small schema language, so that any
//! client can render it as a form: an object whose properties are strings,
//! numbers, integers, booleans, single choices (`enum`, or `oneOf` of
//! `const`/`title` pairs) and multiple choices (arrays of those), each with
//! an optional `title`, `description` and `default`. No references, no
//! nesting, no combinators. schemars describes a Rust type with the full
//! JSON Schema language, so this module inlines the references and rewrites
//! each field into that small language, keeping only the keywords MCP
//! names; it refuses the types that no form can hold (nested structs,
//! maps, lists of free text) with an error naming the field, rather than
//! send a form the host or the client would reject.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::{Map, Value};

/// String formats MCP elicitation knows; other formats are dropped (the
/// client would not know how to render or check them).
const STRING_FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

/// The requested schema for a form that `T` deserializes from.
pub(crate) fn form_schema<T: JsonSchema>() -> Result<Value, String> {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            // Forms have no `$ref`: every subschema goes where it is used.
            settings.inline_subschemas = true;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    crate::schema::reflow_descriptions(&mut schema);
    flatten(schema)
}

/// Rewrites an object schema into MCP's form schema.
pub(crate) fn flatten(schema: Value) -> Result<Value, String> {
    let Value::Object(root) = schema else {
        return Err("a form must be described by an object schema".into());
    };
    if root.get("type").is_some_and(|t| t != "object") {
        return Err("a form must be an object (a struct with named fields)".into());
    }
    let Some(Value::Object(properties)) = root.get("properties") else {
        return Err("a form needs at least one field (a struct with named fields)".into());
    };
    let mut fields = Map::new();
    for (name, property) in properties {
        let field = field(property).map_err(|problem| format!("field `{name}`: {problem}"))?;
        fields.insert(name.clone(), field);
    }
    let mut form = Map::new();
    form.insert("type".into(), "object".into());
    form.insert("properties".into(), Value::Object(fields));
    if let Some(Value::Array(required)) = root.get("required")
        && !required.is_empty()
    {
        form.insert("required".into(), Value::Array(required.clone()));
    }
    Ok(Value::Object(form))
}

/// One field: a primitive, a single choice or a multiple choice.
fn field(schema: &Value) -> Result<Value, String> {
    let schema = non_null(schema)?;
    let mut out = Map::new();
    copy(&schema, &mut out, &["title", "description"]);
    if let Some(default) = schema.get("default").filter(|d| !d.is_null()) {
        out.insert("default".into(), default.clone());
    }
    if let Some(choices) = choices(&schema)? {
        out.insert("type".into(), "string".into());
        match choices {
            Choices::Plain(values) => out.insert("enum".into(), values.into()),
            Choices::Titled(options) => out.insert("oneOf".into(), options.into()),
        };
        return Ok(Value::Object(out));
    }
    match type_of(&schema).as_deref() {
        Some("string") => {
            copy(&schema, &mut out, &["minLength", "maxLength"]);
            if let Some(format) = schema.get("format").and_then(Value::as_str)
                && STRING_FORMATS.contains(&format)
            {
                out.insert("format".into(), format.into());
            }
            out.insert("type".into(), "string".into());
        }
        Some(kind @ ("number" | "integer")) => {
            copy(&schema, &mut out, &["minimum", "maximum"]);
            out.insert("type".into(), kind.into());
        }
        Some("boolean") => {
            out.insert("type".into(), "boolean".into());
        }
        Some("array") => {
            let items = schema.get("items").map(non_null).transpose()?;
            let items = match items.as_ref().map(choices).transpose()?.flatten() {
                Some(Choices::Plain(values)) => {
                    serde_json::json!({"type": "string", "enum": values})
                }
                Some(Choices::Titled(options)) => serde_json::json!({"anyOf": options}),
                None => return Err("a list in a form must be a list of choices (an enum)".into()),
            };
            copy(&schema, &mut out, &["minItems", "maxItems"]);
            out.insert("type".into(), "array".into());
            out.insert("items".into(), items);
        }
        Some(other) => {
            return Err(format!(
                "a form holds strings, numbers, integers, booleans and choices, not {other} values"
            ));
        }
        None => return Err("its type is not one a form can hold".into()),
    }
    Ok(Value::Object(out))
}

/// The schema without its `null` alternative: `Option<T>` fields are simply
/// not required in a form. schemars writes them as `"type": [T, "null"]`,
/// or as `anyOf`/`oneOf` of T and `{"type": "null"}`.
fn non_null(schema: &Value) -> Result<Map<String, Value>, String> {
    let Value::Object(map) = schema else {
        return Err("its schema is not an object".into());
    };
    let mut map = map.clone();
    if let Some(Value::Array(types)) = map.get("type") {
        let types: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        match types[..] {
            [single] => {
                let single = single.clone();
                map.insert("type".into(), single);
            }
            _ => return Err("a field must have one type".into()),
        }
    }
    for combinator in ["anyOf", "oneOf"] {
        let Some(Value::Array(options)) = map.get(combinator) else {
            continue;
        };
        let is_null = |o: &Value| o.get("type").is_some_and(|t| t == "null");
        if !options.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = options.iter().filter(|o| !is_null(o)).cloned().collect();
        map.remove(combinator);
        match rest.as_slice() {
            [Value::Object(inner)] => {
                // The outer schema's metadata (the field's doc comment, its
                // default) wins over the inner type's.
                for (key, value) in inner {
                    map.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            _ => {
                map.insert(combinator.into(), Value::Array(rest));
            }
        }
    }
    Ok(map)
}

enum Choices {
    /// `enum`: the values are their own labels.
    Plain(Vec<Value>),
    /// `oneOf`/`anyOf` of `{"const", "title"}`.
    Titled(Vec<Value>),
}

/// The choices of a string enum, if the schema is one: `enum` of strings,
/// or `oneOf`/`anyOf` of constants, which is how schemars writes an enum
/// whose variants have doc comments (those become the choices' titles).
fn choices(schema: &Map<String, Value>) -> Result<Option<Choices>, String> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        if !values.iter().all(Value::is_string) {
            return Err("choices must be strings (unit enum variants)".into());
        }
        return Ok(Some(Choices::Plain(values.clone())));
    }
    let Some(Value::Array(options)) = schema.get("oneOf").or_else(|| schema.get("anyOf")) else {
        return Ok(None);
    };
    let mut titled = Vec::with_capacity(options.len());
    let mut any_title = false;
    for option in options {
        let value = match (option.get("const"), option.get("enum")) {
            (Some(Value::String(value)), _) => value.clone(),
            (None, Some(Value::Array(values))) if values.len() == 1 && values[0].is_string() => {
                values[0].as_str().unwrap_or_default().to_owned()
            }
            _ => {
                return Err(
                    "choices must be strings (unit enum variants), not variants with data".into(),
                );
            }
        };
        let title = option
            .get("title")
            .or_else(|| option.get("description"))
            .and_then(Value::as_str);
        any_title |= title.is_some();
        titled.push(serde_json::json!({"const": value, "title": title.unwrap_or(&value)}));
    }
    if !any_title {
        let values = titled.into_iter().map(|o| o["const"].clone()).collect();
        return Ok(Some(Choices::Plain(values)));
    }
    Ok(Some(Choices::Titled(titled)))
}

fn type_of(schema: &Map<String, Value>) -> Option<String> {
    schema.get("type").and_then(Value::as_str).map(String::from)
}

fn copy(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(value) = from.get(*key) {
            to.insert((*key).into(), value.clone());
        }
    }
}
