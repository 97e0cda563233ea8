//! Plugin distribution (issue 18): `corral push`, `corral pull` and
//! `corral keygen` against a real OCI registry on loopback (the Distribution
//! registry, Debian's `docker-registry`, installed by
//! scripts/system-packages), with cosign-format signatures checked
//! against an independent implementation of that format
//! (tests/registry/cosign_vectors.py).
//!
//! Every test has its own registry and folders. Every `corral` it runs sees
//! no proxy variables, no COSIGN_PASSWORD unless given, and an empty
//! DOCKER_CONFIG unless the test sets one, so that nothing of the
//! developer's own setup (docker logins above all) leaks in.

#[path = "support/registry.rs"]
mod registry;
mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use registry::{PROXY_VARIABLES, Registry, vectors_ok, vectors_with_env};
use serde_json::{Value, json};
use support::{PATIENCE, Server, example, first_text, test_cache_dir};

/// The spec's media types and annotation keys, written here as literals
/// (not the product's constants): what other tools expect.
const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
const WASM_LAYER: &str = "application/wasm";
const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";
const PLUGIN_MANIFEST_ANNOTATION: &str = "dev.corral.plugin.manifest";
const CONTRACT_EXPORT: &str = "corral:plugin/tools@0.3.0";

/// The password of every key the tests make (COSIGN_PASSWORD).
const PASSWORD: &str = "correct horse battery";
/// The one user of the registries that ask for credentials.
const USER: &str = "alice";
const SECRET: &str = "s3cret";

/// A manifest granting authority (a read-only directory), so that pulling
/// it needs consent (`--yes` without a terminal).
const GRANTING_MANIFEST: &str = "# calc, with a directory it does not need\n\
    [limits]\n\
    fuel = 1_000_000_000\n\
    \n\
    [[dirs]]\n\
    host = \"data\"\n\
    guest = \"/data\"\n\
    mode = \"ro\"\n";

const CALC_TOOLS: [&str; 6] = ["add", "subtract", "multiply", "divide", "power", "sqrt"];
const LIST_CHANGED: &str = "notifications/tools/list_changed";

/// How long any one `corral` command may take before the test fails.
const COMMAND_BOUND: Duration = Duration::from_secs(120);

// --- running corral ---------------------------------------------------------

/// What one `corral` run did.
struct Run {
    what: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Run {
    /// Everything about the run, for assertion messages.
    fn describe(&self) -> String {
        format!(
            "`corral {}` exited {:?} after {:?}\n--- stdout:\n{}\n--- stderr:\n{}",
            self.what, self.code, self.took, self.stdout, self.stderr
        )
    }

    /// Fails unless the run succeeded.
    fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "expected success:\n{}", self.describe());
        self
    }

    /// Fails unless the run exited 1 and its stderr names `reference` and
    /// holds every one of `reasons`.
    fn refused(self, reference: &str, reasons: &[&str]) -> Run {
        assert_eq!(self.code, Some(1), "expected exit 1:\n{}", self.describe());
        assert!(
            self.stderr.contains(reference),
            "stderr does not name {reference}:\n{}",
            self.describe()
        );
        for reason in reasons {
            assert!(
                self.stderr.contains(reason),
                "stderr does not say {reason:?}:\n{}",
                self.describe()
            );
        }
        self
    }
}

/// A `corral` started and not yet waited for.
struct Started {
    child: std::process::Child,
    what: String,
    started: Instant,
    /// The empty DOCKER_CONFIG, kept while corral runs.
    _docker_config: tempfile::TempDir,
}

/// Starts `corral ARGS` with `env` on top of a clean slate (no proxies, no
/// COSIGN_PASSWORD, an empty DOCKER_CONFIG unless `env` sets one), its
/// standard input a pipe when `stdin` (none otherwise).
fn start_corral(args: &[&str], env: &[(&str, &str)], stdin: bool) -> Started {
    let empty_docker_config = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_corral"));
    command
        .args(args)
        .env_remove("COSIGN_PASSWORD")
        .env("DOCKER_CONFIG", empty_docker_config.path())
        .env("CORRAL_CACHE_DIR", test_cache_dir())
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in PROXY_VARIABLES {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    Started {
        started: Instant::now(),
        child: command.spawn().expect("starting corral"),
        what: args.join(" "),
        _docker_config: empty_docker_config,
    }
}

impl Started {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Writes `stdin` (if any) and waits, at most [`COMMAND_BOUND`], for
    /// corral to exit.
    fn finish(mut self, stdin: Option<&str>) -> Run {
        if let Some(text) = stdin {
            let mut pipe = self.child.stdin.take().unwrap();
            // corral may exit before reading it all (a refusal): that is fine.
            let _ = pipe.write_all(text.as_bytes());
        }
        let pid = self.pid();
        let child = self.child;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let output = match rx.recv_timeout(COMMAND_BOUND) {
            Ok(output) => output.expect("waiting for corral"),
            Err(_) => {
                // SAFETY: kill(2) of our own child, still unreaped (the
                // waiting thread has not returned).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                panic!(
                    "`corral {}` did not finish within {COMMAND_BOUND:?}",
                    self.what
                );
            }
        };
        Run {
            what: self.what,
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            took: self.started.elapsed(),
        }
    }
}

/// Runs `corral ARGS` with `env` on top of a clean slate (see
/// [`start_corral`]) and `stdin` as its standard input (none when `None`).
fn corral_with(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
    start_corral(args, env, stdin.is_some()).finish(stdin)
}

fn corral(args: &[&str]) -> Run {
    corral_with(args, &[], None)
}

