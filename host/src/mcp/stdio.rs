//! The stdio transport: one JSON-RPC message per line in each direction.
//!
//! A thread of its own reads the input with plain blocking I/O and hands
//! each frame straight to the [`Session`], which spawns the work onto the
//! runtime. Whoever produces a message (a request's task, the session's
//! host follower, the reader itself for protocol errors) writes it to the
//! output at once, under a lock. A message thus crosses threads once on its
//! way in and never on its way out: on a call that takes tens of
//! microseconds, every wake-up of a sleeping thread is a visible cost.
//!
//! When the input closes, work in flight finishes, its responses are
//! written, and [`serve`] returns.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use serde_json::Value;
use tokio::sync::oneshot;

use super::ToolHost;
use super::jsonrpc::{self, Frame, RpcError};
use super::session::{Outbox, ServerOptions, Session};

/// Serves MCP on the process's stdin and stdout until stdin closes.
pub async fn serve_stdio<H: ToolHost>(host: Arc<H>, options: ServerOptions) -> Result<()> {
    let stdin = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin());
    serve(host, options, stdin, std::io::stdout()).await
}

/// Serves MCP on `input` and `output` until `input` closes.
pub async fn serve<H, R, W>(host: Arc<H>, options: ServerOptions, input: R, output: W) -> Result<()>
where
    H: ToolHost,
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let writer = Arc::new(LineWriter::new(output));
    let outbox: Outbox = {
        let writer = writer.clone();
        Arc::new(move |message| writer.write(&message))
    };
    let session = Session::new(host, options, outbox.clone());

    let (closed, input_closed) = oneshot::channel::<()>();
    let runtime = tokio::runtime::Handle::current();
    let reader_session = session.clone();
    std::thread::Builder::new()
        .name("corral-stdin".into())
        .spawn(move || {
            // Inside the runtime's context, so that the session can spawn.
            let _runtime = runtime.enter();
            read_frames(input, &reader_session, &outbox);
            drop(closed);
        })?;
    // Resolves when the reader returns (or panics): the input is done.
    let _ = input_closed.await;
    tracing::debug!("input closed");
    session.finish().await;
    writer.flush()
}

/// Reads lines until end of input or a read error, handing each frame to
/// the session with `outbox` as its reply.
fn read_frames<H: ToolHost, R: BufRead>(mut input: R, session: &Arc<Session<H>>, outbox: &Outbox) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) => {}
            Err(err) => {
                tracing::error!("reading input: {err}");
                return;
            }
        }
        let frame = match std::str::from_utf8(&line) {
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => jsonrpc::parse_frame(text.trim()),
            Err(_) => Frame::Unparseable(RpcError::new(
                jsonrpc::code::PARSE_ERROR,
                "Parse error: the line is not valid UTF-8",
            )),
        };
        session.handle_frame(frame, outbox.clone());
    }
}

/// The one writer of the output: each message is serialized by the thread
/// that sends it, then written and flushed as one line under the lock, so
/// lines never interleave.
struct LineWriter<W> {
    /// `None` once a write failed: the client is gone, and there is no one
    /// left to tell.
    output: Mutex<Option<W>>,
}

impl<W: Write> LineWriter<W> {
    fn new(output: W) -> Self {
        LineWriter {
            output: Mutex::new(Some(output)),
        }
    }

    fn write(&self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("a JSON value always serializes");
        line.push(b'\n');
        let mut output = self.output.lock().unwrap();
        let Some(out) = output.as_mut() else { return };
        if let Err(err) = out.write_all(&line).and_then(|()| out.flush()) {
            tracing::debug!("output closed: {err}");
            *output = None;
        }
    }

    fn flush(&self) -> Result<()> {
        if let Some(out) = self.output.lock().unwrap().as_mut() {
            out.flush()?;
        }
        Ok(())
    }
}
