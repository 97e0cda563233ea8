//! End to end over Streamable HTTP: the real binary (`corral serve --http`),
//! a plain HTTP/1.1 client (tests/support/http.rs) and real plugins. Both
//! eras, session ids, SSE streams, list changes, the security checks, body
//! limits, bad input, graceful shutdown, and a bounded load test.

#[path = "support/http.rs"]
mod http;
mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use http::{Client, HttpServer, Response, STATELESS, stateless_request};
use support::{
    assert_answered_without_waiting, batch_that_could_wait_on_the_client, example, fixture,
    folder_with,
};

const QUICK: Duration = Duration::from_secs(10);

fn conformance_folder() -> tempfile::TempDir {
    support::conformance_folder("")
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
}

#[test]
fn legacy_session_from_initialize_to_delete() {
    let folder = conformance_folder();
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();

    // A legacy request without a session is refused.
    let refused = client.legacy("tools/list", json!({}));
    assert_eq!(refused.status, 400, "{}", refused.text());

    let init = client.initialize("2025-11-25");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let session = client.session.clone().unwrap();
    assert_eq!(session.len(), 32, "128 random bits in hex: {session}");

    let list = client.legacy("tools/list", json!({}));
    assert_eq!(list.status, 200);
    assert_eq!(list.header("content-type"), Some("application/json"));
    let names: Vec<String> = list.answer()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        names.iter().any(|name| name == "test_simple_text"),
        "{names:?}"
    );

    let call = client.legacy("tools/call", json!({ "name": "test_simple_text" }));
    assert_eq!(
        text_of(&call.answer()),
        "This is a simple text response for testing."
    );
    // A legacy result has no stateless resultType.
    assert!(call.answer()["result"].get("resultType").is_none());

    // Log messages at the session's level and progress travel on the POST's SSE stream.
    let set = client.legacy("logging/setLevel", json!({ "level": "info" }));
    assert_eq!(set.status, 200, "{}", set.text());
    let logged = client.legacy("tools/call", json!({ "name": "test_tool_with_logging" }));
    assert!(logged.is_sse(), "{:?}", logged.headers);
    let messages = logged.messages();
    let logs: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 3, "{messages:?}");
    assert_eq!(logs[0]["params"]["data"], "Tool execution started");
    assert!(messages.last().unwrap()["result"].is_object());

    let progress = client.legacy(
        "tools/call",
        json!({ "name": "test_tool_with_progress", "_meta": { "progressToken": "p1" } }),
    );
    let done: Vec<f64> = progress
        .messages()
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(done, [0.0, 50.0, 100.0]);

    // An unknown session is 404; so is the session after DELETE.
    let mut stranger = server.client();
    stranger.session = Some("0".repeat(32));
    stranger.session_version = Some("2025-11-25".into());
    assert_eq!(stranger.legacy("tools/list", json!({})).status, 404);
    let deleted = client.send("DELETE", "/mcp", &[("Mcp-Session-Id", &session)], b"");
    assert_eq!(deleted.status, 200);
    assert_eq!(client.legacy("tools/list", json!({})).status, 404);
    let again = client.send("DELETE", "/mcp", &[("Mcp-Session-Id", &session)], b"");
    assert_eq!(again.status, 404);
}

