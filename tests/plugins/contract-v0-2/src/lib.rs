//! A plugin of contract 0.2.0, the version before `host.tools-changed`:
//! proves that plugins built against `wit/0.2.0` keep loading and running,
//! whatever the examples target. Written against the raw bindings of the
//! frozen WIT.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit/0.2.0" });

use corral::plugin::types::{Content, LogLevel, TextContent};
use corral::plugin::{client, host};
use exports::corral::plugin::tools::{CallResult, Guest, Tool};

struct Older;

impl Guest for Older {
    fn list() -> Vec<Tool> {
        vec![Tool {
            name: "echo2".into(),
            title: None,
            description: Some(
                "Returns its arguments as text, and whether the client samples".into(),
            ),
            input_schema: r#"{"type":"object"}"#.into(),
            output_schema: None,
            annotations: None,
            icons: vec![],
            task_support: None,
        }]
    }

    fn call(_name: String, arguments: String) -> CallResult {
        host::log(LogLevel::Info, "echoing");
        let sampling = client::capabilities().sampling;
        CallResult {
            content: vec![Content::Text(TextContent {
                text: format!("{arguments} (sampling: {sampling})"),
                annotations: None,
            })],
            structured_content: None,
            is_error: false,
        }
    }
}

export!(Older);
