//! Checking what a plugin's `resources.list` and `prompts.list` say before
//! anyone sees it, as `metadata` checks its tools.
//!
//! Every field is bounded and checked (URIs absolute and at most 2,048
//! bytes, unique within the plugin; templates parsed by `uri_template`;
//! names; prompt names and argument names as tool names), and so is the
//! whole: at most [`MAX_RESOURCES`] resources, [`MAX_TEMPLATES`] templates
//! and [`MAX_PROMPTS`] prompts, and the host memory they hold counts, with
//! the tools', against the manifest's `metadata` limit. The host keeps
//! them all for as long as the plugin is loaded and copies them into every
//! list answer.

use std::collections::HashSet;

use crate::bindings::{icons03, prompts, resources, tools, types};
use crate::metadata::{check_icon, is_valid_tool_name, printable};
use crate::output;
use crate::units::{group_digits, human_bytes};
use crate::uri_template::UriTemplate;
use corral_tool::{Annotations, Icon, PromptArgument, PromptDef, ResourceDef, ResourceTemplateDef};

/// The most resources one plugin may list.
pub const MAX_RESOURCES: usize = 10_000;
/// The most resource templates one plugin may list.
pub const MAX_TEMPLATES: usize = 1_000;
/// The most prompts one plugin may list.
pub const MAX_PROMPTS: usize = 1_000;
/// The most arguments one prompt may declare.
pub const MAX_PROMPT_ARGUMENTS: usize = 64;
/// The longest URI, in bytes.
pub const MAX_URI_BYTES: usize = 2048;
/// The longest resource or template name, in characters.
const MAX_NAME_CHARS: usize = 128;
/// The longest title, in bytes.
const MAX_TITLE_BYTES: usize = 1024;
/// The longest description, in bytes.
const MAX_DESCRIPTION_BYTES: usize = 64 * 1024;
/// The longest MIME type, or annotations' date, in bytes.
const MAX_SHORT_FIELD_BYTES: usize = 255;
/// The most icons per definition.
const MAX_ICONS: usize = 16;

/// A resource template as served, with its parsed template for matching.
#[derive(Debug, Clone)]
pub struct CheckedTemplate {
    pub def: ResourceTemplateDef,
    pub template: UriTemplate,
}

/// Whether `uri` is an absolute URI (RFC 3986: a scheme, then `:`) of at
/// most [`MAX_URI_BYTES`] bytes, with no space or control character.
pub fn check_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_URI_BYTES {
        return Err(format!("URI is longer than {MAX_URI_BYTES} bytes"));
    }
    let scheme = uri.split(':').next().unwrap_or_default();
    let scheme_ok = uri.contains(':')
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !scheme_ok {
        return Err(format!(
            "URI `{}` is not absolute (it needs a scheme, such as `file:` or `handbook:`)",
            printable(uri)
        ));
    }
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "URI `{}` has a space or control character",
            printable(uri)
        ));
    }
    Ok(())
}

