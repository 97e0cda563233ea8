//! The schema of a form elicitation, as MCP allows it: an object whose
//! properties are primitives (strings, numbers, integers, booleans, arrays
//! of enum strings), each with the few keywords a client knows how to show.
//!
//! A plugin's schema is checked against that shape before the client sees
//! it, so that a client never gets a form it cannot render, and the answer
//! can be checked against the same schema (compiled with the sandbox's
//! [`schema`](crate::schema) module, so within a budget). The schema is
//! passed on exactly as the plugin wrote it: the client sees its defaults,
//! titles and choices unchanged.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::schema::Schema;

/// The most properties one form may ask for.
pub const MAX_PROPERTIES: usize = 64;

/// String formats MCP elicitation allows.
const FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

/// A requested schema that passed the checks: the JSON to send, and the
/// compiled schema and property names to check the answer with.
pub struct Form {
    pub schema: Value,
    pub compiled: Arc<Schema>,
    pub properties: BTreeSet<String>,
}

/// Checks `text`, the plugin's requested schema; says what is wrong in a
/// message the plugin's author can act on.
pub fn check(text: &str) -> Result<Form, String> {
    let schema: Value = serde_json::from_str(text)
        .map_err(|err| format!("the requested schema is not JSON: {err}"))?;
    let object = schema
        .as_object()
        .ok_or("the requested schema must be a JSON object")?;
    for key in object.keys() {
        if !matches!(key.as_str(), "type" | "properties" | "required" | "$schema") {
            return Err(format!(
                "the requested schema has `{key}`: a form schema has only `type`, `properties` and `required`"
            ));
        }
    }
    if object.get("type") != Some(&Value::String("object".into())) {
        return Err("the requested schema must have \"type\": \"object\"".into());
    }
    let properties = object
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("the requested schema must have `properties`, an object")?;
    if properties.len() > MAX_PROPERTIES {
        return Err(format!(
            "the requested schema has {} properties; a form has at most {MAX_PROPERTIES}",
            properties.len()
        ));
    }
    for (name, property) in properties {
        check_property(property).map_err(|err| format!("property `{name}`: {err}"))?;
    }
    if let Some(required) = object.get("required") {
        let required = required
            .as_array()
            .ok_or("`required` must be an array of property names")?;
        for name in required {
            match name.as_str() {
                Some(name) if properties.contains_key(name) => {}
                Some(name) => return Err(format!("`required` names `{name}`, not a property")),
                None => return Err("`required` must be an array of property names".into()),
            }
        }
    }
    let compiled = Schema::compile_object_schema(&schema)
        .map_err(|err| format!("the requested schema: {err}"))?;
    Ok(Form {
        properties: properties.keys().cloned().collect(),
        compiled: Arc::new(compiled),
        schema,
    })
}

/// Checks one property: a primitive schema MCP elicitation allows.
fn check_property(property: &Value) -> Result<(), String> {
    let property = property.as_object().ok_or("must be a JSON object")?;
    let kind = property
        .get("type")
        .and_then(Value::as_str)
        .ok_or("must have a `type`")?;
    let allowed: &[&str] = match kind {
        "string" => &[
            "format",
            "minLength",
            "maxLength",
            "enum",
            "enumNames",
            "oneOf",
            "default",
        ],
        "number" | "integer" => &["minimum", "maximum", "default"],
        "boolean" => &["default"],
        "array" => &["items", "minItems", "maxItems", "default"],
        other => {
            return Err(format!(
                "has type `{other}`: a form field is a string, number, integer, boolean or array of enum strings"
            ));
        }
    };
    for (key, value) in property {
        match key.as_str() {
            "type" => {}
            "title" | "description" => string(value, key)?,
            key if allowed.contains(&key) => {}
            key => return Err(format!("has `{key}`, which a `{kind}` field cannot have")),
        }
    }
    match kind {
        "string" => check_string(property),
        "number" | "integer" => check_number(property, kind == "integer"),
        "boolean" => match property.get("default") {
            None | Some(Value::Bool(_)) => Ok(()),
            Some(_) => Err("`default` must be a boolean".into()),
        },
        _ => check_array(property),
    }
}

fn check_string(property: &Map<String, Value>) -> Result<(), String> {
    if let Some(format) = property.get("format") {
        match format.as_str() {
            Some(format) if FORMATS.contains(&format) => {}
            _ => {
                return Err(format!(
                    "`format` must be one of {}",
                    FORMATS.map(|f| format!("\"{f}\"")).join(", ")
                ));
            }
        }
    }
    let min = length(property, "minLength")?;
    let max = length(property, "maxLength")?;
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        return Err("`minLength` is greater than `maxLength`".into());
    }
    let choices = match (property.get("enum"), property.get("oneOf")) {
        (Some(_), Some(_)) => return Err("has both `enum` and `oneOf`".into()),
        (Some(choices), None) => {
            let choices = strings(choices, "enum")?;
            if let Some(names) = property.get("enumNames") {
                let names = strings(names, "enumNames")?;
                if names.len() != choices.len() {
                    return Err("`enumNames` must name each of `enum`, in order".into());
                }
            }
            Some(choices)
        }
        (None, Some(options)) => {
            if property.contains_key("enumNames") {
                return Err("`enumNames` goes with `enum`, not `oneOf`".into());
            }
            Some(titled(options, "oneOf")?)
        }
        (None, None) => {
            if property.contains_key("enumNames") {
                return Err("`enumNames` goes with `enum`".into());
            }
            None
        }
    };
    match property.get("default") {
        None => Ok(()),
        Some(Value::String(default)) => match choices {
            Some(choices) if !choices.contains(&default.as_str()) => {
                Err(format!("`default` \"{default}\" is not one of the choices"))
            }
            _ => Ok(()),
        },
        Some(_) => Err("`default` must be a string".into()),
    }
}

