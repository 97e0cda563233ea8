//! The reference MCP servers beside Corral's plugins that replace them:
//! per-call latency, startup and the server's memory, on the same calls, for
//! each original next to `corral serve` with its plugin alone, then for all
//! of them at once: one Corral process serving every plugin against one
//! original process each.
//!
//! Run with `cargo bench -p corral --bench reference` (after `scripts/setup`;
//! the originals are installed pinned under `target/clients/reference/` by
//! the same `tests/reference/NAME/setup` scripts the comparison suite uses).
//! Both sides are driven by the same Rust client over stdio pipes
//! (newline-delimited JSON-RPC, protocol 2025-06-18), so the client costs
//! both the same. Memory is the process's resident set (`VmRSS`) after the
//! calls, and its peak (`VmHWM`): an original is one process (node or
//! python), Corral one process whatever it serves.
//!
//! Environment: `REFERENCE_CALLS` (timed calls per server, default 400,
//! after a tenth as many to warm up), `REFERENCE_RUNS` (startups timed per
//! server, default 5), `REFERENCE_PAUSE_MS` (a pause before each call, as a
//! model's client leaves between the tools it calls; default none: calls
//! back to back) and `REFERENCE_CORRAL` (another build of `corral` to
//! measure, such as an earlier commit's). Arguments after `--` keep only
//! the servers whose names hold one of them.

#[allow(dead_code)] // each bench uses a different part of it
mod stdio;
#[path = "../../../tests/support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use stdio::{Client, Latencies, median, ms};
use support::{all_plugins_dir, repo_root, run_setup, target_dir, test_cache_dir};

/// The zone both time servers are given as the local one.
const LOCAL_ZONE: &str = "Europe/Warsaw";

/// One reference server and the plugin that replaces it.
struct Reference {
    /// The server's name in tests/reference/ and in the tables.
    name: &'static str,
    /// The plugin's file name in target/plugins, without `.wasm`.
    plugin: &'static str,
    /// The original's command line.
    original: Launch,
    /// The plugin's manifest, as a user of the original would write it.
    manifest: String,
    /// The calls a session makes, in turn: tool, arguments, a text its
    /// answer holds.
    calls: Vec<(&'static str, Value, &'static str)>,
}

