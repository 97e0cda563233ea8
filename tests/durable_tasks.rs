//! Tasks that outlive what started them (the 2026-07-28 tasks extension,
//! `io.modelcontextprotocol/tasks`), driven over HTTP as a client would,
//! against the conformance fixture's task tools (tests/plugins/conformance:
//! its calls become tasks after half a second): a task goes on when its
//! client goes; its record is in the state store (`--state`), so a
//! restarted server answers for it (and says that it stopped), replicas
//! sharing a Redis server answer for each other's tasks and pass on
//! cancellations and answers, and an expired task is gone from the store.

#[path = "support/http.rs"]
mod http;
#[path = "support/redis.rs"]
mod redis;
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use http::{HttpServer, STATELESS, declaring_tasks, stateless_request};
use redis::RedisServer;
use support::conformance_folder;

/// A client of one server that declares the tasks extension on every
/// request.
struct TaskClient {
    client: http::Client,
}

impl TaskClient {
    fn of(server: &HttpServer) -> TaskClient {
        TaskClient {
            client: server.client(),
        }
    }

    /// A stateless request declaring the extension, with its routing
    /// headers; the whole answer (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.client
            .stateless(method, declaring_tasks(params))
            .answer()
    }

    /// Calls `tool`, which must become a task; its id.
    fn start(&mut self, tool: &str, arguments: Value) -> String {
        let answer = self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        );
        let result = &answer["result"];
        assert_eq!(result["resultType"], "task", "{answer}");
        let id = result["taskId"].as_str().unwrap().to_owned();
        assert_eq!(id.len(), 32, "128 random bits as hex: {id}");
        id
    }

    fn get(&mut self, id: &str) -> Value {
        self.request("tasks/get", json!({ "taskId": id }))
    }

    /// Polls task `id` until `done` holds of its `tasks/get` result.
    fn until(&mut self, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            let answer = self.get(id);
            let result = &answer["result"];
            assert!(
                result.is_object(),
                "tasks/get {id} must keep answering while {what}: {answer}"
            );
            if done(result) {
                return result.clone();
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "task {id} never {what}: {answer}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn until_status(&mut self, id: &str, status: &str) -> Value {
        self.until(id, &format!("became {status}"), |task| {
            task["status"] == status
        })
    }
}

fn serve(folder: &Path, store: &str) -> HttpServer {
    HttpServer::start(folder, &["--state", store])
}

#[test]
fn a_task_goes_on_without_its_client_and_a_restarted_server_says_it_stopped() {
    let folder = conformance_folder("");
    let store = format!("sqlite:{}", folder.path().join("state.sqlite").display());
    let server = serve(folder.path(), &store);
    // The client that starts them goes away (its connection is dropped);
    // another asks later.
    let (finishing, running) = {
        let mut starter = TaskClient::of(&server);
        let finishing = starter.start(
            "slow_compute",
            json!({ "seconds": 1.5, "label": "unattended" }),
        );
        let running = starter.start("slow_compute", json!({ "seconds": 600, "label": "cut" }));
        (finishing, running)
    };
    let mut later = TaskClient::of(&server);
    let done = later.until_status(&finishing, "completed");
    assert_eq!(
        done["result"]["content"][0]["text"], "computed unattended after 1.5 s",
        "{done}"
    );
    assert_eq!(later.get(&running)["result"]["status"], "working");

    server.terminate();
    drop(server);
    let restarted = serve(folder.path(), &store);
    let mut client = TaskClient::of(&restarted);
    // What ended is kept as it ended.
    let kept = client.get(&finishing);
    assert_eq!(kept["result"]["status"], "completed", "{kept}");
    assert_eq!(kept["result"]["result"], done["result"]);
    // What was running is never "not found": it reads working until its
    // runner's heartbeat is known to have stopped, then failed, saying so.
    let failed = client.until(&running, "failed", |task| task["status"] != "working");
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    let message = failed["statusMessage"].as_str().unwrap();
    assert!(message.contains("stopped (it was restarted"), "{message}");
    assert!(failed.get("result").is_none(), "{failed}");
}

