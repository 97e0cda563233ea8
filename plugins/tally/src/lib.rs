//! Corral example plugin: named counters that outlive the call, kept in the
//! plugin's store (`corral_sdk::state`, `wasi:keyvalue`) with the grant in
//! `tally.toml` beside the component.

use corral_sdk::state::Bucket;
use corral_sdk::{CallResult, NoArgs, Tool, ToolError, plugin};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The bucket the counters live in: the one `tally.toml` grants.
const BUCKET: &str = "default";
/// The largest step of one `tally_add`.
const MAX_BY: u64 = 1_000_000;
/// The longest counter name, in characters (the host allows keys of 1 KiB).
const MAX_KEY_CHARS: usize = 256;
/// Keys read per `get-many`: the host's batch limit.
const BATCH: usize = 1_000;

/// A counter and how much to add to it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    /// The counter's name (1-256 characters), e.g. "apples".
    #[schemars(length(min = 1, max = 256))]
    key: String,
    /// How much to add (0-1000000; 0 reads the counter). Defaults to 1.
    #[serde(default = "one")]
    #[schemars(range(max = 1_000_000))]
    by: u64,
}

fn one() -> u64 {
    1
}

/// A counter.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct KeyArgs {
    /// The counter's name (1-256 characters), e.g. "apples".
    #[schemars(length(min = 1, max = 256))]
    key: String,
}

/// A counter and the total to give it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SetArgs {
    /// The counter's name (1-256 characters), e.g. "apples".
    #[schemars(length(min = 1, max = 256))]
    key: String,
    /// Its new total.
    total: u64,
}

/// A counter given a new total.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct Replaced {
    /// The counter's name.
    key: String,
    /// Its new total.
    total: u64,
    /// Its total before (0 if it had none).
    previous: u64,
}

/// A counter and its total.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct Total {
    /// The counter's name.
    key: String,
    /// Its total: 0 for a counter never added to.
    total: u64,
}

/// Every counter.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct Counters {
    /// The counters, by name.
    counters: Vec<Total>,
}

/// A counter that was reset.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
struct Reset {
    /// The counter's name.
    key: String,
    /// Its total before the reset (0 if it had none).
    previous: u64,
}

fn check_key(key: &str) -> Result<(), ToolError> {
    let chars = key.chars().count();
    if chars == 0 || chars > MAX_KEY_CHARS {
        return Err(ToolError::new(format!(
            "key must be 1-{MAX_KEY_CHARS} characters, got {chars}"
        )));
    }
    Ok(())
}

/// Text and structured content: `text` for the model, `value` for programs.
fn answer(text: String, value: impl Serialize) -> Result<CallResult, ToolError> {
    Ok(CallResult::new()
        .text(text)
        .structured(corral_sdk::serde_json::to_value(value)?))
}

fn add(args: AddArgs) -> Result<CallResult, ToolError> {
    check_key(&args.key)?;
    if args.by > MAX_BY {
        return Err(ToolError::new(format!(
            "by must be at most {MAX_BY}, got {}",
            args.by
        )));
    }
    let total = Bucket::open(BUCKET)?.increment(&args.key, args.by)?;
    total_of(args.key, total)
}

fn get(args: KeyArgs) -> Result<CallResult, ToolError> {
    check_key(&args.key)?;
    let total = Bucket::open(BUCKET)?.get::<u64>(&args.key)?.unwrap_or(0);
    total_of(args.key, total)
}

/// One read and one write: the previous total, then the new one.
fn set(args: SetArgs) -> Result<CallResult, ToolError> {
    check_key(&args.key)?;
    let bucket = Bucket::open(BUCKET)?;
    let previous = bucket.get::<u64>(&args.key)?.unwrap_or(0);
    bucket.set(&args.key, &args.total)?;
    answer(
        format!("{}: {} (was {previous})", args.key, args.total),
        Replaced {
            key: args.key,
            total: args.total,
            previous,
        },
    )
}

fn total_of(key: String, total: u64) -> Result<CallResult, ToolError> {
    answer(format!("{key}: {total}"), Total { key, total })
}