#[test]
fn stateless_requests_need_no_session() {
    let folder = conformance_folder();
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();

    let discover = client.stateless("server/discover", json!({}));
    assert_eq!(discover.status, 200, "{}", discover.text());
    assert!(discover.header("mcp-session-id").is_none());
    assert_eq!(
        discover.answer()["result"]["supportedVersions"],
        json!([STATELESS])
    );

    let list = client.stateless("tools/list", json!({}));
    let result = &list.answer()["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string());

    let call = client.stateless("tools/call", json!({ "name": "test_simple_text" }));
    assert_eq!(call.status, 200);
    assert_eq!(call.header("content-type"), Some("application/json"));
    assert_eq!(call.answer()["result"]["resultType"], "complete");

    // A tool execution error is a result, not an HTTP error.
    let failed = client.stateless("tools/call", json!({ "name": "test_error_handling" }));
    assert_eq!(failed.status, 200);
    assert_eq!(failed.answer()["result"]["isError"], true);

    // Progress: an SSE stream that ends with the response.
    let progress = client.stateless(
        "tools/call",
        json!({ "name": "test_tool_with_progress", "_meta": { "progressToken": 7 } }),
    );
    assert!(progress.is_sse());
    let messages = progress.messages();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[3]["result"]["resultType"], "complete");

    // Without a log level in _meta a call sends no log messages.
    let quiet = client.stateless("tools/call", json!({ "name": "test_tool_with_logging" }));
    assert_eq!(quiet.messages().len(), 1, "{:?}", quiet.messages());

    // Protocol errors are HTTP errors in this era, with the request's id.
    let unknown = client.stateless("no/such/method", json!({}));
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.answer()["error"]["code"], -32601);
    let ping = client.stateless("ping", json!({}));
    assert_eq!(ping.status, 404);
    let no_tool = client.stateless("tools/call", json!({ "name": "nope" }));
    assert_eq!(no_tool.status, 400);
    assert_eq!(no_tool.answer()["error"]["code"], -32602);
    let init = client.post(
        &stateless_request(5, "initialize", json!({})),
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "initialize"),
        ],
    );
    assert_eq!(init.status, 404, "{}", init.text());
    assert_eq!(init.answer()["id"], 5);

    // Headers must agree with the body.
    let message = stateless_request(9, "tools/list", json!({}));
    for headers in [
        vec![("MCP-Protocol-Version", STATELESS)],
        vec![
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "tools/call"),
        ],
        vec![
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/list"),
        ],
    ] {
        let refused = client.post(&message, &headers);
        assert_eq!(refused.status, 400, "{headers:?}: {}", refused.text());
        assert_eq!(refused.answer()["error"]["code"], -32020, "{headers:?}");
        assert_eq!(refused.answer()["id"], 9);
    }
    let call = stateless_request(10, "tools/call", json!({ "name": "test_simple_text" }));
    let wrong_name = client.post(
        &call,
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "test_image_content"),
        ],
    );
    assert_eq!(wrong_name.status, 400);
    // Whitespace around header values is allowed.
    let spaced = client.post(
        &call,
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", " tools/call "),
            ("Mcp-Name", " test_simple_text"),
        ],
    );
    assert_eq!(spaced.status, 200, "{}", spaced.text());

    // Notifications alone: 202, no body.
    let accepted = client.post(
        &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1 } }),
        &[("MCP-Protocol-Version", STATELESS)],
    );
    assert_eq!(accepted.status, 202);
    assert!(accepted.body.is_empty());

    // No GET stream and no DELETE without a session.
    let get = client.send("GET", "/mcp", &[("Accept", "text/event-stream")], b"");
    assert_eq!(get.status, 405);
    assert_eq!(client.send("DELETE", "/mcp", &[], b"").status, 405);
}

#[test]
fn list_changes_reach_get_streams_and_listen_streams() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(folder.path(), &[]);
    let mut legacy = server.client();
    legacy.initialize("2025-11-25");
    let session = legacy.session.clone().unwrap();

    let (status, headers, mut standalone) = legacy.open_get_stream();
    assert_eq!(status, 200, "{headers:?}");
    // One GET stream per session.
    let second = legacy.send(
        "GET",
        "/mcp",
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &session),
        ],
        b"",
    );
    assert_eq!(second.status, 409);

    let listen = stateless_request(
        77,
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true } }),
    );
    let (status, _, mut listening) = legacy.open_listen(&listen);
    assert_eq!(status, 200);
    let ack = listening.next_within(QUICK).expect("an acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    std::fs::copy(example("textstats"), folder.path().join("textstats.wasm")).unwrap();
    let changed = standalone
        .next_within(Duration::from_secs(30))
        .expect("list_changed on the GET stream");
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    let tagged = listening
        .next_within(Duration::from_secs(30))
        .expect("list_changed on the listen stream");
    assert_eq!(tagged["method"], "notifications/tools/list_changed");
    assert_eq!(
        tagged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        77
    );

    // DELETE ends the session's GET stream.
    legacy.send("DELETE", "/mcp", &[("Mcp-Session-Id", &session)], b"");
    assert!(standalone.ends_within(QUICK), "the GET stream stayed open");
}

