//! The listener: accepting connections within the connection limit, serving
//! each with hyper, and the graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::legacy::finish_sessions;
use super::{HttpOptions, Server};
use crate::ToolHost;
use crate::session::ServerOptions;

/// How long a client may take to send its request headers (also how long
/// an idle kept-alive connection stays open).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections over `max_connections` being answered 503 at once; beyond
/// this many, such a connection is closed unanswered.
const MAX_REFUSING: usize = 64;

/// Serves MCP over HTTP until `shutdown` resolves, then shuts down
/// gracefully. Logs the address it listens on (useful with port 0).
pub async fn serve_http<H, S>(
    host: Arc<H>,
    options: ServerOptions,
    http: HttpOptions,
    shutdown: S,
) -> Result<()>
where
    H: ToolHost,
    S: Future<Output = ()>,
{
    let listener = TcpListener::bind(http.listen)
        .await
        .with_context(|| format!("listening on {}", http.listen))?;
    let local = listener.local_addr()?;
    tracing::info!("listening on http://{local}{}", http.path);
    if let Some(authorizer) = &http.authorizer {
        tracing::info!(
            "authorizing requests as resource {} for issuer(s) {}",
            authorizer.resource(),
            authorizer.issuers().join(", ")
        );
        authorizer.warm();
    }
    let server = Arc::new(Server::new(host, options, http, local));
    let sweeper = tokio::spawn(server.clone().sweep_idle_sessions());

    raise_open_file_limit();
    let graceful = GracefulShutdown::new();
    accept_until(&listener, &server, &graceful, shutdown).await;

    tracing::info!("shutting down: finishing requests in flight");
    drop(listener);
    sweeper.abort();
    shut_down(&server, graceful).await;
    Ok(())
}

/// Accepts connections on `listener` and serves them, watched by
/// `graceful`, until `shutdown` resolves. A connection over the limit is
/// refused.
async fn accept_until<H: ToolHost>(
    listener: &TcpListener,
    server: &Arc<Server<H>>,
    graceful: &GracefulShutdown,
    shutdown: impl Future<Output = ()>,
) {
    let connections = Arc::new(Semaphore::new(server.http.max_connections));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let mut refusing_now = false;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors and the like: wait, then go on.
                    tracing::warn!("accepting a connection: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(open) = connections.clone().try_acquire_owned() else {
            // Warned once per stretch of refusals: a flood must not flood stderr.
            if !refusing_now {
                refusing_now = true;
                let limit = server.http.max_connections;
                tracing::warn!("refusing connections: {limit} are open (--max-connections)");
            }
            crate::telemetry::budget_refused("connections");
            refuse_connection(stream, &refusing, server.http.max_connections);
            continue;
        };
        refusing_now = false;
        serve_connection(server.clone(), stream, peer, open, graceful);
    }
}

/// Serves the requests of one connection in a task of its own, which holds
/// `open` (its place under the connection limit) until the connection ends.
fn serve_connection<H: ToolHost>(
    server: Arc<Server<H>>,
    stream: TcpStream,
    peer: SocketAddr,
    open: OwnedSemaphorePermit,
    graceful: &GracefulShutdown,
) {
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |request| {
        let server = server.clone();
        async move { Ok::<_, Infallible>(server.handle(request).await) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    let connection = graceful.watch(connection);
    tokio::spawn(async move {
        if let Err(err) = connection.await {
            tracing::debug!("connection from {peer}: {err}");
        }
        drop(open);
    });
}

/// Once the listener is closed: ends the streams that never end on their
/// own, lets requests in flight finish within the grace period, then
/// finishes the legacy sessions within another.
async fn shut_down<H: ToolHost>(server: &Server<H>, graceful: GracefulShutdown) {
    // Streams that would never end on their own end now; requests in flight
    // go on, and their connections close once answered.
    server.closing.cancel();
    let sessions = server.take_sessions();
    let grace = server.http.shutdown_grace;
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still running after {grace:?}; closing them");
    }
    // All sessions at once, under one more grace period: a server with many
    // sessions still stops within two.
    finish_sessions(sessions, grace).await;
}

/// Answers a connection over the limit with 503 and closes it, without
/// reading its request. The answer is written, and what the client sent
/// meanwhile drained for a moment, so that closing does not reset the
/// connection before the client reads the 503.
fn refuse_connection(mut stream: TcpStream, refusing: &Arc<Semaphore>, limit: usize) {
    let Ok(permit) = refusing.clone().try_acquire_owned() else {
        return; // Dropped: closed unanswered.
    };
    tokio::spawn(async move {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32000,"message":"Service Unavailable: the server has {limit} connections open, its limit; retry shortly"}}}}"#
        );
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let refused = async {
            stream.write_all(answer.as_bytes()).await?;
            stream.shutdown().await?;
            let mut sink = [0u8; 4096];
            while stream.read(&mut sink).await? > 0 {}
            std::io::Result::Ok(())
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), refused).await;
        drop(permit);
    });
}

/// Raises the soft limit on open files to the hard limit: each connection
/// takes a descriptor, and the usual soft limit (1024) is near the default
/// connection limit.
fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write `limit`.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0
                && limit.rlim_cur < limit.rlim_max
            {
                limit.rlim_cur = limit.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
    }
}
