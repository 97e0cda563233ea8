//! The example plugin `python-github` (plugins/python-github) end to end:
//! the real `corral` over stdio, the plugin built by plugins/build-python,
//! its token given through real secret sources (the environment, and
//! Corral's store through `corral secret set`), and a stand-in for
//! api.github.com on 127.0.0.1, written here, that checks each request's
//! method, path, query and headers exactly, accepts one token only, and
//! answers with response shapes recorded from GitHub's REST API
//! (tests/github/*.json).
//!
//! The test's copy of the manifest adds what a test needs and nothing more:
//! `[env] set` GITHUB_API_URL to the stand-in, and the stand-in's address,
//! listed exactly, in `[http] allow` (Corral reaches a loopback address only
//! when it is listed so). Without that grant the stand-in is out of reach
//! however GITHUB_API_URL is set.
//!
//! Every test scans what Corral answered and printed for the token.

mod support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use support::{Server, first_text, repo_root, target_dir, test_cache_dir};

// ------------------------------------------------------------ the stand-in

/// One request the stand-in received.
#[derive(Clone, Debug)]
struct Request {
    method: String,
    /// The request target as sent: path and query, still encoded.
    target: String,
    /// Every header, names lower-cased, in order.
    headers: Vec<(String, String)>,
}

/// What the stand-in answers to one request target.
#[derive(Clone)]
struct Answer {
    status: u16,
    /// Beside the headers every answer of GitHub's carries.
    headers: Vec<(String, String)>,
    /// A file of tests/github/.
    fixture: &'static str,
}

impl Answer {
    fn ok(fixture: &'static str) -> Answer {
        Answer {
            status: 200,
            headers: Vec::new(),
            fixture,
        }
    }
}

/// A stand-in for api.github.com: it answers the request targets it was
/// given (exactly as encoded), when they carry exactly GitHub's headers
/// and its token; a wrong token gets GitHub's 401. Anything else is a
/// mistake of the plugin's, kept in `mistakes` (and answered 400).
struct StandIn {
    port: u16,
    token: String,
    requests: Arc<Mutex<Vec<Request>>>,
    mistakes: Arc<Mutex<Vec<String>>>,
}

impl StandIn {
    fn start(token: &str, routes: &[(&str, Answer)]) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<HashMap<String, Answer>> = Arc::new(
            routes
                .iter()
                .map(|(target, answer)| (target.to_string(), answer.clone()))
                .collect(),
        );
        let stand_in = StandIn {
            port,
            token: token.to_string(),
            requests: Arc::default(),
            mistakes: Arc::default(),
        };
        let (token, requests, mistakes) = (
            stand_in.token.clone(),
            stand_in.requests.clone(),
            stand_in.mistakes.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (routes, token) = (routes.clone(), token.clone());
                let (requests, mistakes) = (requests.clone(), mistakes.clone());
                std::thread::spawn(move || {
                    let context = Context {
                        port,
                        token: &token,
                        routes: &routes,
                        requests: &requests,
                        mistakes: &mistakes,
                    };
                    if let Err(err) = serve_connection(stream, &context) {
                        mistakes.lock().unwrap().push(format!("connection: {err}"));
                    }
                });
            }
        });
        stand_in
    }

    /// The API's address, for GITHUB_API_URL.
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests received so far, in order.
    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The request targets received so far, in order.
    fn targets(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.target).collect()
    }

    /// Fails if any request was not one GitHub's documentation describes.
    fn assert_no_mistakes(&self) {
        let mistakes = self.mistakes.lock().unwrap();
        assert!(mistakes.is_empty(), "the stand-in saw: {mistakes:#?}");
    }
}

struct Context<'a> {
    port: u16,
    token: &'a str,
    routes: &'a HashMap<String, Answer>,
    requests: &'a Mutex<Vec<Request>>,
    mistakes: &'a Mutex<Vec<String>>,
}

