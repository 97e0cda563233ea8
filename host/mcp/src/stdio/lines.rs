//! Input split into messages: one JSON-RPC message per line, each handed
//! to the session as it completes, and lines over [`MAX_MESSAGE_BYTES`]
//! refused without being held whole. Also the other direction's framing.

use std::sync::Arc;

use serde_json::Value;

use crate::ToolHost;
use crate::jsonrpc::{self, Frame, RpcError};
use crate::session::{Outbox, Session};

/// One message as a line of JSON.
pub fn line_of(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("a JSON value always serializes");
    line.push(b'\n');
    line
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
pub struct Lines {
    /// The start of a line whose end has not arrived yet.
    pending: Vec<u8>,
    /// Inside a line found too long: its bytes are dropped up to its end.
    skipping: bool,
}

impl Lines {
    /// Hands every line that `bytes` completes to the session and keeps
    /// the incomplete rest.
    pub fn feed<H: ToolHost>(&mut self, bytes: &[u8], session: &Arc<Session<H>>, outbox: &Outbox) {
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
    pub fn finish<H: ToolHost>(self, session: &Arc<Session<H>>, outbox: &Outbox) {
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
