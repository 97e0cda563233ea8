//! A client of a [`Session`], driving it as a transport does: each raw JSON
//! line goes to `handle_frame` with an outbox of its own, and what the
//! session sends there (the line's responses, and the notifications of the
//! requests it carries) is collected for that line alone.
//!
//! A line is fully answered when the session drops the last clone of its
//! outbox, which it does once every request the line carries has answered or
//! been cancelled. So "no answer" is observed as the outbox closing with
//! nothing in it, without waiting for a silence.
//!
//! The tests run on tokio's current-thread runtime (the `#[tokio::test]`
//! default); see [`Client::settled_notices`] for why that matters.

use std::fmt::Display;
use std::sync::Arc;
use std::time::Duration;

use corral_mcp::jsonrpc::parse_frame;
use corral_mcp::{Outbox, ServerOptions, Session};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::timeout;

use super::host::FakeHost;
use super::{NOTHING, initialize_request, watching};

/// How long any one expected message is waited for before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// One client's session with a [`FakeHost`].
pub struct Client {
    session: Arc<Session<FakeHost>>,
    /// The host the session serves, for tests to change its tools or log.
    pub host: Arc<FakeHost>,
    /// What the session sends to no request's outbox: list changes and
    /// host log messages.
    notices: mpsc::UnboundedReceiver<Value>,
}

impl Client {
    /// A session with the whole catalog, on a server that announces list
    /// changes, not yet initialized.
    pub async fn new() -> Client {
        Client::start(FakeHost::new(), watching()).await
    }

    /// A session serving `host` with `options`, not yet initialized.
    pub async fn start(host: FakeHost, options: ServerOptions) -> Client {
        let host = Arc::new(host);
        let (notify, notices) = outbox();
        let session = Session::new(host.clone(), options, notify);
        // The session follows the host's events in a task of its own, which
        // takes only changes made after it starts as news: let it start.
        tokio::task::yield_now().await;
        Client {
            session,
            host,
            notices,
        }
    }

    /// [`Client::new`], initialized with the supported `revision`.
    pub async fn initialized(revision: &str) -> Client {
        let client = Client::new().await;
        client.initialize(revision).await;
        client
    }

    /// Negotiates `revision`, which must be a supported legacy revision, and
    /// sends `notifications/initialized`, as a client does.
    pub async fn initialize(&self, revision: &str) {
        let answers = self.exchange(initialize_request("init", revision)).await;
        assert_eq!(answers.len(), 1, "{answers:?}");
        assert_eq!(answers[0]["result"]["protocolVersion"], revision);
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(self.exchange(initialized).await, NOTHING);
    }

    /// Hands the session one line (a JSON value's compact text, or a raw
    /// line), as a transport does.
    pub fn send(&self, line: impl Display) -> Replies {
        let (reply, messages) = outbox();
        let line = line.to_string();
        self.session.handle_frame(parse_frame(&line), reply);
        Replies { line, messages }
    }

    /// Every message the session sends in answer to `line`, once it has
    /// finished answering it.
    pub async fn exchange(&self, line: impl Display) -> Vec<Value> {
        self.send(line).all().await
    }

    /// The result of the request `line`, which must be answered with one
    /// successful response and nothing else.
    pub async fn result_of(&self, line: impl Display) -> Value {
        let line = line.to_string();
        match <[Value; 1]>::try_from(self.exchange(&line).await) {
            Ok([answer]) if answer.get("result").is_some() => answer["result"].clone(),
            answers => panic!("{line} not answered with one result: {answers:?}"),
        }
    }

    /// The next message to no request's outbox.
    pub async fn next_notice(&mut self) -> Value {
        match timeout(PATIENCE, self.notices.recv()).await {
            Ok(Some(notice)) => notice,
            Ok(None) => unreachable!("the session holds its notify outbox"),
            Err(_) => panic!("no notification within {PATIENCE:?}"),
        }
    }

    /// Every message to no request's outbox so far, once the session has
    /// passed on every host event so far.
    ///
    /// The session's follower task handles every host event that is ready
    /// whenever it runs, without pausing between them; yielding lets it run
    /// (on the current-thread runtime, every task that is ready runs before
    /// this one resumes).
    pub async fn settled_notices(&mut self) -> Vec<Value> {
        tokio::task::yield_now().await;
        let mut notices = Vec::new();
        while let Ok(notice) = self.notices.try_recv() {
            notices.push(notice);
        }
        notices
    }

    /// Ends the session's listen streams, as the HTTP transport does at
    /// shutdown.
    pub fn end_listen_streams(&self) {
        self.session.end_listen_streams();
    }

    /// Requests the session sent the client that wait for its response.
    pub fn requests_to_client(&self) -> usize {
        self.session.requests_to_client()
    }

    /// Makes the session's requests `principal`'s, as an authorizing
    /// transport does before each frame.
    pub fn set_caller(&self, principal: Option<corral_tool::Principal>) {
        self.session.set_caller(principal.map(Arc::new));
    }

    /// Ends the session as a transport does when its input closes.
    pub async fn finish(&self) {
        timeout(PATIENCE, self.session.finish())
            .await
            .unwrap_or_else(|_| panic!("the session did not finish within {PATIENCE:?}"));
    }
}

/// What the session sends to one line's outbox.
pub struct Replies {
    line: String,
    messages: mpsc::UnboundedReceiver<Value>,
}

impl Replies {
    /// The next message; fails if the line is fully answered without one.
    pub async fn next(&mut self) -> Value {
        match timeout(PATIENCE, self.messages.recv()).await {
            Ok(Some(message)) => message,
            Ok(None) => panic!("no more answers to {}", self.line),
            Err(_) => panic!("no answer to {} within {PATIENCE:?}", self.line),
        }
    }

    /// Asserts that nothing has been sent to the line yet and that it is
    /// still being answered, once every task that is ready has run (see
    /// [`Client::settled_notices`]).
    pub async fn assert_unanswered(&mut self) {
        tokio::task::yield_now().await;
        match self.messages.try_recv() {
            Err(mpsc::error::TryRecvError::Empty) => {}
            Ok(message) => panic!("{} answered {message}", self.line),
            Err(mpsc::error::TryRecvError::Disconnected) => {
                panic!("{} was answered with nothing", self.line)
            }
        }
    }

    /// Every message until the line is fully answered.
    pub async fn all(mut self) -> Vec<Value> {
        let mut messages = Vec::new();
        loop {
            match timeout(PATIENCE, self.messages.recv()).await {
                Ok(Some(message)) => messages.push(message),
                Ok(None) => return messages,
                Err(_) => panic!(
                    "{} not fully answered within {PATIENCE:?}; answers so far: {messages:?}",
                    self.line
                ),
            }
        }
    }
}

/// An outbox and the receiving end of what is sent to it, which ends once
/// every clone of the outbox is dropped.
fn outbox() -> (Outbox, mpsc::UnboundedReceiver<Value>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let outbox: Outbox = Arc::new(move |message| {
        // The receiver goes only with its test.
        let _ = sender.send(message);
    });
    (outbox, receiver)
}
