//! The legacy-era protocol over stdio: handshake, listing, errors, batches,
//! ids, concurrency and shutdown, against the real binary and real plugins.

mod support;

use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{
    Server, assert_answered_without_waiting, batch_that_could_wait_on_the_client,
    conformance_folder, example, first_text, folder_with, plugins_dir, test_cache_dir,
};

const REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

#[test]
fn handshake_answers_every_supported_revision() {
    for revision in REVISIONS {
        let mut server = Server::start(&plugins_dir());
        let result = server.initialize(revision);
        assert_eq!(result["protocolVersion"], revision);
        assert_eq!(result["serverInfo"]["name"], "corral");
        assert!(result["capabilities"]["tools"].is_object(), "{result}");
        assert!(result["capabilities"]["tools"]["listChanged"].is_boolean());
        // serverInfo.title exists from 2025-06-18 on.
        assert_eq!(
            result["serverInfo"].get("title").is_some(),
            revision >= "2025-06-18"
        );
        assert_eq!(server.result("ping", json!({})), json!({}));
    }
}

#[test]
fn unknown_versions_get_the_newest_revision_not_an_error() {
    for asked in ["2099-12-31", "1.0", "2024-01-01"] {
        let mut server = Server::start(&plugins_dir());
        let result = server.initialize(asked);
        assert_eq!(result["protocolVersion"], "2025-11-25", "asked {asked}");
    }
}

#[test]
fn a_second_initialize_is_refused() {
    let mut server = Server::initialized(&plugins_dir(), "2025-06-18");
    let response = server.request("initialize", json!({ "protocolVersion": "2025-06-18" }));
    assert_eq!(response["error"]["code"], -32600, "{response}");
}

#[test]
fn lists_every_example_tool_in_a_deterministic_order() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    let first = server.all_tools();
    let names: Vec<&str> = first.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for expected in [
        "add",
        "divide",
        "analyze_text",
        "text_report",
        "mandelbrot",
        "tone",
        "countdown",
        "sleep",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    // Plugins in name order (calc, sketch, textstats, ticker), tools in declared order.
    assert_eq!(names.first(), Some(&"add"));
    assert_eq!(server.all_tools(), first, "same order on every request");
    for tool in &first {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].is_string(), "{tool}");
    }
}

#[test]
fn pagination_walks_every_tool_exactly_once() {
    let mut all = Server::initialized(&plugins_dir(), "2025-11-25");
    let everything = all.all_tools();
    let mut server = Server::start_with(&plugins_dir(), &["--page-size", "4"]);
    server.initialize("2025-11-25");
    let first = server.result("tools/list", json!({}));
    assert_eq!(first["tools"].as_array().unwrap().len(), 4);
    assert!(first["nextCursor"].is_string());
    assert_eq!(server.all_tools(), everything);
    let bad = server.request("tools/list", json!({ "cursor": "not-a-cursor" }));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[test]
fn tool_fields_are_shaped_for_the_negotiated_revision() {
    let field = |revision: &str, tool: &str, key: &str| -> bool {
        let mut server = Server::initialized(&plugins_dir(), revision);
        let tools = server.all_tools();
        let tool = tools.iter().find(|t| t["name"] == tool).unwrap();
        tool.get(key).is_some()
    };
    assert!(!field("2024-11-05", "analyze_text", "outputSchema"));
    assert!(!field("2024-11-05", "analyze_text", "annotations"));
    assert!(field("2025-03-26", "analyze_text", "annotations"));
    assert!(!field("2025-03-26", "mandelbrot", "title"));
    assert!(field("2025-06-18", "analyze_text", "outputSchema"));
    assert!(field("2025-06-18", "mandelbrot", "title"));
}

#[test]
fn unparseable_lines_get_parse_errors_and_the_session_goes_on() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    for garbage in [
        "{not json",
        "\"unterminated",
        "{\"jsonrpc\":\"2.0\",\"id\":1,",
    ] {
        server.send_raw(garbage);
        let response = server.recv();
        assert_eq!(response["error"]["code"], -32700, "{garbage}: {response}");
        assert_eq!(response["id"], Value::Null);
    }
    // Invalid UTF-8 is a parse error too.
    server.send_raw(&String::from_utf8_lossy(&[0xff, 0xfe]));
    assert_eq!(server.recv()["error"]["code"], -32700);
    assert_eq!(server.result("ping", json!({})), json!({}));
}

