//! {{name}}: a Corral plugin written in Rust with corral-sdk. It offers one
//! MCP tool, `{{name}}`; add more to the `plugin!` list at the bottom.

use corral_sdk::{Tool, ToolError, plugin};
use schemars::JsonSchema;
use serde::Deserialize;

// The tool's arguments. Their JSON Schema is the tool's input schema: the
// host checks every call against it before the plugin runs, and refuses a
// field `Args` does not name. The `///` doc comments below become the
// schema's descriptions, which the model reads: write them for the model,
// and notes for people in `//` comments like this one, which stay out.
#[derive(Deserialize, JsonSchema)]
struct Args {
    /// Who to greet.
    name: String,
}

/// An `Err` is a tool execution error: the model sees its message and can
/// correct the call.
fn greet(args: Args) -> Result<String, ToolError> {
    let name = args.name.trim();
    if name.is_empty() {
        return Err(ToolError::new("`name` must not be blank"));
    }
    corral_sdk::log::info(format!("greeting {name}"));
    Ok(format!("Hello, {name}!"))
}

fn tool() -> Tool {
    Tool::new("{{name}}", greet)
        .description("Say hello to someone by name.")
        .read_only()
        .idempotent()
}

plugin! {
    tool(),
}

// The SDK also builds natively, so `cargo test` (or ./test) calls the tool
// directly, with its arguments as JSON text.
#[cfg(test)]
mod tests {
    use super::*;
    use corral_sdk::Content;

    #[test]
    fn greets_by_name() {
        let result = tool().call(r#"{"name": "Ada"}"#);
        assert!(!result.is_error);
        assert_eq!(result.content, vec![Content::text("Hello, Ada!")]);
    }

    #[test]
    fn a_blank_name_is_a_tool_error() {
        let result = tool().call(r#"{"name": "  "}"#);
        assert!(result.is_error);
        assert_eq!(
            result.content,
            vec![Content::text("`name` must not be blank")]
        );
    }
}
