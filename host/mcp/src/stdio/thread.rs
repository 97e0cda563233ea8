//! An output that epoll cannot watch (a terminal, a file, or any writer
//! given to [`serve`](super::serve)), written with blocking I/O on a thread
//! of its own from a queue, as any line tool would.

use std::io::Write;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use anyhow::{Result, anyhow};
use serde_json::Value;
use tokio::sync::{Notify, mpsc};

use super::flow::{BACKLOG_PAUSE, Flow, Output};
use super::lines::line_of;

pub struct ThreadWriter {
    /// Lines for the writer thread; `None` once [`Output::finish`] closed it.
    queue: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    /// Bytes queued and not yet written.
    unsent: AtomicUsize,
    /// The writer thread has stopped: nothing queued will be written.
    closed: AtomicBool,
    room: Notify,
    flow: Flow,
    thread: Mutex<Option<JoinHandle<std::io::Result<()>>>>,
}

impl ThreadWriter {
    /// Starts the thread that writes to `output`.
    pub fn start<W: Write + Send + 'static>(output: W) -> Result<Arc<ThreadWriter>> {
        let (queue, lines) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = Arc::new(ThreadWriter {
            queue: Mutex::new(Some(queue)),
            unsent: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            room: Notify::new(),
            flow: Flow::default(),
            thread: Mutex::new(None),
        });
        let thread = {
            let writer = writer.clone();
            std::thread::Builder::new()
                .name("corral-stdout".into())
                .spawn(move || {
                    let written = writer.write_lines(output, lines);
                    writer.closed.store(true, Ordering::Relaxed);
                    writer.room.notify_waiters();
                    written
                })?
        };
        *writer.thread.lock().unwrap() = Some(thread);
        Ok(writer)
    }

    /// Writes each queued line, flushing whenever the queue runs dry. Ends
    /// when the queue is closed, or when the output fails (the client left).
    fn write_lines<W: Write>(
        &self,
        mut output: W,
        mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    ) -> std::io::Result<()> {
        while let Some(line) = lines.blocking_recv() {
            self.write_line(&mut output, &line)?;
            while let Ok(line) = lines.try_recv() {
                self.write_line(&mut output, &line)?;
            }
            output.flush()?;
        }
        Ok(())
    }

    fn write_line<W: Write>(&self, output: &mut W, line: &[u8]) -> std::io::Result<()> {
        output.write_all(line)?;
        let before = self.unsent.fetch_sub(line.len(), Ordering::Relaxed);
        let after = before - line.len();
        if before >= BACKLOG_PAUSE / 2 && after < BACKLOG_PAUSE / 2 {
            self.room.notify_waiters();
        }
        Ok(())
    }
}

impl Output for ThreadWriter {
    fn send(self: &Arc<Self>, message: Value) {
        if !self
            .flow
            .admits(self.unsent.load(Ordering::Relaxed), &message)
        {
            return;
        }
        let line = line_of(&message);
        self.unsent.fetch_add(line.len(), Ordering::Relaxed);
        if let Some(queue) = &*self.queue.lock().unwrap() {
            // Fails only once the writer is gone (the client closed its end).
            let _ = queue.send(line);
        }
    }

    fn unsent(&self) -> Option<usize> {
        (!self.closed.load(Ordering::Relaxed)).then(|| self.unsent.load(Ordering::Relaxed))
    }

    fn room(&self) -> &Notify {
        &self.room
    }

    async fn finish(&self) -> Result<()> {
        // Closing the queue ends the thread once it has written the rest.
        self.queue.lock().unwrap().take();
        let Some(thread) = self.thread.lock().unwrap().take() else {
            return Ok(());
        };
        let written = tokio::task::spawn_blocking(move || thread.join()).await?;
        written.map_err(|_| anyhow!("the stdout writer panicked"))??;
        Ok(())
    }
}