fn text(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// `sha256:HEX` of `bytes`, by coreutils (not by the product's code).
fn sha256(bytes: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("running sha256sum");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let output = child.wait_with_output().unwrap();
    let line = String::from_utf8(output.stdout).unwrap();
    format!("sha256:{}", line.split_whitespace().next().unwrap())
}

// --- a registry and its folders -----------------------------------------------

/// One test's registry, with a work folder for sources, keys and plugin
/// folders.
struct Fixture {
    registry: Registry,
    work: tempfile::TempDir,
    sources: std::cell::Cell<usize>,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture::on(Registry::start())
    }

    fn on(registry: Registry) -> Fixture {
        Fixture {
            registry,
            work: tempfile::tempdir().unwrap(),
            sources: std::cell::Cell::new(0),
        }
    }

    /// `127.0.0.1:PORT/REPO:TAG` for `repo_tag`.
    fn reference(&self, repo_tag: &str) -> String {
        format!("{}/{repo_tag}", self.registry.addr())
    }

    /// A new empty folder in the work folder.
    fn folder(&self, name: &str) -> PathBuf {
        let dir = self.work.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        dir
    }

    /// A fresh copy of the example plugin `name` as NAME.wasm in a folder
    /// of its own, with `manifest` as NAME.toml if given.
    fn plugin(&self, name: &str, manifest: Option<&str>) -> PathBuf {
        let n = self.sources.get() + 1;
        self.sources.set(n);
        let dir = self.folder(&format!("source-{n}"));
        let wasm = dir.join(format!("{name}.wasm"));
        std::fs::copy(example(name), &wasm).unwrap();
        if let Some(text) = manifest {
            std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
        }
        wasm
    }

    /// `corral keygen` in the work folder: the .key and .pub files and the
    /// fingerprint it printed.
    fn keygen(&self, name: &str) -> (PathBuf, PathBuf, String) {
        let base = self.work.path().join(name);
        let run = corral_with(
            &["keygen", text(&base)],
            &[("COSIGN_PASSWORD", PASSWORD)],
            None,
        )
        .ok();
        let fingerprint = run
            .stdout
            .split_once('(')
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(inside, _)| inside.to_string())
            .unwrap_or_else(|| panic!("no fingerprint printed:\n{}", run.describe()));
        let key = base.with_extension("key");
        let public = base.with_extension("pub");
        (key, public, fingerprint)
    }

    /// A key pair made by the Python test vectors (not by Corral).
    fn python_keygen(&self, name: &str) -> (PathBuf, PathBuf) {
        let base = self.work.path().join(name);
        vectors_ok(&["keygen", text(&base)], &[("COSIGN_PASSWORD", PASSWORD)]);
        (base.with_extension("key"), base.with_extension("pub"))
    }

    /// calc with `manifest` as calc.toml, pushed to `demo/calc:1` signed
    /// with `key`; the pinned reference.
    fn push_signed_calc(&self, manifest: &str, key: &Path) -> String {
        self.push(
            &self.plugin("calc", Some(manifest)),
            "demo/calc:1",
            Some(key),
        )
    }

    /// `corral push FILE REF [--key KEY]`, which must succeed; the pinned
    /// reference it printed.
    fn push(&self, wasm: &Path, repo_tag: &str, key: Option<&Path>) -> String {
        let reference = self.reference(repo_tag);
        let mut args = vec!["push", text(wasm), &reference];
        if let Some(key) = key {
            args.extend(["--key", text(key)]);
        }
        let run = corral_with(&args, &[("COSIGN_PASSWORD", PASSWORD)], None).ok();
        let pinned = run.stdout.trim().to_string();
        let repository = repo_tag.split(':').next().unwrap();
        let prefix = format!("{}/{repository}@sha256:", self.registry.addr());
        assert!(
            pinned.starts_with(&prefix) && pinned.len() == prefix.len() + 64,
            "stdout is not the pinned reference {prefix}…:\n{}",
            run.describe()
        );
        pinned
    }

    /// `corral pull REF DIR EXTRA...`.
    fn pull(&self, reference: &str, dir: &Path, extra: &[&str]) -> Run {
        self.pull_with(reference, dir, extra, &[])
    }

    /// [`Fixture::pull`] with environment variables.
    fn pull_with(&self, reference: &str, dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Run {
        corral_with(&pull_args(reference, dir, extra), env, None)
    }

    /// The parsed JSON of `GET path`, which must answer 200.
    fn get_json(&self, path: &str) -> Value {
        let (status, _, body) = self.registry.get(path);
        assert_eq!(
            status,
            200,
            "GET {path}: {}\nregistry log:\n{}",
            String::from_utf8_lossy(&body),
            self.registry.log()
        );
        serde_json::from_slice(&body).unwrap_or_else(|err| panic!("GET {path} is not JSON ({err})"))
    }

    /// Fails unless the tag `repo`:`tag` is absent (404).
    fn assert_not_pushed(&self, repo: &str, tag: &str) {
        let (status, _, body) = self.registry.get(&format!("/v2/{repo}/manifests/{tag}"));
        assert_eq!(
            status,
            404,
            "the tag {repo}:{tag} was pushed: {}",
            String::from_utf8_lossy(&body)
        );
    }

    /// A new folder `name` holding a docker config.json that logs in to
    /// this registry as `user` with `password` (for DOCKER_CONFIG).
    fn docker_config(&self, name: &str, user: &str, password: &str) -> PathBuf {
        let docker = self.folder(name);
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let config = json!({ "auths": { self.registry.addr(): { "auth": auth } } });
        std::fs::write(docker.join("config.json"), config.to_string()).unwrap();
        docker
    }

    /// The component layer's descriptor in the manifest `repo` `reference`.
    fn layer(&self, repo: &str, reference: &str) -> Value {
        let manifest = self.get_json(&format!("/v2/{repo}/manifests/{reference}"));
        manifest["layers"][0].clone()
    }
}

/// The digest part of a pinned reference `REG/REPO@sha256:HEX`.
fn digest_of(pinned: &str) -> &str {
    pinned.rsplit_once('@').expect("a pinned reference").1
}

/// The entry of `file` in DIR/corral.lock, read as plain text (`key =
/// "value"` lines under `[plugins."FILE"]`), independently of the product's
/// lock code.
fn lock_entry(dir: &Path, file: &str) -> BTreeMap<String, String> {
    let lock = std::fs::read_to_string(dir.join("corral.lock")).expect("corral.lock");
    assert!(
        lock.lines().any(|line| line.trim() == "version = 1"),
        "no `version = 1` in corral.lock:\n{lock}"
    );
    let header = format!("[plugins.\"{file}\"]");
    let mut lines = lock.lines().skip_while(|line| line.trim() != header);
    assert!(
        lines.next().is_some(),
        "no {header} in corral.lock:\n{lock}"
    );
    lines
        .take_while(|line| !line.trim_start().starts_with('['))
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| {
            let value = value.trim().trim_matches('"');
            (key.trim().to_string(), value.to_string())
        })
        .collect()
}

/// `entry[key]`, failing with the whole entry when it is missing.
fn field<'a>(entry: &'a BTreeMap<String, String>, key: &str) -> &'a str {
    entry
        .get(key)
        .unwrap_or_else(|| panic!("no `{key}` in the lock entry {entry:?}"))
}

