//! {{name}}: a Corral plugin written in Rust with corral-sdk. It offers an
//! MCP tool, `{{name}}`, a resource, `{{scheme}}://greetings`, a resource
//! template, `{{scheme}}://greetings/{language}`, and a prompt, `greet`, whose
//! arguments the client can complete; add more to the `plugin!` lists at the
//! bottom.

use corral_sdk::{
    EmbeddedResource, Prompt, PromptMessage, PromptResult, Resource, ResourceTemplate, Tool,
    ToolError, complete_prefix, plugin,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// Hello in a few languages: what the resources serve.
const GREETINGS: &[(&str, &str)] = &[
    ("english", "Hello"),
    ("french", "Bonjour"),
    ("german", "Hallo"),
    ("spanish", "Hola"),
];

fn hello_in(language: &str) -> Option<&'static str> {
    GREETINGS
        .iter()
        .find(|(name, _)| *name == language)
        .map(|(_, hello)| *hello)
}

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

/// A document at a fixed URI: every greeting, as markdown.
fn greetings() -> Resource {
    Resource::new("{{scheme}}://greetings", "greetings", || {
        GREETINGS
            .iter()
            .map(|(language, hello)| format!("- {language}: {hello}\n"))
            .collect::<String>()
    })
    .description("Hello in every language this plugin knows")
    .mime_type("text/markdown")
}

// A template's variables, from the URI read: `{{scheme}}://greetings/french`
// gives `language = "french"`.
#[derive(Deserialize)]
struct Language {
    language: String,
}

/// Documents at URIs that match a pattern. `None` is "resource not found".
fn greeting_in() -> ResourceTemplate {
    ResourceTemplate::new(
        "{{scheme}}://greetings/{language}",
        "greeting",
        |uri: Language| hello_in(&uri.language),
    )
    .description("Hello in one language")
    .mime_type("text/plain")
    .complete("language", |typed, _| complete_languages(typed))
}

fn complete_languages(typed: &str) -> Vec<String> {
    complete_prefix(GREETINGS.iter().map(|(language, _)| *language), typed)
}

// A prompt's arguments: strings, each `Option` one optional. Doc comments
// describe them to the user.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet
    name: String,
    /// The language to greet in, e.g. french (default: english)
    language: Option<String>,
}

/// A conversation for the client's model, with a resource embedded in it.
fn greet_prompt(args: GreetArgs) -> Result<PromptResult, corral_sdk::PromptError> {
    let language = args.language.as_deref().unwrap_or("english");
    let hello = hello_in(language).ok_or_else(|| {
        corral_sdk::PromptError::invalid_arguments(format!("no greeting in {language}"))
    })?;
    Ok(PromptResult::new([
        PromptMessage::user(format!(
            "Greet {} warmly in {language}, starting with the greeting below.",
            args.name
        )),
        PromptMessage::user(EmbeddedResource::text(
            format!("{{scheme}}://greetings/{language}"),
            hello,
        )),
    ]))
}

fn prompt() -> Prompt {
    Prompt::new("greet", greet_prompt)
        .description("Greet someone in a language of your choice")
        .complete("language", |typed, _| complete_languages(typed))
}

plugin! {
    tools: [tool()],
    resources: [greetings()],
    templates: [greeting_in()],
    prompts: [prompt()],
}

// The SDK also builds natively, so `cargo test` (or ./test) calls the tool,
// reads the resources, gets the prompt and completes its arguments directly,
// as the host would.
#[cfg(test)]
mod tests {
    use super::*;
    use corral_sdk::{Content, ReadError, ResourceContents};

    #[test]
    fn greets_by_name() {
        let result = tool().call(r#"{"name": "Ada"}"#);
        assert!(!result.is_error);
        assert_eq!(result.content, vec![Content::text("Hello, Ada!")]);
    }

    #[test]
    fn the_resource_lists_every_greeting() {
        let contents = greetings().read().unwrap();
        assert_eq!(contents[0].uri, "{{scheme}}://greetings");
        assert_eq!(contents[0].mime_type.as_deref(), Some("text/markdown"));
        assert!(matches!(&contents[0].body, ResourceContents::Text(text) if text.contains("french: Bonjour")));
    }

    #[test]
    fn the_template_reads_one_language() {
        let contents = greeting_in().read("{{scheme}}://greetings/french").unwrap();
        assert_eq!(contents[0].body, ResourceContents::Text("Bonjour".into()));
        assert_eq!(
            greeting_in().read("{{scheme}}://greetings/klingon"),
            Err(ReadError::NotFound)
        );
    }

    #[test]
    fn the_prompt_embeds_the_greeting() {
        let result = prompt()
            .get([("name", "Ada"), ("language", "german")])
            .unwrap();
        assert_eq!(result.messages.len(), 2);
        assert!(matches!(
            &result.messages[1].content,
            Content::Resource(embedded) if embedded.uri == "{{scheme}}://greetings/german"
        ));
        assert!(prompt().get([("name", "Ada"), ("language", "klingon")]).is_err());
    }

    #[test]
    fn languages_complete_by_prefix() {
        assert_eq!(prompt().complete_value("language", "fr").values, ["french"]);
        assert_eq!(
            greeting_in().complete_value("language", "").values.len(),
            GREETINGS.len()
        );
    }
}
