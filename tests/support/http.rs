//! Test support for the Streamable HTTP transport: `corral serve --http` as
//! a child process, and a small blocking HTTP/1.1 client (keep-alive,
//! chunked bodies, SSE events) written here so that the tests see exactly
//! the bytes on the wire.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::Server;

/// The stateless revision.
pub const STATELESS: &str = "2026-07-28";

/// A running `corral serve DIR --http 127.0.0.1:0 ARGS...`.
pub struct HttpServer {
    pub server: Server,
    pub addr: SocketAddr,
}

impl HttpServer {
    /// Starts the server on a free loopback port and waits until it listens.
    pub fn start(dir: &Path, args: &[&str]) -> HttpServer {
        HttpServer::start_on(dir, "127.0.0.1:0", args, &[])
    }

    pub fn start_on(dir: &Path, listen: &str, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut all = vec!["--http", listen];
        all.extend_from_slice(args);
        let server = Server::start_with_env(dir, &all, env);
        let stderr = server.stderr_containing("listening on http://");
        let addr = stderr
            .split("listening on http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("no address in the server's stderr:\n{stderr}"));
        HttpServer { server, addr }
    }

    pub fn client(&self) -> Client {
        Client::new(self.addr)
    }

    /// Sends SIGTERM, as a process manager would.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.server.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        self.server.wait_exit(timeout)
    }
}

/// One HTTP response, body read in full.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn is_sse(&self) -> bool {
        self.header("content-type")
            .is_some_and(|kind| kind.starts_with("text/event-stream"))
    }

    /// The JSON-RPC messages of the body: the JSON body, or each SSE event's data.
    pub fn messages(&self) -> Vec<Value> {
        if self.is_sse() {
            sse_messages(&self.text())
        } else if self.body.is_empty() {
            Vec::new()
        } else {
            let value: Value = serde_json::from_slice(&self.body)
                .unwrap_or_else(|err| panic!("not JSON ({err}): {}", self.text()));
            vec![value]
        }
    }

    /// The last message: the response of a single request.
    pub fn answer(&self) -> Value {
        self.messages()
            .pop()
            .unwrap_or_else(|| panic!("no message in the response: {self:?}"))
    }
}

/// The data of every `message` event in an SSE text.
pub fn sse_messages(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data.join("\n")).unwrap())
        })
        .collect()
}

/// A keep-alive HTTP/1.1 connection; reconnects when the server closed it.
pub struct Client {
    addr: SocketAddr,
    connection: Option<BufReader<TcpStream>>,
    /// Headers sent with every request (e.g. a bearer token).
    pub default_headers: Vec<(String, String)>,
    /// Set after `initialize`: sent as Mcp-Session-Id.
    pub session: Option<String>,
    /// Sent as MCP-Protocol-Version in a session.
    pub session_version: Option<String>,
    next_id: i64,
}

impl Client {
    pub fn new(addr: SocketAddr) -> Client {
        Client {
            addr,
            connection: None,
            default_headers: Vec::new(),
            session: None,
            session_version: None,
            next_id: 1,
        }
    }

