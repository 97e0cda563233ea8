//! The host's own work under attack: a greedy plugin (`tests/plugins/greedy`)
//! and greedy arguments try to make the host spend unbounded memory or CPU
//! outside the sandbox (schema validation, regexes, violation lists, output
//! shaping, tool metadata), and a hostile plugin of documents
//! (`tests/plugins/hostile-resources`) through its resource listing, reads,
//! templates, completions and `resource-updated` calls. Each test proves the
//! work is refused with an error naming the bound (or cut to it), that the
//! host's peak RSS stays under 512 MiB and `ping` answers within 100 ms
//! meanwhile, and that calls and reads still succeed after.

mod support;

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{
    PATIENCE, Server, add_conformance_resources, example, first_text, fixture, folder_with,
    proc_status_bytes, test_cache_dir, write_file,
};
use tempfile::TempDir;

const REVISION: &str = "2025-11-25";
const MIB: u64 = 1 << 20;
/// The host's peak RSS stays under this, whatever the attack.
const MAX_PEAK_RSS: u64 = 512 * MIB;
/// `ping` answers within this while an attack runs.
const MAX_PING: Duration = Duration::from_millis(100);

/// A folder holding `calc.wasm` and `greedy.wasm`, the latter with a
/// manifest that sets its mode (see the plugin's documentation).
fn greedy_folder(mode: Option<&str>) -> TempDir {
    let dir = folder_with(&[
        ("calc.wasm", &example("calc")),
        ("greedy.wasm", &fixture("greedy")),
    ]);
    if let Some(mode) = mode {
        write_file(
            dir.path(),
            "greedy.toml",
            &format!("[env]\nset = {{ GREEDY_MODE = \"{mode}\" }}\n"),
        );
    }
    dir
}

fn serve(dir: &Path) -> Server {
    Server::initialized(dir, REVISION)
}

/// Sends `tools/call` for `tool`, and a `ping` at once and every 20 ms until
/// the call is answered. Returns the call's result and the slowest ping.
fn call_while_pinging(server: &mut Server, tool: &str, arguments: Value) -> (Value, Duration) {
    let params = json!({ "name": tool, "arguments": arguments });
    let (result, slowest, _) = request_while_pinging(server, params);
    (result, slowest)
}

/// [`call_while_pinging`] with the whole `tools/call` params; also returns
/// the notifications that came meanwhile.
fn request_while_pinging(server: &mut Server, params: Value) -> (Value, Duration, Vec<Value>) {
    let (mut answers, slowest, notifications) =
        requests_while_pinging(server, &[("tools/call", params)]);
    let answer = answers.pop().unwrap();
    let result = answer
        .get("result")
        .unwrap_or_else(|| panic!("tools/call failed: {answer}"))
        .clone();
    (result, slowest, notifications)
}

/// Sends every request of `requests` (method and params) at once, and a
/// `ping` at once and every 20 ms until all are answered. Returns their
/// whole responses in order, the slowest ping and the notifications that
/// came meanwhile.
fn requests_while_pinging(
    server: &mut Server,
    requests: &[(&str, Value)],
) -> (Vec<Value>, Duration, Vec<Value>) {
    let ids: Vec<Value> = requests
        .iter()
        .map(|(method, params)| server.send_request(method, params.clone()))
        .collect();
    let mut answers: Vec<Option<Value>> = vec![None; ids.len()];
    let mut notifications = Vec::new();
    let mut pings: HashMap<i64, Instant> = HashMap::new();
    let mut slowest = Duration::ZERO;
    let deadline = Instant::now() + PATIENCE;
    let mut next_ping = Instant::now();
    let unanswered = |answers: &[Option<Value>]| answers.iter().any(Option::is_none);
    while unanswered(&answers) || !pings.is_empty() {
        assert!(Instant::now() < deadline, "no answer within {PATIENCE:?}");
        if unanswered(&answers) && Instant::now() >= next_ping {
            let id = server.send_request("ping", json!({}));
            pings.insert(id.as_i64().unwrap(), Instant::now());
            next_ping = Instant::now() + Duration::from_millis(20);
        }
        let Some(message) = server.recv_within(Duration::from_millis(5)) else {
            continue;
        };
        if let Some(i) = ids.iter().position(|id| message.get("id") == Some(id)) {
            answers[i] = Some(message);
        } else if let Some(sent) = message["id"].as_i64().and_then(|id| pings.remove(&id)) {
            slowest = slowest.max(sent.elapsed());
        } else if message.get("method").is_some() {
            notifications.push(message);
        } else {
            panic!("unexpected message: {message}");
        }
    }
    let answers = answers.into_iter().map(Option::unwrap).collect();
    (answers, slowest, notifications)
}

/// The call was refused with a tool execution error containing `needle`,
/// `ping` stayed fast, and the host's memory stayed bounded.
fn assert_bounded(server: &Server, result: &Value, slowest_ping: Duration, needle: &str) {
    assert_eq!(result["isError"], true, "{}", brief(result));
    let text = first_text(result);
    assert!(text.contains(needle), "{needle:?} not in {}", brief(result));
    assert!(
        slowest_ping < MAX_PING,
        "ping took {slowest_ping:?} during the attack"
    );
    let peak = server.peak_rss_bytes();
    assert!(peak < MAX_PEAK_RSS, "peak RSS {} MiB", peak / MIB);
}

