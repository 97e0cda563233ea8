//! Plugin distribution (issue 18) through the ordinary client stack:
//! `corral push` and `corral pull` to a registry that is reached over HTTPS
//! through an HTTP CONNECT proxy (`HTTPS_PROXY`), whose certificate is
//! signed by a throwaway CA (tests/registry/test_ca.py) that Corral trusts
//! only through the system's usual variable, `SSL_CERT_FILE`.
//!
//! The registry's name, `registry.corral.test`, is known only to the proxy
//! in this file, which sends every tunnel to the real registry on loopback:
//! nothing resolves that name, so a request that did not go through the
//! proxy fails. Because the name is not a loopback address, Corral must speak
//! HTTPS to it (plain HTTP only with `--plain-http`).

#[path = "support/registry.rs"]
mod registry;
mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use registry::{PROXY_VARIABLES, Registry, python};
use support::{example, repo_root, test_cache_dir};

/// The registry's name in references: resolved by the proxy alone.
const NAME: &str = "registry.corral.test";

/// Variables that would change whom the children trust, removed like
/// [`PROXY_VARIABLES`]; each run sets the ones it wants on a clean slate.
const TRUST_VARIABLES: [&str; 2] = ["SSL_CERT_FILE", "SSL_CERT_DIR"];

/// A CA, and a certificate for [`NAME`] that it signed, in a temp folder.
struct TestCa {
    dir: tempfile::TempDir,
}

impl TestCa {
    fn new() -> TestCa {
        let dir = tempfile::tempdir().unwrap();
        let output = Command::new(python())
            .arg(repo_root().join("tests/registry/test_ca.py"))
            .arg(dir.path())
            .arg(NAME)
            .stdin(Stdio::null())
            .output()
            .expect("running test_ca.py");
        assert!(
            output.status.success(),
            "test_ca.py failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        TestCa { dir }
    }

    fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn cert(&self) -> PathBuf {
        self.dir.path().join("leaf.pem")
    }

    fn key(&self) -> PathBuf {
        self.dir.path().join("leaf.key")
    }
}

/// What the proxy lets through.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `CONNECT NAME:443` becomes a tunnel to the registry; anything else
    /// is refused with 400 (as an HTTPS proxy that only tunnels).
    Tunnel,
    /// A request in absolute form (`GET http://NAME/v2/ HTTP/1.1`, what a
    /// client sends to an HTTP proxy) is passed on to the registry with the
    /// rest of its connection; `CONNECT` is refused with 400.
    Forward,
}

/// A tiny HTTP proxy on a free loopback port that knows one host, [`NAME`],
/// and sends it to `upstream`; it records the first line of every request
/// it is sent (`CONNECT NAME:443`, `GET http://NAME/v2/`).
struct Proxy {
    addr: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(upstream: &str, mode: Mode) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (record, upstream) = (seen.clone(), upstream.to_string());
        // The listener lives until the test binary exits; each test has its
        // own, on its own port.
        thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let (record, upstream) = (record.clone(), upstream.clone());
                thread::spawn(move || serve(client, &upstream, mode, &record));
            }
        });
        Proxy { addr, seen }
    }

    /// `http://127.0.0.1:PORT`, for `HTTPS_PROXY` or `HTTP_PROXY`.
    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests seen so far, as `METHOD TARGET`.
    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// One client connection to the proxy.
fn serve(mut client: TcpStream, upstream: &str, mode: Mode, seen: &Mutex<Vec<String>>) {
    client
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // The request's head, byte by byte: nothing past it may be consumed.
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 || client.read(&mut byte).unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let mut words = text.lines().next().unwrap_or("").split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    seen.lock().unwrap().push(format!("{method} {target}"));

    let refuse = |mut client: TcpStream, why: &str| {
        let _ = write!(
            client,
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{why}",
            why.len()
        );
    };
    let known = match mode {
        Mode::Tunnel if method == "CONNECT" => target == format!("{NAME}:443"),
        Mode::Forward if method != "CONNECT" => {
            target.starts_with(&format!("http://{NAME}/"))
                || target.starts_with(&format!("http://{NAME}:80/"))
        }
        Mode::Tunnel => return refuse(client, "this proxy only tunnels (CONNECT)"),
        Mode::Forward => return refuse(client, "this proxy does not tunnel (no CONNECT)"),
    };
    if !known {
        return refuse(client, "unknown host");
    }
    let Ok(mut server) = TcpStream::connect(upstream) else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    let sent = match mode {
        Mode::Tunnel => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n"),
        Mode::Forward => server.write_all(&head),
    };
    if sent.is_err() {
        return;
    }
    client.set_read_timeout(None).unwrap();
    pipe(client, server);
}

