//! The import gate: what a component asks for, and whether it may have it.
//!
//! A component is refused at load when it imports an interface the host does
//! not provide, or one its manifest does not grant (`wasi:http` without an
//! `[http]` grant). Everything else a plugin may import is harmless without a
//! grant: the filesystem shows only granted directories, sockets refuse every
//! connection, the environment holds only granted variables.

use std::fmt;

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::bindings::{Contract, SUPPORTED};
use crate::manifest::Manifest;

/// What the host does with one import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Provided to every plugin; the text says what the plugin gets.
    Provided(&'static str),
    /// Provided only with the named manifest grant.
    NeedsGrant { grant: &'static str, granted: bool },
    /// The host has no such interface.
    Unknown,
}

impl Verdict {
    pub fn allowed(&self) -> bool {
        match self {
            Verdict::Provided(_) => true,
            Verdict::NeedsGrant { granted, .. } => *granted,
            Verdict::Unknown => false,
        }
    }
}

/// Every import of `component` with its verdict under `manifest`.
pub fn review(
    engine: &Engine,
    component: &Component,
    manifest: &Manifest,
) -> Vec<(String, Verdict)> {
    component
        .component_type()
        .imports(engine)
        .map(|(name, _)| (name.to_string(), verdict(name, manifest)))
        .collect()
}

/// Refuses the component when any of its imports is not allowed.
pub fn check(
    engine: &Engine,
    component: &Component,
    manifest: &Manifest,
) -> Result<(), RefusedImports> {
    let refused: Vec<(String, Verdict)> = review(engine, component, manifest)
        .into_iter()
        .filter(|(_, verdict)| !verdict.allowed())
        .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(RefusedImports { refused })
    }
}

/// The imports a component was refused for, each with its verdict (never
/// empty). The message names each and what would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedImports {
    pub refused: Vec<(String, Verdict)>,
}

