//! A plugin that breaks its own promises, to prove the host catches it.
//! Written against the raw bindings (no SDK) to exercise the contract itself.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

use corral::plugin::types::{Content, TextContent};
use exports::corral::plugin::tools::{CallResult, Guest, Tool};

const COUNT_SCHEMA: &str =
    r#"{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}"#;
const NO_ARGS: &str = r#"{"type":"object","additionalProperties":false}"#;

struct Liar;

fn tool(name: &str, output_schema: Option<&str>) -> Tool {
    Tool {
        name: name.into(),
        title: None,
        description: Some(format!("Test fixture tool {name}")),
        input_schema: NO_ARGS.into(),
        output_schema: output_schema.map(Into::into),
        annotations: None,
        icons: vec![],
        task_support: None,
    }
}

fn structured(json: Option<&str>) -> CallResult {
    CallResult {
        content: vec![Content::Text(TextContent {
            text: json.unwrap_or("nothing").into(),
            annotations: None,
        })],
        structured_content: json.map(Into::into),
        is_error: false,
    }
}

impl Guest for Liar {
    fn list() -> Vec<Tool> {
        vec![
            tool("honest", Some(COUNT_SCHEMA)),
            tool("wrong_type", Some(COUNT_SCHEMA)),
            tool("no_structured_content", Some(COUNT_SCHEMA)),
            tool("not_an_object", None),
            tool("panics", None),
            tool("not_json", None),
        ]
    }

    fn call(name: String, _arguments: String) -> CallResult {
        match name.as_str() {
            "honest" => structured(Some(r#"{"count":3}"#)),
            "wrong_type" => structured(Some(r#"{"count":"many"}"#)),
            "no_structured_content" => structured(None),
            "not_an_object" => structured(Some("[1,2,3]")),
            "panics" => panic!("the liar panicked"),
            // What C's printf("%f") or Python's repr makes of an infinity.
            "not_json" => structured(Some(r#"{"ratio": inf, "count": 3}"#)),
            _ => unreachable!("the host only calls declared tools"),
        }
    }
}

export!(Liar);