/// Every file and folder under `dir` (hidden ones included), with the
/// bytes of the files.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(dir).unwrap().to_path_buf();
            if path.is_dir() {
                pending.push(path);
                found.insert(relative, None);
            } else {
                found.insert(relative, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    found
}

/// A registry, a key pair ("mine") and a plugin folder that is not empty:
/// textstats, pulled before (signed, so verified, and pinned in
/// corral.lock), and a hidden file, so that "the folder is unchanged" says
/// something. Returns the fixture, the key, the public key and the folder.
fn populated() -> (Fixture, PathBuf, PathBuf, PathBuf) {
    let fx = Fixture::new();
    let (key, public, _) = fx.keygen("mine");
    let pinned = fx.push(
        &fx.plugin("textstats", None),
        "earlier/textstats:1",
        Some(&key),
    );
    let dir = fx.folder("plugins");
    std::fs::write(dir.join(".hidden"), "kept as it is\n").unwrap();
    fx.pull(&pinned, &dir, &["--verify-key", text(&public)])
        .ok();
    assert!(dir.join("corral.lock").is_file());
    (fx, key, public, dir)
}

/// `corral pull REF DIR ARGS` must exit 1 naming `reference` and every one
/// of `reasons`, and leave DIR byte for byte as it was.
fn refused_unchanged(
    fx: &Fixture,
    reference: &str,
    dir: &Path,
    args: &[&str],
    reasons: &[&str],
) -> Run {
    refused_unchanged_with(fx, reference, dir, args, &[], reasons)
}

/// [`refused_unchanged`] with environment variables.
fn refused_unchanged_with(
    fx: &Fixture,
    reference: &str,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    reasons: &[&str],
) -> Run {
    let before = snapshot(dir);
    let run = fx
        .pull_with(reference, dir, args, env)
        .refused(reference, reasons);
    assert_unchanged(dir, &before, &run);
    run
}

/// `corral pull REF DIR EXTRA...`'s arguments.
fn pull_args<'a>(reference: &'a str, dir: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["pull", reference, text(dir)];
    args.extend_from_slice(extra);
    args
}

/// Fails, describing `run`, unless DIR is byte for byte as in `before`
/// (a [`snapshot`]).
fn assert_unchanged(dir: &Path, before: &BTreeMap<PathBuf, Option<Vec<u8>>>, run: &Run) {
    let after = snapshot(dir);
    let changed: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .collect();
    assert!(
        changed.is_empty(),
        "the refused pull changed {changed:?} in {}:\n{}",
        dir.display(),
        run.describe()
    );
}

/// `corral serve DIR`, initialized.
fn serve(dir: &Path) -> Server {
    let mut server = Server::start(dir);
    server.initialize("2025-06-18");
    server
}

/// Waits for a notification named `method`.
fn expect_notification(server: &mut Server, method: &str) {
    if server.notifications.iter().any(|n| n["method"] == method) {
        return;
    }
    let deadline = Instant::now() + PATIENCE;
    while let Some(message) = server.recv_within(deadline.saturating_duration_since(Instant::now()))
    {
        if message["method"] == method {
            return;
        }
        server.notifications.push(message);
    }
    panic!(
        "no {method} within {PATIENCE:?}; stderr:\n{}",
        server.stderr()
    );
}

// --- the tests ----------------------------------------------------------------

/// The support code itself: a registry starts and answers the API's base
/// endpoint, with and without auth, and the test vectors make a key pair.
#[test]
fn registry_and_vectors_work() {
    let open = Registry::start();
    let (status, _, body) = open.get("/v2/");
    assert_eq!(
        status,
        200,
        "{}\n{}",
        String::from_utf8_lossy(&body),
        open.log()
    );

    let guarded = Registry::start_with_auth("alice", "s3cret");
    assert_eq!(guarded.get("/v2/").0, 200, "{}", guarded.log());
    assert_eq!(guarded.get_anonymous("/v2/").0, 401, "{}", guarded.log());

    let keys = tempfile::tempdir().unwrap();
    let out = keys.path().join("cosign");
    vectors_ok(
        &["keygen", out.to_str().unwrap()],
        &[("COSIGN_PASSWORD", "pw")],
    );
    let public = std::fs::read_to_string(keys.path().join("cosign.pub")).unwrap();
    let opened = vectors_ok(
        &["decrypt", keys.path().join("cosign.key").to_str().unwrap()],
        &[("COSIGN_PASSWORD", "pw")],
    );
    assert_eq!(opened, public);
}

/// Push signed, pull by tag and by the printed digest with the key: the
/// files are the ones pushed, the lock pins them, and the folder serves.
#[test]
fn a_signed_push_pulls_by_tag_and_by_digest_and_serves() {
    let fx = Fixture::new();
    let (key, public, fingerprint) = fx.keygen("release");
    let source = fx.plugin("calc", Some(GRANTING_MANIFEST));
    let pinned = fx.push(&source, "demo/calc:1.0.0", Some(&key));
    let by_tag = fx.reference("demo/calc:1.0.0");

    let a = fx.folder("a");
    std::fs::create_dir(a.join("data")).unwrap();
    let pulled = fx
        .pull(&by_tag, &a, &["--verify-key", text(&public), "--yes"])
        .ok();
    for shown in [
        "calc asks for",
        "read-only",
        "signature verified",
        &fingerprint,
    ] {
        assert!(
            pulled.stderr.contains(shown),
            "{shown:?} not shown:\n{}",
            pulled.describe()
        );
    }
    let b = fx.folder("b");
    fx.pull(&pinned, &b, &["--verify-key", text(&public), "--yes"])
        .ok();

    let wasm = std::fs::read(&source).unwrap();
    for (dir, reference) in [(&a, &by_tag), (&b, &pinned)] {
        assert!(
            std::fs::read(dir.join("calc.wasm")).unwrap() == wasm,
            "calc.wasm differs in {}",
            dir.display()
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("calc.toml")).unwrap(),
            GRANTING_MANIFEST
        );
        let entry = lock_entry(dir, "calc.wasm");
        assert_eq!(field(&entry, "reference"), reference, "{entry:?}");
        assert_eq!(field(&entry, "digest"), digest_of(&pinned), "{entry:?}");
        assert_eq!(field(&entry, "wasm"), sha256(&wasm), "{entry:?}");
        assert_eq!(
            field(&entry, "manifest"),
            sha256(GRANTING_MANIFEST.as_bytes()),
            "{entry:?}"
        );
        assert_eq!(field(&entry, "signer"), fingerprint, "{entry:?}");
        assert!(field(&entry, "pulled").len() >= 20, "{entry:?}");
    }

    let listed = corral(&["list", text(&a)]).ok();
    for tool in CALC_TOOLS {
        assert!(
            listed.stdout.contains(tool),
            "{tool} not listed:\n{}",
            listed.describe()
        );
    }
    let mut server = serve(&a);
    assert_eq!(server.tool_names(), CALC_TOOLS, "{}", server.stderr());
    let sum = server.call("add", json!({ "a": 2, "b": 3 }));
    assert_eq!(first_text(&sum), "5", "{sum}");
}

