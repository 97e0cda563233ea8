//! The tools that ask the client, for the suite's elicitation and sampling
//! scenarios (2025-11-25: the server sends requests while the call waits)
//! and its `input-required-*` and `server-stateless` scenarios (2026-07-28:
//! the call answers `input_required`, and is run again with the answers).
//!
//! The forms are written by hand with [`Form::with_schema`]: the suite
//! checks their exact shape (defaults, `enumNames`, titled choices), and
//! the keys are the ones it documents. Every tool asks before it answers
//! anything and asks the same on every run, as a re-run requires.

use corral_sdk::client::{
    self, Elicitation, Form, ListRoots, Root, Sampled, Sampling, capabilities,
};
use corral_sdk::serde_json::{Value, json};
use corral_sdk::{NoArgs, ToolError};

/// The arguments of `test_sampling`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Prompt {
    /// What to ask the client's model.
    prompt: String,
}

/// The arguments of `test_elicitation`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Message {
    /// What to ask the user.
    message: String,
}

/// "action=accept, content={...}", "action=decline" or "action=cancel".
fn describe(answer: &Elicitation<Value>) -> String {
    match answer {
        Elicitation::Accepted(content) => format!("action=accept, content={content}"),
        Elicitation::Declined => "action=decline".into(),
        Elicitation::Cancelled => "action=cancel".into(),
    }
}

fn reply_text(reply: &Sampled) -> &str {
    reply.text().unwrap_or("(not text)")
}

/// A form of one required string field.
fn one_string(message: &str, field: &str) -> Form<Value> {
    Form::with_schema(
        message,
        json!({
            "type": "object",
            "properties": {field: {"type": "string"}},
            "required": [field],
        }),
    )
}

/// A string field of an accepted answer.
fn field<'a>(answer: &'a Elicitation<Value>, name: &str) -> Option<&'a str> {
    match answer {
        Elicitation::Accepted(content) => content.get(name).and_then(Value::as_str),
        _ => None,
    }
}

fn describe_roots(roots: &[Root]) -> String {
    if roots.is_empty() {
        return "no roots".into();
    }
    let names: Vec<String> = roots
        .iter()
        .map(|root| match &root.name {
            Some(name) => format!("{name} ({})", root.uri),
            None => root.uri.clone(),
        })
        .collect();
    format!("roots: {}", names.join(", "))
}

pub fn sampling(args: Prompt) -> Result<String, ToolError> {
    let reply = client::sample(Sampling::prompt(args.prompt).max_tokens(100))?;
    Ok(format!("LLM response: {}", reply_text(&reply)))
}

pub fn elicitation(args: Message) -> Result<String, ToolError> {
    let form = Form::<Value>::with_schema(
        args.message,
        json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }),
    );
    let answer = client::ask(form)?;
    Ok(format!("User response: <{}>", describe(&answer)))
}

pub fn elicitation_defaults(_: NoArgs) -> Result<String, ToolError> {
    let form = Form::<Value>::with_schema(
        "Please review and update the form fields with defaults",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": true},
            },
        }),
    );
    let answer = client::ask(form)?;
    Ok(format!("Elicitation completed: {}", describe(&answer)))
}

pub fn elicitation_enums(_: NoArgs) -> Result<String, ToolError> {
    let titled = |values: [(&str, &str); 3]| -> Vec<Value> {
        values
            .iter()
            .map(|(value, title)| json!({"const": value, "title": title}))
            .collect()
    };
    let form = Form::<Value>::with_schema(
        "Please select options from the enum fields",
        json!({
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Choose an option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Choose a titled option",
                    "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")]),
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Choose a legacy option",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Choose multiple options",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Choose multiple titled options",
                    "items": {"anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])},
                },
            },
        }),
    );
    let answer = client::ask(form)?;
    Ok(format!("Elicitation completed: {}", describe(&answer)))
}

pub fn input_required_elicitation(_: NoArgs) -> Result<String, ToolError> {
    let answer = client::ask(one_string("What is your name?", "name").key("user_name"))?;
    Ok(match field(&answer, "name") {
        Some(name) => format!("Hello, {name}!"),
        None => format!("No name given ({}).", describe(&answer)),
    })
}

pub fn input_required_sampling(_: NoArgs) -> Result<String, ToolError> {
    let reply = client::sample(
        Sampling::prompt("What is the capital of France?")
            .max_tokens(100)
            .key("capital_question"),
    )?;
    Ok(format!(
        "The model ({}) says: {}",
        reply.model,
        reply_text(&reply)
    ))
}

pub fn input_required_list_roots(_: NoArgs) -> Result<String, ToolError> {
    let roots = client::ask(ListRoots::new().key("client_roots"))?;
    Ok(format!("The client has {}.", describe_roots(&roots)))
}

/// The confirmation that the request-state and tampered-state scenarios
/// answer with `{"ok": true}`.
fn confirm_ok() -> Result<String, ToolError> {
    let form = Form::<Value>::with_schema(
        "Please confirm",
        json!({
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
        }),
    )
    .key("confirm");
    let answer = client::ask(form)?;
    let confirmed = matches!(&answer, Elicitation::Accepted(content) if content["ok"] == true);
    Ok(if confirmed {
        "state-ok: confirmed".into()
    } else {
        format!("state-ok: not confirmed ({})", describe(&answer))
    })
}