#[test]
fn an_unknown_or_expired_task_is_not_found_and_leaves_the_store() {
    let folder = conformance_folder("task-ttl = \"1 s\"\n");
    let store = format!("sqlite:{}", folder.path().join("state.sqlite").display());
    let server = serve(folder.path(), &store);
    let mut client = TaskClient::of(&server);
    let guessed = client.get("00000000000000000000000000000000");
    assert_eq!(guessed["error"]["code"], -32602, "{guessed}");

    let id = client.start("slow_compute", json!({ "seconds": 0.7 }));
    let done = client.until_status(&id, "completed");
    // Kept its TTL after it ended: a second, and what it ran.
    let ttl = done["ttlMs"].as_u64().unwrap();
    assert!((1000..3000).contains(&ttl), "{done}");
    assert_eq!(client.get(&id)["result"]["status"], "completed");
    std::thread::sleep(Duration::from_millis(ttl + 200));
    let expired = client.get(&id);
    assert_eq!(expired["error"]["code"], -32602, "{expired}");
    assert!(
        expired["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not found"),
        "{expired}"
    );

    // The store forgets it at the next sweep: a server sweeps when it
    // creates its first task.
    assert!(listed_tasks(folder.path(), &store).contains(&id));
    server.terminate();
    drop(server);
    let restarted = serve(folder.path(), &store);
    let mut client = TaskClient::of(&restarted);
    let next = client.start("slow_compute", json!({ "seconds": 0.7 }));
    client.until_status(&next, "completed");
    let listed = listed_tasks(folder.path(), &store);
    assert!(
        !listed.contains(&id),
        "an expired task is deleted:\n{listed}"
    );
    assert!(listed.contains(&next), "{listed}");
}

/// What `corral state list` shows of the tasks kept in `store`.
fn listed_tasks(folder: &Path, store: &str) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(["state", "list"])
        .arg(folder)
        .arg("corral.tasks")
        .args(["--state", store])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn replicas_sharing_redis_answer_for_cancel_and_update_each_others_tasks() {
    let redis = RedisServer::start();
    let store = redis.url();
    let folder = conformance_folder("");
    let a = serve(folder.path(), &store);
    let b = serve(folder.path(), &store);
    let (mut on_a, mut on_b) = (TaskClient::of(&a), TaskClient::of(&b));

    // Started on A, seen and cancelled on B: A's runner stops it.
    let id = on_a.start("slow_compute", json!({ "seconds": 600, "label": "far" }));
    assert_eq!(on_b.get(&id)["result"]["status"], "working");
    let ack = on_b.request("tasks/cancel", json!({ "taskId": id }));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let cancelled = on_b.until(&id, "ended", |task| task["status"] != "working");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(on_a.get(&id)["result"]["status"], "cancelled");

    // Started on A, asks; answered on B: A's call goes on with the answer.
    let id = on_a.start("confirm_delete", json!({ "filename": "far.txt" }));
    let asking = on_b.until_status(&id, "input_required");
    let keys: Vec<&String> = asking["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["confirm_delete"], "{asking}");
    assert_eq!(
        asking["inputRequests"]["confirm_delete"]["method"],
        "elicitation/create"
    );
    let ack = on_b.request(
        "tasks/update",
        json!({
            "taskId": id,
            "inputResponses": {
                "confirm_delete": { "action": "accept", "content": { "confirm": true } },
            },
        }),
    );
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = on_b.until_status(&id, "completed");
    assert_eq!(done["result"]["content"][0]["text"], "Deleted far.txt.");
}

/// 2025-11-25's experimental tasks, in a legacy session over HTTP: a call
/// is a task when it asks (`params.task`) and its tool allows it, and a
/// session sees only its own tasks.
#[test]
fn a_2025_session_asks_for_its_tasks_and_sees_only_its_own() {
    let folder = conformance_folder("");
    let store = format!("sqlite:{}", folder.path().join("state.sqlite").display());
    let server = serve(folder.path(), &store);
    let mut mine = server.client();
    let initialized = mine.initialize("2025-11-25");
    assert_eq!(
        initialized["result"]["capabilities"]["tasks"],
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } })
    );
    let listed = mine.legacy("tools/list", json!({})).answer();
    let support = |name: &str| {
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == name)
            .map(|tool| tool["execution"]["taskSupport"].clone())
            .unwrap()
    };
    assert_eq!(support("greet"), "forbidden");
    assert_eq!(support("slow_compute"), "optional");
    assert_eq!(support("failing_job"), "required");

    let call = |client: &mut http::Client, name: &str, arguments: Value, task: Option<Value>| {
        let mut params = json!({ "name": name, "arguments": arguments });
        if let Some(task) = task {
            params["task"] = task;
        }
        client.legacy("tools/call", params).answer()
    };
    let refused = call(&mut mine, "greet", json!({ "name": "x" }), Some(json!({})));
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let refused = call(&mut mine, "failing_job", json!({}), None);
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let plain = call(&mut mine, "slow_compute", json!({ "seconds": 0.7 }), None);
    assert_eq!(
        plain["result"]["content"][0]["text"],
        "computed a result after 0.7 s"
    );

    let created = call(
        &mut mine,
        "slow_compute",
        json!({ "seconds": 1, "label": "asked" }),
        Some(json!({ "ttl": 60000 })),
    );
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 60000);
    assert!(task["pollInterval"].is_u64(), "{created}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    // tasks/result waits for the end, and answers what the call would have.
    let result = mine
        .legacy("tasks/result", json!({ "taskId": id }))
        .answer();
    assert_eq!(
        result["result"]["content"][0]["text"], "computed asked after 1 s",
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    let got = mine.legacy("tasks/get", json!({ "taskId": id })).answer();
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert!(got["result"].get("result").is_none(), "{got}");

    // Another session sees none of it.
    let mut theirs = server.client();
    theirs.initialize("2025-11-25");
    let hidden = theirs.legacy("tasks/get", json!({ "taskId": id })).answer();
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    let hidden = theirs
        .legacy("tasks/result", json!({ "taskId": id }))
        .answer();
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    let theirs_listed = theirs.legacy("tasks/list", json!({})).answer();
    assert_eq!(
        theirs_listed["result"]["tasks"],
        json!([]),
        "{theirs_listed}"
    );
    let mine_listed = mine.legacy("tasks/list", json!({})).answer();
    let ids: Vec<&str> = mine_listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [id.as_str()]);

    // Cancelled, the task says so at once; an ended task cannot be.
    let created = call(
        &mut mine,
        "slow_compute",
        json!({ "seconds": 600 }),
        Some(json!({})),
    );
    let long = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let cancelled = mine
        .legacy("tasks/cancel", json!({ "taskId": long }))
        .answer();
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let again = mine
        .legacy("tasks/cancel", json!({ "taskId": long }))
        .answer();
    assert_eq!(again["error"]["code"], -32602, "{again}");
}

