//! Test fixture: a plugin whose tool `visit` keeps what it was called with
//! in static state (a counter, the marks, the last mark) and answers with
//! all of it, as tests/isolation.rs drives it. Each call runs in an
//! instance no call ran in before, so every answer holds its own call
//! alone: `{"calls": 1, "marks": [MARK], "last": null}`. It also logs its
//! mark, which must reach the call that made it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use corral_sdk::serde_json::{Value, json};
use corral_sdk::{Tool, log, plugin};
use schemars::JsonSchema;
use serde::Deserialize;

static CALLS: AtomicU32 = AtomicU32::new(0);
static MARKS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static LAST: Mutex<Option<String>> = Mutex::new(None);

/// The call's mark.
#[derive(Deserialize, JsonSchema)]
struct Visit {
    mark: String,
}

fn visit(args: Visit) -> String {
    let calls = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
    let mut marks = MARKS.lock().unwrap();
    marks.push(args.mark.clone());
    let last = LAST.lock().unwrap().replace(args.mark.clone());
    log::info(format!("visited by {}", args.mark));
    let seen: Value = json!({ "calls": calls, "marks": *marks, "last": last });
    seen.to_string()
}

fn tools() -> Vec<Tool> {
    vec![Tool::new("visit", visit).description("Leaves a mark in static state.")]
}

plugin!(tools = tools);