/// What a push writes is the standard wasm artifact, and its signature is
/// where and what cosign writes; checked over raw HTTP against the specs'
/// literals.
#[test]
fn a_pushed_artifact_and_its_signature_have_the_standard_layout() {
    let fx = Fixture::new();
    let (key, _, _) = fx.keygen("release");
    let source = fx.plugin("calc", Some(GRANTING_MANIFEST));
    let pinned = fx.push(&source, "demo/calc:2", Some(&key));
    let digest = digest_of(&pinned);
    let wasm = std::fs::read(&source).unwrap();

    let (status, headers, raw) = fx.registry.get("/v2/demo/calc/manifests/2");
    assert_eq!(status, 200, "{}", fx.registry.log());
    assert_eq!(
        sha256(&raw),
        digest,
        "the tag does not hold the printed digest"
    );
    let content_type = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| value.as_str());
    assert_eq!(content_type, Some(OCI_MANIFEST), "{headers:?}");
    let manifest: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(manifest["schemaVersion"], 2, "{manifest}");
    assert_eq!(manifest["mediaType"], OCI_MANIFEST, "{manifest}");
    assert_eq!(manifest["config"]["mediaType"], WASM_CONFIG, "{manifest}");
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "{manifest}");
    assert_eq!(layers[0]["mediaType"], WASM_LAYER, "{manifest}");
    assert_eq!(layers[0]["digest"], sha256(&wasm), "{manifest}");
    assert_eq!(layers[0]["size"], wasm.len(), "{manifest}");
    assert_eq!(
        layers[0]["annotations"][TITLE_ANNOTATION], "calc.wasm",
        "{manifest}"
    );
    assert_eq!(
        manifest["annotations"][PLUGIN_MANIFEST_ANNOTATION], GRANTING_MANIFEST,
        "{manifest}"
    );
    // The layer's blob is the component.
    let (status, _, blob) = fx
        .registry
        .get(&format!("/v2/demo/calc/blobs/{}", sha256(&wasm)));
    assert!(status == 200 && blob == wasm, "GET of the layer: {status}");

    let config_digest = manifest["config"]["digest"].as_str().unwrap();
    let config = fx.get_json(&format!("/v2/demo/calc/blobs/{config_digest}"));
    assert_eq!(config["architecture"], "wasm", "{config}");
    assert_eq!(config["os"], "wasip2", "{config}");
    assert_eq!(config["layerDigests"], json!([sha256(&wasm)]), "{config}");
    let exports = config["component"]["exports"].as_array().unwrap();
    assert!(exports.iter().any(|e| e == CONTRACT_EXPORT), "{config}");
    let imports = config["component"]["imports"].as_array().unwrap();
    assert!(
        !imports.is_empty()
            && imports.iter().all(|i| i
                .as_str()
                .is_some_and(|i| i.contains(':') && i.contains('/'))),
        "imports are not listed as world keys: {config}"
    );

    let hex = digest.strip_prefix("sha256:").unwrap();
    let signatures = fx.get_json(&format!("/v2/demo/calc/manifests/sha256-{hex}.sig"));
    assert_eq!(signatures["mediaType"], OCI_MANIFEST, "{signatures}");
    let layer = &signatures["layers"][0];
    assert_eq!(layer["mediaType"], SIMPLE_SIGNING, "{signatures}");
    let signature = layer["annotations"][SIGNATURE_ANNOTATION].as_str().unwrap();
    let der = base64::engine::general_purpose::STANDARD
        .decode(signature)
        .unwrap();
    assert_eq!(der[0], 0x30, "the signature is not DER: {signature}");
    let payload = fx.get_json(&format!(
        "/v2/demo/calc/blobs/{}",
        layer["digest"].as_str().unwrap()
    ));
    let critical = &payload["critical"];
    assert_eq!(
        critical["identity"]["docker-reference"],
        fx.reference("demo/calc"),
        "{payload}"
    );
    assert_eq!(
        critical["image"]["docker-manifest-digest"], digest,
        "{payload}"
    );
    assert_eq!(
        critical["type"], "cosign container image signature",
        "{payload}"
    );
}

/// Corral's keys and signatures are cosign's: the independent
/// implementation opens Corral's key and verifies Corral's signature (and
/// refuses it with another key, so its yes means something).
#[test]
fn corral_signatures_verify_independently() {
    let fx = Fixture::new();
    let (key, public, _) = fx.keygen("release");
    let pinned = fx.push(&fx.plugin("calc", None), "demo/calc:1", Some(&key));
    let addr = fx.registry.addr();
    let digest = digest_of(&pinned);

    let verified = vectors_ok(&["verify", &addr, "demo/calc", digest, text(&public)], &[]);
    assert!(verified.contains("verifies"), "{verified}");
    let opened = vectors_ok(&["decrypt", text(&key)], &[("COSIGN_PASSWORD", PASSWORD)]);
    assert_eq!(opened, std::fs::read_to_string(&public).unwrap());

    let (_, other) = fx.python_keygen("other");
    let refused = vectors_with_env(&["verify", &addr, "demo/calc", digest, text(&other)], &[]);
    assert!(
        !refused.status.success(),
        "verify with another key succeeded:\n{}",
        String::from_utf8_lossy(&refused.stdout)
    );
    let wrong = vectors_with_env(&["decrypt", text(&key)], &[("COSIGN_PASSWORD", "not it")]);
    assert!(
        !wrong.status.success(),
        "decrypt with the wrong password succeeded"
    );
}

/// Whether the base64 DER ECDSA P-256 signature has S above n/2.
fn high_s(signature: &str) -> bool {
    const HALF_N: [u8; 32] = [
        0x7f, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xde, 0x73, 0x7d, 0x56, 0xd3, 0x8b, 0xcf, 0x42, 0x79, 0xdc, 0xe5, 0x61, 0x7e, 0x31,
        0x92, 0xa8,
    ];
    let der = base64::engine::general_purpose::STANDARD
        .decode(signature)
        .unwrap();
    // SEQUENCE { INTEGER r, INTEGER s }, short lengths (at most 72 bytes).
    assert_eq!(der[0], 0x30, "not DER: {signature}");
    let r_len = der[3] as usize;
    let s_at = 4 + r_len;
    assert_eq!(der[s_at], 0x02, "not DER: {signature}");
    let s = &der[s_at + 2..s_at + 2 + der[s_at + 1] as usize];
    let s: Vec<u8> = s.iter().copied().skip_while(|b| *b == 0).collect();
    let mut padded = vec![0u8; 32 - s.len()];
    padded.extend(s);
    padded.as_slice() > HALF_N.as_slice()
}

