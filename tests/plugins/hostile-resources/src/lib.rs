//! A hostile plugin of documents: its listing, reads, templates,
//! completions and `host.resource-updated` calls each try to make the host
//! spend unbounded memory or time on its behalf, so that the end-to-end
//! tests (`tests/budgets.rs`) can prove every such unit of host work is
//! bounded. It exports only `resources` and `completion` (world
//! `resource-plugin`): a plugin without tools.
//!
//! What it lists depends on the environment variable `HOSTILE_MODE`, which
//! a test grants through a manifest beside a copy of the plugin:
//! - unset: the resources and templates below, each attacking when read;
//! - `many`: 100,000 resources, ten times the bound;
//! - `templates`: 1,000 templates (the bound) of about 1 KiB each (the
//!   bound is 1,024 bytes), all starting `hostile://near/`, that a URI of
//!   `a`s after it nearly matches and none matches, each of a shape that
//!   made the old matcher scan the rest of the URI once per expression
//!   (see [`near_template`]); reading any `hostile://near/` URI answers,
//!   and says `host.resource-updated` for 100 URIs of 2,048 bytes that
//!   nearly match them too (as much matching as 100 reads).
//!
//! Resources and templates (unset mode):
//! - `hostile://ok`: a short text, to show the plugin still serves;
//! - `hostile://huge`: a 1 GiB blob (the manifest must raise `memory`);
//! - `hostile://flood/{n}`: reading `hostile://flood/N` says
//!   `host.resource-updated` N times, for `hostile://flood/0` to
//!   `hostile://flood/N-1` (each one the plugin serves, by this template);
//! - `hostile://burst/{start}/{count}`: reading it says
//!   `host.resource-updated` for `hostile://flood/START` to
//!   `hostile://flood/START+COUNT-1`, so that many calls say distinct URIs;
//! - `hostile://knot/{v0}{v1}...{v149}/end`: 150 adjacent variables, which
//!   a backtracking matcher splits a long URI among in exponentially many
//!   ways.
//!
//! Completion: a million values for anything asked, with `has-more` false.
//!
//! Written against the raw bindings, so that every field can be abused.

wit_bindgen::generate!({ world: "resource-plugin", path: "../../../wit" });

use corral::plugin::host;
use corral::plugin::types::ResourceContents;
use exports::corral::plugin::completion::{self, Completions, Reference};
use exports::corral::plugin::resources::{
    self, Contents, Listing, ReadError, Resource, ResourceTemplate,
};

struct HostileResources;

export!(HostileResources);

const GIB: usize = 1 << 30;
const FLOOD_PREFIX: &str = "hostile://flood/";
const BURST_PREFIX: &str = "hostile://burst/";
const KNOT_PREFIX: &str = "hostile://knot/";
/// Adjacent variables in the knot template.
const KNOT_VARIABLES: usize = 150;
const NEAR_PREFIX: &str = "hostile://near/";
/// Templates in the `templates` mode: the most a plugin may list.
const NEAR_TEMPLATES: usize = 1_000;
/// The longest template a plugin may list, in bytes.
const MAX_TEMPLATE_BYTES: usize = 1_024;

fn resource(uri: String, mime_type: &str) -> Resource {
    Resource {
        name: uri.trim_start_matches("hostile://").replace('/', "-"),
        uri,
        title: None,
        description: Some("Test fixture resource".into()),
        mime_type: Some(mime_type.into()),
        size: None,
        annotations: None,
        icons: vec![],
    }
}

fn template(uri_template: String) -> ResourceTemplate {
    ResourceTemplate {
        uri_template,
        name: "hostile-template".into(),
        title: None,
        description: Some("Test fixture template".into()),
        mime_type: Some("text/plain".into()),
        annotations: None,
        icons: vec![],
    }
}

/// `hostile://knot/{v0}{v1}...{v149}/end`: 809 bytes, within the bound of
/// 1,024.
fn knot_template() -> String {
    let variables: String = (0..KNOT_VARIABLES).map(|i| format!("{{v{i}}}")).collect();
    format!("{KNOT_PREFIX}{variables}/end")
}

/// Template number `i` of the `templates` mode: at most 1,024 bytes, and
/// within 16 of them, `hostile://near/` then one of three shapes, ending
/// with a literal that names `i` (templates are unique) and that a URI of
/// `a`s never has:
/// - `{a}a{a}a…{a}a!i`: an expression before every `a`;
/// - `{?a}{?a}…{?a}!i`: query expressions, each of which claims nothing;
/// - `aaa…a{a}!i`: a long literal that the URI has, then an expression
///   whose `!` never comes (the most a linear matcher reads per template).
fn near_template(i: usize) -> String {
    let end = format!("!{i}");
    let room = MAX_TEMPLATE_BYTES - NEAR_PREFIX.len() - end.len();
    let middle = match i % 3 {
        0 => "{a}a".repeat(room / 4),
        1 => "{?a}".repeat(room / 4),
        _ => format!("{}{{a}}", "a".repeat(room - 3)),
    };
    format!("{NEAR_PREFIX}{middle}{end}")
}