/// Lines arrive as the pipe delivers them: a message in pieces with pauses
/// between them, several in one write, and one longer than the server's
/// read buffer (64 KiB). Each is answered once it is complete.
#[test]
fn messages_in_pieces_together_or_long_are_each_answered() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "add", "arguments": { "a": 2, "b": 3 } },
    })
    .to_string()
        + "\n";
    let (first, rest) = call.split_at(20);
    let (second, third) = rest.split_at(30);
    for piece in [first, second] {
        server.write_bytes(piece.as_bytes());
        // Nothing is answered until the line is whole.
        assert_eq!(server.recv_within(Duration::from_millis(200)), None);
    }
    server.write_bytes(third.as_bytes());
    let answer = server.recv();
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "5", "{answer}");

    let together: String = (2..5)
        .map(|id| json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }).to_string() + "\n")
        .collect();
    server.write_bytes(together.as_bytes());
    let mut ids: Vec<i64> = (0..3)
        .map(|_| server.recv()["id"].as_i64().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, [2, 3, 4]);

    let padding = "x".repeat(200 * 1024);
    let long = json!({
        "jsonrpc": "2.0", "id": 5, "method": "ping", "params": { "_meta": { "padding": padding } },
    });
    server.send(&long);
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": 5, "result": {} })
    );
}

/// A message over 16 MiB is answered with an error (id null, as for any
/// request whose id cannot be read) and skipped as it streams in, never held
/// whole; the messages on either side of it are answered.
#[test]
fn an_overlong_message_is_refused_and_skipped() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    server.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }));
    assert_eq!(server.recv()["id"], 1);
    let padding = "x".repeat(1 << 20);
    let mut huge =
        r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"padding":""#.to_string();
    for _ in 0..20 {
        huge.push_str(&padding);
    }
    huge.push_str("\"}}}\n");
    server.write_bytes(huge.as_bytes());
    server.send(&json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }));
    let refused = server.recv();
    assert_eq!(refused["id"], Value::Null, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("longer than")),
        "{refused}"
    );
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": 3, "result": {} })
    );
}

#[test]
fn invalid_requests_get_invalid_request_errors() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    let cases = [
        (json!(42), Value::Null),
        (json!({ "id": 5, "method": "ping" }), json!(5)),
        (json!({ "jsonrpc": "2.0", "id": 6 }), json!(6)),
        (json!({ "jsonrpc": "2.0", "id": 7, "method": 12 }), json!(7)),
        (
            json!({ "jsonrpc": "2.0", "id": 8, "method": "ping", "params": "x" }),
            json!(8),
        ),
        (
            json!({ "jsonrpc": "2.0", "id": null, "method": "ping" }),
            Value::Null,
        ),
        (
            json!({ "jsonrpc": "2.0", "id": 1.5, "method": "ping" }),
            Value::Null,
        ),
    ];
    for (message, id) in cases {
        server.send(&message);
        let response = server.recv();
        assert_eq!(response["error"]["code"], -32600, "{message}: {response}");
        assert_eq!(response["id"], id, "{message}");
    }
}

#[test]
fn unknown_methods_and_bad_params_get_their_codes() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    let unknown = server.request("tools/frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let unknown_tool = server.request(
        "tools/call",
        json!({ "name": "no_such_tool", "arguments": {} }),
    );
    assert_eq!(unknown_tool["error"]["code"], -32602, "{unknown_tool}");
    assert!(
        unknown_tool["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool")
    );
    let no_name = server.request("tools/call", json!({ "arguments": {} }));
    assert_eq!(no_name["error"]["code"], -32602, "{no_name}");
    let bad_arguments = server.request("tools/call", json!({ "name": "add", "arguments": [1, 2] }));
    assert_eq!(bad_arguments["error"]["code"], -32602, "{bad_arguments}");
    let bad_level = server.request("logging/setLevel", json!({ "level": "loud" }));
    assert_eq!(bad_level["error"]["code"], -32602, "{bad_level}");
}

