//! `corral keygen`, `corral push` and `corral pull`: plugins published to
//! and installed from OCI registries, signed in cosign's format.
//!
//! The registry protocol, the artifact layout, signatures and the lock live
//! in `corral-registry`; this module adds what needs the sandbox or a
//! person: inspecting a component before it is published, showing the
//! authority a pulled plugin asks for and asking for consent, passwords.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use corral_registry::artifact::{Artifact, ComponentWorld};
use corral_registry::install::{self, TrustedKey};
use corral_registry::lock::Lock;
use corral_registry::progress::mib;
use corral_registry::reference::{self, repository_name};
use corral_registry::transport::{Options, Registry};
use corral_registry::{clock, keys, publish};
use corral_sandbox::units::human_duration;
use corral_sandbox::{Manifest, PluginFiles, Sandbox};

use crate::grants;
use crate::scaffold;

/// cosign's variable for a key's password, honoured so that scripts that
/// sign with cosign sign with Corral unchanged.
const PASSWORD_VARIABLE: &str = "COSIGN_PASSWORD";

/// How to reach a registry, from the command line.
#[derive(Debug, Clone)]
pub struct Access {
    /// Plain HTTP to a registry that is not on this machine.
    pub plain_http: bool,
    pub username: Option<String>,
    /// Read the password (or token) from standard input.
    pub password_stdin: bool,
    /// How long the whole push or pull may take: a registry that answers
    /// a byte a minute is given up on, not waited for forever.
    pub timeout: Duration,
}

/// Runs `work` within `access.timeout`.
async fn within<T, E>(access: &Access, work: impl Future<Output = Result<T, E>>) -> Result<T>
where
    anyhow::Error: From<E>,
{
    tokio::time::timeout(access.timeout, work)
        .await
        .map(|done| done.map_err(anyhow::Error::from))
        .unwrap_or_else(|_| {
            Err(anyhow!(
                "gave up after {} (--timeout)",
                human_duration(access.timeout)
            ))
        })
}

impl Access {
    fn options(&self) -> Result<Options> {
        let credentials = match (&self.username, self.password_stdin) {
            (Some(user), true) => {
                let mut password = String::new();
                std::io::stdin()
                    .lock()
                    .read_line(&mut password)
                    .context("reading the password from standard input")?;
                Some((
                    user.clone(),
                    password.trim_end_matches(['\r', '\n']).to_owned(),
                ))
            }
            (Some(_), false) => bail!(
                "--username needs --password-stdin (a password on the command line would show in `ps`)"
            ),
            (None, true) => bail!("--password-stdin needs --username"),
            (None, false) => None,
        };
        Ok(Options {
            plain_http: self.plain_http,
            credentials,
        })
    }
}

/// `corral keygen PATH`: writes PATH.key (encrypted with the password from
/// COSIGN_PASSWORD, or asked for on a terminal) and PATH.pub, and returns
/// the public key's fingerprint.
pub fn keygen(path: &Path) -> Result<String> {
    let key_path = with_suffix(path, "key");
    let pub_path = with_suffix(path, "pub");
    for existing in [&key_path, &pub_path] {
        if existing.exists() {
            bail!(
                "{} exists; Corral never overwrites a key",
                existing.display()
            );
        }
    }
    let password = new_password()?;
    let pair = keys::generate(password.as_bytes()).map_err(|err| anyhow!("{err}"))?;
    write_new(&key_path, pair.private_pem.as_bytes(), 0o600)?;
    if let Err(err) = write_new(&pub_path, pair.public_pem.as_bytes(), 0o644) {
        let _ = std::fs::remove_file(&key_path);
        return Err(err);
    }
    let public = keys::read_public(&pair.public_pem).map_err(|err| anyhow!("{err}"))?;
    Ok(keys::fingerprint(&public))
}

