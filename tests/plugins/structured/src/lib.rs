//! Test fixture: results with structured content, with and without text of
//! their own, for the rule that the host adds structured content as JSON
//! text only to a result that has no text item (and to every result when
//! the manifest's `[results] mirror-structured` asks), as tests/tools.rs
//! drives it. Every tool answers the same counts, `{"items":3,"done":2}`:
//!
//! - `summary`: a sentence, then the counts as structured content;
//! - `as_json`: the counts as JSON text, spaced, and as structured content;
//! - `bare`: the counts as structured content and no content at all;
//! - `pictured`: a one-pixel PNG and the counts, no text.

use corral_sdk::{CallResult, NoArgs, Tool, plugin, serde_json};
use schemars::JsonSchema;
use serde::Serialize;

/// Items counted.
#[derive(Serialize, JsonSchema)]
struct Counts {
    /// All the items.
    items: u32,
    /// The items done.
    done: u32,
}

const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

fn counts() -> serde_json::Value {
    serde_json::to_value(Counts { items: 3, done: 2 }).expect("counts serialize")
}

fn summary(_: NoArgs) -> CallResult {
    CallResult::new()
        .text("2 of 3 items done")
        .structured(counts())
}

fn as_json(_: NoArgs) -> CallResult {
    CallResult::new()
        .text("{ \"items\": 3, \"done\": 2 }")
        .structured(counts())
}

fn bare(_: NoArgs) -> CallResult {
    CallResult::new().structured(counts())
}

fn pictured(_: NoArgs) -> CallResult {
    CallResult::new()
        .image(PNG, "image/png")
        .structured(counts())
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("summary", summary)
            .description("The counts in a sentence, and structured.")
            .output_schema::<Counts>(),
        Tool::new("as_json", as_json)
            .description("The counts as JSON text, and structured.")
            .output_schema::<Counts>(),
        Tool::new("bare", bare)
            .description("The counts structured, with no text.")
            .output_schema::<Counts>(),
        Tool::new("pictured", pictured)
            .description("A picture and the counts structured, with no text.")
            .output_schema::<Counts>(),
    ]
}

plugin!(tools = tools);
