//! Resources, templates, prompts and completion: the builders, the native
//! test helpers and the glue that answers the host.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::__private::{self, Plugin};
use crate::*;

#[derive(Deserialize)]
struct Page {
    page: String,
    lang: Option<String>,
}

fn plugin() -> Plugin {
    Plugin {
        tools: Vec::new(),
        resources: vec![
            Resource::new("docs://index", "index", || "the index").mime_type("text/markdown"),
            Resource::new("docs://logo", "logo", || Blob(vec![1, 2, 3])).mime_type("image/png"),
        ],
        templates: vec![
            ResourceTemplate::new("docs://{page}{?lang}", "page", |p: Page| {
                let lang = p.lang.unwrap_or_else(|| "en".into());
                (p.page != "missing").then(|| format!("{} ({lang})", p.page))
            })
            .mime_type("text/plain")
            .complete("page", |typed, _| {
                complete_prefix(["index", "intro", "usage"], typed)
            })
            .complete("lang", |_, context| {
                // Depends on the page already chosen.
                if context.get("page").map(String::as_str) == Some("intro") {
                    vec!["en", "fr"]
                } else {
                    vec!["en"]
                }
            }),
        ],
        prompts: vec![prompt()],
    }
}

#[derive(Deserialize, JsonSchema)]
struct Summarize {
    /// The page to summarize
    page: String,
    /// How long the summary may be
    #[schemars(title = "Length")]
    length: Option<String>,
}

fn prompt() -> Prompt {
    Prompt::new("summarize", |s: Summarize| {
        if s.page.is_empty() {
            return Err(PromptError::invalid_arguments("`page` is empty"));
        }
        Ok(vec![
            PromptMessage::user(format!(
                "Summarize {} in {}.",
                s.page,
                s.length.as_deref().unwrap_or("one line")
            )),
            PromptMessage::assistant("Sure."),
        ])
    })
    .title("Summarize a page")
    .complete("page", |typed, _| {
        complete_prefix(["index", "intro"], typed)
    })
}

#[test]
fn a_listed_uri_is_read_before_a_template_that_matches_it() {
    let plugin = plugin();
    let contents = __private::read(&plugin, "docs://index").unwrap();
    assert_eq!(
        contents,
        [Contents::text("docs://index", "the index").mime_type("text/markdown")]
    );
    let contents = __private::read(&plugin, "docs://logo").unwrap();
    assert_eq!(
        contents,
        [Contents::blob("docs://logo", vec![1, 2, 3]).mime_type("image/png")]
    );
}

#[test]
fn a_template_reads_its_variables() {
    let plugin = plugin();
    let contents = __private::read(&plugin, "docs://usage?lang=fr").unwrap();
    assert_eq!(
        contents,
        [Contents::text("docs://usage?lang=fr", "usage (fr)").mime_type("text/plain")]
    );
    let contents = __private::read(&plugin, "docs://usage").unwrap();
    assert_eq!(
        contents[0].body,
        ResourceContents::Text("usage (en)".into())
    );
}

#[test]
fn an_unknown_uri_is_not_found() {
    let plugin = plugin();
    assert_eq!(
        __private::read(&plugin, "docs://missing"),
        Err(ReadError::NotFound)
    );
    assert_eq!(
        __private::read(&plugin, "other://index"),
        Err(ReadError::NotFound)
    );
}

#[test]
fn a_failed_read_says_why() {
    let failing = Resource::new("x://a", "a", || -> Result<String, ReadError> {
        Err(ReadError::failed("disk on fire"))
    });
    assert_eq!(
        failing.read(),
        Err(ReadError::Failed("disk on fire".into()))
    );
}

#[test]
fn prompt_arguments_come_from_the_fields_in_order() {
    assert_eq!(
        prompt().arguments(),
        [
            PromptArgument {
                name: "page".into(),
                title: None,
                description: Some("The page to summarize".into()),
                required: true,
            },
            PromptArgument {
                name: "length".into(),
                title: Some("Length".into()),
                description: Some("How long the summary may be".into()),
                required: false,
            },
        ]
    );
    assert!(Prompt::new("bare", |_: NoArgs| "hi").arguments().is_empty());
}

