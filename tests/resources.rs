//! Resources, resource templates, prompts and completion served from
//! plugins (issue 28), end to end: the official MCP Python and TypeScript
//! clients list, read, subscribe, get and complete through the real binary
//! over stdio and Streamable HTTP, in both eras, against the fixture
//! `tests/plugins/conformance-resources`; and the wire shows the naming
//! rules: a plugin with only resources, two plugins claiming one URI (both
//! read), two plugins with one prompt name (both served, prefixed), and an
//! unknown URI (resource not found).
//!
//! The client scripts are `tests/clients/python_resources.py` and
//! `tests/clients/ts_resources.mjs`; the clients are installed, pinned,
//! by the setup scripts `tests/clients.rs` uses.

#[path = "support/http.rs"]
mod http;
mod support;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};
use support::{
    MODERN, Server, add_conformance_resources, example, fixture, folder_with, repo_root, run_setup,
};

const LEGACY: &str = "2025-11-25";

// ---- the official clients --------------------------------------------------

/// The Python of a virtualenv holding the official MCP Python SDK.
fn python() -> String {
    static DONE: OnceLock<Vec<String>> = OnceLock::new();
    DONE.get_or_init(|| run_setup("tests/clients/setup-python"))[0].clone()
}

/// The npm prefix holding the official MCP TypeScript client.
fn node_prefix() -> String {
    static DONE: OnceLock<Vec<String>> = OnceLock::new();
    DONE.get_or_init(|| run_setup("tests/clients/setup-node"))[0].clone()
}

fn script(name: &str) -> String {
    repo_root()
        .join("tests/clients")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// Runs a client script, with the server's environment set, and fails with
/// its output when it fails.
fn run_client(program: &str, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
        .env("CORRAL_LOG", "warn")
        .env("CORRAL_CACHE_DIR", support::test_cache_dir())
        .env("XDG_DATA_HOME", support::test_data_dir())
        // No __pycache__ next to the scripts in tests/clients.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|err| panic!("running {program}: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{program} {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    println!("{stdout}");
}

/// A folder serving the conformance-resources fixture alone.
fn fixture_folder() -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    add_conformance_resources(folder.path(), "conformance-resources");
    folder
}

/// Where a client script finds the server: over stdio, or over HTTP.
enum Transport {
    Stdio,
    Http,
}

/// `client` ("python" or "ts") in `mode` ("legacy" or "2026-07-28") runs
/// its whole script against the fixture through `transport`.
fn client_exercises_the_fixture(client: &str, mode: &str, transport: Transport) {
    let folder = fixture_folder();
    client_exercises(client, mode, transport, folder.path(), "fixture");
}

/// `client` in `mode` runs `part` of its script ("fixture" or "handbook")
/// against the plugins of `folder` through `transport`.
fn client_exercises(client: &str, mode: &str, transport: Transport, folder: &Path, part: &str) {
    let served;
    let server = match transport {
        Transport::Stdio => format!(
            "stdio:{}:{}",
            env!("CARGO_BIN_EXE_corral"),
            folder.display()
        ),
        Transport::Http => {
            served = http::HttpServer::start(folder, &[]);
            format!("http://{}/mcp", served.addr)
        }
    };
    match client {
        "python" => run_client(
            &python(),
            &[&script("python_resources.py"), mode, &server, part],
        ),
        _ => run_client(
            "node",
            &[
                &script("ts_resources.mjs"),
                &node_prefix(),
                mode,
                &server,
                part,
            ],
        ),
    }
}

#[test]
fn official_python_client_in_the_legacy_era_over_stdio() {
    client_exercises_the_fixture("python", "legacy", Transport::Stdio);
}

#[test]
fn official_python_client_in_the_stateless_era_over_stdio() {
    client_exercises_the_fixture("python", MODERN, Transport::Stdio);
}

#[test]
fn official_python_client_in_the_legacy_era_over_http() {
    client_exercises_the_fixture("python", "legacy", Transport::Http);
}

#[test]
fn official_python_client_in_the_stateless_era_over_http() {
    client_exercises_the_fixture("python", MODERN, Transport::Http);
}

#[test]
fn official_typescript_client_in_the_legacy_era_over_stdio() {
    client_exercises_the_fixture("ts", "legacy", Transport::Stdio);
}

#[test]
fn official_typescript_client_in_the_stateless_era_over_stdio() {
    client_exercises_the_fixture("ts", MODERN, Transport::Stdio);
}

#[test]
fn official_typescript_client_in_the_legacy_era_over_http() {
    client_exercises_the_fixture("ts", "legacy", Transport::Http);
}

#[test]
fn official_typescript_client_in_the_stateless_era_over_http() {
    client_exercises_the_fixture("ts", MODERN, Transport::Http);
}

