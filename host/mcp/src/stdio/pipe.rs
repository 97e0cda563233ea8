//! Stdin and stdout as non-blocking pipes or sockets, used from the runtime
//! (woken by epoll) rather than from threads of their own.

use std::fs::File;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};
use tokio::sync::Notify;

use super::flow::{BACKLOG_PAUSE, Flow, Output};
use super::lines::line_of;

/// How long the end of the session waits for a client that does not
/// read the last answers.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A standard file descriptor switched to non-blocking mode; its
/// original flags come back when it is dropped, so that whoever shares
/// the pipe after us finds it as it was.
pub struct NonBlocking {
    file: ManuallyDrop<File>,
    flags: libc::c_int,
}

impl NonBlocking {
    /// `fd` when it is a pipe or a socket (which epoll can watch): not a
    /// terminal, whose mode is shared with the shell, nor a file.
    fn open(fd: RawFd, interest: Interest) -> Option<AsyncFd<NonBlocking>> {
        // SAFETY: fstat and fcntl on a standard descriptor with a valid
        // out-pointer.
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
        // SAFETY: the standard descriptors stay open, on the same file
        // description, for the life of the process: the ManuallyDrop
        // never closes it, and nothing in the server opens, closes or
        // replaces them.
        let file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
        // SAFETY: as above, for as long as the AsyncFd lives. On failure
        // the error drops the NonBlocking, restoring the flags.
        unsafe { AsyncFd::register_with_interest(NonBlocking { file, flags }, interest) }.ok()
    }
}

impl AsRawFd for NonBlocking {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

impl Drop for NonBlocking {
    fn drop(&mut self) {
        // SAFETY: restores the flags read in `open` on the descriptor.
        unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_SETFL, self.flags) };
    }
}

/// Stdin as a pipe.
pub struct PipeReader(AsyncFd<NonBlocking>);

impl PipeReader {
    pub fn stdin() -> Option<PipeReader> {
        NonBlocking::open(libc::STDIN_FILENO, Interest::READABLE).map(PipeReader)
    }
}

impl AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            let mut ready = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let wanted = unfilled.len();
            match ready.try_io(|stdin| (&*stdin.get_ref().file).read(unfilled)) {
                Ok(Ok(read)) => {
                    // A short read drained the pipe: wait for the next
                    // write rather than find it empty with another read.
                    // (Readiness that a newer event set is not cleared.)
                    if read < wanted {
                        ready.clear_ready();
                    }
                    buf.advance(read);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(err)) => return Poll::Ready(Err(err)),
                Err(_would_block) => continue,
            }
        }
    }
}

/// Stdout: lines written at once while the pipe has room, queued in
/// order when it has not.
pub struct PipeWriter {
    fd: AsyncFd<NonBlocking>,
    backlog: Mutex<Backlog>,
    /// Signalled when the backlog empties (or the output fails).
    drained: Notify,
    /// Signalled when the backlog falls below half of [`BACKLOG_PAUSE`].
    room: Notify,
    flow: Flow,
}

#[derive(Default)]
struct Backlog {
    /// Bytes not yet written, in order; `written` of them already are.
    bytes: Vec<u8>,
    written: usize,
    /// A task is draining the backlog.
    draining: bool,
    /// The output failed: the client is gone, and there is no one left
    /// to tell.
    closed: bool,
}

impl Backlog {
    fn is_empty(&self) -> bool {
        self.written == self.bytes.len()
    }

    /// Bytes not yet written.
    fn unsent(&self) -> usize {
        self.bytes.len() - self.written
    }
}

impl PipeWriter {
    /// Stdout as a pipe.
    pub fn stdout() -> Option<Arc<PipeWriter>> {
        let fd = NonBlocking::open(libc::STDOUT_FILENO, Interest::WRITABLE)?;
        Some(Arc::new(PipeWriter {
            fd,
            backlog: Mutex::new(Backlog::default()),
            drained: Notify::new(),
            room: Notify::new(),
            flow: Flow::default(),
        }))
    }

