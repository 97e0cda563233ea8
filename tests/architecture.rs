//! The architecture, checked: the crate graph and the modules inside each
//! crate allow data to flow one way only (wire -> dispatch -> catalog ->
//! validation -> sandbox -> shaping -> wire), as the layout in
//! docs/development.md describes.
//!
//! - `corral-tool`, the shared vocabulary, depends on serde_json and
//!   tokio's channels only;
//! - `corral-mcp`, the protocol, never reaches wasmtime or the sandbox;
//! - `corral-sandbox` never reaches the protocol or hyper (except as
//!   wasmtime's own implementation of the guest's outgoing HTTP);
//! - `corral-registry`, plugin distribution, never reaches wasmtime, the
//!   sandbox or the protocol, and neither of those reaches it;
//! - inside every host crate and the guest SDK, no two modules import each
//!   other, however indirectly.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use support::repo_root;

/// `cargo tree` for `package` with `args`, one package name per line.
fn tree(package: &str, args: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(repo_root())
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["-p", package])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

fn assert_lacks(package: &str, args: &[&str], forbidden: &[&str]) {
    let packages = tree(package, args);
    for name in forbidden {
        assert!(
            !packages.contains(*name),
            "{package} depends on {name} (cargo tree -p {package} {})",
            args.join(" ")
        );
    }
}

#[test]
fn the_protocol_knows_nothing_of_webassembly() {
    assert_lacks(
        "corral-mcp",
        &[],
        &["wasmtime", "wasmtime-wasi", "corral-sandbox", "corral"],
    );
}

/// Plugins' state is the sandbox's side of the house: the protocol and
/// distribution never reach a store.
#[test]
fn only_the_sandbox_keeps_plugins_state() {
    for package in ["corral-mcp", "corral-registry", "corral-tool"] {
        assert_lacks(package, &[], &["rusqlite", "redis"]);
    }
}

#[test]
fn the_sandbox_knows_nothing_of_the_protocol() {
    assert_lacks(
        "corral-sandbox",
        &[],
        &["corral-mcp", "corral", "hyper-util"],
    );
    // hyper arrives only as the client inside wasmtime's implementation
    // of wasi:http, which serves plugins granted outgoing HTTP.
    assert_lacks(
        "corral-sandbox",
        &["--prune", "wasmtime-wasi-http"],
        &["hyper"],
    );
}

#[test]
fn distribution_knows_nothing_of_serving() {
    // The registry moves bytes and checks digests; loading and serving
    // them is the binary's business.
    assert_lacks(
        "corral-registry",
        &[],
        &["wasmtime", "corral-sandbox", "corral-mcp", "corral"],
    );
    // And serving never reaches a registry: only the binary glues the two.
    for package in ["corral-sandbox", "corral-mcp"] {
        assert_lacks(package, &[], &["corral-registry", "oci-client"]);
    }
}

#[test]
fn the_vocabulary_depends_on_almost_nothing() {
    let direct = tree("corral-tool", &["--depth", "1"]);
    // sha2: `Principal::key`, one definition of who a caller is for every
    // layer that keys something by it (the sandbox's per-principal state
    // and rate limits, the protocol's task owners), which must not change
    // with a Rust release as std's hashers may.
    let expected: BTreeSet<String> = ["corral-tool", "serde_json", "sha2", "tokio"]
        .map(String::from)
        .into();
    assert_eq!(direct, expected);
}

/// The top-level modules of the crate whose sources are in `src`, each
/// with the top-level modules it uses (`crate::x`, or `super::x` from a
/// top-level module), test modules and comments aside.
fn module_imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let reexports = root_reexports(src);
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).unwrap();
        let mut parts = relative
            .iter()
            .map(|part| part.to_string_lossy().into_owned());
        let first = parts.next().unwrap();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" || module == "main" {
            continue;
        }
        // In `x.rs` or `x/mod.rs`, `super::` is the crate root.
        let top_level = relative.components().count() == 1
            || relative.file_name().is_some_and(|name| name == "mod.rs")
                && relative.components().count() == 2;
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let used = imports.entry(module.clone()).or_default();
        for line in code.lines().map(str::trim_start) {
            if line.starts_with("//") {
                continue;
            }
            let mut prefixes = vec!["crate::"];
            if top_level {
                prefixes.push("super::");
            }
            for prefix in prefixes {
                for (at, _) in line.match_indices(prefix) {
                    let rest = &line[at + prefix.len()..];
                    for name in imported_names(rest) {
                        let name = reexports.get(&name).cloned().unwrap_or(name);
                        if name != module && src_has_module(src, &name) {
                            used.insert(name);
                        }
                    }
                }
            }
        }
    }
    imports
}

/// The names the crate root re-exports (`pub use x::{A, B};`), each with
/// the module it comes from: `crate::A` is a use of `x`.
fn root_reexports(src: &Path) -> BTreeMap<String, String> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .filter_map(|file| std::fs::read_to_string(src.join(file)).ok())
        .collect::<String>();
    let mut reexports = BTreeMap::new();
    for statement in root.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = path.split_once("::") else {
            continue;
        };
        let names = names.trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() && src_has_module(src, module) {
                reexports.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    reexports
}

/// The first path segment after `crate::`, or each of `{a, b::c}`.
fn imported_names(rest: &str) -> Vec<String> {
    let ident = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    match rest.strip_prefix('{') {
        Some(group) => {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            group.split(',').map(|item| ident(item.trim())).collect()
        }
        None => vec![ident(rest)],
    }
}

fn src_has_module(src: &Path, name: &str) -> bool {
    !name.is_empty()
        && (src.join(format!("{name}.rs")).is_file() || src.join(name).join("mod.rs").is_file())
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

/// A cycle in `graph`, if there is one, as the modules along it.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|seen| seen == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_imports_another_that_imports_it_back() {
    for krate in [
        "host/tool",
        "host/mcp",
        "host/sandbox",
        "host/corral",
        "sdk-guest",
    ] {
        let src = repo_root().join(krate).join("src");
        let graph = module_imports(&src);
        assert!(
            graph.len() > 1 || krate == "host/tool",
            "{krate}: {graph:?}"
        );
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{krate}: an import circle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(node, next)| {
        (
            node.to_owned(),
            next.into_iter().map(str::to_owned).collect(),
        )
    })
    .collect();
    assert_eq!(
        find_cycle(&graph),
        Some(
            vec!["a", "b", "c", "a"]
                .into_iter()
                .map(String::from)
                .collect()
        )
    );
}
