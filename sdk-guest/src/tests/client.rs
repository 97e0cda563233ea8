//! The client API against the fake client.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::client::fake::{self, Answer, FakeClient};
use crate::client::*;
use crate::{CallResult, NoArgs, Tool};

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Size {
    /// Small (8 GB)
    Small,
    /// Large (64 GB)
    Large,
}

fn default_status() -> Status {
    Status::Active
}

/// A profile.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[allow(dead_code)]
struct Profile {
    /// Your name
    #[serde(default = "default_name_string")]
    #[schemars(length(min = 1, max = 40), default = "default_name")]
    name: String,
    /// How old
    age: Option<u32>,
    score: f64,
    #[serde(default = "default_status")]
    #[schemars(default = "default_status_value")]
    status: Status,
    size: Option<Size>,
    #[schemars(email)]
    email: Option<String>,
    verified: bool,
    tags: Vec<Status>,
}

fn default_name_string() -> String {
    default_name().into()
}

fn default_name() -> &'static str {
    "John Doe"
}

fn default_status_value() -> &'static str {
    "active"
}

/// The result's text items, joined.
fn text_of(result: &CallResult) -> String {
    super::text_of(result).concat()
}

#[test]
fn forms_are_flattened_into_the_mcp_schema() {
    let form = Form::<Profile>::new("Who are you?");
    assert_eq!(
        form.schema().unwrap(),
        &json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Your name", "default": "John Doe",
                         "minLength": 1, "maxLength": 40},
                "age": {"type": "integer", "description": "How old", "minimum": 0},
                "score": {"type": "number"},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"],
                           "default": "active"},
                "size": {"type": "string", "oneOf": [
                    {"const": "small", "title": "Small (8 GB)"},
                    {"const": "large", "title": "Large (64 GB)"},
                ]},
                "email": {"type": "string", "format": "email"},
                "verified": {"type": "boolean"},
                "tags": {"type": "array",
                         "items": {"type": "string", "enum": ["active", "inactive", "pending"]}},
            },
            // Fields with a default need no answer.
            "required": ["score", "verified", "tags"],
        })
    );
}

#[test]
fn types_no_form_can_hold_are_refused_naming_the_field() {
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: u8,
    }
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Inner,
    }
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Lines {
        lines: Vec<String>,
    }
    let nested = Form::<Nested>::new("?");
    assert_eq!(
        nested.schema().unwrap_err(),
        "field `inner`: a form holds strings, numbers, integers, booleans and choices, not object values"
    );
    assert!(
        Form::<Lines>::new("?")
            .schema()
            .unwrap_err()
            .starts_with("field `lines`: a list in a form must be a list of choices")
    );
    assert!(Form::<String>::new("?").schema().is_err());

    // Asking with it fails before anything reaches the client.
    fake::set(FakeClient::new());
    assert!(matches!(
        ask(Form::<Nested>::new("?")),
        Err(AskError::Invalid(m)) if m.contains("field `inner`")
    ));
    assert!(fake::asked().is_empty());
}

#[test]
fn elicit_reads_the_answer_into_the_type() {
    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Name {
        name: String,
    }
    fake::set(
        FakeClient::new()
            .answer("elicit-1", Answer::accept(json!({"name": "Alice"})))
            .answer("elicit-2", Answer::decline())
            .answer("elicit-3", Answer::cancel()),
    );
    assert_eq!(
        elicit::<Name>("What is your name?").unwrap(),
        Elicitation::Accepted(Name {
            name: "Alice".into()
        })
    );
    assert_eq!(elicit::<Name>("Again?").unwrap(), Elicitation::Declined);
    assert_eq!(elicit::<Name>("Again?").unwrap(), Elicitation::Cancelled);
    let asked = fake::asked();
    assert_eq!(asked.len(), 3);
    assert_eq!(asked[0].key, "elicit-1");
    assert_eq!(
        asked[0].params,
        json!({"mode": "form", "message": "What is your name?", "requestedSchema": {
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}})
    );
    // No answer left: the ask fails, naming the key.
    assert_eq!(
        elicit::<Name>("Once more?"),
        Err(AskError::Failed(
            "the fake client has no answer left for `elicit-4`".into()
        ))
    );
}

