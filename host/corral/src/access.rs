//! What a caller's token must grant to reach the served resources and
//! templates over authorized HTTP, worked out once per snapshot from each
//! plugin's `[access]` (tools and prompts carry theirs in their routes:
//! see [`crate::catalog::Snapshot::required_scopes`]).
//!
//! The protocol asks once per listed item per list request, so every
//! answer here is a lookup and a clone of the [`Scopes`] found (an `Arc`).
//! The maps are built only when some plugin asks for a scope: a folder
//! without `[access]` holds no second copy of its URIs.
//!
//! A resource needs what the plugins that would be read for it need, all
//! together: those that list its URI or, when none does, those whose
//! template matches it (the order in which
//! [`crate::catalog::Snapshot::read_candidates`] reads them).

use std::collections::HashMap;
use std::sync::Arc;

use corral_sandbox::Plugin;
use corral_tool::Scopes;

/// The most work one lookup spends matching a URI against the templates
/// of plugins that need scopes (see `corral_sandbox::uri_template`): tens
/// of microseconds, where the request runs. A URI that takes more needs
/// the scopes of every such plugin together (see
/// [`ResourceAccess::resource`]).
pub const MATCH_UNITS: u64 = corral_sandbox::uri_template::INLINE_MATCH_UNITS;

/// The scopes of the served resources and templates.
#[derive(Debug, Default)]
pub struct ResourceAccess {
    /// Each listed URI, with the scopes of the plugins that list it
    /// together. Only the URIs of plugins that need scopes when no such
    /// plugin has templates (a URI not here then needs nothing).
    resources: HashMap<String, Scopes>,
    /// Each template, with the scopes of the plugins that have it together.
    templates: HashMap<String, Scopes>,
    /// The plugins that need scopes and have templates: matched against a
    /// URI no plugin lists.
    matched: Vec<Arc<Plugin>>,
    /// Their scopes together.
    matched_scopes: Scopes,
}

impl ResourceAccess {
    /// The scopes of what `plugins` serve; `None` when none of them needs
    /// any (then nothing does).
    pub fn new(plugins: &[Arc<Plugin>]) -> Option<ResourceAccess> {
        if plugins.iter().all(|plugin| plugin.scopes().is_empty()) {
            return None;
        }
        let matched: Vec<Arc<Plugin>> = plugins
            .iter()
            .filter(|plugin| !plugin.scopes().is_empty() && plugin.templates().len() > 0)
            .cloned()
            .collect();
        let mut access = ResourceAccess {
            matched_scopes: union(matched.iter().map(|plugin| plugin.scopes())),
            matched,
            ..ResourceAccess::default()
        };
        // Every listed URI matters only when an unlisted one may need
        // scopes: a URI listed by a plugin that needs none must then be
        // told apart from one no plugin lists.
        let every_uri = !access.matched.is_empty();
        for plugin in plugins {
            let scopes = plugin.scopes();
            if every_uri || !scopes.is_empty() {
                for resource in plugin.resources() {
                    add(&mut access.resources, &resource.uri, scopes);
                }
            }
            for template in plugin.templates() {
                add(&mut access.templates, &template.uri_template, scopes);
            }
        }
        Some(access)
    }

    /// The scopes reading `uri` needs: those of the plugins that list it,
    /// or of those whose template matches it. Matching stops past
    /// [`MATCH_UNITS`]: such a URI needs the scopes of every plugin with
    /// scopes and templates together (never less than its read needs; a
    /// read that long is matched within the larger budget of a read).
    pub fn resource(&self, uri: &str) -> Scopes {
        if let Some(scopes) = self.resources.get(uri) {
            return scopes.clone();
        }
        if self.matched.is_empty() || uri.len() > corral_sandbox::MAX_URI_BYTES {
            return Scopes::default();
        }
        let mut work = 0;
        let mut needed: Option<Scopes> = None;
        for plugin in &self.matched {
            for index in 0..plugin.templates().len() {
                let matches = plugin.template_matches(index, uri, &mut work);
                if work > MATCH_UNITS {
                    return self.matched_scopes.clone();
                }
                if matches {
                    needed = Some(match needed {
                        None => plugin.scopes().clone(),
                        Some(scopes) => scopes.union(plugin.scopes()),
                    });
                    break;
                }
            }
        }
        needed.unwrap_or_default()
    }

    /// The scopes of template `uri_template`: those of the plugins that
    /// have it together.
    pub fn template(&self, uri_template: &str) -> Scopes {
        self.templates
            .get(uri_template)
            .cloned()
            .unwrap_or_default()
    }
}

/// Adds `scopes` to what `key` needs in `map`.
fn add(map: &mut HashMap<String, Scopes>, key: &str, scopes: &Scopes) {
    match map.get_mut(key) {
        Some(needed) => {
            if !scopes.is_empty() {
                *needed = needed.union(scopes);
            }
        }
        None => {
            map.insert(key.to_owned(), scopes.clone());
        }
    }
}