/// A 2025-11-25 task that asks the user waits in `input_required` until the
/// client calls `tasks/result`, which carries the question (marked with
/// the task) and brings the answer back; the session is told of each
/// change of its status.
#[test]
fn a_2025_task_asks_through_tasks_result() {
    let folder = conformance_folder("");
    let mut server = support::Server::start(folder.path());
    server.result(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": { "elicitation": {} },
            "clientInfo": { "name": "corral-tests", "version": "0" },
        }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let created = server.result(
        "tools/call",
        json!({
            "name": "confirm_delete",
            "arguments": { "filename": "near.txt" },
            "task": {},
        }),
    );
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let started = Instant::now();
    loop {
        let task = server.result("tasks/get", json!({ "taskId": id }));
        if task["status"] == "input_required" {
            break;
        }
        assert_eq!(task["status"], "working", "{task}");
        assert!(started.elapsed() < Duration::from_secs(20), "{task}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let waiting = server.send_request("tasks/result", json!({ "taskId": id }));
    let asked = loop {
        let message = server.recv();
        if message.get("id").is_some() {
            break message;
        }
        server.notifications.push(message);
    };
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(
        asked["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str(),
        "{asked}"
    );
    assert_eq!(asked["params"]["message"], "Delete near.txt?");
    server.send(&json!({
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": { "action": "accept", "content": { "confirm": true } },
    }));
    let result = server.response_to(&waiting);
    assert_eq!(
        result["result"]["content"][0]["text"], "Deleted near.txt.",
        "{result}"
    );
    // Each change of its status was told (notifications/tasks/status).
    let mut told: Vec<Value> = support::take(&mut server, "notifications/tasks/status")
        .into_iter()
        .map(|told| told["params"].clone())
        .collect();
    while told.last().is_none_or(|task| task["status"] != "completed") {
        told.push(
            support::expect_notification(&mut server, "notifications/tasks/status")["params"]
                .clone(),
        );
    }
    // (Back to working in between, unless it ended before that was told.)
    let statuses: Vec<&Value> = told.iter().map(|task| &task["status"]).collect();
    assert_eq!(
        statuses.first().copied(),
        Some(&json!("input_required")),
        "{told:?}"
    );
    assert!(
        statuses.windows(2).all(|pair| pair[0] != pair[1]),
        "{told:?}"
    );
    assert!(told.iter().all(|task| task["taskId"] == id.as_str()));
}

/// A listen stream asked for `taskIds` hears each change of those tasks
/// (`notifications/tasks`, the whole task as `tasks/get` has it) until
/// each ends: of a task run by its own server at once, of one run by
/// another replica at the next heartbeat.
#[test]
fn listen_streams_hear_of_the_tasks_they_name_on_any_replica() {
    let redis = RedisServer::start();
    let store = redis.url();
    let folder = conformance_folder("");
    let a = serve(folder.path(), &store);
    let b = serve(folder.path(), &store);
    let mut on_a = TaskClient::of(&a);
    let here = on_a.start("confirm_delete", json!({ "filename": "here.txt" }));
    let there = on_a.start("slow_compute", json!({ "seconds": 1.5, "label": "there" }));

    let listen = |server: &HttpServer, ids: &[&str], id: i64| {
        let params = declaring_tasks(json!({ "notifications": { "taskIds": ids } }));
        server
            .client()
            .open_listen(&stateless_request(id, "subscriptions/listen", params))
    };
    // Without the extension declared, no task is told of.
    let refused = b.client().post(
        &stateless_request(
            8,
            "subscriptions/listen",
            json!({ "notifications": { "taskIds": [here] } }),
        ),
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "subscriptions/listen"),
        ],
    );
    assert_eq!(
        refused.answer()["error"]["code"],
        -32021,
        "{}",
        refused.text()
    );

    let (status, _, mut stream) = listen(&b, &[&here, &there, "unknown"], 9);
    assert_eq!(status, 200);
    let ack = stream
        .next_within(Duration::from_secs(5))
        .expect("an acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([here, there]),
        "only kept tasks are watched: {ack}"
    );
    let mut last: std::collections::HashMap<String, Value> = Default::default();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut answered = false;
    while !(last.get(&here).is_some_and(|t| t["status"] == "completed")
        && last.get(&there).is_some_and(|t| t["status"] == "completed"))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        let told = stream
            .next_within(left)
            .unwrap_or_else(|| panic!("the stream went quiet; last told: {last:?}"));
        assert_eq!(told["method"], "notifications/tasks", "{told}");
        let task = &told["params"];
        assert_eq!(task["_meta"]["io.modelcontextprotocol/subscriptionId"], 9);
        let id = task["taskId"].as_str().unwrap().to_owned();
        if task["status"] == "input_required" && !answered {
            assert!(
                task["inputRequests"]["confirm_delete"].is_object(),
                "{task}"
            );
            let ack = on_a.request(
                "tasks/update",
                json!({
                    "taskId": here,
                    "inputResponses": {
                        "confirm_delete": { "action": "accept", "content": { "confirm": false } },
                    },
                }),
            );
            assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
            answered = true;
        }
        last.insert(id, task.clone());
    }
    assert!(answered, "the stream told of the question");
    assert_eq!(
        last[&here]["result"]["content"][0]["text"],
        "Kept here.txt."
    );
    assert_eq!(
        last[&there]["result"]["content"][0]["text"],
        "computed there after 1.5 s"
    );
}

