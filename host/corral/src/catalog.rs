//! The catalog: every loaded plugin and the tools clients see, as one
//! immutable snapshot that is swapped atomically.
//!
//! # Tool names and collisions
//! A tool is served under its own name when no other plugin in the folder
//! declares the same name. When two or more plugins declare it, each of them
//! is served as `<plugin>_<tool>`, where `<plugin>` is the file stem
//! (`calc.wasm` gives `calc_add`). Never "first wins": the rule depends only
//! on the folder's contents, not on load order. Should a prefixed name be
//! invalid (over 64 characters) or still taken, that tool is skipped with a
//! warning naming both plugins.
//!
//! Tools are listed by plugin name, then in the order each plugin declares
//! them, so the order is deterministic across requests and restarts.
//!
//! # Prompts, resources and templates
//! Prompts follow the tools' rule, in a namespace of their own: a prompt
//! two plugins declare is served as `<plugin>_<prompt>` for each. URIs and
//! templates are never renamed: they are listed by plugin name, then in
//! each plugin's order, and a URI (or template) two plugins list is listed
//! once per plugin. Reading a URI asks, in plugin-name order, the plugins
//! that list that exact URI or, when none does, those with a template that
//! matches it ([`Snapshot::read_candidates`]); their contents are put
//! together (see `host`). Completing a template's variable asks every
//! plugin with that exact template.
//!
//! # Access
//! Over authorized HTTP, what each served item needs of a caller's token
//! ([`Snapshot::required_scopes`]) comes from its plugin's `[access]`,
//! mapped through the served names: a tool served as `calc_add` needs what
//! `[access]` says of `add` in `calc.toml`. It is worked out when a
//! snapshot is built (see `access`), so that a list request filtering
//! thousands of items only looks each up.
//!
//! # Changes
//! A new snapshot is [published](Catalog::publish) whole: requests that
//! already hold the old one finish on it. Reloads and re-lists
//! [update](Catalog::update) the latest snapshot under one lock, so that
//! neither undoes the other. The catalog starts out not ready
//! (while the first load runs) and tells subscribers when it becomes ready
//! and whenever the served tool list changes.
//!
//! # Loading
//! Every load, at startup and at reload, goes through [`load_all`], which
//! checks each plugin's files against the folder's `corral.lock` before
//! loading exactly the bytes it checked: a pinned file that changed is a
//! load failure naming the file and where it was pulled from.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, Result};
use arc_swap::ArcSwap;
use tokio::sync::{Semaphore, broadcast, watch};

use crate::access::ResourceAccess;
use crate::reports::Reports;
use corral_registry::lock::{Lock, Mismatch};
use corral_sandbox::{Plugin, PluginFiles, Sandbox, is_valid_tool_name};
use corral_tool::{
    LogLevel, NotLoaded, Offers, PromptDef, ResourceDef, ResourceTemplateDef, Scopes, Target,
    ToolDef,
};

/// Where a served tool or prompt name leads, and what a caller needs to
/// reach it.
#[derive(Debug, Clone)]
struct Route {
    plugin: Arc<Plugin>,
    index: usize,
    scopes: Scopes,
}

/// One consistent view of the plugins, their tools, prompts, resources and
/// templates.
#[derive(Debug, Default)]
pub struct Snapshot {
    plugins: Vec<Arc<Plugin>>,
    tools: Arc<[ToolDef]>,
    routes: HashMap<String, Route>,
    prompts: Arc<[PromptDef]>,
    prompt_routes: HashMap<String, Route>,
    resources: Arc<[ResourceDef]>,
    templates: Arc<[ResourceTemplateDef]>,
    offers: Offers,
    /// What the resources and templates need; `None`: no plugin needs a
    /// scope.
    resource_access: Option<ResourceAccess>,
}

