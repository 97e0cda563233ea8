//! The stdio transport: one JSON-RPC message per line in each direction.
//!
//! On a call that takes tens of microseconds, every wake-up of a sleeping
//! thread is a visible cost, so a message crosses no thread it need not.
//! When stdin and stdout are pipes or sockets (as MCP clients start
//! servers), both are used without blocking, from the runtime:
//! - a task reads stdin, woken by epoll, and hands each frame to the
//!   [`Session`], whose request tasks land on the same worker's local queue
//!   and run there next;
//! - whoever produces a message (a request's task, the session's host
//!   follower, the reader for protocol errors) writes it to stdout at once.
//!   What the pipe has no room for waits in a queue that a task drains as
//!   the client reads: a client that reads slowly, or not at all, never
//!   blocks a worker.
//!
//! So a request arrives, runs and is answered on one thread.
//!
//! Otherwise (a terminal, a file) a thread reads stdin with blocking I/O and
//! another writes stdout from a queue, as any line tool would.
//!
//! Either way, once `BACKLOG_PAUSE` bytes of answers wait unsent (or
//! `MAX_REQUESTS_RUNNING` requests run), stdin is not read until the client
//! has read half of them (or some requests end): a client that never reads
//! is held back by its own full pipe, as with any line protocol, instead of
//! growing the server's memory without limit. Calls already running go on
//! reporting progress and logging meanwhile: while that much waits, those
//! notifications are dropped instead of queued (responses never are).
//!
//! When the input closes, work in flight finishes, its responses are
//! written, and [`serve`] returns.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::Result;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::ToolHost;
use super::jsonrpc::{self, Frame, RpcError};
use super::session::{Outbox, ServerOptions, Session};

/// Unsent output at which stdin stops being read; reading resumes once
/// half of it is sent. Far above what a client that reads as it goes
/// leaves waiting (a pipe itself holds 64 KiB), and bounding what one that
/// does not can make the server hold.
const BACKLOG_PAUSE: usize = 16 << 20;

/// Requests running (listen streams aside) at which stdin stops being read
/// until one ends. Far above what tools can run at once (each plugin's
/// concurrency limit refuses more, and the sandbox has 256 instance slots).
const MAX_REQUESTS_RUNNING: usize = 1024;

/// Counts notifications dropped because the client was behind, and warns
/// the first time in each stretch of dropping.
#[derive(Default)]
struct Dropped(AtomicBool);

impl Dropped {
    fn one(&self) {
        if !self.0.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "the client is not reading: progress and log notifications are dropped while {} MiB of output waits",
                BACKLOG_PAUSE >> 20
            );
        }
    }

    fn caught_up(&self) {
        // Stored only on a change: every answer passes here, from any
        // worker, and a store on each would bounce the flag between cores.
        if self.0.load(Ordering::Relaxed) {
            self.0.store(false, Ordering::Relaxed);
        }
    }
}

/// Serves MCP on the process's stdin and stdout until stdin closes.
pub async fn serve_stdio<H: ToolHost>(host: Arc<H>, options: ServerOptions) -> Result<()> {
    #[cfg(unix)]
    if let Some((stdin, stdout)) = pipe::open() {
        let outbox = stdout.outbox();
        let session = Session::new(host, options, outbox.clone());
        let reader = tokio::spawn(pipe::read_frames(
            stdin,
            session.clone(),
            outbox,
            stdout.clone(),
        ));
        if let Err(err) = reader.await {
            tracing::error!("the stdin reader failed: {err}");
        }
        tracing::debug!("input closed");
        session.finish().await;
        stdout.drained().await;
        return Ok(());
    }
    let stdin = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin());
    serve(host, options, stdin, std::io::stdout()).await
}

/// Serves MCP on `input` and `output` until `input` closes, with a thread
/// for each.
pub async fn serve<H, R, W>(host: Arc<H>, options: ServerOptions, input: R, output: W) -> Result<()>
where
    H: ToolHost,
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let (queue, lines) = mpsc::unbounded_channel::<Vec<u8>>();
    let unsent = Arc::new(Unsent::default());
    let writer = {
        let unsent = unsent.clone();
        std::thread::Builder::new()
            .name("corral-stdout".into())
            .spawn(move || {
                let written = write_lines(output, lines, &unsent);
                unsent.closed.store(true, Ordering::Relaxed);
                written
            })?
    };
    let outbox: Outbox = {
        let unsent = unsent.clone();
        let dropped = Dropped::default();
        Arc::new(move |message| {
            if unsent.bytes.load(Ordering::Relaxed) < BACKLOG_PAUSE {
                dropped.caught_up();
            } else if jsonrpc::is_droppable(&message) {
                return dropped.one();
            }
            let line = line_of(&message);
            unsent.bytes.fetch_add(line.len(), Ordering::Relaxed);
            // Fails only once the writer is gone (the client closed its end).
            let _ = queue.send(line);
        })
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
            read_frames(input, &reader_session, &outbox, &unsent);
            drop(closed);
        })?;
    // Resolves when the reader returns (or panics): the input is done.
    let _ = input_closed.await;
    tracing::debug!("input closed");
    session.finish().await;
    // The last senders of the queue: the writer ends once it is empty.
    drop(session);
    let written = tokio::task::spawn_blocking(move || writer.join()).await?;
    written.map_err(|_| anyhow::anyhow!("the stdout writer panicked"))??;
    Ok(())
}