/// Signatures and keys in cosign's format made elsewhere verify in Corral,
/// Corral signs with a key made elsewhere, and an artifact pushed by
/// another tool installs.
#[test]
fn standard_signatures_keys_and_artifacts_work_in_corral() {
    let fx = Fixture::new();
    let addr = fx.registry.addr();
    let (py_key, py_pub) = fx.python_keygen("python");
    let env = [("COSIGN_PASSWORD", PASSWORD)];

    // Sixteen signatures in one signature image: one verifies.
    let pinned = fx.push(&fx.plugin("calc", None), "demo/calc:1", None);
    vectors_ok(
        &[
            "sign",
            &addr,
            "demo/calc",
            digest_of(&pinned),
            text(&py_key),
            "--count",
            "16",
        ],
        &env,
    );
    let dir = fx.folder("many");
    fx.pull(&pinned, &dir, &["--verify-key", text(&py_pub)])
        .ok();
    let entry = lock_entry(&dir, "calc.wasm");
    assert!(field(&entry, "signer").starts_with("sha256:"), "{entry:?}");

    // One signature per artifact, until both a low-S and a high-S one were
    // accepted on their own (about half of random ECDSA signatures are
    // high-S; missing either in 16 tries has odds of 2^-15).
    let (mut low, mut high) = (0, 0);
    for n in 0..16 {
        if low > 0 && high > 0 {
            break;
        }
        let source = fx.plugin("calc", Some(&format!("# variant {n}\n")));
        let pinned = fx.push(&source, &format!("demo/variant:{n}"), None);
        let digest = digest_of(&pinned);
        vectors_ok(
            &["sign", &addr, "demo/variant", digest, text(&py_key)],
            &env,
        );
        let hex = digest.strip_prefix("sha256:").unwrap();
        let signatures = fx.get_json(&format!("/v2/demo/variant/manifests/sha256-{hex}.sig"));
        let signature = signatures["layers"][0]["annotations"][SIGNATURE_ANNOTATION]
            .as_str()
            .unwrap();
        let dir = fx.folder(&format!("variant-{n}"));
        let run = fx.pull(&pinned, &dir, &["--verify-key", text(&py_pub)]);
        let kind = if high_s(signature) {
            &mut high
        } else {
            &mut low
        };
        *kind += 1;
        run.ok();
    }
    assert!(
        low > 0 && high > 0,
        "{low} low-S and {high} high-S signatures seen"
    );

    // Corral signs with the Python-made key; Python verifies.
    let signed = fx.push(
        &fx.plugin("calc", None),
        "demo/by-python-key:1",
        Some(&py_key),
    );
    vectors_ok(
        &[
            "verify",
            &addr,
            "demo/by-python-key",
            digest_of(&signed),
            text(&py_pub),
        ],
        &[],
    );

    // An artifact pushed by the vectors' push-wasm (no title, no manifest).
    let reference = fx.reference("other/textstats:0.1");
    let digest = vectors_ok(
        &[
            "push-wasm",
            &addr,
            "other/textstats",
            "0.1",
            text(&example("textstats")),
        ],
        &[],
    );
    let dir = fx.folder("foreign");
    fx.pull(&reference, &dir, &[]).ok();
    let installed = std::fs::read(dir.join("textstats.wasm"))
        .expect("installed as textstats.wasm (the repository's name)");
    assert!(installed == std::fs::read(example("textstats")).unwrap());
    let entry = lock_entry(&dir, "textstats.wasm");
    assert_eq!(field(&entry, "digest"), digest.trim(), "{entry:?}");
    let listed = corral(&["list", text(&dir)]).ok();
    assert!(
        listed.stdout.contains("analyze_text"),
        "{}",
        listed.describe()
    );
}

/// (a) Signed by another key.
#[test]
fn a_pull_signed_by_another_key_is_refused() {
    let (fx, _, public, dir) = populated();
    let (other_key, _, other_fingerprint) = fx.keygen("theirs");
    let pinned = fx.push(&fx.plugin("calc", None), "demo/calc:1", Some(&other_key));
    let by_tag = fx.reference("demo/calc:1");
    let run = refused_unchanged(
        &fx,
        &by_tag,
        &dir,
        &["--verify-key", text(&public)],
        &[
            &format!("is not signed by {}", text(&public)),
            "none by this key",
        ],
    );
    assert!(
        !run.stderr.contains(&other_fingerprint),
        "{}",
        run.describe()
    );
    // The same artifact with the right key installs: the refusal was the key.
    fx.pull(
        &pinned,
        &dir,
        &["--verify-key", text(&fx.work.path().join("theirs.pub"))],
    )
    .ok();
}

/// (b) Not signed at all, with a key to verify.
#[test]
fn an_unsigned_pull_with_a_key_is_refused() {
    let (fx, _, public, dir) = populated();
    fx.push(&fx.plugin("calc", None), "demo/calc:1", None);
    let reference = fx.reference("demo/calc:1");
    refused_unchanged(
        &fx,
        &reference,
        &dir,
        &["--verify-key", text(&public)],
        &["is not signed: there is no signature"],
    );
}

/// (c) The component's blob changed in the registry's storage, at the same
/// length and at another length: the download does not match its digest.
#[test]
fn a_tampered_blob_is_refused() {
    let (fx, key, public, dir) = populated();
    let source = fx.plugin("calc", None);
    let pinned = fx.push(&source, "demo/calc:1", Some(&key));
    let layer = fx.layer("demo/calc", "1");
    let digest = layer["digest"].as_str().unwrap();
    let blob = fx.registry.blob_path(digest);
    let original = std::fs::read(&blob).unwrap();
    assert!(
        original == std::fs::read(&source).unwrap(),
        "{} is not the layer's blob",
        blob.display()
    );

    let mut flipped = original.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0xff;
    let shorter = original[..original.len() - 100].to_vec();
    let mut longer = original.clone();
    longer.extend_from_slice(b"and a little more");
    for (what, bytes) in [
        ("same length", flipped),
        ("shorter", shorter),
        ("longer", longer),
    ] {
        std::fs::write(&blob, &bytes).unwrap();
        let run = refused_unchanged(&fx, &pinned, &dir, &["--verify-key", text(&public)], &[]);
        let said = ["does not match its digest", "more than the"];
        assert!(
            said.iter().any(|reason| run.stderr.contains(reason)) && run.stderr.contains(digest),
            "{what}: no digest mismatch of {digest} named:\n{}",
            run.describe()
        );
    }
    std::fs::write(&blob, &original).unwrap();
    fx.pull(&pinned, &dir, &["--verify-key", text(&public)])
        .ok();
}

/// (d) A digest that is not in the repository, and the digest of another
/// artifact there, signed by someone else.
#[test]
fn a_pull_of_a_wrong_digest_is_refused() {
    let (fx, key, public, dir) = populated();
    let (other_key, _, _) = fx.keygen("theirs");
    fx.push(&fx.plugin("calc", None), "demo/calc:1", Some(&key));
    let unknown = fx.reference(&format!("demo/calc@{}", sha256(b"something else")));
    refused_unchanged(
        &fx,
        &unknown,
        &dir,
        &["--verify-key", text(&public)],
        &["is not in the registry"],
    );
    let theirs = fx.push(
        &fx.plugin("calc", Some("# theirs\n")),
        "demo/calc:theirs",
        Some(&other_key),
    );
    refused_unchanged(
        &fx,
        &theirs,
        &dir,
        &["--verify-key", text(&public)],
        &[&format!("is not signed by {}", text(&public))],
    );
}

/// (e) Nothing listens at the registry's address: a prompt, clear failure.
#[test]
fn an_unreachable_registry_fails_promptly() {
    let (fx, _, public, dir) = populated();
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let reference = format!("127.0.0.1:{port}/demo/calc:1");
    let run = refused_unchanged(
        &fx,
        &reference,
        &dir,
        &["--verify-key", text(&public)],
        &[&format!("cannot reach the registry 127.0.0.1:{port}")],
    );
    assert!(run.took < Duration::from_secs(10), "{}", run.describe());
}