/// `corral push FILE REF [--key KEY]`: publishes the component FILE (and
/// its manifest) to the tag REF; prints the pinned reference on stdout.
pub async fn push(
    sandbox: &Arc<Sandbox>,
    file: &Path,
    target: &str,
    key: Option<&Path>,
    access: &Access,
) -> Result<()> {
    let reference = reference::parse(target).map_err(|err| anyhow!(err))?;
    if reference.digest().is_some() {
        bail!("push to a tag ({target} names a digest): REGISTRY/REPOSITORY:TAG");
    }
    let file_name = file
        .file_name()
        .and_then(|name| name.to_str())
        .filter(|name| name.ends_with(".wasm"))
        .ok_or_else(|| anyhow!("{} is not a .wasm file", file.display()))?
        .to_owned();
    let signer = match key {
        Some(path) => Some((path, read_signing_key(path)?)),
        None => None,
    };
    let PluginFiles { wasm, manifest } = PluginFiles::read(file)
        .await
        .with_context(|| format!("cannot push {}", file.display()))?;
    // Refuse to publish what could not serve: not a component, a contract
    // the host does not know, a manifest with errors. (Whether it loads
    // here does not matter: its grants name directories of the folders it
    // will be installed into.)
    let shape = corral_sandbox::component_shape(sandbox, &wasm)
        .with_context(|| format!("cannot push {}", file.display()))?;
    if let Err(reason) = &shape.contract {
        bail!(
            "cannot push {}: it is not a Corral plugin: {reason}",
            file.display()
        );
    }
    if let Some(text) = &manifest {
        Manifest::parse_portable(text, &Manifest::path_for(file))
            .with_context(|| format!("cannot push {}", file.display()))?;
    }
    let world = ComponentWorld {
        imports: shape.imports,
        exports: shape.exports,
        target: None,
    };
    let artifact = Artifact::new(&file_name, wasm, manifest.as_deref(), world, &clock::now());
    let registry = Registry::connect(&reference, &access.options()?);
    let digest = within(
        access,
        publish::push(&registry, &reference, &artifact, &file_name),
    )
    .await
    .with_context(|| format!("cannot push to {target}"))?;
    let pinned = format!("{}@{digest}", repository_name(&reference));
    eprintln!(
        "pushed {file_name} ({}){} to {target}",
        mib(artifact.wasm.len() as u64),
        if manifest.is_some() {
            " and its manifest"
        } else {
            ""
        }
    );
    if let Some((key_path, key)) = &signer {
        let at = within(access, publish::sign(&registry, &reference, &digest, key))
            .await
            .with_context(|| format!("pushed {pinned}, but cannot sign it"))?;
        let fingerprint = keys::fingerprint(key.verifying_key());
        eprintln!(
            "signed it with {} ({fingerprint}) at {at}",
            key_path.display()
        );
    }
    println!("{pinned}");
    Ok(())
}

/// What `corral pull` was asked (its command-line arguments).
#[derive(Debug, Clone, clap::Args)]
pub struct PullRequest {
    /// REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST.
    pub reference: String,
    /// The plugin folder.
    pub dir: PathBuf,
    /// Refuse the plugin unless it carries a valid signature by this
    /// public key (a .pub file in cosign's format).
    #[arg(long, value_name = "PUB")]
    pub verify_key: Option<PathBuf>,
    /// Install as NAME.wasm instead of the artifact's own file name.
    #[arg(long)]
    pub name: Option<String>,
    /// Grant the authority the plugin's manifest asks for without asking
    /// (needed without a terminal when it asks for any).
    #[arg(long)]
    pub yes: bool,
    /// Replace a NAME.wasm that was not pulled from the same repository.
    #[arg(long)]
    pub force: bool,
}

/// `corral pull REF DIR`: installs the plugin REF names into DIR, pinned in
/// DIR's lock, after verifying its signature (with a key) and showing the
/// authority it asks for. On any failure DIR is left as it was.
pub async fn pull(request: &PullRequest, access: &Access) -> Result<PathBuf> {
    let given = request.reference.as_str();
    pull_checked(request, access)
        .await
        .with_context(|| format!("cannot pull {given}"))
}