/// A server on loopback that also accepts the origin `https://app.example`
/// and requires the bearer token `s3cret-token`.
/// Over HTTP a client initializes before it opens the session's GET
/// stream, so the plugins that failed to load are told there when it opens.
#[test]
fn a_get_stream_hears_which_plugins_failed_to_load() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    std::fs::write(folder.path().join("files.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let server = HttpServer::start(folder.path(), &[]);
    let mut legacy = server.client();
    legacy.initialize("2025-11-25");
    let (status, headers, mut standalone) = legacy.open_get_stream();
    assert_eq!(status, 200, "{headers:?}");
    let told = standalone.next_within(QUICK).expect("a log message");
    assert_eq!(told["method"], "notifications/message", "{told}");
    assert_eq!(told["params"]["level"], "error", "{told}");
    let data = told["params"]["data"].as_str().unwrap();
    assert!(
        data.starts_with("1 plugin file(s) failed to load:\n  files.wasm: "),
        "{data}"
    );
}

fn guarded_server(folder: &std::path::Path) -> HttpServer {
    HttpServer::start_on(
        folder,
        "127.0.0.1:0",
        &["--allowed-origin", "https://app.example"],
        &[("CORRAL_BEARER_TOKEN", "s3cret-token")],
    )
}

/// A stateless `tools/list` with the `extra` headers.
fn stateless_list(client: &mut Client, extra: &[(&str, &str)]) -> Response {
    let message = stateless_request(1, "tools/list", json!({}));
    let mut headers = vec![
        ("MCP-Protocol-Version", STATELESS),
        ("Mcp-Method", "tools/list"),
    ];
    headers.extend_from_slice(extra);
    client.post(&message, &headers)
}

/// A page from an origin named with `--allowed-origin` can call the
/// endpoint from a browser: the preflight needs no token and names what may
/// be sent; every answer to that origin names it and exposes the session
/// and version headers. Any other origin, a loopback one included, gets no
/// CORS headers.
#[test]
fn browsers_on_allowed_origins_get_cors_answers() {
    let folder = conformance_folder();
    let server = guarded_server(folder.path());
    let mut client = server.client();
    let asked = "authorization, content-type, mcp-protocol-version, mcp-method";
    let preflight = |client: &mut Client, origin: &str| {
        client.send(
            "OPTIONS",
            "/mcp",
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                ("Access-Control-Request-Headers", asked),
            ],
            b"",
        )
    };
    let allowed = preflight(&mut client, "https://app.example");
    assert_eq!(allowed.status, 204, "{}", allowed.text());
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    assert!(
        allowed
            .header("access-control-allow-methods")
            .is_some_and(|methods| methods.contains("POST") && methods.contains("DELETE"))
    );
    assert_eq!(allowed.header("access-control-allow-headers"), Some(asked));
    // A local page passes the Origin check, but is not trusted with CORS.
    let loopback = preflight(&mut client, "http://localhost:6274");
    assert_eq!(loopback.status, 204);
    assert_eq!(loopback.header("access-control-allow-origin"), None);
    let foreign = preflight(&mut client, "https://evil.example");
    assert_eq!(foreign.status, 403);
    assert_eq!(foreign.header("access-control-allow-origin"), None);

    let list = stateless_list;
    let origin = ("Origin", "https://app.example");
    let answered = list(
        &mut client,
        &[origin, ("Authorization", "Bearer s3cret-token")],
    );
    assert_eq!(answered.status, 200);
    assert_eq!(
        answered.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    assert!(
        answered
            .header("access-control-expose-headers")
            .is_some_and(|exposed| exposed.contains("Mcp-Session-Id"))
    );
    // The page can read why it was refused.
    let unauthorized = list(&mut client, &[origin]);
    assert_eq!(unauthorized.status, 401);
    assert_eq!(
        unauthorized.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    // Not a browser: no CORS headers.
    let plain = list(&mut client, &[("Authorization", "Bearer s3cret-token")]);
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("access-control-allow-origin"), None);
}

#[test]
fn host_origin_and_bearer_token_are_checked() {
    let folder = conformance_folder();
    let server = guarded_server(folder.path());
    let mut client = server.client();
    let list = |client: &mut Client, extra: &[(&str, &str)]| stateless_list(client, extra).status;
    let token = ("Authorization", "Bearer s3cret-token");
    assert_eq!(list(&mut client, &[]), 401, "no token");
    assert_eq!(list(&mut client, &[("Authorization", "Bearer wrong")]), 401);
    assert_eq!(list(&mut client, &[token]), 200);
    // The scheme is case-insensitive; the token itself is not.
    assert_eq!(
        list(&mut client, &[("Authorization", "bearer s3cret-token")]),
        200
    );
    assert_eq!(
        list(&mut client, &[("Authorization", "BEARER  s3cret-token")]),
        200
    );
    assert_eq!(
        list(&mut client, &[("Authorization", "Bearer S3CRET-TOKEN")]),
        401
    );
    assert_eq!(
        list(&mut client, &[("Authorization", "Basic s3cret-token")]),
        401
    );
    // DNS rebinding: a foreign Host or Origin is refused even with the token.
    assert_eq!(
        list(&mut client, &[token, ("Host", "evil.example.com")]),
        403
    );
    assert_eq!(
        list(&mut client, &[token, ("Origin", "http://evil.example.com")]),
        403
    );
    assert_eq!(list(&mut client, &[token, ("Host", "localhost:1234")]), 200);
    assert_eq!(
        list(&mut client, &[token, ("Origin", "http://localhost:5173")]),
        200
    );
    assert_eq!(
        list(&mut client, &[token, ("Origin", "https://app.example")]),
        200
    );

    // A non-loopback address needs a token.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(["serve", "--http", "0.0.0.0:0"])
        .arg(folder.path())
        .env_remove("CORRAL_BEARER_TOKEN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--bearer-token"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn bad_requests_get_http_errors() {
    let folder = conformance_folder();
    let server = HttpServer::start(folder.path(), &["--max-body-bytes", "2000"]);
    let mut client = server.client();
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", STATELESS),
        ("Mcp-Method", "tools/list"),
    ];
    let list = serde_json::to_vec(&stateless_request(1, "tools/list", json!({}))).unwrap();

    let big = stateless_request(2, "tools/list", json!({ "padding": "x".repeat(3000) }));
    let too_big = client.send("POST", "/mcp", &headers, &serde_json::to_vec(&big).unwrap());
    assert_eq!(too_big.status, 413);

    let garbage = client.send("POST", "/mcp", &headers, b"{not json");
    assert_eq!(garbage.status, 400);
    assert_eq!(garbage.answer()["error"]["code"], -32700);

    let mut json_only = headers.to_vec();
    json_only[1] = ("Accept", "application/json");
    assert_eq!(client.send("POST", "/mcp", &json_only, &list).status, 406);
    let mut form = headers.to_vec();
    form[0] = ("Content-Type", "text/plain");
    assert_eq!(client.send("POST", "/mcp", &form, &list).status, 415);
    assert_eq!(
        client.send("POST", "/elsewhere", &headers, &list).status,
        404
    );
    assert_eq!(client.send("PUT", "/mcp", &headers, &list).status, 405);
    // A stateless header over a body without the stateless `_meta`: refused,
    // not served in the legacy era (where `ping` still exists).
    let bare = json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" });
    let mut ping = headers.to_vec();
    ping[3] = ("Mcp-Method", "ping");
    let refused = client.send("POST", "/mcp", &ping, &serde_json::to_vec(&bare).unwrap());
    assert_eq!(refused.status, 400, "{}", refused.text());
    assert_eq!(refused.answer()["error"]["code"], -32602);
    // The connection is still good after all of that.
    assert_eq!(client.send("POST", "/mcp", &headers, &list).status, 200);
}

#[test]
fn shutdown_finishes_calls_in_flight_and_ends_streams() {
    let folder = folder_with(&[("ticker.wasm", &example("ticker"))]);
    let mut server = HttpServer::start(folder.path(), &[]);
    let client = server.client();

    let listen = stateless_request(
        1,
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true } }),
    );
    let (_, _, mut listening) = client.open_listen(&listen);
    assert!(listening.next_within(QUICK).is_some(), "no acknowledgement");

    let addr = server.addr;
    let slow = std::thread::spawn(move || {
        let mut client = Client::new(addr);
        client.stateless(
            "tools/call",
            json!({ "name": "sleep", "arguments": { "ms": 1500 } }),
        )
    });
    std::thread::sleep(Duration::from_millis(400));
    let asked = Instant::now();
    server.terminate();

    let answered = slow.join().unwrap();
    assert_eq!(answered.status, 200, "{}", answered.text());
    assert_eq!(text_of(&answered.answer()), "slept for 1500 ms");
    // The listen stream ends as a server tearing it down ends it:
    // notifications/cancelled naming it, then its completion result.
    let cancelled = listening.next_within(QUICK).expect("the stream's end");
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );
    assert_eq!(cancelled["params"]["requestId"], 1, "{cancelled}");
    let closed = listening.next_within(QUICK).expect("the stream's response");
    assert_eq!(closed["id"], 1, "{closed}");
    assert_eq!(closed["result"]["resultType"], "complete", "{closed}");
    assert_eq!(
        closed["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1,
        "{closed}"
    );
    assert!(
        listening.ends_within(QUICK),
        "the listen stream stayed open"
    );
    let status = server.wait_exit(QUICK);
    assert!(status.success(), "{status:?}");
    assert!(asked.elapsed() < QUICK);
    // Nothing but the protocol ever goes to stdout, and over HTTP nothing does.
    assert!(server.server.stderr().contains("shutting down"));
}

