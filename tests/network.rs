//! Outgoing HTTP: allowed only to the hosts a manifest lists, checked on the
//! real binary against a real HTTP server on loopback.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use support::{Server, first_text, fixture, folder_with};

/// A one-page HTTP server on loopback; sends each request's Host header back
/// through the channel.
fn serve_hello() -> (u16, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (hosts, received) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut host = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("host:") {
                    host = value.trim().to_string();
                }
            }
            let _ = hosts.send(host);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    (port, received)
}

fn server_with_grant(allow: &str) -> (Server, tempfile::TempDir) {
    let dir = folder_with(&[("fetcher.wasm", &fixture("hostile-http"))]);
    std::fs::write(
        dir.path().join("fetcher.toml"),
        format!("[http]\nallow = [{allow}]\n"),
    )
    .unwrap();
    let server = Server::initialized(dir.path(), "2025-11-25");
    (server, dir)
}

#[test]
fn a_listed_host_is_reached_and_everything_else_is_refused() {
    let (port, hosts) = serve_hello();
    let (mut server, _dir) = server_with_grant(&format!("\"127.0.0.1:{port}\""));

    let ok = server.call(
        "fetch",
        json!({ "url": format!("http://127.0.0.1:{port}/hi") }),
    );
    assert_eq!(ok["isError"], false, "{ok}");
    assert!(first_text(&ok).contains("200"), "{ok}");
    assert!(first_text(&ok).contains("hello"), "{ok}");
    assert_eq!(
        hosts.recv_timeout(Duration::from_secs(5)).unwrap(),
        format!("127.0.0.1:{port}")
    );

    // Another port on the same host, and a name for the same address, are not listed.
    for url in [
        format!("http://127.0.0.1:{}/", port.wrapping_add(1).max(1)),
        format!("http://localhost:{port}/"),
    ] {
        let refused = server.call("fetch", json!({ "url": url }));
        assert_eq!(refused["isError"], true, "{url}: {refused}");
        assert!(
            hosts.recv_timeout(Duration::from_millis(300)).is_err(),
            "{url} reached the server"
        );
    }
    assert!(
        server.stderr().contains("not in the [http] allow list"),
        "{}",
        server.stderr()
    );
}

#[test]
fn a_wildcard_grant_never_reaches_loopback() {
    let (port, hosts) = serve_hello();
    // `*.localhost` is not an exact listing, so whatever it resolves to must be public.
    let (mut server, _dir) = server_with_grant("\"*.localhost\"");
    let refused = server.call(
        "fetch",
        json!({ "url": format!("http://corral.localhost:{port}/") }),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        hosts.recv_timeout(Duration::from_millis(300)).is_err(),
        "loopback was reached"
    );
}

#[test]
fn without_a_grant_an_http_plugin_does_not_load() {
    let dir = folder_with(&[("fetcher.wasm", &fixture("hostile-http"))]);
    let mut server = Server::initialized(dir.path(), "2025-11-25");
    assert!(server.all_tools().is_empty());
    let stderr = server.stderr();
    assert!(stderr.contains("wasi:http/outgoing-handler"), "{stderr}");
    assert!(stderr.contains("[http] allow"), "{stderr}");
}
