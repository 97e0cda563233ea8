//! Checking what a plugin's `list` says about its tools before anyone sees it.
//!
//! Names follow the spec's rules and, stricter, `^[a-zA-Z0-9_-]{1,64}$` (what
//! Claude Desktop enforces: one bad name there hides every tool). Schemas must
//! be JSON objects describing objects, must compile, and must have a shape
//! that validates within budgets (see [`crate::schema`]); their `x-mcp-header`
//! marks must meet the spec's constraints (clients drop a tool whose marks do
//! not). A tool that requires task execution is refused: Corral runs no tasks.
//!
//! The host keeps every tool's metadata for as long as the plugin is
//! loaded and copies it into every `tools/list` answer, so each field is
//! bounded, and so is the whole: the heap memory the host holds for a
//! plugin's tools (schemas parsed and compiled, which take tens of times
//! their text) is counted as each tool is checked, against the plugin's
//! `metadata` limit, and checking stops at the first tool past it.

use std::sync::Arc;

use serde_json::Value;

use crate::bindings::tools;
use crate::memory;
use crate::schema::Schema;
use crate::units::human_bytes;
use corral_tool::header_param::header_params;
use corral_tool::{Icon, TaskPolicy, TaskSupport, ToolAnnotations, ToolDef};

/// The most tools one plugin may offer.
const MAX_TOOLS: usize = 1_000;
/// The largest schema accepted, in bytes of JSON text.
const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// The longest description, in bytes.
const MAX_DESCRIPTION_BYTES: usize = 64 * 1024;
/// The longest title (the tool's, or its annotations'), in bytes.
const MAX_TITLE_BYTES: usize = 1024;
/// The most icons per tool.
const MAX_ICONS: usize = 16;
/// The longest icon source, in bytes: room for a small image as a data: URI.
const MAX_ICON_SRC_BYTES: usize = 64 * 1024;
/// The longest icon MIME type, and each icon size (`48x48`), in bytes.
const MAX_ICON_FIELD_BYTES: usize = 128;
/// The most sizes one icon lists.
const MAX_ICON_SIZES: usize = 16;

/// A tool as the plugin declared it, validated, with its compiled schemas.
#[derive(Debug)]
pub struct CheckedTool {
    /// The definition, named as the plugin names it.
    pub def: ToolDef,
    pub input: Arc<Schema>,
    pub output: Option<Arc<Schema>>,
}

/// Whether `name` is acceptable as a tool name for every client.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Validates every tool; the first problems found are returned together, so
/// that a plugin author sees them all at once. `budget` is the most heap
/// memory the checked tools may hold, in bytes.
#[cfg(test)]
pub fn check_tools(declared: Vec<tools::Tool>, budget: usize) -> Result<Vec<CheckedTool>, String> {
    check_tools_held(declared, budget).map(|(tools, _)| tools)
}

/// As [`check_tools`], with the heap memory the checked tools hold, so
/// that a plugin's other definitions count against the rest of the budget.
pub fn check_tools_held(
    declared: Vec<tools::Tool>,
    budget: usize,
) -> Result<(Vec<CheckedTool>, usize), String> {
    if declared.len() > MAX_TOOLS {
        return Err(format!(
            "declares {} tools; at most {MAX_TOOLS} are allowed",
            declared.len()
        ));
    }
    let mut problems = Vec::new();
    let mut checked: Vec<CheckedTool> = Vec::with_capacity(declared.len());
    let mut held = 0usize;
    for tool in declared {
        let name = tool.name.clone();
        if checked.iter().any(|t| t.def.name == name) {
            problems.push(format!("tool `{}` is declared twice", printable(&name)));
            continue;
        }
        let text = text_bytes(&tool);
        let (result, compiled) = memory::held_by(|| check_tool(tool));
        let tool = match result {
            Ok(tool) => tool,
            Err(problem) => {
                problems.push(format!("tool `{}`: {problem}", printable(&name)));
                continue;
            }
        };
        held = held.saturating_add(text + compiled);
        if held > budget {
            problems.push(format!(
                "tool `{}`: the tools up to this one take {} of host memory (their schemas parsed and compiled), more than the metadata limit of {}; declare fewer or smaller schemas, or raise `metadata` in the manifest's [limits]",
                printable(&name),
                human_bytes(held),
                human_bytes(budget)
            ));
            break;
        }
        checked.push(tool);
    }
    if problems.is_empty() {
        Ok((checked, held))
    } else {
        Err(problems.join("; "))
    }
}