#[test]
fn a_stateless_call_stops_when_its_client_leaves() {
    use std::io::Write;
    let folder = folder_with(&[("ticker.wasm", &example("ticker"))]);
    let server = HttpServer::start(folder.path(), &["--log-level", "debug"]);
    let message = stateless_request(
        42,
        "tools/call",
        json!({ "name": "sleep", "arguments": { "ms": 20000 } }),
    );
    let body = serde_json::to_vec(&message).unwrap();
    let mut connection = std::net::TcpStream::connect(server.addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {STATELESS}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: sleep\r\nContent-Length: {}\r\n\r\n",
        server.addr,
        body.len()
    );
    connection.write_all(head.as_bytes()).unwrap();
    connection.write_all(&body).unwrap();
    // Let the call start.
    std::thread::sleep(Duration::from_millis(500));
    let left = Instant::now();
    drop(connection);
    let stderr = server.server.stderr_containing("cancelled request 42");
    assert!(
        stderr.contains("cancelling stateless request 42"),
        "{stderr}"
    );
    assert!(
        left.elapsed() < QUICK,
        "the call was not cancelled promptly"
    );
}

/// 10,000 stateless calls from 32 concurrent clients over keep-alive
/// connections: none may be lost or fail. Prints calls per second (see
/// docs/benchmarks.md, "HTTP load").
#[test]
fn load_10000_calls_from_32_clients() {
    const CLIENTS: usize = 32;
    const CALLS: usize = 10_000;
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    // The default rate limits (1000 calls/s per tool, 5000 across tools)
    // guard real deployments; this test measures the transport.
    support::write_file(
        folder.path(),
        "calc.toml",
        "[limits]\nrate = 1000000\nconcurrency = 64\n",
    );
    let server = HttpServer::start(folder.path(), &["--global-rate", "1000000"]);
    // Warm up: the plugin is compiled and loaded.
    server.client().stateless("tools/list", json!({})).answer();

    let started = Instant::now();
    let workers: Vec<_> = (0..CLIENTS)
        .map(|worker| {
            let addr = server.addr;
            std::thread::spawn(move || {
                let mut client = Client::new(addr);
                let mut ok = 0;
                for i in (worker..CALLS).step_by(CLIENTS) {
                    let response = client.stateless(
                        "tools/call",
                        json!({ "name": "add", "arguments": { "a": i, "b": 1 } }),
                    );
                    let answer = response.answer();
                    assert_eq!(response.status, 200, "{answer}");
                    assert_eq!(answer["result"]["isError"], false, "{answer}");
                    assert_eq!(text_of(&answer), (i + 1).to_string(), "{answer}");
                    ok += 1;
                }
                ok
            })
        })
        .collect();
    let ok: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    let elapsed = started.elapsed();
    assert_eq!(ok, CALLS);
    let rate = CALLS as f64 / elapsed.as_secs_f64();
    eprintln!(
        "HTTP load: {CALLS} calls from {CLIENTS} clients in {:.2} s: {rate:.0} calls/s, 0 failed",
        elapsed.as_secs_f64()
    );
    assert!(
        elapsed < Duration::from_secs(120),
        "10,000 calls took {elapsed:?}"
    );
}

