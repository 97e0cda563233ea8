//! What a plugin's manifest grants, in words, for the people who decide
//! whether to run it (`corral inspect`, `corral pull`).

use corral_sandbox::Manifest;
use corral_sandbox::units::{group_digits, human_bytes, human_duration};

/// Whether the manifest grants any authority (directories, environment
/// variables, network, a durable store): what needs a person's consent.
pub fn grants_any(manifest: &Manifest) -> bool {
    !(manifest.dirs.is_empty()
        && manifest.env_granted.is_empty()
        && manifest.http.is_none()
        && manifest.state.is_none())
}

/// The authority granted, a line each ("none: …" when there is none).
/// Every value is shown escaped: it may come from someone else's manifest,
/// and a terminal escape in it could rewrite the lines a person reads.
pub fn authority_lines(manifest: &Manifest) -> Vec<String> {
    if !grants_any(manifest) {
        return vec![
            "none: no files, no environment variables, no network, no state kept between calls"
                .into(),
        ];
    }
    let mut lines = Vec::new();
    for dir in &manifest.dirs {
        let mode = if dir.writable {
            "read-write"
        } else {
            "read-only"
        };
        lines.push(format!(
            "directory {} as {} ({mode})",
            shown(&dir.host.display().to_string()),
            shown(&dir.guest)
        ));
    }
    for name in &manifest.env_granted {
        lines.push(format!("environment variable {}", shown(name)));
    }
    if let Some(http) = &manifest.http {
        lines.push(format!(
            "outgoing HTTP to {}",
            shown(&http.allow.join(", "))
        ));
    }
    if let Some(state) = &manifest.state {
        lines.push(format!(
            "a durable key-value store (wasi:keyvalue), buckets {}, quota {}, values up to {}",
            shown(&state.buckets.join(", ")),
            human_bytes(state.quota as usize),
            human_bytes(state.value_limit as usize)
        ));
    }
    lines
}

/// The limits, on one line.
pub fn limits_line(manifest: &Manifest) -> String {
    let limits = &manifest.limits;
    format!(
        "fuel {}, memory {}, timeout {}, input wait {}, output {}, {} concurrent calls, {} calls/s per tool (burst {}); as a task after {}, for up to {}, kept {}",
        group_digits(limits.fuel),
        human_bytes(limits.memory_bytes),
        human_duration(limits.timeout),
        human_duration(limits.input_wait),
        human_bytes(limits.output_bytes),
        limits.concurrency,
        limits.rate,
        limits.burst,
        human_duration(limits.task.after),
        human_duration(limits.task_timeout),
        human_duration(limits.task.ttl),
    )
}

/// `text` with control characters (and quotes and backslashes) escaped.
pub fn shown(text: &str) -> String {
    text.chars().flat_map(char::escape_debug).collect()
}
