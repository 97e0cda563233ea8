//! How `corral secret set` reads a value: all of standard input when it is
//! not a terminal (`printf %s "$TOKEN" | corral secret set ...`), else one
//! line typed at a prompt with echo off. The terminal's settings are put
//! back on every path: when the line is read, when reading fails, and when
//! Ctrl-C, SIGTERM or SIGHUP ends the process while it waits.

use std::io::{BufRead as _, IsTerminal as _, Read as _, Write as _};
use std::sync::OnceLock;

use anyhow::{Context as _, Result, bail};

/// The longest value read (as a folder's file may hold).
const MAX_VALUE_BYTES: u64 = super::folder::MAX_VALUE_BYTES;

/// The value for `what` ("PLUGIN NAME"): one trailing newline dropped,
/// never empty.
pub fn read_value(what: &str) -> Result<String> {
    let stdin = std::io::stdin();
    let value = if stdin.is_terminal() {
        ask(&format!("value of {what} (not echoed): "))?
    } else {
        let mut bytes = Vec::new();
        stdin
            .lock()
            .take(MAX_VALUE_BYTES + 1)
            .read_to_end(&mut bytes)
            .context("reading the value from standard input")?;
        if bytes.len() as u64 > MAX_VALUE_BYTES {
            bail!("the value on standard input is larger than 64 KiB, more than any secret");
        }
        let mut value = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("the value on standard input is not UTF-8 text"))?;
        if value.ends_with('\n') {
            value.pop();
            if value.ends_with('\r') {
                value.pop();
            }
        }
        value
    };
    if value.is_empty() {
        bail!(
            "the value is empty: pipe it in (`printf %s \"$VALUE\" | corral secret set PLUGIN NAME`) or type it at the prompt; `corral secret remove PLUGIN NAME` removes one"
        );
    }
    Ok(value)
}

/// The terminal's settings before echo was turned off, for the signal
/// handler (a `OnceLock` is read without a lock once set).
static SAVED: OnceLock<libc::termios> = OnceLock::new();

extern "C" fn restore_and_exit(signal: libc::c_int) {
    // SAFETY: tcsetattr, write and _exit are async-signal-safe; SAVED is
    // set before the handler is installed.
    unsafe {
        if let Some(saved) = SAVED.get() {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, saved);
        }
        libc::write(libc::STDERR_FILENO, b"\n".as_ptr().cast(), 1);
        libc::_exit(128 + signal);
    }
}

/// Puts the terminal back when dropped.
struct EchoOff(libc::termios);

impl EchoOff {
    /// Turns echo off on standard input, a terminal; `None` if it cannot.
    fn start() -> Option<EchoOff> {
        let fd = libc::STDIN_FILENO;
        // SAFETY: termios is plain data, filled in by tcgetattr before use.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd is standard input, a terminal (checked by the caller).
        if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return None;
        }
        // Set before the handlers that read it are installed.
        let _ = SAVED.set(saved);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: the handler only restores the terminal and exits.
            unsafe { libc::signal(signal, restore_and_exit as *const () as libc::sighandler_t) };
        }
        let mut quiet = saved;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: as above; `quiet` is a copy of the terminal's own settings.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) } != 0 {
            return None;
        }
        Some(EchoOff(saved))
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        // SAFETY: restores the settings read in `start`.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.0) };
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: back to the default disposition.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
        eprintln!();
    }
}

/// One line typed at the terminal, echo off.
fn ask(prompt: &str) -> Result<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let echo_off = EchoOff::start();
    if echo_off.is_none() {
        bail!("cannot turn the terminal's echo off to read a secret: pipe the value in instead");
    }
    let mut line = String::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_VALUE_BYTES + 1)
        .read_line(&mut line);
    drop(echo_off);
    read.context("reading the value")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}