#[test]
fn a_prompt_gets_its_messages() {
    let result = prompt()
        .get([("page", "intro"), ("length", "a word")])
        .unwrap();
    assert_eq!(
        result.messages,
        [
            PromptMessage::user("Summarize intro in a word."),
            PromptMessage::assistant("Sure."),
        ]
    );
    assert_eq!(
        prompt().get([("page", "")]),
        Err(PromptError::InvalidArguments("`page` is empty".into()))
    );
    let plugin = plugin();
    assert!(matches!(
        __private::get(&plugin, "nope", Vec::new()),
        Err(PromptError::InvalidArguments(message)) if message.contains("nope")
    ));
}

#[test]
#[should_panic(expected = "requires argument `page`")]
fn getting_a_prompt_without_a_required_argument_panics() {
    let _ = prompt().get([("length", "short")]);
}

#[test]
#[should_panic(expected = "is not a string")]
fn a_prompt_argument_that_is_not_a_string_panics() {
    #[derive(Deserialize, JsonSchema)]
    struct Count {
        n: u32,
    }
    let _ = Prompt::new("count", |c: Count| c.n.to_string()).get([("n", "1")]);
}

#[test]
#[should_panic(expected = "not one of its arguments")]
fn completing_an_argument_the_prompt_lacks_panics() {
    let _ = prompt()
        .complete("colour", |_, _| vec!["red"])
        .get([("page", "x")]);
}

#[test]
#[should_panic(expected = "Corral would not load the plugin")]
fn a_relative_uri_panics() {
    let _ = Resource::new("index", "index", || "x").read();
}

#[test]
#[should_panic(expected = "prefix or `*` explode")]
fn an_unsupported_template_panics() {
    let _ = ResourceTemplate::new("x://{a*}", "a", |_: BTreeMap<String, String>| "x").read("x://1");
}

#[test]
fn completion_answers_by_prompt_or_template() {
    let plugin = plugin();
    let values = |c: Completions| c.values;
    assert_eq!(
        values(__private::complete(
            &plugin,
            Some("summarize"),
            None,
            "page",
            "in",
            Vec::new()
        )),
        ["index", "intro"]
    );
    assert_eq!(
        values(__private::complete(
            &plugin,
            None,
            Some("docs://{page}{?lang}"),
            "page",
            "u",
            Vec::new()
        )),
        ["usage"]
    );
    let context = vec![("page".to_string(), "intro".to_string())];
    assert_eq!(
        values(__private::complete(
            &plugin,
            None,
            Some("docs://{page}{?lang}"),
            "lang",
            "",
            context
        )),
        ["en", "fr"]
    );
    // Nothing to suggest: an argument without a completer, an unknown
    // prompt or template.
    assert!(
        __private::complete(&plugin, Some("summarize"), None, "length", "", Vec::new())
            .values
            .is_empty()
    );
    assert!(
        __private::complete(&plugin, Some("nope"), None, "page", "", Vec::new())
            .values
            .is_empty()
    );
    assert!(
        __private::complete(&plugin, None, Some("docs://{x}"), "x", "", Vec::new())
            .values
            .is_empty()
    );
}

#[test]
fn completion_is_cut_to_100_values() {
    let many = Prompt::new("many", |_: Summarize| "x").complete("page", |_, _| {
        (0..250).map(|i| i.to_string()).collect::<Vec<_>>()
    });
    let completions = many.complete_value("page", "");
    assert_eq!(completions.values.len(), 100);
    assert!(completions.has_more);
    assert_eq!(completions.total, Some(250));
}

#[test]
fn the_listing_carries_the_metadata() {
    let listing = __private::list_resources(plugin());
    assert_eq!(listing.resources.len(), 2);
    assert_eq!(listing.resources[0].uri, "docs://index");
    assert_eq!(
        listing.resources[0].mime_type.as_deref(),
        Some("text/markdown")
    );
    assert_eq!(listing.templates[0].uri_template, "docs://{page}{?lang}");
    let prompts = __private::list_prompts(vec![prompt()]);
    assert_eq!(prompts[0].name, "summarize");
    assert_eq!(prompts[0].title.as_deref(), Some("Summarize a page"));
    assert_eq!(prompts[0].arguments.len(), 2);
    assert!(prompts[0].arguments[0].required);
}
