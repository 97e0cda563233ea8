//! Debian's `prometheus` on loopback for the observability suite: one of its
//! own per test, scraping one target every second with a generated
//! configuration and storage in a temporary folder, read back through its
//! HTTP query API; stopped when dropped. Also its `promtool`, which lints
//! metrics text and checks rule files.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::support::{PATIENCE, system_program};

/// The job every generated configuration scrapes its target as.
pub const JOB: &str = "corral";

pub struct Prometheus {
    child: Child,
    pub addr: SocketAddr,
    /// Holds the configuration, the TSDB and Prometheus's own log.
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Prometheus scraping `http://TARGET/metrics` (`target` as
    /// `host:port`) every second, with `Authorization: Bearer TOKEN` when
    /// `bearer` is given; returned once it is ready (`/-/ready`).
    pub fn scraping(target: SocketAddr, bearer: Option<&str>) -> Prometheus {
        Prometheus::start(target, bearer, None)
    }

    /// [`Prometheus::scraping`], evaluating the rules of `rule_file` (alerts
    /// and recording rules) every second too.
    pub fn start(target: SocketAddr, bearer: Option<&str>, rule_file: Option<&Path>) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let mut job = format!(
            "  - job_name: {JOB}\n    metrics_path: /metrics\n    scheme: http\n    \
             static_configs:\n      - targets: ['{target}']\n"
        );
        if let Some(token) = bearer {
            // A YAML single-quoted scalar: quotes doubled.
            let token = token.replace('\'', "''");
            job.push_str(&format!(
                "    authorization:\n      type: Bearer\n      credentials: '{token}'\n"
            ));
        }
        let rules = match rule_file {
            Some(file) => format!("rule_files:\n  - '{}'\n", file.display()),
            None => String::new(),
        };
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             {rules}scrape_configs:\n{job}"
        );
        let config_file = dir.path().join("prometheus.yml");
        std::fs::write(&config_file, &config).unwrap();
        let storage = dir.path().join("data");
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let port = free_port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let child = Command::new(system_program("prometheus", "prometheus"))
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!("--storage.tsdb.path={}", storage.display()))
            .arg(format!("--web.listen-address={addr}"))
            // Nothing of the operator's machine: no consoles, no retention
            // beyond the test.
            .arg("--storage.tsdb.retention.time=1h")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starting prometheus");
        let mut prometheus = Prometheus { child, addr, dir };
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok((200, _)) = prometheus.get("/-/ready") {
                break;
            }
            if let Some(status) = prometheus.child.try_wait().unwrap() {
                panic!(
                    "prometheus exited ({status}) before it was ready:\n{}",
                    prometheus.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "prometheus was not ready within {PATIENCE:?}:\n{}",
                prometheus.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        prometheus
    }

    /// What Prometheus logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// A GET on Prometheus's own HTTP API: status and body.
    fn get(&self, path_and_query: &str) -> std::io::Result<(u16, String)> {
        http_get(self.addr, path_and_query, &[])
    }

    /// The `data` of an instant query of `promql` (evaluated now); fails
    /// on an error answer.
    pub fn query(&self, promql: &str) -> Value {
        let path = format!("/api/v1/query?query={}", percent_encode(promql));
        let (status, body) = self
            .get(&path)
            .unwrap_or_else(|err| panic!("querying {promql:?}: {err}"));
        let answer: Value = serde_json::from_str(&body)
            .unwrap_or_else(|err| panic!("query {promql:?}: not JSON ({err}): {body}"));
        assert!(
            status == 200 && answer["status"] == "success",
            "query {promql:?}: {status} {body}"
        );
        answer["data"].clone()
    }

    /// The samples of an instant query's vector: each series' labels
    /// and value.
    pub fn samples(&self, promql: &str) -> Vec<(serde_json::Map<String, Value>, f64)> {
        let data = self.query(promql);
        assert_eq!(data["resultType"], "vector", "{promql}: {data}");
        data["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|series| {
                let labels = series["metric"].as_object().cloned().unwrap_or_default();
                let value = series["value"][1]
                    .as_str()
                    .and_then(|text| text.parse::<f64>().ok())
                    .unwrap_or_else(|| panic!("{promql}: no value in {series}"));
                (labels, value)
            })
            .collect()
    }

    /// The one value of a query that yields one series, or `None` when it
    /// yields none; fails on more than one.
    pub fn value(&self, promql: &str) -> Option<f64> {
        let samples = self.samples(promql);
        assert!(samples.len() <= 1, "{promql}: several series: {samples:?}");
        samples.first().map(|(_, value)| *value)
    }

    /// The `up` of the scraped target: `(up, when that sample was scraped)`,
    /// or `None` before the first scrape.
    pub fn up(&self) -> Option<(f64, SystemTime)> {
        let up = self.value(&format!("up{{job=\"{JOB}\"}}"))?;
        let at = self.value(&format!("timestamp(up{{job=\"{JOB}\"}})"))?;
        Some((up, UNIX_EPOCH + Duration::from_secs_f64(at)))
    }

    /// Waits until the target was scraped successfully (`up == 1`) by a
    /// scrape that began after `moment`: what it counted by `moment` is
    /// then what the queries see. Fails after [`PATIENCE`] with the
    /// target's last error.
    pub fn wait_for_scrape_after(&self, moment: SystemTime) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some((up, at)) = self.up()
                && up == 1.0
                && at > moment
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no successful scrape after {moment:?} within {PATIENCE:?}; targets: {}\n{}",
                self.targets(),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// [`Prometheus::wait_for_scrape_after`] now.
    pub fn wait_for_scrape(&self) {
        self.wait_for_scrape_after(SystemTime::now());
    }

    /// Every rule group Prometheus evaluates (`/api/v1/rules`: each
    /// rule's health, last error, state and evaluation time).
    pub fn rules(&self) -> Value {
        let (status, body) = self
            .get("/api/v1/rules")
            .unwrap_or_else(|err| panic!("GET /api/v1/rules: {err}"));
        assert_eq!(status, 200, "/api/v1/rules: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        answer["data"]["groups"].clone()
    }

    /// `/api/v1/targets`, as Prometheus answers it (the last scrape's
    /// error, health and time), for failure messages.
    pub fn targets(&self) -> String {
        match self.get("/api/v1/targets") {
            Ok((_, body)) => body,
            Err(err) => format!("(no answer: {err})"),
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A GET on a connection of its own (`Connection: close`), read to its
/// end: status and body (chunked bodies decoded). `headers` as `(name,
/// value)`.
pub fn http_get(
    addr: SocketAddr,
    path_and_query: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<(u16, String)> {
    http_get_answer(addr, path_and_query, headers).map(|answer| (answer.status, answer.body))
}

/// What [`http_get_answer`] got.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// [`http_get`], with the answer's headers.
pub fn http_get_answer(
    addr: SocketAddr,
    path_and_query: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Answer> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut request =
        format!("GET {path_and_query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let end = answer
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "no end of headers in {:?}",
                String::from_utf8_lossy(&answer)
            ))
        })?;
    let head = String::from_utf8_lossy(&answer[..end]).into_owned();
    let mut body = answer[end + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|status| status.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line in {head:?}")))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    if chunked {
        body = dechunk(&body)?;
    }
    Ok(Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// The data of a chunked body.
fn dechunk(mut body: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|window| window == b"\r\n")
            .ok_or_else(|| std::io::Error::other("a chunk without its size line"))?;
        let size = String::from_utf8_lossy(&body[..line_end]);
        let size = size.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| std::io::Error::other(format!("bad chunk size {size:?}")))?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(data);
        }
        if body.len() < size {
            return Err(std::io::Error::other("a chunk cut short"));
        }
        data.extend_from_slice(&body[..size]);
        body = body.get(size + 2..).unwrap_or_default();
    }
}

/// `text` percent-encoded for a URL's query (everything but unreserved
/// characters).
pub fn percent_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// Debian's `promtool` (from the `prometheus` package).
pub fn promtool() -> PathBuf {
    system_program("promtool", "prometheus")
}

/// `promtool check metrics` on `text` (the Prometheus text format, on its
/// stdin): its output; `status.success()` when it found no problem.
pub fn check_metrics(text: &str) -> Output {
    let mut child = Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running promtool check metrics");
    let mut stdin = child.stdin.take().unwrap();
    let text = text.to_owned();
    // Written on another thread: a long text may fill the pipe while
    // promtool's answer fills the other.
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().expect("writing to promtool");
    output
}

/// `promtool check rules FILE`: its output; `status.success()` when the
/// rules are valid.
pub fn check_rules(file: &Path) -> Output {
    Command::new(promtool())
        .args(["check", "rules"])
        .arg(file)
        .output()
        .expect("running promtool check rules")
}

/// `promtool test rules FILE`: the rules' unit tests (input series, the
/// alerts expected); `status.success()` when every one passed.
pub fn test_rules(file: &Path) -> Output {
    Command::new(promtool())
        .args(["test", "rules"])
        .arg(file)
        .output()
        .expect("running promtool test rules")
}
