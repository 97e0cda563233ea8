//! Test fixture: the tools that the server scenarios of the official MCP
//! conformance suite (npm `@modelcontextprotocol/conformance`) call by name,
//! answering exactly what each scenario's description asks for.
//!
//! The tools of the scenarios that need the server to ask the client
//! (sampling, elicitation, roots; `input_required` results in 2026-07-28)
//! are in [`asking`]; they use the fixed keys and the exact requests the
//! suite looks for.

mod asking;
mod tasks;

use std::borrow::Cow;
use std::thread::sleep;
use std::time::Duration;

use asking::*;
use corral_sdk::state::Bucket;
use corral_sdk::{
    Audio, CallResult, Image, NoArgs, Tool, ToolError, log, plugin, progress, tools_changed,
};
use schemars::{JsonSchema, SchemaGenerator};

/// The pause between the log messages and progress steps that the logging
/// and progress scenarios ask for ("~50ms"), so that the client sees several
/// notifications arrive while the call is still running.
const STEP: Duration = Duration::from_millis(50);

/// A 1x1 PNG.
const PIXEL_PNG: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A short WAV file: 8 kHz, 8-bit mono PCM, `samples` samples of silence.
fn silent_wav(samples: u32) -> Vec<u8> {
    let sample_rate: u32 = 8000;
    let mut wav = Vec::with_capacity(44 + samples as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&sample_rate.to_le_bytes());
    wav.extend_from_slice(&sample_rate.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&samples.to_le_bytes());
    // 8-bit PCM is unsigned: 128 is silence.
    wav.resize(44 + samples as usize, 128);
    wav
}

fn simple_text(_: NoArgs) -> &'static str {
    "This is a simple text response for testing."
}

fn image_content(_: NoArgs) -> Image {
    Image::png(PIXEL_PNG)
}

fn audio_content(_: NoArgs) -> Audio {
    Audio::wav(silent_wav(800))
}

fn embedded_resource(_: NoArgs) -> CallResult {
    CallResult::new().resource_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

fn multiple_content_types(_: NoArgs) -> CallResult {
    CallResult::new()
        .text("Multiple content types test:")
        .image(PIXEL_PNG, "image/png")
        .resource_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )
}

fn tool_with_logging(_: NoArgs) -> &'static str {
    log::info("Tool execution started");
    sleep(STEP);
    log::info("Tool processing data");
    sleep(STEP);
    log::info("Tool execution completed");
    "Tool with logging executed successfully"
}

/// For the stateless scenario's check that a call without a log level in
/// its `_meta` gets no log notifications.
fn logging_tool(_: NoArgs) -> &'static str {
    log::info("test_logging_tool: a log message");
    "logged one info message"
}

/// The bucket the fixture keeps its one setting in; its manifest grants it
/// (`[state] buckets = ["default"]`, as tests/conformance.rs writes it).
const BUCKET: &str = "default";
/// Whether `test_added_tool` is listed: `true` or `false`, absent at first.
const ADDED: &str = "added-tool";

/// Whether the stored setting lists `test_added_tool`. A store that cannot
/// be read lists it not: the rest of the list must not depend on it.
fn added_tool_listed() -> bool {
    Bucket::open(BUCKET)
        .and_then(|bucket| bucket.get::<bool>(ADDED))
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// For the stateless scenario's check that a listen stream hears of a
/// tool list change: adds `test_added_tool` to the fixture's own list, or
/// takes it away, through its store, and says that its tools changed, so
/// that the server lists them again.
fn trigger_tool_change(_: NoArgs) -> Result<&'static str, ToolError> {
    let bucket = Bucket::open(BUCKET)?;
    let listed = !bucket.get::<bool>(ADDED)?.unwrap_or(false);
    bucket.set(ADDED, &listed)?;
    tools_changed();
    Ok(if listed {
        "test_added_tool is listed from now on"
    } else {
        "test_added_tool is no longer listed"
    })
}

/// The tool that `test_trigger_tool_change` adds and takes away.
fn added_tool(_: NoArgs) -> &'static str {
    "test_added_tool is listed"
}

fn tool_with_progress(_: NoArgs) -> &'static str {
    for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            sleep(STEP);
        }
        progress(done, Some(100.0), None);
    }
    "Tool with progress executed successfully"
}

fn error_handling(_: NoArgs) -> Result<&'static str, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// The arguments of `json_schema_2020_12_tool`, whose input schema is the
/// one the `json-schema-2020-12` scenario expects to see listed unchanged
/// (`$schema`, `$defs` with an `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`,
/// `additionalProperties: false`).
#[derive(serde::Deserialize)]
struct Contact {}

impl JsonSchema for Contact {
    fn schema_name() -> Cow<'static, str> {
        "Contact".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {
                        "street": { "type": "string" },
                        "city": { "type": "string" },
                    },
                },
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" },
                "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                "phone": { "type": "string" },
                "email": { "type": "string" },
            },
            "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
            "if": {
                "properties": { "contactMethod": { "const": "phone" } },
                "required": ["contactMethod"],
            },
            "then": { "required": ["phone"] },
            "else": { "required": ["email"] },
            "additionalProperties": false,
        })
    }
}

