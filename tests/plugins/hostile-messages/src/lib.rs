//! A hostile plugin of words: on every path by which a plugin hands the
//! host text to pass on, it hands over far more than its `output` limit,
//! so that the end-to-end tests (`tests/budgets.rs`) can prove the host
//! measures each against the limit and passes on only a few KiB of it,
//! without its memory growing with the text.
//!
//! Every attack takes its size in MiB: a tool's argument `{"mib": N}`, a
//! read of `hostile://fail/N`, a prompt's argument `mib`, or the value
//! being completed. The text is `F` repeated, between `<start>` and
//! `<end>`, so that a test sees which ends of it were kept.
//!
//! Tools:
//! - `fail`: a tool execution error (`is-error`) whose text is N MiB;
//! - `panic`: panics with an N MiB message (a crash report);
//! - `trap`: writes N MiB to stderr, then traps (`unreachable`) without
//!   a panic: a trap shown with the stderr before it;
//! - `shout`: writes N MiB to stdout and to stderr, then answers `shouted`;
//! - `log`: one `host.log` message and one `host.progress` message of
//!   N MiB each, then answers `logged`;
//! - `ok`: answers `still serving`.
//!
//! Resources: `hostile://ok` reads `still serving`; reading
//! `hostile://fail/N` fails (`read-error::failed`) with N MiB of text.
//!
//! Prompts (argument `mib`): `fail` fails (`get-error::failed`) with N MiB
//! of text, `refuse` with an `invalid-arguments` of N MiB; `ok` answers.
//!
//! Completion: one value of N MiB, N being the value typed so far.
//!
//! With the environment variable `HOSTILE_MODE` set to `list-panic` (a
//! manifest grants it), its tool `list` panics with a 64 MiB message: the
//! plugin is not loaded, and the host's log says why in a few KiB.
//!
//! Written against the raw bindings, so that every field can be abused.

wit_bindgen::generate!({ world: "plugin-full", path: "../../../wit" });

use corral::plugin::host;
use corral::plugin::types::{Content, LogLevel, Role, TextContent};
use exports::corral::plugin::completion::{self, Completions, Reference};
use exports::corral::plugin::prompts::{
    self, GetError, Prompt, PromptArgument, PromptMessage, PromptResult,
};
use exports::corral::plugin::resources::{
    self, Contents, Listing, ReadError, Resource, ResourceTemplate,
};
use exports::corral::plugin::tools::{self, CallResult, Tool};

struct HostileMessages;

export!(HostileMessages);

const MIB: usize = 1 << 20;
const FAIL_PREFIX: &str = "hostile://fail/";
/// `{"mib": N}`.
const SIZED: &str =
    r#"{"type":"object","properties":{"mib":{"type":"integer","minimum":0,"maximum":1024}}}"#;

/// `<start>`, `F` up to `mib` MiB in all, `<end>`: filled 64 KiB at a
/// time, not a character at a time (the fuel goes to the attack, not to
/// building it), nor in one `memory.fill` of it all, which no epoch tick
/// interrupts (the test measures the host, not one long instruction).
fn words(mib: usize) -> String {
    let (start, end) = ("<start>", "<end>");
    let total = (mib * MIB).max(start.len() + end.len());
    let chunk = "F".repeat(64 << 10);
    let mut text = String::with_capacity(total);
    text.push_str(start);
    while text.len() + end.len() < total {
        let room = total - end.len() - text.len();
        text.push_str(&chunk[..room.min(chunk.len())]);
    }
    text.push_str(end);
    text
}

