//! Corral as an OAuth 2.1 resource server (issue 43), end to end, against a
//! real authorization server: npm `oidc-provider` on loopback
//! (tests/oidc/provider.mjs, started by tests/support/oidc.rs), which issues
//! JWT access tokens for the resource a client names.
//!
//! - The official TypeScript and Python clients complete the real flow
//!   knowing only Corral's URL: its 401 names its protected resource
//!   metadata, which names the issuer; the SDK registers itself, the user
//!   signs in and consents (programmatically, through the provider's pages),
//!   and the code is exchanged with PKCE; or a pre-registered client uses
//!   client_credentials. Both protocol eras.
//! - Scopes decide what a caller reaches: a tool whose plugin's `[access]`
//!   needs `files:write` is hidden from a token without it and refused with
//!   403 insufficient_scope naming the scope; the SDKs step up.
//! - `[state] per = "principal"` gives each caller a store of their own;
//!   without it callers share one.
//! - Two replicas behind nginx accept the same tokens and keep a
//!   principal's state and tasks together (Redis), out of other callers' reach.

#[path = "support/http.rs"]
mod http;
#[path = "support/nginx.rs"]
mod nginx;
#[path = "support/redis.rs"]
mod redis;
mod support;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use http::{Client, HttpServer, Response};
use nginx::{Nginx, free_port};
use redis::RedisServer;
use support::oidc::{Issuer, OidcClient, decode_claims};
use support::{conformance_folder, example, folder_with, repo_root, run_setup, write_file};

/// The scope every caller needs (`--oauth-scope`).
const BASE_SCOPE: &str = "mcp";

/// A `corral serve --http` protecting its endpoint with `issuer`'s tokens.
struct Protected {
    server: HttpServer,
    /// Its canonical URI (`--resource`): `http://127.0.0.1:PORT/mcp`.
    resource: String,
}

impl Protected {
    /// Serves `folder` on a free loopback port, trusting `issuer`, with
    /// `extra` arguments.
    fn start(folder: &Path, issuer: &Issuer, extra: &[&str]) -> Protected {
        let port = free_port();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        Protected {
            server: start_replica(folder, port, &resource, issuer, extra),
            resource,
        }
    }

    /// A raw HTTP client presenting `token`.
    fn client(&self, token: &str) -> Client {
        with_token(self.server.client(), token)
    }
}

/// One `corral serve` on `port` (0 for any) whose resource is `resource`.
fn start_replica(
    folder: &Path,
    port: u16,
    resource: &str,
    issuer: &Issuer,
    extra: &[&str],
) -> HttpServer {
    let mut args = vec![
        "--resource",
        resource,
        "--oauth-issuer",
        issuer.url(),
        "--oauth-scope",
        BASE_SCOPE,
    ];
    args.extend_from_slice(extra);
    HttpServer::start_on(folder, &format!("127.0.0.1:{port}"), &args, &[])
}

fn with_token(mut client: Client, token: &str) -> Client {
    client
        .default_headers
        .push(("Authorization".into(), format!("Bearer {token}")));
    client
}

/// The value of parameter `name` in a `WWW-Authenticate: Bearer ...` challenge.
fn challenge_param(challenge: &str, name: &str) -> Option<String> {
    let start = challenge.find(&format!("{name}=\""))? + name.len() + 2;
    let end = challenge[start..].find('"')?;
    Some(challenge[start..start + end].to_string())
}

fn scopes_of(claims: &Value) -> Vec<String> {
    claims["scope"]
        .as_str()
        .unwrap_or_default()
        .split(' ')
        .map(String::from)
        .collect()
}

// ---------------------------------------------------------------------------
// The official clients' scripts (tests/clients/ts_oauth.mjs, python_oauth.py)

