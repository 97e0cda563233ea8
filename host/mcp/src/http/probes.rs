//! What an operator's tools ask of a server: `/metrics` (Prometheus),
//! `/healthz` (alive) and `/readyz` (ready to serve). They are answered on
//! the MCP listener (`/metrics` behind its authorization, the health
//! checks without, as probes carry no token) and, for `--metrics ADDR`, on
//! a plain listener of their own, which serves a stdio server too.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use http::{Method, StatusCode};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::body::{HttpResponse, method_not_allowed, plain, text};

/// The media type of the Prometheus text format.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
const PLAIN: &str = "text/plain; charset=utf-8";
/// How long a readiness answer is given again before a new check.
const READINESS_FRESH: Duration = Duration::from_secs(1);
/// How long a readiness check may take before the answer is "not ready".
const READINESS_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections the probes' own listener serves at once; more are closed.
const MAX_PROBE_CONNECTIONS: usize = 16;
/// The longest a prober's connection stays open.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(30);
/// How long a prober may take to send its request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The host's side of the probes.
pub trait Probes: Send + Sync + std::fmt::Debug + 'static {
    /// Every metric in the Prometheus text format (0.0.4), if metrics are
    /// kept.
    fn metrics(&self) -> Option<String>;

    /// Whether the server is ready to serve, or why not. Blocking (it may
    /// ask the state backend): run on a blocking thread, within
    /// [`READINESS_TIMEOUT`].
    fn readiness(&self) -> Result<(), String>;
}

/// The paths the probes answer.
pub(super) fn is_probe_path(path: &str) -> bool {
    matches!(path, "/metrics" | "/healthz" | "/readyz")
}

/// The answer to a probe at `path` (one of [`is_probe_path`]), by
/// `method`.
pub(super) async fn probe_response(
    probes: &Arc<dyn Probes>,
    path: &str,
    method: &Method,
) -> HttpResponse {
    if method != Method::GET && method != Method::HEAD {
        return method_not_allowed("GET, HEAD", "method not allowed: probes answer GET");
    }
    match path {
        "/healthz" => plain(StatusCode::OK, "ok"),
        "/readyz" => match readiness(probes).await {
            Ok(()) => plain(StatusCode::OK, "ready"),
            Err(why) => text(
                StatusCode::SERVICE_UNAVAILABLE,
                PLAIN,
                format!("not ready: {why}"),
            ),
        },
        _ => match probes.metrics() {
            Some(metrics) => text(StatusCode::OK, PROMETHEUS_TEXT, metrics),
            None => plain(
                StatusCode::NOT_FOUND,
                "not found: this server keeps no metrics (start it with --metrics ADDR or --http)",
            ),
        },
    }
}

/// Whether the server is ready: the last check's answer if it is under
/// [`READINESS_FRESH`] old, else a new one. One check runs at a time, on a
/// blocking thread, within [`READINESS_TIMEOUT`]; probes arriving
/// meanwhile wait for its answer, so that a flood of `/readyz` (which
/// needs no token) asks the state store once a second at most and holds
/// no more than one blocking thread.
async fn readiness(probes: &Arc<dyn Probes>) -> Result<(), String> {
    static LAST: tokio::sync::Mutex<Option<(Instant, Result<(), String>)>> =
        tokio::sync::Mutex::const_new(None);
    let mut last = LAST.lock().await;
    if let Some((at, answer)) = last.as_ref()
        && at.elapsed() < READINESS_FRESH
    {
        return answer.clone();
    }
    let checking = probes.clone();
    let check = tokio::task::spawn_blocking(move || checking.readiness());
    let answer = match tokio::time::timeout(READINESS_TIMEOUT, check).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err("the readiness check failed".into()),
        Err(_) => Err(format!(
            "the readiness check took over {} s",
            READINESS_TIMEOUT.as_secs()
        )),
    };
    *last = Some((Instant::now(), answer.clone()));
    answer
}

/// Serves the probes alone on `listen` (`--metrics ADDR`), without
/// authorization: bind it where only the operator's scrapers reach. Logs
/// the address it listens on; runs until the runtime stops.
pub async fn serve_probes(
    listen: SocketAddr,
    probes: Arc<dyn Probes>,
) -> Result<impl Future<Output = ()>> {
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening for metrics on {listen}"))?;
    let local = listener.local_addr()?;
    tracing::info!("serving metrics on http://{local}/metrics");
    let slots = Arc::new(Semaphore::new(MAX_PROBE_CONNECTIONS));
    Ok(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(err) => {
                    // Out of descriptors, most likely: wait rather than spin.
                    tracing::debug!("the metrics listener's accept failed: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            // Over the limit: closed at once, for the prober to retry,
            // rather than left waiting in the backlog.
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                drop(stream);
                continue;
            };
            let probes = probes.clone();
            let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
                let probes = probes.clone();
                async move {
                    let path = request.uri().path();
                    let response = if is_probe_path(path) {
                        probe_response(&probes, path, request.method()).await
                    } else {
                        plain(StatusCode::NOT_FOUND, "not found: try /metrics")
                    };
                    Ok::<_, Infallible>(response)
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::spawn(async move {
                // A prober that stops reading holds its slot this long.
                let _ = tokio::time::timeout(CONNECTION_LIFETIME, connection).await;
                drop(slot);
            });
        }
    })
}
