//! Checking a value against one of a tool's schemas within the plugin's
//! validation budget, without holding up the async workers.
//!
//! Counting a value's cost costs at most the budget itself, and most values
//! (a call's arguments, a small structured result) cost a few dozen units:
//! those are checked on the spot. A value past [`INLINE_UNITS`] is counted
//! and checked on a blocking thread, one such value at a time for the whole
//! server, so that heavy validations neither stall the workers that answer
//! `ping` nor take every core at once.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::Semaphore;

use crate::schema::{OverBudget, Schema, Violations};
use crate::units::group_digits;

/// Values that cost at most this many work units are checked where the
/// call runs (a few hundred microseconds at most).
const INLINE_UNITS: u64 = 20_000;

/// Why a value was not accepted.
#[derive(Debug)]
pub enum Rejection {
    /// It breaks the schema.
    Violations(Violations),
    /// Checking it would cost more than the budget, in work units: it was not checked.
    OverBudget(u64),
}

impl fmt::Display for Rejection {
    /// The rejection alone; a call's messages say which value and which
    /// schema.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Violations(violations) => {
                write!(f, "the value does not match the schema:\n{violations}")
            }
            Rejection::OverBudget(units) => write!(
                f,
                "checking the value against the schema would take more than the validation budget of {} work units",
                group_digits(*units)
            ),
        }
    }
}

impl std::error::Error for Rejection {}

/// Checks `value` against `schema` within `budget` work units; hands the
/// value back with the verdict. `heavy` admits the values checked off the
/// async workers.
pub async fn validate(
    schema: &Arc<Schema>,
    value: Value,
    budget: u64,
    heavy: &Semaphore,
) -> (Value, Result<(), Rejection>) {
    match schema.cost(&value, budget.min(INLINE_UNITS)) {
        Ok(cost) => {
            let verdict = schema.check(&value, cost).map_err(Rejection::Violations);
            (value, verdict)
        }
        Err(OverBudget) if budget <= INLINE_UNITS => (value, Err(Rejection::OverBudget(budget))),
        // Boxed: the common case above should not carry this path's state
        // in every call's future.
        Err(OverBudget) => Box::pin(validate_off_workers(schema, value, budget, heavy)).await,
    }
}

/// Counts and checks `value` on a blocking thread, once `heavy` admits it.
async fn validate_off_workers(
    schema: &Arc<Schema>,
    value: Value,
    budget: u64,
    heavy: &Semaphore,
) -> (Value, Result<(), Rejection>) {
    let _permit = heavy
        .acquire()
        .await
        .expect("the semaphore is never closed");
    let schema = schema.clone();
    let checked = tokio::task::spawn_blocking(move || {
        let verdict = match schema.cost(&value, budget) {
            Ok(cost) => schema.check(&value, cost).map_err(Rejection::Violations),
            Err(OverBudget) => Err(Rejection::OverBudget(budget)),
        };
        (value, verdict)
    });
    match checked.await {
        Ok(checked) => checked,
        Err(err) => std::panic::resume_unwind(err.into_panic()),
    }
}