impl Snapshot {
    /// Builds the served tool list from `plugins`, applying the collision rule.
    pub fn new(mut plugins: Vec<Arc<Plugin>>) -> Snapshot {
        plugins.sort_by(|a, b| (a.name(), a.path()).cmp(&(b.name(), b.path())));
        let mut declared: HashMap<&str, usize> = HashMap::new();
        for plugin in &plugins {
            for def in plugin.tools() {
                *declared.entry(def.name.as_str()).or_default() += 1;
            }
        }
        let mut tools = Vec::new();
        let mut routes: HashMap<String, Route> = HashMap::new();
        for plugin in &plugins {
            for (index, def) in plugin.tools().enumerate() {
                let served = if declared[def.name.as_str()] == 1 {
                    def.name.clone()
                } else {
                    format!("{}_{}", plugin.name(), def.name)
                };
                if !is_valid_tool_name(&served) {
                    tracing::warn!(
                        "skipping tool `{}` of plugin `{}`: its name collides with another plugin's and the prefixed name `{served}` is not a valid tool name",
                        def.name,
                        plugin.name()
                    );
                    continue;
                }
                if let Some(taken) = routes.get(&served) {
                    tracing::warn!(
                        "skipping tool `{}` of plugin `{}` ({}): the name `{served}` is already served by plugin `{}` ({})",
                        def.name,
                        plugin.name(),
                        plugin.path().display(),
                        taken.plugin.name(),
                        taken.plugin.path().display()
                    );
                    continue;
                }
                let mut served_def = def.clone();
                served_def.name = served.clone();
                tools.push(served_def);
                routes.insert(
                    served,
                    Route {
                        plugin: plugin.clone(),
                        index,
                        scopes: plugin.tool_scopes(index).clone(),
                    },
                );
            }
        }
        let (prompts, prompt_routes) = served_prompts(&plugins);
        let resources: Vec<ResourceDef> = plugins
            .iter()
            .flat_map(|plugin| plugin.resources().iter().cloned())
            .collect();
        let templates: Vec<ResourceTemplateDef> = plugins
            .iter()
            .flat_map(|plugin| plugin.templates().cloned())
            .collect();
        let completes = plugins.iter().any(|plugin| {
            plugin.exports().completion
                && (!plugin.prompts().is_empty() || plugin.templates().len() > 0)
        });
        let offers = Offers {
            resources: !resources.is_empty() || !templates.is_empty(),
            prompts: !prompts.is_empty(),
            completions: completes && (!prompts.is_empty() || !templates.is_empty()),
        };
        let resource_access = ResourceAccess::new(&plugins);
        Snapshot {
            plugins,
            tools: tools.into(),
            routes,
            prompts: prompts.into(),
            prompt_routes,
            resources: resources.into(),
            templates: templates.into(),
            offers,
            resource_access,
        }
    }

    /// What a caller's token must grant to see or reach `target`, from the
    /// `[access]` of the plugin that serves it: a tool needs its plugin's
    /// scopes and its own (by the name the plugin gives it, whatever name
    /// it is served under); a prompt or template its plugin's; a resource
    /// those of the plugins a read of it would ask (that list it, or whose
    /// template matches it). Several plugins: all of their scopes. What no
    /// plugin serves needs nothing (and is not found).
    pub fn required_scopes(&self, target: Target<'_>) -> Scopes {
        let routed = |routes: &HashMap<String, Route>, name: &str| {
            routes
                .get(name)
                .map(|route| route.scopes.clone())
                .unwrap_or_default()
        };
        match target {
            Target::Tool(name) => routed(&self.routes, name),
            Target::Prompt(name) => routed(&self.prompt_routes, name),
            Target::Resource(uri) => self
                .resource_access
                .as_ref()
                .map(|access| access.resource(uri))
                .unwrap_or_default(),
            Target::ResourceTemplate(template) => self
                .resource_access
                .as_ref()
                .map(|access| access.template(template))
                .unwrap_or_default(),
        }
    }

    /// The served prompts, in their deterministic order.
    pub fn prompts(&self) -> &Arc<[PromptDef]> {
        &self.prompts
    }

    /// The served resources: by plugin, then in each plugin's order.
    pub fn resources(&self) -> &Arc<[ResourceDef]> {
        &self.resources
    }

