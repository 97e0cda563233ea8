//! Scale-out: two `corral serve --http` replicas of one shared plugin folder
//! behind nginx (the Debian package, installed by scripts/system-packages) on
//! loopback, with the configuration of tests/http/nginx.conf.template.
//! Stateless calls spread over both replicas, a plugin dropped into the
//! shared folder appears on both, a legacy session works through the
//! proxy (it sticks to one replica), and a call that asks the user in the
//! stateless era completes on whichever replica its retry reaches (the
//! replicas share the key that seals `requestState`). Plugins' state lives
//! in one Redis (`--state redis://`), so both replicas count together, and
//! so do tasks: either replica answers `tasks/get`, `tasks/update` and
//! `tasks/cancel` for a task the other runs.

#[path = "support/http.rs"]
mod http;
#[path = "support/nginx.rs"]
mod nginx;
#[path = "support/redis.rs"]
mod redis;
mod support;

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use http::{Client, HttpServer};
use nginx::{Nginx, free_port};
use redis::RedisServer;
use support::{conformance_folder, example, folder_with, repo_root, run_setup, write_file};

/// Starts nginx on a free loopback port in front of `replicas`.
fn start_nginx(replicas: &[&HttpServer]) -> (Nginx, u16) {
    let addrs: Vec<_> = replicas.iter().map(|replica| replica.addr).collect();
    let nginx = Nginx::start(free_port(), &addrs);
    let port = nginx.port;
    (nginx, port)
}

#[test]
fn two_replicas_behind_nginx_share_one_folder() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let first = HttpServer::start(folder.path(), &[]);
    let second = HttpServer::start(folder.path(), &[]);
    let (nginx, port) = start_nginx(&[&first, &second]);
    let proxy = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let replicas = [first.addr.to_string(), second.addr.to_string()];

    // Stateless calls spread over both replicas, none lost.
    let mut client = Client::new(proxy);
    let mut answered_by: HashMap<String, usize> = HashMap::new();
    for i in 0..40 {
        let response = client.stateless(
            "tools/call",
            json!({ "name": "add", "arguments": { "a": i, "b": 2 } }),
        );
        assert_eq!(
            response.status,
            200,
            "{}\n{}",
            response.text(),
            nginx.error_log()
        );
        let answer = response.answer();
        assert_eq!(
            answer["result"]["content"][0]["text"],
            (i + 2).to_string(),
            "{answer}"
        );
        let replica = response
            .header("x-corral-replica")
            .expect("nginx names the replica")
            .to_string();
        *answered_by.entry(replica).or_default() += 1;
    }
    for replica in &replicas {
        assert!(
            answered_by.get(replica).is_some_and(|&n| n >= 10),
            "calls were not spread over both replicas: {answered_by:?}"
        );
    }

    // A plugin dropped into the shared folder appears on both replicas.
    std::fs::copy(example("textstats"), folder.path().join("textstats.wasm")).unwrap();
    let mut seen_by: HashMap<String, bool> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while replicas
        .iter()
        .any(|replica| !seen_by.get(replica).copied().unwrap_or(false))
    {
        assert!(
            Instant::now() < deadline,
            "the new plugin did not appear on both replicas: {seen_by:?}"
        );
        let response = client.stateless("tools/list", json!({}));
        let answer = response.answer();
        let has_it = answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "analyze_text");
        let replica = response.header("x-corral-replica").unwrap().to_string();
        *seen_by.entry(replica).or_default() |= has_it;
        std::thread::sleep(Duration::from_millis(50));
    }
    // And its tools answer through the proxy, on whichever replica.
    for _ in 0..4 {
        let response = client.stateless(
            "tools/call",
            json!({ "name": "analyze_text", "arguments": { "text": "one two" } }),
        );
        assert_eq!(response.status, 200);
        assert_eq!(response.answer()["result"]["isError"], false);
    }

    // A legacy session sticks to the replica that created it.
    let mut legacy = Client::new(proxy);
    legacy.initialize("2025-11-25");
    let mut sticky_replicas = Vec::new();
    for i in 0..6 {
        let response = legacy.legacy(
            "tools/call",
            json!({ "name": "add", "arguments": { "a": i, "b": 1 } }),
        );
        assert_eq!(response.status, 200, "{}", response.text());
        sticky_replicas.push(response.header("x-corral-replica").unwrap().to_string());
    }
    sticky_replicas.dedup();
    assert_eq!(sticky_replicas.len(), 1, "{sticky_replicas:?}");
}

