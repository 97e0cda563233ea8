//! The stdio transport: one JSON-RPC message per line in each direction.
//!
//! On a call that takes tens of microseconds, every wake-up of a sleeping
//! thread is a visible cost, so a message crosses no thread it need not:
//! - When stdin is a pipe or a socket (as MCP clients start servers), it is
//!   read without blocking by a task on the runtime, woken by epoll. The
//!   task hands each frame to the [`Session`], whose request tasks land on
//!   the same worker's local queue and run there next: a request arrives,
//!   runs and is answered on one thread.
//! - Otherwise (a terminal, a file), a thread of its own reads with plain
//!   blocking I/O and hands each frame to the session, which spawns the work
//!   onto the runtime: one hand-off.
//!
//! Whoever produces a message (a request's task, the session's host
//! follower, the reader for protocol errors) writes it to the output at
//! once, under a lock.
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
    #[cfg(unix)]
    if let Some(stdin) = pipe::NonBlockingStdin::open() {
        let writer = Arc::new(LineWriter::new(std::io::stdout()));
        let outbox = writer.outbox();
        let session = Session::new(host, options, outbox.clone());
        let reader = tokio::spawn(pipe::read_frames(stdin, session.clone(), outbox));
        if let Err(err) = reader.await {
            tracing::error!("the stdin reader failed: {err}");
        }
        tracing::debug!("input closed");
        session.finish().await;
        return writer.flush();
    }
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
    let outbox = writer.outbox();
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
        handle_line(&line, session, outbox);
    }
}

/// Hands one input line (without or with its newline) to the session.
fn handle_line<H: ToolHost>(line: &[u8], session: &Arc<Session<H>>, outbox: &Outbox) {
    let frame = match std::str::from_utf8(line) {
        Ok(text) if text.trim().is_empty() => return,
        Ok(text) => jsonrpc::parse_frame(text.trim()),
        Err(_) => Frame::Unparseable(RpcError::new(
            jsonrpc::code::PARSE_ERROR,
            "Parse error: the line is not valid UTF-8",
        )),
    };
    session.handle_frame(frame, outbox.clone());
}

/// The one writer of the output: each message is serialized by the thread
/// that sends it, then written and flushed as one line under the lock, so
/// lines never interleave.
struct LineWriter<W> {
    /// `None` once a write failed: the client is gone, and there is no one
    /// left to tell.
    output: Mutex<Option<W>>,
}

impl<W: Write + Send + 'static> LineWriter<W> {
    fn new(output: W) -> Self {
        LineWriter {
            output: Mutex::new(Some(output)),
        }
    }

    fn outbox(self: &Arc<Self>) -> Outbox {
        let writer = self.clone();
        Arc::new(move |message| writer.write(&message))
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

/// Stdin as a non-blocking pipe read from the runtime.
#[cfg(unix)]
mod pipe {
    use std::fs::File;
    use std::io::Read;
    use std::mem::ManuallyDrop;
    use std::os::fd::{AsRawFd, FromRawFd, RawFd};
    use std::sync::Arc;

    use tokio::io::unix::AsyncFd;

    use super::{Outbox, Session, ToolHost, handle_line};

    /// File descriptor 0 switched to non-blocking mode; its original flags
    /// come back when it is dropped, so that whoever shares the pipe after
    /// us finds it as it was.
    pub struct NonBlockingStdin {
        file: ManuallyDrop<File>,
        flags: libc::c_int,
    }

    impl NonBlockingStdin {
        /// Stdin, when it is a pipe or a socket (which epoll can watch); not a
        /// terminal, whose mode is shared with the shell, nor a file.
        pub fn open() -> Option<AsyncFd<NonBlockingStdin>> {
            let fd = libc::STDIN_FILENO;
            // SAFETY: fstat and fcntl on fd 0 with a valid out-pointer.
            let flags = unsafe {
                let mut stat: libc::stat = std::mem::zeroed();
                if libc::fstat(fd, &mut stat) != 0 {
                    return None;
                }
                let kind = stat.st_mode & libc::S_IFMT;
                if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
                    return None;
                }
                let flags = libc::fcntl(fd, libc::F_GETFL);
                if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                    return None;
                }
                flags
            };
            // SAFETY: fd 0 stays open, and the same file description, for
            // the life of the process: the ManuallyDrop never closes it, and
            // nothing else in the server opens, closes or replaces fd 0.
            let file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
            // SAFETY: as above, for as long as the AsyncFd lives. On failure
            // the error drops the NonBlockingStdin, restoring the flags.
            unsafe {
                AsyncFd::register_with_interest(
                    NonBlockingStdin { file, flags },
                    tokio::io::Interest::READABLE,
                )
            }
            .ok()
        }
    }

    impl AsRawFd for NonBlockingStdin {
        fn as_raw_fd(&self) -> RawFd {
            self.file.as_raw_fd()
        }
    }

    impl Drop for NonBlockingStdin {
        fn drop(&mut self) {
            // SAFETY: restores the flags read in `open` on fd 0.
            unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_SETFL, self.flags) };
        }
    }

    /// Reads lines until end of input or a read error, handing each frame
    /// to the session with `outbox` as its reply.
    pub async fn read_frames<H: ToolHost>(
        stdin: AsyncFd<NonBlockingStdin>,
        session: Arc<Session<H>>,
        outbox: Outbox,
    ) {
        let mut pending = Vec::with_capacity(64 * 1024);
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let mut ready = match stdin.readable().await {
                Ok(ready) => ready,
                Err(err) => {
                    tracing::error!("waiting for input: {err}");
                    return;
                }
            };
            let read = match ready.try_io(|stdin| (&*stdin.get_ref().file).read(&mut chunk)) {
                Ok(read) => read,
                Err(_would_block) => continue,
            };
            match read {
                Ok(0) => {
                    // A last line without its newline still counts.
                    handle_line(&pending, &session, &outbox);
                    return;
                }
                Ok(n) => {
                    let mut start = 0;
                    for end in memchr_iter(&chunk[..n]) {
                        if pending.is_empty() {
                            handle_line(&chunk[start..end], &session, &outbox);
                        } else {
                            pending.extend_from_slice(&chunk[start..end]);
                            handle_line(&pending, &session, &outbox);
                            pending.clear();
                        }
                        start = end + 1;
                    }
                    pending.extend_from_slice(&chunk[start..n]);
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => {
                    tracing::error!("reading input: {err}");
                    return;
                }
            }
        }
    }

    /// The positions of the newlines in `bytes`.
    fn memchr_iter(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
        bytes
            .iter()
            .enumerate()
            .filter_map(|(i, &byte)| (byte == b'\n').then_some(i))
    }
}
