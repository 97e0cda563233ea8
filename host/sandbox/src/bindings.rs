//! Host-side bindings for every version of the plugin contract: the frozen
//! `wit/0.1.0/plugin.wit` ([`v0_1`]) and `wit/0.2.0/plugin.wit` ([`v0_2`]),
//! and `wit/plugin.wit`, 0.3.0 ([`v0_3`]).
//!
//! Plugins built against older versions keep working: one linker offers
//! every version's imports, and a component's contract version is the
//! version of the `corral:plugin/tools` it exports ([`Contract::of`]). The
//! versions share `types` (none changed them): later bindings reuse the
//! 0.1.0 Rust types through bindgen's `with`, and 0.3.0 reuses 0.2.0's
//! `client` the same way (see [`add_to_linker`] for how it is linked under
//! its own name). The `tools` records of each version (identical, but
//! generated apart because they are exports) are converted to the 0.1.0
//! ones here, so that the rest of the sandbox (metadata and output checks)
//! sees one type whichever version a plugin targets. 0.2.0 added an import
//! (`client`); 0.3.0 added `host` imports and the optional exports
//! `resources`, `prompts` and `completion`: a 0.3.0 component may export
//! any of those and `tools`, and each is looked up on its own
//! ([`Exports03`]), so that what it exports decides what it offers.
//!
//! Exports are called asynchronously so that a call can be timed out or
//! cancelled by dropping its future (the store yields at every epoch tick).
//! `client.ask` is an async host function: the guest blocks on it while the
//! host waits for the client, burning no fuel; it may trap, to end a run the
//! protocol layer will answer for (see `ask`).

use std::fmt;
use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime::component::types::ComponentItem;

/// Contract 0.1.0: `host` and `tools`.
pub mod v0_1 {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../../wit/0.1.0",
        exports: { default: async },
    });
}

/// Contract 0.2.0: 0.1.0 plus `client`.
pub mod v0_2 {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../../wit/0.2.0",
        imports: { "corral:plugin/client.ask": async | trappable },
        exports: { default: async },
        with: { "corral:plugin/types@0.2.0": super::v0_1::corral::plugin::types },
    });
}

/// Contract 0.3.0: 0.2.0 plus the `host` imports `tools-changed`,
/// `resources-changed`, `prompts-changed` and `resource-updated`, and the
/// optional exports `resources`, `prompts` and `completion`. Bound as the
/// world that exports everything (`plugin-full`), but never instantiated
/// as that world: each export is looked up on its own ([`Exports03`]).
pub mod v0_3 {
    wasmtime::component::bindgen!({
        world: "plugin-full",
        path: "../../wit",
        exports: { default: async },
        with: {
            "corral:plugin/types@0.3.0": super::v0_1::corral::plugin::types,
            "corral:plugin/client@0.3.0": super::v0_2::corral::plugin::client,
        },
    });
}

pub use self::v0_1::corral::plugin::types;
pub use self::v0_1::exports::corral::plugin::tools;
pub use self::v0_2::corral::plugin::client;
pub use self::v0_3::corral::plugin::icons as icons03;

/// The contract versions the host serves, oldest first.
pub const SUPPORTED: [Contract; 3] = [Contract::V0_1, Contract::V0_2, Contract::V0_3];

/// Which version of the plugin contract a component targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    V0_1,
    V0_2,
    V0_3,
}

impl Contract {
    /// The version, as in the contract's package name (`corral:plugin@0.3.0`).
    pub fn version(self) -> &'static str {
        match self {
            Contract::V0_1 => "0.1.0",
            Contract::V0_2 => "0.2.0",
            Contract::V0_3 => "0.3.0",
        }
    }

    /// The name of the `tools` export of this version.
    fn tools_export(self) -> String {
        format!("corral:plugin/tools@{}", self.version())
    }

    /// The version `component` targets: the one whose `tools` interface it
    /// exports (the newest, should it export several); or 0.3.0 when it
    /// exports 0.3.0's `resources` or `prompts`, which a plugin may export
    /// instead of `tools`.
    pub fn of(engine: &Engine, component: &Component) -> Result<Contract, UnknownContract> {
        let ty = component.component_type();
        let exports: Vec<String> = ty
            .exports(engine)
            .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentInstance(_)))
            .map(|(name, _)| name.to_owned())
            .collect();
        let offers_03 = ["resources", "prompts"].iter().any(|name| {
            exports
                .iter()
                .any(|e| *e == format!("corral:plugin/{name}@0.3.0"))
        });
        if offers_03 {
            return Ok(Contract::V0_3);
        }
        SUPPORTED
            .iter()
            .rev()
            .copied()
            .find(|contract| exports.contains(&contract.tools_export()))
            .ok_or_else(|| UnknownContract {
                tools: exports
                    .into_iter()
                    .filter(|name| name.starts_with("corral:plugin/tools"))
                    .collect(),
            })
    }
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "corral:plugin@{}", self.version())
    }
}