/// Answers the requests of one connection until the client closes it.
fn serve_connection(stream: TcpStream, context: &Context) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut parts = request_line.trim_end().splitn(3, ' ');
        let (method, target, version) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 || line == "\r\n" {
                break;
            }
            let (name, value) = line.trim_end().split_once(':').unwrap_or((&line, ""));
            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        }
        let length: usize = headers
            .iter()
            .find(|(name, _)| name == "content-length")
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body)?;
        let request = Request {
            method,
            target,
            headers,
        };
        context.requests.lock().unwrap().push(request.clone());
        let (status, extra, body) = answer(&request, &version, &body, context);
        respond(&mut stream, status, &extra, &body)?;
    }
}

/// What GitHub answers `request`, or a 400 for a mistake (kept).
fn answer(
    request: &Request,
    version: &str,
    body: &[u8],
    context: &Context,
) -> (u16, Vec<(String, String)>, String) {
    let mut wrong = Vec::new();
    if request.method != "GET" {
        wrong.push(format!("method {}", request.method));
    }
    if version != "HTTP/1.1" {
        wrong.push(format!("version {version}"));
    }
    if !body.is_empty() {
        wrong.push(format!("a body of {} bytes", body.len()));
    }
    // Exactly these headers, each once, with these values (the token's
    // checked below, as GitHub checks it).
    let host = format!("127.0.0.1:{}", context.port);
    let expected = [
        ("host", host.as_str()),
        ("accept", "application/vnd.github+json"),
        ("x-github-api-version", "2022-11-28"),
        ("user-agent", "corral-python-github/0.1"),
    ];
    for (name, value) in expected {
        let values: Vec<&str> = request
            .headers
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .collect();
        if values != [value] {
            wrong.push(format!("{name}: {values:?}, not {value:?}"));
        }
    }
    let authorizations: Vec<&str> = request
        .headers
        .iter()
        .filter(|(key, _)| key == "authorization")
        .map(|(_, value)| value.as_str())
        .collect();
    if authorizations.len() != 1 || !authorizations[0].starts_with("Bearer ") {
        wrong.push("no single `Authorization: Bearer TOKEN`".to_string());
    }
    for (name, _) in &request.headers {
        if name != "authorization" && !expected.iter().any(|(known, _)| known == name) {
            wrong.push(format!("an unexpected header {name}"));
        }
    }
    if !wrong.is_empty() {
        let mistake = format!(
            "{} {}: {}",
            request.method,
            request.target,
            wrong.join("; ")
        );
        context.mistakes.lock().unwrap().push(mistake.clone());
        return (400, Vec::new(), json!({ "message": mistake }).to_string());
    }
    if authorizations[0] != format!("Bearer {}", context.token) {
        return (401, Vec::new(), fixture("bad-credentials.json"));
    }
    match context.routes.get(&request.target) {
        Some(answer) => (
            answer.status,
            answer.headers.clone(),
            fixture(answer.fixture),
        ),
        None => {
            context.mistakes.lock().unwrap().push(format!(
                "{} {}: no such route",
                request.method, request.target
            ));
            (404, Vec::new(), fixture("not-found.json"))
        }
    }
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    extra: &[(String, String)],
    body: &str,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        _ => "Other",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=utf-8\r\n\
         Content-Length: {}\r\nX-GitHub-Api-Version-Selected: 2022-11-28\r\n\
         X-GitHub-Media-Type: github.v3; format=json\r\n",
        body.len()
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    // The rate limit headers every answer has, unless this one has its own.
    if !extra.iter().any(|(name, _)| name == "x-ratelimit-limit") {
        head.push_str(
            "x-ratelimit-limit: 5000\r\nx-ratelimit-remaining: 4999\r\nx-ratelimit-reset: 1798761600\r\n\
             x-ratelimit-used: 1\r\nx-ratelimit-resource: core\r\n",
        );
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

/// The text of tests/github/NAME.
fn fixture(name: &str) -> String {
    let path = repo_root().join("tests/github").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn fixture_json(name: &str) -> Value {
    serde_json::from_str(&fixture(name)).unwrap()
}

// ---------------------------------------------------------------- corral

/// A token shaped like GitHub's (`ghp_` and more), different in every
/// test, so that a scan finds any copy, and holding the marker every test
/// secret holds (`scripts/check-captures` looks for it in everything the
/// suite's servers wrote).
fn new_token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(
        "ghp_corral-test-secret-{:016x}{:08x}{:012x}",
        nanos,
        std::process::id(),
        n + 0xc0ffee
    )
}

/// The built plugin (plugins/build-python, under plugins/build's lock, as
/// tests/reference.rs builds it), compiled into the tests' cache once, so
/// that the tests' servers, started at once, do not each compile it.
fn plugin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            std::fs::create_dir_all(target_dir()).unwrap();
            let output = support::user_command("flock")
                .arg(target_dir().join(".plugins-build.lock"))
                .arg(repo_root().join("plugins/build-python"))
                .output()
                .expect("running flock plugins/build-python");
            assert!(
                output.status.success(),
                "plugins/build-python failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let wasm = target_dir().join("plugins/python-github.wasm");
            let output = Command::new(env!("CARGO_BIN_EXE_corral"))
                .arg("compile")
                .arg(&wasm)
                .env("CORRAL_CACHE_DIR", test_cache_dir())
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "corral compile {}:\n{}",
                wasm.display(),
                String::from_utf8_lossy(&output.stderr)
            );
            wasm
        })
        .clone()
}