/// Validates a plugin's resources and templates; `budget` is the host
/// memory the plugin's definitions may hold, `held` what those checked
/// before hold. Returns them with what all the definitions now hold.
pub fn check_resources(
    listing: resources::Listing,
    held: usize,
    budget: usize,
) -> Result<(Vec<ResourceDef>, Vec<CheckedTemplate>, usize), String> {
    let resources::Listing {
        resources,
        templates,
    } = listing;
    if resources.len() > MAX_RESOURCES {
        return Err(format!(
            "lists {} resources; at most {} are allowed",
            group_digits(resources.len() as u64),
            group_digits(MAX_RESOURCES as u64)
        ));
    }
    if templates.len() > MAX_TEMPLATES {
        return Err(format!(
            "lists {} resource templates; at most {} are allowed",
            group_digits(templates.len() as u64),
            group_digits(MAX_TEMPLATES as u64)
        ));
    }
    let mut problems = Vec::new();
    let mut held = held;
    let mut seen = HashSet::new();
    let mut checked = Vec::with_capacity(resources.len());
    for resource in resources {
        let uri = resource.uri.clone();
        if !seen.insert(uri.clone()) {
            problems.push(format!("resource `{}` is listed twice", printable(&uri)));
            continue;
        }
        match check_resource(resource) {
            Ok(def) => {
                held = held.saturating_add(def.held_bytes);
                if held > budget {
                    problems.push(over_budget("resource", &uri, held, budget));
                    break;
                }
                checked.push(def);
            }
            Err(problem) => problems.push(format!("resource `{}`: {problem}", printable(&uri))),
        }
    }
    let mut seen = HashSet::new();
    let mut checked_templates = Vec::with_capacity(templates.len());
    for template in templates {
        if held > budget {
            break;
        }
        let text = template.uri_template.clone();
        if !seen.insert(text.clone()) {
            problems.push(format!(
                "resource template `{}` is listed twice",
                printable(&text)
            ));
            continue;
        }
        match check_template(template) {
            Ok(checked) => {
                held = held.saturating_add(checked.def.held_bytes);
                if held > budget {
                    problems.push(over_budget("resource template", &text, held, budget));
                    break;
                }
                checked_templates.push(checked);
            }
            Err(problem) => problems.push(format!(
                "resource template `{}`: {problem}",
                printable(&text)
            )),
        }
    }
    if problems.is_empty() {
        Ok((checked, checked_templates, held))
    } else {
        Err(problems.join("; "))
    }
}

/// Validates a plugin's prompts, as [`check_resources`] its resources.
pub fn check_prompts(
    declared: Vec<prompts::Prompt>,
    held: usize,
    budget: usize,
) -> Result<(Vec<PromptDef>, usize), String> {
    if declared.len() > MAX_PROMPTS {
        return Err(format!(
            "lists {} prompts; at most {} are allowed",
            group_digits(declared.len() as u64),
            group_digits(MAX_PROMPTS as u64)
        ));
    }
    let mut problems = Vec::new();
    let mut held = held;
    let mut checked: Vec<PromptDef> = Vec::with_capacity(declared.len());
    for prompt in declared {
        let name = prompt.name.clone();
        if checked.iter().any(|p| p.name == name) {
            problems.push(format!("prompt `{}` is declared twice", printable(&name)));
            continue;
        }
        match check_prompt(prompt) {
            Ok(def) => {
                held = held.saturating_add(def.held_bytes);
                if held > budget {
                    problems.push(over_budget("prompt", &name, held, budget));
                    break;
                }
                checked.push(def);
            }
            Err(problem) => problems.push(format!("prompt `{}`: {problem}", printable(&name))),
        }
    }
    if problems.is_empty() {
        Ok((checked, held))
    } else {
        Err(problems.join("; "))
    }
}

fn over_budget(what: &str, name: &str, held: usize, budget: usize) -> String {
    format!(
        "{what} `{}`: the definitions up to this one take {} of host memory, more than the metadata limit of {}; list fewer or smaller ones, or raise `metadata` in the manifest's [limits]",
        printable(name),
        human_bytes(held),
        human_bytes(budget)
    )
}

fn check_name(name: &str) -> Result<(), String> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(format!(
            "invalid name: use 1 to {MAX_NAME_CHARS} characters, none of them control characters"
        ));
    }
    Ok(())
}

/// Checks the optional text fields every definition has.
fn check_texts(
    title: &Option<String>,
    description: &Option<String>,
    mime_type: &Option<String>,
) -> Result<(), String> {
    for (what, text, max) in [
        ("title", title, MAX_TITLE_BYTES),
        ("description", description, MAX_DESCRIPTION_BYTES),
        ("MIME type", mime_type, MAX_SHORT_FIELD_BYTES),
    ] {
        if text.as_ref().is_some_and(|t| t.len() > max) {
            return Err(format!("{what} is longer than {max} bytes"));
        }
    }
    Ok(())
}