    /// The served resource templates, ordered as the resources.
    pub fn templates(&self) -> &Arc<[ResourceTemplateDef]> {
        &self.templates
    }

    /// What is served besides tools.
    pub fn offers(&self) -> Offers {
        self.offers
    }

    /// The plugin and prompt index behind a served prompt name.
    pub fn prompt_route(&self, name: &str) -> Option<(&Arc<Plugin>, usize)> {
        self.prompt_routes.get(name).map(|r| (&r.plugin, r.index))
    }

    /// The plugins to read `uri` from, in plugin-name order: those that
    /// list it, or, when none does, those with a template that matches it
    /// (each template matched in linear time). Empty: no plugin serves it.
    /// Scans the lists rather than indexing them, so that the catalog
    /// holds no second copy of up to 10,000 URIs per plugin.
    ///
    /// Matching spends at most `budget` work units across all templates
    /// (one per byte of the URI or a template looked at; see
    /// `corral_sandbox::uri_template`), and one template's worth past it at
    /// most: matching stops at the template that passes it, with the error
    /// naming the budget.
    pub fn read_candidates(
        &self,
        uri: &str,
        budget: u64,
    ) -> Result<Vec<Arc<Plugin>>, MatchOverBudget> {
        if uri.len() > corral_sandbox::MAX_URI_BYTES {
            return Ok(Vec::new());
        }
        let listing: Vec<Arc<Plugin>> = self
            .plugins
            .iter()
            .filter(|plugin| plugin.resources().iter().any(|r| r.uri == uri))
            .cloned()
            .collect();
        if !listing.is_empty() {
            return Ok(listing);
        }
        let mut work = 0;
        let mut matching = Vec::new();
        for plugin in &self.plugins {
            for index in 0..plugin.templates().len() {
                let matched = plugin.template_matches(index, uri, &mut work);
                if work > budget {
                    return Err(MatchOverBudget { budget });
                }
                if matched {
                    matching.push(plugin.clone());
                    break;
                }
            }
        }
        Ok(matching)
    }

    /// The plugins with the template `uri_template`, each with its index,
    /// in plugin-name order.
    pub fn template_owners(&self, uri_template: &str) -> Vec<(Arc<Plugin>, usize)> {
        self.plugins
            .iter()
            .filter_map(|plugin| {
                plugin
                    .templates()
                    .position(|t| t.uri_template == uri_template)
                    .map(|index| (plugin.clone(), index))
            })
            .collect()
    }

    /// The served tools, in their deterministic order.
    pub fn tools(&self) -> &Arc<[ToolDef]> {
        &self.tools
    }

    /// The loaded plugins, sorted by name.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// The plugin and tool index behind a served name.
    pub fn route(&self, name: &str) -> Option<(&Arc<Plugin>, usize)> {
        self.routes.get(name).map(|r| (&r.plugin, r.index))
    }
}

/// The served prompts and where each leads: the tools' collision rule
/// ([`served_names`]), in a namespace of its own.
fn served_prompts(plugins: &[Arc<Plugin>]) -> (Vec<PromptDef>, HashMap<String, Route>) {
    let declared: Vec<(&str, Vec<&str>)> = plugins
        .iter()
        .map(|plugin| {
            let names = plugin.prompts().iter().map(|p| p.name.as_str()).collect();
            (plugin.name(), names)
        })
        .collect();
    let served = served_names(&declared);
    let mut prompts = Vec::new();
    let mut routes: HashMap<String, Route> = HashMap::new();
    for (plugin, names) in plugins.iter().zip(served) {
        for (index, (def, served)) in plugin.prompts().iter().zip(names).enumerate() {
            let Some(served) = served else {
                tracing::warn!(
                    "skipping prompt `{}` of plugin `{}`: its name collides with another plugin's and the prefixed name is invalid or taken",
                    def.name,
                    plugin.name()
                );
                continue;
            };
            let mut served_def = def.clone();
            served_def.name = served.clone();
            prompts.push(served_def);
            routes.insert(
                served,
                Route {
                    plugin: plugin.clone(),
                    index,
                    scopes: plugin.scopes().clone(),
                },
            );
        }
    }
    (prompts, routes)
}

