//! Tool parameters mirrored into HTTP headers: a property of a tool's input
//! schema marked `"x-mcp-header": "Region"` is sent by 2026-07-28 clients
//! over Streamable HTTP as `Mcp-Param-Region: <value>`, so that proxies can
//! route on it without parsing the body.
//!
//! [`header_params`] reads a schema's marks and checks them against the
//! spec's constraints. The sandbox refuses a tool whose marks break them
//! (clients would drop it from their tool list), and the HTTP transport
//! checks each stateless call's headers against the arguments they mirror.

use serde_json::{Map, Value};

/// The schema keyword that marks a mirrored parameter.
pub const ANNOTATION: &str = "x-mcp-header";

/// The prefix of a mirrored parameter's header name.
pub const HEADER_PREFIX: &str = "mcp-param-";

/// One parameter that a tool's input schema marks with `x-mcp-header`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The name part of the header, `Mcp-Param-{name}`, as declared.
    pub name: String,
    /// The property names that lead from the arguments object to the value
    /// (one for a top-level parameter).
    pub path: Vec<String>,
}

impl HeaderParam {
    /// The header's name, in lower case (HTTP header names are
    /// case-insensitive).
    pub fn header(&self) -> String {
        format!("{HEADER_PREFIX}{}", self.name.to_ascii_lowercase())
    }

    /// The parameter's path for messages: `region`, `target.region`.
    pub fn dotted_path(&self) -> String {
        self.path.join(".")
    }

    /// The value this parameter has in `arguments`; `None` when it is
    /// absent or null (then the client sends no header for it).
    pub fn value_in<'a>(&self, arguments: &'a Map<String, Value>) -> Option<&'a Value> {
        let (last, parents) = self.path.split_last()?;
        let mut object = arguments;
        for key in parents {
            object = object.get(key)?.as_object()?;
        }
        object.get(last).filter(|value| !value.is_null())
    }
}

/// Every parameter `input_schema` marks with `x-mcp-header`; or what is
/// wrong with the marks.
///
/// The marks are looked for where parameters are: on the schemas under
/// `properties`, at any depth of nested object properties. Each must be a
/// non-empty HTTP header-name token, unique among the schema's marks
/// regardless of case, on a parameter whose `type` is `string`, `integer`
/// or `boolean` (optionally with `null`). A `number` parameter is refused
/// too: the Streamable HTTP transport excludes it (its text form is
/// ambiguous), and clients drop tools that mark one.
pub fn header_params(input_schema: &Value) -> Result<Vec<HeaderParam>, String> {
    if input_schema.get(ANNOTATION).is_some() {
        return Err(format!(
            "{ANNOTATION} on the input schema itself: it belongs on a parameter's schema"
        ));
    }
    let mut found = Vec::new();
    collect(input_schema, &mut Vec::new(), &mut found)?;
    for (index, param) in found.iter().enumerate() {
        if let Some(earlier) = found[..index]
            .iter()
            .find(|earlier| earlier.name.eq_ignore_ascii_case(&param.name))
        {
            return Err(format!(
                "{ANNOTATION} `{}` on `{}` repeats `{}` on `{}` (header names ignore case)",
                param.name,
                param.dotted_path(),
                earlier.name,
                earlier.dotted_path()
            ));
        }
    }
    Ok(found)
}

/// Collects the marks on the properties of `schema` (at `path`) and of
/// their nested properties. Recursion is bounded by the schema's nesting,
/// which JSON parsing already limits.
fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(mark) = property.get(ANNOTATION) {
            found.push(checked_mark(mark, property, path)?);
        }
        collect(property, path, found)?;
        path.pop();
    }
    Ok(())
}

/// The parameter at `path` that `mark` (its `x-mcp-header` value) names,
/// if the mark and the parameter's type meet the constraints.
fn checked_mark(mark: &Value, property: &Value, path: &[String]) -> Result<HeaderParam, String> {
    let dotted = path.join(".");
    let Some(name) = mark.as_str() else {
        return Err(format!(
            "{ANNOTATION} on `{dotted}` must be a string, not {mark}"
        ));
    };
    if name.is_empty() {
        return Err(format!("{ANNOTATION} on `{dotted}` is empty"));
    }
    if !name.bytes().all(is_token_char) {
        return Err(format!(
            "{ANNOTATION} `{}` on `{dotted}`: a header name takes only ASCII letters, digits and !#$%&'*+-.^_`|~ (no spaces, colons or control characters)",
            name.escape_debug()
        ));
    }
    if let Err(kind) = mirrorable_type(property.get("type")) {
        return Err(format!(
            "{ANNOTATION} `{name}` on `{dotted}`, a parameter of type {kind}: only string, integer and boolean parameters can be mirrored into a header"
        ));
    }
    Ok(HeaderParam {
        name: name.to_string(),
        path: path.to_vec(),
    })
}

