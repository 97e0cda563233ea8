//! A small handbook served as MCP resources: each section is a markdown
//! document at `handbook://SECTION`, the template `handbook://{section}`
//! reads any of them by name, the prompt `explain_section` embeds one in a
//! conversation, completion suggests section names, and the tool
//! `search_handbook` finds the sections that mention a word.

use corral_sdk::{
    CallResult, EmbeddedResource, Prompt, PromptMessage, PromptResult, Resource, ResourceLink,
    ResourceTemplate, Tool, complete_prefix, plugin, serde_json,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One section: its name (the last part of its URI), title and text.
struct Section {
    name: &'static str,
    title: &'static str,
    text: &'static str,
}

const SECTIONS: &[Section] = &[
    Section {
        name: "intro",
        title: "Introduction",
        text: include_str!("sections/intro.md"),
    },
    Section {
        name: "install",
        title: "Installing",
        text: include_str!("sections/install.md"),
    },
    Section {
        name: "plugins",
        title: "Writing plugins",
        text: include_str!("sections/plugins.md"),
    },
    Section {
        name: "security",
        title: "Security",
        text: include_str!("sections/security.md"),
    },
];

const MARKDOWN: &str = "text/markdown";

fn uri_of(section: &Section) -> String {
    format!("handbook://{}", section.name)
}

fn find(name: &str) -> Option<&'static Section> {
    SECTIONS.iter().find(|section| section.name == name)
}

/// The section names that start with what was typed.
fn complete_section(typed: &str) -> Vec<String> {
    complete_prefix(SECTIONS.iter().map(|section| section.name), typed)
}

fn resources() -> Vec<Resource> {
    SECTIONS
        .iter()
        .map(|section| {
            Resource::new(uri_of(section), section.name, move || section.text)
                .title(section.title)
                .mime_type(MARKDOWN)
                .size(section.text.len() as u64)
        })
        .collect()
}

/// The variables of `handbook://{section}`.
#[derive(Deserialize)]
struct SectionUri {
    section: String,
}

fn section_template() -> ResourceTemplate {
    ResourceTemplate::new("handbook://{section}", "section", |uri: SectionUri| {
        find(&uri.section).map(|section| section.text)
    })
    .title("Handbook section")
    .description("A section of the handbook by name, e.g. handbook://intro")
    .mime_type(MARKDOWN)
    .complete("section", |typed, _| complete_section(typed))
}

/// What to explain, and to whom.
#[derive(Deserialize, JsonSchema)]
struct Explain {
    /// The section to explain: intro, install, plugins or security
    section: String,
    /// Who the explanation is for, e.g. "beginner" (default: a new user)
    audience: Option<String>,
}

fn explain_section(explain: Explain) -> Result<PromptResult, corral_sdk::PromptError> {
    let section = find(&explain.section).ok_or_else(|| {
        corral_sdk::PromptError::invalid_arguments(format!(
            "no section {:?}; the sections are {}",
            explain.section,
            names().join(", ")
        ))
    })?;
    let audience = explain.audience.as_deref().unwrap_or("a new user");
    Ok(PromptResult::new([
        PromptMessage::user(format!(
            "Explain the handbook section \"{}\" below to {audience}, in a few short paragraphs.",
            section.title
        )),
        PromptMessage::user(
            EmbeddedResource::text(uri_of(section), section.text).mime_type(MARKDOWN),
        ),
    ])
    .description(format!("Explain \"{}\" to {audience}", section.title)))
}

fn explain_prompt() -> Prompt {
    Prompt::new("explain_section", explain_section)
        .title("Explain a handbook section")
        .description("Ask the model to explain one section of the handbook")
        .complete("section", |typed, _| complete_section(typed))
        .complete("audience", |typed, _| {
            complete_prefix(["beginner", "developer", "operator"], typed)
        })
}

fn names() -> Vec<&'static str> {
    SECTIONS.iter().map(|section| section.name).collect()
}

/// A word to look for.
#[derive(Deserialize, JsonSchema)]
struct Search {
    /// The word or phrase, matched ignoring case
    query: String,
}

/// The sections that mention the query.
#[derive(Serialize, JsonSchema)]
struct Found {
    /// The URIs of the matching sections, in handbook order
    sections: Vec<String>,
}