fn script(name: &str) -> String {
    repo_root()
        .join("tests/clients")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn node_prefix() -> String {
    static DONE: OnceLock<String> = OnceLock::new();
    DONE.get_or_init(|| run_setup("tests/clients/setup-node")[0].clone())
        .clone()
}

fn python_program() -> String {
    static DONE: OnceLock<String> = OnceLock::new();
    DONE.get_or_init(|| run_setup("tests/clients/setup-python")[0].clone())
        .clone()
}

/// Runs a client script and returns the JSON line it printed last.
fn run_client(program: &str, args: &[&str], issuer: &Issuer) -> Value {
    let output = Command::new(program)
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|err| panic!("running {program}: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{program} {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}\nprovider:\n{}",
        issuer.stderr()
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {stdout}\nstderr:\n{stderr}"))
}

/// The official TypeScript client doing what `spec` says (ts_oauth.mjs).
fn typescript(spec: &Value, issuer: &Issuer) -> Value {
    let prefix = node_prefix();
    run_client(
        "node",
        &[&script("ts_oauth.mjs"), &prefix, &spec.to_string()],
        issuer,
    )
}

/// The official Python client doing what `spec` says (python_oauth.py).
fn python(spec: &Value, issuer: &Issuer) -> Value {
    run_client(
        &python_program(),
        &[&script("python_oauth.py"), &spec.to_string()],
        issuer,
    )
}

/// A client script's spec: sign in as `user` with the authorization code
/// flow, in `mode`, and make `calls`.
fn code_flow(resource: &str, mode: &str, user: &str, calls: Value) -> Value {
    json!({ "url": resource, "mode": mode, "flow": "code", "user": user, "calls": calls })
}

/// A client script's spec: the client_credentials grant for `client`.
fn client_credentials(resource: &str, mode: &str, client: &OidcClient, issuer: &Issuer) -> Value {
    json!({
        "url": resource, "mode": mode, "flow": "client_credentials",
        "client_id": client.id, "client_secret": client.secret, "scope": client.scope,
        "issuer": issuer.url(), "calls": add_call(),
    })
}

/// Checks that every token the client got is the issuer's, for Corral's
/// resource, for `subject`.
fn assert_tokens_for(outcome: &Value, issuer: &Issuer, resource: &str, subject: &str) {
    let tokens = outcome["tokens"].as_array().unwrap();
    assert!(!tokens.is_empty(), "no token: {outcome}");
    for claims in tokens {
        assert_eq!(claims["iss"], issuer.url(), "{outcome}");
        assert_eq!(claims["aud"], resource, "{outcome}");
        assert_eq!(claims["sub"], subject, "{outcome}");
        assert!(
            scopes_of(claims).contains(&BASE_SCOPE.to_string()),
            "{outcome}"
        );
    }
}

/// Checks a code flow's outcome: the SDK registered itself once, asked the
/// authorization server for Corral's resource with PKCE (S256) and the base
/// scope from Corral's challenge, the user's tokens followed, and the
/// session was of the era asked for.
fn assert_signed_in(outcome: &Value, issuer: &Issuer, resource: &str, user: &str, mode: &str) {
    assert_eq!(outcome["registrations"], 1, "{outcome}");
    let asked = &outcome["authorizations"][0];
    assert_eq!(asked["resource"], resource, "{outcome}");
    assert_eq!(asked["code_challenge_method"], "S256", "{outcome}");
    assert!(asked["code_challenge"].is_string(), "{outcome}");
    let scope = asked["scope"].as_str().unwrap_or_default();
    assert!(scope.split(' ').any(|s| s == BASE_SCOPE), "{outcome}");
    assert_tokens_for(outcome, issuer, resource, user);
    assert_era(outcome, mode);
}

fn assert_era(outcome: &Value, mode: &str) {
    let version = outcome["protocolVersion"].as_str().unwrap_or_default();
    if mode == "legacy" {
        assert!(
            version.starts_with("202") && !version.starts_with("2026"),
            "{outcome}"
        );
    } else {
        assert_eq!(version, mode, "{outcome}");
    }
}

/// Checks that the client listed calc's tools and that `add` said 5.
fn assert_added(outcome: &Value) {
    let tools = outcome["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("add")), "{outcome}");
    let result = &outcome["calls"][0]["result"];
    assert_eq!(result["isError"], false, "{outcome}");
    assert_eq!(result["content"][0]["text"], "5", "{outcome}");
}

fn add_call() -> Value {
    json!([{ "name": "add", "arguments": { "a": 2, "b": 3 } }])
}

// ---------------------------------------------------------------------------
// The authorization server itself, and what Corral tells a client

#[test]
fn the_test_issuer_grants_jwt_access_tokens_for_the_resource_asked_for() {
    let alice = OidcClient::new("alice-agent", "mcp files:read");
    let issuer = Issuer::start(std::slice::from_ref(&alice));
    let token = issuer.token(&alice, "mcp files:read", "http://127.0.0.1:1/mcp");
    let claims = decode_claims(&token);
    assert_eq!(claims["aud"], "http://127.0.0.1:1/mcp");
    assert_eq!(claims["iss"], issuer.url());
    assert_eq!(claims["sub"], "alice-agent");
    assert_eq!(claims["scope"], "mcp files:read");
    assert_eq!(support::oidc::decode_header(&token)["kid"], issuer.kid());
    assert!(issuer.signed_by_issuer(&token));
    let crafted = issuer.sign(&issuer.header(), &claims);
    assert!(issuer.signed_by_issuer(&crafted));
    assert!(!issuer.signed_by_issuer(&support::oidc::unsigned(&claims)));
    let (status, refused) = issuer.request_token(
        &alice.id,
        &alice.secret,
        "mcp files:write",
        "http://127.0.0.1:1/mcp",
    );
    assert_eq!(status, 400, "{refused}");
}

#[test]
fn a_request_without_a_token_is_told_where_to_find_the_issuer() {
    let agent = OidcClient::new("door-agent", BASE_SCOPE);
    let issuer = Issuer::start(std::slice::from_ref(&agent));
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let protected = Protected::start(folder.path(), &issuer, &[]);
    let mut client = protected.server.client();
    let refused = client.stateless("tools/list", json!({}));
    assert_eq!(refused.status, 401, "{}", refused.text());
    let challenge = refused
        .header("www-authenticate")
        .expect("a 401 carries WWW-Authenticate")
        .to_string();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    let metadata_url = challenge_param(&challenge, "resource_metadata")
        .unwrap_or_else(|| panic!("no resource_metadata in {challenge}"));
    let origin = format!("http://{}", protected.server.addr);
    let path = metadata_url
        .strip_prefix(&origin)
        .unwrap_or_else(|| panic!("{metadata_url} is not on {origin}"));
    for path in [path, "/.well-known/oauth-protected-resource"] {
        let response = client.send("GET", path, &[], b"");
        assert_eq!(response.status, 200, "{path}: {}", response.text());
        let metadata: Value = serde_json::from_slice(&response.body).unwrap();
        assert_eq!(metadata["resource"], protected.resource, "{metadata}");
        assert_eq!(
            metadata["authorization_servers"],
            json!([issuer.url()]),
            "{metadata}"
        );
        assert_eq!(
            metadata["bearer_methods_supported"],
            json!(["header"]),
            "{metadata}"
        );
        assert!(
            metadata["scopes_supported"]
                .as_array()
                .is_some_and(|scopes| scopes.contains(&json!(BASE_SCOPE))),
            "{metadata}"
        );
    }
    // A token the issuer gave for this resource opens the door; one of
    // another issuer does not.
    let trusted = issuer.token(&agent, BASE_SCOPE, &protected.resource);
    let response = protected
        .client(&trusted)
        .stateless("tools/list", json!({}));
    assert_eq!(response.status, 200, "{}", response.text());
    assert!(tool_names(&response.answer()).contains(&"add".to_string()));
    let other = Issuer::start(std::slice::from_ref(&agent));
    let foreign = other.token(&agent, BASE_SCOPE, &protected.resource);
    let response = protected
        .client(&foreign)
        .stateless("tools/list", json!({}));
    assert_eq!(response.status, 401, "{}", response.text());
}

// ---------------------------------------------------------------------------
// The official clients' flows

/// An official client (`run`: `typescript` or `python`) signs `user` in
/// with PKCE, knowing only Corral's URL, and calls `add` in `era`.
fn signs_in_with_pkce(run: fn(&Value, &Issuer) -> Value, era: &str, user: &str) {
    let issuer = Issuer::start(&[]);
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let protected = Protected::start(folder.path(), &issuer, &[]);
    let spec = code_flow(&protected.resource, era, user, add_call());
    let outcome = run(&spec, &issuer);
    assert_signed_in(&outcome, &issuer, &protected.resource, user, era);
    assert_added(&outcome);
}

/// An official client (`run`) of the pre-registered `client_id` gets its
/// tokens with client_credentials and calls `add`, in both eras.
fn gets_a_token_with_client_credentials(run: fn(&Value, &Issuer) -> Value, client_id: &str) {
    let agent = OidcClient::new(client_id, BASE_SCOPE);
    let issuer = Issuer::start(std::slice::from_ref(&agent));
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let protected = Protected::start(folder.path(), &issuer, &[]);
    for mode in ["legacy", "2026-07-28"] {
        let spec = client_credentials(&protected.resource, mode, &agent, &issuer);
        let outcome = run(&spec, &issuer);
        assert_eq!(outcome["registrations"], 0, "{outcome}");
        assert_eq!(outcome["authorizations"], json!([]), "{outcome}");
        assert_tokens_for(&outcome, &issuer, &protected.resource, &agent.id);
        assert_era(&outcome, mode);
        assert_added(&outcome);
    }
}

#[test]
fn the_official_typescript_client_signs_in_with_pkce_and_calls_a_tool_in_a_legacy_session() {
    signs_in_with_pkce(typescript, "legacy", "alice");
}

#[test]
fn the_official_typescript_client_signs_in_with_pkce_and_calls_a_tool_statelessly() {
    signs_in_with_pkce(typescript, "2026-07-28", "bob");
}

#[test]
fn the_official_typescript_client_gets_a_token_with_client_credentials_in_both_eras() {
    gets_a_token_with_client_credentials(typescript, "ts-agent");
}

#[test]
fn the_official_python_client_signs_in_with_pkce_and_calls_a_tool_in_a_legacy_session() {
    signs_in_with_pkce(python, "legacy", "bob");
}

#[test]
fn the_official_python_client_signs_in_with_pkce_and_calls_a_tool_statelessly() {
    signs_in_with_pkce(python, "2026-07-28", "alice");
}

#[test]
fn the_official_python_client_gets_a_token_with_client_credentials_in_both_eras() {
    gets_a_token_with_client_credentials(python, "py-agent");
}

// ---------------------------------------------------------------------------
// Scopes per tool

/// The filesystem example serving `scratch` read-write as /files, whose
/// `write_file` needs `files:write` (`[access]`).
fn files_folder(scratch: &Path) -> tempfile::TempDir {
    let folder = folder_with(&[("filesystem.wasm", &example("filesystem"))]);
    let manifest = format!(
        "[[dirs]]\nhost = {:?}\nguest = \"/files\"\nmode = \"rw\"\n\n\
         [access]\ntools = {{ write_file = [\"files:write\"] }}\n",
        scratch.to_str().unwrap()
    );
    write_file(folder.path(), "filesystem.toml", &manifest);
    folder
}

fn tool_names(answer: &Value) -> Vec<String> {
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {answer}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

/// Checks a 403 insufficient_scope naming `scope`.
fn assert_insufficient_scope(response: &Response, scope: &str) {
    assert_eq!(response.status, 403, "{}", response.text());
    let challenge = response
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("a 403 without WWW-Authenticate: {response:?}"));
    assert_eq!(
        challenge_param(challenge, "error").as_deref(),
        Some("insufficient_scope"),
        "{challenge}"
    );
    let named = challenge_param(challenge, "scope").unwrap_or_default();
    assert!(named.split(' ').any(|s| s == scope), "{challenge}");
}

#[test]
fn a_token_without_files_write_neither_sees_nor_calls_the_writing_tool_and_one_with_it_does() {
    let reader = OidcClient::new("reader", "mcp files:read");
    let writer = OidcClient::new("writer", "mcp files:read files:write");
    let issuer = Issuer::start(&[reader.clone(), writer.clone()]);
    let scratch = tempfile::tempdir().unwrap();
    let folder = files_folder(scratch.path());
    let protected = Protected::start(folder.path(), &issuer, &[]);
    let write = |path: &str| json!({ "name": "write_file", "arguments": { "path": path, "content": "written" } });

    let reading = issuer.token(&reader, "mcp files:read", &protected.resource);
    // Stateless.
    let mut client = protected.client(&reading);
    let listed = client.stateless("tools/list", json!({}));
    assert_eq!(listed.status, 200, "{}", listed.text());
    let names = tool_names(&listed.answer());
    assert!(names.contains(&"read_text_file".to_string()), "{names:?}");
    assert!(!names.contains(&"write_file".to_string()), "{names:?}");
    let refused = client.stateless("tools/call", write("/files/stateless.txt"));
    assert_insufficient_scope(&refused, "files:write");
    // In a legacy session.
    let mut session = protected.client(&reading);
    session.initialize("2025-11-25");
    let names = tool_names(&session.legacy("tools/list", json!({})).answer());
    assert!(!names.contains(&"write_file".to_string()), "{names:?}");
    let refused = session.legacy("tools/call", write("/files/legacy.txt"));
    assert_insufficient_scope(&refused, "files:write");
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        0,
        "a refused call wrote nothing"
    );

    let writing = issuer.token(&writer, "mcp files:read files:write", &protected.resource);
    let mut client = protected.client(&writing);
    let names = tool_names(&client.stateless("tools/list", json!({})).answer());
    assert!(names.contains(&"write_file".to_string()), "{names:?}");
    let written = client.stateless("tools/call", write("/files/stateless.txt"));
    assert_eq!(written.status, 200, "{}", written.text());
    assert_eq!(
        written.answer()["result"]["isError"],
        false,
        "{}",
        written.text()
    );
    let mut session = protected.client(&writing);
    session.initialize("2025-11-25");
    let written = session.legacy("tools/call", write("/files/legacy.txt"));
    assert_eq!(
        written.answer()["result"]["isError"],
        false,
        "{}",
        written.text()
    );
    for name in ["stateless.txt", "legacy.txt"] {
        assert_eq!(
            std::fs::read_to_string(scratch.path().join(name)).unwrap(),
            "written"
        );
    }
}

/// Checks that a client signed in with the base scope, did not see
/// write_file, and stepped up to `files:write` to call it.
fn assert_stepped_up(outcome: &Value, scratch: &Path, file: &str) {
    let tools = outcome["tools"].as_array().unwrap();
    assert!(!tools.contains(&json!("write_file")), "{outcome}");
    let tokens = outcome["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 2, "{outcome}");
    assert!(!scopes_of(&tokens[0]).contains(&"files:write".to_string()));
    assert!(scopes_of(&tokens[1]).contains(&"files:write".to_string()));
    let asked = outcome["authorizations"][1]["scope"].as_str().unwrap();
    assert!(asked.split(' ').any(|s| s == "files:write"), "{outcome}");
    assert_eq!(outcome["calls"][0]["result"]["isError"], false, "{outcome}");
    assert_eq!(
        std::fs::read_to_string(scratch.join(file)).unwrap(),
        "stepped up"
    );
}

#[test]
fn the_official_clients_step_up_to_files_write_when_a_call_needs_it() {
    let issuer = Issuer::start(&[]);
    let scratch = tempfile::tempdir().unwrap();
    let folder = files_folder(scratch.path());
    let protected = Protected::start(folder.path(), &issuer, &[]);
    let call = |file: &str| {
        json!([{ "name": "write_file",
                 "arguments": { "path": format!("/files/{file}"), "content": "stepped up" } }])
    };

    // Without step-up the TypeScript SDK reports the challenge it got.
    let mut spec = code_flow(&protected.resource, "legacy", "alice", call("no.txt"));
    let refused = typescript(&spec, &issuer);
    let required = refused["calls"][0]["requiredScope"]
        .as_str()
        .unwrap_or_default();
    assert!(required.split(' ').any(|s| s == "files:write"), "{refused}");
    assert!(!scratch.path().join("no.txt").exists());

    for (mode, file) in [("legacy", "ts-legacy.txt"), ("2026-07-28", "ts-modern.txt")] {
        spec = code_flow(&protected.resource, mode, "alice", call(file));
        spec["step_up"] = true.into();
        let outcome = typescript(&spec, &issuer);
        assert_tokens_for(&outcome, &issuer, &protected.resource, "alice");
        assert_stepped_up(&outcome, scratch.path(), file);
    }
    for (mode, file) in [("legacy", "py-legacy.txt"), ("2026-07-28", "py-modern.txt")] {
        let spec = code_flow(&protected.resource, mode, "bob", call(file));
        let outcome = python(&spec, &issuer);
        assert_tokens_for(&outcome, &issuer, &protected.resource, "bob");
        assert_stepped_up(&outcome, scratch.path(), file);
    }
}

// ---------------------------------------------------------------------------
// State per principal

/// The python-todo example with its grant, its store per principal when
/// `per_principal`.
fn todo_folder(per_principal: bool) -> tempfile::TempDir {
    let folder = folder_with(&[("python-todo.wasm", &example("python-todo"))]);
    let per = if per_principal {
        "per = \"principal\"\n"
    } else {
        ""
    };
    write_file(
        folder.path(),
        "python-todo.toml",
        &format!("[state]\nbuckets = [\"default\"]\n{per}"),
    );
    folder
}

/// The text of a stateless call's result (failing on anything else).
fn call_text(client: &mut Client, tool: &str, arguments: Value) -> String {
    let response = client.stateless(
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    );
    result_text(&response)
}

fn result_text(response: &Response) -> String {
    assert_eq!(response.status, 200, "{}", response.text());
    let answer = response.answer();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
        .to_string()
}

#[test]
fn two_principals_with_state_per_principal_never_see_each_others_todo_items() {
    let (alice, bob) = (
        OidcClient::new("alice", BASE_SCOPE),
        OidcClient::new("bob", BASE_SCOPE),
    );
    let issuer = Issuer::start(&[alice.clone(), bob.clone()]);
    let folder = todo_folder(true);
    let store = tempfile::tempdir().unwrap();
    let state = format!("sqlite:{}", store.path().join("state.sqlite").display());
    let protected = Protected::start(folder.path(), &issuer, &["--state", &state]);
    let (alice_list, bob_list) = add_and_list(&protected, &issuer, &alice, &bob);
    assert!(alice_list.contains("alice's errand"), "{alice_list}");
    assert!(!alice_list.contains("bob's chore"), "{alice_list}");
    assert!(bob_list.contains("bob's chore"), "{bob_list}");
    assert!(!bob_list.contains("alice's errand"), "{bob_list}");
}

#[test]
fn without_state_per_principal_two_principals_share_one_todo_list() {
    let (alice, bob) = (
        OidcClient::new("alice", BASE_SCOPE),
        OidcClient::new("bob", BASE_SCOPE),
    );
    let issuer = Issuer::start(&[alice.clone(), bob.clone()]);
    let folder = todo_folder(false);
    let store = tempfile::tempdir().unwrap();
    let state = format!("sqlite:{}", store.path().join("state.sqlite").display());
    let protected = Protected::start(folder.path(), &issuer, &["--state", &state]);
    let (alice_list, bob_list) = add_and_list(&protected, &issuer, &alice, &bob);
    for list in [&alice_list, &bob_list] {
        assert!(list.contains("alice's errand"), "{list}");
        assert!(list.contains("bob's chore"), "{list}");
    }
}

/// Alice (stateless requests) and Bob (a legacy session) each add an item
/// to the todo list `protected` serves, then list theirs: what each sees.
fn add_and_list(
    protected: &Protected,
    issuer: &Issuer,
    alice: &OidcClient,
    bob: &OidcClient,
) -> (String, String) {
    let mut alice_client = protected.client(&issuer.token(alice, BASE_SCOPE, &protected.resource));
    let mut bob_session = protected.client(&issuer.token(bob, BASE_SCOPE, &protected.resource));
    bob_session.initialize("2025-11-25");
    call_text(
        &mut alice_client,
        "todo_add",
        json!({ "text": "alice's errand" }),
    );
    result_text(&bob_session.legacy(
        "tools/call",
        json!({ "name": "todo_add", "arguments": { "text": "bob's chore" } }),
    ));
    let alice_list = call_text(
        &mut alice_client,
        "todo_list",
        json!({ "include_done": true }),
    );
    let bob_list = result_text(&bob_session.legacy(
        "tools/call",
        json!({ "name": "todo_list", "arguments": { "include_done": true } }),
    ));
    (alice_list, bob_list)
}

// ---------------------------------------------------------------------------
// Replicas

#[test]
fn two_replicas_behind_nginx_accept_the_same_tokens_and_keep_a_principals_todo_items_together() {
    let (alice, bob) = (
        OidcClient::new("alice", BASE_SCOPE),
        OidcClient::new("bob", BASE_SCOPE),
    );
    let issuer = Issuer::start(&[alice.clone(), bob.clone()]);
    let redis = RedisServer::start();
    let state = redis.url();
    let folder = todo_folder(true);
    // The resource is the proxy's URL: both replicas are that one server.
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let extra = ["--state", state.as_str()];
    let first = start_replica(folder.path(), 0, &resource, &issuer, &extra);
    let second = start_replica(folder.path(), 0, &resource, &issuer, &extra);
    let nginx = Nginx::start(port, &[first.addr, second.addr]);

    let anonymous = Client::new(nginx.addr()).stateless("tools/list", json!({}));
    assert_eq!(anonymous.status, 401, "{}", anonymous.text());

    let mut alice_client = with_token(
        Client::new(nginx.addr()),
        &issuer.token(&alice, BASE_SCOPE, &resource),
    );
    let mut bob_client = with_token(
        Client::new(nginx.addr()),
        &issuer.token(&bob, BASE_SCOPE, &resource),
    );
    let mut added_by = HashMap::new();
    for i in 0..4 {
        let response = alice_client.stateless(
            "tools/call",
            json!({ "name": "todo_add", "arguments": { "text": format!("alice's errand {i}") } }),
        );
        result_text(&response);
        let replica = response.header("x-corral-replica").unwrap().to_string();
        *added_by.entry(replica).or_insert(0) += 1;
    }
    assert_eq!(added_by.len(), 2, "both replicas took calls: {added_by:?}");
    let mut listed_by = HashMap::new();
    for _ in 0..4 {
        let response = alice_client.stateless(
            "tools/call",
            json!({ "name": "todo_list", "arguments": { "include_done": true } }),
        );
        let list = result_text(&response);
        for i in 0..4 {
            assert!(list.contains(&format!("alice's errand {i}")), "{list}");
        }
        let replica = response.header("x-corral-replica").unwrap().to_string();
        *listed_by.entry(replica).or_insert(0) += 1;
    }
    // Bob, on either replica, has a list of his own.
    for _ in 0..2 {
        let bob_list = call_text(
            &mut bob_client,
            "todo_list",
            json!({ "include_done": true }),
        );
        assert!(!bob_list.contains("alice's errand"), "{bob_list}");
    }
    assert_eq!(
        listed_by.len(),
        2,
        "both replicas answered: {listed_by:?}\n{}",
        nginx.error_log()
    );
}

#[test]
fn a_task_alice_starts_through_nginx_is_hers_on_both_replicas_and_not_bobs() {
    let (alice, bob) = (
        OidcClient::new("alice", BASE_SCOPE),
        OidcClient::new("bob", BASE_SCOPE),
    );
    let issuer = Issuer::start(&[alice.clone(), bob.clone()]);
    let redis = RedisServer::start();
    let state = redis.url();
    let folder = conformance_folder("");
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let extra = ["--state", state.as_str()];
    let first = start_replica(folder.path(), 0, &resource, &issuer, &extra);
    let second = start_replica(folder.path(), 0, &resource, &issuer, &extra);
    let nginx = Nginx::start(port, &[first.addr, second.addr]);
    let mut alice_client = with_token(
        Client::new(nginx.addr()),
        &issuer.token(&alice, BASE_SCOPE, &resource),
    );
    let mut bob_client = with_token(
        Client::new(nginx.addr()),
        &issuer.token(&bob, BASE_SCOPE, &resource),
    );
    let task = |client: &mut Client, method: &str, params: Value| -> (Value, String) {
        let response = client.stateless(method, http::declaring_tasks(params));
        assert_eq!(
            response.status,
            200,
            "{}\n{}",
            response.text(),
            nginx.error_log()
        );
        let replica = response.header("x-corral-replica").unwrap().to_string();
        (response.answer(), replica)
    };

    let (created, _) = task(
        &mut alice_client,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": { "seconds": 2 } }),
    );
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned();
    let mut answered_by = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // Bob, on whichever replica, is answered as for a task that does
        // not exist.
        let peeked =
            bob_client.stateless("tasks/get", http::declaring_tasks(json!({ "taskId": id })));
        let unknown = bob_client.stateless(
            "tasks/get",
            http::declaring_tasks(json!({ "taskId": "no-such-task" })),
        );
        assert_eq!(
            peeked.status,
            400,
            "bob read alice's task: {}",
            peeked.text()
        );
        assert_eq!(peeked.status, unknown.status);
        assert_eq!(peeked.answer()["error"], unknown.answer()["error"]);
        let (got, replica) = task(&mut alice_client, "tasks/get", json!({ "taskId": id }));
        *answered_by.entry(replica).or_insert(0) += 1;
        match got["result"]["status"].as_str() {
            Some("completed") if answered_by.len() == 2 => break,
            Some("working" | "completed") => {}
            _ => panic!("{got}"),
        }
        assert!(
            Instant::now() < deadline,
            "not answered by both replicas: {answered_by:?} {got}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_user_signed_in_through_either_official_client_is_one_principal_with_one_todo_list() {
    let issuer = Issuer::start(&[]);
    let folder = todo_folder(true);
    let store = tempfile::tempdir().unwrap();
    let state = format!("sqlite:{}", store.path().join("state.sqlite").display());
    let protected = Protected::start(folder.path(), &issuer, &["--state", &state]);
    let add = json!([{ "name": "todo_add", "arguments": { "text": "added through typescript" } }]);
    let list = json!([{ "name": "todo_list", "arguments": { "include_done": true } }]);
    let listed = |outcome: &Value| {
        let result = &outcome["calls"][0]["result"];
        assert_eq!(result["isError"], false, "{outcome}");
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    // Two clients, each registered on its own, for one user.
    let added = typescript(
        &code_flow(&protected.resource, "legacy", "alice", add),
        &issuer,
    );
    assert_eq!(added["calls"][0]["result"]["isError"], false, "{added}");
    let alice = python(
        &code_flow(&protected.resource, "2026-07-28", "alice", list.clone()),
        &issuer,
    );
    assert_ne!(
        added["tokens"][0]["client_id"], alice["tokens"][0]["client_id"],
        "two registrations"
    );
    assert!(
        listed(&alice).contains("added through typescript"),
        "{alice}"
    );
    let bob = python(
        &code_flow(&protected.resource, "legacy", "bob", list),
        &issuer,
    );
    assert!(!listed(&bob).contains("added through typescript"), "{bob}");
}

// ---------------------------------------------------------------------------
// Each user's own secrets (issue 44): asked for with a URL-mode elicitation,
// entered on Corral's page after signing in with the same issuer, sealed in
// the state store, and given to that user's calls alone.

/// Corral's registration at the issuer for its page.
const WEB_CLIENT: &str = "corral-web";

/// Each user's value: recognisable, of different lengths, so that the
/// fixture's `length` tool tells whose value a call read.
const ALICE_VALUE: &str = "corral-test-secret-alice-own";
const BOB_VALUE: &str = "corral-test-secret-bob-own-and-longer";

/// A Corral whose hostile-secrets fixture needs each caller's own TOKEN,
/// with the page, a key, and its state in a file of its own.
struct OwnSecrets {
    server: HttpServer,
    resource: String,
    issuer: Issuer,
    state: tempfile::TempDir,
    _folder: tempfile::TempDir,
}

/// How the server is given its key.
enum Key {
    File,
    Environment,
}

impl OwnSecrets {
    /// The server, its calls waiting `input_wait` for a user, its issuer
    /// also knowing `clients`.
    fn start(input_wait: &str, clients: &[OidcClient], key: Key) -> OwnSecrets {
        let port = free_port();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let web = OidcClient::web(
            WEB_CLIENT,
            &format!("http://127.0.0.1:{port}/corral/signin"),
        );
        let mut clients = clients.to_vec();
        clients.push(web.clone());
        let issuer = Issuer::start(&clients);
        let folder = folder_with(&[("hostile-secrets.wasm", &support::fixture("hostile-secrets"))]);
        let manifest = format!(
            "[secrets]\nTOKEN = {{ description = \"Your token for the test API\", required = true, per = \"principal\" }}\n\n\
             [state]\nbuckets = [\"default\"]\n\n[limits]\ninput-wait = \"{input_wait}\"\n"
        );
        write_file(folder.path(), "hostile-secrets.toml", &manifest);
        let state = tempfile::tempdir().unwrap();
        let key_file = state.path().join("secrets.key");
        std::fs::write(&key_file, "6b".repeat(32)).unwrap();
        let state_flag = format!("sqlite:{}", state.path().join("state.sqlite").display());
        let mut args = vec![
            "--resource",
            &resource,
            "--oauth-issuer",
            issuer.url(),
            "--oauth-scope",
            BASE_SCOPE,
            "--oauth-web-client",
            WEB_CLIENT,
            "--state",
            &state_flag,
            "--secrets",
            "none",
        ];
        let mut env = vec![("CORRAL_OAUTH_WEB_CLIENT_SECRET", web.secret.clone())];
        match key {
            Key::File => args.extend(["--secrets-key-file", key_file.to_str().unwrap()]),
            Key::Environment => env.push(("CORRAL_SECRETS_KEY", "a1".repeat(32))),
        }
        let env: Vec<(&str, &str)> = env
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        let server = HttpServer::start_on(folder.path(), &format!("127.0.0.1:{port}"), &args, &env);
        OwnSecrets {
            server,
            resource,
            issuer,
            state,
            _folder: folder,
        }
    }

    /// The official TypeScript client signed in as `user` in `mode`, whose
    /// browser (signed in as `browser`) enters `value` on any page it is
    /// sent to, calling `calls`.
    fn run(&self, mode: &str, user: &str, browser: &str, value: &str, calls: Value) -> Value {
        let spec = json!({
            "url": self.resource, "mode": mode, "user": user, "browser": browser,
            "value": value, "calls": calls,
        });
        run_client(
            "node",
            &[
                &script("ts_own_secret.mjs"),
                &node_prefix(),
                &spec.to_string(),
            ],
            &self.issuer,
        )
    }

    fn page(&self) -> String {
        format!(
            "{}/corral/secrets?plugin=hostile-secrets&name=TOKEN",
            self.resource.trim_end_matches("/mcp")
        )
    }
}

fn length_call() -> Value {
    json!([{ "name": "length", "arguments": { "name": "TOKEN" } }])
}

fn outcome_text(outcome: &Value, index: usize) -> String {
    let result = &outcome["calls"][index]["result"];
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in call {index}: {outcome}"))
        .to_string()
}

/// Checks that the call asked for TOKEN with one URL-mode elicitation of
/// Corral's page, and that the browser saved the value there.
fn assert_asked_on_the_page(outcome: &Value, own: &OwnSecrets) {
    let elicitations = outcome["elicitations"].as_array().unwrap();
    assert_eq!(elicitations.len(), 1, "{outcome}");
    let asked = &elicitations[0];
    assert_eq!(asked["mode"], "url", "{outcome}");
    let url = asked["url"].as_str().unwrap();
    if outcome["protocolVersion"] == "2026-07-28" {
        // No elicitationId in 2026-07-28, and the retry must ask the same
        // whenever it comes: the page alone.
        assert_eq!(url, own.page(), "{outcome}");
        assert!(asked.get("elicitationId").is_none(), "{outcome}");
    } else {
        assert!(
            url.starts_with(&format!("{}&elicitation=", own.page())),
            "{outcome}"
        );
        assert_eq!(
            url.split("elicitation=").nth(1),
            asked["elicitationId"].as_str(),
            "{outcome}"
        );
    }
    assert!(
        asked["message"].as_str().unwrap().contains("TOKEN"),
        "{outcome}"
    );
    let page = outcome["pages"][0]["page"].as_str().unwrap_or_default();
    assert!(page.contains("is saved"), "{outcome}");
}

#[test]
fn each_user_enters_their_own_secret_on_corrals_page_and_only_their_calls_read_it() {
    let own = OwnSecrets::start("60 s", &[], Key::File);

    // Alice, in a legacy session: asked, she enters her value on the page,
    // told the elicitation is complete, and her call reads it.
    let alice = own.run("legacy", "alice", "alice", ALICE_VALUE, length_call());
    assert_asked_on_the_page(&alice, &own);
    assert_eq!(
        outcome_text(&alice, 0),
        format!("{} bytes", ALICE_VALUE.len()),
        "{alice}"
    );
    assert_eq!(
        alice["completed"],
        json!([alice["elicitations"][0]["elicitationId"]]),
        "{alice}"
    );

    // Bob, statelessly (2026-07-28: input_required, then the retry waits
    // for the page): his own value, not Alice's.
    let bob = own.run("2026-07-28", "bob", "bob", BOB_VALUE, length_call());
    assert_asked_on_the_page(&bob, &own);
    assert_eq!(
        outcome_text(&bob, 0),
        format!("{} bytes", BOB_VALUE.len()),
        "{bob}"
    );
    assert_eq!(
        bob["completed"],
        json!([]),
        "2026-07-28 has no such notification: {bob}"
    );

    // Asked once: Alice's next calls read her value without asking, and
    // what would leak it is redacted.
    let calls = json!([
        { "name": "length", "arguments": { "name": "TOKEN" } },
        { "name": "leak", "arguments": {} },
    ]);
    let again = own.run("2026-07-28", "alice", "alice", "unused-value-here", calls);
    assert_eq!(again["elicitations"], json!([]), "{again}");
    assert_eq!(
        outcome_text(&again, 0),
        format!("{} bytes", ALICE_VALUE.len()),
        "{again}"
    );
    let leaked = again["calls"][1].to_string();
    assert!(leaked.contains("[redacted secret TOKEN]"), "{again}");

    // Nothing of either value in the clear: not in the state store, not in
    // anything Corral wrote, not in what the clients were told.
    let stored = std::fs::read(own.state.path().join("state.sqlite")).unwrap();
    for value in [ALICE_VALUE, BOB_VALUE] {
        assert!(
            !stored.windows(value.len()).any(|w| w == value.as_bytes()),
            "{value} in clear in the state store"
        );
        for (what, text) in [
            ("Corral's stderr", own.server.server.stderr()),
            ("alice's client", alice.to_string()),
            ("bob's client", bob.to_string()),
            ("alice's second client", again.to_string()),
        ] {
            assert!(!text.contains(value), "{value} in {what}:\n{text}");
        }
    }
}

#[test]
fn a_page_link_opened_by_another_user_saves_nothing() {
    let own = OwnSecrets::start("4 s", &[], Key::File);
    // Alice's client gets the link, but Bob opens it (a link passed on):
    // the page refuses him, and Alice's call ends without a value.
    let outcome = own.run("legacy", "alice", "bob", BOB_VALUE, length_call());
    let refused = outcome["pages"][0]["error"].as_str().unwrap_or_default();
    assert!(
        refused.contains("403") && refused.contains("made for another account"),
        "{outcome}"
    );
    let result = &outcome["calls"][0]["result"];
    assert_eq!(result["isError"], true, "{outcome}");
    let text = outcome_text(&outcome, 0);
    assert!(
        text.contains("TOKEN") && text.contains("was not entered"),
        "{outcome}"
    );
    assert_eq!(outcome["completed"], json!([]), "{outcome}");
}

#[test]
fn a_client_that_cannot_open_a_page_is_told_where_to_set_the_secret() {
    let agent = OidcClient::new("agent", BASE_SCOPE);
    // The key from the environment this time.
    let own = OwnSecrets::start("10 s", std::slice::from_ref(&agent), Key::Environment);
    let (server, issuer, resource) = (&own.server, &own.issuer, &own.resource);
    let port = server.addr.port();
    let token = issuer.token(&agent, BASE_SCOPE, resource);
    let mut client = with_token(server.client(), &token);
    // A stateless call declaring no elicitation: the tool's error names the
    // page, without an elicitation behind it.
    let answer = client
        .stateless(
            "tools/call",
            json!({ "name": "length", "arguments": { "name": "TOKEN" } }),
        )
        .answer();
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap();
    let page = format!("http://127.0.0.1:{port}/corral/secrets?plugin=hostile-secrets&name=TOKEN");
    assert!(
        text.contains(&page) && !text.contains("elicitation="),
        "{text}"
    );
    assert!(text.contains("cannot open a page"), "{text}");

    // The page itself: a browser not signed in is sent to the issuer, for
    // Corral's web client, with PKCE and this resource; a name no plugin
    // grants per user is no page at all.
    let mut browser = server.client();
    let response = browser.send(
        "GET",
        "/corral/secrets?plugin=hostile-secrets&name=TOKEN",
        &[],
        b"",
    );
    assert_eq!(response.status, 303, "{response:?}");
    let location = response.header("location").unwrap_or_default().to_string();
    assert!(location.starts_with(issuer.url()), "{location}");
    for needed in [
        format!("client_id={WEB_CLIENT}"),
        "code_challenge_method=S256".to_string(),
        format!("resource={}", support::oidc::form_encode(resource)),
    ] {
        assert!(location.contains(&needed), "{needed} not in {location}");
    }
    // The sign-in is the browser's: its state travels in a cookie scoped
    // to the page, and the callback needs it.
    let cookie = response
        .header("set-cookie")
        .unwrap_or_default()
        .to_string();
    assert!(
        cookie.starts_with("corral_signin=")
            && cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    // So a callback link from someone else's sign-in (login CSRF: signing
    // this browser in as another user) is refused, before any exchange.
    let state = location
        .split("state=")
        .nth(1)
        .and_then(|rest| rest.split('&').next())
        .unwrap()
        .to_string();
    let mut victim = server.client();
    let response = victim.send(
        "GET",
        &format!("/corral/signin?code=stolen-code&state={state}"),
        &[],
        b"",
    );
    assert_eq!(response.status, 403, "{response:?}");
    assert!(
        response.text().contains("not started by this browser"),
        "{}",
        response.text()
    );
    let response = browser.send(
        "GET",
        "/corral/secrets?plugin=hostile-secrets&name=OTHER",
        &[],
        b"",
    );
    assert_eq!(response.status, 404, "{response:?}");
    // Pages keep their Origin on a form's POST (same-origin, not
    // no-referrer, under which browsers send `Origin: null`), and may not
    // be framed.
    assert_eq!(response.header("referrer-policy"), Some("same-origin"));
    assert_eq!(response.header("x-frame-options"), Some("DENY"));
    // A form posted without a signed-in session saves nothing.
    let response = browser.send(
        "POST",
        "/corral/secrets",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"plugin=hostile-secrets&name=TOKEN&form_token=x&value=corral-test-secret-forged",
    );
    assert_eq!(response.status, 401, "{response:?}");
}
