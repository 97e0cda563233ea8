//! Tool calls end to end: every content type, structured output, argument
//! and output validation, progress, logging and cancellation.

mod support;

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use support::{Server, example, first_text, fixture, folder_with, plugins_dir};

fn server() -> Server {
    Server::initialized(&plugins_dir(), "2025-11-25")
}

#[test]
fn text_results_and_tool_execution_errors() {
    let mut server = server();
    let sum = server.call("add", json!({ "a": 1.5, "b": 2 }));
    assert_eq!(sum["isError"], false);
    assert_eq!(first_text(&sum), "3.5");
    let division = server.call("divide", json!({ "a": 1, "b": 0 }));
    assert_eq!(division["isError"], true, "{division}");
    assert!(first_text(&division).contains("zero"), "{division}");
}

#[test]
fn image_content_is_a_real_png() {
    let mut server = server();
    let result = server.call("mandelbrot", json!({ "width": 32, "height": 24 }));
    let image = &result["content"][0];
    assert_eq!(image["type"], "image", "{result}");
    assert_eq!(image["mimeType"], "image/png");
    let png = BASE64.decode(image["data"].as_str().unwrap()).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR holds the requested size.
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 32);
    assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 24);
}

#[test]
fn audio_content_for_revisions_that_have_it_and_text_for_those_that_do_not() {
    let mut server = server();
    let result = server.call("tone", json!({ "frequency_hz": 440, "duration_ms": 50 }));
    let audio = &result["content"][0];
    assert_eq!(audio["type"], "audio", "{result}");
    assert_eq!(audio["mimeType"], "audio/wav");
    let wav = BASE64.decode(audio["data"].as_str().unwrap()).unwrap();
    assert_eq!(&wav[..4], b"RIFF");
    assert_eq!(&wav[8..12], b"WAVE");

    let mut old = Server::initialized(&plugins_dir(), "2024-11-05");
    let result = old.call("tone", json!({ "frequency_hz": 440, "duration_ms": 50 }));
    assert_eq!(result["content"][0]["type"], "text", "{result}");
    assert!(first_text(&result).contains("audio/wav"));
}

#[test]
fn structured_content_with_its_output_schema() {
    let mut server = server();
    let tools = server.all_tools();
    let tool = tools.iter().find(|t| t["name"] == "analyze_text").unwrap();
    assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
    let result = server.call(
        "analyze_text",
        json!({ "text": "One fish. Two fish! Red fish?" }),
    );
    let structured = &result["structuredContent"];
    assert_eq!(structured["words"], 6, "{result}");
    assert_eq!(structured["sentences"], 3, "{result}");
    assert_eq!(structured["top_words"][0]["word"], "fish", "{result}");
    // The SDK's `Json` writes the same JSON as the text, for clients that
    // ignore structuredContent; the host adds no second copy.
    let text: Value = serde_json::from_str(first_text(&result)).unwrap();
    assert_eq!(&text, structured);
    assert_eq!(result["content"].as_array().unwrap().len(), 1, "{result}");

    let mut old = Server::initialized(&plugins_dir(), "2025-03-26");
    let result = old.call("analyze_text", json!({ "text": "a b" }));
    assert!(result.get("structuredContent").is_none(), "{result}");
    assert_eq!(
        serde_json::from_str::<Value>(first_text(&result)).unwrap()["words"],
        2
    );
}

#[test]
fn embedded_resources_and_resource_links() {
    let mut server = server();
    let result = server.call("text_report", json!({ "text": "b a b" }));
    let content = result["content"].as_array().unwrap();
    let resource = content
        .iter()
        .find(|c| c["type"] == "resource")
        .expect("an embedded resource");
    assert_eq!(resource["resource"]["mimeType"], "text/csv");
    assert!(
        resource["resource"]["text"]
            .as_str()
            .unwrap()
            .contains("b,2"),
        "{resource}"
    );
    let link = content
        .iter()
        .find(|c| c["type"] == "resource_link")
        .expect("a resource link");
    assert!(
        link["uri"].is_string() && link["name"].is_string(),
        "{link}"
    );

    // 2025-03-26 has no resource_link: it arrives as text.
    let mut old = Server::initialized(&plugins_dir(), "2025-03-26");
    let result = old.call("text_report", json!({ "text": "b a b" }));
    assert!(
        result["content"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["type"] != "resource_link")
    );
}

