//! The limits every call of a plugin runs under, and their defaults. The
//! manifest sets them; the sandbox, the output checks and validation
//! enforce them.

use std::time::Duration;

/// The limits every call of a plugin runs under.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// CPU budget, in wasmtime fuel units (roughly one per wasm instruction).
    pub fuel: u64,
    /// Linear memory across all of the instance's memories, in bytes.
    pub memory_bytes: usize,
    /// Wall-clock time for instantiation plus the call, not counting the
    /// time spent waiting for the client's answers.
    pub timeout: Duration,
    /// How long one call may wait for its client's answers (contract
    /// 0.2.0 `client.ask`), in all its asks together: a person may be
    /// filling in a form, but a waiting call holds a `concurrency` slot.
    /// Each ask waits at most what is left; once it is spent, an ask is
    /// `timed-out` at once.
    pub input_wait: Duration,
    /// When a call becomes a task (for a client that takes one), and how
    /// long a task is kept.
    pub task: corral_tool::TaskPolicy,
    /// Wall-clock time of a call that may become a task, in place of
    /// `timeout`: it goes on after its request is answered.
    pub task_timeout: Duration,
    /// Size of a call's result (content plus structured content), in bytes.
    pub output_bytes: usize,
    /// Calls of one plugin running at once; more are refused, not queued.
    /// At most half of them (at least one) may wait for their clients at
    /// once; an ask beyond that is `failed` at once.
    pub concurrency: u32,
    /// Work units checking one value (arguments, structured content)
    /// against a schema may take (see [`crate::schema`]).
    pub validation_units: u64,
    /// Heap memory the host may hold for the plugin's tool metadata: their
    /// text, and their schemas parsed and compiled.
    pub metadata_bytes: usize,
    /// Calls per second per tool (token bucket refill rate).
    pub rate: f64,
    /// Token bucket size: calls a tool may take in a burst.
    pub burst: f64,
    /// Whether `rate` and `burst` hold for each tool, or for each tool and
    /// each caller.
    pub rate_per: RatePer,
}

/// Whom a tool's rate limit counts (`[limits] rate-per`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RatePer {
    /// One bucket per tool, for every caller together (the default).
    #[default]
    Tool,
    /// One bucket per tool and principal (over authorized HTTP); calls
    /// without a principal share the tool's bucket. At most 10,000
    /// principals' buckets are kept per tool.
    Principal,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 10_000_000_000,
            memory_bytes: 256 << 20,
            timeout: Duration::from_secs(30),
            input_wait: Duration::from_secs(600),
            task: corral_tool::TaskPolicy::default(),
            task_timeout: Duration::from_secs(15 * 60),
            output_bytes: 4 << 20,
            concurrency: 32,
            validation_units: 4_000_000,
            metadata_bytes: 32 << 20,
            rate: 1000.0,
            burst: 1000.0,
            rate_per: RatePer::Tool,
        }
    }
}
