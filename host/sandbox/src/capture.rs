//! Capturing a plugin's stdout and stderr: the first bytes are kept for the
//! log, the rest are counted and dropped. Writes never fail, so a plugin that
//! floods its output is neither trapped nor able to reach the host's stdout.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// A capped in-memory sink, shared by the clones handed to WASI.
#[derive(Clone)]
pub struct Captured {
    inner: Arc<Mutex<Buffer>>,
}

struct Buffer {
    kept: Vec<u8>,
    capacity: usize,
    dropped: u64,
}

impl Captured {
    /// Keeps at most `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        Captured {
            inner: Arc::new(Mutex::new(Buffer {
                kept: Vec::new(),
                capacity,
                dropped: 0,
            })),
        }
    }

    /// What was kept, as text, with a note of how much was dropped.
    pub fn text(&self) -> String {
        let buffer = self.inner.lock().unwrap();
        let mut text = String::from_utf8_lossy(&buffer.kept).trim().to_string();
        if buffer.dropped > 0 {
            text.push_str(&format!("\n… ({} more bytes dropped)", buffer.dropped));
        }
        text
    }
}

impl AsyncWrite for Captured {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut buffer = self.inner.lock().unwrap();
        let room = buffer.capacity - buffer.kept.len();
        let kept = room.min(data.len());
        buffer.kept.extend_from_slice(&data[..kept]);
        buffer.dropped += (data.len() - kept) as u64;
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for Captured {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Captured {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn keeps_the_first_bytes_and_counts_the_rest() {
        let captured = Captured::new(5);
        let mut writer = captured.clone();
        writer.write_all(b"hello world").await.unwrap();
        assert_eq!(captured.text(), "hello\n… (6 more bytes dropped)");
    }
}