#[test]
fn a_wrong_answer_is_a_failure_not_a_panic() {
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Count {
        n: u8,
    }
    fake::set(
        FakeClient::new()
            .answer("elicit-1", Answer::accept(json!({"n": "many"})))
            .answer("elicit-2", Answer::text("not an elicitation answer")),
    );
    assert!(matches!(elicit::<Count>("?"), Err(AskError::Failed(m)) if m.contains("does not fit")));
    assert!(
        matches!(elicit::<Count>("?"), Err(AskError::Failed(m)) if m.contains("expected an elicitation"))
    );
}

#[test]
fn confirm_is_yes_only_when_accepted_and_ticked() {
    fake::set(
        FakeClient::new()
            .answer("elicit-1", Answer::accept(json!({"confirm": true})))
            .answer("elicit-2", Answer::accept(json!({"confirm": false})))
            .answer("elicit-3", Answer::accept(json!({})))
            .answer("elicit-4", Answer::decline())
            .answer("elicit-5", Answer::cancel()),
    );
    let answers: Vec<bool> = (0..5).map(|_| confirm("Go?").unwrap()).collect();
    assert_eq!(answers, [true, false, false, false, false]);
    assert_eq!(
        fake::asked()[0].params["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
}

#[test]
fn sampling_builder_and_answer() {
    fake::set(FakeClient::new().answer("capital", Answer::text("Paris")));
    let reply = sample(
        Sampling::prompt("What is the capital of France?")
            .system("Answer in one word.")
            .max_tokens(10)
            .temperature(0.0)
            .stop_sequence("\n")
            .model_hint("small")
            .speed_priority(0.9)
            .include_context(IncludeContext::ThisServer)
            .key("capital"),
    )
    .unwrap();
    assert_eq!(reply.text(), Some("Paris"));
    assert_eq!(reply.model, "fake-model");
    assert_eq!(reply.role, crate::Role::Assistant);
    assert_eq!(
        fake::asked()[0].params,
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
            "maxTokens": 10,
            "systemPrompt": "Answer in one word.",
            "temperature": 0.0,
            "stopSequences": ["\n"],
            "modelPreferences": {"hints": [{"name": "small"}], "speedPriority": 0.9},
            "includeContext": "thisServer",
        })
    );
    // A conversation needs a message.
    assert!(matches!(sample(Sampling::new()), Err(AskError::Invalid(_))));
}