    /// Writes `line`, the serialized `message`, or queues it; drops it
    /// instead where the flow rule says so (checked under the lock that
    /// writing takes anyway).
    fn write(self: &Arc<Self>, line: Vec<u8>, message: &Value) {
        let mut backlog = self.backlog.lock().unwrap();
        if backlog.closed || !self.flow.admits(backlog.unsent(), message) {
            return;
        }
        if backlog.is_empty() {
            // The common case: straight into the pipe.
            match write_some(&self.fd, &line) {
                Ok(written) if written == line.len() => return,
                Ok(written) => {
                    backlog.bytes.clear();
                    backlog.written = 0;
                    backlog.bytes.extend_from_slice(&line[written..]);
                }
                Err(err) => {
                    close(&mut backlog, &err);
                    self.drained.notify_waiters();
                    self.room.notify_waiters();
                    return;
                }
            }
        } else {
            backlog.bytes.extend_from_slice(&line);
        }
        if !backlog.draining {
            backlog.draining = true;
            tokio::spawn(self.clone().drain());
        }
    }

    /// Writes the backlog as the client makes room, then ends.
    async fn drain(self: Arc<Self>) {
        loop {
            let mut ready = match self.fd.writable().await {
                Ok(ready) => ready,
                Err(err) => {
                    let mut backlog = self.backlog.lock().unwrap();
                    close(&mut backlog, &err);
                    break;
                }
            };
            let mut backlog = self.backlog.lock().unwrap();
            let start = backlog.written;
            match write_some(&self.fd, &backlog.bytes[start..]) {
                Ok(written) => {
                    backlog.written += written;
                    if backlog.unsent() < BACKLOG_PAUSE / 2 {
                        self.room.notify_waiters();
                    }
                    if backlog.is_empty() {
                        backlog.bytes = Vec::new();
                        backlog.written = 0;
                        backlog.draining = false;
                        break;
                    }
                    // Lines keep coming while a slow client reads:
                    // forget what is sent rather than grow forever.
                    if backlog.written >= backlog.unsent() {
                        let sent = backlog.written;
                        backlog.bytes.drain(..sent);
                        backlog.written = 0;
                    }
                    ready.clear_ready();
                }
                Err(err) => {
                    close(&mut backlog, &err);
                    break;
                }
            }
        }
        self.drained.notify_waiters();
        self.room.notify_waiters();
    }

    /// Resolves when every message so far is written (or the client is
    /// gone), or after [`DRAIN_TIMEOUT`] for a client that stopped
    /// reading.
    async fn drained(&self) {
        let wait = async {
            loop {
                let notified = self.drained.notified();
                {
                    let backlog = self.backlog.lock().unwrap();
                    if backlog.closed || backlog.is_empty() {
                        return;
                    }
                }
                notified.await;
            }
        };
        if tokio::time::timeout(DRAIN_TIMEOUT, wait).await.is_err() {
            tracing::warn!("the client did not read its last answers; exiting without them");
        }
    }
}

impl Output for PipeWriter {
    fn send(self: &Arc<Self>, message: Value) {
        self.write(line_of(&message), &message);
    }

    fn unsent(&self) -> Option<usize> {
        let backlog = self.backlog.lock().unwrap();
        (!backlog.closed).then(|| backlog.unsent())
    }

    fn room(&self) -> &Notify {
        &self.room
    }

    async fn finish(&self) -> Result<()> {
        self.drained().await;
        Ok(())
    }
}

/// Writes as much of `bytes` as the pipe takes now.
fn write_some(fd: &AsyncFd<NonBlocking>, bytes: &[u8]) -> std::io::Result<usize> {
    let mut written = 0;
    while written < bytes.len() {
        match (&*fd.get_ref().file).write(&bytes[written..]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(written)
}

fn close(backlog: &mut Backlog, err: &std::io::Error) {
    tracing::debug!("output closed: {err}");
    backlog.closed = true;
    backlog.draining = false;
    backlog.bytes = Vec::new();
    backlog.written = 0;
}