fn check_annotations(
    annotations: Option<types::Annotations>,
) -> Result<Option<Annotations>, String> {
    let Some(annotations) = annotations else {
        return Ok(None);
    };
    if annotations.audience.len() > 2 {
        return Err("annotations list more than 2 audiences".into());
    }
    if annotations
        .last_modified
        .as_ref()
        .is_some_and(|date| date.len() > MAX_SHORT_FIELD_BYTES)
    {
        return Err(format!(
            "annotations' last-modified is longer than {MAX_SHORT_FIELD_BYTES} bytes"
        ));
    }
    Ok(Some(output::annotations(annotations)))
}

fn check_icons(icons: Vec<icons03::Icon>) -> Result<(Vec<Icon>, usize), String> {
    if icons.len() > MAX_ICONS {
        return Err(format!(
            "declares {} icons; at most {MAX_ICONS} are allowed",
            icons.len()
        ));
    }
    let mut bytes = 0;
    let mut checked = Vec::with_capacity(icons.len());
    for icon in icons {
        let icon = check_icon(tools::Icon {
            src: icon.src,
            mime_type: icon.mime_type,
            sizes: icon.sizes,
            theme: icon.theme,
        })?;
        bytes += icon.src.len()
            + opt_len(&icon.mime_type)
            + opt_len(&icon.theme)
            + icon.sizes.iter().map(String::len).sum::<usize>();
        checked.push(icon);
    }
    Ok((checked, bytes))
}

fn opt_len(text: &Option<String>) -> usize {
    text.as_ref().map_or(0, String::len)
}

fn check_resource(resource: resources::Resource) -> Result<ResourceDef, String> {
    check_uri(&resource.uri)?;
    check_name(&resource.name)?;
    check_texts(&resource.title, &resource.description, &resource.mime_type)?;
    let annotations = check_annotations(resource.annotations)?;
    let (icons, icon_bytes) = check_icons(resource.icons)?;
    let held_bytes = std::mem::size_of::<ResourceDef>()
        + resource.uri.len()
        + resource.name.len()
        + opt_len(&resource.title)
        + opt_len(&resource.description)
        + opt_len(&resource.mime_type)
        + annotations_bytes(&annotations)
        + icon_bytes;
    Ok(ResourceDef {
        uri: resource.uri,
        name: resource.name,
        title: resource.title,
        description: resource.description,
        mime_type: resource.mime_type,
        size: resource.size,
        annotations,
        icons,
        held_bytes,
    })
}

fn check_template(template: resources::ResourceTemplate) -> Result<CheckedTemplate, String> {
    let parsed =
        UriTemplate::parse(&template.uri_template).map_err(|err| format!("template {err}"))?;
    // What a URI it matches starts with must be a scheme: check the
    // template as a URI with its expressions taken out.
    let literal: String = template
        .uri_template
        .split('{')
        .map(|piece| piece.split_once('}').map_or(piece, |(_, rest)| rest))
        .collect();
    check_uri(&literal).map_err(|err| format!("template: {err}"))?;
    // The scheme is literal, so that a URI of another scheme is told apart
    // at its first bytes.
    let head = template.uri_template.split('{').next().unwrap_or_default();
    if !head.contains(':') {
        return Err(
            "template: its scheme (such as `handbook:`) must come before any expression".into(),
        );
    }
    check_name(&template.name)?;
    check_texts(&template.title, &template.description, &template.mime_type)?;
    let annotations = check_annotations(template.annotations)?;
    let (icons, icon_bytes) = check_icons(template.icons)?;
    let held_bytes = std::mem::size_of::<CheckedTemplate>()
        // The parsed template holds about as much again as its text.
        + 2 * template.uri_template.len()
        + template.name.len()
        + opt_len(&template.title)
        + opt_len(&template.description)
        + opt_len(&template.mime_type)
        + annotations_bytes(&annotations)
        + icon_bytes;
    Ok(CheckedTemplate {
        def: ResourceTemplateDef {
            uri_template: template.uri_template,
            name: template.name,
            title: template.title,
            description: template.description,
            mime_type: template.mime_type,
            annotations,
            icons,
            held_bytes,
        },
        template: parsed,
    })
}