/// A plugin folder, a store of secrets and a token, for one test.
struct Setup {
    root: tempfile::TempDir,
}

impl Setup {
    /// The plugin with the manifest it is built with, `[http] allow` and
    /// `[env]` changed by `grant` (which gets the manifest's text).
    fn new(grant: impl FnOnce(String) -> String) -> Setup {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("plugins");
        std::fs::create_dir(&dir).unwrap();
        let wasm = plugin();
        std::fs::copy(&wasm, dir.join("python-github.wasm")).unwrap();
        let shipped = std::fs::read_to_string(wasm.with_extension("toml")).unwrap();
        std::fs::write(dir.join("python-github.toml"), grant(shipped)).unwrap();
        Setup { root }
    }

    /// The manifest as built, with the stand-in listed exactly beside
    /// api.github.com, and GITHUB_API_URL pointing at it.
    fn for_stand_in(stand_in: &StandIn) -> Setup {
        let url = stand_in.url();
        let port = stand_in.port;
        Setup::new(move |manifest| {
            let allow = "allow = [\"api.github.com\"]";
            assert!(manifest.contains(allow), "{manifest}");
            let manifest = manifest.replace(
                allow,
                &format!("allow = [\"api.github.com\", \"127.0.0.1:{port}\"]"),
            );
            format!("{manifest}\n[env]\nset = {{ GITHUB_API_URL = \"{url}\" }}\n")
        })
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("plugins")
    }

    /// Corral's own store of secrets for this test (never the user's).
    fn store(&self) -> PathBuf {
        self.root.path().join("config/corral/secrets.toml")
    }

    /// `corral secret set python-github GITHUB_TOKEN`, the value piped in
    /// as a user would (`echo "$TOKEN" | ...`).
    fn secret_set(&self, token: &str) -> String {
        let mut child = Command::new(env!("CARGO_BIN_EXE_corral"))
            .args(["secret", "set", "python-github", "GITHUB_TOKEN"])
            .env("CORRAL_SECRETS_FILE", self.store())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(format!("{token}\n").as_bytes()).unwrap();
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "corral secret set: {printed}");
        printed
    }

    /// `corral serve` on the folder, its secrets from `sources` with
    /// `env` besides, initialized.
    fn serve(&self, sources: &str, env: &[(&str, &str)]) -> Server {
        let store = self.store();
        let mut all = vec![("CORRAL_SECRETS_FILE", store.to_str().unwrap())];
        all.extend_from_slice(env);
        let mut server = Server::start_with_env(&self.dir(), &["--secrets", sources], &all);
        server.initialize("2025-06-18");
        server
    }
}