/// A component that exports no `tools` of a contract version the host serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownContract {
    /// The `corral:plugin/tools` exports it has, of other versions.
    tools: Vec<String>,
}

impl fmt::Display for UnknownContract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let supported: Vec<String> = SUPPORTED.iter().map(|c| c.tools_export()).collect();
        match self.tools.as_slice() {
            [] => write!(
                f,
                "it exports no `corral:plugin/tools` interface: a plugin exports {}, or corral:plugin/resources@0.3.0 or corral:plugin/prompts@0.3.0 (build it against wit/plugin.wit)",
                supported.join(" or ")
            ),
            found => write!(
                f,
                "it exports {}, a contract version this host does not serve: it serves {}",
                found.join(", "),
                supported.join(", ")
            ),
        }
    }
}

impl std::error::Error for UnknownContract {}

/// Adds every version's `host` and `client` imports to `linker`.
///
/// 0.3.0's `client` is 0.2.0's, reused through bindgen's `with`; but the
/// world's own `add_to_linker` would then link it under 0.2.0's name (that
/// of the module it reuses), so each interface is linked here by name
/// instead: 0.2.0's `client` functions under `corral:plugin/client@0.3.0`
/// too, which type-check against it since the two are identical.
pub fn add_to_linker<T, D>(
    linker: &mut wasmtime::component::Linker<T>,
    host_getter: fn(&mut T) -> D::Data<'_>,
) -> wasmtime::Result<()>
where
    T: Send + 'static,
    D: wasmtime::component::HasData + Send,
    for<'a> D::Data<'a>: v0_1::corral::plugin::host::Host
        + v0_2::corral::plugin::host::Host
        + v0_3::corral::plugin::host::Host
        + client::Host
        + types::Host
        + Send,
{
    v0_1::Plugin::add_to_linker::<T, D>(linker, host_getter)?;
    v0_2::Plugin::add_to_linker::<T, D>(linker, host_getter)?;
    v0_3::corral::plugin::host::add_to_linker::<T, D>(linker, host_getter)?;
    client::add_to_linker_instance::<T, D>(
        &mut linker.instance("corral:plugin/client@0.3.0")?,
        host_getter,
    )
}

/// `list` on a later version's prepared component (`$version` names its
/// bindings), its tools as the 0.1.0 records they are field for field.
macro_rules! later_list {
    ($version:ident, $pre:expr, $store:expr, $instantiated:expr) => {{
        let instance = $pre.instantiate_async(&mut *$store).await?;
        ($instantiated)($store.data_mut());
        let listed = instance
            .corral_plugin_tools()
            .call_list(&mut *$store)
            .await?;
        Ok(listed
            .into_iter()
            .map(|tool| tool_from!($version, tool))
            .collect())
    }};
}

/// `call` on a later version's prepared component, its result as the
/// 0.1.0 record (whose content types every version shares).
macro_rules! later_call {
    ($pre:expr, $store:expr, $instantiated:expr, $tool:expr, $arguments:expr) => {{
        let instance = $pre.instantiate_async(&mut *$store).await?;
        ($instantiated)($store.data_mut());
        let result = instance
            .corral_plugin_tools()
            .call_call(&mut *$store, $tool, $arguments)
            .await?;
        Ok(tools::CallResult {
            content: result.content,
            structured_content: result.structured_content,
            is_error: result.is_error,
        })
    }};
}

use self::v0_3::exports::corral::plugin::tools as tools03;
pub use self::v0_3::exports::corral::plugin::{completion, prompts, resources};

/// Which of the interfaces a plugin may export a component exports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exports {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
    pub completion: bool,
}