/// Writes `request` on a fresh connection and reads until the server
/// closes it or `within` passes: the status code and everything read, or
/// `None` when nothing came.
fn raw_exchange(
    addr: std::net::SocketAddr,
    request: &[u8],
    within: Duration,
) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut connection = std::net::TcpStream::connect(addr).unwrap();
    connection.write_all(request).unwrap();
    connection.set_read_timeout(Some(within)).unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        match connection.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => received.extend_from_slice(&buf[..n]),
        }
        // One whole answer is enough: the server may keep the connection.
        let text = String::from_utf8_lossy(&received);
        if let Some((head, body)) = text.split_once("\r\n\r\n")
            && let Some(length) = head.lines().find_map(|line| {
                line.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().to_string())
            })
            && body.len() >= length.parse::<usize>().unwrap_or(0)
        {
            break;
        }
    }
    let text = String::from_utf8_lossy(&received).into_owned();
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, text))
}

/// The head of a stateless `tools/list` POST with `extra` header lines.
fn raw_post_head(addr: std::net::SocketAddr, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {STATELESS}\r\n\
         Mcp-Method: tools/list\r\n{extra}\r\n"
    )
}

#[test]
fn a_body_that_never_arrives_is_timed_out() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(folder.path(), &[]);
    // 6 of the 1,000 bytes announced, and then nothing.
    let mut request = raw_post_head(server.addr, "Content-Length: 1000\r\n").into_bytes();
    request.extend_from_slice(b"{\"json");
    let started = Instant::now();
    let (status, text) = raw_exchange(server.addr, &request, Duration::from_secs(20))
        .expect("no answer to a body that never arrives");
    assert_eq!(status, 408, "{text}");
    assert!(
        text.contains("the body did not arrive within 10 s"),
        "{text}"
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
fn an_oversized_content_length_is_refused_before_the_body() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(folder.path(), &[]);
    let request = raw_post_head(server.addr, "Content-Length: 100000000000\r\n");
    let started = Instant::now();
    let (status, text) = raw_exchange(server.addr, request.as_bytes(), Duration::from_secs(5))
        .expect("no answer to an oversized Content-Length");
    assert_eq!(status, 413, "{text}");
    assert!(text.contains("Payload Too Large"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn framing_that_rfc_9112_forbids_is_refused() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(folder.path(), &[]);
    let body = serde_json::to_string(&stateless_request(1, "tools/list", json!({}))).unwrap();
    let two_hosts = raw_post_head(
        server.addr,
        &format!("Host: evil.example\r\nContent-Length: {}\r\n", body.len()),
    ) + &body;
    let (status, text) = raw_exchange(server.addr, two_hosts.as_bytes(), QUICK).unwrap();
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("more than one Host header"), "{text}");
    let chunk = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    for coding in ["gzip, chunked", "chunked, chunked"] {
        let request =
            raw_post_head(server.addr, &format!("Transfer-Encoding: {coding}\r\n")) + &chunk;
        let (status, text) = raw_exchange(server.addr, request.as_bytes(), QUICK).unwrap();
        assert_eq!(status, 501, "{coding}: {text}");
    }
    // Plain chunked is fine.
    let request = raw_post_head(server.addr, "Transfer-Encoding: chunked\r\n") + &chunk;
    let (status, text) = raw_exchange(server.addr, request.as_bytes(), QUICK).unwrap();
    assert_eq!(status, 200, "{text}");
}

#[test]
fn connections_beyond_the_limit_get_503_and_service_resumes() {
    use std::io::Write;
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(folder.path(), &["--max-connections", "20"]);
    // 20 slow clients: headers in, a body that never comes.
    let head = raw_post_head(server.addr, "Content-Length: 1000\r\n");
    let slow: Vec<_> = (0..20)
        .map(|_| {
            let mut connection = std::net::TcpStream::connect(server.addr).unwrap();
            connection.write_all(head.as_bytes()).unwrap();
            connection
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // 200 more, each refused at once with a clear 503.
    let started = Instant::now();
    let body = serde_json::to_string(&stateless_request(1, "tools/list", json!({}))).unwrap();
    let list = raw_post_head(server.addr, &format!("Content-Length: {}\r\n", body.len())) + &body;
    for _ in 0..200 {
        let (status, text) = raw_exchange(server.addr, list.as_bytes(), QUICK)
            .expect("no answer beyond the connection limit");
        assert_eq!(status, 503, "{text}");
        assert!(
            text.to_ascii_lowercase().contains("retry-after: 1"),
            "{text}"
        );
    }
    assert!(started.elapsed() < QUICK, "{:?}", started.elapsed());
    let descriptors = std::fs::read_dir(format!("/proc/{}/fd", server.server.pid()))
        .unwrap()
        .count();
    assert!(descriptors < 100, "{descriptors} descriptors open");
    // The slow ones time out (their bodies never came), and service resumes.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, _) = raw_exchange(server.addr, list.as_bytes(), QUICK).unwrap();
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "service did not resume");
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(slow);
}

#[test]
fn a_batch_is_answered_at_once_though_it_holds_a_listen_stream_and_a_call_that_asks() {
    let folder = conformance_folder();
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();
    client.initialize_with("2025-03-26", json!({ "sampling": {} }));
    // Loaded, so that the bound below is the batch's alone.
    assert_eq!(client.legacy("tools/list", json!({})).status, 200);
    // Posted from a thread of its own, so that an answer that never comes
    // fails the test after QUICK rather than hangs it.
    let (sent, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let response = client.post(&batch_that_could_wait_on_the_client(), &[]);
        let _ = sent.send((response, client));
    });
    let (response, mut client) = answered
        .recv_timeout(QUICK)
        .unwrap_or_else(|_| panic!("no answer within {QUICK:?}"));
    assert_eq!(response.status, 200, "{}", response.text());
    // One JSON body: no listen acknowledgement or sampling request made it
    // an SSE stream.
    assert_eq!(
        response.header("content-type"),
        Some("application/json"),
        "{}",
        response.text()
    );
    assert_answered_without_waiting(&response.answer());
    // The session goes on.
    let ping = client.legacy("ping", json!({}));
    assert_eq!(ping.status, 200, "{}", ping.text());
}

#[test]
fn a_listen_stream_in_a_legacy_session_ends_with_its_connection() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(folder.path(), &["--log-level", "debug"]);
    let mut legacy = server.client();
    legacy.initialize("2025-11-25");
    let listen = stateless_request(
        77,
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true } }),
    );
    let body = serde_json::to_vec(&listen).unwrap();
    let session = legacy.session.clone().unwrap();
    let (status, _, mut listening) = legacy.open_stream(
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &body,
    );
    assert_eq!(status, 200);
    let ack = listening.next_within(QUICK).expect("an acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    drop(listening);
    let stderr = server.server.stderr_containing("cancelled request 77");
    assert!(stderr.contains("cancelling listen request 77"), "{stderr}");
    // The session itself goes on.
    let listed = legacy.legacy("tools/list", json!({}));
    assert_eq!(listed.status, 200);
}