fn check_prompt(prompt: prompts::Prompt) -> Result<PromptDef, String> {
    if !is_valid_tool_name(&prompt.name) {
        return Err("invalid name: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`".into());
    }
    check_texts(&prompt.title, &prompt.description, &None)?;
    if prompt.arguments.len() > MAX_PROMPT_ARGUMENTS {
        return Err(format!(
            "declares {} arguments; at most {MAX_PROMPT_ARGUMENTS} are allowed",
            prompt.arguments.len()
        ));
    }
    let mut held_bytes = std::mem::size_of::<PromptDef>()
        + prompt.name.len()
        + opt_len(&prompt.title)
        + opt_len(&prompt.description);
    let mut arguments: Vec<PromptArgument> = Vec::with_capacity(prompt.arguments.len());
    for argument in prompt.arguments {
        if !is_valid_tool_name(&argument.name) {
            return Err(format!(
                "argument `{}`: invalid name: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`",
                printable(&argument.name)
            ));
        }
        if arguments.iter().any(|a| a.name == argument.name) {
            return Err(format!("argument `{}` is declared twice", argument.name));
        }
        check_texts(&argument.title, &argument.description, &None)
            .map_err(|err| format!("argument `{}`: {err}", argument.name))?;
        held_bytes += std::mem::size_of::<PromptArgument>()
            + argument.name.len()
            + opt_len(&argument.title)
            + opt_len(&argument.description);
        arguments.push(PromptArgument {
            name: argument.name,
            title: argument.title,
            description: argument.description,
            required: argument.required,
        });
    }
    let (icons, icon_bytes) = check_icons(prompt.icons)?;
    Ok(PromptDef {
        name: prompt.name,
        title: prompt.title,
        description: prompt.description,
        arguments,
        icons,
        held_bytes: held_bytes + icon_bytes,
    })
}

