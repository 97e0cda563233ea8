//! Debian's `redis-server` on loopback for the state suites: one of its
//! own per test, in memory only (the suites test Corral's durability, not
//! Redis's), stopped when dropped.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::system_program;

pub struct RedisServer {
    child: Child,
    pub port: u16,
    /// TLS only (`rediss://localhost`): the certificate and its key.
    tls: Option<(PathBuf, PathBuf)>,
}

impl RedisServer {
    /// A server on a free loopback port, once it accepts connections.
    pub fn start() -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        RedisServer::on(port, None)
    }

    /// A server that speaks TLS only, as `localhost`, with the certificate
    /// `cert` and its key `key`.
    pub fn start_tls(cert: &Path, key: &Path) -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        RedisServer::on(port, Some((cert.to_path_buf(), key.to_path_buf())))
    }

    /// A server on `port` (a new one where an earlier one was stopped).
    fn on(port: u16, tls: Option<(PathBuf, PathBuf)>) -> RedisServer {
        let mut command = Command::new(system_program("redis-server", "redis-server"));
        command.args([
            "--bind",
            "127.0.0.1",
            "-::1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]);
        match &tls {
            None => command.args(["--port", &port.to_string()]),
            Some((cert, key)) => command
                .args(["--port", "0", "--tls-port", &port.to_string()])
                .arg("--tls-cert-file")
                .arg(cert)
                .arg("--tls-key-file")
                .arg(key)
                .args(["--tls-auth-clients", "no"]),
        };
        let child = command
            .stdout(Stdio::null())
            .spawn()
            .expect("starting redis-server");
        let server = RedisServer { child, port, tls };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// Stops the server (SIGKILL: it keeps nothing on disk anyway).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Freezes the server (SIGSTOP): connections stay open, and nothing
    /// is answered until [`RedisServer::resume`].
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// A new, empty server where this one was.
    pub fn restart(&mut self) {
        self.stop();
        *self = RedisServer::on(self.port, self.tls.take());
    }

    /// The `--state` of a store on this server.
    pub fn url(&self) -> String {
        match self.tls {
            None => format!("redis://127.0.0.1:{}/0", self.port),
            Some(_) => format!("rediss://localhost:{}/0", self.port),
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