#[test]
fn notifications_for_an_sse_stream_nobody_reads_are_dropped_not_queued() {
    let folder = folder_with(&[("greedy.wasm", &fixture("greedy"))]);
    let server = HttpServer::start(folder.path(), &[]);
    let mut legacy = server.client();
    legacy.initialize("2025-03-26");
    legacy.legacy("logging/setLevel", json!({ "level": "debug" }));
    // 30 calls in one batch, each allowed 1 MiB of progress and log messages.
    let calls = 30;
    let batch: Vec<Value> = (0..calls)
        .map(|i| {
            json!({ "jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {
                "name": "chatty", "arguments": { "count": 2000, "kib": 16 },
                "_meta": { "progressToken": i } } })
        })
        .collect();
    let session = legacy.session.clone().unwrap();
    // The client's receive buffer is fixed (1 MiB; the kernel doubles it),
    // so that what the sockets hold does not depend on how far the kernel
    // would grow it on a busy machine (once 13 MiB).
    let (status, _, mut stream) = legacy.open_stream_receiving(
        Some(1 << 20),
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-03-26"),
        ],
        &serde_json::to_vec(&batch).unwrap(),
    );
    assert_eq!(status, 200);
    // Every call ends while the stream is not read.
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.server.stderr().matches("tool=chatty").count() < calls as usize {
        assert!(Instant::now() < deadline, "the calls did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    let peak = server.server.peak_rss_bytes();
    assert!(peak < 512 << 20, "peak RSS {} MiB", peak >> 20);
    let mut notification_bytes = 0;
    let answer = loop {
        let message = stream.next_within(QUICK).expect("the stream ended early");
        if message.is_array() {
            break message;
        }
        notification_bytes += message.to_string().len();
    };
    assert_eq!(answer.as_array().unwrap().len(), calls as usize);
    // 1 MiB waited in the server; the rest, a few MiB, in the sockets'
    // buffers (the server's send buffer grows to 4 MiB at most here, the
    // client's receive buffer is 2 MiB). Unbounded, all 30 MiB would have
    // waited.
    assert!(
        notification_bytes < 10 << 20,
        "{} KiB of notifications were queued",
        notification_bytes >> 10
    );
}

/// A stateless `tools/call` of `name` with `arguments`, sending exactly the
/// version and method headers and `extra` (the test's Mcp-Name and
/// Mcp-Param headers).
fn stateless_call(
    client: &mut Client,
    id: i64,
    name: &str,
    arguments: Value,
    extra: &[(&str, &str)],
) -> Response {
    let message = stateless_request(
        id,
        "tools/call",
        json!({ "name": name, "arguments": arguments }),
    );
    let mut headers = vec![
        ("MCP-Protocol-Version", STATELESS),
        ("Mcp-Method", "tools/call"),
    ];
    headers.extend_from_slice(extra);
    client.post(&message, &headers)
}

/// A HeaderMismatch: 400 with JSON-RPC error -32020 for request `id`,
/// whose message says `what`.
fn assert_header_mismatch(response: &Response, id: i64, what: &str) {
    assert_eq!(response.status, 400, "{}", response.text());
    let answer = response.answer();
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], -32020, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(what), "{message}");
}