/// Calls keep succeeding after an attack, the greedy plugin's and others'.
fn assert_still_serves(server: &mut Server) {
    let sum = server.call("add", json!({ "a": 2, "b": 3 }));
    assert_eq!(first_text(&sum), "5", "{sum}");
}

fn brief(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 2000 {
        format!("{}… ({} bytes)", &text[..2000], text.len())
    } else {
        text
    }
}

/// `{"x": {"x": ... leaf ...}}`, `depth` levels deep.
fn nested(depth: usize, leaf: Value) -> Value {
    (0..depth).fold(leaf, |inner, _| json!({ "x": inner }))
}

#[test]
fn schemas_whose_references_double_at_every_level_are_refused_at_load() {
    for (mode, tool, which) in [
        ("chain", "chain", "input schema"),
        ("chain_output", "chain_output", "output schema"),
    ] {
        let dir = greedy_folder(Some(mode));
        let started = Instant::now();
        let mut server = serve(dir.path());
        let names = server.tool_names();
        assert!(names.contains(&"add".to_string()), "{names:?}");
        assert!(!names.contains(&tool.to_string()), "{names:?}");
        let stderr = server.stderr_containing(&format!("tool `{tool}`: {which}: at /$defs/d7"));
        assert!(
            stderr.contains("its references expand to more than 100000 subschemas"),
            "{stderr}"
        );
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(server.peak_rss_bytes() < MAX_PEAK_RSS);
        assert_still_serves(&mut server);
    }
}

#[test]
fn arguments_whose_validation_would_explode_are_refused_unvalidated() {
    let dir = greedy_folder(None);
    let mut server = serve(dir.path());
    // Each level of the value doubles the subschemas applied to the next:
    // 2^40 of them at the leaf.
    let (result, ping) = call_while_pinging(&mut server, "nested", nested(40, json!("leaf")));
    assert_bounded(
        &server,
        &result,
        ping,
        "validation budget of 4,000,000 work units",
    );
    // A shallow value is validated as usual, violations and all.
    let shallow = server.call("nested", nested(3, json!("leaf")));
    assert!(
        first_text(&shallow).starts_with("Invalid arguments for tool `nested`"),
        "{shallow}"
    );
    assert_still_serves(&mut server);
}

#[test]
fn structured_content_whose_validation_would_explode_is_refused_unvalidated() {
    let dir = greedy_folder(None);
    let mut server = serve(dir.path());
    let (result, ping) = call_while_pinging(&mut server, "nested_output", json!({ "count": 40 }));
    assert_bounded(
        &server,
        &result,
        ping,
        "validation budget of 4,000,000 work units",
    );
    assert_still_serves(&mut server);
}

#[test]
fn a_backtracking_pattern_costs_little_however_many_strings_it_meets() {
    let dir = greedy_folder(None);
    let mut server = serve(dir.path());
    let evil: Vec<String> = (0..500)
        .map(|i| format!("{}!{i}", "a".repeat(30)))
        .collect();
    let started = Instant::now();
    let (result, ping) = call_while_pinging(&mut server, "patterned", json!({ "s": evil }));
    assert_bounded(&server, &result, ping, "and 480 more");
    let (result, ping) =
        call_while_pinging(&mut server, "patterned_output", json!({ "count": 500 }));
    assert_bounded(&server, &result, ping, "does not match its output schema");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_still_serves(&mut server);
}

#[test]
fn violation_lists_are_capped_in_count_and_size() {
    let dir = greedy_folder(None);
    let mut server = serve(dir.path());
    // 2 MiB of strings where integers belong: 20,000 violations.
    let strings = vec!["x".repeat(100); 20_000];
    let (result, ping) = call_while_pinging(&mut server, "integers", json!({ "list": strings }));
    assert_bounded(&server, &result, ping, "- and 19980 more");
    let text = first_text(&result);
    assert!(text.len() < 16 * 1024, "{} bytes of error text", text.len());
    assert_eq!(
        text.lines().filter(|l| l.starts_with("- /list/")).count(),
        20
    );
    assert_still_serves(&mut server);
}

#[test]
fn annotations_count_toward_the_output_limit() {
    let dir = greedy_folder(None);
    let mut server = serve(dir.path());
    // 10 million audience roles: 10 MB from the guest, ~114 MiB as JSON.
    let (result, ping) =
        call_while_pinging(&mut server, "annotated", json!({ "roles": 10_000_000 }));
    assert_bounded(&server, &result, ping, "more than the limit of 4 MiB");
    // A 64 MiB `lastModified`.
    let (result, ping) = call_while_pinging(&mut server, "annotated", json!({ "mib": 64 }));
    assert_bounded(&server, &result, ping, "more than the limit of 4 MiB");
    let fine = server.call("annotated", json!({ "roles": 2 }));
    assert_eq!(
        fine["content"][0]["annotations"]["audience"],
        json!(["user", "user"])
    );
    assert_still_serves(&mut server);
}

#[test]
fn tool_metadata_is_bounded_by_the_host_memory_it_takes() {
    // 50 tools with two 250 KiB schemas: 25 MB of text, which held 1.3 GB of
    // host memory once parsed and compiled.
    let dir = greedy_folder(Some("metadata"));
    let mut server = serve(dir.path());
    let names = server.tool_names();
    assert!(
        !names.iter().any(|name| name.starts_with("wide_")),
        "{names:?}"
    );
    let stderr = server.stderr_containing("more than the metadata limit of 32 MiB");
    assert!(
        stderr.contains("raise `metadata` in the manifest"),
        "{stderr}"
    );
    let peak = server.peak_rss_bytes();
    assert!(peak < MAX_PEAK_RSS, "peak RSS {} MiB", peak / MIB);
    assert!(server.request("ping", json!({}))["result"].is_object());
    assert_still_serves(&mut server);
}