/// A folder serving the example `plugins/handbook` alone.
fn handbook_folder() -> tempfile::TempDir {
    folder_with(&[("handbook.wasm", &example("handbook"))])
}

#[test]
fn official_python_client_reads_the_handbook_example_in_the_legacy_era_over_stdio() {
    let folder = handbook_folder();
    client_exercises(
        "python",
        "legacy",
        Transport::Stdio,
        folder.path(),
        "handbook",
    );
}

#[test]
fn official_typescript_client_reads_the_handbook_example_in_the_stateless_era_over_http() {
    let folder = handbook_folder();
    client_exercises("ts", MODERN, Transport::Http, folder.path(), "handbook");
}

// ---- the wire --------------------------------------------------------------

/// Every item of the paginated list `method` returns under `key`.
fn all(server: &mut Server, method: &str, key: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut params = json!({});
    loop {
        let page = server.result(method, params);
        items.extend(page[key].as_array().unwrap().iter().cloned());
        match page.get("nextCursor") {
            Some(cursor) => params = json!({ "cursor": cursor }),
            None => return items,
        }
    }
}

/// The values of `field` in `items`, as strings.
fn strings(items: &[Value], field: &str) -> Vec<String> {
    items
        .iter()
        .map(|item| item[field].as_str().unwrap().to_string())
        .collect()
}

/// A served folder with the fixture twice, as plugins `a` and `b`: both
/// list the same URIs and template, and declare the same prompts.
fn twice() -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    add_conformance_resources(folder.path(), "a");
    add_conformance_resources(folder.path(), "b");
    folder
}

