//! Finds the `go.bytecodealliance.org/pkg` Go module that the crates.io
//! crate wit-bindgen-go bundles (under its `src/pkg`, a module with no
//! requirements) and compiles its files into the binary, so that
//! `corral bindings go` writes it beside the bindings it generates and a Go
//! plugin builds offline, with no Go module proxy.
//!
//! The crate does not export those files, and cargo tells a build script
//! nothing of where a dependency's sources are. But cargo has unpacked the
//! crate before this script runs, since it compiles it: a registry crate
//! lives at `$CARGO_HOME/registry/src/<registry>/<name>-<version>`, and the
//! version is the one `Cargo.lock` pins. That needs no network and nothing
//! but what `cargo build` downloaded. Where the crate is not there (vendored
//! sources, a source replacement), `cargo metadata --offline` finds it,
//! since such setups have every package on disk. (Asking `cargo metadata`
//! first, as this script once did, fails on a new machine: it needs every
//! package of the resolved graph, dev-dependencies and other platforms'
//! included, where `cargo build` downloads only what it compiles.)

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const CRATE: &str = "wit-bindgen-go";

/// The files of the module that a build needs: its go.mod, its licence and
/// the Go packages under wit/ (not its docs, CI or README).
fn wanted(relative: &Path) -> bool {
    relative == Path::new("go.mod")
        || relative == Path::new("LICENSE")
        || (relative.starts_with("wit")
            && matches!(
                relative.extension().and_then(|e| e.to_str()),
                Some("go" | "s")
            ))
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let crate_dir = match locked_version(&manifest_dir) {
        Some(version) => in_cargo_home(&version).or_else(|| from_metadata(&manifest_dir)),
        None => from_metadata(&manifest_dir),
    };
    let Some(crate_dir) = crate_dir else {
        panic!(
            "cannot find the sources of {CRATE}, whose bundled Go module `corral bindings go` \
             writes: they are neither under $CARGO_HOME/registry/src nor listed by \
             `cargo metadata --offline`. Run `cargo fetch`, then build again."
        );
    };
    let pkg = crate_dir.join("src/pkg");

    let mut files = Vec::new();
    collect(&pkg, &pkg, &mut files);
    files.sort();
    assert!(
        files.iter().any(|(relative, _)| relative == "go.mod"),
        "{} has no go.mod",
        pkg.display()
    );

    let mut source = String::from("&[\n");
    for (relative, absolute) in &files {
        println!("cargo::rerun-if-changed={}", absolute.display());
        writeln!(source, "    ({relative:?}, include_bytes!({absolute:?})),").unwrap();
    }
    source.push(']');
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("go_pkg.rs");
    fs::write(out, source).unwrap();
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CARGO_HOME");
}

/// The version of the crate that the workspace's `Cargo.lock` pins, read
/// from the lock file nearest above this package.
fn locked_version(manifest_dir: &Path) -> Option<String> {
    let lock = manifest_dir
        .ancestors()
        .map(|dir| dir.join("Cargo.lock"))
        .find(|lock| lock.is_file())?;
    println!("cargo::rerun-if-changed={}", lock.display());
    let text = fs::read_to_string(&lock).ok()?;
    // A package is a `[[package]]` table whose first lines are
    // `name = "…"` and `version = "…"`.
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{CRATE}\"") {
            let version = lines.next()?.trim().strip_prefix("version = \"")?;
            return Some(version.strip_suffix('"')?.to_owned());
        }
    }
    None
}

/// The crate's unpacked sources in cargo's registry cache, whichever
/// registry (crates.io's sparse or git index) it came through.
fn in_cargo_home(version: &str) -> Option<PathBuf> {
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))?;
    let registries = fs::read_dir(cargo_home.join("registry/src")).ok()?;
    registries
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.path().join(format!("{CRATE}-{version}")))
        .find(|dir| dir.join("src/pkg/go.mod").is_file())
}

/// The crate's directory as `cargo metadata` lists it, offline and for
/// this target only: where every package is on disk (vendored sources).
fn from_metadata(manifest_dir: &Path) -> Option<PathBuf> {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = env::var("TARGET").unwrap();
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &target])
        .arg("--manifest-path")
        .arg(manifest_dir.join("Cargo.toml"))
        .output()
        .ok()?;
    if !output.status.success() {
        println!(
            "cargo::warning=cargo metadata --offline failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        return None;
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    let package = metadata["packages"]
        .as_array()?
        .iter()
        .find(|package| package["name"] == CRATE)?;
    let manifest_path = Path::new(package["manifest_path"].as_str()?);
    Some(manifest_path.parent()?.to_owned())
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            let relative = path.strip_prefix(root).unwrap();
            if wanted(relative) {
                files.push((relative.to_str().unwrap().to_owned(), path.clone()));
            }
        }
    }
}
