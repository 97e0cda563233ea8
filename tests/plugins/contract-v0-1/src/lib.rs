//! A plugin of contract 0.1.0, the version before `client`: proves that
//! plugins built against `wit/0.1.0` keep loading and running, whatever the
//! examples target. Written against the raw bindings of the frozen WIT.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit/0.1.0" });

use corral::plugin::host;
use corral::plugin::types::{Content, LogLevel, TextContent};
use exports::corral::plugin::tools::{CallResult, Guest, Tool};

struct Old;

impl Guest for Old {
    fn list() -> Vec<Tool> {
        vec![Tool {
            name: "echo".into(),
            title: None,
            description: Some("Returns its arguments as text".into()),
            input_schema: r#"{"type":"object"}"#.into(),
            output_schema: None,
            annotations: None,
            icons: vec![],
            task_support: None,
        }]
    }

    fn call(_name: String, arguments: String) -> CallResult {
        host::log(LogLevel::Info, "echoing");
        CallResult {
            content: vec![Content::Text(TextContent {
                text: arguments,
                annotations: None,
            })],
            structured_content: None,
            is_error: false,
        }
    }
}

export!(Old);
