//! A hostile plugin for the state store (`wasi:keyvalue` through
//! `corral_sdk::state`): each tool pushes one grant or limit of the host's
//! until it gives, so that the end-to-end tests can prove the host refuses
//! and goes on serving. It has no manifest of its own: the tests write one.
//!
//! The attacks (`many_keys`, `huge_value`, `list_forever`, `open`,
//! `set_many`, `get_many`) report the host's refusal as the text of a
//! successful result, so that tests can read exactly what the host said;
//! the plain accessors (`get`, `set`, `increment`) end with a tool error
//! carrying it. Every tool but `open` uses the bucket `default` unless told
//! otherwise.

use corral_sdk::state::{Bucket, StateError};
use corral_sdk::{NoArgs, Tool, ToolError, plugin};
use schemars::JsonSchema;
use serde::Deserialize;

const DEFAULT: &str = "default";

fn default_bucket() -> String {
    DEFAULT.into()
}

/// How many keys.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Count {
    /// The number of keys.
    count: u64,
}

/// How large a value.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Bytes {
    /// The size of the value, in bytes.
    bytes: u64,
}

/// A bucket's name.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BucketArg {
    /// The bucket to open.
    bucket: String,
}

/// A key.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct KeyArg {
    /// The key.
    key: String,
    /// The bucket (default `default`).
    #[serde(default = "default_bucket")]
    bucket: String,
}

/// A key and its value.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct KeyValue {
    /// The key.
    key: String,
    /// The value, stored as its UTF-8 bytes.
    value: String,
    /// The bucket (default `default`).
    #[serde(default = "default_bucket")]
    bucket: String,
}

/// A counter and a step.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Step {
    /// The counter's key.
    key: String,
    /// What to add.
    delta: u64,
}

/// A batch: `count` keys `k0`, `k1`, ... with values of `bytes` bytes.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Batch {
    /// The number of keys.
    count: u64,
    /// The size of each value, in bytes.
    #[serde(default)]
    bytes: u64,
}

fn default() -> Result<Bucket, StateError> {
    Bucket::open(DEFAULT)
}

/// `k0`, `k1`, ...: the keys of `many_keys` and the batches.
fn key(i: u64) -> String {
    format!("k{i}")
}

/// Sets `count` small keys one by one until the host refuses one.
fn many_keys(args: Count) -> Result<String, ToolError> {
    let bucket = default()?;
    for i in 0..args.count {
        if let Err(error) = bucket.set_bytes(&key(i), b"x") {
            return Ok(format!("{i} set, then: {error}"));
        }
    }
    Ok(format!("{} set", args.count))
}

/// One value of `bytes` bytes.
fn huge_value(args: Bytes) -> Result<String, ToolError> {
    let bucket = default()?;
    let value = vec![b'x'; usize::try_from(args.bytes)?];
    Ok(match bucket.set_bytes("huge", &value) {
        Ok(()) => "ok".into(),
        Err(error) => error.to_string(),
    })
}

/// Lists keys page after page, from the first again after the last, until
/// the host stops it.
fn list_forever(_: NoArgs) -> Result<String, ToolError> {
    let bucket = default()?;
    let mut cursor = None;
    loop {
        match bucket.keys_page(cursor) {
            Ok(page) => cursor = page.cursor,
            Err(error) => return Ok(error.to_string()),
        }
    }
}

/// Opens a bucket.
fn open(args: BucketArg) -> String {
    match Bucket::open(&args.bucket) {
        Ok(_) => "ok".into(),
        Err(error) => error.to_string(),
    }
}

/// Reads a value as text: "(not set)" when there is none.
fn get(args: KeyArg) -> Result<String, ToolError> {
    let value = Bucket::open(&args.bucket)?.get_bytes(&args.key)?;
    Ok(value.map_or_else(
        || "(not set)".into(),
        |bytes| String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

/// Stores a text value.
fn set(args: KeyValue) -> Result<String, ToolError> {
    Bucket::open(&args.bucket)?.set_bytes(&args.key, args.value.as_bytes())?;
    Ok("ok".into())
}

/// Adds to a counter; the new total.
fn increment(args: Step) -> Result<u64, ToolError> {
    Ok(default()?.increment(&args.key, args.delta)?)
}

/// One `set-many` of `count` keys with values of `bytes` bytes.
fn set_many(args: Batch) -> Result<String, ToolError> {
    let bucket = default()?;
    let value = vec![b'x'; usize::try_from(args.bytes)?];
    let entries = (0..args.count).map(|i| (key(i), value.as_slice()));
    Ok(match bucket.set_many_bytes(entries) {
        Ok(()) => "ok".into(),
        Err(error) => error.to_string(),
    })
}

/// One `get-many` of `count` keys: how many were found.
fn get_many(args: Count) -> Result<String, ToolError> {
    let bucket = default()?;
    Ok(match bucket.get_many_bytes((0..args.count).map(key)) {
        Ok(values) => format!("{} found", values.iter().flatten().count()),
        Err(error) => error.to_string(),
    })
}

plugin! {
    Tool::new("many_keys", many_keys)
        .description("Set `count` keys k0, k1, ... to \"x\" one by one until the host refuses; returns how many were set and the refusal."),
    Tool::new("huge_value", huge_value)
        .description("Set key `huge` to a value of `bytes` bytes; returns \"ok\" or the refusal."),
    Tool::new("list_forever", list_forever)
        .description("List the keys page after page, starting over after the last, until the host stops it; returns the refusal."),
    Tool::new("open", open)
        .description("Open `bucket`; returns \"ok\" or the refusal."),
    Tool::new("get", get)
        .description("The value of `key` as text, or \"(not set)\"."),
    Tool::new("set", set)
        .description("Set `key` to `value` (its UTF-8 bytes); returns \"ok\"."),
    Tool::new("increment", increment)
        .description("Add `delta` to counter `key`; returns the new total."),
    Tool::new("set_many", set_many)
        .description("One set-many of `count` keys k0, k1, ... with values of `bytes` bytes; returns \"ok\" or the refusal."),
    Tool::new("get_many", get_many)
        .description("One get-many of `count` keys k0, k1, ...; returns \"N found\" or the refusal."),
}