/// The number after `"mib":` in a tool's arguments (0 if none).
fn mib_of(arguments: &str) -> usize {
    arguments
        .split_once("\"mib\"")
        .map(|(_, rest)| {
            rest.trim_start_matches([':', ' '])
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}

fn tool(name: &str) -> Tool {
    Tool {
        name: name.into(),
        title: None,
        description: Some(format!("Test fixture tool {name}")),
        input_schema: SIZED.into(),
        output_schema: None,
        annotations: None,
        icons: vec![],
        task_support: None,
    }
}

fn said(text: String, is_error: bool) -> CallResult {
    CallResult {
        content: vec![Content::Text(TextContent {
            text,
            annotations: None,
        })],
        structured_content: None,
        is_error,
    }
}

/// Writes `mib` MiB of `F` to `stream`, a MiB at a time.
fn flood(stream: &mut dyn std::io::Write, mib: usize) {
    let chunk = vec![b'F'; MIB];
    for _ in 0..mib {
        let _ = stream.write_all(&chunk);
    }
    let _ = stream.flush();
}

impl tools::Guest for HostileMessages {
    fn list() -> Vec<Tool> {
        if std::env::var("HOSTILE_MODE").as_deref() == Ok("list-panic") {
            panic!("{}", words(64));
        }
        ["fail", "panic", "trap", "shout", "log", "ok"]
            .into_iter()
            .map(tool)
            .collect()
    }

    fn call(name: String, arguments: String) -> CallResult {
        let mib = mib_of(&arguments);
        match name.as_str() {
            "fail" => said(words(mib), true),
            "panic" => panic!("{}", words(mib)),
            "trap" => {
                flood(&mut std::io::stderr(), mib);
                core::arch::wasm32::unreachable()
            }
            "shout" => {
                flood(&mut std::io::stdout(), mib);
                flood(&mut std::io::stderr(), mib);
                said("shouted".into(), false)
            }
            "log" => {
                host::log(LogLevel::Error, &words(mib));
                host::progress(1.0, Some(1.0), Some(&words(mib)));
                said("logged".into(), false)
            }
            "ok" => said("still serving".into(), false),
            _ => said(format!("no tool {name}"), true),
        }
    }
}

impl resources::Guest for HostileMessages {
    fn list() -> Listing {
        Listing {
            resources: vec![Resource {
                uri: "hostile://ok".into(),
                name: "ok".into(),
                title: None,
                description: Some("Test fixture resource".into()),
                mime_type: Some("text/plain".into()),
                size: None,
                annotations: None,
                icons: vec![],
            }],
            templates: vec![ResourceTemplate {
                uri_template: format!("{FAIL_PREFIX}{{mib}}"),
                name: "fail".into(),
                title: None,
                description: Some("Reading it fails with a message of {mib} MiB".into()),
                mime_type: Some("text/plain".into()),
                annotations: None,
                icons: vec![],
            }],
        }
    }

    fn read(uri: String) -> Result<Vec<Contents>, ReadError> {
        if uri == "hostile://ok" {
            return Ok(vec![Contents {
                uri,
                mime_type: Some("text/plain".into()),
                body: corral::plugin::types::ResourceContents::Text("still serving".into()),
            }]);
        }
        let mib = uri
            .strip_prefix(FAIL_PREFIX)
            .and_then(|mib| mib.parse().ok())
            .ok_or(ReadError::NotFound)?;
        Err(ReadError::Failed(words(mib)))
    }
}

fn prompt(name: &str) -> Prompt {
    Prompt {
        name: name.into(),
        title: None,
        description: Some(format!("Test fixture prompt {name}")),
        arguments: vec![PromptArgument {
            name: "mib".into(),
            title: None,
            description: Some("How many MiB of text to fail with".into()),
            required: false,
        }],
        icons: vec![],
    }
}

impl prompts::Guest for HostileMessages {
    fn list() -> Vec<Prompt> {
        ["fail", "refuse", "ok"].into_iter().map(prompt).collect()
    }

    fn get(name: String, arguments: Vec<(String, String)>) -> Result<PromptResult, GetError> {
        let mib = arguments
            .iter()
            .find(|(key, _)| key == "mib")
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(0);
        match name.as_str() {
            "fail" => Err(GetError::Failed(words(mib))),
            "refuse" => Err(GetError::InvalidArguments(words(mib))),
            _ => Ok(PromptResult {
                description: None,
                messages: vec![PromptMessage {
                    role: Role::User,
                    content: Content::Text(TextContent {
                        text: "still serving".into(),
                        annotations: None,
                    }),
                }],
            }),
        }
    }
}

impl completion::Guest for HostileMessages {
    fn complete(
        _reference: Reference,
        _name: String,
        value: String,
        _context: Vec<(String, String)>,
    ) -> Completions {
        Completions {
            values: vec![words(value.parse().unwrap_or(0))],
            total: Some(1),
            has_more: false,
        }
    }
}