fn text(uri: String, text: String) -> Vec<Contents> {
    vec![Contents {
        uri,
        mime_type: Some("text/plain".into()),
        body: ResourceContents::Text(text),
    }]
}

/// A 1 GiB blob whose pages the guest never touches: a 1 GiB allocation in
/// a fresh instance is memory that `memory.grow` just added, which the
/// WebAssembly specification fills with zeros. Writing it would make the
/// plugin's own memory (allowed by its manifest) resident in the host
/// process and blur what the test measures: how much the host itself
/// takes to handle the result.
#[allow(clippy::uninit_vec)]
fn untouched_gib() -> Vec<u8> {
    let mut blob = Vec::with_capacity(GIB);
    // SAFETY: see above: the bytes are the zeros of fresh linear memory,
    // and any byte is a valid `u8`.
    unsafe { blob.set_len(GIB) };
    blob
}

/// Says `host.resource-updated` for `hostile://flood/{start}` to
/// `.../{start+count-1}`.
fn flood(start: u64, count: u64) {
    for i in start..start.saturating_add(count) {
        host::resource_updated(&format!("{FLOOD_PREFIX}{i}"));
    }
}

impl resources::Guest for HostileResources {
    fn list() -> Listing {
        match std::env::var("HOSTILE_MODE").as_deref() {
            Ok("many") => Listing {
                resources: (0..100_000)
                    .map(|i| resource(format!("hostile://many/{i}"), "text/plain"))
                    .collect(),
                templates: vec![],
            },
            Ok("templates") => Listing {
                resources: vec![resource("hostile://ok".into(), "text/plain")],
                templates: (0..NEAR_TEMPLATES)
                    .map(|i| template(near_template(i)))
                    .collect(),
            },
            _ => Listing {
                resources: vec![
                    resource("hostile://ok".into(), "text/plain"),
                    resource("hostile://huge".into(), "application/octet-stream"),
                ],
                templates: vec![
                    template(format!("{FLOOD_PREFIX}{{n}}")),
                    template(format!("{BURST_PREFIX}{{start}}/{{count}}")),
                    template(knot_template()),
                ],
            },
        }
    }

    fn read(uri: String) -> Result<Vec<Contents>, ReadError> {
        if uri == "hostile://ok" {
            return Ok(text(uri, "still serving".into()));
        }
        if uri == "hostile://huge" {
            return Ok(vec![Contents {
                uri,
                mime_type: Some("application/octet-stream".into()),
                body: ResourceContents::Blob(untouched_gib()),
            }]);
        }
        if let Some(count) = uri.strip_prefix(FLOOD_PREFIX) {
            let count: u64 = count.parse().map_err(|_| ReadError::NotFound)?;
            flood(0, count);
            return Ok(text(uri, format!("said {count} resources changed")));
        }
        if let Some(burst) = uri.strip_prefix(BURST_PREFIX) {
            let (start, count) = burst.split_once('/').ok_or(ReadError::NotFound)?;
            let start: u64 = start.parse().map_err(|_| ReadError::NotFound)?;
            let count: u64 = count.parse().map_err(|_| ReadError::NotFound)?;
            flood(start, count);
            return Ok(text(uri, format!("said {count} resources changed")));
        }
        if uri.starts_with(KNOT_PREFIX) {
            return Ok(text(uri, "the knot matched".into()));
        }
        if uri.starts_with(NEAR_PREFIX) {
            for i in 0..100 {
                let a = "a".repeat(2_048 - NEAR_PREFIX.len() - 3);
                host::resource_updated(&format!("{NEAR_PREFIX}{a}{i:03}"));
            }
            return Ok(text(uri, "a near template matched".into()));
        }
        Err(ReadError::NotFound)
    }
}

impl completion::Guest for HostileResources {
    fn complete(
        _reference: Reference,
        _name: String,
        _value: String,
        _context: Vec<(String, String)>,
    ) -> Completions {
        Completions {
            values: (0..1_000_000).map(|i| i.to_string()).collect(),
            total: Some(1_000_000),
            // A lie: the host cuts to 100 and says there are more.
            has_more: false,
        }
    }
}