#[test]
fn an_oversized_icon_is_refused_at_load() {
    let dir = greedy_folder(Some("icon"));
    let mut server = serve(dir.path());
    assert!(!server.tool_names().contains(&"iconic".to_string()));
    server.stderr_containing("tool `iconic`: icon source is longer than 65536 bytes");
    assert!(server.peak_rss_bytes() < MAX_PEAK_RSS);
    assert_still_serves(&mut server);
}

#[test]
fn progress_and_log_floods_are_capped_per_call() {
    let dir = greedy_folder(None);
    let mut server = serve(dir.path());
    server.result("logging/setLevel", json!({ "level": "debug" }));
    // 2,000 progress reports and 2,000 log messages of 16 KiB each: 64 MB.
    let params = json!({
        "name": "chatty",
        "arguments": { "count": 2000, "kib": 16 },
        "_meta": { "progressToken": "flood" }
    });
    let (result, ping, notifications) = request_while_pinging(&mut server, params);
    assert_eq!(
        result["structuredContent"]["reported"],
        2000,
        "{}",
        brief(&result)
    );
    assert!(ping < MAX_PING, "ping took {ping:?} during the flood");
    let bytes: usize = notifications.iter().map(|n| n.to_string().len()).sum();
    assert!(bytes < 2 * MIB as usize, "{bytes} bytes of notifications");
    let progress = notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .count();
    assert!(
        (1..=1000).contains(&progress),
        "{progress} progress notifications"
    );
    server.stderr_containing("of log and progress messages in one call; dropping the rest");
    assert!(server.peak_rss_bytes() < MAX_PEAK_RSS);
    assert_still_serves(&mut server);
}

/// A server whose stdout the test reads only when it chooses to.
struct Unread {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    stderr: std::path::PathBuf,
}