fn json_schema_tool(_: Contact) -> &'static str {
    "JSON Schema 2020-12 tool executed successfully"
}

/// The arguments of `test_custom_header`: `region` is mirrored into the
/// `Mcp-Param-Region` header (`x-mcp-header`), which the
/// `http-custom-header-server-validation` scenario sends plain, Base64
/// encoded, malformed, or not at all.
#[derive(serde::Deserialize)]
struct Routed {
    region: String,
}

impl JsonSchema for Routed {
    fn schema_name() -> Cow<'static, str> {
        "Routed".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "region": {
                    "type": "string",
                    "description": "The region to route the call to",
                    "x-mcp-header": "Region",
                },
            },
            "required": ["region"],
        })
    }
}

fn custom_header(routed: Routed) -> String {
    format!("routed to region {}", routed.region)
}

/// The fixture's tools, as its store says: every scenario's, and
/// `test_added_tool` while `test_trigger_tool_change` has it listed.
fn tools() -> Vec<Tool> {
    let mut tools = vec![
        Tool::new("test_simple_text", simple_text).description("Returns a simple text response."),
        Tool::new("test_image_content", image_content).description("Returns a 1x1 PNG image."),
        Tool::new("test_audio_content", audio_content)
            .description("Returns a tenth of a second of silent WAV audio."),
        Tool::new("test_embedded_resource", embedded_resource)
            .description("Returns an embedded text resource."),
        Tool::new("test_multiple_content_types", multiple_content_types)
            .description("Returns text, an image and an embedded resource."),
        Tool::new("test_tool_with_logging", tool_with_logging)
            .description("Logs three info messages 50 ms apart, then answers."),
        Tool::new("test_logging_tool", logging_tool)
            .description("Logs one info message, then answers."),
        Tool::new("test_trigger_tool_change", trigger_tool_change).description(
            "Adds test_added_tool to the tool list, or takes it away: the list changes.",
        ),
        Tool::new("test_tool_with_progress", tool_with_progress)
            .description("Reports progress 0, 50 and 100 of 100, 50 ms apart, then answers."),
        Tool::new("test_error_handling", error_handling)
            .description("Always fails with a tool execution error."),
        Tool::new("json_schema_2020_12_tool", json_schema_tool)
            .description("Tool with JSON Schema 2020-12 features"),
        Tool::new("test_custom_header", custom_header).description(
            "Echoes its region, which clients mirror into the Mcp-Param-Region header.",
        ),
        Tool::new("test_sampling", sampling).description(
            "Asks the client's model to answer the prompt (sampling), then returns its reply.",
        ),
        Tool::new("test_elicitation", elicitation).description(
            "Asks the user for a username and an email (elicitation), then returns the answer.",
        ),
        Tool::new("test_elicitation_sep1034_defaults", elicitation_defaults)
            .description("Asks the user a form whose every field has a default (SEP-1034)."),
        Tool::new("test_elicitation_sep1330_enums", elicitation_enums)
            .description("Asks the user a form with every kind of choice (SEP-1330)."),
        Tool::new(
            "test_input_required_result_elicitation",
            input_required_elicitation,
        )
        .description("Asks the user's name under the key user_name, then greets them."),
        Tool::new(
            "test_input_required_result_sampling",
            input_required_sampling,
        )
        .description(
            "Asks the client's model the capital of France under the key capital_question.",
        ),
        Tool::new(
            "test_input_required_result_list_roots",
            input_required_list_roots,
        )
        .description("Asks the client's roots under the key client_roots, then lists them."),
        Tool::new(
            "test_input_required_result_request_state",
            input_required_request_state,
        )
        .description(
            "Asks for a confirmation under the key confirm; answers state-ok once confirmed.",
        ),
        Tool::new(
            "test_input_required_result_multiple_inputs",
            input_required_multiple_inputs,
        )
        .description("Asks a name, a greeting from the model and the roots in one round."),
        Tool::new(
            "test_input_required_result_multi_round",
            input_required_multi_round,
        )
        .description("Asks a name (step1), then a favorite color (step2): two rounds."),
        Tool::new(
            "test_input_required_result_tampered_state",
            input_required_tampered_state,
        )
        .description(
            "Asks for a confirmation under the key confirm, for the tampered-state check.",
        ),
        Tool::new(
            "test_input_required_result_capabilities",
            input_required_capabilities,
        )
        .description(
            "Asks only what the client declared: sampling, elicitation and roots as available.",
        ),
        Tool::new("test_missing_capability", missing_capability).description(
            "Asks the client's model without checking that the client declared sampling.",
        ),
        Tool::new("test_streaming_elicitation", streaming_elicitation)
            .description("Asks the user a question (elicitation)."),
    ];
    tools.extend(tasks::tools());
    if added_tool_listed() {
        tools.push(
            Tool::new("test_added_tool", added_tool)
                .description("Listed or not, as test_trigger_tool_change last left it."),
        );
    }
    tools
}

plugin!(tools = tools);