#[test]
fn notifications_get_no_response() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/whatever" }));
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 999 } }));
    server.send(&json!({ "jsonrpc": "2.0", "id": "after", "method": "ping" }));
    assert_eq!(server.recv()["id"], "after");
}

#[test]
fn string_numeric_and_zero_ids_come_back_verbatim() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    for id in [
        json!(0),
        json!("0"),
        json!("request-é"),
        json!(-3),
        json!(9007199254740993u64),
    ] {
        server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                              "params": { "name": "add", "arguments": { "a": 2, "b": 3 } } }));
        let response = server.recv();
        assert_eq!(response["id"], id);
        assert_eq!(first_text(&response["result"]), "5");
    }
}

#[test]
fn batches_work_in_2025_03_26_only() {
    let batch = json!([
        { "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "add", "arguments": { "a": 1, "b": 1 } } },
        { "jsonrpc": "2.0", "method": "notifications/initialized" },
        { "jsonrpc": "2.0", "id": "two", "method": "ping" },
        { "jsonrpc": "2.0", "id": 3, "method": "nope" },
        17
    ]);
    let mut server = Server::initialized(&plugins_dir(), "2025-03-26");
    server.send(&batch);
    let answer = server.recv();
    let responses = answer
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {answer}"));
    assert_eq!(responses.len(), 4, "{answer}");
    let by_id = |id: Value| responses.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(first_text(&by_id(json!(1))["result"]), "2");
    assert_eq!(by_id(json!("two"))["result"], json!({}));
    assert_eq!(by_id(json!(3))["error"]["code"], -32601);
    assert_eq!(by_id(Value::Null)["error"]["code"], -32600);

    server.send(&json!([]));
    assert_eq!(server.recv()["error"]["code"], -32600);
    // A batch of notifications only gets no answer at all.
    server.send(&json!([{ "jsonrpc": "2.0", "method": "notifications/initialized" }]));
    server.send(&json!({ "jsonrpc": "2.0", "id": "next", "method": "ping" }));
    assert_eq!(server.recv()["id"], "next");

    for revision in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let mut server = Server::initialized(&plugins_dir(), revision);
        server.send(&batch);
        let answer = server.recv();
        assert_eq!(answer["error"]["code"], -32600, "{revision}: {answer}");
    }
}

#[test]
fn a_batch_is_answered_at_once_though_it_holds_a_listen_stream_and_a_call_that_asks() {
    let folder = conformance_folder("");
    let mut server = Server::start(folder.path());
    server.result(
        "initialize",
        json!({
            "protocolVersion": "2025-03-26",
            "capabilities": { "sampling": {} },
            "clientInfo": { "name": "corral-tests", "version": "0" }
        }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    // Loaded, so that the bound below is the batch's alone.
    server.result("tools/list", json!({}));
    server.send(&batch_that_could_wait_on_the_client());
    // With stdin open, the first message is the batch's whole answer: no
    // acknowledgement of a listen stream, no sampling request before it.
    let answer = server
        .recv_within(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("no answer within 10 s; stderr:\n{}", server.stderr()));
    assert_answered_without_waiting(&answer);
    // Nothing was left waiting: the next message is the next ping's answer.
    let ping = server.send_request("ping", json!({}));
    let next = server.recv();
    assert_eq!(next["id"], ping, "{next}");
    assert_eq!(next["result"], json!({}), "{next}");
}

#[test]
fn a_slow_call_delays_neither_a_ping_nor_a_fast_call() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    // Tool requests wait for the first load of the plugins (initialize does
    // not): time the calls from when the tools are there.
    server.all_tools();
    let slow = server.send_request(
        "tools/call",
        json!({ "name": "sleep", "arguments": { "ms": 3000 } }),
    );
    // Give the slow call time to start running.
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let ping = server.send_request("ping", json!({}));
    let fast = server.send_request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 2 } }),
    );
    let mut order = Vec::new();
    for _ in 0..3 {
        let message = server.recv();
        order.push(message["id"].clone());
        if message["id"] == fast {
            assert_eq!(first_text(&message["result"]), "3");
            assert!(
                started.elapsed() < Duration::from_millis(2500),
                "the fast call waited for the slow one"
            );
        }
    }
    assert_eq!(order.last(), Some(&slow), "{order:?}");
    assert!(order.contains(&ping));
}