/// A 0.3.0 component's imports resolved once, and each export it has
/// looked up on its own: a component may export any of them.
pub struct Exports03<T: 'static> {
    pre: wasmtime::component::InstancePre<T>,
    tools: Option<tools03::GuestIndices>,
    resources: Option<resources::GuestIndices>,
    prompts: Option<prompts::GuestIndices>,
    completion: Option<completion::GuestIndices>,
}

impl<T: 'static> Exports03<T> {
    /// Looks up each export of `pre`; an export that is missing is absent,
    /// one that is there but does not type-check fails.
    pub fn new(pre: wasmtime::component::InstancePre<T>) -> wasmtime::Result<Self> {
        let has = |name: &str| {
            pre.component()
                .get_export_index(None, format!("corral:plugin/{name}@0.3.0"))
                .is_some()
        };
        let (tools, resources, prompts, completion) = (
            has("tools"),
            has("resources"),
            has("prompts"),
            has("completion"),
        );
        Ok(Exports03 {
            tools: tools
                .then(|| tools03::GuestIndices::new(&pre))
                .transpose()?,
            resources: resources
                .then(|| resources::GuestIndices::new(&pre))
                .transpose()?,
            prompts: prompts
                .then(|| prompts::GuestIndices::new(&pre))
                .transpose()?,
            completion: completion
                .then(|| completion::GuestIndices::new(&pre))
                .transpose()?,
            pre,
        })
    }
}

/// One call into a plugin: what to call, with what.
#[derive(Debug, Clone)]
pub enum Request {
    ListTools,
    Call {
        tool: String,
        arguments: String,
    },
    ListResources,
    Read {
        uri: String,
    },
    ListPrompts,
    Get {
        name: String,
        arguments: Vec<(String, String)>,
    },
    Complete {
        reference: completion::Reference,
        argument: String,
        value: String,
        context: Vec<(String, String)>,
    },
}

impl Request {
    /// What the request calls, for messages: `list` and `call` (the tools', named as before 0.3.0), `resources.list`, `resources.read`...
    pub fn function(&self) -> &'static str {
        match self {
            Request::ListTools => "list",
            Request::Call { .. } => "call",
            Request::ListResources => "resources.list",
            Request::Read { .. } => "resources.read",
            Request::ListPrompts => "prompts.list",
            Request::Get { .. } => "prompts.get",
            Request::Complete { .. } => "completion.complete",
        }
    }
}

/// What a [`Request`] returned, of the same kind.
#[derive(Debug)]
pub enum Response {
    Tools(Vec<tools::Tool>),
    Called(tools::CallResult),
    Resources(resources::Listing),
    Read(Result<Vec<resources::Contents>, resources::ReadError>),
    Prompts(Vec<prompts::Prompt>),
    Got(Result<prompts::PromptResult, prompts::GetError>),
    Completed(completion::Completions),
}

/// A component's imports resolved once, for the contract it targets.
pub enum PluginPre<T: 'static> {
    V0_1(v0_1::PluginPre<T>),
    V0_2(v0_2::PluginPre<T>),
    V0_3(Arc<Exports03<T>>),
}

impl<T: 'static> Clone for PluginPre<T> {
    fn clone(&self) -> Self {
        match self {
            PluginPre::V0_1(pre) => PluginPre::V0_1(pre.clone()),
            PluginPre::V0_2(pre) => PluginPre::V0_2(pre.clone()),
            PluginPre::V0_3(pre) => PluginPre::V0_3(pre.clone()),
        }
    }
}