    pub fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        BufReader::new(stream)
    }

    /// Sends one request and reads the whole response.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        let request = self.encode(method, path, headers, body);
        for attempt in 0..2 {
            let connection = self
                .connection
                .get_or_insert_with(|| Client::connect(self.addr));
            let sent = connection.get_mut().write_all(&request);
            match sent
                .map_err(|err| err.to_string())
                .and_then(|()| read_response(connection).map_err(|err| err.to_string()))
            {
                Ok(response) => {
                    if response
                        .header("connection")
                        .is_some_and(|c| c.eq_ignore_ascii_case("close"))
                    {
                        self.connection = None;
                    }
                    return response;
                }
                // A kept-alive connection the server has closed meanwhile.
                Err(err) if attempt == 0 => {
                    let _ = err;
                    self.connection = None;
                }
                Err(err) => panic!("{method} {path}: {err}"),
            }
        }
        unreachable!()
    }

    fn encode(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
        let mut request = format!("{method} {path} HTTP/1.1\r\n");
        let mut names: Vec<String> = Vec::new();
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
            names.push(name.to_ascii_lowercase());
        }
        if !names.contains(&"host".to_string()) {
            request.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (name, value) in &self.default_headers {
            if !names.contains(&name.to_ascii_lowercase()) {
                request.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        if method != "GET" || !body.is_empty() {
            request.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        bytes
    }

    /// POSTs a JSON-RPC message with the headers a client of the session's
    /// era sends (plus `extra`), and reads the whole response.
    pub fn post(&mut self, message: &Value, extra: &[(&str, &str)]) -> Response {
        let body = serde_json::to_vec(message).unwrap();
        let mut headers: Vec<(&str, &str)> = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        let session = self.session.clone();
        let version = self.session_version.clone();
        if let Some(session) = &session {
            headers.push(("Mcp-Session-Id", session));
        }
        if let Some(version) = &version {
            headers.push(("MCP-Protocol-Version", version));
        }
        for (name, value) in extra {
            headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
            headers.push((name, value));
        }
        self.send("POST", "/mcp", &headers, &body)
    }

    /// `initialize` for a legacy `revision`: remembers the session id.
    pub fn initialize(&mut self, revision: &str) -> Value {
        self.initialize_with(revision, json!({}))
    }

    /// [`Client::initialize`] declaring the client `capabilities`.
    pub fn initialize_with(&mut self, revision: &str, capabilities: Value) -> Value {
        let id = self.id();
        let response = self.post(
            &json!({
                "jsonrpc": "2.0", "id": id, "method": "initialize",
                "params": {
                    "protocolVersion": revision,
                    "capabilities": capabilities,
                    "clientInfo": { "name": "corral-http-test", "version": "1" },
                },
            }),
            &[],
        );
        assert_eq!(response.status, 200, "{}", response.text());
        self.session = Some(
            response
                .header("mcp-session-id")
                .expect("initialize answers with Mcp-Session-Id")
                .to_string(),
        );
        self.session_version = Some(revision.to_string());
        let answer = response.answer();
        let accepted = self.post(
            &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            &[],
        );
        assert_eq!(accepted.status, 202, "{}", accepted.text());
        answer
    }

    /// A legacy request in the session; the whole response.
    pub fn legacy(&mut self, method: &str, params: Value) -> Response {
        let id = self.id();
        self.post(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
            &[],
        )
    }

    /// A stateless request, with the `_meta` and headers the revision asks for.
    pub fn stateless(&mut self, method: &str, params: Value) -> Response {
        let id = self.id();
        let message = stateless_request(id, method, params);
        let name = stateless_name(&message);
        let mut headers = vec![("MCP-Protocol-Version", STATELESS), ("Mcp-Method", method)];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
        self.post(&message, &headers)
    }

    /// Opens the legacy session's GET stream (revision 2025-11-25).
    pub fn open_get_stream(&self) -> (u16, Vec<(String, String)>, EventStream) {
        let session = self.session.clone().expect("an initialized session");
        self.open_stream(
            "GET",
            &[
                ("Accept", "text/event-stream"),
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            b"",
        )
    }

    /// Opens a `subscriptions/listen` stream (2026-07-28) for `request`, a
    /// stateless request message, whose SSE events are read one by one.
    pub fn open_listen(&self, request: &Value) -> (u16, Vec<(String, String)>, EventStream) {
        let body = serde_json::to_vec(request).unwrap();
        self.open_stream(
            "POST",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", STATELESS),
                ("Mcp-Method", "subscriptions/listen"),
            ],
            &body,
        )
    }

    /// Opens a streaming request (POST or GET) whose SSE events are read
    /// one by one.
    pub fn open_stream(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, Vec<(String, String)>, EventStream) {
        self.open_stream_receiving(None, method, headers, body)
    }

    /// [`Client::open_stream`] on a connection whose receive buffer is
    /// fixed at `receive_buffer` bytes (the kernel then does not grow it:
    /// on this machine it may grow to 32 MiB), for a test of what waits
    /// for a client that does not read.
    pub fn open_stream_receiving(
        &self,
        receive_buffer: Option<usize>,
        method: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, Vec<(String, String)>, EventStream) {
        let mut connection = Client::connect(self.addr);
        if let Some(bytes) = receive_buffer {
            use std::os::fd::AsRawFd;
            let size = bytes as libc::c_int;
            // SAFETY: a valid socket and an int option of the right size.
            let set = unsafe {
                libc::setsockopt(
                    connection.get_ref().as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVBUF,
                    (&size as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            assert_eq!(set, 0, "setting SO_RCVBUF");
        }
        let request = self.encode(method, "/mcp", headers, body);
        connection.get_mut().write_all(&request).unwrap();
        let (status, headers) = read_head(&mut connection).unwrap();
        let chunked = headers.iter().any(|(key, value)| {
            key.eq_ignore_ascii_case("transfer-encoding") && value.contains("chunked")
        });
        (
            status,
            headers,
            EventStream {
                reader: connection,
                chunked,
                chunk_left: 0,
                done: false,
                pending: String::new(),
            },
        )
    }
}

/// A stateless request message: `_meta` carries the revision and the
/// client capabilities (empty unless `params._meta` names some), merged
/// into `params._meta`.
pub fn stateless_request(id: i64, method: &str, mut params: Value) -> Value {
    let meta = params
        .as_object_mut()
        .unwrap()
        .entry("_meta")
        .or_insert_with(|| json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = STATELESS.into();
    let capabilities = "io.modelcontextprotocol/clientCapabilities";
    if meta.get(capabilities).is_none() {
        meta[capabilities] = json!({});
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// `params` whose `_meta` declares the tasks extension
/// (`io.modelcontextprotocol/tasks`) and form elicitation, as a client that
/// takes tasks sends every request.
pub fn declaring_tasks(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": { "io.modelcontextprotocol/tasks": {} },
        },
    });
    params
}

/// The Mcp-Name header value of a stateless request, when its method has one.
pub fn stateless_name(message: &Value) -> Option<String> {
    let params = &message["params"];
    match message["method"].as_str()? {
        "tools/call" | "prompts/get" => params["name"].as_str().map(String::from),
        "resources/read" => params["uri"].as_str().map(String::from),
        "tasks/get" | "tasks/update" | "tasks/cancel" => {
            params["taskId"].as_str().map(String::from)
        }
        _ => None,
    }
}

fn read_head<R: BufRead>(reader: &mut R) -> std::io::Result<(u16, Vec<(String, String)>)> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        ));
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    Ok((status, headers))
}

fn read_response<R: BufRead>(reader: &mut R) -> std::io::Result<Response> {
    let (status, headers) = read_head(reader)?;
    let find = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    };
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|value| value.contains("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim(), 16)
                .map_err(|_| std::io::Error::other(format!("bad chunk size {size:?}")))?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = find("content-length") {
        body.resize(length.parse().unwrap(), 0);
        reader.read_exact(&mut body)?;
    }
    // What the server answered, for the scan of the suite's captures.
    crate::support::capture(&String::from_utf8_lossy(&body));
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// The SSE events of an open response, read as they arrive.
pub struct EventStream {
    reader: BufReader<TcpStream>,
    chunked: bool,
    chunk_left: usize,
    done: bool,
    pending: String,
}

impl EventStream {
    /// The next JSON-RPC message, or `None` when the stream ended or
    /// nothing came within `timeout`.
    pub fn next_within(&mut self, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(end) = self.pending.find("\n\n") {
                let event: String = self.pending.drain(..end + 2).collect();
                crate::support::capture(&event);
                if let Some(message) = sse_messages(&event).pop() {
                    return Some(message);
                }
                continue; // a comment (keepalive)
            }
            if self.done {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            self.reader.get_ref().set_read_timeout(Some(left)).unwrap();
            match self.read_some() {
                Ok(0) => self.done = true,
                Ok(_) => {}
                Err(err)
                    if matches!(
                        err.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return None;
                }
                Err(_) => self.done = true,
            }
        }
    }

    /// Whether the server ended the stream (within `timeout`), after
    /// reading whatever was left.
    pub fn ends_within(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.done && !self.pending.contains("\n\n") {
                return true;
            }
            let _ = self.next_within(deadline.saturating_duration_since(Instant::now()));
        }
        self.done
    }

    fn read_some(&mut self) -> std::io::Result<usize> {
        if !self.chunked {
            let mut buf = [0u8; 4096];
            let n = self.reader.read(&mut buf)?;
            self.pending.push_str(&String::from_utf8_lossy(&buf[..n]));
            return Ok(n);
        }
        if self.chunk_left == 0 {
            let mut size = String::new();
            if self.reader.read_line(&mut size)? == 0 {
                return Ok(0);
            }
            let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if size == 0 {
                return Ok(0);
            }
            self.chunk_left = size + 2; // the data and its CRLF
        }
        let mut buf = vec![0u8; self.chunk_left];
        let n = self.reader.read(&mut buf)?;
        if n == 0 {
            return Ok(0);
        }
        self.chunk_left -= n;
        // Drop the CRLF that ends a chunk once it is all read.
        let data_end = if self.chunk_left < 2 {
            n - (2 - self.chunk_left).min(n)
        } else {
            n
        };
        self.pending
            .push_str(&String::from_utf8_lossy(&buf[..data_end]));
        Ok(n.max(1))
    }
}
