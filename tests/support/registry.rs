//! Test support for plugin distribution: a real OCI registry on loopback (the
//! Distribution registry, Debian's `docker-registry`, installed by
//! scripts/system-packages) as a child process, a tiny raw HTTP client
//! to look at what was pushed, and the independent cosign-format test vectors
//! (tests/registry/cosign_vectors.py, in the venv of
//! tests/registry/setup-python).
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine;

use crate::support::{repo_root, run_setup, system_program};

/// How long the registry may take to start listening.
const STARTUP: Duration = Duration::from_secs(10);

/// The manifest types a registry client accepts (OCI first).
const MANIFEST_TYPES: &str = "application/vnd.oci.image.manifest.v1+json, \
     application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json";

/// Proxy variables in both cases, removed from every child: the tests
/// decide which proxy, if any, a child goes through.
pub const PROXY_VARIABLES: [&str; 8] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
];

/// A running `docker-registry serve` on a free loopback port, with its
/// storage in a temporary folder; killed when dropped.
pub struct Registry {
    child: Child,
    dir: tempfile::TempDir,
    addr: String,
    credentials: Option<(String, String)>,
    log: Arc<Mutex<String>>,
}

impl Registry {
    /// A registry anyone may push to and pull from.
    pub fn start() -> Registry {
        Registry::start_inner(None)
    }

    /// A registry anyone may use that speaks only HTTPS, with the server
    /// certificate `cert` and its key `key` (PEM files). [`Registry::get`]
    /// speaks plain HTTP, so it cannot talk to this one.
    pub fn start_tls(cert: &Path, key: &Path) -> Registry {
        Registry::start_configured(None, Some((cert, key)))
    }

    /// A registry that asks for HTTP basic auth (an htpasswd file with one
    /// user) on every request.
    pub fn start_with_auth(user: &str, password: &str) -> Registry {
        Registry::start_inner(Some((user.to_string(), password.to_string())))
    }

    fn start_inner(credentials: Option<(String, String)>) -> Registry {
        Registry::start_configured(credentials, None)
    }

    fn start_configured(
        credentials: Option<(String, String)>,
        tls: Option<(&Path, &Path)>,
    ) -> Registry {
        let binary = system_program("docker-registry", "docker-registry");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("storage");
        std::fs::create_dir(&root).unwrap();
        let mut config = format!(
            "version: 0.1\n\
             log: {{ level: info, accesslog: {{ disabled: true }} }}\n\
             storage: {{ filesystem: {{ rootdirectory: \"{}\" }}, delete: {{ enabled: true }} }}\n\
             # Port 0: the registry logs the port it got.\n\
             http: {{ addr: \"127.0.0.1:0\", secret: corral-test{} }}\n",
            root.display(),
            tls.map(|(cert, key)| format!(
                ", tls: {{ certificate: \"{}\", key: \"{}\" }}",
                cert.display(),
                key.display()
            ))
            .unwrap_or_default()
        );
        if let Some((user, password)) = &credentials {
            let htpasswd = dir.path().join("htpasswd");
            std::fs::write(&htpasswd, htpasswd_line(user, password)).unwrap();
            config.push_str(&format!(
                "auth: {{ htpasswd: {{ realm: corral-test, path: \"{}\" }} }}\n",
                htpasswd.display()
            ));
        }
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).unwrap();

