mod client;
mod resources;
mod state;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::*;

/// Two numbers.
#[derive(Deserialize, JsonSchema)]
struct Pair {
    /// The left operand
    a: f64,
    /// The right operand
    b: f64,
}

fn add(p: Pair) -> f64 {
    p.a + p.b
}

fn divide(p: Pair) -> Result<f64, ToolError> {
    if p.b == 0.0 {
        return Err(ToolError::new("cannot divide by zero"));
    }
    Ok(p.a / p.b)
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    /// The total
    total: f64,
}

fn text_of(result: &CallResult) -> Vec<&str> {
    result
        .content
        .iter()
        .map(|c| match c {
            Content::Text { text, .. } => text.as_str(),
            _ => "<not text>",
        })
        .collect()
}

#[test]
fn input_schema_from_argument_type() {
    let schema = Tool::new("add", add).input_schema();
    assert_eq!(
        schema,
        json!({
            "description": "Two numbers.",
            "type": "object",
            "properties": {
                "a": {"description": "The left operand", "type": "number", "format": "double"},
                "b": {"description": "The right operand", "type": "number", "format": "double"},
            },
            "required": ["a", "b"],
            "additionalProperties": false,
        })
    );
}

/// A closed schema: an argument the struct does not name is refused by the
/// host (with its name) rather than dropped by serde without a word.
#[test]
fn input_schemas_are_closed_unless_the_type_says_otherwise() {
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Open {
        a: f64,
        #[serde(flatten)]
        rest: std::collections::BTreeMap<String, f64>,
    }
    let open = Tool::new("open", |_: Open| "").input_schema();
    assert_eq!(
        open["additionalProperties"],
        json!({"type": "number", "format": "double"})
    );
    let output = Tool::new("out", add)
        .output_schema::<Sum>()
        .get_output_schema()
        .unwrap();
    assert!(output.get("additionalProperties").is_none(), "{output}");
}