impl Drop for Unread {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn notifications_for_a_client_that_does_not_read_are_dropped_not_queued() {
    let dir = greedy_folder(None);
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_corral"))
        .arg("serve")
        .arg(dir.path())
        .env("CORRAL_LOG", "info")
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let mut server = Unread {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        child,
        stderr: log.path().to_owned(),
    };
    let mut send = |message: Value| {
        writeln!(server.stdin, "{message}").unwrap();
    };
    send(
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": REVISION, "capabilities": {},
        "clientInfo": { "name": "corral-tests", "version": "0" } } }),
    );
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": { "level": "debug" } }),
    );
    // 30 calls, each allowed 1 MiB of notifications: 30 MiB, unread.
    let calls = 30;
    for i in 0..calls {
        send(
            json!({ "jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {
            "name": "chatty", "arguments": { "count": 2000, "kib": 16 },
            "_meta": { "progressToken": i } } }),
        );
    }
    // Every call ends (the audit log says so) while nothing is read.
    let deadline = Instant::now() + PATIENCE;
    loop {
        let stderr = std::fs::read_to_string(&server.stderr).unwrap();
        if stderr.matches("tool=chatty").count() >= calls as usize {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the calls did not end:\n{stderr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let peak = proc_status_bytes(server.child.id(), "VmHWM");
    assert!(peak < MAX_PEAK_RSS, "peak RSS {} MiB", peak / MIB);
    // Now read: every response is there; the notifications past 16 MiB of
    // backlog were dropped.
    let mut responses = 0;
    let mut notification_bytes = 0;
    let mut line = String::new();
    while responses < calls + 2 {
        line.clear();
        server.stdout.read_line(&mut line).unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("id").is_some() {
            assert!(message.get("result").is_some(), "{}", brief(&message));
            responses += 1;
        } else {
            notification_bytes += line.len();
        }
    }
    assert!(
        notification_bytes < 20 * MIB as usize,
        "{} MiB of notifications were queued",
        notification_bytes as u64 / MIB
    );
    let stderr = std::fs::read_to_string(&server.stderr).unwrap();
    assert!(stderr.contains("the client is not reading"), "{stderr}");
}

#[test]
fn batches_are_bounded_in_length_and_in_what_their_answer_holds() {
    let dir = greedy_folder(Some("wide"));
    let mut server = Server::start(dir.path());
    server.initialize("2025-03-26");
    assert_eq!(server.all_tools().len(), 6 + 8);
    let pings: Vec<Value> = (0..257)
        .map(|i| json!({ "jsonrpc": "2.0", "id": i, "method": "ping" }))
        .collect();
    server.send(&json!(pings));
    let refused = server.recv();
    assert_eq!(refused["error"]["code"], -32600, "{}", brief(&refused));
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("at most 256 messages; this one holds 257"),
        "{message}"
    );
    // 256 lists of 14 tools with large schemas: gigabytes, held whole until
    // the last one is answered, without a bound.
    let lists: Vec<Value> = (0..256)
        .map(|i| json!({ "jsonrpc": "2.0", "id": 1000 + i, "method": "tools/list" }))
        .collect();
    server.send(&json!(lists));
    let answer = server.recv();
    let responses = answer
        .as_array()
        .unwrap_or_else(|| panic!("{}", brief(&answer)));
    assert_eq!(responses.len(), 256);
    let listed = responses
        .iter()
        .filter(|r| r.get("result").is_some())
        .count();
    let refused: Vec<_> = responses
        .iter()
        .filter(|r| r.get("error").is_some())
        .collect();
    assert!(listed >= 1, "{}", brief(&answer));
    assert_eq!(listed + refused.len(), 256);
    assert!(!refused.is_empty(), "every list fit");
    let message = refused[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("past 64 MiB; send the request on its own"),
        "{message}"
    );
    let peak = server.peak_rss_bytes();
    assert!(peak < MAX_PEAK_RSS, "peak RSS {} MiB", peak / MIB);
    assert!(server.request("ping", json!({}))["result"].is_object());
}

// ---- a hostile plugin of documents (tests/plugins/hostile-resources) -------

/// The hostile documents' manifest: memory raised to the most a manifest
/// may give (4 GiB, room for a 1 GiB blob), and `output` to 64 MiB (room
/// for a million completion values, not for the blob).
const HOSTILE_DOCUMENTS_LIMITS: &str = "[limits]\nmemory = \"4 GiB\"\noutput = \"64 MiB\"\n";

/// A folder holding `calc.wasm`, the conformance suite's documents
/// (`conformance-resources.wasm`) and, unless `hostile` is false,
/// `hostile-resources.wasm` in its default mode with its manifest.
fn documents_folder(hostile: bool) -> TempDir {
    let dir = folder_with(&[("calc.wasm", &example("calc"))]);
    add_conformance_resources(dir.path(), "conformance-resources");
    if hostile {
        write_file(
            dir.path(),
            "hostile-resources.toml",
            HOSTILE_DOCUMENTS_LIMITS,
        );
        std::fs::copy(
            fixture("hostile-resources"),
            dir.path().join("hostile-resources.wasm"),
        )
        .unwrap();
    }
    dir
}

/// `resources/read` of `uri` while pinging: its whole response and the
/// slowest ping.
fn read_while_pinging(server: &mut Server, uri: &str) -> (Value, Duration) {
    let (mut answers, slowest, _) =
        requests_while_pinging(server, &[("resources/read", json!({ "uri": uri }))]);
    (answers.pop().unwrap(), slowest)
}

/// Ping stayed fast and the host's memory bounded during `attack`.
fn assert_host_held(server: &Server, slowest_ping: Duration, attack: &str) {
    assert!(
        slowest_ping < MAX_PING,
        "ping took {slowest_ping:?} during {attack}"
    );
    let peak = server.peak_rss_bytes();
    assert!(peak < MAX_PEAK_RSS, "peak RSS {} MiB", peak / MIB);
}

/// Every other plugin keeps serving its tools and documents after an
/// attack, and so does the hostile one its harmless resource when it is
/// loaded.
fn assert_documents_still_served(server: &mut Server, hostile_loaded: bool) {
    assert_still_serves(server);
    let read = server.result("resources/read", json!({ "uri": "test://static-text" }));
    assert_eq!(
        read["contents"][0]["text"], "This is the content of the static text resource.",
        "{read}"
    );
    if hostile_loaded {
        let read = server.result("resources/read", json!({ "uri": "hostile://ok" }));
        assert_eq!(read["contents"][0]["text"], "still serving", "{read}");
    }
}

/// The URIs `resources/list` serves, all pages.
fn listed_uris(server: &mut Server) -> Vec<String> {
    let mut uris = Vec::new();
    let mut params = json!({});
    loop {
        let page = server.result("resources/list", params);
        for resource in page["resources"].as_array().unwrap() {
            uris.push(resource["uri"].as_str().unwrap().to_string());
        }
        match page.get("nextCursor") {
            Some(cursor) => params = json!({ "cursor": cursor }),
            None => return uris,
        }
    }
}

#[test]
fn a_plugin_listing_100k_resources_is_refused_at_load_naming_the_bound() {
    let dir = documents_folder(false);
    let mut server = serve(dir.path());
    // Copied in while the server runs (a hot reload): ping meanwhile. The
    // manifest first, then the component under a name the watcher ignores,
    // renamed whole.
    write_file(
        dir.path(),
        "hostile-resources.toml",
        &format!("{HOSTILE_DOCUMENTS_LIMITS}[env]\nset = {{ HOSTILE_MODE = \"many\" }}\n"),
    );
    let partial = dir.path().join("hostile-resources.partial");
    std::fs::copy(fixture("hostile-resources"), &partial).unwrap();
    std::fs::rename(&partial, dir.path().join("hostile-resources.wasm")).unwrap();
    let mut slowest = Duration::ZERO;
    let deadline = Instant::now() + PATIENCE;
    while !server
        .stderr()
        .contains("hostile-resources.wasm failed to load")
    {
        assert!(
            Instant::now() < deadline,
            "the plugin was not refused:\n{}",
            server.stderr()
        );
        let sent = Instant::now();
        assert!(server.request("ping", json!({}))["result"].is_object());
        slowest = slowest.max(sent.elapsed());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_host_held(&server, slowest, "the load of 100,000 resources");
    let stderr = server.stderr();
    let refusal = stderr
        .lines()
        .find(|line| line.contains("hostile-resources.wasm failed to load"))
        .unwrap();
    assert!(
        refusal.contains("resources") && (refusal.contains("10,000") || refusal.contains("10000")),
        "the refusal does not name the bound: {refusal}"
    );
    let uris = listed_uris(&mut server);
    assert!(
        !uris.iter().any(|uri| uri.starts_with("hostile://")),
        "{} URIs listed",
        uris.len()
    );
    assert_documents_still_served(&mut server, false);
}

#[test]
fn a_1_gib_blob_is_refused_naming_the_output_limit() {
    let dir = documents_folder(true);
    let mut server = serve(dir.path());
    let (response, ping) = read_while_pinging(&mut server, "hostile://huge");
    assert_host_held(&server, ping, "the read of a 1 GiB blob");
    let error = &response["error"];
    assert_eq!(error["code"], -32603, "{}", brief(&response));
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("limit of 64 MiB"),
        "the refusal does not name the output limit: {}",
        brief(&response)
    );
    assert_documents_still_served(&mut server, true);
}

#[test]
fn a_template_of_adjacent_variables_matches_a_long_uri_in_linear_time() {
    let dir = documents_folder(true);
    let mut server = serve(dir.path());
    let templates = server.result("resources/templates/list", json!({}));
    let knot = templates["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|template| template["uriTemplate"].as_str())
        .find(|template| template.starts_with("hostile://knot/"))
        .unwrap_or_else(|| panic!("the knot template is not served: {templates}"))
        .to_string();
    assert_eq!(knot.matches('{').count(), 150, "{knot}");
    let started = Instant::now();
    // 2,000 characters for 150 adjacent variables, and no `/end`: a
    // backtracking matcher tries every way to split them.
    let evil = format!("hostile://knot/{}", "a".repeat(2000));
    let (response, ping) = read_while_pinging(&mut server, &evil);
    assert_host_held(
        &server,
        ping,
        "the match of a long URI against 150 adjacent variables",
    );
    assert_eq!(response["error"]["code"], -32002, "{}", brief(&response));
    // The same with `/end`: it matches, and the plugin reads it.
    let matching = format!("hostile://knot/{}/end", "a".repeat(1000));
    let (response, ping) = read_while_pinging(&mut server, &matching);
    assert_host_held(&server, ping, "the read of a URI that matches them");
    assert_eq!(
        response["result"]["contents"][0]["text"],
        "the knot matched",
        "{}",
        brief(&response)
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_documents_still_served(&mut server, true);
}

/// A folder holding `calc.wasm`, the conformance suite's documents and
/// `copies` copies of `hostile-resources.wasm` in its `templates` mode
/// (1,000 templates of about 1 KiB each, see the plugin), the first named
/// `hostile-resources.wasm`, the others `hostile-resources-N.wasm`.
fn near_templates_folder(copies: usize) -> TempDir {
    let dir = documents_folder(false);
    for copy in 0..copies {
        let name = match copy {
            0 => "hostile-resources".to_string(),
            n => format!("hostile-resources-{n}"),
        };
        write_file(
            dir.path(),
            &format!("{name}.toml"),
            "[env]\nset = { HOSTILE_MODE = \"templates\" }\n",
        );
        std::fs::copy(
            fixture("hostile-resources"),
            dir.path().join(format!("{name}.wasm")),
        )
        .unwrap();
    }
    dir
}

/// The templates `resources/templates/list` serves, all pages.
fn listed_templates(server: &mut Server) -> Vec<String> {
    let mut templates = Vec::new();
    let mut params = json!({});
    loop {
        let page = server.result("resources/templates/list", params);
        for template in page["resourceTemplates"].as_array().unwrap() {
            templates.push(template["uriTemplate"].as_str().unwrap().to_string());
        }
        match page.get("nextCursor") {
            Some(cursor) => params = json!({ "cursor": cursor }),
            None => return templates,
        }
    }
}

/// A 2,048-byte URI that every template of the `templates` mode nearly
/// matches and none matches.
fn near_uri() -> String {
    let prefix = "hostile://near/";
    format!("{prefix}{}", "a".repeat(2_048 - prefix.len()))
}

/// 64 reads of [`near_uri`] at once, while pinging: their answers and the
/// slowest ping.
fn near_reads_while_pinging(server: &mut Server) -> (Vec<Value>, Duration) {
    let read = ("resources/read", json!({ "uri": near_uri() }));
    let reads = vec![read; 64];
    let (answers, slowest, _) = requests_while_pinging(server, &reads);
    (answers, slowest)
}

#[test]
fn reads_that_nearly_match_1000_long_templates_do_not_hold_up_ping() {
    let dir = near_templates_folder(1);
    let mut server = serve(dir.path());
    let near: Vec<String> = listed_templates(&mut server)
        .into_iter()
        .filter(|template| template.starts_with("hostile://near/"))
        .collect();
    assert_eq!(near.len(), 1_000);
    assert!(
        near.iter().all(|t| t.len() > 1_000 && t.len() <= 1_024),
        "{near:?}"
    );
    // Before matching was linear, each of these reads cost the host
    // 135-210 ms of CPU, and 64 at once held `ping` up for 6 s.
    let (answers, slowest) = near_reads_while_pinging(&mut server);
    assert_host_held(&server, slowest, "64 reads nearly matching 1,000 templates");
    for answer in &answers {
        assert_eq!(answer["error"]["code"], -32002, "{}", brief(answer));
    }
    // A URI that only the last template matches: every template before it
    // is matched, then the plugin reads it, and says 100 URIs that nearly
    // match were updated (before they were matched within a budget, off
    // the async workers, each such read would hold a worker for 100 times
    // 3 ms).
    let last = format!("hostile://near/{}!999", "a".repeat(2_000));
    let reads = vec![("resources/read", json!({ "uri": last })); 16];
    let (answers, slowest, _) = requests_while_pinging(&mut server, &reads);
    assert_host_held(
        &server,
        slowest,
        "16 reads each saying 100 near URIs were updated",
    );
    for answer in &answers {
        assert_eq!(
            answer["result"]["contents"][0]["text"],
            "a near template matched",
            "{}",
            brief(answer)
        );
    }
    assert_documents_still_served(&mut server, true);
}

#[test]
fn matching_past_a_reads_budget_is_refused_naming_the_budget() {
    // Three plugins of 1,000 near templates: matching the URI against all
    // of them costs more than a read may spend.
    let dir = near_templates_folder(3);
    let mut server = serve(dir.path());
    assert_eq!(
        listed_templates(&mut server)
            .iter()
            .filter(|template| template.starts_with("hostile://near/"))
            .count(),
        3_000
    );
    let (answers, slowest) = near_reads_while_pinging(&mut server);
    assert_host_held(&server, slowest, "64 reads nearly matching 3,000 templates");
    for answer in &answers {
        assert_eq!(answer["error"]["code"], -32603, "{}", brief(answer));
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("more than a read's budget of 4,000,000 work units"),
            "the refusal does not name the budget: {}",
            brief(answer)
        );
    }
    assert_documents_still_served(&mut server, true);
}

#[test]
fn a_completion_of_a_million_values_is_cut_to_100() {
    let dir = documents_folder(true);
    let mut server = serve(dir.path());
    let params = json!({
        "ref": { "type": "ref/resource", "uri": "hostile://flood/{n}" },
        "argument": { "name": "n", "value": "" },
    });
    let (mut answers, ping, _) =
        requests_while_pinging(&mut server, &[("completion/complete", params)]);
    assert_host_held(&server, ping, "a completion of a million values");
    let response = answers.pop().unwrap();
    let completion = &response["result"]["completion"];
    let expected: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    assert_eq!(
        completion["values"],
        json!(expected),
        "{}",
        brief(&response)
    );
    assert_eq!(completion["hasMore"], true, "{}", brief(&response));
    assert_documents_still_served(&mut server, true);
}

#[test]
fn a_resource_updated_flood_is_bounded_and_coalesced() {
    let dir = documents_folder(true);
    let mut server = serve(dir.path());
    // URIs that calls say among the first 100 they say, and one they say
    // only past them.
    let subscribed = [
        "hostile://flood/0",
        "hostile://flood/5000",
        "hostile://flood/150",
    ];
    for uri in subscribed {
        server.result("resources/subscribe", json!({ "uri": uri }));
    }
    let started = Instant::now();
    // Two million distinct URIs in one call.
    let (response, ping) = read_while_pinging(&mut server, "hostile://flood/2000000");
    assert_host_held(&server, ping, "one call saying 2,000,000 URIs changed");
    assert_eq!(
        response["result"]["contents"][0]["text"],
        "said 2000000 resources changed",
        "{}",
        brief(&response)
    );
    let mut notifications = Vec::new();
    // Then 100 calls, ten at a time, each saying 1,000 URIs no other call
    // says: 100,000 in all, 10,000 of them among the first 100 of a call.
    for batch in 0..10 {
        let calls: Vec<(&str, Value)> = (0..10)
            .map(|i| {
                let start = (batch * 10 + i) * 1000;
                let uri = format!("hostile://burst/{start}/1000");
                ("resources/read", json!({ "uri": uri }))
            })
            .collect();
        let (answers, ping, mut heard) = requests_while_pinging(&mut server, &calls);
        assert_host_held(&server, ping, "ten calls saying 1,000 URIs changed each");
        for answer in &answers {
            assert!(answer.get("result").is_some(), "{}", brief(answer));
        }
        notifications.append(&mut heard);
    }
    // The last word is never lost: wait a little over the coalescing second.
    std::thread::sleep(Duration::from_millis(1500));
    while let Some(message) = server.recv_within(Duration::from_millis(100)) {
        notifications.push(message);
    }
    notifications.append(&mut server.notifications);
    let elapsed = started.elapsed();
    let updated: Vec<&str> = notifications
        .iter()
        .filter(|n| n["method"] == "notifications/resources/updated")
        .map(|n| n["params"]["uri"].as_str().unwrap())
        .collect();
    let count = |uri: &str| updated.iter().filter(|said| **said == uri).count();
    // Said by the first call and by the first burst, less than a second
    // apart: coalesced, and the last word not lost.
    let first = count("hostile://flood/0");
    assert!(first >= 1, "no update for hostile://flood/0: {updated:?}");
    assert!(
        first as u64 <= elapsed.as_secs() + 2,
        "{first} updates of hostile://flood/0 in {elapsed:?}: not coalesced"
    );
    assert_eq!(count("hostile://flood/5000"), 1, "{updated:?}");
    assert_eq!(
        count("hostile://flood/150"),
        0,
        "an update past the 100 a call may say reached its subscriber"
    );
    assert!(
        updated.iter().all(|uri| subscribed.contains(uri)),
        "an update reached a session that did not subscribe to it: {updated:?}"
    );
    assert_documents_still_served(&mut server, true);
}

// A plugin's words: every text it hands the host to pass on (a tool error,
// a read's or a prompt's failure, an invalid-arguments, a log or progress
// message, a panic, a trap's stderr, its stdout and stderr, a completion
// value) is measured against its `output` limit and reaches the client
// and the log cut to a few KiB (`plugin_text` in the sandbox), attacked
// by `tests/plugins/hostile-messages` with 100 MiB of text on each path.

/// MiB of text each attack hands the host: 25 times the default `output`
/// limit (4 MiB), short of wasmtime's 128 MiB for one value (past which
/// the guard `TooMuchData` answers instead of the path under test).
const WORDS_MIB: u64 = 100;

/// The most a response or a log line about a plugin's words may hold:
/// [`SHOWN`] of the plugin's text (twice for a trap, its message and its
/// stderr), with the host's own words around it.
const MAX_WORDS_LINE: usize = 16 * 1024;

/// A folder holding `calc.wasm` and `hostile-messages.wasm`, the latter
/// with `manifest` beside it when there is one.
fn words_folder(manifest: Option<&str>) -> TempDir {
    let dir = folder_with(&[
        ("calc.wasm", &example("calc")),
        ("hostile-messages.wasm", &fixture("hostile-messages")),
    ]);
    if let Some(manifest) = manifest {
        write_file(dir.path(), "hostile-messages.toml", manifest);
    }
    dir
}

/// The attack was answered in a few words, ping stayed fast, the host's
/// memory stayed bounded, and no line of its log is long.
fn assert_few_words(server: &Server, answer: &Value, slowest_ping: Duration, attack: &str) {
    let bytes = answer.to_string().len();
    assert!(
        bytes < MAX_WORDS_LINE,
        "{attack}: an answer of {bytes} bytes: {}",
        brief(answer)
    );
    assert_host_held(server, slowest_ping, attack);
    let stderr = server.stderr();
    let longest = stderr.lines().map(str::len).max().unwrap_or(0);
    assert!(
        longest < MAX_WORDS_LINE,
        "{attack}: a log line of {longest} bytes: {}",
        brief(&json!(stderr.lines().max_by_key(|line| line.len())))
    );
}

/// What the host shows of the plugin's text is its two ends, around the
/// note of what was cut.
fn assert_cut(text: &str) {
    assert!(
        text.contains("<start>FFF") && text.contains("FFF<end>") && text.contains(" bytes cut) …"),
        "the plugin's text is not shown cut at both ends: {}",
        brief(&json!(text))
    );
}

/// The hostile plugin, and calc beside it, answer the next calls.
fn assert_words_still_served(server: &mut Server) {
    assert_still_serves(server);
    let ok = server.call("ok", json!({}));
    assert_eq!(first_text(&ok), "still serving", "{ok}");
    let read = server.result("resources/read", json!({ "uri": "hostile://ok" }));
    assert_eq!(read["contents"][0]["text"], "still serving", "{read}");
}

/// Sends `method` with `params` while pinging: its whole response and the
/// slowest ping.
fn words_while_pinging(server: &mut Server, method: &str, params: Value) -> (Value, Duration) {
    let (mut answers, slowest, _) = requests_while_pinging(server, &[(method, params)]);
    (answers.pop().unwrap(), slowest)
}

#[test]
fn a_tool_error_far_over_the_output_limit_is_refused_in_a_few_words() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    let (result, ping) = call_while_pinging(&mut server, "fail", json!({ "mib": WORDS_MIB }));
    assert_few_words(&server, &result, ping, "a tool error of 100 MiB");
    assert_bounded(
        &server,
        &result,
        ping,
        "returned 100 MiB of output, more than the limit of 4 MiB",
    );
    assert_words_still_served(&mut server);
}

#[test]
fn a_read_failing_with_a_message_far_over_the_output_limit_answers_it_cut() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    let uri = format!("hostile://fail/{WORDS_MIB}");
    let (response, ping) =
        words_while_pinging(&mut server, "resources/read", json!({ "uri": uri }));
    assert_few_words(&server, &response, ping, "a read failing with 100 MiB");
    assert_eq!(response["error"]["code"], -32603, "{}", brief(&response));
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "Reading `{uri}` from plugin `hostile-messages` failed, with a message of 100 MiB, more than the output limit of 4 MiB: "
        )),
        "{message}"
    );
    assert_cut(message);
    server.stderr_containing("outcome=\"output-limit\"");
    assert_words_still_served(&mut server);
}

