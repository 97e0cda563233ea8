//! A greedy plugin: each tool, or each mode of its tool list, tries to make
//! the host do unbounded work on the plugin's behalf (schema validation,
//! regexes, violation lists, output shaping, metadata), so that the
//! end-to-end tests (`tests/budgets.rs`) can prove every such unit of host
//! work is bounded.
//!
//! The tool list depends on the environment variable `GREEDY_MODE`, which a
//! test grants through a manifest beside a copy of the plugin:
//! - unset: the tools below, each attacking at call time;
//! - `chain`, `chain_output`: one tool whose input (or output) schema's
//!   references double at every level, 22 levels deep;
//! - `metadata`: 50 tools with two schemas of about 250 KiB each;
//! - `wide`: 8 tools with a schema of about 60 KiB each (within limits);
//! - `icon`: a tool with a 64 MiB data: icon.
//!
//! Written against the raw bindings, so that every field can be abused.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

use corral::plugin::host;
use corral::plugin::types::{Annotations, Content, LogLevel, Role, TextContent};
use exports::corral::plugin::tools::{CallResult, Guest, Icon, Tool};

const NO_ARGS: &str = r#"{"type":"object"}"#;

/// Each level of the value doubles the subschemas applied to the next.
const NESTED: &str = r##"{"type":"object","$defs":{"d":{"type":"object","properties":{"x":{"allOf":[{"$ref":"#/$defs/d"},{"$ref":"#/$defs/d"}]}}}},"properties":{"x":{"$ref":"#/$defs/d"}}}"##;

/// An array of strings matched by a pattern that backtracks catastrophically.
const PATTERNED: &str = r#"{"type":"object","properties":{"s":{"type":"array","items":{"type":"string","pattern":"^(a+)+$"}}}}"#;

/// An array of integers: strings in it are violations.
const INTEGERS: &str =
    r#"{"type":"object","properties":{"list":{"type":"array","items":{"type":"integer"}}}}"#;

/// `{"count": N}`; for `annotated`, `{"roles": N}` or `{"mib": N}`; for
/// `chatty`, `{"count": N, "kib": K}`.
const COUNT: &str = r#"{"type":"object","properties":{"count":{"type":"integer","minimum":0},"roles":{"type":"integer","minimum":0},"mib":{"type":"integer","minimum":0},"kib":{"type":"integer","minimum":0}}}"#;

struct Greedy;

fn tool(name: &str, input: &str, output: Option<&str>) -> Tool {
    Tool {
        name: name.into(),
        title: None,
        description: Some(format!("Test fixture tool {name}")),
        input_schema: input.into(),
        output_schema: output.map(Into::into),
        annotations: None,
        icons: vec![],
        task_support: None,
    }
}

