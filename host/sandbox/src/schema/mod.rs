//! JSON Schema: compiling a plugin's schemas once, validating values against
//! them within a budget.
//!
//! Schemas default to draft 2020-12 (the MCP default) unless they name another
//! draft in `$schema`. No remote `$ref` is ever fetched: a schema that needs one
//! does not compile.
//!
//! A schema comes from a plugin and a value from a client or a plugin, so
//! neither may make the host work without bound:
//! - the schema's shape is checked when it is compiled (`graph`): no
//!   reference that loops without descending into the value, no references
//!   that expand exponentially;
//! - each value's cost is counted on that shape before the validator runs,
//!   and a value over its budget is refused unvalidated ([`Schema::cost`]);
//! - `pattern` uses a regex engine that runs in linear time (no lookaround or
//!   backreferences), with a cap on each compiled pattern's size;
//! - violation lists are capped in count and in the length of each message.

mod graph;

use std::fmt::{self, Write as _};

use serde_json::Value;

pub use graph::{MAX_EXPANSION, MAX_IN_PLACE_DEPTH, OverBudget, ShapeError};

/// The most violations listed for one value; the rest are counted.
pub const MAX_LISTED: usize = 20;

/// The longest violation message, in bytes: a message quotes the value, and
/// the value may be megabytes.
pub const MAX_MESSAGE_BYTES: usize = 300;

/// Values costing more than this are not searched for every violation: the
/// first one is reported, and the list would take memory in proportion.
const LISTABLE_UNITS: u64 = 100_000;

/// The largest compiled `pattern`, in bytes (the regex crate's measure).
const MAX_PATTERN_BYTES: usize = 256 * 1024;

/// The lazy DFA cache of one compiled `pattern`, in bytes.
const PATTERN_CACHE_BYTES: usize = 256 * 1024;

/// A compiled schema, cheap to share between calls.
#[derive(Debug)]
pub struct Schema {
    validator: jsonschema::Validator,
    graph: graph::Graph,
}

/// One way a value failed its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value ("" for the root).
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", shown_pointer(&self.pointer), self.message)
    }
}

/// A JSON pointer as messages show it: the root ("") as `/`.
fn shown_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}

/// The violations of a value that failed its schema, as many as are listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violations {
    /// The first [`MAX_LISTED`] violations.
    pub listed: Vec<Violation>,
    /// What was not listed.
    pub unlisted: Unlisted,
}

/// The violations not in a [`Violations`] list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlisted {
    /// This many more.
    More(usize),
    /// Not looked for: the value is too large to search it for them all.
    NotSearched,
}

/// Why a schema does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// The schema is not a JSON object.
    NotAnObject,
    /// The schema does not have `"type": "object"`.
    NotAnObjectSchema,
    /// The schema is not valid JSON Schema: the validator's reason, cut to
    /// [`MAX_MESSAGE_BYTES`].
    Invalid(String),
    /// The schema is valid, but its shape cannot be validated within budgets.
    Shape(ShapeError),
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::NotAnObject => f.write_str("the schema must be a JSON object"),
            SchemaError::NotAnObjectSchema => {
                f.write_str("the schema must have \"type\": \"object\"")
            }
            SchemaError::Invalid(reason) => write!(f, "not a valid JSON Schema: {reason}"),
            SchemaError::Shape(shape) => shape.fmt(f),
        }
    }
}

impl std::error::Error for SchemaError {}

impl Schema {
    /// Compiles `schema`, which must be a JSON object describing an object
    /// (`"type": "object"`), as MCP requires of input and output schemas,
    /// and whose shape can be validated within budgets.
    pub fn compile_object_schema(schema: &Value) -> Result<Schema, SchemaError> {
        let object = schema.as_object().ok_or(SchemaError::NotAnObject)?;
        if object.get("type") != Some(&Value::String("object".into())) {
            return Err(SchemaError::NotAnObjectSchema);
        }
        let patterns = jsonschema::PatternOptions::regex()
            .size_limit(MAX_PATTERN_BYTES)
            .dfa_size_limit(PATTERN_CACHE_BYTES);
        let validator = jsonschema::options()
            .with_pattern_options(patterns)
            .build(schema)
            .map_err(|err| SchemaError::Invalid(bounded(&err)))?;
        let graph = graph::Graph::build(schema).map_err(SchemaError::Shape)?;
        Ok(Schema { validator, graph })
    }