impl<T: Send + 'static> PluginPre<T> {
    pub fn contract(&self) -> Contract {
        match self {
            PluginPre::V0_1(_) => Contract::V0_1,
            PluginPre::V0_2(_) => Contract::V0_2,
            PluginPre::V0_3(_) => Contract::V0_3,
        }
    }

    /// Which interfaces the component exports (0.1.0 and 0.2.0: `tools`).
    pub fn exports(&self) -> Exports {
        match self {
            PluginPre::V0_1(_) | PluginPre::V0_2(_) => Exports {
                tools: true,
                ..Exports::default()
            },
            PluginPre::V0_3(pre) => Exports {
                tools: pre.tools.is_some(),
                resources: pre.resources.is_some(),
                prompts: pre.prompts.is_some(),
                completion: pre.completion.is_some(),
            },
        }
    }

    /// Instantiates the component and makes `request`. A request of an
    /// interface the component does not export answers as if it had
    /// nothing (callers do not make those: see [`PluginPre::exports`]).
    /// `instantiated` sees the store's data between the two: what the
    /// guest's runtime did while it started (Go's reads its preopened
    /// directories whatever the plugin does) is not the request's doing.
    pub async fn invoke(
        &self,
        store: &mut wasmtime::Store<T>,
        instantiated: fn(&mut T),
        request: Request,
    ) -> wasmtime::Result<Response> {
        match (self, request) {
            (PluginPre::V0_1(pre), Request::ListTools) => {
                let instance = pre.instantiate_async(&mut *store).await?;
                instantiated(store.data_mut());
                let tools = instance
                    .corral_plugin_tools()
                    .call_list(&mut *store)
                    .await?;
                Ok(Response::Tools(tools))
            }
            (PluginPre::V0_1(pre), Request::Call { tool, arguments }) => {
                let instance = pre.instantiate_async(&mut *store).await?;
                instantiated(store.data_mut());
                let result = instance
                    .corral_plugin_tools()
                    .call_call(&mut *store, &tool, &arguments)
                    .await?;
                Ok(Response::Called(result))
            }
            (PluginPre::V0_2(pre), Request::ListTools) => {
                let tools: wasmtime::Result<Vec<tools::Tool>> =
                    later_list!(v0_2, pre, store, instantiated);
                Ok(Response::Tools(tools?))
            }
            (PluginPre::V0_2(pre), Request::Call { tool, arguments }) => {
                let result: wasmtime::Result<tools::CallResult> =
                    later_call!(pre, store, instantiated, &tool, &arguments);
                Ok(Response::Called(result?))
            }
            (PluginPre::V0_3(pre), request) => pre.invoke(store, instantiated, request).await,
            (_, request) => Ok(Response::nothing(&request)),
        }
    }
}

impl Response {
    /// The answer of a plugin that does not export what `request` calls:
    /// nothing to list, nothing found, nothing to suggest.
    fn nothing(request: &Request) -> Response {
        match request {
            Request::ListTools => Response::Tools(Vec::new()),
            Request::Call { .. } => Response::Called(tools::CallResult {
                content: Vec::new(),
                structured_content: None,
                is_error: true,
            }),
            Request::ListResources => Response::Resources(resources::Listing {
                resources: Vec::new(),
                templates: Vec::new(),
            }),
            Request::Read { .. } => Response::Read(Err(resources::ReadError::NotFound)),
            Request::ListPrompts => Response::Prompts(Vec::new()),
            Request::Get { name, .. } => Response::Got(Err(prompts::GetError::InvalidArguments(
                format!("no prompt `{name}`"),
            ))),
            Request::Complete { .. } => Response::Completed(completion::Completions {
                values: Vec::new(),
                total: None,
                has_more: false,
            }),
        }
    }
}

