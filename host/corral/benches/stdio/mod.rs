//! What the benches share: a JSON-RPC client speaking newline-delimited
//! messages over a child's stdio (the echo floor, `corral serve`, and the
//! reference servers in the reference bench), and latency statistics.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A child process spoken to in newline-delimited JSON-RPC over its stdio.
pub struct Client {
    pub child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
    /// Notifications seen while waiting for responses, with when they arrived.
    pub notifications: Vec<(Instant, Value)>,
}

impl Client {
    pub fn spawn(mut command: Command, stderr: Stdio) -> Client {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawning the child");
        Client {
            stdin: BufWriter::new(child.stdin.take().unwrap()),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            next_id: 0,
            line: String::new(),
            notifications: Vec::new(),
        }
    }

    /// Writes one request (flushed); returns its id.
    pub fn send(&mut self, method: &str, params: &Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        serde_json::to_writer(&mut self.stdin, &request).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        id
    }

    pub fn notify(&mut self, method: &str) {
        let message = json!({ "jsonrpc": "2.0", "method": method });
        serde_json::to_writer(&mut self.stdin, &message).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message on stdout, parsed.
    pub fn read(&mut self) -> Value {
        self.line.clear();
        let n = self.stdout.read_line(&mut self.line).unwrap();
        assert!(n > 0, "the child closed its stdout");
        serde_json::from_str(&self.line).expect("stdout carried a non-JSON line")
    }

    /// The next response (notifications are kept aside); returns its id and
    /// the message.
    pub fn response(&mut self) -> (u64, Value) {
        loop {
            let message = self.read();
            match message.get("id").and_then(Value::as_u64) {
                Some(id) => return (id, message),
                None => self.notifications.push((Instant::now(), message)),
            }
        }
    }

    /// Sends a request and returns its `result`.
    pub fn result(&mut self, method: &str, params: &Value) -> Value {
        let id = self.send(method, params);
        let (got, message) = self.response();
        assert_eq!(got, id, "responses out of order in a sequential exchange");
        match message.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {message}"),
        }
    }

    pub fn initialize(&mut self) {
        self.result(
            "initialize",
            &json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "corral-bench", "version": "0" }
            }),
        );
        self.notify("notifications/initialized");
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Latencies {
    pub sorted: Vec<Duration>,
    pub total: Duration,
}

impl Latencies {
    pub fn new(mut samples: Vec<Duration>, total: Duration) -> Latencies {
        samples.sort();
        Latencies {
            sorted: samples,
            total,
        }
    }

    pub fn pct(&self, p: f64) -> Duration {
        let index = ((self.sorted.len() as f64 - 1.0) * p / 100.0).round() as usize;
        self.sorted[index]
    }

    pub fn p50(&self) -> Duration {
        self.pct(50.0)
    }

    pub fn rate(&self) -> f64 {
        self.sorted.len() as f64 / self.total.as_secs_f64()
    }

    pub fn line(&self, case: &str) -> String {
        format!(
            "{case:<44} p50 {}  p90 {}  p99 {}  ({:.0} calls/s)",
            us(self.pct(50.0)),
            us(self.pct(90.0)),
            us(self.pct(99.0)),
            self.rate()
        )
    }
}

pub fn us(duration: Duration) -> String {
    format!("{:8.1} µs", duration.as_secs_f64() * 1e6)
}

pub fn ms(duration: Duration) -> String {
    format!("{:7.1} ms", duration.as_secs_f64() * 1e3)
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}
