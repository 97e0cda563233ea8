//! Issue 45: operators can see Corral. Real Prometheus scrapes a running
//! server and its counts are read back through the query API
//! (`observability/metrics.rs`); a real OTLP receiver gets the traces.

mod support;

// The Streamable HTTP client and server, shared by both halves.
#[path = "support/http.rs"]
mod http;

#[path = "observability/metrics.rs"]
mod metrics;

#[path = "observability/traces.rs"]
mod traces;
