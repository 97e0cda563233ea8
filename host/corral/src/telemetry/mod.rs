//! What an operator watches: metrics in the Prometheus text format
//! ([`metrics`]), traces over OTLP ([`otlp`]), the log's format ([`logs`]),
//! and the health probes ([`ServerProbes`]). The layers below record
//! through the `metrics` facade and `tracing` spans of target
//! [`otlp::TARGET`]; only this module knows where any of it goes.

pub mod logs;
pub mod metrics;
pub mod otlp;

use std::sync::Arc;

use corral_sandbox::state::StateStore;

use crate::catalog::Catalog;
use metrics::Metrics;

/// What `/metrics`, `/healthz` and `/readyz` report of a served folder.
#[derive(Clone)]
pub struct ServerProbes {
    /// The metrics, when a recorder is installed.
    pub metrics: Option<Arc<Metrics>>,
    /// Ready once its first load is published.
    pub catalog: Arc<Catalog>,
    /// Where plugins keep their state: it must answer.
    pub state: Option<StateStore>,
}

impl std::fmt::Debug for ServerProbes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProbes")
            .field("metrics", &self.metrics.is_some())
            .field("state", &self.state)
            .finish()
    }
}

impl corral_mcp::Probes for ServerProbes {
    fn metrics(&self) -> Option<String> {
        self.metrics.as_ref().map(|metrics| metrics.render())
    }

    fn readiness(&self) -> Result<(), String> {
        if !self.catalog.is_ready() {
            return Err("the plugins' first load has not finished".into());
        }
        if let Some(StateStore(backend)) = &self.state {
            // The probe needs no token: it says what is wrong, the log
            // says where (the store's address, the backend's words).
            backend.ping().map_err(|err| {
                tracing::warn!("not ready: {err}");
                String::from("the state store does not answer")
            })?;
        }
        Ok(())
    }
}