/// The servers, each with its original installed and its working files in
/// `work`.
fn references(work: &Path) -> Vec<Reference> {
    let sequential = run_setup("tests/reference/sequential_thinking/setup");
    let sequential_original = Launch::new(&sequential[0], &[&sequential[1]]);

    let time = run_setup("tests/reference/time/setup");
    let time_original = Launch::new(
        &time[0],
        &["-m", "mcp_server_time", "--local-timezone", LOCAL_ZONE],
    );

    let memory = run_setup("tests/reference/memory/setup");
    let memory_dir = work.join("memory");
    std::fs::create_dir_all(&memory_dir).unwrap();
    let memory_original = Launch::new(&memory[0], &[&memory[1]]).with_env(
        "MEMORY_FILE_PATH",
        work.join("original-memory.jsonl").to_str().unwrap(),
    );

    // The original fetch with only its virtualenv on PATH, as
    // tests/reference/fetch/compare.py runs it: with node on PATH its
    // readabilipy npm-installs Readability.js at the first fetch.
    let fetch = run_setup("tests/reference/fetch/setup");
    let fetch_bin = Path::new(&fetch[0]).parent().unwrap().to_str().unwrap();
    let fetch_original = Launch::new(
        &fetch[0],
        &["-m", "mcp_server_fetch", "--allow-private-ips"],
    )
    .with_env("PATH", fetch_bin);
    let page = serve_page(repo_root().join("tests/reference/fetch/pages/article.html"));

    // filesystem: one folder, allowed to the original on its command line
    // and granted to the plugin under the same path, with a few files.
    let filesystem = run_setup("tests/reference/filesystem/setup");
    let files = work.join("files");
    std::fs::create_dir_all(files.join("src")).unwrap();
    let lines: String = (1..=200).map(|n| format!("line {n}\n")).collect();
    std::fs::write(files.join("notes.txt"), &lines).unwrap();
    std::fs::write(
        files.join("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    let files = files.to_str().unwrap().to_string();
    let filesystem_original = Launch::new(&filesystem[0], &[&filesystem[1], &files]);
    let at = |name: &str| format!("{files}/{name}");

    vec![
        Reference {
            name: "sequential-thinking",
            plugin: "js-sequential-thinking",
            original: sequential_original,
            manifest: std::fs::read_to_string(
                all_plugins_dir().join("js-sequential-thinking.toml"),
            )
            .unwrap(),
            calls: (1..=4)
                .map(|n| {
                    let arguments = json!({
                        "thought": format!("Thought {n}: what follows from the last one."),
                        "nextThoughtNeeded": n < 4,
                        "thoughtNumber": n,
                        "totalThoughts": 4,
                    });
                    ("sequentialthinking", arguments, "thoughtHistoryLength")
                })
                .collect(),
        },
        Reference {
            name: "filesystem",
            plugin: "filesystem",
            original: filesystem_original,
            manifest: format!("[[dirs]]\nhost = \"{files}\"\nguest = \"{files}\"\nmode = \"rw\"\n"),
            calls: vec![
                (
                    "read_text_file",
                    json!({ "path": at("notes.txt"), "tail": 5 }),
                    "line 200",
                ),
                ("list_directory", json!({ "path": files }), "[DIR] src"),
                (
                    "search_files",
                    json!({ "path": files, "pattern": "**/*.rs" }),
                    "main.rs",
                ),
                (
                    "edit_file",
                    json!({
                        "path": at("src/main.rs"),
                        "edits": [{ "oldText": "hi", "newText": "hello" }],
                        "dryRun": true,
                    }),
                    "@@ -1,3 +1,3 @@",
                ),
                (
                    "write_file",
                    json!({ "path": at("out.txt"), "content": "the same each time\n" }),
                    "Successfully wrote",
                ),
            ],
        },
        Reference {
            name: "time",
            plugin: "python-time",
            original: time_original,
            manifest: format!("[env]\nset = {{ LOCAL_TIMEZONE = \"{LOCAL_ZONE}\" }}\n"),
            calls: vec![
                (
                    "get_current_time",
                    json!({ "timezone": "America/New_York" }),
                    "day_of_week",
                ),
                (
                    "convert_time",
                    json!({
                        "source_timezone": "Europe/Warsaw",
                        "time": "16:30",
                        "target_timezone": "Asia/Tokyo",
                    }),
                    "time_difference",
                ),
            ],
        },
        Reference {
            name: "memory",
            plugin: "js-memory",
            original: memory_original,
            manifest: format!(
                "[[dirs]]\nhost = \"{}\"\nguest = \"/memory\"\nmode = \"rw\"\n\n\
                 [env]\nset = {{ MEMORY_FILE_PATH = \"/memory/memory.jsonl\" }}\n",
                memory_dir.display()
            ),
            // A small graph made by the first call (later ones find its
            // entities there and add nothing), then read three ways.
            calls: vec![
                (
                    "create_entities",
                    json!({ "entities": [
                        { "name": "Ada", "entityType": "person", "observations": ["wrote the first program"] },
                        { "name": "Engine", "entityType": "machine", "observations": ["analytical"] },
                    ]}),
                    "content",
                ),
                ("read_graph", json!({}), "Ada"),
                ("search_nodes", json!({ "query": "analytical" }), "Engine"),
                ("open_nodes", json!({ "names": ["Ada"] }), "first program"),
            ],
        },
        Reference {
            name: "fetch",
            plugin: "python-fetch",
            original: fetch_original,
            manifest: format!(
                "[http]\nallow = [\"{page}\"]\n\n[limits]\ntimeout = \"60 s\"\nfuel = 200_000_000_000\n"
            ),
            calls: vec![(
                "fetch",
                json!({ "url": format!("http://{page}/article.html") }),
                "Contents of http://",
            )],
        },
    ]
}

/// Serves `page` on loopback to every GET but `/robots.txt` (a 404: no
/// rules), one connection at a time, each closed after its answer; returns
/// its `127.0.0.1:PORT`.
fn serve_page(page: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let body = std::fs::read(page).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buffer = [0; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let (status, body, kind): (&str, &[u8], &str) =
                if request.starts_with(b"GET /robots.txt ") {
                    ("404 Not Found", b"", "text/plain")
                } else {
                    ("200 OK", &body, "text/html; charset=utf-8")
                };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body);
        }
    });
    address
}

/// The plugin's manifest with the rate limit lifted, so that the bench
/// measures calls, not refusals (the originals have no rate limit).
fn unthrottled(manifest: &str) -> String {
    const LIMITS: &str = "[limits]\n";
    if manifest.contains(LIMITS) {
        manifest.replacen(LIMITS, "[limits]\nrate = 1_000_000\n", 1)
    } else {
        format!("{manifest}\n[limits]\nrate = 1_000_000\n")
    }
}