fn list(_: NoArgs) -> Result<CallResult, ToolError> {
    let bucket = Bucket::open(BUCKET)?;
    let mut keys = bucket.keys()?;
    keys.sort();
    let mut counters = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(BATCH) {
        let totals = bucket.get_many::<u64>(chunk)?;
        // A counter reset since the keys were listed is gone: skip it.
        counters.extend(chunk.iter().zip(totals).filter_map(|(key, total)| {
            Some(Total {
                key: key.clone(),
                total: total?,
            })
        }));
    }
    let text = if counters.is_empty() {
        "no counters yet".to_string()
    } else {
        counters
            .iter()
            .map(|counter| format!("{}: {}", counter.key, counter.total))
            .collect::<Vec<_>>()
            .join("\n")
    };
    answer(text, Counters { counters })
}

fn reset(args: KeyArgs) -> Result<CallResult, ToolError> {
    check_key(&args.key)?;
    let bucket = Bucket::open(BUCKET)?;
    let previous = bucket.get::<u64>(&args.key)?.unwrap_or(0);
    bucket.delete(&args.key)?;
    answer(
        format!("{}: reset from {previous} to 0", args.key),
        Reset {
            key: args.key,
            previous,
        },
    )
}

plugin! {
    Tool::new("tally_add", add)
        .title("Add to a counter")
        .description(
            "Add `by` (default 1) to the named counter and return its new total. Counters \
             start at 0 and are kept between calls.",
        )
        .output_schema::<Total>()
        .closed_world(),
    Tool::new("tally_get", get)
        .title("Read a counter")
        .description("Return the total of the named counter (0 if it was never added to).")
        .output_schema::<Total>()
        .read_only()
        .idempotent()
        .closed_world(),
    Tool::new("tally_set", set)
        .title("Set a counter")
        .description(
            "Give the named counter a new total and return its previous one. An add made \
             at the same moment may be lost: use tally_add to count.",
        )
        .output_schema::<Replaced>()
        .idempotent()
        .closed_world(),
    Tool::new("tally_list", list)
        .title("List the counters")
        .description("Return every counter and its total, by name.")
        .output_schema::<Counters>()
        .read_only()
        .idempotent()
        .closed_world(),
    Tool::new("tally_reset", reset)
        .title("Reset a counter")
        .description("Set the named counter back to 0 (forget it) and return its previous total.")
        .output_schema::<Reset>()
        .destructive()
        .idempotent()
        .closed_world(),
}

#[cfg(test)]
mod tests {
    use corral_sdk::serde_json::{Value, json};
    use corral_sdk::state::{StateError, fake};
    use corral_sdk::{CallResult, Content};

    fn call(name: &str, arguments: &str) -> CallResult {
        super::__corral_tools()
            .into_iter()
            .find(|tool| tool.name() == name)
            .unwrap()
            .call(arguments)
    }

    fn text(result: &CallResult) -> &str {
        match &result.content[..] {
            [Content::Text { text, .. }] => text,
            other => panic!("expected one text, got {other:?}"),
        }
    }

    fn structured(result: &CallResult) -> &Value {
        assert!(!result.is_error, "{}", text(result));
        result.structured_content.as_ref().unwrap()
    }

    fn granted() {
        fake::set(fake::FakeStore::new().buckets(["default"]).quota(1 << 20));
    }