/// All of `scopes` together.
fn union<'a>(scopes: impl Iterator<Item = &'a Scopes>) -> Scopes {
    scopes.fold(Scopes::default(), |all, more| all.union(more))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::OnceLock;

    use corral_sandbox::{Sandbox, SandboxOptions};
    use corral_tool::Target;

    use super::*;
    use crate::catalog::Snapshot;

    fn repo_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .unwrap()
            .to_path_buf()
    }

    /// The built test fixture `crate_name`, built once (a no-op when it is
    /// up to date) as `plugins/build` builds it.
    fn fixture(crate_name: &str) -> PathBuf {
        static BUILT: OnceLock<()> = OnceLock::new();
        BUILT.get_or_init(|| {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .current_dir(repo_root())
                .args(["build", "--profile", "plugin", "--target", "wasm32-wasip2"])
                .args(["-p", "conformance-resources", "-p", "hostile-state"])
                .status()
                .expect("running cargo build for the fixtures");
            assert!(status.success(), "building the fixtures failed");
        });
        std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target"))
            .join("wasm32-wasip2/plugin")
            .join(format!("{}.wasm", crate_name.replace('-', "_")))
    }

    const STATE: &str = "[state]\nbuckets = [\"default\"]\n";

    /// Loads each `(name, fixture, [access] lines)` from one folder.
    async fn plugins(specs: &[(&str, &str, &str)]) -> (tempfile::TempDir, Vec<Arc<Plugin>>) {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(SandboxOptions::default()).unwrap();
        let mut plugins = Vec::new();
        for (name, crate_name, access) in specs {
            let path = dir.path().join(format!("{name}.wasm"));
            std::fs::copy(fixture(crate_name), &path).unwrap();
            std::fs::write(path.with_extension("toml"), format!("{STATE}{access}")).unwrap();
            plugins.push(Arc::new(Plugin::load(&sandbox, &path).await.unwrap()));
        }
        (dir, plugins)
    }

    fn joined(scopes: Scopes) -> String {
        scopes.joined()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_served_item_needs_the_scopes_of_the_plugins_behind_it() {
        // `a` and `b` are the same plugin: their tools and prompts collide
        // and are served prefixed; they list the same resources and template.
        let (_dir, loaded) = plugins(&[
            (
                "a",
                "conformance-resources",
                "[access]\nscopes = [\"a\"]\ntools = { test_trigger_prompt_change = [\"a:write\"], nope = [\"x\"] }\n",
            ),
            ("b", "conformance-resources", ""),
            ("c", "hostile-state", "[access.tools]\nset = [\"c:write\"]\n"),
        ])
        .await;
        let snapshot = Snapshot::new(loaded);
        let needs = |target| joined(snapshot.required_scopes(target));
        assert_eq!(
            needs(Target::Tool("a_test_trigger_prompt_change")),
            "a a:write"
        );
        assert_eq!(needs(Target::Tool("a_test_update_watched_resource")), "a");
        assert_eq!(needs(Target::Tool("b_test_trigger_prompt_change")), "");
        assert_eq!(needs(Target::Tool("set")), "c:write");
        assert_eq!(needs(Target::Tool("get")), "");
        // Not served: the plugin's own name is not, nor is anything else.
        assert_eq!(needs(Target::Tool("test_trigger_prompt_change")), "");
        assert_eq!(needs(Target::Tool("nope")), "");
        assert_eq!(needs(Target::Prompt("a_test_simple_prompt")), "a");
        assert_eq!(needs(Target::Prompt("b_test_simple_prompt")), "");
        assert_eq!(needs(Target::Prompt("test_simple_prompt")), "");
        // Listed by both: reading it asks both.
        assert_eq!(needs(Target::Resource("test://static-text")), "a");
        assert_eq!(
            needs(Target::ResourceTemplate("test://template/{id}/data")),
            "a"
        );
        // Listed by no plugin: those whose template matches.
        assert_eq!(needs(Target::Resource("test://template/7/data")), "a");
        assert_eq!(needs(Target::Resource("test://nothing-here")), "");
        assert_eq!(needs(Target::ResourceTemplate("test://{x}")), "");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_folder_without_scopes_needs_none_and_keeps_no_second_copy_of_its_uris() {
        let (_dir, loaded) = plugins(&[
            ("b", "conformance-resources", ""),
            (
                "c",
                "hostile-state",
                "[access.tools]\nset = [\"c:write\"]\n",
            ),
        ])
        .await;
        assert!(ResourceAccess::new(&loaded).is_none());
        let snapshot = Snapshot::new(loaded);
        assert_eq!(
            joined(snapshot.required_scopes(Target::Tool("set"))),
            "c:write"
        );
        for target in [
            Target::Tool("test_trigger_prompt_change"),
            Target::Prompt("test_simple_prompt"),
            Target::Resource("test://static-text"),
            Target::Resource("test://template/7/data"),
            Target::ResourceTemplate("test://template/{id}/data"),
        ] {
            assert_eq!(joined(snapshot.required_scopes(target)), "", "{target:?}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_uri_only_a_scoped_plugins_template_matches_needs_its_scopes() {
        let (_dir, loaded) = plugins(&[
            (
                "a",
                "conformance-resources",
                "[access]\nscopes = [\"r1\", \"r2\"]\n",
            ),
            ("c", "hostile-state", "[access]\nscopes = [\"c\"]\n"),
        ])
        .await;
        let access = ResourceAccess::new(&loaded).unwrap();
        // Without templates, `c` is never matched.
        assert_eq!(access.matched.len(), 1);
        assert_eq!(joined(access.resource("test://template/42/data")), "r1 r2");
        assert_eq!(joined(access.resource("test://static-text")), "r1 r2");
        assert_eq!(joined(access.resource("test://template/42/other")), "");
        let long = format!("test://template/{}/data", "x".repeat(3000));
        assert_eq!(
            joined(access.resource(&long)),
            "",
            "longer than any URI served"
        );
        let snapshot = Snapshot::new(loaded);
        assert_eq!(
            joined(snapshot.required_scopes(Target::Tool("get"))),
            "c",
            "a tool with no entry of its own needs its plugin's scopes"
        );
    }
}