fn check_number(property: &Map<String, Value>, integer: bool) -> Result<(), String> {
    let bound = |key: &str| match property.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(format!("`{key}` must be a number")),
    };
    let (min, max) = (bound("minimum")?, bound("maximum")?);
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        return Err("`minimum` is greater than `maximum`".into());
    }
    match property.get("default") {
        None => Ok(()),
        Some(Value::Number(n)) if integer && !(n.is_i64() || n.is_u64()) => {
            Err("`default` must be an integer".into())
        }
        Some(Value::Number(_)) => Ok(()),
        Some(_) => Err("`default` must be a number".into()),
    }
}

fn check_array(property: &Map<String, Value>) -> Result<(), String> {
    let items = property
        .get("items")
        .and_then(Value::as_object)
        .ok_or("an array field must have `items`: enum strings")?;
    let choices = match (items.get("enum"), items.get("anyOf")) {
        (Some(choices), None) => {
            if items.get("type") != Some(&Value::String("string".into())) {
                return Err("`items` with `enum` must have \"type\": \"string\"".into());
            }
            if let Some(key) = items
                .keys()
                .find(|k| !matches!(k.as_str(), "type" | "enum"))
            {
                return Err(format!(
                    "`items` has `{key}`: it has `type` and `enum` only"
                ));
            }
            strings(choices, "items.enum")?
        }
        (None, Some(options)) => {
            if let Some(key) = items
                .keys()
                .find(|k| !matches!(k.as_str(), "type" | "anyOf"))
            {
                return Err(format!("`items` has `{key}`: it has `anyOf` only"));
            }
            match items.get("type") {
                None => {}
                Some(Value::String(t)) if t == "string" => {}
                Some(_) => return Err("`items` must be strings".into()),
            }
            titled(options, "items.anyOf")?
        }
        _ => return Err("`items` must have either `enum` or `anyOf`".into()),
    };
    let min = length(property, "minItems")?;
    let max = length(property, "maxItems")?;
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        return Err("`minItems` is greater than `maxItems`".into());
    }
    if let Some(default) = property.get("default") {
        for value in strings(default, "default")? {
            if !choices.contains(&value) {
                return Err(format!("`default` has \"{value}\", not one of the choices"));
            }
        }
    }
    Ok(())
}

fn string(value: &Value, key: &str) -> Result<(), String> {
    match value {
        Value::String(_) => Ok(()),
        _ => Err(format!("`{key}` must be a string")),
    }
}

/// A non-negative integer keyword, when present.
fn length(property: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match property.get(key) {
        None => Ok(None),
        Some(value) => value
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be a non-negative integer")),
    }
}

/// A non-empty array of distinct strings.
fn strings<'a>(value: &'a Value, key: &str) -> Result<Vec<&'a str>, String> {
    let items = value
        .as_array()
        .filter(|items| !items.is_empty())
        .ok_or_else(|| format!("`{key}` must be a non-empty array of strings"))?;
    let mut seen = BTreeSet::new();
    items
        .iter()
        .map(|item| match item.as_str() {
            Some(s) if seen.insert(s) => Ok(s),
            Some(s) => Err(format!("`{key}` lists \"{s}\" twice")),
            None => Err(format!("`{key}` must be a non-empty array of strings")),
        })
        .collect()
}

/// A non-empty array of `{"const": string, "title": string}`: the
/// choices, by their values.
fn titled<'a>(value: &'a Value, key: &str) -> Result<Vec<&'a str>, String> {
    let shape = || format!("`{key}` must be a non-empty array of {{\"const\", \"title\"}} strings");
    let options = value
        .as_array()
        .filter(|options| !options.is_empty())
        .ok_or_else(shape)?;
    options
        .iter()
        .map(|option| {
            let option = option.as_object().ok_or_else(shape)?;
            if option.keys().any(|k| k != "const" && k != "title") {
                return Err(shape());
            }
            option
                .get("title")
                .and_then(Value::as_str)
                .ok_or_else(shape)?;
            option
                .get("const")
                .and_then(Value::as_str)
                .ok_or_else(shape)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn verdict(schema: Value) -> Result<(), String> {
        check(&schema.to_string()).map(|_| ())
    }

    #[test]
    fn the_conformance_suites_forms_pass() {
        let defaults = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true}
        }});
        let enums = json!({"type": "object", "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}]}}
        }});
        let info = json!({"type": "object", "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address", "format": "email"}
        }, "required": ["username", "email"]});
        for schema in [defaults, enums, info] {
            let form = check(&schema.to_string()).unwrap();
            // Passed on as written, defaults included.
            assert_eq!(form.schema, schema);
        }
    }

    #[test]
    fn what_a_client_cannot_render_is_refused_with_the_reason() {
        let cases = [
            (json!([]), "must be a JSON object"),
            (json!({"type": "object"}), "must have `properties`"),
            (
                json!({"type": "object", "properties": {"a": {"type": "object"}}}),
                "property `a`: has type `object`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}),
                "has `pattern`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "default": "y"}}}),
                "not one of the choices",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "integer", "default": 1.5}}}),
                "must be an integer",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}),
                "either `enum` or `anyOf`",
            ),
            (
                json!({"type": "object", "properties": {}, "required": ["b"]}),
                "names `b`, not a property",
            ),
            (
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
                "has `additionalProperties`",
            ),
        ];
        for (schema, reason) in cases {
            let err = verdict(schema.clone()).unwrap_err();
            assert!(err.contains(reason), "{schema}: {err}");
        }
        assert!(check("{").err().unwrap().contains("not JSON"));
    }
}