#[test]
fn a_call_that_asks_completes_when_its_retry_reaches_the_other_replica() {
    let folder = conformance_folder("");
    let key = "5a".repeat(32);
    let env = [("CORRAL_STATE_KEY", key.as_str())];
    let first = HttpServer::start_on(folder.path(), "127.0.0.1:0", &[], &env);
    let second = HttpServer::start_on(folder.path(), "127.0.0.1:0", &[], &env);
    let (nginx, port) = start_nginx(&[&first, &second]);
    let proxy = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut client = Client::new(proxy);
    let capabilities =
        json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
    let tool = "test_input_required_result_elicitation";

    let round = client.stateless(
        "tools/call",
        json!({ "name": tool, "arguments": {}, "_meta": capabilities }),
    );
    assert_eq!(round.status, 200, "{}\n{}", round.text(), nginx.error_log());
    let asked_by = round.header("x-corral-replica").unwrap().to_string();
    let asked = round.answer()["result"].clone();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    // The state may be sent again (it is bound to the tool, its arguments
    // and an expiry, not to a replica): retry until the other replica
    // answers, which round-robin makes the first or second try.
    let retry = json!({
        "name": tool,
        "arguments": {},
        "_meta": capabilities,
        "inputResponses": { "user_name": { "action": "accept", "content": { "name": "Alice" } } },
        "requestState": asked["requestState"],
    });
    for _ in 0..6 {
        let response = client.stateless("tools/call", retry.clone());
        assert_eq!(response.status, 200, "{}", response.text());
        let result = response.answer()["result"].clone();
        assert_eq!(result["resultType"], "complete", "{result}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("Alice"), "{result}");
        if response.header("x-corral-replica").unwrap() != asked_by {
            return;
        }
    }
    panic!("no retry reached the replica other than {asked_by}");
}

#[test]
fn the_official_python_client_completes_an_elicitation_through_two_replicas() {
    let served = folder_with(&[("sweep.wasm", &example("sweep"))]);
    let scratch = tempfile::tempdir().unwrap();
    for name in ["a.tmp", "keep.txt"] {
        std::fs::write(scratch.path().join(name), "x").unwrap();
    }
    let manifest = format!(
        "[[dirs]]\nhost = {:?}\nguest = \"/files\"\nmode = \"rw\"\n",
        scratch.path().to_str().unwrap()
    );
    std::fs::write(served.path().join("sweep.toml"), manifest).unwrap();
    let key = "c3".repeat(32);
    let env = [("CORRAL_STATE_KEY", key.as_str())];
    let first = HttpServer::start_on(served.path(), "127.0.0.1:0", &[], &env);
    let second = HttpServer::start_on(served.path(), "127.0.0.1:0", &[], &env);
    let (nginx, port) = start_nginx(&[&first, &second]);
    let python = run_setup("tests/clients/setup-python")[0]
        .trim()
        .to_string();
    let answers = r#"[{"action": "accept", "content": {"pattern": "*.tmp"}},
        {"action": "accept", "content": {"confirm": true}}]"#;
    let output = Command::new(&python)
        .arg(repo_root().join("tests/clients/python_asks.py"))
        .args([
            "2026-07-28",
            &format!("http://127.0.0.1:{port}/mcp"),
            "sweep_files",
            "{}",
            answers,
            "Deleted",
        ])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        nginx.error_log()
    );
    // Three requests (two rounds of questions, then the deletion) spread
    // over both replicas: each took the other's state.
    assert!(!scratch.path().join("a.tmp").exists());
    assert!(scratch.path().join("keep.txt").exists());
}