/// The names under which the `(plugin, names)` it declares are served,
/// plugins in the order given: a name no other plugin declares as is, one
/// that several do as `<plugin>_<name>` for each; `None` when that is not
/// a valid name or is already served.
fn served_names(declared: &[(&str, Vec<&str>)]) -> Vec<Vec<Option<String>>> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, names) in declared {
        for name in names {
            *count.entry(name).or_default() += 1;
        }
    }
    let mut taken = std::collections::HashSet::new();
    declared
        .iter()
        .map(|(plugin, names)| {
            names
                .iter()
                .map(|name| {
                    let served = if count[name] == 1 {
                        (*name).to_owned()
                    } else {
                        format!("{plugin}_{name}")
                    };
                    (is_valid_tool_name(&served) && taken.insert(served.clone())).then_some(served)
                })
                .collect()
        })
        .collect()
}

/// Matching a URI against the served templates would take more than a
/// read's budget (see [`Snapshot::read_candidates`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchOverBudget {
    /// The budget, in work units.
    pub budget: u64,
}

impl std::fmt::Display for MatchOverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "matching the URI against the served resource templates would take more than a read's budget of {} work units (one per byte of the URI or a template looked at)",
            corral_sandbox::units::group_digits(self.budget)
        )
    }
}

impl std::error::Error for MatchOverBudget {}

/// The current snapshot, readable without locks from every request.
pub struct Catalog {
    current: ArcSwap<Snapshot>,
    /// Serializes publishing, so that "did the tools change" compares
    /// consecutive snapshots.
    publishing: Mutex<()>,
    /// False until the first snapshot is published.
    ready: watch::Sender<bool>,
    /// Counts visible changes of the tool list.
    tools_changed: watch::Sender<u64>,
    /// Counts visible changes of the resources and templates.
    resources_changed: watch::Sender<u64>,
    /// Counts visible changes of the prompts.
    prompts_changed: watch::Sender<u64>,
    /// The URIs of updated resources, as published (see `updates`).
    resource_updated: broadcast::Sender<String>,
    /// Admits the reads whose template matching runs off the async
    /// workers, one at a time (see [`Catalog::read_candidates`]).
    heavy_matches: Semaphore,
    /// The plugin files whose last load failed, by file name (see
    /// [`Catalog::not_loaded`]).
    not_loaded: Mutex<BTreeMap<String, NotLoaded>>,
}

/// The most work a read may spend matching its URI against the served
/// templates, in work units (one per byte of the URI or a template looked
/// at, and a few per part of a template): a few milliseconds of one core
/// (see `corral_sandbox::uri_template::MATCH_UNITS`).
pub const READ_MATCH_UNITS: u64 = corral_sandbox::uri_template::MATCH_UNITS;

/// Reads whose matching costs at most this many units are matched where
/// the request runs (tens of microseconds); the others on a blocking
/// thread.
pub const INLINE_MATCH_UNITS: u64 = corral_sandbox::uri_template::INLINE_MATCH_UNITS;

