//! What a plugin's manifest grants, in words, for the people who decide
//! whether to run it (`corral inspect`, `corral pull`).

use corral_sandbox::Manifest;
use corral_sandbox::limits::RatePer;
use corral_sandbox::manifest::StatePer;
use corral_sandbox::units::{group_digits, human_bytes, human_duration};

/// Whether the manifest grants any authority (directories, environment
/// variables, network, a durable store): what needs a person's consent.
pub fn grants_any(manifest: &Manifest) -> bool {
    !(manifest.dirs.is_empty()
        && manifest.env_granted.is_empty()
        && manifest.http.is_none()
        && manifest.state.is_none()
        && manifest.secrets.is_empty())
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
        let whose = match state.per {
            StatePer::Plugin => "",
            StatePer::Principal => {
                " each, one store per caller over authorized HTTP (callers without a principal share the plugin's)"
            }
        };
        lines.push(format!(
            "a durable key-value store (wasi:keyvalue), buckets {}, quota {}{whose}, values up to {}",
            shown(&state.buckets.join(", ")),
            human_bytes(state.quota as usize),
            human_bytes(state.value_limit as usize)
        ));
    }
    // Names and what they are for: a value is never in a manifest.
    for secret in &manifest.secrets {
        let required = if secret.required {
            "required"
        } else {
            "optional"
        };
        let env = if secret.env {
            ", also as an environment variable"
        } else {
            ""
        };
        let per = if secret.per_principal {
            ", each user's own"
        } else {
            ""
        };
        lines.push(format!(
            "secret {} ({required}{per}{env}): {}",
            shown(&secret.name),
            shown(&secret.description)
        ));
    }
    lines
}

/// Who may reach the plugin over authorized HTTP (`[access]`), a line each:
/// the scopes of everything it offers, then each tool's. `served`: the
/// plugin's tool names, when it loaded; a tool `[access]` names that it
/// does not list is said to be so.
pub fn access_lines(manifest: &Manifest, served: Option<&[&str]>) -> Vec<String> {
    let access = &manifest.access;
    if access.is_open() {
        return vec!["anyone signed in (no scope needed; no [access] table)".into()];
    }
    let mut lines = Vec::new();
    if !access.scopes.is_empty() {
        lines.push(format!(
            "everything it offers needs scope {}",
            shown(&access.scopes.joined())
        ));
    }
    for name in access.tools.keys() {
        let listed = match served {
            Some(served) if !served.contains(&name.as_str()) => " (not listed by the plugin now)",
            _ => "",
        };
        lines.push(format!(
            "tool {} needs scope {}{listed}",
            shown(name),
            shown(&access.tool_scopes(name).joined())
        ));
    }
    lines
}

/// The limits, on one line.
pub fn limits_line(manifest: &Manifest) -> String {
    let limits = &manifest.limits;
    let per = match limits.rate_per {
        RatePer::Tool => "per tool",
        RatePer::Principal => "per tool and caller",
    };
    format!(
        "fuel {}, memory {}, timeout {}, input wait {}, output {}, {} concurrent calls, {} calls/s {per} (burst {}); as a task after {}, for up to {}, kept {}",
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn manifest(text: &str) -> Manifest {
        Manifest::parse(text, Path::new("/tmp/p.toml")).unwrap()
    }

    #[test]
    fn the_access_policy_is_shown_with_each_tools_scopes() {
        assert_eq!(
            access_lines(&manifest(""), None),
            ["anyone signed in (no scope needed; no [access] table)"]
        );
        let policy = manifest(
            "[access]\nscopes = [\"files:read\"]\ntools = { write_file = [\"files:write\"], gone = [\"x\"] }\n",
        );
        assert_eq!(
            access_lines(&policy, Some(&["read_file", "write_file"])),
            [
                "everything it offers needs scope files:read",
                "tool gone needs scope files:read x (not listed by the plugin now)",
                "tool write_file needs scope files:read files:write",
            ]
        );
    }

    #[test]
    fn per_principal_state_and_rates_are_said() {
        let m = manifest(
            "[state]\nbuckets = [\"default\"]\nper = \"principal\"\n[limits]\nrate-per = \"principal\"\n",
        );
        let lines = authority_lines(&m).join("\n");
        assert!(lines.contains("one store per caller"), "{lines}");
        assert!(limits_line(&m).contains("calls/s per tool and caller"));
        assert!(limits_line(&manifest("")).contains("calls/s per tool (burst"));
    }
}