#[test]
#[should_panic(expected = "tool name \"say hello\" is not 1-64 characters")]
fn a_test_calling_a_tool_with_an_invalid_name_fails_with_why() {
    Tool::new("say hello", add).call(r#"{"a": 1, "b": 2}"#);
}

/// `|x: f64|` compiles (a number is Deserialize and JsonSchema), but MCP
/// arguments are an object: the plugin's own test says so, and the fix.
#[test]
#[should_panic(expected = "the arguments of tool \"half\" are a `f64`, whose JSON Schema is")]
fn a_test_calling_a_tool_whose_arguments_are_not_an_object_fails_with_the_fix() {
    Tool::new("half", |x: f64| x / 2.0).call("2");
}

#[test]
fn no_args_and_structs_are_objects() {
    Tool::new("ping", |_: NoArgs| "pong").call("{}");
    Tool::new("add", add).call(r#"{"a": 1, "b": 2}"#);
}

/// serde_json writes NaN as null, which the output schema would refuse
/// without saying why: the result is an error naming the field instead.
#[test]
fn a_non_finite_float_in_structured_output_is_an_error_naming_the_field() {
    #[derive(Serialize, JsonSchema)]
    struct Ratio {
        parts: Vec<Part>,
    }
    #[derive(Serialize, JsonSchema)]
    struct Part {
        share: f64,
    }
    let result = Json(Ratio {
        parts: vec![
            Part { share: 0.5 },
            Part {
                share: f64::INFINITY,
            },
        ],
    })
    .into_result();
    assert!(result.is_error, "{result:?}");
    assert_eq!(
        result.content,
        vec![Content::text(
            "internal error: the result's `parts[1].share` is inf, which JSON cannot carry \
             (it would be sent as null); return a finite number there, or make the field an \
             Option and leave it out"
        )]
    );
    assert!(result.structured_content.is_none());
}

#[test]
fn descriptions_are_reflowed() {
    /// Options.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Options {
        /// A long description that
        /// spans two lines.
        ///
        /// And a second paragraph:
        /// - with a list
        /// - of two items
        #[serde(default)]
        #[schemars(example = "x\ny")]
        long: String,
    }
    let schema = Tool::new("t", |_: Options| "").input_schema();
    assert_eq!(
        schema["properties"]["long"]["description"],
        "A long description that spans two lines.\n\nAnd a second paragraph:\n- with a list\n- of two items"
    );
    assert_eq!(schema["properties"]["long"]["examples"], json!(["x\ny"]));
}

#[test]
fn no_args_schema() {
    let tool = Tool::new("ping", |_: NoArgs| "pong");
    assert_eq!(
        tool.input_schema(),
        json!({"type": "object", "additionalProperties": false})
    );
    assert_eq!(tool.get_output_schema(), None);
    assert_eq!(text_of(&tool.call("")), ["pong"]);
    assert_eq!(text_of(&tool.call("{}")), ["pong"]);
    assert!(tool.call(r#"{"x": 1}"#).is_error);
}

#[test]
fn any_object_schema() {
    let tool = Tool::new("echo", |v: serde_json::Value| v.to_string());
    assert_eq!(tool.input_schema(), json!({"type": "object"}));
}

#[test]
fn numbers_and_errors() {
    let tool = Tool::new("divide", divide);
    let ok = tool.call(r#"{"a": 1, "b": 4}"#);
    assert!(!ok.is_error);
    assert_eq!(text_of(&ok), ["0.25"]);
    let err = tool.call(r#"{"a": 1, "b": 0}"#);
    assert!(err.is_error);
    assert_eq!(text_of(&err), ["cannot divide by zero"]);
    let bad = tool.call(r#"{"a": 1}"#);
    assert!(bad.is_error);
    assert_eq!(
        text_of(&bad),
        ["invalid arguments for tool divide: missing field `b` at line 1 column 8"]
    );
}

#[test]
fn json_result_is_structured() {
    let tool = Tool::new("sum", |p: Pair| Json(Sum { total: p.a + p.b }));
    assert_eq!(
        tool.get_output_schema(),
        Some(json!({
            "type": "object",
            "properties": {"total": {"description": "The total", "type": "number", "format": "double"}},
            "required": ["total"],
        }))
    );
    let result = tool.call(r#"{"a": 1, "b": 2}"#);
    assert_eq!(result.structured_content, Some(json!({"total": 3.0})));
    assert_eq!(text_of(&result), [r#"{"total":3.0}"#]);

    // Result<Json<T>, E> keeps the output schema.
    let fallible = Tool::new("sum", |p: Pair| -> Result<Json<Sum>, String> {
        Ok(Json(Sum { total: p.a + p.b }))
    });
    assert_eq!(fallible.get_output_schema(), tool.get_output_schema());

    // Only objects are structured content.
    assert!(Json(vec![1, 2]).into_result().is_error);
}

#[test]
fn tool_errors_from_common_types() {
    fn parse(s: &str) -> Result<i32, ToolError> {
        Ok(s.parse::<i32>()?)
    }
    assert_eq!(
        parse("x").unwrap_err().message(),
        "invalid digit found in string"
    );
    let from_io: ToolError = std::io::Error::other("disk on fire").into();
    assert_eq!(from_io.to_string(), "disk on fire");
    let from_str: ToolError = "nope".into();
    assert_eq!(from_str.message(), "nope");
}

#[test]
fn list_and_call_glue() {
    let tools = || {
        vec![
            Tool::new("add", add)
                .title("Add")
                .description("Add two numbers")
                .read_only()
                .closed_world(),
            Tool::new("plain", |_: NoArgs| 1u8),
            Tool::new("sum", |p: Pair| Json(Sum { total: p.a + p.b })),
        ]
    };
    let listed = __private::list_tools(tools());
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[0].name, "add");
    assert_eq!(listed[0].title.as_deref(), Some("Add"));
    let annotations = listed[0].annotations.as_ref().unwrap();
    assert_eq!(annotations.title.as_deref(), Some("Add"));
    assert_eq!(annotations.read_only_hint, Some(true));
    assert_eq!(annotations.open_world_hint, Some(false));
    assert_eq!(annotations.destructive_hint, None);
    assert!(listed[1].annotations.is_none());
    assert!(listed[0].output_schema.is_none());
    let output: serde_json::Value =
        serde_json::from_str(listed[2].output_schema.as_deref().unwrap()).unwrap();
    assert_eq!(output["type"], "object");

    let result = __private::call(tools(), "add", r#"{"a": 2, "b": 3}"#);
    assert!(!result.is_error);
    assert!(result.structured_content.is_none());
    let result = __private::call(tools(), "sum", r#"{"a": 2, "b": 3}"#);
    assert_eq!(
        result.structured_content.as_deref(),
        Some(r#"{"total":5.0}"#)
    );
    let result = __private::call(tools(), "nope", "{}");
    assert!(result.is_error);
    match &result.content[..] {
        [bindings::corral::plugin::types::Content::Text(t)] => {
            assert_eq!(t.text, "unknown tool: nope")
        }
        other => panic!("unexpected content {other:?}"),
    }
}

#[test]
fn content_builders() {
    let result = CallResult::new()
        .text("summary")
        .image(vec![1, 2, 3], "image/png")
        .resource_text("x://a.csv", "text/csv", "a,b\n")
        .resource_link(ResourceLink::new("https://example.com", "example"))
        .with(Audio::wav(vec![0]))
        .mark_error();
    assert!(result.is_error);
    assert_eq!(result.content.len(), 5);
    assert_eq!(
        result.content[2],
        Content::Resource(EmbeddedResource {
            uri: "x://a.csv".into(),
            mime_type: Some("text/csv".into()),
            contents: ResourceContents::Text("a,b\n".into()),
            annotations: None,
        })
    );
    let annotated = Content::text("hi").with_annotations(Annotations::new().audience([Role::User]));
    assert!(
        matches!(annotated, Content::Text { annotations: Some(a), .. } if a.audience == [Role::User])
    );
}
