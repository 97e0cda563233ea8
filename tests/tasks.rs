//! Tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28) end
//! to end, as a client drives them: the example folder indexer
//! (`plugins/indexer`, built by `plugins/build`) served on stdio with its
//! own manifest, called with stateless requests that declare the
//! extension. A call that runs past the manifest's `task-after` (1 s) is
//! answered with a task; `tasks/get` shows the tool's progress as the
//! task's `statusMessage` while it works, then its result; an ask inside
//! the task makes it `input_required` until `tasks/update` answers it;
//! `tasks/cancel` stops it. docs/tasks.md shows the same exchanges.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{PATIENCE, Server, example, first_text, folder_with, repo_root};

const TASKS: &str = "io.modelcontextprotocol/tasks";
const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// Files in the tree the tests index, and their lines.
const TREE_FILES: u64 = 12;
const TREE_LINES: u64 = 3 + 4 + 2 + 7 + 2000;
/// The one file over the large file threshold the ask test sets.
const BIG_LOG_LINES: u64 = 2000;

/// A folder serving the indexer with its shipped manifest (which grants
/// the manifest's own folder as /folder), holding a tree to index at
/// /folder/tree: 12 files in 4 folders, one of them binary and one a
/// 10,000-byte log.
fn served_folder() -> tempfile::TempDir {
    let folder = folder_with(&[("indexer.wasm", &example("indexer"))]);
    std::fs::copy(
        repo_root().join("plugins/indexer/indexer.toml"),
        folder.path().join("indexer.toml"),
    )
    .unwrap();
    let tree = folder.path().join("tree");
    let write = |name: &str, text: &[u8]| {
        let path = tree.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("README.md", b"# Tree\n\nA tree to index.\n");
    write(
        "src/main.rs",
        b"fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n",
    );
    write("src/lib.rs", b"pub fn one() -> u8 {\n    1 }");
    for n in 1..=7 {
        write(
            &format!("notes/n{n:02}.txt"),
            format!("note {n}\n").as_bytes(),
        );
    }
    write(
        "data.bin",
        &(0..=255u8).cycle().take(1024).collect::<Vec<u8>>(),
    );
    write("logs/big.log", "line\n".repeat(2000).as_bytes());
    folder
}

/// The `_meta` of a client that takes tasks (and, with `elicitation`, can
/// show a form).
fn takes_tasks(elicitation: bool) -> Value {
    let mut capabilities = json!({ "extensions": { TASKS: {} } });
    if elicitation {
        capabilities["elicitation"] = json!({ "form": {} });
    }
    json!({ CAPABILITIES: capabilities })
}

/// Calls `index_folder` on the tree with `arguments` as a client that
/// takes tasks; returns the answer, which must be a new task.
fn start_task(server: &mut Server, arguments: Value, elicitation: bool) -> Value {
    let mut arguments = arguments;
    arguments["path"] = json!("tree");
    let created = server.modern_result(
        "tools/call",
        json!({
            "name": "index_folder",
            "arguments": arguments,
            "_meta": takes_tasks(elicitation),
        }),
    );
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    let id = created["taskId"].as_str().unwrap();
    assert!(
        id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "{created}"
    );
    // The manifest's task-ttl, and the server's poll interval.
    assert_eq!(created["ttlMs"], 3_600_000, "{created}");
    assert!(created["pollIntervalMs"].as_u64().unwrap() > 0, "{created}");
    assert!(created.get("result").is_none(), "{created}");
    created
}

/// `tasks/get` of task `id`.
fn get(server: &mut Server, id: &str) -> Value {
    let task = server.modern_result(
        "tasks/get",
        json!({ "taskId": id, "_meta": takes_tasks(true) }),
    );
    assert_eq!(task["resultType"], "complete", "{task}");
    assert_eq!(task["taskId"], id, "{task}");
    task
}

/// Polls task `id` until `until` holds; returns every state seen, the
/// last one holding.
fn poll(server: &mut Server, id: &str, until: impl Fn(&Value) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    loop {
        let task = get(server, id);
        let done = until(&task);
        seen.push(task);
        if done {
            return seen;
        }
        let status = seen.last().unwrap()["status"].clone();
        assert!(
            status == "working" || status == "input_required",
            "the task ended before it was expected to: {}",
            seen.last().unwrap()
        );
        assert!(
            Instant::now() < deadline,
            "the task did not get there within {PATIENCE:?}; last: {}\nstderr:\n{}",
            seen.last().unwrap(),
            server.stderr()
        );
        // Faster than the server's pollIntervalMs, to see each status.
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The status messages seen while the task was working.
fn working_messages(seen: &[Value]) -> Vec<&str> {
    seen.iter()
        .filter(|task| task["status"] == "working")
        .filter_map(|task| task["statusMessage"].as_str())
        .collect()
}

#[test]
fn a_long_index_becomes_a_task_whose_status_follows_the_progress_until_its_result() {
    let folder = served_folder();
    let mut server = Server::start(folder.path());

    // A client that does not take tasks waits for the result itself,
    // however long the call runs (1.2 s here, past task-after).
    let plain = server.modern_result(
        "tools/call",
        json!({ "name": "index_folder", "arguments": { "path": "tree", "pace_ms": 100 } }),
    );
    assert_eq!(plain["resultType"], "complete", "{plain}");
    assert_eq!(plain["structuredContent"]["files"], TREE_FILES, "{plain}");

    // One that does gets a task after a second, and polls it: 12 files at
    // 300 ms each keep it working for about 2.6 s more.
    let created = start_task(&mut server, json!({ "pace_ms": 300 }), false);
    let id = created["taskId"].as_str().unwrap();
    let seen = poll(&mut server, id, |task| task["status"] == "completed");

    let messages = working_messages(&seen);
    assert!(
        messages
            .iter()
            .any(|message| message.starts_with("indexed ")
                && message.contains(&format!(" of {TREE_FILES} files: "))),
        "no progress message was seen as the task's statusMessage: {seen:#?}"
    );
    let done = seen.last().unwrap();
    assert_eq!(done["statusMessage"], "the tool finished", "{done}");
    assert_eq!(done["createdAt"], created["createdAt"], "{done}");
    let result = &done["result"];
    assert_eq!(result["isError"], false, "{done}");
    let index = &result["structuredContent"];
    assert_eq!(index["folder"], "/folder/tree", "{done}");
    assert_eq!(index["files"], TREE_FILES, "{done}");
    assert_eq!(index["folders"], 4, "{done}");
    assert_eq!(index["lines"], TREE_LINES, "{done}");
    assert_eq!(index["truncated"], false, "{done}");
    assert_eq!(index["largest"][0]["path"], "logs/big.log", "{done}");
    let extension = |name: &str| {
        index["extensions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|stats| stats["extension"] == name)
            .unwrap_or_else(|| panic!("no {name} in {index}"))
            .clone()
    };
    assert_eq!(extension("txt")["files"], 7);
    assert_eq!(extension("bin")["binary_files"], 1);
    assert_eq!(extension("log")["lines"], BIG_LOG_LINES);
    assert!(
        first_text(result).starts_with(&format!("/folder/tree: {TREE_FILES} files in 4 folders, ")),
        "{result}"
    );

    // The result stays, as it was, for the next poll.
    assert_eq!(get(&mut server, id)["result"], *result);
}

#[test]
fn an_ask_inside_a_task_waits_for_tasks_update() {
    let folder = served_folder();
    let mut server = Server::start(folder.path());
    // logs/big.log (10,000 bytes) is over the threshold: it is put off, and
    // the user is asked about it once the 11 other files are indexed, a
    // task by then.
    let created = start_task(
        &mut server,
        json!({ "pace_ms": 300, "large_file_bytes": 4096 }),
        true,
    );
    let id = created["taskId"].as_str().unwrap();
    let seen = poll(&mut server, id, |task| task["status"] == "input_required");
    let waiting = seen.last().unwrap();
    let request = &waiting["inputRequests"]["read_large_files"];
    assert_eq!(request["method"], "elicitation/create", "{waiting}");
    assert_eq!(request["params"]["mode"], "form", "{waiting}");
    let message = request["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("1 text file is larger than 4.0 KiB (9.8 KiB in all)"),
        "{waiting}"
    );
    assert!(
        waiting["statusMessage"]
            .as_str()
            .unwrap()
            .contains("; 1 large text file (9.8 KiB) left: read it whole?"),
        "{waiting}"
    );
    assert!(waiting.get("result").is_none(), "{waiting}");

    // An answer to nothing asked is ignored; the one asked resumes it.
    let update = server.modern_result(
        "tasks/update",
        json!({
            "taskId": id,
            "inputResponses": {
                "read_large_files": { "action": "accept", "content": { "confirm": true } },
                "nobody_asked": { "action": "decline" },
            },
            "_meta": takes_tasks(true),
        }),
    );
    assert_eq!(update["resultType"], "complete", "{update}");
    let seen = poll(&mut server, id, |task| task["status"] == "completed");
    assert!(
        seen.iter().all(|task| task.get("inputRequests").is_none()),
        "{seen:#?}"
    );
    let index = &seen.last().unwrap()["result"]["structuredContent"];
    assert_eq!(index["lines"], TREE_LINES, "{index}");
    assert_eq!(index["skipped"]["large_files_uncounted"], 0, "{index}");
}

#[test]
fn a_cancelled_task_stops() {
    let folder = served_folder();
    let mut server = Server::start(folder.path());
    let created = start_task(&mut server, json!({ "pace_ms": 1000 }), false);
    let id = created["taskId"].as_str().unwrap();
    let cancel = server.modern_result(
        "tasks/cancel",
        json!({ "taskId": id, "_meta": takes_tasks(false) }),
    );
    assert_eq!(cancel["resultType"], "complete", "{cancel}");
    let seen = poll(&mut server, id, |task| task["status"] == "cancelled");
    let cancelled = seen.last().unwrap();
    assert!(cancelled.get("result").is_none(), "{cancelled}");
    // It stays cancelled: the call was stopped, not left to finish (12
    // files at 1 s each would take 12 s).
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(get(&mut server, id)["status"], "cancelled");

    // Without the extension declared, the task methods are refused.
    let refused = server.modern("tasks/get", json!({ "taskId": id }));
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}
