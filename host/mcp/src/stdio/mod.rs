//! The stdio transport: one JSON-RPC message per line in each direction.
//!
//! On a call that takes tens of microseconds, every wake-up of a sleeping
//! thread is a visible cost, so a message crosses no thread it need not.
//! When stdin and stdout are pipes or sockets (as MCP clients start
//! servers), both are used without blocking, from the runtime
//! ([`pipe`]): the reader task is woken by epoll and hands each frame to
//! the [`Session`], whose request tasks land on the same worker's local
//! queue and run there next; whoever produces a message writes it to
//! stdout at once, and what the pipe has no room for waits in a queue that
//! a task drains as the client reads. So a request arrives, runs and is
//! answered on one thread. A terminal or a file is read or written with
//! blocking I/O on a thread of its own instead ([`thread`]), as any line
//! tool would; each end is chosen on its own.
//!
//! There is one reader ([`read_frames`]) and one flow-control rule
//! ([`flow`]), whatever the ends are: once [`flow::BACKLOG_PAUSE`] bytes of
//! answers wait unsent (or [`flow::MAX_REQUESTS_RUNNING`] requests run),
//! stdin is not read until the client has read half of them (or some
//! requests end): a client that never reads is held back by its own full
//! pipe, as with any line protocol, instead of growing the server's memory
//! without limit. Calls already running go on reporting progress and
//! logging meanwhile: while that much waits, those notifications are
//! dropped instead of queued (responses never are).
//!
//! When the input closes, work in flight finishes, its responses are
//! written, and [`serve`] returns.

mod flow;
mod lines;
#[cfg(unix)]
mod pipe;
mod thread;

use std::io::Write;
use std::sync::Arc;

use anyhow::Result;
use tokio::io::{AsyncRead, AsyncReadExt as _};

use super::ToolHost;
use super::session::{Outbox, ServerOptions, Session};
use flow::Output;
use lines::Lines;

/// Bytes asked of stdin at a time.
const CHUNK: usize = 64 * 1024;

/// Serves MCP on the process's stdin and stdout until stdin closes.
pub async fn serve_stdio<H: ToolHost>(host: Arc<H>, options: ServerOptions) -> Result<()> {
    #[cfg(unix)]
    if let Some(stdout) = pipe::PipeWriter::stdout() {
        return serve_input(host, options, stdout).await;
    }
    let stdout = thread::ThreadWriter::start(std::io::stdout())?;
    serve_input(host, options, stdout).await
}

/// Serves with `output` as stdout, and stdin as a pipe where it is one.
async fn serve_input<H: ToolHost, O: Output>(
    host: Arc<H>,
    options: ServerOptions,
    output: Arc<O>,
) -> Result<()> {
    #[cfg(unix)]
    if let Some(stdin) = pipe::PipeReader::stdin() {
        return serve_on(host, options, stdin, output).await;
    }
    serve_on(host, options, tokio::io::stdin(), output).await
}

/// Serves MCP on `input` and `output` until `input` closes; `output` is
/// written from a thread of its own.
pub async fn serve<H, R, W>(host: Arc<H>, options: ServerOptions, input: R, output: W) -> Result<()>
where
    H: ToolHost,
    R: AsyncRead + Unpin + Send + 'static,
    W: Write + Send + 'static,
{
    serve_on(host, options, input, thread::ThreadWriter::start(output)?).await
}

async fn serve_on<H, R, O>(
    host: Arc<H>,
    options: ServerOptions,
    input: R,
    output: Arc<O>,
) -> Result<()>
where
    H: ToolHost,
    R: AsyncRead + Unpin + Send + 'static,
    O: Output,
{
    let outbox = output.outbox();
    let session = Session::new(host, options, outbox.clone());
    metrics::gauge!("corral_sessions").increment(1.0);
    let reader = tokio::spawn(read_frames(input, session.clone(), outbox, output.clone()));
    if let Err(err) = reader.await {
        tracing::error!("the stdin reader failed: {err}");
    }
    metrics::gauge!("corral_sessions").decrement(1.0);
    tracing::debug!("input closed");
    session.finish().await;
    // The session's tasks held the last outboxes: what they sent is all
    // there will be.
    drop(session);
    output.finish().await
}

/// Reads lines until end of input or a read error, handing each frame to
/// the session with `outbox` as its reply, and reading nothing more while
/// the client is behind.
async fn read_frames<H, R, O>(
    mut input: R,
    session: Arc<Session<H>>,
    outbox: Outbox,
    output: Arc<O>,
) where
    H: ToolHost,
    R: AsyncRead + Unpin,
    O: Output,
{
    let mut lines = Lines::default();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        flow::wait_until_caught_up(&*output, &session).await;
        match input.read(&mut chunk).await {
            Ok(0) => return lines.finish(&session, &outbox),
            Ok(read) => {
                lines.feed(&chunk[..read], &session, &outbox);
                if read == chunk.len() {
                    // More is likely waiting. The requests just handed over
                    // run first, so that their answers count in the backlog
                    // before more is read.
                    tokio::task::yield_now().await;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => {
                tracing::error!("reading input: {err}");
                return;
            }
        }
    }
}