#[test]
fn a_prompt_failing_with_a_message_far_over_the_output_limit_answers_it_cut() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    let params = json!({ "name": "fail", "arguments": { "mib": WORDS_MIB.to_string() } });
    let (response, ping) = words_while_pinging(&mut server, "prompts/get", params);
    assert_few_words(&server, &response, ping, "a prompt failing with 100 MiB");
    assert_eq!(response["error"]["code"], -32603, "{}", brief(&response));
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "Prompt `fail` failed, with a message of 100 MiB, more than the output limit of 4 MiB: "
        ),
        "{message}"
    );
    assert_cut(message);
    assert_words_still_served(&mut server);
}

#[test]
fn a_prompts_invalid_arguments_far_over_the_output_limit_are_answered_cut() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    let params = json!({ "name": "refuse", "arguments": { "mib": WORDS_MIB.to_string() } });
    let (response, ping) = words_while_pinging(&mut server, "prompts/get", params);
    assert_few_words(&server, &response, ping, "invalid arguments of 100 MiB");
    assert_eq!(response["error"]["code"], -32602, "{}", brief(&response));
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "Prompt `refuse`, with a message of 100 MiB, more than the output limit of 4 MiB: "
        ),
        "{message}"
    );
    assert_cut(message);
    assert_words_still_served(&mut server);
}

