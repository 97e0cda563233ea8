//! A byte counter for long transfers, redrawn in place on stderr when
//! stderr is a terminal (never on stdout, and never into logs and pipes,
//! where a summary line printed by the caller says enough).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often the line is redrawn at most.
const REDRAW: Duration = Duration::from_millis(100);

/// One transfer's progress.
pub struct Progress {
    label: String,
    total: u64,
    done: u64,
    drawn: Option<Instant>,
    visible: bool,
}

impl Progress {
    /// Progress of moving `total` bytes, labelled `label` ("pulling calc.wasm").
    pub fn new(label: impl Into<String>, total: u64) -> Progress {
        Progress {
            label: label.into(),
            total,
            done: 0,
            drawn: None,
            // Small transfers end before a counter would help.
            visible: std::io::stderr().is_terminal() && total >= 1 << 20,
        }
    }

    /// Sets the bytes done so far (a resumed transfer starts past zero).
    pub fn set(&mut self, done: u64) {
        self.done = done;
        if self.visible && self.drawn.is_none_or(|at| at.elapsed() >= REDRAW) {
            self.drawn = Some(Instant::now());
            self.draw();
        }
    }

    fn draw(&self) {
        let percent = (self.done * 100).checked_div(self.total).unwrap_or(100);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{} {} / {} ({percent}%)\x1b[K",
            self.label,
            mib(self.done),
            mib(self.total)
        );
        let _ = err.flush();
    }

    /// Clears the line, so that what follows starts at its beginning.
    pub fn finish(&mut self) {
        if self.visible && self.drawn.is_some() {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
        self.drawn = None;
    }
}

/// `12.3 MiB`.
pub fn mib(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    }
}