/// Fails if `token` is anywhere in what the server answered (`answers`,
/// its notifications) or printed, or if Corral had to redact it from what
/// the plugin sent: the plugin itself never sends it out. Waits first for
/// the audit lines of the `calls` calls the plugin ran (stderr is read on
/// another thread); an audit line says `redacted=N` when N > 0.
fn assert_token_kept(server: &Server, answers: &[&Value], calls: usize, token: &str) {
    support::wait_for_stderr(server, " call plugin=python-github tool=", calls);
    let mut all = server.stderr();
    for answer in answers {
        all.push_str(&answer.to_string());
    }
    for notification in &server.notifications {
        all.push_str(&notification.to_string());
    }
    assert!(!all.contains(token), "the token got out:\n{all}");
    assert!(!all.contains("redacted"), "Corral had to redact:\n{all}");
}

fn assert_error_containing(result: &Value, phrases: &[&str]) {
    assert_eq!(result["isError"], true, "{result}");
    let text = first_text(result);
    for phrase in phrases {
        assert!(text.contains(phrase), "{phrase:?} is not in {text:?}");
    }
}

/// The search the tests make, and its request target as GitHub's
/// documentation has it (every reserved character of `q` percent-encoded).
const QUERY: &str = "repo:octocat/Hello-World is:issue bug";
const SEARCH_TARGET: &str =
    "/search/issues?q=repo%3Aoctocat%2FHello-World%20is%3Aissue%20bug&per_page=2&page=1";
const ISSUE_TARGET: &str = "/repos/octocat/Hello-World/issues/1347";
const COMMENTS_TARGET: &str = "/repos/octocat/Hello-World/issues/1347/comments?per_page=100";

// ------------------------------------------------------------------ tests

#[test]
fn search_issues_sends_githubs_request_and_answers_text_and_structure() {
    let token = new_token();
    let stand_in = StandIn::start(&token, &[(SEARCH_TARGET, Answer::ok("search.json"))]);
    let setup = Setup::for_stand_in(&stand_in);
    let mut server = setup.serve(
        "env:CORRAL_SECRET_",
        &[("CORRAL_SECRET_GITHUB_TOKEN", &token)],
    );

    let tools = server.all_tools();
    let search = tools
        .iter()
        .find(|tool| tool["name"] == "search_issues")
        .unwrap();
    assert_eq!(search["annotations"]["readOnlyHint"], true, "{search}");
    assert_eq!(search["annotations"]["openWorldHint"], true, "{search}");
    assert_eq!(
        search["inputSchema"]["required"],
        json!(["query"]),
        "{search}"
    );
    assert_eq!(
        search["inputSchema"]["properties"]["per_page"]["maximum"],
        100
    );

    let result = server.call("search_issues", json!({ "query": QUERY, "per_page": 2 }));
    assert_eq!(result["isError"], false, "{result}");
    stand_in.assert_no_mistakes();
    let requests = stand_in.requests();
    assert_eq!(stand_in.targets(), [SEARCH_TARGET]);
    assert!(
        requests[0]
            .headers
            .contains(&("authorization".to_string(), format!("Bearer {token}"))),
        "{requests:?}"
    );

    // The structure, field by field from the recorded answer.
    let recorded = fixture_json("search.json");
    let structured = &result["structuredContent"];
    assert_eq!(structured["total_count"], recorded["total_count"]);
    assert_eq!(structured["incomplete_results"], false);
    assert_eq!(
        (structured["page"].clone(), structured["per_page"].clone()),
        (json!(1), json!(2))
    );
    let items = structured["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{structured}");
    assert_eq!(
        items[0],
        json!({
            "repository": "octocat/Hello-World", "number": 1347, "title": "Found a bug",
            "state": "open", "pull_request": false, "author": "octocat", "labels": ["bug"],
            "comments": 2, "created_at": "2011-04-22T13:33:48Z",
            "updated_at": "2011-04-22T13:33:48Z", "closed_at": null,
            "url": "https://github.com/octocat/Hello-World/issues/1347",
        })
    );
    assert_eq!(items[1]["repository"], "octocat/Spoon-Knife");
    assert_eq!(items[1]["pull_request"], true);
    assert_eq!(items[1]["state"], "closed");

    assert_eq!(
        first_text(&result),
        "57 results for 'repo:octocat/Hello-World is:issue bug'; 1 to 2 on page 1:\n\
         - octocat/Hello-World#1347 Found a bug (issue, open; by octocat; 2 comments; labels: bug)\n  \
         https://github.com/octocat/Hello-World/issues/1347\n\
         - octocat/Spoon-Knife#29 Fix the bug in the fork button (pull request, closed; by hubot; 0 comments)\n  \
         https://github.com/octocat/Spoon-Knife/pull/29\n\
         More on page 2."
    );
    assert_token_kept(&server, &[&result], 1, &token);
}