fn check_tool(tool: tools::Tool) -> Result<CheckedTool, String> {
    let text = text_bytes(&tool);
    if !is_valid_tool_name(&tool.name) {
        return Err("invalid name: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`".into());
    }
    let annotation_title = tool.annotations.as_ref().and_then(|a| a.title.as_ref());
    for (what, text, max) in [
        ("title", tool.title.as_ref(), MAX_TITLE_BYTES),
        ("annotations title", annotation_title, MAX_TITLE_BYTES),
        (
            "description",
            tool.description.as_ref(),
            MAX_DESCRIPTION_BYTES,
        ),
    ] {
        if text.is_some_and(|t| t.len() > max) {
            return Err(format!("{what} is longer than {max} bytes"));
        }
    }
    if tool.icons.len() > MAX_ICONS {
        return Err(format!(
            "declares {} icons; at most {MAX_ICONS} are allowed",
            tool.icons.len()
        ));
    }
    let (input_schema, input) = parse_schema("input schema", &tool.input_schema)?;
    // Clients drop a tool whose x-mcp-header marks break the spec's
    // constraints; the HTTP transport checks calls against the valid ones.
    header_params(&input_schema).map_err(|problem| format!("input schema: {problem}"))?;
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
    // What a copy of the schemas as JSON values takes: each `tools/list`
    // answer makes one.
    let (copy, schema_bytes) = memory::held_by(|| (input_schema.clone(), output_schema.clone()));
    drop(copy);
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
            // The plugin's manifest sets it once the tools are checked.
            task: TaskPolicy::default(),
            held_bytes: text + schema_bytes,
        },
        input: Arc::new(input),
        output: output.map(Arc::new),
    })
}

/// Bytes of text in a tool's declaration (the host keeps it all).
fn text_bytes(tool: &tools::Tool) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let icons: usize = tool
        .icons
        .iter()
        .map(|i| {
            i.src.len()
                + opt(&i.mime_type)
                + opt(&i.theme)
                + i.sizes.iter().map(String::len).sum::<usize>()
        })
        .sum();
    tool.name.len()
        + opt(&tool.title)
        + opt(&tool.description)
        + tool.input_schema.len()
        + opt(&tool.output_schema)
        + tool.annotations.as_ref().map_or(0, |a| opt(&a.title))
        + icons
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