    #[test]
    fn counters_add_up_from_call_to_call() {
        granted();
        let first = call("tally_add", r#"{"key": "apples"}"#);
        assert_eq!(text(&first), "apples: 1");
        assert_eq!(structured(&first), &json!({"key": "apples", "total": 1}));
        let second = call("tally_add", r#"{"key": "apples", "by": 4}"#);
        assert_eq!(text(&second), "apples: 5");
        assert_eq!(structured(&second), &json!({"key": "apples", "total": 5}));
        assert_eq!(fake::contents("default")["apples"], b"5");
        let read = call("tally_add", r#"{"key": "apples", "by": 0}"#);
        assert_eq!(text(&read), "apples: 5");
        assert_eq!(
            text(&call("tally_get", r#"{"key": "apples"}"#)),
            "apples: 5"
        );
        assert_eq!(text(&call("tally_get", r#"{"key": "pears"}"#)), "pears: 0");
        assert!(!fake::contents("default").contains_key("pears"));
    }

    #[test]
    fn list_and_reset() {
        granted();
        let empty = call("tally_list", "{}");
        assert_eq!(text(&empty), "no counters yet");
        assert_eq!(structured(&empty), &json!({"counters": []}));
        call("tally_add", r#"{"key": "pears", "by": 2}"#);
        call("tally_add", r#"{"key": "apples", "by": 3}"#);
        let listed = call("tally_list", "{}");
        assert_eq!(text(&listed), "apples: 3\npears: 2");
        assert_eq!(
            structured(&listed),
            &json!({"counters": [{"key": "apples", "total": 3}, {"key": "pears", "total": 2}]})
        );
        let reset = call("tally_reset", r#"{"key": "apples"}"#);
        assert_eq!(text(&reset), "apples: reset from 3 to 0");
        assert_eq!(structured(&reset), &json!({"key": "apples", "previous": 3}));
        assert_eq!(text(&call("tally_list", "{}")), "pears: 2");
        let again = call("tally_reset", r#"{"key": "apples"}"#);
        assert_eq!(structured(&again), &json!({"key": "apples", "previous": 0}));
    }

    #[test]
    fn set_replaces_the_total_and_tells_the_previous_one() {
        granted();
        call("tally_add", r#"{"key": "apples", "by": 3}"#);
        let set = call("tally_set", r#"{"key": "apples", "total": 10}"#);
        assert_eq!(text(&set), "apples: 10 (was 3)");
        assert_eq!(
            structured(&set),
            &json!({"key": "apples", "total": 10, "previous": 3})
        );
        assert_eq!(
            text(&call("tally_add", r#"{"key": "apples"}"#)),
            "apples: 11"
        );
        let new = call("tally_set", r#"{"key": "pears", "total": 0}"#);
        assert_eq!(structured(&new)["previous"], 0);
        assert!(call("tally_set", r#"{"key": "pears", "total": -1}"#).is_error);
    }

    #[test]
    fn bad_arguments_are_tool_errors() {
        granted();
        for arguments in [
            r#"{"key": ""}"#,
            r#"{"key": "a", "by": 1000001}"#,
            r#"{"key": "a", "by": -1}"#,
            r#"{"key": "a", "extra": 1}"#,
            r#"{"by": 1}"#,
        ] {
            let result = call("tally_add", arguments);
            assert!(result.is_error, "{arguments}");
        }
        let long = format!(r#"{{"key": "{}"}}"#, "é".repeat(257));
        assert_eq!(
            text(&call("tally_add", &long)),
            "key must be 1-256 characters, got 257"
        );
        assert!(fake::contents("default").is_empty());
    }

    #[test]
    fn without_the_grant_the_model_reads_why() {
        fake::set(fake::FakeStore::new().buckets(["other"]));
        let result = call("tally_add", r#"{"key": "apples"}"#);
        assert!(result.is_error);
        assert_eq!(
            text(&result),
            StateError::AccessDenied {
                bucket: "default".into()
            }
            .to_string()
        );
    }

    #[test]
    fn schemas_are_closed_and_outputs_declared() {
        let tools = super::__corral_tools();
        for tool in &tools {
            assert_eq!(
                tool.input_schema()["additionalProperties"],
                json!(false),
                "{}",
                tool.name()
            );
            assert_eq!(
                tool.get_output_schema().unwrap()["type"],
                "object",
                "{}",
                tool.name()
            );
        }
        let add = tools[0].input_schema();
        assert_eq!(add["required"], json!(["key"]));
        assert_eq!(add["properties"]["by"]["default"], json!(1));
        assert_eq!(add["properties"]["by"]["maximum"], json!(1_000_000));
    }
}