#[test]
fn invalid_arguments_list_every_violation_with_its_pointer() {
    let mut server = server();
    let result = server.call("add", json!({ "a": "one", "extra": true }));
    assert_eq!(result["isError"], true, "{result}");
    let text = first_text(&result);
    assert!(text.contains("/a"), "{text}");
    assert!(text.contains("\"b\" is a required property"), "{text}");
    // Nothing ran: the plugin would have failed differently.
    let nested = server.call("mandelbrot", json!({ "width": -5 }));
    assert_eq!(nested["isError"], true);
    assert!(first_text(&nested).contains("/width"), "{nested}");
}

#[test]
fn missing_arguments_are_an_empty_object() {
    let mut server = server();
    let result = server.result("tools/call", json!({ "name": "mandelbrot" }));
    assert_eq!(result["isError"], false, "{result}");
    let result = server.result("tools/call", json!({ "name": "add" }));
    assert_eq!(result["isError"], true, "{result}");
}

#[test]
fn a_plugin_that_breaks_its_own_output_schema_gets_an_error() {
    let dir = folder_with(&[("liar.wasm", &fixture("liar"))]);
    let mut server = Server::initialized(dir.path(), "2025-11-25");
    let wrong_type = server.call("wrong_type", json!({}));
    assert_eq!(wrong_type["isError"], true, "{wrong_type}");
    assert!(
        first_text(&wrong_type).contains("does not match its output schema"),
        "{wrong_type}"
    );
    assert!(first_text(&wrong_type).contains("/count"), "{wrong_type}");
    let missing = server.call("no_structured_content", json!({}));
    assert_eq!(missing["isError"], true);
    assert!(
        first_text(&missing).contains("no structured content"),
        "{missing}"
    );
    // Not JSON: the parser's words, where it stopped, and the usual fix;
    // the audit log counts a bad output, with a warning.
    let not_json = server.call("not_json", json!({}));
    assert_eq!(not_json["isError"], true, "{not_json}");
    assert_eq!(
        first_text(&not_json),
        "Tool `not_json` returned structured content that is not valid JSON: expected value at line 1 column 11, here: \"{\\\"ratio\\\": \" ⟵ \"inf, \\\"count\\\": 3}\" (JSON has no infinity or NaN: send null, or the number as a string, or leave the field out)",
        "{not_json}"
    );
    // (Waiting for this call's own audit line: the calls before it were
    // bad outputs too, and their lines may be all the log holds yet.)
    let stderr = server.stderr_containing("tool=not_json elapsed_us");
    let audit = stderr
        .lines()
        .find(|line| line.contains("tool=not_json elapsed_us"))
        .unwrap();
    assert!(audit.contains("outcome=\"bad-output\""), "{audit}");
    assert!(
        stderr.contains("WARN") && stderr.contains("bad output: Tool `not_json`"),
        "{stderr}"
    );
    let panic = server.call("panics", json!({}));
    assert_eq!(panic["isError"], true);
    assert!(first_text(&panic).contains("the liar panicked"), "{panic}");
    // The server keeps serving.
    let honest = server.call("honest", json!({}));
    assert_eq!(honest["isError"], false, "{honest}");
    assert_eq!(honest["structuredContent"]["count"], 3);
}