    /// The work units validating `value` may take (see `graph`), or
    /// [`OverBudget`] once they pass `budget`. Costs at most `budget` steps.
    pub fn cost(&self, value: &Value, budget: u64) -> Result<u64, OverBudget> {
        self.graph.cost(value, budget)
    }

    /// Validates `value`, whose [`Schema::cost`] is `cost`.
    pub fn check(&self, value: &Value, cost: u64) -> Result<(), Violations> {
        if self.validator.is_valid(value) {
            return Ok(());
        }
        let to_violation = |err: jsonschema::ValidationError<'_>| Violation {
            pointer: bounded(err.instance_path()),
            message: match err.kind() {
                // The validator names two values and counts the rest ("or 12
                // other candidates"): a model needs them all to retry.
                jsonschema::error::ValidationErrorKind::Enum { options } => bounded(&NotAllowed {
                    value: err.instance(),
                    allowed: options,
                }),
                _ => bounded(&err),
            },
        };
        if cost > LISTABLE_UNITS {
            let listed = self.validator.validate(value).err().map(to_violation);
            return Err(Violations {
                listed: listed.into_iter().collect(),
                unlisted: Unlisted::NotSearched,
            });
        }
        let mut errors = self.validator.iter_errors(value);
        let listed: Vec<Violation> = errors.by_ref().take(MAX_LISTED).map(to_violation).collect();
        Err(Violations {
            listed,
            unlisted: Unlisted::More(errors.count()),
        })
    }
}

impl std::error::Error for Violations {}

impl fmt::Display for Violations {
    /// One line each, for a tool execution error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lines = self.listed.iter();
        if let Some(first) = lines.next() {
            write!(f, "- {first}")?;
        }
        for violation in lines {
            write!(f, "\n- {violation}")?;
        }
        match self.unlisted {
            Unlisted::More(0) => Ok(()),
            Unlisted::More(more) => write!(f, "\n- and {more} more"),
            Unlisted::NotSearched => f.write_str(
                "\n- (only the first violation is listed: the value is too large to search for them all)",
            ),
        }
    }
}

/// An `enum` violation, listing the allowed values (as far as the message
/// bound lets it: the count comes first, so a cut list still says it is
/// one).
struct NotAllowed<'a> {
    value: &'a Value,
    allowed: &'a Value,
}

impl fmt::Display for NotAllowed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let allowed = self
            .allowed
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        write!(
            f,
            "{} is not one of the {} allowed values: ",
            self.value,
            allowed.len()
        )?;
        for (i, option) in allowed.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{option}")?;
        }
        Ok(())
    }
}

/// `item` formatted, cut to [`MAX_MESSAGE_BYTES`] as it is written, so that
/// a message quoting a huge value never takes more.
fn bounded(item: &dyn fmt::Display) -> String {
    let mut out = Bounded(String::new());
    if write!(out, "{item}").is_err() {
        out.0.push('…');
    }
    out.0
}

/// A string that refuses to grow past [`MAX_MESSAGE_BYTES`].
struct Bounded(String);