/// (f) A manifest that grants authority, pulled without --yes and without
/// a terminal.
#[test]
fn grants_without_consent_are_refused() {
    let (fx, key, public, dir) = populated();
    let pinned = fx.push_signed_calc(GRANTING_MANIFEST, &key);
    let run = refused_unchanged(
        &fx,
        &pinned,
        &dir,
        &["--verify-key", text(&public)],
        &["asks for the authority above; pass --yes"],
    );
    assert!(
        run.stderr.contains("read-only"),
        "the grant was not shown:\n{}",
        run.describe()
    );
    fx.pull(&pinned, &dir, &["--verify-key", text(&public), "--yes"])
        .ok();
}

/// (g) A NAME.wasm that was not pulled from this repository is not
/// replaced without --force.
#[test]
fn an_unrelated_plugin_is_not_replaced_without_force() {
    let (fx, key, public, dir) = populated();
    std::fs::copy(example("sketch"), dir.join("calc.wasm")).unwrap();
    let pinned = fx.push(&fx.plugin("calc", None), "demo/calc:1", Some(&key));
    refused_unchanged(
        &fx,
        &pinned,
        &dir,
        &["--verify-key", text(&public)],
        &["calc.wasm exists and was not pulled from", "--force"],
    );
    fx.pull(&pinned, &dir, &["--verify-key", text(&public), "--force"])
        .ok();
    assert!(
        std::fs::read(dir.join("calc.wasm")).unwrap() == std::fs::read(example("calc")).unwrap()
    );
}

/// A pulled plugin changed on disk afterwards is refused where it is
/// served, naming where it came from.
#[test]
fn a_pulled_plugin_changed_on_disk_is_refused_at_serve() {
    let fx = Fixture::new();
    fx.push(&fx.plugin("calc", None), "demo/calc:1", None);
    let reference = fx.reference("demo/calc:1");
    let dir = fx.folder("plugins");
    fx.pull(&reference, &dir, &[]).ok();
    corral(&["list", text(&dir)]).ok();
    std::fs::copy(example("sketch"), dir.join("calc.wasm")).unwrap();
    corral(&["list", text(&dir)]).refused(&reference, &["does not match corral.lock"]);
}

/// A pull into a folder being served is a change like any other: clients
/// are told, and the new tool answers.
#[test]
fn a_pull_into_a_served_folder_hot_reloads() {
    let fx = Fixture::new();
    let pinned = fx.push(&fx.plugin("textstats", None), "demo/textstats:1", None);
    let dir = fx.folder("served");
    std::fs::copy(example("calc"), dir.join("calc.wasm")).unwrap();
    let mut server = serve(&dir);
    assert_eq!(server.tool_names(), CALC_TOOLS, "{}", server.stderr());
    fx.pull(&pinned, &dir, &[]).ok();
    expect_notification(&mut server, LIST_CHANGED);
    let names = server.tool_names();
    assert!(
        names.iter().any(|name| name == "analyze_text"),
        "{names:?}\n{}",
        server.stderr()
    );
    let report = server.call("analyze_text", json!({ "text": "one two two" }));
    assert_eq!(report["isError"], false, "{report}");
}

/// A registry that wants credentials: refused without them (saying how to
/// give them), accepted with --username and --password-stdin or docker's
/// config.json, refused with a wrong password.
#[test]
fn a_private_registry_takes_credentials() {
    let fx = Fixture::on(Registry::start_with_auth(USER, SECRET));
    let source = fx.plugin("calc", None);
    let reference = fx.reference("private/calc:1");
    let login = ["--username", USER, "--password-stdin"];
    let with_password = |args: &[&str], password: &str| {
        let all = [args, &login].concat();
        corral_with(&all, &[], Some(&format!("{password}\n")))
    };

    corral(&["push", text(&source), &reference])
        .refused(&reference, &["unauthorized", "--username", "docker login"]);
    with_password(&["push", text(&source), &reference], SECRET).ok();

    let dir = fx.folder("anonymous");
    refused_unchanged(
        &fx,
        &reference,
        &dir,
        &[],
        &["unauthorized", "--username", "docker login"],
    );
    let dir = fx.folder("flags");
    with_password(&["pull", &reference, text(&dir)], SECRET).ok();
    assert!(dir.join("calc.wasm").is_file());

    let docker = fx.docker_config("docker", USER, SECRET);
    let logged_in = [("DOCKER_CONFIG", text(&docker))];
    let again = fx.reference("private/calc:2");
    corral_with(&["push", text(&source), &again], &logged_in, None).ok();
    let dir = fx.folder("docker-login");
    corral_with(&["pull", &again, text(&dir)], &logged_in, None).ok();
    assert!(dir.join("calc.wasm").is_file());

    let dir = fx.folder("wrong");
    let run = with_password(&["pull", &reference, text(&dir)], "not the password");
    run.refused(&reference, &["unauthorized", "refused the credentials"]);
    assert!(snapshot(&dir).is_empty());
}

/// `corral keygen` writes cosign's files, private ones private, never over
/// a key; a wrong password stops a push before anything is published.
#[test]
fn keygen_writes_cosign_keys_and_a_wrong_password_pushes_nothing() {
    let fx = Fixture::new();
    let (key, public, _) = fx.keygen("release");
    let private = std::fs::read_to_string(&key).unwrap();
    let shared = std::fs::read_to_string(&public).unwrap();
    let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{} has mode {mode:o}", key.display());
    assert!(
        private.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"),
        "{private}"
    );
    assert!(
        private
            .trim_end()
            .ends_with("-----END ENCRYPTED SIGSTORE PRIVATE KEY-----"),
        "{private}"
    );
    assert!(
        shared.starts_with("-----BEGIN PUBLIC KEY-----\n"),
        "{shared}"
    );
    assert!(
        shared.trim_end().ends_with("-----END PUBLIC KEY-----"),
        "{shared}"
    );

    let base = fx.work.path().join("release");
    let again = corral_with(
        &["keygen", text(&base)],
        &[("COSIGN_PASSWORD", "new")],
        None,
    );
    assert!(
        again.code != Some(0) && again.stderr.contains("never overwrites a key"),
        "{}",
        again.describe()
    );
    assert_eq!(std::fs::read_to_string(&key).unwrap(), private);
    assert_eq!(std::fs::read_to_string(&public).unwrap(), shared);

    let reference = fx.reference("demo/calc:1");
    let source = fx.plugin("calc", None);
    let args = ["push", text(&source), &reference, "--key", text(&key)];
    corral_with(&args, &[("COSIGN_PASSWORD", "wrong")], None)
        .refused(text(&key), &["wrong password"]);
    fx.assert_not_pushed("demo/calc", "1");
}