#[test]
fn get_issue_reads_the_issue_then_its_comments_with_a_token_from_corrals_store() {
    let token = new_token();
    let stand_in = StandIn::start(
        &token,
        &[
            (ISSUE_TARGET, Answer::ok("issue.json")),
            (COMMENTS_TARGET, Answer::ok("comments.json")),
        ],
    );
    let setup = Setup::for_stand_in(&stand_in);
    let printed = setup.secret_set(&token);
    assert!(!printed.contains(&token), "{printed}");
    let mut server = setup.serve("store", &[]);

    let args = json!({ "owner": "octocat", "repo": "Hello-World", "issue_number": 1347 });
    let result = server.call("get_issue", args);
    assert_eq!(result["isError"], false, "{result}");
    stand_in.assert_no_mistakes();
    assert_eq!(stand_in.targets(), [ISSUE_TARGET, COMMENTS_TARGET]);

    let structured = &result["structuredContent"];
    let issue = &structured["issue"];
    assert_eq!(issue["number"], 1347);
    assert_eq!(issue["title"], "Found a bug");
    assert_eq!(issue["body"], "I'm having a problem with this.");
    assert_eq!(issue["assignees"], json!(["octocat"]));
    assert_eq!(issue["labels"], json!(["bug"]));
    assert_eq!(issue["locked"], true);
    assert_eq!(issue["repository"], "octocat/Hello-World");
    let comments = structured["comments"].as_array().unwrap();
    let recorded = fixture_json("comments.json");
    assert_eq!(comments.len(), 2);
    for (comment, recorded) in comments.iter().zip(recorded.as_array().unwrap()) {
        assert_eq!(comment["id"], recorded["id"]);
        assert_eq!(comment["body"], recorded["body"]);
        assert_eq!(comment["author"], recorded["user"]["login"]);
        assert_eq!(comment["url"], recorded["html_url"]);
    }
    let text = first_text(&result);
    for line in [
        "Issue octocat/Hello-World#1347: Found a bug",
        "open; opened by octocat on 2011-04-22T13:33:48Z; labels: bug; assignees: octocat; 2 comments",
        "https://github.com/octocat/Hello-World/issues/1347\n\nI'm having a problem with this.",
        "--- hubot on 2011-04-14T16:00:49Z (https://github.com/octocat/Hello-World/issues/1347#issuecomment-1):\nMe too",
        "--- octocat on 2011-04-15T09:30:00Z (https://github.com/octocat/Hello-World/issues/1347#issuecomment-2):\nFixed in the next release.",
    ] {
        assert!(text.contains(line), "{line:?} is not in:\n{text}");
    }

    // Without its comments: one request.
    let args = json!({
        "owner": "octocat", "repo": "Hello-World", "issue_number": 1347, "include_comments": false,
    });
    let alone = server.call("get_issue", args);
    assert_eq!(alone["isError"], false, "{alone}");
    assert!(
        alone["structuredContent"].get("comments").is_none(),
        "{alone}"
    );
    assert_eq!(
        stand_in.targets(),
        [ISSUE_TARGET, COMMENTS_TARGET, ISSUE_TARGET]
    );
    stand_in.assert_no_mistakes();
    assert_token_kept(&server, &[&result, &alone], 2, &token);
}