#[test]
fn closing_stdin_finishes_calls_in_flight_then_exits_cleanly() {
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    let id = server.send_request(
        "tools/call",
        json!({ "name": "sleep", "arguments": { "ms": 300 } }),
    );
    server.close_stdin();
    let response = server.recv();
    assert_eq!(response["id"], id);
    assert_eq!(response["result"]["isError"], false);
    let status = server.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}

#[test]
fn exits_cleanly_on_immediate_eof() {
    let mut server = Server::start(&plugins_dir());
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(30)).success());
}

#[test]
fn a_broken_plugin_file_is_skipped_and_the_rest_serve() {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    std::fs::write(
        dir.path().join("broken.wasm"),
        b"\0asm this is not a component",
    )
    .unwrap();
    std::fs::write(dir.path().join("empty.wasm"), b"").unwrap();
    let mut server = Server::initialized(dir.path(), "2025-11-25");
    let names: Vec<Value> = server
        .all_tools()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert!(names.contains(&json!("add")), "{names:?}");
    assert_eq!(
        first_text(&server.call("add", json!({ "a": 2, "b": 2 }))),
        "4"
    );
    // stderr is read on a thread of its own and may lag behind stdout.
    server.stderr_containing("broken.wasm");
    server.stderr_containing("empty.wasm");
}

#[test]
fn colliding_tool_names_are_prefixed_with_their_plugin() {
    let dir = folder_with(&[
        ("calc.wasm", &example("calc")),
        ("other-calc.wasm", &example("calc")),
        ("textstats.wasm", &example("textstats")),
    ]);
    let mut server = Server::initialized(dir.path(), "2025-11-25");
    let names: Vec<String> = server
        .all_tools()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"calc_add".into()), "{names:?}");
    assert!(names.contains(&"other-calc_add".into()), "{names:?}");
    assert!(!names.contains(&"add".into()), "{names:?}");
    // Tools that do not collide keep their own names.
    assert!(names.contains(&"analyze_text".into()), "{names:?}");
    assert_eq!(
        first_text(&server.call("other-calc_add", json!({ "a": 1, "b": 2 }))),
        "3"
    );
    let unknown = server.request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 2 } }),
    );
    assert_eq!(unknown["error"]["code"], -32602);
}

#[test]
fn stdout_carries_only_json_rpc() {
    // Every line the harness reads is parsed as JSON or the reader panics;
    // drive every plugin, including ones that log, to exercise that.
    let mut server = Server::initialized(&plugins_dir(), "2025-11-25");
    server.result("logging/setLevel", json!({ "level": "debug" }));
    server.call("log_levels", json!({}));
    server.call("countdown", json!({ "steps": 2, "delay_ms": 1 }));
    server.call("mandelbrot", json!({}));
    for message in &server.notifications {
        assert_eq!(message["jsonrpc"], "2.0");
    }
    assert_eq!(server.result("ping", json!({})), json!({}));
}

/// A client that sends every request before it reads a single answer (so
/// the answers back up in the stdout pipe) still gets them all: the server
/// neither blocks on the full pipe nor stops reading its input (its ~4 MB
/// of answers are far below the backlog at which it would).
#[test]
fn a_client_that_reads_late_gets_every_answer() {
    let mut child = piped_server();
    const REQUESTS: usize = 100_000;
    let mut requests = Vec::new();
    for id in 0..REQUESTS {
        requests.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").as_bytes(),
        );
    }
    // Far more than a pipe holds in each direction (64 KiB).
    assert!(requests.len() > 3_000_000);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (done, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        stdin.write_all(&requests).unwrap();
        drop(stdin);
        // Read only once every request is written.
        let mut answers = String::new();
        stdout.read_to_string(&mut answers).unwrap();
        let _ = done.send(answers);
    });
    let Ok(answers) = answered.recv_timeout(Duration::from_secs(120)) else {
        child.kill().unwrap();
        panic!("the server and the client deadlocked on full pipes");
    };
    assert!(child.wait().unwrap().success());
    let mut ids: Vec<u64> = answers
        .lines()
        .map(|line| {
            let answer: Value = serde_json::from_str(line).unwrap();
            assert_eq!(answer["result"], json!({}), "{line}");
            answer["id"].as_u64().unwrap()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..REQUESTS as u64).collect::<Vec<_>>());
}