impl<T: Send + 'static> Exports03<T> {
    async fn invoke(
        &self,
        store: &mut wasmtime::Store<T>,
        instantiated: fn(&mut T),
        request: Request,
    ) -> wasmtime::Result<Response> {
        if !self.exports(&request) {
            return Ok(Response::nothing(&request));
        }
        let instance = self.instantiate(&mut *store).await?;
        instantiated(store.data_mut());
        self.dispatch(store, instance, request).await
    }

    /// Whether the component exports the interface `request` is of.
    pub(crate) fn exports(&self, request: &Request) -> bool {
        match request {
            Request::ListTools | Request::Call { .. } => self.tools.is_some(),
            Request::ListResources | Request::Read { .. } => self.resources.is_some(),
            Request::ListPrompts | Request::Get { .. } => self.prompts.is_some(),
            Request::Complete { .. } => self.completion.is_some(),
        }
    }

    /// A new instance of the component in `store`, which runs nothing of
    /// the plugin's but its start functions.
    pub(crate) async fn instantiate(
        &self,
        store: &mut wasmtime::Store<T>,
    ) -> wasmtime::Result<wasmtime::component::Instance> {
        self.pre.instantiate_async(store).await
    }

    /// Makes `request` of `instance`, made in `store` and never called
    /// before. The component exports the interface `request` is of: its
    /// callers check ([`Exports03::exports`]).
    pub(crate) async fn dispatch(
        &self,
        store: &mut wasmtime::Store<T>,
        instance: wasmtime::component::Instance,
        request: Request,
    ) -> wasmtime::Result<Response> {
        let store = &mut *store;
        // Each lookup below is of an export its caller found present.
        Ok(match request {
            Request::ListTools => {
                let guest = self
                    .tools
                    .as_ref()
                    .expect("exported")
                    .load(&mut *store, &instance)?;
                let listed = guest.call_list(&mut *store).await?;
                Response::Tools(
                    listed
                        .into_iter()
                        .map(|tool| tool_from!(v0_3, tool))
                        .collect(),
                )
            }
            Request::Call { tool, arguments } => {
                let guest = self
                    .tools
                    .as_ref()
                    .expect("exported")
                    .load(&mut *store, &instance)?;
                let result = guest.call_call(&mut *store, &tool, &arguments).await?;
                Response::Called(tools::CallResult {
                    content: result.content,
                    structured_content: result.structured_content,
                    is_error: result.is_error,
                })
            }
            Request::ListResources => {
                let guest = self
                    .resources
                    .as_ref()
                    .expect("exported")
                    .load(&mut *store, &instance)?;
                Response::Resources(guest.call_list(&mut *store).await?)
            }
            Request::Read { uri } => {
                let guest = self
                    .resources
                    .as_ref()
                    .expect("exported")
                    .load(&mut *store, &instance)?;
                Response::Read(guest.call_read(&mut *store, &uri).await?)
            }
            Request::ListPrompts => {
                let guest = self
                    .prompts
                    .as_ref()
                    .expect("exported")
                    .load(&mut *store, &instance)?;
                Response::Prompts(guest.call_list(&mut *store).await?)
            }
            Request::Get { name, arguments } => {
                let guest = self
                    .prompts
                    .as_ref()
                    .expect("exported")
                    .load(&mut *store, &instance)?;
                Response::Got(guest.call_get(&mut *store, &name, &arguments).await?)
            }
            Request::Complete {
                reference,
                argument,
                value,
                context,
            } => {
                let guest = self
                    .completion
                    .as_ref()
                    .expect("exported")
                    .load(&mut *store, &instance)?;
                Response::Completed(
                    guest
                        .call_complete(&mut *store, &reference, &argument, &value, &context)
                        .await?,
                )
            }
        })
    }
}

/// A later version's tool (`$version` names its bindings) as the 0.1.0
/// record it is field for field.
macro_rules! tool_from {
    ($version:ident, $tool:expr) => {{
        use $version::exports::corral::plugin::tools as new;
        let tool: new::Tool = $tool;
        tools::Tool {
            name: tool.name,
            title: tool.title,
            description: tool.description,
            input_schema: tool.input_schema,
            output_schema: tool.output_schema,
            annotations: tool.annotations.map(|a| tools::ToolAnnotations {
                title: a.title,
                read_only_hint: a.read_only_hint,
                destructive_hint: a.destructive_hint,
                idempotent_hint: a.idempotent_hint,
                open_world_hint: a.open_world_hint,
            }),
            icons: tool
                .icons
                .into_iter()
                .map(|icon| tools::Icon {
                    src: icon.src,
                    mime_type: icon.mime_type,
                    sizes: icon.sizes,
                    theme: icon.theme,
                })
                .collect(),
            task_support: tool.task_support.map(|support| match support {
                new::TaskSupport::Forbidden => tools::TaskSupport::Forbidden,
                new::TaskSupport::Optional => tools::TaskSupport::Optional,
                new::TaskSupport::Required => tools::TaskSupport::Required,
            }),
        }
    }};
}
use tool_from;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_of_no_served_version_is_told_which_are() {
        let none = UnknownContract { tools: vec![] };
        assert_eq!(
            none.to_string(),
            "it exports no `corral:plugin/tools` interface: a plugin exports corral:plugin/tools@0.1.0 or corral:plugin/tools@0.2.0 or corral:plugin/tools@0.3.0, or corral:plugin/resources@0.3.0 or corral:plugin/prompts@0.3.0 (build it against wit/plugin.wit)"
        );
        let newer = UnknownContract {
            tools: vec!["corral:plugin/tools@0.4.0".into()],
        };
        assert_eq!(
            newer.to_string(),
            "it exports corral:plugin/tools@0.4.0, a contract version this host does not serve: it serves corral:plugin/tools@0.1.0, corral:plugin/tools@0.2.0, corral:plugin/tools@0.3.0"
        );
        assert_eq!(Contract::V0_3.to_string(), "corral:plugin@0.3.0");
    }
}