/// Copies bytes both ways until each side has closed its half.
fn pipe(client: TcpStream, server: TcpStream) {
    let (mut client_in, mut server_out) =
        (client.try_clone().unwrap(), server.try_clone().unwrap());
    let (mut server_in, mut client_out) = (server, client);
    let up = thread::spawn(move || {
        let _ = std::io::copy(&mut client_in, &mut server_out);
        let _ = server_out.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut server_in, &mut client_out);
    let _ = client_out.shutdown(Shutdown::Write);
    let _ = up.join();
}

/// `corral ARGS` with only the network variables in `env` (on top of
/// [`PROXY_VARIABLES`] and [`TRUST_VARIABLES`] removed), no docker credentials, and the tests'
/// compile cache.
fn corral(args: &[&str], env: &[(&str, &str)]) -> Output {
    let docker = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_corral"));
    command.args(args);
    for name in PROXY_VARIABLES.iter().chain(&TRUST_VARIABLES) {
        command.env_remove(name);
    }
    command
        .env("DOCKER_CONFIG", docker.path())
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    command
        .output()
        .unwrap_or_else(|err| panic!("running corral {args:?}: {err}"))
}

fn text(output: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Every file in `dir` (names and contents), to see that nothing changed.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Push and pull over HTTPS through a CONNECT proxy, trusting the test CA
/// through `SSL_CERT_FILE`; without it, the registry's certificate is
/// refused and the plugin folder is left as it was.
#[test]
fn push_and_pull_over_https_through_a_connect_proxy() {
    let ca = TestCa::new();
    let registry = Registry::start_tls(&ca.cert(), &ca.key());
    let proxy = Proxy::start(&registry.addr(), Mode::Tunnel);
    let (url, ca_file) = (proxy.url(), ca.ca());
    let trusted = [
        ("HTTPS_PROXY", url.as_str()),
        ("SSL_CERT_FILE", ca_file.to_str().unwrap()),
    ];
    let source = example("calc");
    let reference = format!("{NAME}/demo/calc:1");

    let pushed = corral(&["push", source.to_str().unwrap(), &reference], &trusted);
    assert!(
        pushed.status.success(),
        "push failed: {}\nregistry log:\n{}",
        text(&pushed),
        registry.log()
    );
    let pinned = String::from_utf8_lossy(&pushed.stdout).trim().to_string();
    assert!(
        pinned.starts_with(&format!("{NAME}/demo/calc@sha256:")),
        "{}",
        text(&pushed)
    );

    let dir = tempfile::tempdir().unwrap();
    let pulled = corral(
        &["pull", &reference, dir.path().to_str().unwrap(), "--yes"],
        &trusted,
    );
    assert!(pulled.status.success(), "pull failed: {}", text(&pulled));
    assert_eq!(
        std::fs::read(dir.path().join("calc.wasm")).unwrap(),
        std::fs::read(&source).unwrap(),
        "the pulled plugin differs from the pushed one"
    );
    let lock = std::fs::read_to_string(dir.path().join("corral.lock")).unwrap();
    assert!(lock.contains(NAME), "{lock}");

    // Every request went through a tunnel to the registry's name.
    let seen = proxy.seen();
    assert!(!seen.is_empty(), "the proxy saw no request");
    assert!(
        seen.iter()
            .all(|line| *line == format!("CONNECT {NAME}:443")),
        "{seen:?}"
    );

    // Without the CA, the same pull through the same proxy is refused for
    // the certificate, and the folder (with the earlier pull) is untouched.
    let before = snapshot(dir.path());
    let connects = proxy.seen().len();
    let untrusted = [("HTTPS_PROXY", url.as_str())];
    let refused = corral(
        &["pull", &reference, dir.path().to_str().unwrap(), "--yes"],
        &untrusted,
    );
    let stderr = String::from_utf8_lossy(&refused.stderr).to_string();
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        stderr.contains(&format!("corral: cannot pull {reference}:")),
        "{}",
        text(&refused)
    );
    assert!(
        stderr.contains(&format!(
            "the TLS certificate of {NAME} is not signed by an authority this machine trusts"
        )) && stderr.contains("UnknownIssuer")
            && stderr.contains("SSL_CERT_FILE"),
        "the error does not say the certificate was refused, nor what to do: {}",
        text(&refused)
    );
    // A refused certificate is not retried: one connection for the
    // client's probe of /v2/ and one for the manifest (five with retries).
    let tries = proxy.seen().len() - connects;
    assert!(
        (1..=2).contains(&tries),
        "{:?}\n{}",
        proxy.seen(),
        text(&refused)
    );
    assert_eq!(
        snapshot(dir.path()),
        before,
        "a refused pull changed the folder"
    );
}

/// `--plain-http` for a registry that is not on this machine, through an
/// HTTP proxy (`HTTP_PROXY`): it works only with the flag; without it Corral
/// speaks HTTPS, which this proxy does not tunnel.
#[test]
fn plain_http_through_an_http_proxy_only_when_asked() {
    let registry = Registry::start();
    let proxy = Proxy::start(&registry.addr(), Mode::Forward);
    let url = proxy.url();
    let env = [("HTTP_PROXY", url.as_str()), ("HTTPS_PROXY", url.as_str())];
    let source = example("calc");
    let reference = format!("{NAME}/demo/calc:plain");

    // Without the flag: HTTPS, so a CONNECT, which this proxy refuses.
    let refused = corral(&["push", source.to_str().unwrap(), &reference], &env);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        proxy.seen().iter().all(|line| line.starts_with("CONNECT ")),
        "{:?}",
        proxy.seen()
    );
    assert_eq!(
        registry.get("/v2/demo/calc/tags/list").0,
        404,
        "the push without --plain-http reached the registry"
    );

    let pushed = corral(
        &["push", source.to_str().unwrap(), &reference, "--plain-http"],
        &env,
    );
    assert!(
        pushed.status.success(),
        "push failed: {}\nregistry log:\n{}",
        text(&pushed),
        registry.log()
    );
    let dir = tempfile::tempdir().unwrap();
    let pulled = corral(
        &[
            "pull",
            &reference,
            dir.path().to_str().unwrap(),
            "--yes",
            "--plain-http",
        ],
        &env,
    );
    assert!(pulled.status.success(), "pull failed: {}", text(&pulled));
    assert_eq!(
        std::fs::read(dir.path().join("calc.wasm")).unwrap(),
        std::fs::read(&source).unwrap()
    );
    let forwarded: Vec<String> = proxy
        .seen()
        .into_iter()
        .filter(|line| !line.starts_with("CONNECT "))
        .collect();
    assert!(!forwarded.is_empty(), "{:?}", proxy.seen());
    assert!(
        forwarded
            .iter()
            .all(|line| line.contains(&format!(" http://{NAME}/v2/"))),
        "{forwarded:?}"
    );
}