pub fn input_required_request_state(_: NoArgs) -> Result<String, ToolError> {
    confirm_ok()
}

pub fn input_required_tampered_state(_: NoArgs) -> Result<String, ToolError> {
    confirm_ok()
}

pub fn input_required_multiple_inputs(_: NoArgs) -> Result<String, ToolError> {
    let (name, greeting, roots) = client::ask((
        one_string("What is your name?", "name").key("user_name"),
        Sampling::prompt("Generate a greeting")
            .max_tokens(50)
            .key("greeting"),
        ListRoots::new().key("client_roots"),
    ))?;
    Ok(format!(
        "name: {}; greeting: {}; {}",
        field(&name, "name").unwrap_or("(none)"),
        reply_text(&greeting),
        describe_roots(&roots)
    ))
}

pub fn input_required_multi_round(_: NoArgs) -> Result<String, ToolError> {
    let name = client::ask(one_string("Step 1: What is your name?", "name").key("step1"))?;
    let color =
        client::ask(one_string("Step 2: What is your favorite color?", "color").key("step2"))?;
    Ok(format!(
        "{} likes {}.",
        field(&name, "name").unwrap_or("(no name)"),
        field(&color, "color").unwrap_or("(no color)")
    ))
}

/// Asks what the client declared, and only that, one request at a time: the
/// capability-check scenario declares sampling alone and fails the server
/// if it asks for elicitation.
pub fn input_required_capabilities(_: NoArgs) -> Result<String, ToolError> {
    let declared = capabilities();
    let mut asked = Vec::new();
    if declared.sampling {
        let reply = client::sample(
            Sampling::prompt("Say hello.")
                .max_tokens(20)
                .key("greeting"),
        )?;
        asked.push(format!("sampling: {}", reply_text(&reply)));
    }
    if declared.elicitation_form {
        let answer = client::ask(one_string("What is your name?", "name").key("user_name"))?;
        asked.push(format!("elicitation: {}", describe(&answer)));
    }
    if declared.roots {
        let roots = client::ask(ListRoots::new().key("client_roots"))?;
        asked.push(describe_roots(&roots));
    }
    Ok(if asked.is_empty() {
        "The client declared nothing to ask.".into()
    } else {
        asked.join("; ")
    })
}

/// Asks for sampling without looking at the capabilities: a client that did
/// not declare sampling gets error -32021 from the host.
pub fn missing_capability(_: NoArgs) -> Result<String, ToolError> {
    let reply = client::sample(Sampling::prompt("Say hello.").max_tokens(20))?;
    Ok(format!("sampled: {}", reply_text(&reply)))
}

pub fn streaming_elicitation(_: NoArgs) -> Result<String, ToolError> {
    let answer = client::ask(one_string("What is your name?", "name").key("user_name"))?;
    Ok(match field(&answer, "name") {
        Some(name) => format!("Hello, {name}!"),
        None => format!("No name given ({}).", describe(&answer)),
    })
}

#[cfg(test)]
mod tests {
    use corral_sdk::client::fake::{self, Answer, FakeClient};
    use corral_sdk::client::{Capabilities, Root};
    use corral_sdk::serde_json::json;
    use corral_sdk::{Content, Tool};

    fn run(tool: Tool) -> (String, Vec<(String, &'static str)>) {
        let result = tool.call("{}");
        let text = match &result.content[..] {
            [Content::Text { text, .. }] => text.clone(),
            other => panic!("unexpected content {other:?}"),
        };
        let asked = fake::asked()
            .into_iter()
            .map(|a| (a.key, a.method))
            .collect();
        (text, asked)
    }

    #[test]
    fn multiple_inputs_uses_the_documented_keys() {
        fake::set(
            FakeClient::new()
                .answer("user_name", Answer::accept(json!({"name": "Alice"})))
                .answer("greeting", Answer::text("Hello there!"))
                .answer(
                    "client_roots",
                    Answer::roots([Root::new("file:///test/root").name("Test Root")]),
                ),
        );
        let tool = Tool::new("t", super::input_required_multiple_inputs);
        let (text, asked) = run(tool);
        assert_eq!(
            text,
            "name: Alice; greeting: Hello there!; roots: Test Root (file:///test/root)"
        );
        assert_eq!(
            asked,
            [
                ("user_name".into(), "elicitation/create"),
                ("greeting".into(), "sampling/createMessage"),
                ("client_roots".into(), "roots/list"),
            ]
        );
    }

    #[test]
    fn capabilities_tool_asks_only_what_is_declared() {
        fake::set(
            FakeClient::new()
                .capabilities(Capabilities {
                    sampling: true,
                    ..Capabilities::NONE
                })
                .answer("greeting", Answer::text("hi")),
        );
        let (text, asked) = run(Tool::new("t", super::input_required_capabilities));
        assert_eq!(text, "sampling: hi");
        assert_eq!(asked, [("greeting".into(), "sampling/createMessage")]);
    }

    #[test]
    fn request_state_and_elicitation_texts() {
        fake::set(
            FakeClient::new()
                .answer("confirm", Answer::accept(json!({"ok": true})))
                .answer("user_name", Answer::accept(json!({"name": "Alice"}))),
        );
        assert!(
            run(Tool::new("t", super::input_required_request_state))
                .0
                .contains("state-ok")
        );
        assert_eq!(
            run(Tool::new("t", super::input_required_elicitation)).0,
            "Hello, Alice!"
        );
    }
}
