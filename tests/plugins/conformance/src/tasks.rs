//! The tools the suite's tasks scenarios (`tasks-*`, the
//! `io.modelcontextprotocol/tasks` extension) call. The fixture's manifest
//! makes a call a task once it has run `task-after` (half a second, in
//! `tests/support`'s manifest), so each tool that must become a task works
//! for a second before anything else; `greet` never becomes one.

use std::thread::sleep;
use std::time::Duration;

use corral_sdk::client::{self, Elicitation, Form};
use corral_sdk::serde_json::{Value, json};
use corral_sdk::{NoArgs, TaskSupport, Tool, ToolError};

/// Longer than the fixture's `task-after`: a call that works this long
/// before it answers or asks is a task by then.
const PAST_TASK_AFTER: Duration = Duration::from_secs(1);

/// The arguments of `greet`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Greeting {
    /// Who to greet.
    name: String,
}

/// The arguments of `slow_compute`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Compute {
    /// How long to work, in seconds (0: answer at once).
    seconds: f64,
    /// Names the run in its result.
    #[serde(default)]
    label: Option<String>,
}

/// The arguments of `confirm_delete`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Deletion {
    /// The file whose deletion the user confirms.
    filename: String,
}

fn greet(greeting: Greeting) -> String {
    format!("Hello, {}!", greeting.name)
}

fn slow_compute(compute: Compute) -> String {
    let seconds = compute.seconds.clamp(0.0, 600.0);
    sleep(Duration::from_secs_f64(seconds));
    format!(
        "computed {} after {seconds} s",
        compute.label.as_deref().unwrap_or("a result")
    )
}

fn failing_job(_: NoArgs) -> Result<String, ToolError> {
    sleep(PAST_TASK_AFTER);
    Err(ToolError::new("the job failed: its input was rejected"))
}

fn protocol_error_job(_: NoArgs) -> String {
    sleep(PAST_TASK_AFTER);
    // A crash is the host's failure to run the tool, not the tool's error:
    // the task ends `failed` with a JSON-RPC error.
    panic!("the job crashed")
}

/// A yes/no form whose field is `confirm`.
fn confirmation(message: String) -> Form<Value> {
    Form::with_schema(
        message,
        json!({
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
            "required": ["confirm"],
        }),
    )
}

fn confirmed(answer: &Elicitation<Value>) -> bool {
    matches!(answer, Elicitation::Accepted(content)
        if content.get("confirm").and_then(Value::as_bool) == Some(true))
}

fn confirm_delete(deletion: Deletion) -> Result<String, ToolError> {
    sleep(PAST_TASK_AFTER);
    let message = format!("Delete {}?", deletion.filename);
    let answer = client::ask(confirmation(message).key("confirm_delete"))?;
    Ok(if confirmed(&answer) {
        format!("Deleted {}.", deletion.filename)
    } else {
        format!("Kept {}.", deletion.filename)
    })
}

fn multi_input(_: NoArgs) -> Result<String, ToolError> {
    sleep(PAST_TASK_AFTER);
    let name = Form::<Value>::with_schema(
        "What is your name?",
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }),
    );
    let (name, confirm) = client::ask((
        name.key("name"),
        confirmation("Go ahead?".into()).key("confirm"),
    ))?;
    let name = match &name {
        Elicitation::Accepted(content) => content.get("name").and_then(Value::as_str),
        _ => None,
    };
    Ok(format!(
        "{} said {}",
        name.unwrap_or("nobody"),
        if confirmed(&confirm) { "yes" } else { "no" }
    ))
}

/// Asks the user's name by a multi round-trip first (before any task
/// exists), then works long enough to become a task, whose result names
/// them.
fn tool_with_task(_: NoArgs) -> Result<String, ToolError> {
    let form = Form::<Value>::with_schema(
        "What is your name?",
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }),
    );
    let answer = client::ask(form.key("user_name"))?;
    sleep(PAST_TASK_AFTER);
    Ok(match &answer {
        Elicitation::Accepted(content) => format!(
            "Hello, {}!",
            content
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("stranger")
        ),
        _ => "Hello, stranger!".into(),
    })
}

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new("greet", greet)
            .description("Greets by name, at once: never a task.")
            .task_support(TaskSupport::Forbidden),
        Tool::new("slow_compute", slow_compute)
            .description("Works for `seconds` seconds, then answers: a task when that is long.")
            .task_support(TaskSupport::Optional),
        Tool::new("failing_job", failing_job)
            .description("Works a second, then fails with a tool execution error; only a task.")
            .task_support(TaskSupport::Required),
        Tool::new("protocol_error_job", protocol_error_job)
            .description("Works a second, then crashes.")
            .task_support(TaskSupport::Optional),
        Tool::new("confirm_delete", confirm_delete)
            .description("Works a second, then asks the user to confirm deleting `filename`.")
            .task_support(TaskSupport::Optional),
        Tool::new("multi_input", multi_input)
            .description("Works a second, then asks the user two things at once.")
            .task_support(TaskSupport::Optional),
        Tool::new("test_tool_with_task", tool_with_task)
            .description("Asks the user's name, then works a second and greets them; only a task.")
            .task_support(TaskSupport::Required),
    ]
}
