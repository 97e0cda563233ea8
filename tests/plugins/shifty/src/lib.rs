//! Test fixture: a plugin whose tool list follows its store, and which says
//! so with `host.tools-changed` (contract 0.3.0), as tests/tools_changed.rs
//! drives it. Its manifest grants the bucket `default`.
//!
//! - `set_mode {"mode": "plain" | "extra" | "broken"}` stores the mode and
//!   says that the tools changed: in mode `extra` the list holds `extra`
//!   too; in mode `broken` it names `set_mode` twice, which the host
//!   refuses, so that listing again fails.
//! - `spin {"times": N}` says that the tools changed N times in one call,
//!   changing nothing.

use corral_sdk::state::{Bucket, StateError};
use corral_sdk::{NoArgs, Tool, plugin, tools_changed};
use schemars::JsonSchema;
use serde::Deserialize;

const BUCKET: &str = "default";
const MODE: &str = "mode";

/// What the list holds.
#[derive(Deserialize, JsonSchema, serde::Serialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Mode {
    /// `set_mode` and `spin`.
    Plain,
    /// `extra` besides.
    Extra,
    /// `set_mode` twice: a list the host refuses.
    Broken,
}

/// A mode to store.
#[derive(Deserialize, JsonSchema)]
struct SetMode {
    mode: Mode,
}

/// How many times to say it.
#[derive(Deserialize, JsonSchema)]
struct Spin {
    #[schemars(range(max = 1_000_000))]
    times: u32,
}

fn mode() -> Mode {
    Bucket::open(BUCKET)
        .and_then(|bucket| bucket.get::<Mode>(MODE))
        .ok()
        .flatten()
        .unwrap_or(Mode::Plain)
}

fn set_mode(args: SetMode) -> Result<&'static str, StateError> {
    Bucket::open(BUCKET)?.set(MODE, &args.mode)?;
    tools_changed();
    Ok("stored")
}

fn spin(args: Spin) -> String {
    for _ in 0..args.times {
        tools_changed();
    }
    format!("said it {} times", args.times)
}

fn extra(_: NoArgs) -> &'static str {
    "extra is listed"
}

fn tools() -> Vec<Tool> {
    let mut tools = vec![
        Tool::new("set_mode", set_mode).description("Store the mode the list follows."),
        Tool::new("spin", spin).description("Say that the tools changed, N times."),
    ];
    match mode() {
        Mode::Plain => {}
        Mode::Extra => tools.push(Tool::new("extra", extra).description("Listed in mode extra.")),
        Mode::Broken => {
            tools.push(Tool::new("set_mode", set_mode).description("A second set_mode."))
        }
    }
    tools
}

plugin!(tools = tools);
