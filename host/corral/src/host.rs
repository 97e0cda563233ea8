//! The [`ToolHost`] the protocol serves: the catalog's tools, routed to
//! their plugins, and the server's reports.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::reports::Reports;
use corral_tool::{CallContext, CallOutput, HostEvents, ToolDef, ToolHost, UnknownTool};

/// A served folder, as the protocol sees it.
#[derive(Debug, Clone)]
pub struct FolderHost {
    pub catalog: Arc<Catalog>,
    pub reports: Arc<Reports>,
}

impl ToolHost for FolderHost {
    fn tools(&self) -> Arc<[ToolDef]> {
        self.catalog.tools()
    }

    fn ready(&self) -> impl Future<Output = ()> + Send {
        self.catalog.ready()
    }

    fn subscribe(&self) -> Option<HostEvents> {
        Some(HostEvents {
            tools_changed: self.catalog.tools_changed(),
            // Not wired yet: no resources or prompts change.
            resources_changed: tokio::sync::watch::channel(0).1,
            prompts_changed: tokio::sync::watch::channel(0).1,
            resource_updated: tokio::sync::broadcast::channel(1).1,
            logs: self.reports.subscribe(),
        })
    }

    async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> Result<CallOutput, UnknownTool> {
        let snapshot = self.catalog.snapshot();
        let (plugin, index) = snapshot.route(name).ok_or(UnknownTool)?;
        Ok(plugin.call(index, name, arguments, context).await)
    }
}
