//! Corral example plugin: delete files that match a pattern, but only
//! after asking. It shows the two reasons a tool asks the user (plugin
//! contract 0.2.0, `corral_sdk::client`):
//!
//! - a parameter the model may leave out although the tool cannot guess it
//!   (which files?): asked with a form when missing;
//! - consent before a destructive step: asked with a confirmation, naming
//!   what will be deleted.
//!
//! Both are asked before anything is deleted, and in the same order on
//! every run: a client of MCP 2026-07-28 gets "input required" and calls
//! again with the answers, and the tool then runs again from the start.
//! When the client cannot ask the user (it did not declare elicitation),
//! the tool says so and what to do instead: pass `pattern`, and
//! `confirmed: true` once the user agreed in the conversation.
//!
//! The plugin sees only the directory its manifest grants, as `/files`:
//!
//! ```toml
//! # sweep.toml, beside sweep.wasm
//! [[dirs]]
//! host = "/home/me/scratch"
//! guest = "/files"
//! mode = "rw"
//! ```

use std::fs;
use std::path::Path;

use corral_sdk::client::{self, Elicitation};
use corral_sdk::{Tool, ToolError, plugin};
use schemars::JsonSchema;
use serde::Deserialize;

/// Where the manifest grants the directory to sweep.
const ROOT: &str = "/files";
/// The most files one call deletes: a bound on the damage of a bad pattern.
const MAX_FILES: usize = 200;
/// How many names the confirmation lists before "and N more".
const SHOWN: usize = 10;

/// What to delete.
#[derive(Deserialize, JsonSchema)]
struct SweepArgs {
    /// Which files to delete, by name: `*` matches any run of characters,
    /// `?` one character, e.g. `*.tmp` or `build-??.log`. Asked of the user
    /// when left out.
    pattern: Option<String>,
    /// True only when the user has already agreed, in the conversation, to
    /// delete exactly these files. Needed when the client cannot ask for
    /// confirmation itself.
    #[serde(default)]
    confirmed: bool,
}

/// The form that asks for a missing pattern.
#[derive(Deserialize, JsonSchema)]
struct PatternForm {
    /// Which files to delete, e.g. *.tmp (* matches anything, ? one character)
    #[schemars(length(min = 1, max = 200))]
    pattern: String,
}

fn sweep(args: SweepArgs) -> Result<String, ToolError> {
    let can_ask = client::capabilities().elicitation_form;

    // 1. The pattern: from the arguments, else from the user.
    let pattern = match args.pattern.filter(|p| !p.trim().is_empty()) {
        Some(pattern) => pattern,
        None if can_ask => match client::elicit::<PatternForm>(format!(
            "Which files in {ROOT} should be deleted?"
        ))? {
            Elicitation::Accepted(form) => form.pattern,
            Elicitation::Declined | Elicitation::Cancelled => {
                return Ok("Nothing deleted: no pattern was given.".into());
            }
        },
        None => {
            return Err(ToolError::new(
                "Which files? Pass `pattern` (e.g. \"*.tmp\"); this client cannot ask the user.",
            ));
        }
    };

    // 2. What it matches: reading is harmless, and the confirmation names it.
    let matches = matching_files(Path::new(ROOT), &pattern)?;
    if matches.is_empty() {
        return Ok(format!(
            "No file in {ROOT} matches {pattern:?}; nothing deleted."
        ));
    }
    if matches.len() > MAX_FILES {
        return Err(ToolError::new(format!(
            "{} files match {pattern:?}, more than the {MAX_FILES} one call may delete; use a narrower pattern.",
            matches.len()
        )));
    }

    // 3. Consent, before the only step with an effect.
    let question = format!(
        "Delete {} from {ROOT}? This cannot be undone.",
        describe(&matches)
    );
    let agreed = if can_ask {
        client::confirm(question)?
    } else if args.confirmed {
        true
    } else {
        return Ok(format!(
            "Nothing deleted. This client cannot ask for confirmation: ask the user \"{question}\" \
             and, if they agree, call again with confirmed: true."
        ));
    };
    if !agreed {
        return Ok("Nothing deleted: the user did not confirm.".into());
    }

    // 4. Act.
    for name in &matches {
        fs::remove_file(Path::new(ROOT).join(name))
            .map_err(|error| ToolError::new(format!("deleting {name}: {error}")))?;
    }
    Ok(format!("Deleted {}.", describe(&matches)))
}