/// `d0: anyOf [d1, d1]`, ..., `d{depth}: integer`, used by property `x`.
fn doubling_chain(depth: usize) -> String {
    let mut defs = Vec::new();
    for i in 0..depth {
        let next = format!(r##"{{"$ref":"#/$defs/d{}"}}"##, i + 1);
        defs.push(format!(r#""d{i}":{{"anyOf":[{next},{next}]}}"#));
    }
    defs.push(format!(r#""d{depth}":{{"type":"integer"}}"#));
    format!(
        r##"{{"type":"object","properties":{{"x":{{"$ref":"#/$defs/d0"}}}},"$defs":{{{}}}}}"##,
        defs.join(",")
    )
}

/// About `bytes` of schema: an object with many string properties.
fn big_schema(bytes: usize, tag: &str) -> String {
    let count = bytes / 40;
    let properties: Vec<String> = (0..count)
        .map(|i| format!(r#""{tag}_property_{i:06}":{{"type":"string"}}"#))
        .collect();
    format!(
        r#"{{"type":"object","properties":{{{}}}}}"#,
        properties.join(",")
    )
}

/// The number under `key` in the JSON arguments, or 0.
fn number(arguments: &str, key: &str) -> usize {
    let needle = format!("\"{key}\":");
    arguments
        .find(&needle)
        .map(|at| {
            arguments[at + needle.len()..]
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}

fn text(text: String, annotations: Option<Annotations>) -> Content {
    Content::Text(TextContent { text, annotations })
}

fn structured(json: String) -> CallResult {
    CallResult {
        content: vec![text("structured".into(), None)],
        structured_content: Some(json),
        is_error: false,
    }
}

impl Guest for Greedy {
    fn list() -> Vec<Tool> {
        match std::env::var("GREEDY_MODE").as_deref() {
            Ok("chain") => vec![tool("chain", &doubling_chain(22), None)],
            Ok("chain_output") => vec![tool("chain_output", NO_ARGS, Some(&doubling_chain(22)))],
            Ok("metadata") => (0..50)
                .map(|i| {
                    let name = format!("wide_{i}");
                    let input = big_schema(250 << 10, "in");
                    let output = big_schema(250 << 10, "out");
                    tool(&name, &input, Some(&output))
                })
                .collect(),
            Ok("wide") => (0..8)
                .map(|i| tool(&format!("wide_{i}"), &big_schema(60 << 10, "in"), None))
                .collect(),
            Ok("icon") => {
                let mut with_icon = tool("iconic", NO_ARGS, None);
                with_icon.icons.push(Icon {
                    src: format!("data:image/png;base64,{}", "A".repeat(64 << 20)),
                    mime_type: Some("image/png".into()),
                    sizes: vec![],
                    theme: None,
                });
                vec![with_icon]
            }
            _ => vec![
                tool("ok", NO_ARGS, None),
                tool("nested", NESTED, None),
                tool("nested_output", COUNT, Some(NESTED)),
                tool("patterned", PATTERNED, None),
                tool("patterned_output", COUNT, Some(PATTERNED)),
                tool("integers", INTEGERS, None),
                tool("annotated", COUNT, None),
                tool("chatty", COUNT, None),
            ],
        }
    }

    fn call(name: String, arguments: String) -> CallResult {
        match name.as_str() {
            "ok" | "nested" | "patterned" | "integers" => structured(r#"{"ok":true}"#.into()),
            // `{"x": {"x": ... 1 ...}}`, `count` levels deep.
            "nested_output" => {
                let depth = number(&arguments, "count");
                structured(format!(
                    "{}1{}",
                    r#"{"x":"#.repeat(depth),
                    "}".repeat(depth)
                ))
            }
            // `count` distinct strings of 'a's that each end in a mismatch.
            "patterned_output" => {
                let strings: Vec<String> = (0..number(&arguments, "count"))
                    .map(|i| format!("\"{}!{i}\"", "a".repeat(30)))
                    .collect();
                structured(format!(r#"{{"s":[{}]}}"#, strings.join(",")))
            }
            // Text with an audience of `roles` roles, or a `mib` MiB timestamp.
            "annotated" => {
                let annotations = Annotations {
                    audience: vec![Role::User; number(&arguments, "roles")],
                    priority: Some(0.5),
                    last_modified: Some("9".repeat(number(&arguments, "mib") << 20)),
                };
                CallResult {
                    content: vec![text("annotated".into(), Some(annotations))],
                    structured_content: None,
                    is_error: false,
                }
            }
            // `count` progress reports and as many log messages, each
            // carrying `kib` KiB.
            "chatty" => {
                let count = number(&arguments, "count");
                let message = "m".repeat(number(&arguments, "kib") << 10);
                for done in 0..count {
                    host::progress(done as f64, Some(count as f64), Some(&message));
                    host::log(LogLevel::Info, &message);
                }
                structured(format!(r#"{{"reported":{count}}}"#))
            }
            _ => unreachable!("the host only calls declared tools"),
        }
    }
}

export!(Greedy);