fn annotations_bytes(annotations: &Option<Annotations>) -> usize {
    annotations.as_ref().map_or(0, |a| {
        std::mem::size_of::<Annotations>() + opt_len(&a.last_modified)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(uri: &str) -> resources::Resource {
        resources::Resource {
            uri: uri.into(),
            name: "doc".into(),
            title: None,
            description: None,
            mime_type: Some("text/markdown".into()),
            size: None,
            annotations: None,
            icons: vec![],
        }
    }

    fn template(text: &str) -> resources::ResourceTemplate {
        resources::ResourceTemplate {
            uri_template: text.into(),
            name: "section".into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: vec![],
        }
    }

    fn prompt(name: &str, arguments: &[&str]) -> prompts::Prompt {
        prompts::Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: arguments
                .iter()
                .map(|name| prompts::PromptArgument {
                    name: name.to_string(),
                    title: None,
                    description: None,
                    required: false,
                })
                .collect(),
            icons: vec![],
        }
    }

    fn listing(
        resources: Vec<resources::Resource>,
        templates: Vec<resources::ResourceTemplate>,
    ) -> resources::Listing {
        resources::Listing {
            resources,
            templates,
        }
    }

    #[test]
    fn valid_resources_and_templates_pass() {
        let (resources, templates, held) = check_resources(
            listing(
                vec![resource("handbook://intro"), resource("file:///notes.md")],
                vec![template("handbook://{section}")],
            ),
            0,
            usize::MAX,
        )
        .unwrap();
        assert_eq!(resources.len(), 2);
        assert!(templates[0].template.matches("handbook://faq"));
        assert!(held > 0 && resources[0].held_bytes > 0);
    }

    #[test]
    fn every_problem_is_named() {
        let mut long = resource(&format!("x://{}", "a".repeat(MAX_URI_BYTES)));
        long.name = "long".into();
        let mut unnamed = resource("x://unnamed");
        unnamed.name = String::new();
        let err = check_resources(
            listing(
                vec![
                    resource("relative/path"),
                    resource("x://a"),
                    resource("x://a"),
                    long,
                    unnamed,
                    resource("x://has space"),
                ],
                vec![
                    template("x://{a*}"),
                    template("x{a}://b"),
                    template("x://{a}"),
                    template("x://{a}"),
                ],
            ),
            0,
            usize::MAX,
        )
        .unwrap_err();
        for expected in [
            "resource `relative/path`: URI `relative/path` is not absolute",
            "resource `x://a` is listed twice",
            "URI is longer than 2048 bytes",
            "resource `x://unnamed`: invalid name",
            "has a space or control character",
            "resource template `x://{a*}`: template uses a prefix or explode modifier",
            "resource template `x{a}://b`: template: its scheme",
            "resource template `x://{a}` is listed twice",
        ] {
            assert!(err.contains(expected), "{expected} in {err}");
        }
    }

    #[test]
    fn the_bounds_name_themselves() {
        let many: Vec<_> = (0..=MAX_RESOURCES)
            .map(|i| resource(&format!("x://{i}")))
            .collect();
        let err = check_resources(listing(many, vec![]), 0, usize::MAX).unwrap_err();
        assert_eq!(err, "lists 10,001 resources; at most 10,000 are allowed");
        let many: Vec<_> = (0..=MAX_TEMPLATES)
            .map(|i| template(&format!("x://{i}/{{a}}")))
            .collect();
        let err = check_resources(listing(vec![], many), 0, usize::MAX).unwrap_err();
        assert_eq!(
            err,
            "lists 1,001 resource templates; at most 1,000 are allowed"
        );
        let many: Vec<_> = (0..=MAX_PROMPTS)
            .map(|i| prompt(&format!("p{i}"), &[]))
            .collect();
        let err = check_prompts(many, 0, usize::MAX).unwrap_err();
        assert_eq!(err, "lists 1,001 prompts; at most 1,000 are allowed");
        let arguments: Vec<String> = (0..=MAX_PROMPT_ARGUMENTS)
            .map(|i| format!("a{i}"))
            .collect();
        let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
        let err = check_prompts(vec![prompt("p", &arguments)], 0, usize::MAX).unwrap_err();
        assert!(
            err.contains("`p`: declares 65 arguments; at most 64"),
            "{err}"
        );
    }

    #[test]
    fn the_metadata_limit_counts_every_definition_and_stops_past_it() {
        let many: Vec<_> = (0..5_000)
            .map(|i| {
                let mut r = resource(&format!("x://{i}"));
                r.description = Some("d".repeat(1_000));
                r
            })
            .collect();
        let err = check_resources(listing(many, vec![]), 0, 1 << 20).unwrap_err();
        assert!(
            err.contains("more than the metadata limit of 1 MiB"),
            "{err}"
        );
        assert!(
            err.contains("raise `metadata` in the manifest's [limits]"),
            "{err}"
        );
        assert!(
            !err.contains("x://4999"),
            "checking stopped at the first past it: {err}"
        );
    }

    #[test]
    fn prompt_names_and_arguments_follow_the_tool_rule() {
        let err = check_prompts(
            vec![
                prompt("bad name", &[]),
                prompt("ok", &["x", "x"]),
                prompt("ok2", &["has.dot"]),
                prompt("dup", &[]),
                prompt("dup", &[]),
            ],
            0,
            usize::MAX,
        )
        .unwrap_err();
        assert!(err.contains("prompt `bad name`: invalid name"), "{err}");
        assert!(
            err.contains("prompt `ok`: argument `x` is declared twice"),
            "{err}"
        );
        assert!(
            err.contains("prompt `ok2`: argument `has.dot`: invalid name"),
            "{err}"
        );
        assert!(err.contains("prompt `dup` is declared twice"), "{err}");
        let (prompts, _) =
            check_prompts(vec![prompt("summarize", &["topic"])], 0, usize::MAX).unwrap();
        assert_eq!(prompts[0].arguments[0].name, "topic");
    }
}