#[test]
fn a_completion_value_far_over_the_output_limit_is_refused_in_a_few_words() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    let params = json!({
        "ref": { "type": "ref/prompt", "name": "fail" },
        "argument": { "name": "mib", "value": WORDS_MIB.to_string() },
    });
    let (response, ping) = words_while_pinging(&mut server, "completion/complete", params);
    assert_few_words(&server, &response, ping, "a completion value of 100 MiB");
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("more than the limit of 4 MiB"),
        "{}",
        brief(&response)
    );
    assert_words_still_served(&mut server);
}

#[test]
fn log_and_progress_messages_far_over_the_output_limit_are_passed_on_cut() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    server.result("logging/setLevel", json!({ "level": "debug" }));
    let params = json!({
        "name": "log",
        "arguments": { "mib": WORDS_MIB },
        "_meta": { "progressToken": "words" }
    });
    let (result, ping, notifications) = request_while_pinging(&mut server, params);
    assert_eq!(first_text(&result), "logged", "{}", brief(&result));
    assert_few_words(
        &server,
        &result,
        ping,
        "log and progress messages of 100 MiB",
    );
    let said = |method: &str, field: &str| -> String {
        let notification = notifications
            .iter()
            .find(|n| {
                n["method"] == method
                    && n["params"][field]
                        .as_str()
                        .is_some_and(|t| t.contains("<start>"))
            })
            .unwrap_or_else(|| panic!("no {method} with the plugin's text: {notifications:?}"));
        let bytes = notification.to_string().len();
        assert!(bytes < MAX_WORDS_LINE, "{method} of {bytes} bytes");
        notification["params"][field].as_str().unwrap().to_owned()
    };
    for text in [
        said("notifications/message", "data"),
        said("notifications/progress", "message"),
    ] {
        assert_cut(&text);
        assert!(
            text.ends_with("(a message of 100 MiB, more than the output limit of 4 MiB)"),
            "{}",
            brief(&json!(text))
        );
    }
    assert_words_still_served(&mut server);
}