/// A client that keeps sending requests but never reads an answer cannot
/// make the server hold answers without limit: once 16 MiB of them wait,
/// the server reads no more requests, so the client's writes block on its
/// full pipe. When the client reads, the server goes on, and every request
/// is answered.
#[cfg(target_os = "linux")]
#[test]
fn a_client_that_never_reads_is_held_back_not_buffered_for() {
    let mut child = Killed(piped_server());
    let mut stdin = child.0.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.0.stdout.take().unwrap());
    // Once the plugins are loaded, each request is answered as it is read.
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/list\"}\n")
        .unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"tools\""), "{line}");
    // Enough answers to make ten times the limit.
    let requests = (10 * (16 << 20) / line.len()).max(1000);
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            for id in 1..=requests {
                let request =
                    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n");
                stdin.write_all(request.as_bytes()).unwrap();
                sent.store(id, std::sync::atomic::Ordering::Relaxed);
            }
        })
    };
    // Wait for the writes to stop (or all to be done).
    let started = Instant::now();
    let mut last = (0, Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = sent.load(std::sync::atomic::Ordering::Relaxed);
        if now != last.0 {
            last = (now, Instant::now());
        } else if now == requests || last.1.elapsed() > Duration::from_secs(2) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no end to the writes"
        );
    }
    let held = last.0;
    assert!(
        held < requests / 2,
        "the server read {held} of {requests} requests with no answer read"
    );
    assert_holds_little(child.0.id());
    // Now read: every request gets its answer.
    assert_lists_answered(&mut stdout, requests, Default::default());
    writer.join().unwrap();
}

/// The same with stdin a file (which the server reads with a thread of
/// its own, not from the runtime): it stops reading the file while its
/// answers go unread.
#[cfg(target_os = "linux")]
#[test]
fn a_client_that_never_reads_holds_back_reading_a_file_too() {
    let requests = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("requests.jsonl");
    let lines: String = (1..=requests)
        .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n"))
        .collect();
    std::fs::write(&input, lines).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_corral"))
        .arg("serve")
        .arg(plugins_dir())
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let mut stdout = std::io::BufReader::new(child.0.stdout.take().unwrap());
    // The first answer comes once the plugins are loaded; the rest follow
    // as fast as the server makes them, until it holds back.
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert_holds_little(child.0.id());
    let first: Value = serde_json::from_str(&first).unwrap();
    let first = first["id"].as_u64().unwrap();
    assert_lists_answered(&mut stdout, requests, [first].into());
    assert!(child.0.wait().unwrap().success());
}

/// Kills the server however a test ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Asserts that the process `pid` holds well under the ~160 MiB of answers
/// a test has left unread: the 16-32 MiB it may keep, with room for copies.
#[cfg(target_os = "linux")]
fn assert_holds_little(pid: u32) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let resident_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap();
    assert!(
        resident_kib < 150 * 1024,
        "the server holds {resident_kib} KiB while its answers go unread"
    );
}

/// Reads answers to `tools/list` from `stdout`, each listing tools and each
/// for a different id, until every id from 1 to `count` is answered (those
/// in `ids` already are).
fn assert_lists_answered(
    stdout: &mut impl BufRead,
    count: usize,
    mut ids: std::collections::HashSet<u64>,
) {
    let mut line = String::new();
    while ids.len() < count {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "stdout closed early"
        );
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert!(
            answer["result"]["tools"]
                .as_array()
                .is_some_and(|t| !t.is_empty()),
            "{line}"
        );
        assert!(ids.insert(answer["id"].as_u64().unwrap()), "{line}");
    }
    assert!(ids.iter().all(|id| (1..=count as u64).contains(id)));
}

/// `corral serve` on the Rust examples, its stdin and stdout piped for a
/// test that drives them itself (stderr dropped).
fn piped_server() -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_corral"))
        .arg("serve")
        .arg(plugins_dir())
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}