#[test]
fn path_segments_are_percent_encoded() {
    let token = new_token();
    // GitHub has no such repository; the stand-in answers as GitHub
    // would (404) to the encoded path, and to nothing else.
    let target = "/repos/octo%20cat/Hello%2FWorld%3Fx%3D1/issues/7";
    let not_found = Answer {
        status: 404,
        headers: Vec::new(),
        fixture: "not-found.json",
    };
    let stand_in = StandIn::start(&token, &[(target, not_found)]);
    let setup = Setup::for_stand_in(&stand_in);
    let mut server = setup.serve(
        "env:CORRAL_SECRET_",
        &[("CORRAL_SECRET_GITHUB_TOKEN", &token)],
    );
    let args = json!({ "owner": "octo cat", "repo": "Hello/World?x=1", "issue_number": 7 });
    let result = server.call("get_issue", args);
    assert_error_containing(
        &result,
        &["not found on GitHub: octo cat/Hello/World?x=1#7 (Not Found), status 404"],
    );
    assert_eq!(stand_in.targets(), [target]);
    stand_in.assert_no_mistakes();
    assert_token_kept(&server, &[&result], 1, &token);
}

#[test]
fn a_wrong_token_is_a_clear_error_that_does_not_hold_it() {
    let (right, wrong) = (new_token(), new_token());
    let stand_in = StandIn::start(&right, &[(SEARCH_TARGET, Answer::ok("search.json"))]);
    let setup = Setup::for_stand_in(&stand_in);
    let mut server = setup.serve(
        "env:CORRAL_SECRET_",
        &[("CORRAL_SECRET_GITHUB_TOKEN", &wrong)],
    );
    let result = server.call("search_issues", json!({ "query": QUERY, "per_page": 2 }));
    assert_error_containing(
        &result,
        &[
            "GitHub refused the token (Bad credentials), status 401",
            "GITHUB_TOKEN is wrong, expired or revoked",
            "corral secret set python-github GITHUB_TOKEN",
        ],
    );
    assert!(result.get("structuredContent").is_none(), "{result}");
    // The wrong token was sent (and refused), and went no further.
    stand_in.assert_no_mistakes();
    let requests = stand_in.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]
            .headers
            .contains(&("authorization".to_string(), format!("Bearer {wrong}")))
    );
    assert_token_kept(&server, &[&result], 1, &wrong);
}