async fn pull_checked(request: &PullRequest, access: &Access) -> Result<PathBuf> {
    let given = request.reference.as_str();
    let reference = reference::parse(given).map_err(|err| anyhow!(err))?;
    let dir = &request.dir;
    if !dir.is_dir() {
        bail!("{} is not a folder", dir.display());
    }
    if let Some(name) = &request.name {
        scaffold::check_name(name).map_err(|err| anyhow!("--name: {err}"))?;
    }
    // A broken lock is found before anything is downloaded.
    let lock = Lock::read(dir)?;
    let trusted = match &request.verify_key {
        Some(path) => Some((path, read_verifying_key(path)?)),
        None => None,
    };
    let trusted = trusted.as_ref().map(|(path, key)| TrustedKey {
        key,
        name: path.to_str().unwrap_or("the key"),
        fingerprint: keys::fingerprint(key),
    });
    let registry = Registry::connect(&reference, &access.options()?);
    let fetched = within(
        access,
        install::fetch(&registry, &reference, given, trusted.as_ref(), dir),
    )
    .await?;
    let name = match &request.name {
        Some(name) => name.clone(),
        None => {
            let name = fetched.default_name(&reference);
            scaffold::check_name(&name).map_err(|err| {
                anyhow!("its file name is not a plugin name ({err}); choose one with --name")
            })?;
            name
        }
    };
    if !request.force {
        check_replacement(&lock, dir, &name, &reference, fetched.signer.as_deref())?;
    }
    consent(
        &name,
        dir,
        fetched.layout.plugin_manifest.as_deref(),
        request.yes,
    )
    .await?;
    let size = fetched.layout.layer.size as u64;
    let digest = fetched.digest.clone();
    let verified = fetched.signer.clone();
    let path = fetched
        .install(dir, &name)
        .with_context(|| format!("cannot install it into {}", dir.display()))?;
    let trust = match verified {
        Some(fingerprint) => format!("signature verified ({fingerprint})"),
        None => "not verified: no --verify-key".to_owned(),
    };
    eprintln!(
        "installed {} ({}) from {}@{digest}, {trust}; pinned in {}",
        path.display(),
        mib(size),
        repository_name(&reference),
        dir.join(corral_registry::lock::LOCK_FILE).display()
    );
    Ok(path)
}

/// Refuses, without `--force`, to replace what the folder holds under
/// `name` unless it was pulled from the same repository, and to lower the
/// trust of a plugin that was verified: a routine `pull` of a tag must not
/// turn a signed plugin into an unsigned one, nor take over a file written
/// by hand.
fn check_replacement(
    lock: &Lock,
    dir: &Path,
    name: &str,
    reference: &corral_registry::reference::Reference,
    signer: Option<&str>,
) -> Result<()> {
    let entry = lock.plugins.get(&format!("{name}.wasm"));
    let same_repository = entry.is_some_and(|entry| {
        reference::parse(&entry.reference)
            .is_ok_and(|locked| repository_name(&locked) == repository_name(reference))
    });
    for existing in [
        dir.join(format!("{name}.wasm")),
        dir.join(format!("{name}.toml")),
    ] {
        if existing.exists() && !same_repository {
            bail!(
                "{} exists and was not pulled from {}; replace it with --force, or install beside it with --name",
                existing.display(),
                repository_name(reference)
            );
        }
    }
    if let Some(verified) = entry.and_then(|entry| entry.signer.as_deref())
        && signer != Some(verified)
    {
        let now = match signer {
            None => "without verifying it".to_owned(),
            Some(other) => format!("verified by another key ({other})"),
        };
        bail!(
            "{name}.wasm was verified as signed by {verified} when it was pulled; pulling it {now} needs --force (or --verify-key with that key)"
        );
    }
    Ok(())
}

