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
//! sees one type whichever version a plugin targets. So far each version
//! only added imports (0.2.0 `client`, 0.3.0 `host.tools-changed`); an
//! export added to 0.3.0 before its release (resources, prompts) gets its
//! calls on [`PluginPre::V0_3`] only.
//!
//! Exports are called asynchronously so that a call can be timed out or
//! cancelled by dropping its future (the store yields at every epoch tick).
//! `client.ask` is an async host function: the guest blocks on it while the
//! host waits for the client, burning no fuel; it may trap, to end a run the
//! protocol layer will answer for (see `ask`).

use std::fmt;

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

/// Contract 0.3.0: 0.2.0 plus `host.tools-changed` (unreleased: it may
/// still grow).
pub mod v0_3 {
    wasmtime::component::bindgen!({
        world: "plugin",
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
    /// exports (the newest, should it export several).
    pub fn of(engine: &Engine, component: &Component) -> Result<Contract, UnknownContract> {
        let ty = component.component_type();
        let exports: Vec<String> = ty
            .exports(engine)
            .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentInstance(_)))
            .map(|(name, _)| name.to_owned())
            .collect();
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
                "it exports no `corral:plugin/tools` interface: a plugin exports {} (build it against wit/plugin.wit)",
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
    ($version:ident, $pre:expr, $store:expr) => {{
        let instance = $pre.instantiate_async(&mut *$store).await?;
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
    ($pre:expr, $store:expr, $tool:expr, $arguments:expr) => {{
        let instance = $pre.instantiate_async(&mut *$store).await?;
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

/// A component's imports resolved once, for the contract it targets.
pub enum PluginPre<T: 'static> {
    V0_1(v0_1::PluginPre<T>),
    V0_2(v0_2::PluginPre<T>),
    V0_3(v0_3::PluginPre<T>),
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

    /// Instantiates the component and calls `list`.
    pub async fn list(&self, store: &mut wasmtime::Store<T>) -> wasmtime::Result<Vec<tools::Tool>> {
        match self {
            PluginPre::V0_1(pre) => {
                let instance = pre.instantiate_async(&mut *store).await?;
                instance.corral_plugin_tools().call_list(&mut *store).await
            }
            PluginPre::V0_2(pre) => later_list!(v0_2, pre, store),
            PluginPre::V0_3(pre) => later_list!(v0_3, pre, store),
        }
    }

    /// Instantiates the component and calls `call(tool, arguments)`.
    pub async fn call(
        &self,
        store: &mut wasmtime::Store<T>,
        tool: &str,
        arguments: &str,
    ) -> wasmtime::Result<tools::CallResult> {
        match self {
            PluginPre::V0_1(pre) => {
                let instance = pre.instantiate_async(&mut *store).await?;
                instance
                    .corral_plugin_tools()
                    .call_call(&mut *store, tool, arguments)
                    .await
            }
            PluginPre::V0_2(pre) => later_call!(pre, store, tool, arguments),
            PluginPre::V0_3(pre) => later_call!(pre, store, tool, arguments),
        }
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
            "it exports no `corral:plugin/tools` interface: a plugin exports corral:plugin/tools@0.1.0 or corral:plugin/tools@0.2.0 or corral:plugin/tools@0.3.0 (build it against wit/plugin.wit)"
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
