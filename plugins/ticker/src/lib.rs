//! Corral example plugin: slow tools that log and report progress, for
//! exercising notifications, timeouts and cancellation.

use std::thread::sleep;
use std::time::Duration;

use corral_sdk::{NoArgs, Tool, ToolError, log, plugin, progress};
use schemars::JsonSchema;
use serde::Deserialize;

/// Most countdown steps.
const MAX_STEPS: u32 = 100;
/// Longest delay between countdown steps, in milliseconds.
const MAX_DELAY_MS: u64 = 10_000;
/// Longest sleep, in milliseconds.
const MAX_SLEEP_MS: u64 = 60_000;

/// How to count down.
#[derive(Deserialize, JsonSchema)]
struct CountdownArgs {
    /// Number of steps (1-100).
    #[schemars(range(min = 1, max = 100))]
    steps: u32,
    /// Pause after each step, in milliseconds (0-10000).
    #[schemars(range(max = 10000))]
    delay_ms: u64,
}

/// How long to sleep.
#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    /// Duration in milliseconds (0-60000).
    #[schemars(range(max = 60000))]
    ms: u64,
}

fn countdown(args: CountdownArgs) -> Result<String, ToolError> {
    let CountdownArgs { steps, delay_ms } = args;
    if !(1..=MAX_STEPS).contains(&steps) {
        return Err(ToolError::new(format!(
            "steps must be between 1 and {MAX_STEPS}, got {steps}"
        )));
    }
    if delay_ms > MAX_DELAY_MS {
        return Err(ToolError::new(format!(
            "delay_ms must be at most {MAX_DELAY_MS}, got {delay_ms}"
        )));
    }
    for i in 1..=steps {
        let message = format!("step {i} of {steps} ({} to go)", steps - i);
        log::info(&message);
        progress(f64::from(i), Some(f64::from(steps)), Some(&message));
        sleep(Duration::from_millis(delay_ms));
    }
    Ok(format!("countdown finished after {steps} steps"))
}

fn sleep_tool(args: SleepArgs) -> Result<String, ToolError> {
    if args.ms > MAX_SLEEP_MS {
        return Err(ToolError::new(format!(
            "ms must be at most {MAX_SLEEP_MS}, got {}",
            args.ms
        )));
    }
    sleep(Duration::from_millis(args.ms));
    Ok(format!("slept for {} ms", args.ms))
}

fn log_levels(_: NoArgs) -> &'static str {
    log::debug("ticker: a debug message");
    log::info("ticker: an info message");
    log::warn("ticker: a warning message");
    log::error("ticker: an error message");
    "logged one message at each of debug, info, warning and error"
}

plugin! {
    Tool::new("countdown", countdown)
        .title("Countdown")
        .description(
            "Count down in steps, pausing delay_ms after each step, logging each step at \
             info level and reporting progress (done = step, total = steps). Takes about \
             steps * delay_ms milliseconds. Useful to test progress notifications and \
             logging.",
        )
        .read_only()
        .idempotent()
        .closed_world(),
    Tool::new("sleep", sleep_tool)
        .title("Sleep")
        .description(
            "Wait for ms milliseconds (at most 60000), then answer. Useful to test \
             timeouts and cancellation.",
        )
        .read_only()
        .idempotent()
        .closed_world(),
    Tool::new("log_levels", log_levels)
        .title("Log at every level")
        .description(
            "Emit one log message at each of the debug, info, warning and error levels, \
             then answer. Useful to test log level filtering.",
        )
        .read_only()
        .idempotent()
        .closed_world(),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdown_runs() {
        assert_eq!(
            countdown(CountdownArgs {
                steps: 3,
                delay_ms: 1
            })
            .unwrap(),
            "countdown finished after 3 steps"
        );
        assert!(
            countdown(CountdownArgs {
                steps: 0,
                delay_ms: 1
            })
            .is_err()
        );
        assert!(sleep_tool(SleepArgs { ms: 60_001 }).is_err());
        assert_eq!(sleep_tool(SleepArgs { ms: 1 }).unwrap(), "slept for 1 ms");
    }
}
