//! JSON Schema: compiling a plugin's schemas once, validating values against them.
//!
//! Schemas default to draft 2020-12 (the MCP default) unless they name another
//! draft in `$schema`. No remote `$ref` is ever fetched: a schema that needs one
//! does not compile.

use std::fmt;

use serde_json::Value;

/// A compiled schema, cheap to share between calls.
#[derive(Debug, Clone)]
pub struct Schema {
    validator: jsonschema::Validator,
}

/// One way a value failed its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value ("" for the root).
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {}", self.message)
    }
}

impl Schema {
    /// Compiles `schema`, which must be a JSON object describing an object
    /// (`"type": "object"`), as MCP requires of input and output schemas.
    pub fn compile_object_schema(schema: &Value) -> Result<Schema, String> {
        let object = schema
            .as_object()
            .ok_or_else(|| "the schema must be a JSON object".to_string())?;
        if object.get("type") != Some(&Value::String("object".into())) {
            return Err("the schema must have \"type\": \"object\"".into());
        }
        let validator = jsonschema::validator_for(schema)
            .map_err(|err| format!("not a valid JSON Schema: {err}"))?;
        Ok(Schema { validator })
    }

    /// Every violation of the schema by `value`, in the validator's order;
    /// empty when the value is valid.
    pub fn violations(&self, value: &Value) -> Vec<Violation> {
        self.validator
            .iter_errors(value)
            .map(|err| Violation {
                pointer: err.instance_path().to_string(),
                message: err.to_string(),
            })
            .collect()
    }
}

/// Formats violations as one line each, for a tool execution error.
pub fn describe(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("- {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_every_violation_with_its_pointer() {
        let schema = Schema::compile_object_schema(&json!({
            "type": "object",
            "properties": {
                "a": { "type": "number" },
                "items": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["a", "b"]
        }))
        .unwrap();
        let violations = schema.violations(&json!({ "a": "x", "items": ["ok", 3] }));
        let pointers: Vec<_> = violations.iter().map(|v| v.pointer.as_str()).collect();
        assert!(pointers.contains(&"/a"), "{violations:?}");
        assert!(pointers.contains(&"/items/1"), "{violations:?}");
        assert!(pointers.contains(&""), "missing b: {violations:?}");
        assert_eq!(violations.len(), 3);
        assert!(schema.violations(&json!({ "a": 1, "b": 0 })).is_empty());
    }

    #[test]
    fn rejects_schemas_that_are_not_object_schemas() {
        for bad in [
            json!(null),
            json!(true),
            json!({ "type": "string" }),
            json!({ "properties": {} }),
            json!({ "type": "object", "properties": { "a": { "type": "nope" } } }),
            json!({ "type": "object", "minProperties": -1 }),
        ] {
            assert!(Schema::compile_object_schema(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults_to_2020_12_and_honours_other_drafts() {
        // prefixItems exists only in 2020-12.
        let schema = Schema::compile_object_schema(&json!({
            "type": "object",
            "properties": { "t": { "type": "array", "prefixItems": [{ "type": "number" }] } }
        }))
        .unwrap();
        assert_eq!(schema.violations(&json!({ "t": ["x"] })).len(), 1);
        let draft7 = Schema::compile_object_schema(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": { "a": { "type": "number" } }
        }))
        .unwrap();
        assert_eq!(draft7.violations(&json!({ "a": "x" })).len(), 1);
    }
}
