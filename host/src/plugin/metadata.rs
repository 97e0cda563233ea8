//! Checking what a plugin's `list` says about its tools before anyone sees it.
//!
//! Names follow the spec's rules and, stricter, `^[a-zA-Z0-9_-]{1,64}$` (what
//! Claude Desktop enforces: one bad name there hides every tool). Schemas must
//! be JSON objects describing objects and must compile.

use serde_json::Value;

use super::bindings::tools;
use crate::schema::Schema;
use crate::tool::{Icon, TaskSupport, ToolAnnotations, ToolDef};

/// The most tools one plugin may offer.
const MAX_TOOLS: usize = 1_000;
/// The largest schema, description or title accepted, in bytes.
const MAX_SCHEMA_BYTES: usize = 256 * 1024;
const MAX_TEXT_BYTES: usize = 64 * 1024;

/// A tool as the plugin declared it, validated, with its compiled schemas.
#[derive(Debug)]
pub struct CheckedTool {
    /// The definition, named as the plugin names it.
    pub def: ToolDef,
    pub input: Schema,
    pub output: Option<Schema>,
}

/// Whether `name` is acceptable as a tool name for every client.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Validates every tool; the first problems found are returned together, so
/// that a plugin author sees them all at once.
pub fn check_tools(declared: Vec<tools::Tool>) -> Result<Vec<CheckedTool>, String> {
    if declared.len() > MAX_TOOLS {
        return Err(format!(
            "declares {} tools; at most {MAX_TOOLS} are allowed",
            declared.len()
        ));
    }
    let mut problems = Vec::new();
    let mut checked: Vec<CheckedTool> = Vec::with_capacity(declared.len());
    for tool in declared {
        let name = tool.name.clone();
        if checked.iter().any(|t| t.def.name == name) {
            problems.push(format!("tool `{name}` is declared twice"));
            continue;
        }
        match check_tool(tool) {
            Ok(tool) => checked.push(tool),
            Err(problem) => problems.push(format!("tool `{}`: {problem}", printable(&name))),
        }
    }
    if problems.is_empty() {
        Ok(checked)
    } else {
        Err(problems.join("; "))
    }
}

fn check_tool(tool: tools::Tool) -> Result<CheckedTool, String> {
    if !is_valid_tool_name(&tool.name) {
        return Err("invalid name: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`".into());
    }
    for (what, text) in [("title", &tool.title), ("description", &tool.description)] {
        if text.as_ref().is_some_and(|t| t.len() > MAX_TEXT_BYTES) {
            return Err(format!("{what} is longer than {MAX_TEXT_BYTES} bytes"));
        }
    }
    let (input_schema, input) = parse_schema("input schema", &tool.input_schema)?;
    let (output_schema, output) = match &tool.output_schema {
        None => (None, None),
        Some(text) => {
            let (value, schema) = parse_schema("output schema", text)?;
            (Some(value), Some(schema))
        }
    };
    let icons = tool
        .icons
        .into_iter()
        .map(check_icon)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CheckedTool {
        def: ToolDef {
            name: tool.name,
            title: tool.title,
            description: tool.description,
            input_schema,
            output_schema,
            annotations: tool.annotations.map(|a| ToolAnnotations {
                title: a.title,
                read_only_hint: a.read_only_hint,
                destructive_hint: a.destructive_hint,
                idempotent_hint: a.idempotent_hint,
                open_world_hint: a.open_world_hint,
            }),
            icons,
            task_support: tool.task_support.map(|t| match t {
                tools::TaskSupport::Forbidden => TaskSupport::Forbidden,
                tools::TaskSupport::Optional => TaskSupport::Optional,
                tools::TaskSupport::Required => TaskSupport::Required,
            }),
        },
        input,
        output,
    })
}

fn parse_schema(what: &str, text: &str) -> Result<(Value, Schema), String> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(format!("{what} is larger than {MAX_SCHEMA_BYTES} bytes"));
    }
    let value: Value =
        serde_json::from_str(text).map_err(|err| format!("{what} is not valid JSON: {err}"))?;
    let schema = Schema::compile_object_schema(&value).map_err(|err| format!("{what}: {err}"))?;
    Ok((value, schema))
}

fn check_icon(icon: tools::Icon) -> Result<Icon, String> {
    let scheme_ok = icon.src.starts_with("https://") || icon.src.starts_with("data:");
    if !scheme_ok {
        return Err(format!(
            "icon source `{}` must be an https: or data: URI",
            printable(&icon.src)
        ));
    }
    if let Some(theme) = &icon.theme
        && theme != "light"
        && theme != "dark"
    {
        return Err(format!(
            "icon theme must be \"light\" or \"dark\", not `{}`",
            printable(theme)
        ));
    }
    Ok(Icon {
        src: icon.src,
        mime_type: icon.mime_type,
        sizes: icon.sizes,
        theme: icon.theme,
    })
}

/// A plugin-supplied string made safe to quote in a log line: control
/// characters escaped, length capped.
pub fn printable(text: &str) -> String {
    let mut out: String = text.chars().take(80).flat_map(char::escape_debug).collect();
    if text.chars().count() > 80 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, input_schema: &str) -> tools::Tool {
        tools::Tool {
            name: name.into(),
            title: None,
            description: Some("does things".into()),
            input_schema: input_schema.into(),
            output_schema: None,
            annotations: None,
            icons: vec![],
            task_support: None,
        }
    }

    const OBJECT: &str = r#"{"type":"object"}"#;

    #[test]
    fn names_follow_the_strict_rule() {
        for good in ["a", "get_weather", "DATA-export_v2", &"x".repeat(64)] {
            assert!(is_valid_tool_name(good), "{good}");
        }
        for bad in [
            "",
            "has space",
            "dotted.name",
            "ünïcode",
            "a,b",
            &"x".repeat(65),
        ] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn every_problem_is_reported_together() {
        let err = check_tools(vec![
            tool("ok", OBJECT),
            tool("bad name", OBJECT),
            tool("ok", OBJECT),
            tool("not_json", "{"),
            tool("not_object", r#"{"type":"string"}"#),
        ])
        .unwrap_err();
        assert!(err.contains("`bad name`: invalid name"), "{err}");
        assert!(err.contains("`ok` is declared twice"), "{err}");
        assert!(
            err.contains("`not_json`: input schema is not valid JSON"),
            "{err}"
        );
        assert!(
            err.contains("`not_object`: input schema: the schema must have"),
            "{err}"
        );
    }

    #[test]
    fn valid_tools_pass_with_their_schemas_compiled() {
        let mut with_output = tool("stats", OBJECT);
        with_output.output_schema =
            Some(r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#.into());
        let checked = check_tools(vec![tool("a", OBJECT), with_output]).unwrap();
        assert_eq!(checked.len(), 2);
        assert!(checked[1].output.is_some());
        assert_eq!(
            checked[1].def.output_schema.as_ref().unwrap()["type"],
            "object"
        );
    }

    #[test]
    fn icons_must_be_https_or_data() {
        let mut t = tool("a", OBJECT);
        t.icons.push(tools::Icon {
            src: "file:///etc/passwd".into(),
            mime_type: None,
            sizes: vec![],
            theme: None,
        });
        assert!(
            check_tools(vec![t])
                .unwrap_err()
                .contains("https: or data:")
        );
    }
}