impl fmt::Display for RefusedImports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, verdict)) in self.refused.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            match verdict {
                Verdict::NeedsGrant { grant, .. } => write!(
                    f,
                    "imports `{name}`, which needs a grant in its manifest: {grant}"
                )?,
                _ => write!(f, "imports `{name}`, which Corral does not provide")?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for RefusedImports {}

fn verdict(name: &str, manifest: &Manifest) -> Verdict {
    let interface = name.split('@').next().unwrap_or(name);
    let provided = |what| Verdict::Provided(what);
    match interface {
        // The contract's interfaces, of the versions that have them.
        "corral:plugin/host"
        | "corral:plugin/types"
        | "corral:plugin/client"
        | "corral:plugin/icons"
            if !contract_has(name) =>
        {
            Verdict::Unknown
        }
        "corral:plugin/host" => provided(
            "log and progress, to the client and the host log; from 0.3.0, tools-changed (its tools are listed again, at most once a second)",
        ),
        "corral:plugin/types" | "corral:plugin/icons" => provided("the plugin contract's types"),
        "corral:plugin/client" => provided(
            "asks the call's client only what it declared (elicitation, sampling, roots); bounded in size and count, waiting at most the input-wait limit",
        ),
        "wasi:cli/stdout" | "wasi:cli/stderr" => {
            provided("captured, capped, and sent to the host log")
        }
        "wasi:cli/stdin" => provided("always empty"),
        "wasi:cli/environment" => provided("only the variables granted in [env]; no arguments"),
        "wasi:cli/exit" => provided("ends the call with an error"),
        _ if interface.starts_with("wasi:cli/terminal-") => provided("never a terminal"),
        _ if interface.starts_with("wasi:io/") => provided("streams and polling"),
        _ if interface.starts_with("wasi:clocks/") => provided("wall and monotonic clocks"),
        _ if interface.starts_with("wasi:random/") => provided("random numbers"),
        _ if interface.starts_with("wasi:filesystem/") => {
            provided("only the directories granted in [[dirs]]")
        }
        _ if interface.starts_with("wasi:sockets/") => provided(
            "every connection and lookup refused: network access is HTTP only, granted in [http]",
        ),
        _ if interface.starts_with("wasi:http/") => Verdict::NeedsGrant {
            grant: "[http] allow = [\"host.example.com\"]",
            granted: manifest.http.is_some(),
        },
        "wasi:keyvalue/store" | "wasi:keyvalue/atomics" | "wasi:keyvalue/batch"
            if name.ends_with("@0.2.0-draft") =>
        {
            Verdict::NeedsGrant {
                grant: "[state] buckets = [\"default\"]",
                granted: manifest.state.is_some(),
            }
        }
        "wasi:config/store" if name.ends_with("@0.2.0-draft") => Verdict::NeedsGrant {
            grant: "[secrets] NAME = { description = \"what it is for\" }",
            granted: !manifest.secrets.is_empty(),
        },
        _ => Verdict::Unknown,
    }
}

/// Whether a contract version the host serves has the interface `name`
/// (`corral:plugin/client@0.2.0`); `client` is new in 0.2.0.
fn contract_has(name: &str) -> bool {
    let Some((interface, version)) = name.split_once('@') else {
        return false;
    };
    SUPPORTED
        .iter()
        .any(|contract| contract.version() == version)
        && !(interface == "corral:plugin/client" && version == Contract::V0_1.version())
        && !(interface == "corral:plugin/icons" && version != Contract::V0_3.version())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyvalue_needs_a_state_grant() {
        let granted =
            Manifest::parse("[state]\nbuckets = [\"default\"]\n", "p.toml".as_ref()).unwrap();
        for interface in ["store", "atomics", "batch"] {
            let name = format!("wasi:keyvalue/{interface}@0.2.0-draft");
            let refused = verdict(&name, &Manifest::default());
            assert!(!refused.allowed());
            assert!(verdict(&name, &granted).allowed());
        }
        // Another version of the interfaces is not what the host provides.
        assert_eq!(
            verdict("wasi:keyvalue/store@0.2.0", &granted),
            Verdict::Unknown
        );
        assert_eq!(
            verdict("wasi:keyvalue/watcher@0.2.0-draft", &granted),
            Verdict::Unknown
        );
    }

    #[test]
    fn config_needs_a_secrets_grant() {
        let granted = Manifest::parse(
            "[secrets]\nTOKEN = { description = \"d\" }\n",
            "p.toml".as_ref(),
        )
        .unwrap();
        let name = "wasi:config/store@0.2.0-draft";
        let refused = RefusedImports {
            refused: vec![(name.into(), verdict(name, &Manifest::default()))],
        };
        assert_eq!(
            refused.to_string(),
            "imports `wasi:config/store@0.2.0-draft`, which needs a grant in its manifest: [secrets] NAME = { description = \"what it is for\" }"
        );
        assert!(verdict(name, &granted).allowed());
        assert_eq!(
            verdict("wasi:config/runtime@0.2.0-draft", &granted),
            Verdict::Unknown
        );
    }

    #[test]
    fn refused_imports_name_each_import_and_what_would_allow_it() {
        let refused = RefusedImports {
            refused: vec![
                (
                    "wasi:http/outgoing-handler@0.2.0".into(),
                    verdict("wasi:http/outgoing-handler@0.2.0", &Manifest::default()),
                ),
                ("acme:secret/vault".into(), Verdict::Unknown),
            ],
        };
        assert!(verdict("corral:plugin/client@0.2.0", &Manifest::default()).allowed());
        assert!(verdict("corral:plugin/host@0.2.0", &Manifest::default()).allowed());
        assert!(verdict("corral:plugin/host@0.1.0", &Manifest::default()).allowed());
        assert!(!verdict("corral:plugin/client@0.1.0", &Manifest::default()).allowed());
        assert!(verdict("corral:plugin/host@0.3.0", &Manifest::default()).allowed());
        assert!(verdict("corral:plugin/client@0.3.0", &Manifest::default()).allowed());
        assert!(!verdict("corral:plugin/host@0.4.0", &Manifest::default()).allowed());
        assert_eq!(
            refused.to_string(),
            "imports `wasi:http/outgoing-handler@0.2.0`, which needs a grant in its manifest: [http] allow = [\"host.example.com\"]; imports `acme:secret/vault`, which Corral does not provide"
        );
    }
}