/// The names of the regular files directly in `dir` that match `pattern`,
/// sorted so that the confirmation reads the same on every run.
fn matching_files(dir: &Path, pattern: &str) -> Result<Vec<String>, ToolError> {
    let entries = fs::read_dir(dir).map_err(|error| {
        ToolError::new(format!(
            "cannot read {}: {error} (the manifest sweep.toml must grant a directory as {ROOT}, mode \"rw\")",
            dir.display()
        ))
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        if let Some(name) = entry.file_name().to_str()
            && wildcard(pattern, name)
        {
            names.push(name.to_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// "3 files (a.tmp, b.tmp, c.tmp)", listing at most [`SHOWN`] names.
fn describe(names: &[String]) -> String {
    let shown = names[..names.len().min(SHOWN)].join(", ");
    let more = names.len().saturating_sub(SHOWN);
    let noun = if names.len() == 1 { "file" } else { "files" };
    if more > 0 {
        format!("{} {noun} ({shown} and {more} more)", names.len())
    } else {
        format!("{} {noun} ({shown})", names.len())
    }
}

/// Wildcard match: `*` any run of characters, `?` one character. Linear
/// time with backtracking to the last `*` only, so no pattern is slow.
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

plugin! {
    Tool::new("sweep_files", sweep)
        .title("Delete matching files")
        .description(
            "Delete the files whose names match a wildcard pattern in the granted directory. \
             Asks the user for the pattern when it is missing, and always for confirmation \
             (naming the files) before deleting anything.",
        )
        .destructive()
        .closed_world(),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard("*.tmp", "a.tmp"));
        assert!(wildcard("*.tmp", ".tmp"));
        assert!(!wildcard("*.tmp", "a.tmp.bak"));
        assert!(wildcard("build-??.log", "build-01.log"));
        assert!(!wildcard("build-??.log", "build-1.log"));
        assert!(wildcard("*", "anything"));
        assert!(wildcard("a*b*c", "aXbYc"));
        assert!(!wildcard("a*b*c", "aXbY"));
    }

    #[test]
    fn descriptions() {
        let names: Vec<String> = (1..=12).map(|i| format!("{i}.tmp")).collect();
        assert_eq!(describe(&names[..1]), "1 file (1.tmp)");
        assert!(describe(&names).ends_with("10.tmp and 2 more)"));
    }

    // The flows that ask: natively `/files` does not exist, so these stop
    // at the directory, after the asking this test is about.
    use corral_sdk::client::Capabilities;
    use corral_sdk::client::fake::{self, Answer, FakeClient};
    use corral_sdk::serde_json::json;
    use corral_sdk::{CallResult, Content};

    fn text(result: &CallResult) -> &str {
        match &result.content[..] {
            [Content::Text { text, .. }] => text,
            other => panic!("unexpected content {other:?}"),
        }
    }

    fn tool() -> Tool {
        Tool::new("sweep_files", sweep)
    }

    #[test]
    fn a_missing_pattern_is_asked() {
        fake::set(
            FakeClient::new().answer("elicit-1", Answer::accept(json!({"pattern": "*.tmp"}))),
        );
        let result = tool().call("{}");
        assert!(
            text(&result).starts_with("cannot read /files"),
            "{}",
            text(&result)
        );
        let asked = fake::asked();
        assert_eq!(
            asked[0].params["message"],
            "Which files in /files should be deleted?"
        );
        assert_eq!(
            asked[0].params["requestedSchema"]["required"],
            json!(["pattern"])
        );
    }

    #[test]
    fn declining_deletes_nothing() {
        fake::set(FakeClient::new().answer("elicit-1", Answer::decline()));
        assert_eq!(
            text(&tool().call("{}")),
            "Nothing deleted: no pattern was given."
        );
    }

    #[test]
    fn without_elicitation_the_pattern_is_required() {
        fake::set(FakeClient::new().capabilities(Capabilities::NONE));
        let result = tool().call("{}");
        assert!(result.is_error);
        assert!(text(&result).contains("Pass `pattern`"));
        assert!(fake::asked().is_empty());
    }
}