/// Updated URIs a session may fall behind by before it misses some (it
/// is then told of none of those: see `HostEvents`): as many as one flush
/// of the relay publishes at most, so that a session that keeps reading
/// never misses its own URI among others' (at most 10,000 URIs of at most
/// 2 KiB each are held).
const UPDATED_CAPACITY: usize = corral_sandbox::changes::MAX_PENDING_UPDATES;

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("current", &self.current.load())
            .field("ready", &*self.ready.borrow())
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// A catalog serving `snapshot`, ready at once.
    pub fn new(snapshot: Snapshot) -> Catalog {
        let catalog = Catalog::starting();
        catalog.publish(snapshot);
        catalog
    }

    /// An empty catalog that is not ready yet: tool requests wait for the
    /// first [`Catalog::publish`].
    pub fn starting() -> Catalog {
        Catalog {
            current: ArcSwap::from_pointee(Snapshot::default()),
            publishing: Mutex::new(()),
            ready: watch::Sender::new(false),
            tools_changed: watch::Sender::new(0),
            resources_changed: watch::Sender::new(0),
            prompts_changed: watch::Sender::new(0),
            resource_updated: broadcast::Sender::new(UPDATED_CAPACITY),
            heavy_matches: Semaphore::new(1),
            not_loaded: Mutex::new(BTreeMap::new()),
        }
    }

    /// The plugin files whose last load failed, in file-name order: for an
    /// unknown tool's error and a connecting client's log.
    pub fn not_loaded(&self) -> Arc<[NotLoaded]> {
        self.not_loaded.lock().unwrap().values().cloned().collect()
    }

    /// Notes that the file of `failure` failed to load, in place of what
    /// was noted of it before.
    pub fn failed_to_load(&self, failure: NotLoaded) {
        let mut not_loaded = self.not_loaded.lock().unwrap();
        not_loaded.insert(failure.file.clone(), failure);
    }

    /// Forgets a failure of `file` (it loaded, or is gone).
    pub fn forget_failure(&self, file: &str) {
        self.not_loaded.lock().unwrap().remove(file);
    }

    /// The plugins to read `uri` from in the current snapshot
    /// ([`Snapshot::read_candidates`]), matched within
    /// [`READ_MATCH_UNITS`]: where the request runs while that costs at
    /// most [`INLINE_MATCH_UNITS`], else again on a blocking thread, one
    /// such read at a time for the whole server, so that matching a long
    /// URI against thousands of long templates never holds up the async
    /// workers that answer `ping`, nor takes every core at once.
    pub async fn read_candidates(&self, uri: &str) -> Result<Vec<Arc<Plugin>>, MatchOverBudget> {
        let snapshot = self.snapshot();
        if let Ok(candidates) = snapshot.read_candidates(uri, INLINE_MATCH_UNITS) {
            return Ok(candidates);
        }
        let _permit = self
            .heavy_matches
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let uri = uri.to_owned();
        let matched =
            tokio::task::spawn_blocking(move || snapshot.read_candidates(&uri, READ_MATCH_UNITS));
        match matched.await {
            Ok(candidates) => candidates,
            Err(err) => std::panic::resume_unwind(err.into_panic()),
        }
    }

    /// The snapshot as of now; later swaps do not affect it.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Replaces the snapshot and marks the catalog ready. Calls already
    /// running finish on the old snapshot. Returns whether the served tool
    /// list changed, in which case subscribers are told; the first publish
    /// is never a change (nobody saw a list before it).
    pub fn publish(&self, snapshot: Snapshot) -> bool {
        let _publishing = self.publishing.lock().unwrap();
        self.publish_locked(snapshot)
    }

    /// Publishes what `change` makes of the latest snapshot, if anything,
    /// with no other publish in between: reloads of files and re-lists of
    /// plugins each change one part of the catalog, and neither may undo
    /// the other's. `change` runs under the catalog's publishing lock: keep
    /// it to building a snapshot. Returns `None` when `change` made none,
    /// else whether the served tool list changed (see [`Catalog::publish`]).
    pub fn update(&self, change: impl FnOnce(&Snapshot) -> Option<Snapshot>) -> Option<bool> {
        let _publishing = self.publishing.lock().unwrap();
        let snapshot = change(&self.current.load())?;
        Some(self.publish_locked(snapshot))
    }

    /// Swaps in `new`, a re-listed version of `old` ([`Plugin::relist`]),
    /// if `old` still serves. Returns `None` when it does not (a reload
    /// replaced or removed it meanwhile), else whether the served tool list
    /// changed.
    pub fn replace(&self, old: &Arc<Plugin>, new: Plugin) -> Option<bool> {
        let new = Arc::new(new);
        self.update(|current| {
            let mut found = false;
            let plugins = current
                .plugins()
                .iter()
                .map(|plugin| {
                    if Arc::ptr_eq(plugin, old) {
                        found = true;
                        new.clone()
                    } else {
                        plugin.clone()
                    }
                })
                .collect();
            found.then(|| Snapshot::new(plugins))
        })
    }

    fn publish_locked(&self, snapshot: Snapshot) -> bool {
        let was_ready = *self.ready.borrow();
        let current = self.current.load();
        let changed = was_ready && current.tools[..] != snapshot.tools[..];
        let resources_changed = was_ready
            && (current.resources[..] != snapshot.resources[..]
                || current.templates[..] != snapshot.templates[..]);
        let prompts_changed = was_ready && current.prompts[..] != snapshot.prompts[..];
        drop(current);
        metrics::gauge!("corral_plugins").set(snapshot.plugins().len() as f64);
        metrics::gauge!("corral_tools").set(snapshot.tools.len() as f64);
        self.current.store(Arc::new(snapshot));
        self.ready.send_replace(true);
        for (changed, sender) in [
            (changed, &self.tools_changed),
            (resources_changed, &self.resources_changed),
            (prompts_changed, &self.prompts_changed),
        ] {
            if changed {
                sender.send_modify(|count| *count += 1);
            }
        }
        changed
    }

    /// The served tools as of now, without taking the whole snapshot.
    pub fn tools(&self) -> Arc<[ToolDef]> {
        self.current.load().tools.clone()
    }

    /// What `target` needs as of now ([`Snapshot::required_scopes`]),
    /// without taking the whole snapshot.
    pub fn required_scopes(&self, target: Target<'_>) -> Scopes {
        self.current.load().required_scopes(target)
    }

    /// Whether the first snapshot has been published.
    pub fn is_ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// Resolves once the first snapshot is published.
    pub fn ready(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut ready = self.ready.subscribe();
        async move {
            // The sender lives as long as the catalog, which outlives this.
            let _ = ready.wait_for(|ready| *ready).await;
        }
    }

    /// Marked changed each time the served tool list changes.
    pub fn tools_changed(&self) -> watch::Receiver<u64> {
        self.tools_changed.subscribe()
    }

    /// Marked changed each time the served resources or templates change.
    pub fn resources_changed(&self) -> watch::Receiver<u64> {
        self.resources_changed.subscribe()
    }

    /// Marked changed each time the served prompts change.
    pub fn prompts_changed(&self) -> watch::Receiver<u64> {
        self.prompts_changed.subscribe()
    }

    /// The URIs of resources updated from now on.
    pub fn resource_updated(&self) -> broadcast::Receiver<String> {
        self.resource_updated.subscribe()
    }

    /// Tells the sessions that follow `uri` that it was updated.
    pub fn publish_updated(&self, uri: String) {
        // No session listens: nobody to tell.
        let _ = self.resource_updated.send(uri);
    }
}

