//! Finds the `go.bytecodealliance.org/pkg` Go module that the crates.io
//! crate wit-bindgen-go bundles (under its `src/pkg`, a module with no
//! requirements) and compiles its files into the binary, so that
//! `corral bindings go` writes it beside the bindings it generates and a Go
//! plugin builds offline, with no Go module proxy. The crate does not export
//! those files, so their place comes from `cargo metadata`.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("Cargo.toml");
    // Offline, and for this target only: the packages of other platforms
    // need not be downloaded.
    let target = env::var("TARGET").unwrap();
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
        ])
        .arg(target)
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("cannot run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata printed no JSON");
    let package = metadata["packages"]
        .as_array()
        .expect("cargo metadata lists no packages")
        .iter()
        .find(|package| package["name"] == "wit-bindgen-go")
        .expect("wit-bindgen-go is not a dependency");
    let crate_dir = Path::new(package["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_owned();
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