/// Two replicas on one Redis: a count made on one is read on the other,
/// and 200 calls at once through nginx, spread over both, add up to
/// exactly 200.
#[test]
fn two_replicas_count_together_in_one_redis() {
    let redis = RedisServer::start();
    let folder = folder_with(&[("tally.wasm", &example("tally"))]);
    write_file(
        folder.path(),
        "tally.toml",
        "[state]\nbuckets = [\"default\"]\n\n[limits]\nconcurrency = 256\nrate = 1000\nburst = 1000\n",
    );
    let state = redis.url();
    let first = HttpServer::start(folder.path(), &["--state", &state]);
    let second = HttpServer::start(folder.path(), &["--state", &state]);
    let (nginx, port) = start_nginx(&[&first, &second]);
    let proxy = std::net::SocketAddr::from(([127, 0, 0, 1], port));

    let total = |client: &mut Client, tool: &str, arguments: Value| -> (u64, String) {
        let response = client.stateless(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        );
        assert_eq!(response.status, 200, "{}", response.text());
        let answer = response.answer();
        let total = answer["result"]["structuredContent"]["total"]
            .as_u64()
            .unwrap_or_else(|| panic!("no total: {answer}"));
        let replica = response
            .header("x-corral-replica")
            .unwrap_or_default()
            .to_string();
        (total, replica)
    };
    let made = total(
        &mut first.client(),
        "tally_add",
        json!({"key": "shared", "by": 5}),
    );
    assert_eq!(made.0, 5);
    let read = total(&mut second.client(), "tally_get", json!({"key": "shared"}));
    assert_eq!(read.0, 5);

    let calls: Vec<_> = (0..200)
        .map(|_| {
            std::thread::spawn(move || {
                total(
                    &mut Client::new(proxy),
                    "tally_add",
                    json!({"key": "hits", "by": 1}),
                )
            })
        })
        .collect();
    let mut totals = Vec::new();
    let mut answered_by: HashMap<String, usize> = HashMap::new();
    for call in calls {
        let (total, replica) = call.join().unwrap();
        totals.push(total);
        *answered_by.entry(replica).or_default() += 1;
    }
    totals.sort_unstable();
    assert_eq!(
        totals,
        (1..=200).collect::<Vec<u64>>(),
        "each call saw its own total\n{}",
        nginx.error_log()
    );
    assert_eq!(answered_by.len(), 2, "{answered_by:?}");
    for server in [&first, &second] {
        let (hits, _) = total(&mut server.client(), "tally_get", json!({"key": "hits"}));
        assert_eq!(hits, 200);
    }
}

/// A stateless request declaring the tasks extension, through `client`;
/// the answer and the replica that gave it.
fn task_request(client: &mut Client, method: &str, params: Value) -> (Value, String) {
    let response = client.stateless(method, http::declaring_tasks(params));
    assert_eq!(response.status, 200, "{}", response.text());
    let replica = response.header("x-corral-replica").unwrap().to_string();
    (response.answer(), replica)
}

#[test]
fn either_replica_behind_nginx_answers_for_a_task_the_other_runs() {
    let redis = RedisServer::start();
    let state = redis.url();
    let folder = conformance_folder("");
    let first = HttpServer::start(folder.path(), &["--state", &state]);
    let second = HttpServer::start(folder.path(), &["--state", &state]);
    let (nginx, port) = start_nginx(&[&first, &second]);
    let mut client = Client::new(std::net::SocketAddr::from(([127, 0, 0, 1], port)));

    // Polled through the proxy (round-robin), the task is answered for by
    // both replicas, and its question answered on whichever the update
    // reaches.
    let (created, _) = task_request(
        &mut client,
        "tools/call",
        json!({ "name": "confirm_delete", "arguments": { "filename": "proxied.txt" } }),
    );
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}\n{}", nginx.error_log()))
        .to_owned();
    let mut answered_by = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut updated = false;
    loop {
        let (got, replica) = task_request(&mut client, "tasks/get", json!({ "taskId": id }));
        let task = &got["result"];
        *answered_by.entry(replica).or_insert(0) += 1;
        match task["status"].as_str() {
            Some("input_required") if !updated => {
                let (ack, _) = task_request(
                    &mut client,
                    "tasks/update",
                    json!({
                        "taskId": id,
                        "inputResponses": {
                            "confirm_delete": { "action": "accept", "content": { "confirm": true } },
                        },
                    }),
                );
                assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
                updated = true;
            }
            Some("completed") => {
                assert_eq!(task["result"]["content"][0]["text"], "Deleted proxied.txt.");
                break;
            }
            Some("working" | "input_required") => {}
            _ => panic!("{got}"),
        }
        assert!(Instant::now() < deadline, "the task never completed: {got}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        answered_by.len(),
        2,
        "both replicas answered: {answered_by:?}"
    );

    // Cancelled through the replica that does not run it, the runner
    // stops it.
    let (created, runner) = task_request(
        &mut client,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": { "seconds": 600 } }),
    );
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let cancelled_on = loop {
        let (ack, replica) = task_request(&mut client, "tasks/cancel", json!({ "taskId": id }));
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        if replica != runner {
            break replica;
        }
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (got, _) = task_request(&mut client, "tasks/get", json!({ "taskId": id }));
        if got["result"]["status"] == "cancelled" {
            break;
        }
        assert_eq!(got["result"]["status"], "working", "{got}");
        assert!(
            Instant::now() < deadline,
            "a cancel on {cancelled_on} never stopped the task on {runner}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