/// The `*.wasm` files directly inside `dir`, sorted.
pub fn plugin_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "wasm") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Loads the plugins at `paths` in parallel, each only if its files are
/// what `lock` pins (a file the lock does not list passes); each result
/// with its path, in the order of `paths`.
pub async fn load_all(
    sandbox: &Arc<Sandbox>,
    lock: &Arc<Lock>,
    paths: Vec<PathBuf>,
) -> Vec<(PathBuf, Result<Plugin>)> {
    let mut loading = tokio::task::JoinSet::new();
    for (index, path) in paths.into_iter().enumerate() {
        let sandbox = sandbox.clone();
        let lock = lock.clone();
        loading.spawn(async move {
            let result = load_pinned(&sandbox, &lock, &path).await;
            (index, path, result)
        });
    }
    let mut loaded = Vec::new();
    while let Some(joined) = loading.join_next().await {
        match joined {
            Ok(result) => loaded.push(result),
            // A panic is a bug in the host, not the plugin's; it must not
            // take the other plugins down with it.
            Err(err) => tracing::error!("a plugin load task failed: {err}"),
        }
    }
    loaded.sort_by_key(|(index, ..)| *index);
    loaded
        .into_iter()
        .map(|(_, path, result)| (path, result))
        .collect()
}

/// Loads the plugin at `path` after checking its files against `lock`.
/// The files are read once, so what is compiled and parsed is exactly what
/// was checked: a file swapped between the check and the load cannot slip
/// through.
/// Each load is counted by outcome (`corral_plugin_loads_total`).
async fn load_pinned(sandbox: &Arc<Sandbox>, lock: &Lock, path: &Path) -> Result<Plugin> {
    let loaded = async {
        let files = PluginFiles::read(path).await?;
        check_pinned(lock, path, &files)?;
        Plugin::load_from(sandbox, path, files).await
    }
    .await;
    let outcome = if loaded.is_ok() { "loaded" } else { "failed" };
    metrics::counter!("corral_plugin_loads_total", "plugin" => corral_sandbox::naming::plugin_name(path), "outcome" => outcome)
        .increment(1);
    loaded
}