/// Mcp-Name may come in the spec's encoded form, `=?base64?...?=`: it is
/// compared decoded, and one that does not decode is a HeaderMismatch.
#[test]
fn an_encoded_mcp_name_is_compared_decoded() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();
    let two = json!({ "a": 1, "b": 1 });

    let encoded = stateless_call(
        &mut client,
        1,
        "add",
        two.clone(),
        &[("Mcp-Name", "=?base64?YWRk?=")],
    );
    assert_eq!(encoded.status, 200, "{}", encoded.text());
    assert_eq!(text_of(&encoded.answer()), "2");

    let other = stateless_call(
        &mut client,
        2,
        "add",
        two.clone(),
        &[("Mcp-Name", "=?base64?c3VidHJhY3Q=?=")],
    );
    assert_header_mismatch(
        &other,
        2,
        "the Mcp-Name header says subtract but the body names add",
    );
    let malformed = stateless_call(
        &mut client,
        3,
        "add",
        two.clone(),
        &[("Mcp-Name", "=?base64?YWR?=")],
    );
    assert_header_mismatch(&malformed, 3, "the Mcp-Name header is not valid");
    // Without both markers the value is the name itself.
    let literal = stateless_call(&mut client, 4, "add", two, &[("Mcp-Name", "=?base64?YWRk")]);
    assert_header_mismatch(&literal, 4, "the Mcp-Name header says =?base64?YWRk but");
}