/// Shows what the pulled manifest grants and, when it grants any authority,
/// asks the user to accept it (or requires `--yes` without a terminal).
async fn consent(name: &str, dir: &Path, manifest: Option<&str>, yes: bool) -> Result<()> {
    let Some(text) = manifest else {
        eprintln!("{name}: no manifest: default limits, no grants");
        return Ok(());
    };
    // Directories are shown where they would be (resolved through any
    // symbolic link, when they exist), so that a grant of `../..` reads as
    // what it is.
    let manifest = Manifest::parse_portable(text, &dir.join(format!("{name}.toml")))
        .context("its manifest is invalid")?;
    eprintln!("{name} asks for:");
    eprintln!("  limits    {}", grants::limits_line(&manifest));
    for line in grants::authority_lines(&manifest) {
        eprintln!("  authority {line}");
    }
    for missing in manifest.dirs.iter().filter(|grant| !grant.host.is_dir()) {
        eprintln!(
            "  note: {} does not exist yet; {name} will not load until it does",
            missing.host.display()
        );
    }
    let asks_authority = grants::grants_any(&manifest);
    if !asks_authority || yes {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        bail!("{name} asks for the authority above; pass --yes to grant it");
    }
    eprint!("Install {name} with this authority? [y/N] ");
    let _ = std::io::stderr().flush();
    // Read on a thread of its own, so that Ctrl-C while the question waits
    // still unwinds the pull (and removes its download).
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut answer = String::new();
        let _ = tx.send(
            std::io::stdin()
                .lock()
                .read_line(&mut answer)
                .map(|_| answer),
        );
    });
    let answer = rx.await.context("reading the answer")??;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        bail!("not installed: the authority {name} asks for was not granted")
    }
}

/// A signing key and its file, decrypted with COSIGN_PASSWORD or a password
/// asked for on a terminal.
fn read_signing_key(path: &Path) -> Result<corral_registry::SigningKey> {
    let pem = read_key_file(path)?;
    let password = match std::env::var(PASSWORD_VARIABLE) {
        Ok(password) => password,
        Err(_) if std::io::stdin().is_terminal() => {
            ask_password(&format!("Password for {}: ", path.display()))?
        }
        Err(_) => String::new(),
    };
    keys::decrypt_private(&pem, password.as_bytes())
        .map_err(|err| anyhow!("{}: {err}", path.display()))
}

fn read_verifying_key(path: &Path) -> Result<corral_registry::VerifyingKey> {
    let pem = read_key_file(path)?;
    keys::read_public(&pem).map_err(|err| anyhow!("{}: {err}", path.display()))
}

/// A key file's text; key files are small, so a large one is refused unread.
fn read_key_file(path: &Path) -> Result<String> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("cannot read the key {}", path.display()))?
        .len();
    if size > keys::MAX_PEM_BYTES as u64 {
        bail!("{} is {size} bytes: not a key file", path.display());
    }
    std::fs::read_to_string(path).with_context(|| format!("cannot read the key {}", path.display()))
}

/// The password for a new key: COSIGN_PASSWORD, or asked twice on a
/// terminal; empty without either (as cosign does).
fn new_password() -> Result<String> {
    if let Ok(password) = std::env::var(PASSWORD_VARIABLE) {
        return Ok(password);
    }
    if !std::io::stdin().is_terminal() {
        return Ok(String::new());
    }
    let password = ask_password("Password for the private key: ")?;
    if ask_password("Again: ")? != password {
        bail!("the passwords differ");
    }
    Ok(password)
}

/// Reads a line from the terminal with echo off.
fn ask_password(prompt: &str) -> Result<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let fd = libc::STDIN_FILENO;
    // SAFETY: termios is plain data, filled in by tcgetattr before use.
    let mut saved: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is stdin, a terminal (checked by the callers).
    let echo_off = unsafe { libc::tcgetattr(fd, &mut saved) } == 0 && {
        let mut quiet = saved;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: as above; `quiet` is a copy of the terminal's own settings.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) == 0 }
    };
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if echo_off {
        // SAFETY: restores the settings read above.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &saved) };
        eprintln!();
    }
    read.context("reading the password")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// `path` with `.suffix` appended (`ci/release` gives `ci/release.key`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// Creates `path` (never replacing a file) with `mode`.
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}