impl fmt::Write for Bounded {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let room = MAX_MESSAGE_BYTES - self.0.len();
        if text.len() <= room {
            self.0.push_str(text);
            return Ok(());
        }
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.0.push_str(&text[..end]);
        Err(fmt::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::{Duration, Instant};

    const BUDGET: u64 = 1_000_000;

    fn compile(schema: Value) -> Schema {
        Schema::compile_object_schema(&schema).unwrap()
    }

    fn violations(schema: &Schema, value: &Value) -> Vec<Violation> {
        let cost = schema.cost(value, BUDGET).unwrap();
        match schema.check(value, cost) {
            Ok(()) => vec![],
            Err(violations) => violations.listed,
        }
    }

    #[test]
    fn reports_every_violation_with_its_pointer() {
        let schema = compile(json!({
            "type": "object",
            "properties": {
                "a": { "type": "number" },
                "items": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["a", "b"]
        }));
        let violations = violations(&schema, &json!({ "a": "x", "items": ["ok", 3] }));
        let pointers: Vec<_> = violations.iter().map(|v| v.pointer.as_str()).collect();
        assert!(pointers.contains(&"/a"), "{violations:?}");
        assert!(pointers.contains(&"/items/1"), "{violations:?}");
        assert!(pointers.contains(&""), "missing b: {violations:?}");
        assert_eq!(violations.len(), 3);
        assert!(self::violations(&schema, &json!({ "a": 1, "b": 0 })).is_empty());
    }

    #[test]
    fn rejects_schemas_that_are_not_object_schemas() {
        for bad in [
            json!(null),
            json!(true),
            json!({ "type": "string" }),
            json!({ "properties": {} }),
            json!({ "type": "object", "properties": { "a": { "type": "nope" } } }),
            json!({ "type": "object", "minProperties": -1 }),
        ] {
            assert!(Schema::compile_object_schema(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults_to_2020_12_and_honours_other_drafts() {
        // prefixItems exists only in 2020-12.
        let schema = compile(json!({
            "type": "object",
            "properties": { "t": { "type": "array", "prefixItems": [{ "type": "number" }] } }
        }));
        assert_eq!(violations(&schema, &json!({ "t": ["x"] })).len(), 1);
        let draft7 = compile(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": { "a": { "type": "number" } }
        }));
        assert_eq!(violations(&draft7, &json!({ "a": "x" })).len(), 1);
    }

    /// `d0: anyOf [d1, d1]`, `d1: anyOf [d2, d2]`, ... as in the attack
    /// that took 6.4 GB and 32 s for one value at depth 22.
    fn doubling(depth: usize, combinator: &str) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..depth {
            let next = json!({ "$ref": format!("#/$defs/d{}", i + 1) });
            defs.insert(format!("d{i}"), json!({ combinator: [next.clone(), next] }));
        }
        defs.insert(format!("d{depth}"), json!({ "type": "integer" }));
        json!({
            "type": "object",
            "properties": { "x": { "$ref": "#/$defs/d0" } },
            "$defs": defs
        })
    }

    #[test]
    fn references_that_expand_exponentially_are_refused_naming_where() {
        for combinator in ["anyOf", "allOf", "oneOf"] {
            let err = Schema::compile_object_schema(&doubling(22, combinator))
                .unwrap_err()
                .to_string();
            // d7 expands to 2^17 - 3 subschemas, d8 to 2^16 - 3: d7 is where
            // the expansion passes the limit.
            assert!(
                err.starts_with("at /$defs/d7: its references expand to more than 100000"),
                "{err}"
            );
        }
        // Shallow sharing is fine.
        let schema = compile(doubling(6, "anyOf"));
        assert!(violations(&schema, &json!({ "x": 1 })).is_empty());
        assert!(!violations(&schema, &json!({ "x": "no" })).is_empty());
    }

    #[test]
    fn references_that_loop_without_descending_are_refused() {
        let err = Schema::compile_object_schema(&json!({
            "type": "object",
            "$defs": {
                "a": { "allOf": [{ "$ref": "#/$defs/b" }] },
                "b": { "anyOf": [{ "$ref": "#/$defs/a" }, { "type": "string" }] }
            },
            "properties": { "x": { "$ref": "#/$defs/a" } }
        }))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("loops back to this subschema without descending"),
            "{err}"
        );
        assert!(err.starts_with("at /$defs/"), "{err}");
    }

    #[test]
    fn recursion_through_the_value_is_fine_and_costs_what_the_value_holds() {
        let tree = compile(json!({
            "type": "object",
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "value": { "type": "integer" },
                        "children": { "type": "array", "items": { "$ref": "#/$defs/node" } }
                    }
                }
            },
            "properties": { "root": { "$ref": "#/$defs/node" } }
        }));
        let leaf = json!({ "value": 1, "children": [] });
        let value = json!({ "root": { "value": 0, "children": [leaf.clone(), leaf] } });
        assert!(violations(&tree, &value).is_empty());
        let small = tree.cost(&value, BUDGET).unwrap();
        assert!(small < 50, "{small}");
    }

    #[test]
    fn a_value_that_would_cost_too_much_is_refused_before_validation() {
        // Each level of the value doubles the subschemas applied to the next.
        let schema = compile(json!({
            "type": "object",
            "$defs": {
                "d": {
                    "type": "object",
                    "properties": { "x": { "allOf": [{ "$ref": "#/$defs/d" }, { "$ref": "#/$defs/d" }] } }
                }
            },
            "properties": { "x": { "$ref": "#/$defs/d" } }
        }));
        let mut value = json!(1);
        for _ in 0..60 {
            value = json!({ "x": value });
        }
        let started = Instant::now();
        assert_eq!(schema.cost(&value, BUDGET), Err(OverBudget));
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn enum_violations_list_every_allowed_value_within_the_bound() {
        let units: Vec<String> = (0..14).map(|i| format!("unit{i}")).collect();
        let schema = compile(json!({
            "type": "object",
            "properties": { "unit": { "enum": units } },
        }));
        let value = json!({ "unit": "furlong" });
        let err = schema.check(&value, 10).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "- /unit: \"furlong\" is not one of the 14 allowed values: {}",
                units
                    .iter()
                    .map(|u| format!("\"{u}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
        let many: Vec<String> = (0..1000).map(|i| format!("value-{i}")).collect();
        let schema = compile(json!({
            "type": "object",
            "properties": { "v": { "enum": many } },
        }));
        let err = schema.check(&json!({ "v": "x" }), 10).unwrap_err();
        assert!(
            err.to_string().contains("1000 allowed values: \"value-0\""),
            "{err}"
        );
        assert!(err.to_string().len() < MAX_MESSAGE_BYTES + 20, "{err}");
    }

    #[test]
    fn violation_lists_are_capped_in_count_and_message_length() {
        let schema = compile(json!({
            "type": "object",
            "properties": { "list": { "type": "array", "items": { "type": "integer" } } }
        }));
        let long = "x".repeat(1 << 20);
        let value = json!({ "list": vec![long; 50] });
        let cost = schema.cost(&value, u64::MAX).unwrap();
        let violations = schema.check(&value, cost).unwrap_err();
        assert_eq!(violations.listed.len(), MAX_LISTED);
        assert_eq!(violations.unlisted, Unlisted::More(30));
        let text = violations.to_string();
        assert!(
            text.len() < MAX_LISTED * (MAX_MESSAGE_BYTES + 20) + 50,
            "{}",
            text.len()
        );
        assert!(text.ends_with("- and 30 more"), "{text}");
        assert!(text.contains("…"), "{text}");
    }

    #[test]
    fn large_values_report_their_first_violation_only() {
        let schema = compile(json!({
            "type": "object",
            "properties": { "list": { "type": "array", "items": { "type": "string" } } }
        }));
        let value = json!({ "list": vec![1; 200_000] });
        let cost = schema.cost(&value, u64::MAX).unwrap();
        assert!(cost > LISTABLE_UNITS);
        let violations = schema.check(&value, cost).unwrap_err();
        assert_eq!(violations.listed.len(), 1);
        assert_eq!(violations.unlisted, Unlisted::NotSearched);
    }

    #[test]
    fn patterns_run_in_linear_time_and_lookaround_is_refused() {
        let schema = compile(json!({
            "type": "object",
            "properties": { "s": { "type": "array", "items": { "type": "string", "pattern": "^(a+)+$" } } }
        }));
        let evil: Vec<String> = (0..500)
            .map(|i| format!("{}!{i}", "a".repeat(1_000)))
            .collect();
        let value = json!({ "s": evil });
        let started = Instant::now();
        let cost = schema.cost(&value, BUDGET).unwrap();
        let violations = schema.check(&value, cost).unwrap_err();
        assert_eq!(violations.unlisted, Unlisted::More(500 - MAX_LISTED));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        let err = Schema::compile_object_schema(&json!({
            "type": "object",
            "properties": { "p": { "type": "string", "pattern": "^(?=.*[0-9]).+$" } }
        }))
        .unwrap_err()
        .to_string();
        assert!(err.contains("not a valid JSON Schema"), "{err}");
    }

    #[test]
    fn references_resolve_by_pointer_anchor_and_id() {
        let schema = compile(json!({
            "$id": "https://example.com/root.json",
            "type": "object",
            "$defs": {
                "anchored": { "$anchor": "num", "type": "number" },
                "other": { "$id": "other.json", "type": "string" }
            },
            "properties": {
                "a": { "$ref": "#num" },
                "b": { "$ref": "other.json" },
                "c": { "$ref": "#/$defs/anchored" },
                "d": { "$ref": "#/$defs/other" }
            }
        }));
        assert!(violations(&schema, &json!({ "a": 1, "b": "x", "c": 2, "d": "y" })).is_empty());
        assert_eq!(
            violations(&schema, &json!({ "a": "1", "b": 2, "c": "2", "d": 3 })).len(),
            4
        );
        let err = Schema::compile_object_schema(&json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/missing" } }
        }))
        .unwrap_err();
        assert!(!err.to_string().is_empty());
    }
}