/// A server's command line, which can be started again and again.
struct Launch {
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Launch {
    fn new(program: &str, args: &[&str]) -> Launch {
        Launch {
            program: program.to_string(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: Vec::new(),
        }
    }

    fn with_env(mut self, name: &str, value: &str) -> Launch {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Spawns it (stderr into `log`), initializes, and lists its tools;
    /// returns the client and the time from spawn to the list's answer.
    fn start(&self, log: &Path) -> (Client, Duration) {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .env_remove("CORRAL_LOG");
        let log = std::fs::File::create(log).unwrap();
        let started = Instant::now();
        let mut client = Client::spawn(command, Stdio::from(log));
        client.initialize();
        let tools = client.result("tools/list", &json!({}));
        assert!(
            tools["tools"]
                .as_array()
                .is_some_and(|tools| !tools.is_empty()),
            "{} lists no tools: {tools}",
            self.program
        );
        (client, started.elapsed())
    }
}

/// `corral serve` on `folder`, with its state in `work` and the tests'
/// compile cache (warm after scripts/test; the first start fills it).
fn corral(folder: &Path, work: &Path) -> Launch {
    let cache = test_cache_dir();
    let state = format!("sqlite:{}", work.join("state.db").display());
    let program = std::env::var("REFERENCE_CORRAL").ok();
    let program = program.filter(|program| !program.is_empty());
    Launch::new(
        program.as_deref().unwrap_or(env!("CARGO_BIN_EXE_corral")),
        &[
            "serve",
            folder.to_str().unwrap(),
            "--global-rate",
            "1000000",
            "--cache-dir",
            cache.to_str().unwrap(),
            "--state",
            &state,
        ],
    )
}

/// A folder serving `references`' plugins, each with its manifest.
fn folder_of(references: &[&Reference], work: &Path) -> PathBuf {
    let names: Vec<&str> = references.iter().map(|r| r.name).collect();
    let folder = work.join(format!("plugins-{}", names.join("+")));
    std::fs::create_dir_all(&folder).unwrap();
    for reference in references {
        let wasm = format!("{}.wasm", reference.plugin);
        std::fs::copy(all_plugins_dir().join(&wasm), folder.join(&wasm)).unwrap();
        std::fs::write(
            folder.join(format!("{}.toml", reference.plugin)),
            unthrottled(&reference.manifest),
        )
        .unwrap();
    }
    folder
}

/// What one server did in one session.
struct Measured {
    startup: Duration,
    latencies: Latencies,
    rss: u64,
    peak_rss: u64,
}

/// The server's resident set (`VmRSS`) or its peak (`VmHWM`), in bytes.
fn proc_status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|kib| kib.parse().ok())
        .unwrap();
    kib * 1024
}

/// One call of a session: the server it goes to (an index into the
/// clients), the tool, its arguments and a text its answer holds.
type Call<'a> = (usize, &'a (&'static str, Value, &'static str));

/// The calls of `sessions` taken in turn, one from each while it has any:
/// what a client using every server at once sends.
fn interleaved<'a>(sessions: &[&'a [(&'static str, Value, &'static str)]]) -> Vec<Call<'a>> {
    let longest = sessions
        .iter()
        .map(|session| session.len())
        .max()
        .unwrap_or(0);
    (0..longest)
        .flat_map(|i| {
            sessions
                .iter()
                .enumerate()
                .filter_map(move |(server, session)| Some((server, session.get(i)?)))
        })
        .collect()
}

/// Starts `launch` `runs` times; returns the last one started and the
/// median time to its tools list.
fn started(launch: &Launch, runs: usize, log: &Path) -> (Client, Duration) {
    let mut startups = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let (client, elapsed) = launch.start(log);
        startups.push(elapsed);
        last = Some(client);
    }
    (last.unwrap(), median(startups))
}