/// A client that creates tasks in a loop and never asks for them holds the
/// server to its bounds: expired tasks are deleted as it goes (a sweep
/// after every thousand created), so the store keeps about as many as the
/// TTL spans, and the server's memory stays small.
#[test]
fn tasks_created_in_a_loop_and_never_polled_leave_the_store_and_memory_bounded() {
    // Long enough for most to expire (their TTL is a second) while the
    // loop goes on.
    const LOOPING: Duration = Duration::from_secs(5);
    const AT_MOST: usize = 30_000;
    let folder = support::folder_with(&[("conformance.wasm", &support::fixture("conformance"))]);
    std::fs::write(
        folder.path().join("conformance.toml"),
        "[limits]\ntask-after = \"0 s\"\ntask-ttl = \"1 s\"\nconcurrency = 64\n\n[state]\nbuckets = [\"default\"]\n",
    )
    .unwrap();
    let store = format!("sqlite:{}", folder.path().join("state.sqlite").display());
    let server = serve(folder.path(), &store);
    let mut client = TaskClient::of(&server);
    let started = Instant::now();
    let mut created = 0;
    while started.elapsed() < LOOPING && created < AT_MOST {
        let answer = client.request(
            "tools/call",
            json!({ "name": "slow_compute", "arguments": { "seconds": 0.02, "label": created.to_string() } }),
        );
        assert_eq!(
            answer["result"]["resultType"], "task",
            "call {created}: {answer}"
        );
        created += 1;
    }
    let took = started.elapsed();
    // What the store holds: each kept task is a record and an index entry.
    let listed = listed_tasks(folder.path(), &store);
    let keys: u64 = listed
        .lines()
        .last()
        .and_then(|line| line.split(": ").nth(1))
        .and_then(|usage| usage.split(' ').next())
        .and_then(|keys| keys.parse().ok())
        .unwrap_or_else(|| panic!("no usage line:\n{listed}"));
    let kept = keys / 2;
    // At most the tasks of the last sweep's span: a thousand created, and
    // those still inside their TTL (about a second's worth).
    let per_second = created as f64 / took.as_secs_f64();
    let bound = 1000 + (2.0 * per_second) as u64;
    assert!(
        kept <= bound && kept < created as u64 / 2,
        "{kept} of {created} tasks kept (created {per_second:.0}/s; bound {bound})"
    );
    let peak = server.server.peak_rss_bytes();
    assert!(peak < 512 << 20, "peak RSS {} MiB", peak >> 20);
    eprintln!(
        "{created} tasks in {took:?}: {kept} kept, peak RSS {} MiB",
        peak >> 20
    );
}