#[test]
fn structured_content_that_is_not_an_object_is_structured_only_in_2026_07_28() {
    // `not_an_object` answers `[1,2,3]`, as text and as structured content,
    // and declares no output schema.
    let dir = folder_with(&[("liar.wasm", &fixture("liar"))]);
    let mut legacy = Server::initialized(dir.path(), "2025-11-25");
    assert_eq!(
        legacy.call("not_an_object", json!({})),
        json!({ "content": [{ "type": "text", "text": "[1,2,3]" }], "isError": false })
    );
    let mut modern = Server::start(dir.path());
    let result = modern.modern_result(
        "tools/call",
        json!({ "name": "not_an_object", "arguments": {} }),
    );
    assert_eq!(result["structuredContent"], json!([1, 2, 3]), "{result}");
    assert_eq!(
        result["content"],
        json!([{ "type": "text", "text": "[1,2,3]" }]),
        "{result}"
    );
    assert_eq!(result["isError"], false, "{result}");
}

/// The counts every tool of tests/plugins/structured answers.
fn counts() -> Value {
    json!({ "items": 3, "done": 2 })
}

/// The text items of a result, as their texts.
fn texts(result: &Value) -> Vec<&str> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "text")
        .map(|item| item["text"].as_str().unwrap())
        .collect()
}

