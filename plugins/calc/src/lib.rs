//! Corral example plugin: basic arithmetic on two numbers. The smallest
//! plugin, used for latency measurements.

use corral_sdk::{Tool, ToolError, plugin};
use schemars::JsonSchema;
use serde::Deserialize;

/// Two operands.
#[derive(Deserialize, JsonSchema)]
struct Pair {
    /// The left operand.
    a: f64,
    /// The right operand.
    b: f64,
}

/// A base and an exponent.
#[derive(Deserialize, JsonSchema)]
struct Power {
    /// The base.
    base: f64,
    /// The exponent; may be negative or fractional.
    exponent: f64,
}

/// One number.
#[derive(Deserialize, JsonSchema)]
struct Single {
    /// The number to take the square root of; must not be negative.
    x: f64,
}

/// Results that overflow (or are otherwise not real numbers) are errors
/// rather than `inf`/`NaN` text.
fn finite(value: f64) -> Result<f64, ToolError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(ToolError::new(format!(
            "the result is not a finite number ({value}); use smaller operands"
        )))
    }
}

fn add(p: Pair) -> Result<f64, ToolError> {
    finite(p.a + p.b)
}

fn subtract(p: Pair) -> Result<f64, ToolError> {
    finite(p.a - p.b)
}

fn multiply(p: Pair) -> Result<f64, ToolError> {
    finite(p.a * p.b)
}

fn divide(p: Pair) -> Result<f64, ToolError> {
    if p.b == 0.0 {
        return Err(ToolError::new("cannot divide by zero: b must not be 0"));
    }
    finite(p.a / p.b)
}

fn power(p: Power) -> Result<f64, ToolError> {
    finite(p.base.powf(p.exponent))
}

fn sqrt(s: Single) -> Result<f64, ToolError> {
    if s.x < 0.0 {
        return Err(ToolError::new(format!(
            "cannot take the square root of a negative number ({})",
            s.x
        )));
    }
    finite(s.x.sqrt())
}

/// All calc tools do pure arithmetic.
fn arithmetic<A, R, F>(name: &'static str, description: &'static str, f: F) -> Tool
where
    A: serde::de::DeserializeOwned + JsonSchema,
    R: corral_sdk::IntoToolResult,
    F: Fn(A) -> R + 'static,
{
    Tool::new(name, f)
        .description(description)
        .read_only()
        .idempotent()
        .closed_world()
}

plugin! {
    arithmetic("add", "Add two numbers: returns a + b as text.", add),
    arithmetic("subtract", "Subtract b from a: returns a - b as text.", subtract),
    arithmetic("multiply", "Multiply two numbers: returns a * b as text.", multiply),
    arithmetic(
        "divide",
        "Divide a by b: returns a / b as text. Fails if b is 0.",
        divide,
    ),
    arithmetic(
        "power",
        "Raise base to the power exponent: returns base^exponent as text. \
         Fails if the result is not a finite real number (e.g. a negative base \
         with a fractional exponent, or an overflow).",
        power,
    ),
    arithmetic(
        "sqrt",
        "Square root of x: returns the non-negative root as text. Fails if x is negative.",
        sqrt,
    ),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_work() {
        let tools = __corral_tools();
        let call = |name: &str, args: &str| {
            let tool = tools.iter().find(|t| t.name() == name).unwrap();
            let result = tool.call(args);
            let corral_sdk::Content::Text { text, .. } = &result.content[0] else {
                panic!("not text")
            };
            (result.is_error, text.clone())
        };
        assert_eq!(call("add", r#"{"a":2,"b":3}"#), (false, "5".into()));
        assert_eq!(call("subtract", r#"{"a":2,"b":3}"#), (false, "-1".into()));
        assert_eq!(call("multiply", r#"{"a":2,"b":3.5}"#), (false, "7".into()));
        assert_eq!(call("divide", r#"{"a":1,"b":4}"#), (false, "0.25".into()));
        assert!(call("divide", r#"{"a":1,"b":0}"#).0);
        assert_eq!(
            call("power", r#"{"base":2,"exponent":10}"#),
            (false, "1024".into())
        );
        assert!(call("power", r#"{"base":10,"exponent":400}"#).0);
        assert_eq!(call("sqrt", r#"{"x":2.25}"#), (false, "1.5".into()));
        assert!(call("sqrt", r#"{"x":-1}"#).0);
    }
}