/// Checks the files of the plugin at `path`, as read, against `lock`.
pub fn check_pinned(lock: &Lock, path: &Path, files: &PluginFiles) -> Result<(), Mismatch> {
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    lock.check(
        &file_name,
        &files.wasm,
        files.manifest.as_deref().map(str::as_bytes),
    )
}

/// The file name of `path`, for messages (empty when it has none).
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A folder's plugins as loaded.
#[derive(Debug)]
pub struct LoadedDir {
    /// What serves.
    pub snapshot: Snapshot,
    /// The files that failed to load, in file-name order (each also
    /// reported whole as it happened).
    pub failed: Vec<NotLoaded>,
}

/// Loads every plugin in `dir` in parallel, checked against `lock` (the
/// folder's `corral.lock`, read by the caller, for whom a lock that cannot
/// be read is fatal). A plugin that fails to load, or differs from what the
/// lock pins, is reported, naming the file and the reason, and left out.
pub async fn load_dir(
    sandbox: &Arc<Sandbox>,
    dir: &Path,
    lock: Lock,
    reports: &Reports,
) -> Result<LoadedDir> {
    let files = plugin_files(dir)?;
    let mut plugins = Vec::new();
    let mut failed = Vec::new();
    for (path, result) in load_all(sandbox, &Arc::new(lock), files).await {
        match result {
            Ok(plugin) => plugins.push(Arc::new(plugin)),
            Err(err) => {
                let reason = format!("{err:#}");
                let failure = NotLoaded::new(file_name(&path), &reason, false);
                reports.report_apart(
                    LogLevel::Error,
                    format!("skipping plugin {}: {reason}", path.display()),
                    format!("skipping plugin {}: {}", failure.file, failure.reason),
                );
                failed.push(failure);
            }
        }
    }
    if plugins.is_empty() {
        tracing::warn!("no plugin loaded from {}", dir.display());
    }
    Ok(LoadedDir {
        snapshot: Snapshot::new(plugins),
        failed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_two_plugins_declare_is_served_prefixed_for_each() {
        let served = served_names(&[
            ("docs", vec!["summarize", "outline"]),
            ("notes", vec!["summarize", "today"]),
        ]);
        assert_eq!(
            served,
            [
                vec![
                    Some("docs_summarize".to_owned()),
                    Some("outline".to_owned())
                ],
                vec![Some("notes_summarize".to_owned()), Some("today".to_owned())],
            ]
        );
    }

    #[test]
    fn a_prefixed_name_that_is_invalid_or_taken_is_skipped() {
        let long = "p".repeat(60);
        let served = served_names(&[
            (long.as_str(), vec!["summarize"]),
            ("a", vec!["summarize", "b_c"]),
            ("b", vec!["summarize"]),
            ("x", vec!["b_c"]),
        ]);
        assert_eq!(served[0], [None], "over 64 characters");
        assert_eq!(served[1][0].as_deref(), Some("a_summarize"));
        // `b_c` is declared twice (by `a` and `x`): served as `a_b_c` and `x_b_c`.
        assert_eq!(served[1][1].as_deref(), Some("a_b_c"));
        assert_eq!(served[3][0].as_deref(), Some("x_b_c"));
    }
}
