//! nginx (the Debian package, installed by scripts/system-packages) as a
//! child process in front of `corral serve --http` replicas, with the
//! configuration of tests/http/nginx.conf.template, on a port chosen before
//! it starts (a resource server's URL names the proxy's port, so the
//! replicas must know it first).
#![allow(dead_code)] // each test binary uses a different part of this module

use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{repo_root, system_program};

/// nginx, stopped when dropped.
pub struct Nginx {
    child: Child,
    prefix: tempfile::TempDir,
    pub port: u16,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers (a SIGKILL would orphan them).
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Nginx {
    /// Starts nginx on 127.0.0.1:`port` in front of `replicas`, and waits
    /// until it accepts connections.
    pub fn start(port: u16, replicas: &[SocketAddr]) -> Nginx {
        let binary = system_program("nginx", "nginx");
        let prefix = tempfile::tempdir().unwrap();
        let servers: String = replicas
            .iter()
            .map(|replica| format!("        server {replica};\n"))
            .collect();
        let template =
            std::fs::read_to_string(repo_root().join("tests/http/nginx.conf.template")).unwrap();
        let config = template
            .replace("@PREFIX@", prefix.path().to_str().unwrap())
            .replace("@PORT@", &port.to_string())
            .replace("@SERVERS@\n", &servers);
        let config_path = prefix.path().join("nginx.conf");
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new(&binary)
            .arg("-p")
            .arg(prefix.path())
            .arg("-c")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting nginx");
        let nginx = Nginx {
            child,
            prefix,
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not start:\n{}",
                nginx.error_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        nginx
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.prefix.path().join("error.log")).unwrap_or_default()
    }
}