/// What the resuming proxy saw: each request's line and headers.
type Seen = Arc<Mutex<Vec<(String, Vec<(String, String)>)>>>;

/// What [`faulty_proxy`] does to the first response to a GET of the blob.
#[derive(Clone, Copy)]
enum Fault {
    /// Sends its headers and half its body, then closes the connection.
    Cut,
    /// Sends its headers and half its body, then nothing more, holding the
    /// connection open until the client closes it.
    Stall,
}

/// A loopback HTTP proxy in front of `upstream` that spoils the first
/// response to a GET of the blob `digest` as `fault` says; the rest passes
/// untouched (each request forwarded with `Connection: close`).
fn faulty_proxy(upstream: String, digest: String, fault: Fault) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { break };
            let (upstream, digest, log) = (upstream.clone(), digest.clone(), log.clone());
            std::thread::spawn(move || proxy_one(client, &upstream, &digest, &log, fault));
        }
    });
    (addr, seen)
}

/// Whether the request line is a GET of the blob `digest`.
fn is_blob_get(request_line: &str, digest: &str) -> bool {
    request_line.starts_with("GET ") && request_line.contains(&format!("/blobs/{digest}"))
}

/// One connection of [`faulty_proxy`]: one request, one response.
fn proxy_one(client: TcpStream, upstream: &str, digest: &str, seen: &Seen, fault: Fault) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end().to_string();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    let first_blob_get = {
        let mut seen = seen.lock().unwrap();
        let before = seen
            .iter()
            .filter(|(line, _)| is_blob_get(line, digest))
            .count();
        seen.push((request_line.trim_end().to_string(), headers.clone()));
        is_blob_get(&request_line, digest) && before == 0
    };
    let mut forwarded = request_line.clone();
    let mut length = 0;
    for (name, value) in &headers {
        if name.eq_ignore_ascii_case("connection") {
            continue;
        }
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().unwrap();
        }
        forwarded.push_str(&format!("{name}: {value}\r\n"));
    }
    forwarded.push_str("Connection: close\r\n\r\n");
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let mut server = TcpStream::connect(upstream).unwrap();
    server.write_all(forwarded.as_bytes()).unwrap();
    server.write_all(&body).unwrap();
    let mut response = Vec::new();
    server.read_to_end(&mut response).unwrap();
    let mut client = client;
    if first_blob_get {
        let end = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let half = (response.len() - end) / 2;
        let _ = client.write_all(&response[..end + half]);
        if let Fault::Stall = fault {
            // Until the client goes: a read returns 0 (or fails) then.
            let _ = client.flush();
            let mut rest = [0u8; 1024];
            while matches!(client.read(&mut rest), Ok(n) if n > 0) {}
        }
    } else {
        let _ = client.write_all(&response);
    }
    let _ = client.shutdown(Shutdown::Both);
}

/// A download cut off half way is resumed with a range request from where
/// it stopped, and what is installed is the whole, right component.
#[test]
fn a_broken_download_resumes_where_it_stopped() {
    let fx = Fixture::new();
    let (key, public, _) = fx.keygen("mine");
    let source = fx.plugin("calc", None);
    fx.push(&source, "demo/calc:1", Some(&key));
    let wasm = std::fs::read(&source).unwrap();
    let digest = sha256(&wasm);
    let (proxy, seen) = faulty_proxy(fx.registry.addr(), digest.clone(), Fault::Cut);

    let reference = format!("{proxy}/demo/calc:1");
    let dir = fx.folder("plugins");
    let run = fx
        .pull(&reference, &dir, &["--verify-key", text(&public)])
        .ok();
    assert!(
        std::fs::read(dir.join("calc.wasm")).unwrap() == wasm,
        "{}",
        run.describe()
    );

    let seen = seen.lock().unwrap();
    let blob_gets: Vec<_> = seen
        .iter()
        .filter(|(line, _)| is_blob_get(line, &digest))
        .collect();
    assert!(
        blob_gets.len() >= 2,
        "the blob was not asked for again: {seen:?}\n{}",
        run.describe()
    );
    let range = blob_gets[1]
        .1
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("range"))
        .map(|(_, value)| value.clone())
        .unwrap_or_else(|| panic!("no Range header on the second GET: {seen:?}"));
    let from: usize = range
        .strip_prefix("bytes=")
        .and_then(|rest| rest.strip_suffix('-'))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not an open range: {range}"));
    assert!(
        from > 0 && from <= wasm.len() / 2,
        "resumed from {from} of {}",
        wasm.len()
    );
}

/// A manifest that only inherits a variable this process does not have.
const INHERITING_MANIFEST: &str = "[env]\ninherit = [\"CORRAL_TEST_SECRET\"]\n";