/// One message as a line of JSON.
fn line_of(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("a JSON value always serializes");
    line.push(b'\n');
    line
}

/// Output queued for the writer thread and not yet written.
#[derive(Default)]
struct Unsent {
    bytes: AtomicUsize,
    /// The writer has stopped: nothing queued will be written.
    closed: AtomicBool,
}

impl Unsent {
    /// Whether the reader should wait for the client before reading more:
    /// `limit` bytes or more wait, or too many requests run.
    fn behind<H: ToolHost>(&self, limit: usize, session: &Session<H>) -> bool {
        !self.closed.load(Ordering::Relaxed)
            && (self.bytes.load(Ordering::Relaxed) >= limit
                || session.requests_running() >= MAX_REQUESTS_RUNNING)
    }
}

/// Reads lines until end of input or a read error, handing each frame to
/// the session with `outbox` as its reply, and reading nothing more while
/// the client is behind (as `pipe::read_frames` does).
fn read_frames<H: ToolHost, R: BufRead>(
    mut input: R,
    session: &Arc<Session<H>>,
    outbox: &Outbox,
    unsent: &Unsent,
) {
    let mut lines = Lines::default();
    loop {
        if unsent.behind(BACKLOG_PAUSE, session) {
            while unsent.behind(BACKLOG_PAUSE / 2, session) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let bytes = match input.fill_buf() {
            Ok([]) => return lines.finish(session, outbox),
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => {
                tracing::error!("reading input: {err}");
                return;
            }
        };
        let read = bytes.len();
        lines.feed(bytes, session, outbox);
        input.consume(read);
    }
}

/// Writes each queued line, flushing whenever the queue runs dry. Ends when
/// every sender is gone, or when the output fails (the client left).
fn write_lines<W: Write>(
    mut output: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    unsent: &Unsent,
) -> std::io::Result<()> {
    while let Some(line) = lines.blocking_recv() {
        output.write_all(&line)?;
        unsent.bytes.fetch_sub(line.len(), Ordering::Relaxed);
        while let Ok(line) = lines.try_recv() {
            output.write_all(&line)?;
            unsent.bytes.fetch_sub(line.len(), Ordering::Relaxed);
        }
        output.flush()?;
    }
    Ok(())
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

/// The longest message read from stdin, in bytes. A longer line is
/// answered with an error and skipped, rather than held in memory whole.
const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// Input split into lines across reads.
#[derive(Default)]
struct Lines {
    /// The start of a line whose end has not arrived yet.
    pending: Vec<u8>,
    /// Inside a line found too long: its bytes are dropped up to its end.
    skipping: bool,
}

impl Lines {
    /// Hands every line that `bytes` completes to the session and keeps
    /// the incomplete rest.
    fn feed<H: ToolHost>(&mut self, bytes: &[u8], session: &Arc<Session<H>>, outbox: &Outbox) {
        let mut start = 0;
        for end in newlines(bytes) {
            if self.skipping {
                self.skipping = false;
            } else if self.pending.len() + (end - start) > MAX_MESSAGE_BYTES {
                self.pending = Vec::new();
                refuse_too_long(session, outbox);
            } else if self.pending.is_empty() {
                handle_line(&bytes[start..end], session, outbox);
            } else {
                self.pending.extend_from_slice(&bytes[start..end]);
                handle_line(&self.pending, session, outbox);
                self.pending.clear();
            }
            start = end + 1;
        }
        let rest = &bytes[start..];
        if self.skipping {
            return;
        }
        if self.pending.len() + rest.len() > MAX_MESSAGE_BYTES {
            // Refused now, before its end arrives: it is never held whole.
            self.pending = Vec::new();
            self.skipping = true;
            refuse_too_long(session, outbox);
            return;
        }
        self.pending.extend_from_slice(rest);
    }

    /// The end of input: a last line without its newline still counts.
    fn finish<H: ToolHost>(self, session: &Arc<Session<H>>, outbox: &Outbox) {
        if !self.skipping {
            handle_line(&self.pending, session, outbox);
        }
    }
}

/// Answers a message over [`MAX_MESSAGE_BYTES`]: its id is unknown, as for
/// a line that does not parse.
fn refuse_too_long<H: ToolHost>(session: &Arc<Session<H>>, outbox: &Outbox) {
    let error = RpcError::new(
        jsonrpc::code::INVALID_REQUEST,
        format!(
            "Invalid Request: the message is longer than {MAX_MESSAGE_BYTES} bytes; it was skipped"
        ),
    );
    session.handle_frame(Frame::Unparseable(error), outbox.clone());
}

/// The positions of the newlines in `bytes`.
fn newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter_map(|(i, &byte)| (byte == b'\n').then_some(i))
}

/// Stdin and stdout as non-blocking pipes, used from the runtime.
#[cfg(unix)]
mod pipe {
    use std::fs::File;
    use std::io::{Read, Write};
    use std::mem::ManuallyDrop;
    use std::os::fd::{AsRawFd, FromRawFd, RawFd};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;
    use tokio::sync::Notify;

    use serde_json::Value;

    use super::{
        BACKLOG_PAUSE, Dropped, Lines, MAX_REQUESTS_RUNNING, Outbox, Session, ToolHost, jsonrpc,
        line_of,
    };

    /// How long the end of the session waits for a client that does not
    /// read the last answers.
    const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

    /// Stdin and stdout, when both are pipes or sockets (which epoll can
    /// watch): not a terminal, whose mode is shared with the shell, nor a
    /// file.
    pub fn open() -> Option<(AsyncFd<NonBlocking>, Arc<PipeWriter>)> {
        let stdin = NonBlocking::open(libc::STDIN_FILENO, Interest::READABLE)?;
        let stdout = NonBlocking::open(libc::STDOUT_FILENO, Interest::WRITABLE)?;
        Some((
            stdin,
            Arc::new(PipeWriter {
                fd: stdout,
                backlog: Mutex::new(Backlog::default()),
                drained: Notify::new(),
                room: Notify::new(),
                dropped: Dropped::default(),
            }),
        ))
    }

    /// A standard file descriptor switched to non-blocking mode; its
    /// original flags come back when it is dropped, so that whoever shares
    /// the pipe after us finds it as it was.
    pub struct NonBlocking {
        file: ManuallyDrop<File>,
        flags: libc::c_int,
    }

    impl NonBlocking {
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

    /// Reads lines until end of input or a read error, handing each frame
    /// to the session with `outbox` as its reply.
    pub async fn read_frames<H: ToolHost>(
        stdin: AsyncFd<NonBlocking>,
        session: Arc<Session<H>>,
        outbox: Outbox,
        stdout: Arc<PipeWriter>,
    ) {
        let mut lines = Lines::default();
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            stdout.room_for_more().await;
            // Requests are cheap to send and may be slow to answer: a
            // client sending faster than they finish waits for some to.
            while session.requests_running() >= MAX_REQUESTS_RUNNING {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
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
                Ok(0) => return lines.finish(&session, &outbox),
                Ok(n) => {
                    // A short read drained the pipe: wait for the next
                    // write rather than find it empty with another read.
                    // (Readiness that a newer event set is not cleared.)
                    let drained = n < chunk.len();
                    if drained {
                        ready.clear_ready();
                    }
                    drop(ready);
                    lines.feed(&chunk[..n], &session, &outbox);
                    if !drained {
                        // More is likely waiting. The requests just handed
                        // over run first, so that their answers count in
                        // the backlog before more is read.
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

    /// Stdout: lines written at once while the pipe has room, queued in
    /// order when it has not.
    pub struct PipeWriter {
        fd: AsyncFd<NonBlocking>,
        backlog: Mutex<Backlog>,
        /// Signalled when the backlog empties (or the output fails).
        drained: Notify,
        /// Signalled when the backlog falls below half of [`BACKLOG_PAUSE`].
        room: Notify,
        /// Whether notifications are being dropped.
        dropped: Dropped,
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
        pub fn outbox(self: &Arc<Self>) -> Outbox {
            let writer = self.clone();
            Arc::new(move |message| writer.write(line_of(&message), &message))
        }

        /// Writes `line`, the serialized `message`, or queues it; drops it
        /// instead when it is a progress or log notification and the
        /// client is [`BACKLOG_PAUSE`] behind.
        fn write(self: &Arc<Self>, line: Vec<u8>, message: &Value) {
            let mut backlog = self.backlog.lock().unwrap();
            if backlog.closed {
                return;
            }
            if backlog.unsent() < BACKLOG_PAUSE {
                self.dropped.caught_up();
            } else if jsonrpc::is_droppable(message) {
                return self.dropped.one();
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

        /// Resolves at once while fewer than [`BACKLOG_PAUSE`] bytes wait to
        /// be sent; otherwise once fewer than half of them wait, or the
        /// client is gone.
        pub async fn room_for_more(&self) {
            // Whether `limit` bytes or more wait to be sent.
            let behind = |limit: usize| {
                let backlog = self.backlog.lock().unwrap();
                !backlog.closed && backlog.unsent() >= limit
            };
            if !behind(BACKLOG_PAUSE) {
                return;
            }
            tracing::debug!("answers wait unread: reading no more requests until the client reads");
            loop {
                let notified = self.room.notified();
                if !behind(BACKLOG_PAUSE / 2) {
                    return;
                }
                notified.await;
            }
        }

        /// Resolves when every message so far is written (or the client is
        /// gone), or after [`DRAIN_TIMEOUT`] for a client that stopped
        /// reading.
        pub async fn drained(&self) {
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
}