#[test]
fn a_panic_message_far_over_the_output_limit_is_reported_cut() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    let (result, ping) = call_while_pinging(&mut server, "panic", json!({ "mib": WORDS_MIB }));
    assert_few_words(&server, &result, ping, "a panic of 100 MiB");
    assert_eq!(result["isError"], true, "{}", brief(&result));
    let text = first_text(&result);
    assert!(
        text.starts_with("Tool `panic` failed: the plugin panicked at ")
            && text.contains("hostile-messages/src/lib.rs:"),
        "{}",
        brief(&result)
    );
    // The panic's message is the start of what the guest wrote; the host
    // kept the first 64 KiB of its stderr, and shows the two ends of that.
    assert!(
        text.contains("<start>FFF") && text.contains(" bytes cut) …"),
        "{}",
        brief(&result)
    );
    assert_words_still_served(&mut server);
}

#[test]
fn a_trap_after_a_flood_of_stderr_is_reported_with_stderr_cut() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    let (result, ping) = call_while_pinging(&mut server, "trap", json!({ "mib": WORDS_MIB }));
    assert_few_words(&server, &result, ping, "a trap after 100 MiB of stderr");
    assert_eq!(result["isError"], true, "{}", brief(&result));
    let text = first_text(&result);
    assert!(
        text.starts_with("Tool `trap` failed: plugin trapped: ")
            && text.contains("plugin stderr:\nFFF"),
        "{}",
        brief(&result)
    );
    assert!(
        text.contains(" bytes cut) …") && text.ends_with("more bytes dropped)"),
        "{}",
        brief(&result)
    );
    server.stderr_containing("outcome=\"trap\"");
    assert_words_still_served(&mut server);
}