/// An inherited variable is authority even when the pull's environment
/// does not set it (the server that runs the plugin may): it needs consent.
#[test]
fn an_inherited_variable_unset_here_needs_consent() {
    assert!(
        std::env::var_os("CORRAL_TEST_SECRET").is_none(),
        "CORRAL_TEST_SECRET is set in the tests' environment"
    );
    let (fx, key, public, dir) = populated();
    let pinned = fx.push_signed_calc(INHERITING_MANIFEST, &key);
    refused_unchanged(
        &fx,
        &pinned,
        &dir,
        &["--verify-key", text(&public)],
        &[
            "environment variable CORRAL_TEST_SECRET",
            "asks for the authority above; pass --yes",
        ],
    );
    let run = fx
        .pull(&pinned, &dir, &["--verify-key", text(&public), "--yes"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(dir.join("calc.toml"))
            .ok()
            .as_deref(),
        Some(INHERITING_MANIFEST),
        "{}",
        run.describe()
    );
}

/// Manifests with a control character (an ESC, which could rewrite what a
/// person reads on a terminal) in a variable's name or a guest path.
const CONTROL_MANIFESTS: [(&str, &str); 2] = [
    ("env", "[env.set]\n\"BAD\\u001bNAME\" = \"x\"\n"),
    (
        "dirs",
        "[[dirs]]\nhost = \"data\"\nguest = \"/da\\u001bta\"\nmode = \"ro\"\n",
    ),
];

/// `corral push` refuses a manifest with control characters, and pushes
/// nothing; such a manifest pushed by another tool is refused at pull.
#[test]
fn control_characters_in_a_manifest_are_refused() {
    let fx = Fixture::new();
    for (what, manifest) in CONTROL_MANIFESTS {
        let source = fx.plugin("calc", Some(manifest));
        let reference = fx.reference(&format!("demo/{what}:1"));
        let run = corral(&["push", text(&source), &reference]).refused(
            &source.with_extension("toml").display().to_string(),
            &["cannot push"],
        );
        let said = ["is not an environment variable name", "control characters"];
        assert!(
            said.iter().any(|reason| run.stderr.contains(reason)) && !run.stderr.contains('\u{1b}'),
            "{what}: the control character is not refused, or shown raw:\n{}",
            run.describe()
        );
        fx.assert_not_pushed(&format!("demo/{what}"), "1");

        let repo = format!("other/{what}");
        vectors_ok(
            &[
                "push-wasm",
                &fx.registry.addr(),
                &repo,
                "1",
                text(&example("calc")),
                "--plugin-manifest",
                text(&source.with_extension("toml")),
            ],
            &[],
        );
        let dir = fx.folder(&format!("pulled-{what}"));
        let run = refused_unchanged(
            &fx,
            &fx.reference(&format!("{repo}:1")),
            &dir,
            &["--yes"],
            &["its manifest is invalid"],
        );
        assert!(!run.stderr.contains('\u{1b}'), "{}", run.describe());
    }
}

/// A plugin verified when it was pulled is not pulled again unverified, or
/// verified by another key, without --force.
#[test]
fn the_trust_of_a_verified_plugin_is_not_lowered_without_force() {
    let (fx, _, _, dir) = populated();
    let entry = lock_entry(&dir, "textstats.wasm");
    let (reference, signer) = (field(&entry, "reference"), field(&entry, "signer"));
    refused_unchanged(
        &fx,
        reference,
        &dir,
        &[],
        &[
            &format!("verified as signed by {signer}"),
            "without verifying it",
            "--force",
        ],
    );

    let (py_key, py_pub) = fx.python_keygen("second");
    vectors_ok(
        &[
            "sign",
            &fx.registry.addr(),
            "earlier/textstats",
            digest_of(reference),
            text(&py_key),
        ],
        &[("COSIGN_PASSWORD", PASSWORD)],
    );
    refused_unchanged(
        &fx,
        reference,
        &dir,
        &["--verify-key", text(&py_pub)],
        &[
            &format!("verified as signed by {signer}"),
            "verified by another key",
            "--force",
        ],
    );

    let run = fx.pull(reference, &dir, &["--force"]).ok();
    let entry = lock_entry(&dir, "textstats.wasm");
    assert!(
        !entry.contains_key("signer"),
        "the lock still names a signer: {entry:?}\n{}",
        run.describe()
    );
}

/// A hand-written NAME.toml (no NAME.wasm) is not replaced without --force.
#[test]
fn a_hand_written_manifest_is_not_replaced_without_force() {
    let (fx, key, public, dir) = populated();
    std::fs::write(dir.join("calc.toml"), "# written by hand\n").unwrap();
    let pulled_manifest = "# as pushed\n";
    let pinned = fx.push_signed_calc(pulled_manifest, &key);
    refused_unchanged(
        &fx,
        &pinned,
        &dir,
        &["--verify-key", text(&public)],
        &["calc.toml exists and was not pulled from", "--force"],
    );
    let run = fx
        .pull(&pinned, &dir, &["--verify-key", text(&public), "--force"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(dir.join("calc.toml"))
            .ok()
            .as_deref(),
        Some(pulled_manifest),
        "{}",
        run.describe()
    );
}

/// calc, signed with `key`, pushed as demo/calc:1, behind a proxy that
/// stalls its download half way: the reference through the proxy, what the
/// proxy saw, and the layer's digest.
fn stalled_calc(fx: &Fixture, key: &Path) -> (String, Seen, String) {
    let source = fx.plugin("calc", None);
    fx.push(&source, "demo/calc:1", Some(key));
    let digest = sha256(&std::fs::read(&source).unwrap());
    let (proxy, seen) = faulty_proxy(fx.registry.addr(), digest.clone(), Fault::Stall);
    (format!("{proxy}/demo/calc:1"), seen, digest)
}

/// Whether the proxy saw a GET of the blob `digest`.
fn blob_asked(seen: &Seen, digest: &str) -> bool {
    seen.lock()
        .unwrap()
        .iter()
        .any(|(line, _)| is_blob_get(line, digest))
}

/// SIGTERM during a download: corral exits at once with 130, saying the
/// folder is unchanged, and it is (the partial download removed).
#[test]
fn an_interrupted_pull_leaves_the_folder_as_it_was() {
    let (fx, key, public, dir) = populated();
    let (reference, seen, digest) = stalled_calc(&fx, &key);
    let before = snapshot(&dir);
    let started = start_corral(
        &pull_args(&reference, &dir, &["--verify-key", text(&public)]),
        &[],
        false,
    );
    let part = dir.join(format!(".corral-pull-{}.wasm.part", started.pid()));
    let deadline = Instant::now() + PATIENCE;
    while !(blob_asked(&seen, &digest) && part.exists()) {
        if Instant::now() > deadline {
            // SAFETY: kill(2) of our own child, not yet waited for.
            unsafe { libc::kill(started.pid(), libc::SIGKILL) };
            panic!(
                "no stalled download ({} and a GET of the blob) within {PATIENCE:?}:\n{}",
                part.display(),
                started.finish(None).describe()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let signalled = Instant::now();
    // SAFETY: kill(2) of our own child, not yet waited for.
    unsafe { libc::kill(started.pid(), libc::SIGTERM) };
    let run = started.finish(None);
    assert_eq!(run.code, Some(130), "{}", run.describe());
    assert!(
        signalled.elapsed() < Duration::from_secs(5),
        "slow to stop after SIGTERM:\n{}",
        run.describe()
    );
    let said = format!("interrupted; {} is unchanged", dir.display());
    assert!(run.stderr.contains(&said), "{}", run.describe());
    assert_unchanged(&dir, &before, &run);
}

/// A download that stalls is given up after --timeout, naming it.
#[test]
fn a_stalled_pull_gives_up_after_the_timeout() {
    let (fx, key, public, dir) = populated();
    let (reference, seen, digest) = stalled_calc(&fx, &key);
    let run = refused_unchanged(
        &fx,
        &reference,
        &dir,
        &["--verify-key", text(&public), "--timeout", "2 s"],
        &["gave up after 2 s (--timeout)"],
    );
    assert!(
        blob_asked(&seen, &digest),
        "the blob was never asked for: {seen:?}\n{}",
        run.describe()
    );
    assert!(run.took < Duration::from_secs(10), "{}", run.describe());
}

/// Wrong credentials in docker's config.json are refused, saying where
/// they came from.
#[test]
fn wrong_credentials_from_docker_config_are_named() {
    let fx = Fixture::on(Registry::start_with_auth(USER, SECRET));
    let source = fx.plugin("calc", None);
    let reference = fx.reference("private/calc:1");
    let docker = fx.docker_config("docker", USER, "not the password");
    let wrong = [("DOCKER_CONFIG", text(&docker))];
    let said = "refused the credentials from docker's config.json";
    corral_with(&["push", text(&source), &reference], &wrong, None)
        .refused(&reference, &["unauthorized", said]);
    let dir = fx.folder("plugins");
    refused_unchanged_with(&fx, &reference, &dir, &[], &wrong, &["unauthorized", said]);
}