fn search_handbook(search: Search) -> CallResult {
    let query = search.query.to_lowercase();
    let hits: Vec<&Section> = SECTIONS
        .iter()
        .filter(|section| !query.is_empty() && section.text.to_lowercase().contains(&query))
        .collect();
    let found = Found {
        sections: hits.iter().map(|section| uri_of(section)).collect(),
    };
    let mut result = CallResult::new()
        .text(format!(
            "{} section(s) mention {:?}",
            hits.len(),
            search.query
        ))
        .structured(serde_json::to_value(&found).expect("a list of strings serializes"));
    for section in hits {
        result = result.resource_link(
            ResourceLink::new(uri_of(section), section.name)
                .title(section.title)
                .mime_type(MARKDOWN),
        );
    }
    result
}

plugin! {
    tools: [
        Tool::new("search_handbook", search_handbook)
            .description("Find the handbook sections that mention a word; returns links to them")
            .output_schema::<Found>()
            .read_only()
            .closed_world(),
    ],
    resources: resources(),
    templates: [section_template()],
    prompts: [explain_prompt()],
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_sdk::{Content, ResourceContents};

    fn text_of(contents: &[corral_sdk::Contents]) -> &str {
        match &contents[0].body {
            ResourceContents::Text(text) => text,
            ResourceContents::Blob(_) => panic!("a section is text"),
        }
    }

    #[test]
    fn every_section_is_a_markdown_resource() {
        let resources = __corral_resources();
        assert_eq!(resources.len(), SECTIONS.len());
        for (resource, section) in resources.iter().zip(SECTIONS) {
            assert_eq!(resource.uri(), format!("handbook://{}", section.name));
            let contents = resource.read().unwrap();
            assert_eq!(contents.len(), 1);
            assert_eq!(contents[0].uri, resource.uri());
            assert_eq!(contents[0].mime_type.as_deref(), Some(MARKDOWN));
            assert!(text_of(&contents).starts_with(&format!("# {}", section.title)));
        }
    }

    #[test]
    fn the_template_reads_sections_by_name() {
        let template = section_template();
        let contents = template.read("handbook://install").unwrap();
        assert_eq!(contents[0].uri, "handbook://install");
        assert!(text_of(&contents).starts_with("# Installing"));
        assert_eq!(
            template.read("handbook://nope"),
            Err(corral_sdk::ReadError::NotFound)
        );
        assert_eq!(
            template.read("other://intro"),
            Err(corral_sdk::ReadError::NotFound)
        );
    }

    #[test]
    fn section_names_complete_by_prefix() {
        let template = section_template();
        assert_eq!(
            template.complete_value("section", "in").values,
            ["intro", "install"]
        );
        assert_eq!(template.complete_value("section", "").values, names());
        let prompt = explain_prompt();
        assert_eq!(prompt.complete_value("section", "S").values, ["security"]);
        assert_eq!(prompt.complete_value("audience", "d").values, ["developer"]);
        assert!(prompt.complete_value("section", "zzz").values.is_empty());
    }

    #[test]
    fn the_prompt_embeds_the_section() {
        let prompt = explain_prompt();
        let arguments = prompt.arguments();
        assert_eq!(arguments[0].name, "section");
        assert!(arguments[0].required);
        assert_eq!(arguments[1].name, "audience");
        assert!(!arguments[1].required);

        let result = prompt
            .get([("section", "plugins"), ("audience", "beginner")])
            .unwrap();
        assert_eq!(result.messages.len(), 2);
        assert!(matches!(
            &result.messages[0].content,
            Content::Text { text, .. } if text.contains("to beginner")
        ));
        match &result.messages[1].content {
            Content::Resource(embedded) => {
                assert_eq!(embedded.uri, "handbook://plugins");
                assert_eq!(embedded.mime_type.as_deref(), Some(MARKDOWN));
            }
            other => panic!("expected an embedded resource, got {other:?}"),
        }
        assert!(matches!(
            prompt.get([("section", "nope")]),
            Err(corral_sdk::PromptError::InvalidArguments(message)) if message.contains("intro")
        ));
    }

    #[test]
    fn search_links_the_sections_that_mention_a_word() {
        let tools = __corral_tools();
        let result = tools[0].call(r#"{"query":"MANIFEST"}"#);
        assert!(!result.is_error);
        assert_eq!(
            result.structured_content,
            Some(corral_sdk::serde_json::json!({
                "sections": ["handbook://intro", "handbook://security"]
            }))
        );
        assert_eq!(result.content.len(), 3);
    }
}