#[test]
fn roots_and_urls() {
    fake::set(
        FakeClient::new()
            .answer(
                "roots-1",
                Answer::roots([Root::new("file:///work").name("work")]),
            )
            .answer("url-1", Answer::accept(json!({}))),
    );
    assert_eq!(roots().unwrap(), [Root::new("file:///work").name("work")]);
    assert_eq!(
        open_url("Sign in", "https://example.com/login").unwrap(),
        Elicitation::Accepted(())
    );
    let asked = fake::asked();
    assert_eq!(asked[0].method, "roots/list");
    assert_eq!(asked[1].params["mode"], "url");
    // The id is derived, not random: a re-run asks exactly the same.
    let id = asked[1].params["elicitationId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.starts_with("url-1-"), "{id}");
    fake::set(FakeClient::new().answer("url-1", Answer::decline()));
    assert_eq!(
        open_url("Sign in", "https://example.com/login").unwrap(),
        Elicitation::Declined
    );
    assert_eq!(fake::asked()[0].params["elicitationId"], id.as_str());
}

#[test]
fn several_questions_in_one_round_with_typed_answers() {
    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Name {
        name: String,
    }
    fake::set(
        FakeClient::new()
            .answer("user_name", Answer::accept(json!({"name": "Alice"})))
            .answer("greeting", Answer::text("Hello there!"))
            .answer(
                "client_roots",
                Answer::roots([Root::new("file:///test/root")]),
            )
            .answer("elicit-1", Answer::accept(json!({"confirm": true}))),
    );
    let (name, greeting, roots, ok) = ask((
        Form::<Name>::new("What is your name?").key("user_name"),
        Sampling::prompt("Generate a greeting")
            .max_tokens(50)
            .key("greeting"),
        ListRoots::new().key("client_roots"),
        Confirm::new("Proceed?"),
    ))
    .unwrap();
    assert_eq!(name.accepted().unwrap().name, "Alice");
    assert_eq!(greeting.text(), Some("Hello there!"));
    assert_eq!(roots[0].uri, "file:///test/root");
    assert!(ok);
    let keys: Vec<String> = fake::asked().into_iter().map(|a| a.key).collect();
    assert_eq!(keys, ["user_name", "greeting", "client_roots", "elicit-1"]);

    // A Vec of one kind, and an empty one (no round trip at all).
    fake::set(
        FakeClient::new()
            .answer("elicit-1", Answer::accept(json!({"confirm": true})))
            .answer("elicit-2", Answer::decline()),
    );
    let answers = ask(vec![Confirm::new("A?"), Confirm::new("B?")]).unwrap();
    assert_eq!(answers, [true, false]);
    assert_eq!(ask(Vec::<Confirm>::new()).unwrap(), Vec::<bool>::new());
    assert_eq!(fake::asked().len(), 2);
}

#[test]
fn automatic_keys_skip_the_authors_and_bad_keys_are_refused() {
    fake::set(
        FakeClient::new()
            .answer("elicit-1", Answer::decline())
            .answer("elicit-2", Answer::decline()),
    );
    ask((Confirm::new("a"), Confirm::new("b").key("elicit-1"))).unwrap();
    let keys: Vec<String> = fake::asked().into_iter().map(|a| a.key).collect();
    assert_eq!(keys, ["elicit-2", "elicit-1"]);

    assert!(matches!(
        ask((Confirm::new("a").key("same"), Confirm::new("b").key("same"))),
        Err(AskError::Invalid(m)) if m.contains("share the key `same`")
    ));
    assert!(matches!(
        ask(Confirm::new("a").key("no spaces")),
        Err(AskError::Invalid(m)) if m.contains("`no spaces`")
    ));
}

#[test]
fn undeclared_capabilities_fail_and_convert_into_a_tool_error() {
    fake::set(FakeClient::new().capabilities(Capabilities {
        sampling: true,
        ..Capabilities::NONE
    }));
    assert_eq!(
        capabilities(),
        Capabilities {
            sampling: true,
            ..Capabilities::NONE
        }
    );
    assert_eq!(
        confirm("Go?"),
        Err(AskError::Undeclared("elicitation".into()))
    );
    assert_eq!(roots(), Err(AskError::Undeclared("roots".into())));
    assert!(fake::asked().is_empty());

    // `?` in a tool: the model reads why.
    let tool = Tool::new("t", |_: NoArgs| -> Result<String, crate::ToolError> {
        let ok = confirm("Go?")?;
        Ok(ok.to_string())
    });
    let result = tool.call("{}");
    assert!(result.is_error);
    assert_eq!(
        text_of(&result),
        "the client cannot be asked: it did not declare the `elicitation` capability"
    );

    // No fake at all: a client that declares nothing.
    fake::clear();
    assert_eq!(capabilities(), Capabilities::NONE);
    assert!(matches!(roots(), Err(AskError::Undeclared(_))));
}

#[test]
fn failures_reach_the_tool() {
    fake::set(FakeClient::new().fail(AskError::TimedOut));
    assert_eq!(confirm("Go?"), Err(AskError::TimedOut));
    let error: Box<dyn std::error::Error> = Box::new(AskError::TimedOut);
    assert_eq!(error.to_string(), "the client did not answer in time");
}

#[test]
fn every_run_of_a_call_uses_the_same_keys() {
    // What a stateless client's retry relies on: the tool runs again from
    // the start and must ask the same requests under the same keys.
    let tool = Tool::new("t", |_: NoArgs| -> Result<String, crate::ToolError> {
        let first = confirm("First?")?;
        let second = confirm("Second?")?;
        Ok(format!("{first} {second}"))
    });
    fake::set(
        FakeClient::new()
            .answer("elicit-1", Answer::accept(json!({"confirm": true})))
            .answer("elicit-2", Answer::decline())
            .answer("elicit-1", Answer::accept(json!({"confirm": true})))
            .answer("elicit-2", Answer::accept(json!({"confirm": true}))),
    );
    assert_eq!(text_of(&tool.call("{}")), "true false");
    assert_eq!(text_of(&tool.call("{}")), "true true");
    let keys: Vec<String> = fake::asked().into_iter().map(|a| a.key).collect();
    assert_eq!(keys, ["elicit-1", "elicit-2", "elicit-1", "elicit-2"]);
}