/// A tool parameter marked `x-mcp-header` (the conformance fixture's
/// `region`, as `Region`) must be stated by its `Mcp-Param-Region` header,
/// plain or encoded; a call whose header is missing, disagrees, or does not
/// decode is refused before the tool runs.
#[test]
fn mcp_param_headers_must_state_the_arguments_they_mirror() {
    let folder = conformance_folder();
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();
    let name = ("Mcp-Name", "test_custom_header");

    let list = client.stateless("tools/list", json!({}));
    let tools = list.answer()["result"]["tools"].clone();
    let routed = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "test_custom_header")
        .unwrap_or_else(|| panic!("no test_custom_header in {tools}"));
    assert_eq!(
        routed["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );

    let region = |value: &str| json!({ "region": value });
    let plain = stateless_call(
        &mut client,
        1,
        "test_custom_header",
        region("us-west1"),
        &[name, ("Mcp-Param-Region", "us-west1")],
    );
    assert_eq!(plain.status, 200, "{}", plain.text());
    assert_eq!(text_of(&plain.answer()), "routed to region us-west1");
    // "Zürich" in UTF-8, Base64 encoded; header names ignore case.
    let encoded = stateless_call(
        &mut client,
        2,
        "test_custom_header",
        region("Zürich"),
        &[name, ("mcp-param-region", "=?base64?WsO8cmljaA==?=")],
    );
    assert_eq!(encoded.status, 200, "{}", encoded.text());
    assert_eq!(text_of(&encoded.answer()), "routed to region Zürich");

    let missing = stateless_call(
        &mut client,
        3,
        "test_custom_header",
        region("us-west1"),
        &[name],
    );
    assert_header_mismatch(
        &missing,
        3,
        "the Mcp-Param-Region header is missing (argument `region` has a value)",
    );
    let other = stateless_call(
        &mut client,
        4,
        "test_custom_header",
        region("us-west1"),
        &[name, ("Mcp-Param-Region", "eu-west1")],
    );
    assert_header_mismatch(&other, 4, "does not state the value of argument `region`");
    let malformed = stateless_call(
        &mut client,
        5,
        "test_custom_header",
        region("Hello"),
        &[name, ("Mcp-Param-Region", "=?base64?SGVsbG8?=")],
    );
    assert_header_mismatch(&malformed, 5, "the Mcp-Param-Region header is not valid");
    // A tool without marked parameters needs no Mcp-Param header.
    let unmarked = stateless_call(
        &mut client,
        6,
        "test_simple_text",
        json!({}),
        &[("Mcp-Name", "test_simple_text")],
    );
    assert_eq!(unmarked.status, 200, "{}", unmarked.text());
}

/// HTTP-level errors answer with the request's id whenever the body has
/// one, and with the codes the 2026-07-28 transport gives: -32020 for a
/// missing MCP-Protocol-Version, -32022 (with the supported versions) for
/// an unknown one.
#[test]
fn http_errors_carry_the_request_id_and_the_spec_codes() {
    let folder = conformance_folder();
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();
    let list = stateless_request(41, "tools/list", json!({}));

    // No session and no MCP-Protocol-Version: a stateless request missing its header.
    let unversioned = client.post(&list, &[("Mcp-Method", "tools/list")]);
    assert_header_mismatch(
        &unversioned,
        41,
        "the MCP-Protocol-Version header is missing",
    );
    let legacy = client.legacy("tools/list", json!({}));
    assert_eq!(legacy.status, 400, "{}", legacy.text());
    assert_eq!(legacy.answer()["error"]["code"], -32020);
    assert!(legacy.answer()["id"].is_i64(), "{}", legacy.text());

    // Refused for its media types, with its id.
    let body = serde_json::to_vec(&list).unwrap();
    let json_only = client.send(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ],
        &body,
    );
    assert_eq!(json_only.status, 406);
    assert_eq!(json_only.answer()["id"], 41, "{}", json_only.text());
    let text = client.send(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "text/plain"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &body,
    );
    assert_eq!(text.status, 415);
    assert_eq!(text.answer()["id"], 41, "{}", text.text());

    // In a session: an unknown MCP-Protocol-Version, and an unknown session.
    client.initialize("2025-11-25");
    let message = json!({ "jsonrpc": "2.0", "id": "v", "method": "tools/list" });
    let unknown = client.post(&message, &[("MCP-Protocol-Version", "2099-01-01")]);
    assert_eq!(unknown.status, 400, "{}", unknown.text());
    let answer = unknown.answer();
    assert_eq!(answer["id"], "v");
    assert_eq!(answer["error"]["code"], -32022, "{answer}");
    assert_eq!(answer["error"]["data"]["requested"], "2099-01-01");
    assert!(
        answer["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-11-25")),
        "{answer}"
    );
    client.session = Some("0".repeat(32));
    let gone = client.post(&message, &[]);
    assert_eq!(gone.status, 404, "{}", gone.text());
    assert_eq!(gone.answer()["id"], "v");
}

/// An Mcp-Session-Id that is not visible ASCII names a session no one was
/// given: 404, never a request without a session (400 on POST, 405 on GET
/// and DELETE) nor a new session on initialize.
#[test]
fn a_session_id_that_is_not_ascii_is_an_unknown_session() {
    let folder = conformance_folder();
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();
    let foreign = ("Mcp-Session-Id", "s\u{e9}ance");

    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let listed = client.post(&list, &[foreign, ("MCP-Protocol-Version", "2025-11-25")]);
    assert_eq!(listed.status, 404, "{}", listed.text());
    let initialize = json!({
        "jsonrpc": "2.0", "id": 2, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "corral-http-test", "version": "1" },
        },
    });
    let started = client.post(&initialize, &[foreign]);
    assert_eq!(started.status, 404, "{}", started.text());
    assert!(started.header("mcp-session-id").is_none());
    for method in ["GET", "DELETE"] {
        let answer = client.send(
            method,
            "/mcp",
            &[foreign, ("Accept", "text/event-stream")],
            b"",
        );
        assert_eq!(answer.status, 404, "{method}: {}", answer.text());
    }
}