        let mut command = Command::new(&binary);
        command
            .arg("serve")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // The registry reads REGISTRY_* variables as overrides of its
        // configuration (REGISTRY_HTTP_ADDR, ...): only the file counts here.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("REGISTRY_") {
                command.env_remove(name);
            }
        }
        without_proxies(&mut command);
        let mut child = command
            .spawn()
            .unwrap_or_else(|err| panic!("starting {}: {err}", binary.display()));

        // The log goes to stderr; the line `listening on 127.0.0.1:PORT`
        // (`listening on 127.0.0.1:PORT, tls` with TLS) names the port. Keep draining stderr after it, or the registry
        // would block on a full pipe.
        let log = Arc::new(Mutex::new(String::new()));
        let (sink, (tx, rx)) = (log.clone(), channel());
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.split("listening on ").nth(1) {
                    let addr: String = rest
                        .chars()
                        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != ',')
                        .collect();
                    let _ = tx.send(addr);
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let addr = match rx.recv_timeout(STARTUP) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                // The reader thread may still be copying the last lines.
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "{} did not report a listening address within {STARTUP:?}; its log:\n{}",
                    binary.display(),
                    log.lock().unwrap()
                );
            }
        };
        Registry {
            child,
            dir,
            addr,
            credentials,
            log,
        }
    }

    /// `127.0.0.1:PORT`, the registry part of references.
    pub fn addr(&self) -> String {
        self.addr.clone()
    }

    /// The registry's log so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// `user:password` when the registry asks for basic auth (the form
    /// cosign_vectors.py reads from REGISTRY_AUTH).
    pub fn auth_env(&self) -> Option<String> {
        self.credentials
            .as_ref()
            .map(|(user, password)| format!("{user}:{password}"))
    }

    /// Where the registry stores the blob `sha256:HEX` on disk (to tamper
    /// with it behind the registry's back).
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
        self.dir
            .path()
            .join("storage/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// `GET path` (e.g. `/v2/`, `/v2/REPO/manifests/TAG`), accepting
    /// manifests, with the registry's credentials if it has some: the
    /// status, the headers and the body.
    pub fn get(&self, path: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let mut headers = vec![("Accept".to_string(), MANIFEST_TYPES.to_string())];
        if let Some(auth) = self.auth_env() {
            let encoded = base64::engine::general_purpose::STANDARD.encode(auth);
            headers.push(("Authorization".to_string(), format!("Basic {encoded}")));
        }
        raw_request(&self.addr, "GET", path, &headers)
    }

    /// [`Registry::get`] without credentials.
    pub fn get_anonymous(&self, path: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let headers = vec![("Accept".to_string(), MANIFEST_TYPES.to_string())];
        raw_request(&self.addr, "GET", path, &headers)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        // One process, no children of its own: SIGKILL leaves nothing behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`), the
/// response read to the end; a chunked body is decoded.
fn raw_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(String, String)],
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut stream =
        TcpStream::connect(addr).unwrap_or_else(|err| panic!("connecting to {addr}: {err}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();

    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of headers in: {}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("bad status line: {status_line}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_string(), value.trim().to_string()))
        .collect();
    let chunked = headers.iter().any(|(name, value)| {
        name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    (status, headers, body)
}

/// A chunked body's content.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size_text = String::from_utf8_lossy(&raw[..end]).to_string();
        let size_hex = size_text.split(';').next().unwrap().trim();
        let size = usize::from_str_radix(size_hex, 16).expect("chunk size");
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[end + 2 + size + 2..];
    }
}

/// A bcrypt htpasswd line (the only hash the registry accepts), made with
/// Python's `crypt` (Python 3.11, as in Debian 12). The lowest cost (2^4
/// rounds): the registry checks the password on every request, and at the
/// default cost that takes a quarter of a second each.
fn htpasswd_line(user: &str, password: &str) -> String {
    let output = Command::new(python())
        .args([
            "-W",
            "ignore::DeprecationWarning",
            "-c",
            "import crypt, sys; print(sys.argv[1] + ':' + crypt.crypt(sys.argv[2], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))",
            user,
            password,
        ])
        .output()
        .expect("running python for htpasswd");
    assert!(
        output.status.success(),
        "making an htpasswd line failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = String::from_utf8(output.stdout).unwrap();
    assert!(line.contains(":$2"), "not a bcrypt htpasswd line: {line}");
    line
}

fn without_proxies(command: &mut Command) {
    for name in PROXY_VARIABLES {
        command.env_remove(name);
    }
}

/// The python of the cosign test vectors' venv (tests/registry/setup-python),
/// set up once per test binary.
pub fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let lines = run_setup("tests/registry/setup-python");
            PathBuf::from(lines.first().expect("the venv's python").trim())
        })
        .clone()
}

/// tests/registry/cosign_vectors.py.
pub fn vectors_script() -> PathBuf {
    repo_root().join("tests/registry/cosign_vectors.py")
}

/// Runs `cosign_vectors.py ARGS` (see its docstring) with an empty
/// COSIGN_PASSWORD and no registry credentials.
pub fn vectors(args: &[&str]) -> Output {
    vectors_with_env(args, &[])
}

/// [`vectors`] with environment variables (`COSIGN_PASSWORD`,
/// `REGISTRY_AUTH=user:password`, ...), on top of a clean slate for those.
pub fn vectors_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(python());
    command
        .arg(vectors_script())
        .args(args)
        .env_remove("COSIGN_PASSWORD")
        .env_remove("REGISTRY_AUTH")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    without_proxies(&mut command);
    command
        .output()
        .unwrap_or_else(|err| panic!("running cosign_vectors.py: {err}"))
}

/// Like [`vectors_with_env`], failing with its stderr unless it succeeds;
/// returns its stdout.
pub fn vectors_ok(args: &[&str], env: &[(&str, &str)]) -> String {
    let output = vectors_with_env(args, env);
    assert!(
        output.status.success(),
        "cosign_vectors.py {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}