pub(crate) fn check_icon(icon: tools::Icon) -> Result<Icon, String> {
    if icon.src.len() > MAX_ICON_SRC_BYTES {
        return Err(format!(
            "icon source is longer than {MAX_ICON_SRC_BYTES} bytes"
        ));
    }
    if icon.sizes.len() > MAX_ICON_SIZES {
        return Err(format!("icon lists more than {MAX_ICON_SIZES} sizes"));
    }
    let fields = icon.mime_type.iter().chain(&icon.sizes);
    if fields.into_iter().any(|f| f.len() > MAX_ICON_FIELD_BYTES) {
        return Err(format!(
            "icon MIME type or size is longer than {MAX_ICON_FIELD_BYTES} bytes"
        ));
    }
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

    fn check_tools_unbounded(declared: Vec<tools::Tool>) -> Result<Vec<CheckedTool>, String> {
        check_tools(declared, usize::MAX)
    }

    #[test]
    fn the_memory_the_tools_hold_is_bounded_and_checking_stops_past_it() {
        // A 100 KiB schema (4,000 properties) holds far more than 100 KiB once
        // parsed and compiled.
        let properties: serde_json::Map<String, Value> = (0..4_000)
            .map(|i| (format!("p{i}"), serde_json::json!({ "type": "string" })))
            .collect();
        let schema = serde_json::json!({ "type": "object", "properties": properties }).to_string();
        let tools: Vec<_> = (0..50).map(|i| tool(&format!("t{i}"), &schema)).collect();
        let err = check_tools(tools, 8 << 20).unwrap_err();
        assert!(
            err.contains("more than the metadata limit of 8 MiB"),
            "{err}"
        );
        // It stopped at the first tool past the budget, well before the 50th.
        assert!(!err.contains("`t49`"), "{err}");
        let (checked, held) =
            memory::held_by(|| check_tools(vec![tool("a", &schema)], 8 << 20).unwrap());
        assert!(
            held > 10 * schema.len(),
            "{held} for {} bytes of schema",
            schema.len()
        );
        drop(checked);
    }

    #[test]
    fn every_field_is_bounded() {
        let mut long_title = tool("a", OBJECT);
        long_title.title = Some("t".repeat(MAX_TITLE_BYTES + 1));
        let mut big_icon = tool("b", OBJECT);
        big_icon.icons.push(tools::Icon {
            src: format!("data:image/png;base64,{}", "A".repeat(MAX_ICON_SRC_BYTES)),
            mime_type: None,
            sizes: vec![],
            theme: None,
        });
        let mut many_icons = tool("c", OBJECT);
        many_icons.icons = (0..=MAX_ICONS)
            .map(|_| tools::Icon {
                src: "data:,".into(),
                mime_type: None,
                sizes: vec![],
                theme: None,
            })
            .collect();
        let err = check_tools_unbounded(vec![long_title, big_icon, many_icons]).unwrap_err();
        assert!(
            err.contains("`a`: title is longer than 1024 bytes"),
            "{err}"
        );
        assert!(err.contains("`b`: icon source is longer than"), "{err}");
        assert!(err.contains("`c`: declares 17 icons"), "{err}");
    }

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
        let err = check_tools_unbounded(vec![
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
        let checked = check_tools_unbounded(vec![tool("a", OBJECT), with_output]).unwrap();
        assert_eq!(checked.len(), 2);
        assert!(checked[1].output.is_some());
        assert_eq!(
            checked[1].def.output_schema.as_ref().unwrap()["type"],
            "object"
        );
    }

    #[test]
    fn x_mcp_header_marks_that_clients_would_reject_refuse_the_tool() {
        let marked = |name: &str, properties: &str| {
            tool(
                name,
                &format!(r#"{{"type":"object","properties":{properties}}}"#),
            )
        };
        let err = check_tools_unbounded(vec![
            marked(
                "on_object",
                r#"{"data":{"type":"object","x-mcp-header":"Data"}}"#,
            ),
            marked(
                "with_space",
                r#"{"region":{"type":"string","x-mcp-header":"My Region"}}"#,
            ),
            marked(
                "twice",
                r#"{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}"#,
            ),
        ])
        .unwrap_err();
        assert!(
            err.contains("`on_object`: input schema: x-mcp-header `Data` on `data`, a parameter of type \"object\""),
            "{err}"
        );
        assert!(
            err.contains("`with_space`: input schema: x-mcp-header `My Region` on `region`: a header name takes only"),
            "{err}"
        );
        assert!(
            err.contains(
                "`twice`: input schema: x-mcp-header `myfield` on `b` repeats `MyField` on `a`"
            ),
            "{err}"
        );
        let valid = marked(
            "routed",
            r#"{"region":{"type":"string","x-mcp-header":"Region"}}"#,
        );
        assert_eq!(check_tools_unbounded(vec![valid]).unwrap().len(), 1);
    }

    #[test]
    fn every_task_support_is_served() {
        for support in [
            tools::TaskSupport::Required,
            tools::TaskSupport::Optional,
            tools::TaskSupport::Forbidden,
        ] {
            let mut t = tool("t", OBJECT);
            t.task_support = Some(support);
            assert!(check_tools_unbounded(vec![t]).is_ok());
        }
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
            check_tools_unbounded(vec![t])
                .unwrap_err()
                .contains("https: or data:")
        );
    }
}