/// A plugin runs at most 64 calls as tasks at once, whatever its
/// `concurrency`: the tasks past that end at once with a tool error that
/// says so, and one cancelled makes room.
#[test]
fn a_plugin_runs_at_most_64_tasks_at_once() {
    const STARTED: usize = 70;
    let folder = support::folder_with(&[("conformance.wasm", &support::fixture("conformance"))]);
    std::fs::write(
        folder.path().join("conformance.toml"),
        "[limits]\ntask-after = \"0 s\"\nconcurrency = 100\n\n[state]\nbuckets = [\"default\"]\n",
    )
    .unwrap();
    let store = format!("sqlite:{}", folder.path().join("state.sqlite").display());
    let server = serve(folder.path(), &store);
    let mut client = TaskClient::of(&server);
    let started: Vec<String> = (0..STARTED)
        .map(|_| client.start("slow_compute", json!({ "seconds": 600 })))
        .collect();
    // Which ones got to run depends on the order their runners started in:
    // 64 of them, whichever.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (working, refused) = loop {
        let (mut working, mut refused) = (Vec::new(), Vec::new());
        for id in &started {
            let task = client.get(id)["result"].clone();
            match task["status"].as_str() {
                Some("working") => working.push(id.clone()),
                Some("completed") => refused.push(task),
                _ => panic!("{task}"),
            }
        }
        if refused.len() == STARTED - 64 || Instant::now() > deadline {
            break (working, refused);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(working.len(), 64, "{refused:?}");
    for task in &refused {
        assert_eq!(task["result"]["isError"], true, "{task}");
        let text = task["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("64 calls of plugin `conformance` are running as tasks already"),
            "{text}"
        );
    }
    client.request("tasks/cancel", json!({ "taskId": working[0] }));
    client.until_status(&working[0], "cancelled");
    let room = client.start("slow_compute", json!({ "seconds": 0.2, "label": "room" }));
    let done = client.until_status(&room, "completed");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "computed room after 0.2 s"
    );
    for id in &working[1..] {
        client.request("tasks/cancel", json!({ "taskId": id }));
    }
}