/// Whether a parameter whose schema has this `type` can be mirrored: one
/// of string, integer or boolean, alone or with null. Otherwise what the
/// type is, for the message.
fn mirrorable_type(kind: Option<&Value>) -> Result<(), String> {
    const MIRRORABLE: [&str; 3] = ["string", "integer", "boolean"];
    match kind {
        Some(Value::String(kind)) if MIRRORABLE.contains(&kind.as_str()) => Ok(()),
        Some(Value::Array(kinds)) => {
            let named: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|kind| *kind != "null")
                .collect();
            match named[..] {
                [kind] if kinds.len() <= 2 && MIRRORABLE.contains(&kind) => Ok(()),
                _ => Err(Value::Array(kinds.clone()).to_string()),
            }
        }
        Some(other) => Err(other.to_string()),
        None => Err("unspecified (no `type`)".into()),
    }
}

/// An HTTP header-name character (`tchar`, RFC 9110 section 5.6.2).
fn is_token_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(properties: Value) -> Value {
        json!({ "type": "object", "properties": properties })
    }

    #[test]
    fn marks_are_found_at_any_depth() {
        let schema = object(json!({
            "region": { "type": "string", "x-mcp-header": "Region" },
            "query": { "type": "string" },
            "target": {
                "type": "object",
                "properties": { "shard": { "type": ["integer", "null"], "x-mcp-header": "Shard" } },
            },
            "dry_run": { "type": "boolean", "x-mcp-header": "Dry-Run" },
        }));
        let params = header_params(&schema).unwrap();
        let mut named: Vec<(&str, String)> = params
            .iter()
            .map(|param| (param.name.as_str(), param.dotted_path()))
            .collect();
        named.sort();
        assert_eq!(
            named,
            [
                ("Dry-Run", "dry_run".to_string()),
                ("Region", "region".to_string()),
                ("Shard", "target.shard".to_string()),
            ]
        );
        let region = params.iter().find(|param| param.name == "Region").unwrap();
        assert_eq!(region.header(), "mcp-param-region");
        assert_eq!(header_params(&object(json!({}))).unwrap(), []);
        assert_eq!(header_params(&json!({ "type": "object" })).unwrap(), []);
    }

    #[test]
    fn marks_that_break_the_constraints_are_refused_with_the_reason() {
        let refused = |properties: Value| header_params(&object(properties)).unwrap_err();
        let string = |mark: Value| json!({ "p": { "type": "string", "x-mcp-header": mark } });
        assert!(refused(string(json!(""))).contains("on `p` is empty"));
        for bad in [
            "My Region",
            "Region:Primary",
            "Région",
            "Region\t1",
            "a\r\nb",
        ] {
            let err = refused(string(json!(bad)));
            assert!(err.contains("a header name takes only"), "{bad}: {err}");
        }
        assert!(refused(string(json!(7))).contains("must be a string"));
        for kind in [
            json!("object"),
            json!("array"),
            json!("null"),
            json!("number"),
            json!(["string", "integer"]),
        ] {
            let err = refused(json!({ "p": { "type": kind, "x-mcp-header": "P" } }));
            assert!(
                err.contains("only string, integer and boolean parameters"),
                "{err}"
            );
        }
        let untyped = refused(json!({ "p": { "enum": ["a"], "x-mcp-header": "P" } }));
        assert!(untyped.contains("unspecified"), "{untyped}");
        let twice = refused(json!({
            "a": { "type": "string", "x-mcp-header": "MyField" },
            "b": { "type": "string", "x-mcp-header": "myfield" },
        }));
        assert!(
            twice.contains("`myfield` on `b` repeats `MyField` on `a`"),
            "{twice}"
        );
        let root = header_params(&json!({ "type": "object", "x-mcp-header": "All" }));
        assert!(root.unwrap_err().contains("on the input schema itself"));
    }

    #[test]
    fn a_value_is_found_by_its_path_and_null_counts_as_absent() {
        let param = HeaderParam {
            name: "Shard".into(),
            path: vec!["target".into(), "shard".into()],
        };
        let arguments = |value: Value| value.as_object().unwrap().clone();
        assert_eq!(
            param.value_in(&arguments(json!({ "target": { "shard": 3 } }))),
            Some(&json!(3))
        );
        for absent in [
            json!({}),
            json!({ "target": null }),
            json!({ "target": "flat" }),
            json!({ "target": { "shard": null } }),
        ] {
            assert_eq!(param.value_in(&arguments(absent.clone())), None, "{absent}");
        }
    }
}