#[test]
fn githubs_refusals_become_clear_errors() {
    let token = new_token();
    let rate_limited = Answer {
        status: 403,
        headers: [
            ("x-ratelimit-limit", "30"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-used", "30"),
            ("x-ratelimit-reset", "1798761600"),
            ("x-ratelimit-resource", "search"),
        ]
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .to_vec(),
        fixture: "rate-limited.json",
    };
    let not_found = Answer {
        status: 404,
        headers: Vec::new(),
        fixture: "not-found.json",
    };
    let invalid = Answer {
        status: 422,
        headers: Vec::new(),
        fixture: "validation-failed.json",
    };
    let limited_target = "/search/issues?q=is%3Aissue%20bug&per_page=30&page=1";
    let invalid_target = "/search/issues?q=repo%3Anobody%2Fnothing&per_page=30&page=1";
    let missing_target = "/repos/octocat/Hello-World/issues/999999";
    let stand_in = StandIn::start(
        &token,
        &[
            (limited_target, rate_limited),
            (invalid_target, invalid),
            (missing_target, not_found),
        ],
    );
    let setup = Setup::for_stand_in(&stand_in);
    let mut server = setup.serve(
        "env:CORRAL_SECRET_",
        &[("CORRAL_SECRET_GITHUB_TOKEN", &token)],
    );

    let limited = server.call("search_issues", json!({ "query": "is:issue bug" }));
    assert_error_containing(
        &limited,
        &[
            "GitHub's rate limit is exhausted (API rate limit exceeded for user ID 1.",
            "status 403: 30 of 30 requests of the search budget used; it resets at 2027-01-01 00:00:00 UTC",
        ],
    );
    let invalid = server.call("search_issues", json!({ "query": "repo:nobody/nothing" }));
    assert_error_containing(
        &invalid,
        &[
            "GitHub rejected the search 'repo:nobody/nothing' (Validation Failed), status 422: \
             The listed users and repositories cannot be searched",
        ],
    );
    let missing = server.call(
        "get_issue",
        json!({ "owner": "octocat", "repo": "Hello-World", "issue_number": 999999 }),
    );
    assert_error_containing(
        &missing,
        &["not found on GitHub: octocat/Hello-World#999999 (Not Found), status 404"],
    );
    assert_eq!(
        stand_in.targets(),
        [limited_target, invalid_target, missing_target]
    );
    stand_in.assert_no_mistakes();
    assert_token_kept(&server, &[&limited, &invalid, &missing], 3, &token);
}

#[test]
fn a_missing_token_names_the_command_that_sets_it() {
    let token = new_token();
    let stand_in = StandIn::start(&token, &[(SEARCH_TARGET, Answer::ok("search.json"))]);
    let setup = Setup::for_stand_in(&stand_in);
    // Corral's store (this test's own, empty) alone: the environment of
    // whoever runs the tests may hold a CORRAL_SECRET_GITHUB_TOKEN.
    let mut server = setup.serve("store", &[]);
    // Listed all the same.
    let mut names = server.tool_names();
    names.sort();
    assert_eq!(names, ["get_issue", "search_issues"]);
    let result = server.call("search_issues", json!({ "query": QUERY, "per_page": 2 }));
    assert_error_containing(
        &result,
        &[
            "GITHUB_TOKEN",
            "`corral secret set python-github GITHUB_TOKEN`",
        ],
    );
    assert!(stand_in.requests().is_empty(), "{:?}", stand_in.requests());

    // Set, the next call reads it: no restart.
    setup.secret_set(&token);
    let found = server.call("search_issues", json!({ "query": QUERY, "per_page": 2 }));
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(stand_in.targets(), [SEARCH_TARGET]);
    stand_in.assert_no_mistakes();
    assert_token_kept(&server, &[&result, &found], 1, &token);
}

#[test]
fn the_api_url_does_not_widen_the_http_grant() {
    let token = new_token();
    let stand_in = StandIn::start(&token, &[(SEARCH_TARGET, Answer::ok("search.json"))]);
    let url = stand_in.url();
    // GITHUB_API_URL at the stand-in, the grant as shipped.
    let setup = Setup::new(move |manifest| {
        format!("{manifest}\n[env]\nset = {{ GITHUB_API_URL = \"{url}\" }}\n")
    });
    let mut server = setup.serve(
        "env:CORRAL_SECRET_",
        &[("CORRAL_SECRET_GITHUB_TOKEN", &token)],
    );
    let result = server.call("search_issues", json!({ "query": QUERY, "per_page": 2 }));
    assert_error_containing(
        &result,
        &[&format!(
            "the sandbox refused the request to 127.0.0.1:{}: the plugin's manifest \
             (python-github.toml) must list it in its [http] allow grant",
            stand_in.port
        )],
    );
    assert!(stand_in.requests().is_empty(), "{:?}", stand_in.requests());
    assert_token_kept(&server, &[&result], 1, &token);
}

/// github.py's own tests (test_github.py), run with the machine's python3
/// as the other Python examples' are. -B: no __pycache__ in the tree.
#[test]
fn the_plugins_unit_tests_pass() {
    let output = Command::new("python3")
        .args([
            "-B",
            "-m",
            "unittest",
            "discover",
            "-s",
            "plugins/python-github",
        ])
        .args(["-p", "test_*.py"])
        .current_dir(repo_root())
        .output()
        .expect("python3");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{printed}");
    assert!(printed.contains("OK"), "{printed}");
}