#[test]
fn a_flood_of_stdout_and_stderr_is_logged_cut() {
    let dir = words_folder(None);
    let mut server = serve(dir.path());
    let (result, ping) = call_while_pinging(&mut server, "shout", json!({ "mib": WORDS_MIB }));
    assert_eq!(first_text(&result), "shouted", "{}", brief(&result));
    let stderr = server.stderr_containing("plugin stderr:");
    server.stderr_containing("plugin stdout:");
    assert!(
        stderr.contains(" bytes cut) …"),
        "{}",
        brief(&json!(stderr))
    );
    assert_few_words(&server, &result, ping, "100 MiB of stdout and of stderr");
    assert_words_still_served(&mut server);
}

#[test]
fn a_panic_far_over_the_output_limit_while_listing_is_logged_cut() {
    let dir = words_folder(Some("[env]\nset = { HOSTILE_MODE = \"list-panic\" }\n"));
    let mut server = serve(dir.path());
    let stderr = server.stderr_containing("skipping plugin");
    let refusal = stderr
        .lines()
        .find(|line| line.contains("skipping plugin") && line.contains("hostile-messages"))
        .unwrap();
    assert!(
        refusal.contains("panicked at") && refusal.contains(" bytes cut) …"),
        "{}",
        brief(&json!(refusal))
    );
    assert_few_words(
        &server,
        &json!(null),
        Duration::ZERO,
        "a panic of 64 MiB in `list`",
    );
    assert_still_serves(&mut server);
}