#[test]
fn a_plugin_with_only_resources_loads_and_serves() {
    // The hostile fixture's harmless mode: it exports `resources` and
    // `completion` only (world `resource-plugin`), no tools and no prompts.
    let folder = folder_with(&[("documents.wasm", &fixture("hostile-resources"))]);
    let mut server = Server::start(folder.path());
    let initialized = server.initialize(LEGACY);
    let capabilities = &initialized["capabilities"];
    assert_eq!(
        capabilities["resources"]["subscribe"], true,
        "{initialized}"
    );
    assert!(capabilities.get("prompts").is_none(), "{initialized}");
    assert!(capabilities["completions"].is_object(), "{initialized}");
    assert_eq!(server.all_tools(), Vec::<Value>::new());
    let resources = all(&mut server, "resources/list", "resources");
    assert_eq!(
        strings(&resources, "uri"),
        ["hostile://ok", "hostile://huge"]
    );
    let read = server.result("resources/read", json!({ "uri": "hostile://ok" }));
    assert_eq!(
        read["contents"],
        json!([{ "uri": "hostile://ok", "mimeType": "text/plain", "text": "still serving" }])
    );
    let stderr = server.stderr_containing("resource=hostile://ok");
    assert!(!stderr.contains("failed to load"), "{stderr}");

    // `corral inspect` shows what it offers besides (no) tools.
    let inspected = std::process::Command::new(env!("CARGO_BIN_EXE_corral"))
        .env("CORRAL_CACHE_DIR", support::test_cache_dir())
        .arg("inspect")
        .arg(folder.path().join("documents.wasm"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&inspected.stdout);
    assert!(
        report.contains("tools\nresources\n  hostile://ok")
            && report.contains("resource templates\n  hostile://flood/{n}"),
        "{report}"
    );
    assert!(!report.contains("prompts"), "{report}");
}

#[test]
fn two_plugins_claiming_one_uri_are_both_read() {
    let folder = twice();
    let mut server = Server::initialized(folder.path(), LEGACY);
    // Listed once per plugin, by plugin name, in each plugin's order; never
    // renamed.
    let resources = all(&mut server, "resources/list", "resources");
    let uris = [
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    ];
    let expected: Vec<&str> = uris.iter().chain(uris.iter()).copied().collect();
    assert_eq!(strings(&resources, "uri"), expected);
    let templates = all(&mut server, "resources/templates/list", "resourceTemplates");
    assert_eq!(
        strings(&templates, "uriTemplate"),
        ["test://template/{id}/data", "test://template/{id}/data"]
    );
    // A listed URI: both plugins are read, their contents concatenated.
    let read = server.result("resources/read", json!({ "uri": "test://static-text" }));
    let text = json!({
        "uri": "test://static-text",
        "mimeType": "text/plain",
        "text": "This is the content of the static text resource.",
    });
    assert_eq!(read["contents"], json!([text, text]), "{read}");
    // A URI that both templates match: likewise.
    let read = server.result("resources/read", json!({ "uri": "test://template/7/data" }));
    let contents = read["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2, "{read}");
    for item in contents {
        assert_eq!(item["uri"], "test://template/7/data", "{read}");
        assert!(
            item["text"].as_str().unwrap().contains("Data for ID: 7"),
            "{read}"
        );
    }
    // Each read ran in each plugin: two audit lines per URI.
    let stderr = server.stderr_containing("resource=test://template/7/data");
    support::wait_for_stderr(&server, "resource=test://static-text", 2);
    assert!(!stderr.contains("failed to load"), "{stderr}");
}

#[test]
fn two_plugins_with_one_prompt_name_are_both_served_prefixed() {
    let folder = twice();
    let mut server = Server::initialized(folder.path(), LEGACY);
    let prompts = all(&mut server, "prompts/list", "prompts");
    let names = strings(&prompts, "name");
    let own = [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_input_required_result_prompt",
    ];
    let expected: Vec<String> = ["a", "b"]
        .iter()
        .flat_map(|plugin| own.iter().map(move |name| format!("{plugin}_{name}")))
        .collect();
    assert_eq!(names, expected);
    // Each is its plugin's prompt, which gets its own name.
    for plugin in ["a", "b"] {
        let got = server.result(
            "prompts/get",
            json!({
                "name": format!("{plugin}_test_prompt_with_arguments"),
                "arguments": { "arg1": plugin, "arg2": "two" },
            }),
        );
        assert_eq!(
            got["messages"][0]["content"]["text"],
            format!("Prompt with arguments: arg1='{plugin}', arg2='two'"),
            "{got}"
        );
        let completed = server.result(
            "completion/complete",
            json!({
                "ref": { "type": "ref/prompt", "name": format!("{plugin}_test_prompt_with_arguments") },
                "argument": { "name": "arg1", "value": "par" },
            }),
        );
        assert_eq!(
            completed["completion"]["values"],
            json!(["paris", "park", "party"]),
            "{completed}"
        );
    }
    // The shared name itself is served by neither.
    let refused = server.request("prompts/get", json!({ "name": "test_simple_prompt" }));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("test_simple_prompt"), "{message}");
    // Tools keep their own namespace and rule: both plugins' tools collide
    // too, and are prefixed the same way.
    let tools = server.tool_names();
    assert!(
        tools.contains(&"a_test_update_watched_resource".to_string())
            && tools.contains(&"b_test_update_watched_resource".to_string()),
        "{tools:?}"
    );
}

/// Sends `resources/read` of an unknown URI and returns the error.
fn unknown_uri_error(server: &mut Server, modern: bool, uri: &str) -> Value {
    let params = json!({ "uri": uri });
    let response = if modern {
        server.modern("resources/read", params)
    } else {
        server.request("resources/read", params)
    };
    assert!(response.get("result").is_none(), "{response}");
    response["error"].clone()
}

#[test]
fn an_unknown_uri_is_resource_not_found_in_each_era() {
    let folder = fixture_folder();
    // Also one that looks like the template but does not match it, and one
    // the fixture's template matches but whose read it refuses (not-found).
    let unknown = [
        "test://nowhere",
        "test://template/a/b/data",
        "test://template//data",
    ];
    let mut legacy = Server::initialized(folder.path(), LEGACY);
    for uri in unknown {
        // Through 2025-11-25: -32002, with the URI in `data`.
        let error = unknown_uri_error(&mut legacy, false, uri);
        assert_eq!(error["code"], -32002, "{uri}: {error}");
        assert_eq!(error["data"]["uri"], uri, "{error}");
    }
    let mut modern = Server::start(folder.path());
    for uri in unknown {
        // From 2026-07-28 on (SEP-2164): -32602, with the URI in `data`.
        let error = unknown_uri_error(&mut modern, true, uri);
        assert_eq!(error["code"], -32602, "{uri}: {error}");
        assert_eq!(error["data"]["uri"], uri, "{error}");
    }
    // An unknown prompt is invalid params in both.
    let refused = legacy.request("prompts/get", json!({ "name": "no_such_prompt" }));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let refused = modern.modern("prompts/get", json!({ "name": "no_such_prompt" }));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[test]
fn completion_of_an_unknown_reference_or_argument_is_invalid_params() {
    let folder = fixture_folder();
    let mut server = Server::initialized(folder.path(), LEGACY);
    for (reference, argument) in [
        (
            json!({ "type": "ref/prompt", "name": "no_such_prompt" }),
            "arg1",
        ),
        (
            json!({ "type": "ref/prompt", "name": "test_prompt_with_arguments" }),
            "arg3",
        ),
        (
            json!({ "type": "ref/resource", "uri": "test://other/{id}" }),
            "id",
        ),
        (
            json!({ "type": "ref/resource", "uri": "test://template/{id}/data" }),
            "name",
        ),
    ] {
        let refused = server.request(
            "completion/complete",
            json!({ "ref": reference, "argument": { "name": argument, "value": "" } }),
        );
        assert_eq!(
            refused["error"]["code"], -32602,
            "{reference} {argument}: {refused}"
        );
    }
}