/// Makes `calls` timed calls (after a tenth as many untimed) of `sequence`,
/// over and over, each to its own server's client.
fn timed_calls(clients: &mut [Client], sequence: &[Call<'_>], calls: usize) -> Latencies {
    let run = |clients: &mut [Client], i: usize| {
        let (server, (tool, arguments, expect)) = sequence[i % sequence.len()];
        let result = clients[server].result(
            "tools/call",
            &json!({ "name": tool, "arguments": arguments }),
        );
        // The originals leave out `isError` when it is false.
        assert_ne!(
            result["isError"], true,
            "{tool} {arguments} failed: {result}"
        );
        assert!(
            result.to_string().contains(expect),
            "{tool} {arguments}: {result}"
        );
    };
    for i in 0..calls / 10 {
        run(clients, i);
    }
    let pause = pause_before_each_call();
    let mut samples = Vec::with_capacity(calls);
    let began = Instant::now();
    for i in 0..calls {
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        let sent = Instant::now();
        run(clients, i);
        samples.push(sent.elapsed());
    }
    Latencies::new(samples, began.elapsed())
}

/// Each of `launches` started `runs` times (the last start of each kept),
/// then `calls` calls of `sequence` to them; with the processes' memory
/// summed. Startup is the slowest one's: a client starts its servers at
/// once.
fn measure(
    launches: &[&Launch],
    sequence: &[Call<'_>],
    calls: usize,
    runs: usize,
    log: &Path,
) -> Measured {
    let (mut clients, startups): (Vec<Client>, Vec<Duration>) = launches
        .iter()
        .map(|launch| started(launch, runs, log))
        .unzip();
    let latencies = timed_calls(&mut clients, sequence, calls);
    let memory = |field| {
        clients
            .iter()
            .map(|client| proc_status_bytes(client.child.id(), field))
            .sum()
    };
    Measured {
        startup: startups.into_iter().max().unwrap(),
        latencies,
        rss: memory("VmRSS"),
        peak_rss: memory("VmHWM"),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:6.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn us(duration: Duration) -> String {
    format!("{:8.0} µs", duration.as_secs_f64() * 1e6)
}

/// One table row: the server, then both sides' figures and their ratios
/// (Corral's over the original's: below 1 is Corral ahead).
fn row(name: &str, original: &Measured, corral: &Measured) {
    let ratio = |ours: f64, theirs: f64| ours / theirs;
    println!(
        "| {name} | {} / {} ({:.2}x) | {} / {} ({:.2}x) | {} / {} ({:.2}x) | {} / {} ({:.2}x) |",
        us(original.latencies.p50()),
        us(corral.latencies.p50()),
        ratio(
            corral.latencies.p50().as_secs_f64(),
            original.latencies.p50().as_secs_f64()
        ),
        us(original.latencies.pct(90.0)),
        us(corral.latencies.pct(90.0)),
        ratio(
            corral.latencies.pct(90.0).as_secs_f64(),
            original.latencies.pct(90.0).as_secs_f64()
        ),
        ms(original.startup).trim(),
        ms(corral.startup).trim(),
        ratio(corral.startup.as_secs_f64(), original.startup.as_secs_f64()),
        mib(original.rss).trim(),
        mib(corral.rss).trim(),
        ratio(corral.rss as f64, original.rss as f64),
    );
}

/// `REFERENCE_PAUSE_MS`: how long the client waits before each timed call
/// (none: calls back to back).
fn pause_before_each_call() -> Duration {
    Duration::from_millis(env_usize("REFERENCE_PAUSE_MS", 0) as u64)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument is a filter on the
    // server names.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let calls = env_usize("REFERENCE_CALLS", 400);
    let runs = env_usize("REFERENCE_RUNS", 5).max(1);
    let work = tempfile::Builder::new()
        .prefix("reference-bench")
        .tempdir_in(target_dir())
        .unwrap();
    let log = work.path().join("server.log");
    let references: Vec<Reference> = references(work.path())
        .into_iter()
        .filter(|r| filter.is_empty() || filter.iter().any(|f| r.name.contains(f.as_str())))
        .collect();

    let pause = match pause_before_each_call() {
        pause if pause.is_zero() => "back to back".to_owned(),
        pause => format!("each after a pause of {} ms", pause.as_millis()),
    };
    println!(
        "{calls} calls per server ({pause}) after {} to warm up; startup: median of {runs}",
        calls / 10
    );
    println!();
    println!(
        "| server | p50 original / Corral | p90 original / Corral | startup original / Corral | memory (RSS) original / Corral |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for reference in &references {
        let sequence = interleaved(&[&reference.calls]);
        let original = measure(&[&reference.original], &sequence, calls, runs, &log);
        let folder = folder_of(&[reference], work.path());
        let ours = measure(
            &[&corral(&folder, work.path())],
            &sequence,
            calls,
            runs,
            &log,
        );
        row(reference.name, &original, &ours);
    }
    if references.len() > 1 {
        // Every server at once, the same calls in the same order: one
        // Corral process serving every plugin, against one process per
        // original (each call to its own server's).
        let sessions: Vec<&[(&str, Value, &str)]> =
            references.iter().map(|r| r.calls.as_slice()).collect();
        let sequence = interleaved(&sessions);
        let launches: Vec<&Launch> = references.iter().map(|r| &r.original).collect();
        let originals = measure(&launches, &sequence, calls, runs, &log);
        let all: Vec<&Reference> = references.iter().collect();
        let folder = folder_of(&all, work.path());
        let one_corral = corral(&folder, work.path());
        let mut to_corral = sequence.clone();
        for call in &mut to_corral {
            call.0 = 0;
        }
        let ours = measure(&[&one_corral], &to_corral, calls, runs, &log);
        row(&format!("all {} at once", all.len()), &originals, &ours);
        println!();
        println!(
            "peak memory (VmHWM): the originals together {}, Corral with every plugin {}",
            mib(originals.peak_rss).trim(),
            mib(ours.peak_rss).trim()
        );
    }
}