/// What each tool of tests/plugins/structured answers as text, in every
/// revision, with or without a manifest's `mirror-structured`.
fn structured_fixture_texts(mirror_structured: bool) -> [(&'static str, Vec<&'static str>); 4] {
    const JSON: &str = r#"{"done":2,"items":3}"#;
    let summary = if mirror_structured {
        vec!["2 of 3 items done", JSON]
    } else {
        vec!["2 of 3 items done"]
    };
    [
        ("summary", summary),
        ("as_json", vec![r#"{ "items": 3, "done": 2 }"#]),
        ("bare", vec![JSON]),
        ("pictured", vec![JSON]),
    ]
}

/// Calls every tool of tests/plugins/structured served from `dir` in the
/// oldest and newest legacy revisions and the stateless one, and checks
/// their texts against [`structured_fixture_texts`].
fn check_structured_fixture(dir: &std::path::Path, mirror_structured: bool) {
    let expected = structured_fixture_texts(mirror_structured);
    for revision in ["2024-11-05", "2025-11-25"] {
        let mut server = Server::initialized(dir, revision);
        for (tool, texts_wanted) in &expected {
            let result = server.call(tool, json!({}));
            assert_eq!(result["isError"], false, "{tool}: {result}");
            assert_eq!(&texts(&result), texts_wanted, "{revision} {tool}: {result}");
            let structured = (revision == "2025-11-25").then(counts);
            assert_eq!(
                result.get("structuredContent").cloned(),
                structured,
                "{revision} {tool}: {result}"
            );
        }
        // The image stays, first, with the JSON after it.
        let pictured = server.call("pictured", json!({}));
        assert_eq!(pictured["content"][0]["type"], "image", "{pictured}");
        assert_eq!(pictured["content"].as_array().unwrap().len(), 2);
    }
    let mut modern = Server::start(dir);
    for (tool, texts_wanted) in &expected {
        let result = modern.modern_result("tools/call", json!({ "name": tool, "arguments": {} }));
        assert_eq!(&texts(&result), texts_wanted, "2026-07-28 {tool}: {result}");
        assert_eq!(result["structuredContent"], counts(), "{tool}: {result}");
    }
}

#[test]
fn structured_content_is_added_as_json_text_only_to_a_result_without_text() {
    // A result with text of its own (a sentence, or the JSON itself) is sent
    // as the plugin wrote it, in every revision: the model is not shown the
    // same data twice. One without text gets the JSON as its text.
    let dir = folder_with(&[("structured.wasm", &fixture("structured"))]);
    check_structured_fixture(dir.path(), false);
}

#[test]
fn a_manifest_keeps_the_json_text_beside_the_plugins_own() {
    // `[results] mirror-structured = true`: every structured result holds
    // its JSON as text, once: not after text that already is that JSON, and
    // not twice in a result that had no text.
    let dir = folder_with(&[("structured.wasm", &fixture("structured"))]);
    support::write_file(
        dir.path(),
        "structured.toml",
        "[results]\nmirror-structured = true\n",
    );
    check_structured_fixture(dir.path(), true);
}

#[test]
fn a_sentence_with_structured_content_reaches_older_clients_as_itself() {
    // c-hash answers a sentence and structured content: older clients get
    // the sentence, as the plugin wrote it for them; with the manifest's
    // switch, the JSON follows it, so no field (`base64` here) is lost to
    // them.
    let structured = json!({
        "algorithm": "SHA-256",
        "hex": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "base64": "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=",
        "byte_length": 3,
    });
    let sentence =
        "SHA-256 of 3 bytes: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let dir = folder_with(&[("c-hash.wasm", &example("c-hash"))]);
    for mirror_structured in [false, true] {
        if mirror_structured {
            support::write_file(
                dir.path(),
                "c-hash.toml",
                "[results]\nmirror-structured = true\n",
            );
        }
        for revision in ["2024-11-05", "2025-11-25"] {
            let mut server = Server::initialized(dir.path(), revision);
            let result = server.call("sha256_hash", json!({ "data": "abc" }));
            let content = result["content"].as_array().unwrap();
            assert_eq!(first_text(&result), sentence, "{result}");
            if mirror_structured {
                assert_eq!(content.len(), 2, "{revision}: {result}");
                let json: Value =
                    serde_json::from_str(content[1]["text"].as_str().unwrap()).unwrap();
                assert_eq!(json, structured, "{revision}: {result}");
            } else {
                assert_eq!(content.len(), 1, "{revision}: {result}");
            }
            let expected = (revision == "2025-11-25").then(|| structured.clone());
            assert_eq!(
                result.get("structuredContent").cloned(),
                expected,
                "{result}"
            );
        }
    }
}

#[test]
fn progress_notifications_follow_the_progress_token() {
    let mut server = server();
    let id = server.send_request(
        "tools/call",
        json!({ "name": "countdown", "arguments": { "steps": 3, "delay_ms": 1 },
                "_meta": { "progressToken": "tok-1" } }),
    );
    let response = server.response_to(&id);
    assert_eq!(response["result"]["isError"], false, "{response}");
    let progress: Vec<&Value> = server
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{:?}", server.notifications);
    for (i, note) in progress.iter().enumerate() {
        assert_eq!(note["params"]["progressToken"], "tok-1");
        assert_eq!(note["params"]["progress"], (i + 1) as f64);
        assert_eq!(note["params"]["total"], 3.0);
    }
    // No token, no progress.
    server.notifications.clear();
    server.call("countdown", json!({ "steps": 2, "delay_ms": 1 }));
    assert!(
        server
            .notifications
            .iter()
            .all(|n| n["method"] != "notifications/progress")
    );
}

#[test]
fn plugin_logs_reach_the_client_at_or_above_its_level() {
    let mut server = server();
    server.call("log_levels", json!({}));
    assert!(
        server.notifications.is_empty(),
        "no level set yet: {:?}",
        server.notifications
    );
    server.result("logging/setLevel", json!({ "level": "warning" }));
    server.call("log_levels", json!({}));
    let levels: Vec<&str> = server
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .map(|n| n["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["warning", "error"]);
    assert!(
        server.stderr().contains("log_levels"),
        "plugin logs go to stderr too"
    );
}

#[test]
fn a_cancelled_call_gets_no_response_and_the_next_call_works() {
    let mut server = server();
    let id = server.send_request(
        "tools/call",
        json!({ "name": "sleep", "arguments": { "ms": 20000 } }),
    );
    std::thread::sleep(Duration::from_millis(200));
    server.send(
        &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": { "requestId": id, "reason": "user pressed stop" } }),
    );
    let next = server.send_request(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 1 } }),
    );
    let response = server.recv();
    assert_eq!(
        response["id"], next,
        "only the second call answers: {response}"
    );
    assert!(
        server.recv_within(Duration::from_millis(500)).is_none(),
        "the cancelled call answered"
    );
}
