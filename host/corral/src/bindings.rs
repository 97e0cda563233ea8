//! `corral bindings c|go OUT`: a plugin's bindings to the contract, made by
//! wit-bindgen's C and Go generators linked into this binary, so that a C or
//! Go author needs no wit-bindgen of their own (nothing built from crates.io), and
//! the bindings match the contract of the corral that will serve the plugin.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use wit_bindgen_core::{Files, WorldGenerator};

use crate::contract::Contract;

/// A language `corral bindings` writes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// `plugin.h`, `plugin.c` and `plugin_component_type.o` (the world's
    /// type information, linked into the module), for clang and wasi-libc,
    /// named after the world `plugin` whichever world they are for.
    C,
    /// wit-bindgen-go's package `main` layout (`go.mod`, `wit_exports.go`,
    /// one folder per interface) and, in `pkg/`, the module
    /// `go.bytecodealliance.org/pkg` it imports, which `go.mod` replaces
    /// with that folder so that the build needs no module proxy.
    Go,
}

/// The name the C bindings give the world: their files' and their types'
/// prefix (`plugin.h`, `plugin_string_t`).
const C_WORLD_NAME: &str = "plugin";

/// Where the Go bindings keep the `go.bytecodealliance.org/pkg` module.
const GO_PKG_DIR: &str = "pkg";

/// The files of `go.bytecodealliance.org/pkg` as the wit-bindgen-go crate
/// bundles them (see build.rs): (path in the module, contents).
const GO_PKG: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/go_pkg.rs"));

/// Writes the bindings of `contract` for `language` into `out` (created if
/// missing; files of the same names are replaced). Returns the paths
/// written, relative to `out`.
pub fn write(language: Language, contract: &mut Contract, out: &Path) -> Result<Vec<String>> {
    let mut generator: Box<dyn WorldGenerator> = match language {
        // Named `plugin` whatever the world, so that one C source builds
        // against every world: a plugin granted [state] includes plugin.h
        // and uses plugin_string_t as every other does.
        Language::C => wit_bindgen_c::Opts {
            rename_world: Some(C_WORLD_NAME.to_owned()),
            ..Default::default()
        }
        .build(),
        Language::Go => wit_bindgen_go::Opts {
            // Formatted by gofmt only when one is on PATH: the output would
            // then depend on the machine.
            format: wit_bindgen_go::Format::False,
            ..Default::default()
        }
        .build(),
    };
    let mut files = Files::default();
    generator
        .generate(&mut contract.resolve, contract.world, &mut files)
        .context("the bindings generator failed")?;
    let mut written = Vec::new();
    for (name, contents) in files.iter() {
        let contents = if language == Language::Go && name == "go.mod" {
            offline_go_mod(contents)
        } else {
            contents.to_vec()
        };
        put(out, name, &contents)?;
        written.push(name.to_owned());
    }
    if language == Language::Go {
        for (name, contents) in GO_PKG {
            let name = format!("{GO_PKG_DIR}/{name}");
            put(out, &name, contents)?;
            written.push(name);
        }
    }
    Ok(written)
}

/// wit-bindgen-go's go.mod requires `go.bytecodealliance.org/pkg` by
/// version, which Go would fetch from the module proxy; the replace
/// directive points it at the copy written beside it.
fn offline_go_mod(generated: &[u8]) -> Vec<u8> {
    let mut text = String::from_utf8_lossy(generated).into_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "\n// The module wit-bindgen-go bundles, written by `corral bindings go`.\nreplace go.bytecodealliance.org/pkg => ./{GO_PKG_DIR}\n"
    ));
    text.into_bytes()
}

fn put(out: &Path, name: &str, contents: &[u8]) -> Result<()> {
    let path = out.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    fs::write(&path, contents).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::DEFAULT_WORLD;

    fn generate(language: Language, world: &str) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let mut contract = Contract::load(None, world).unwrap();
        let written = write(language, &mut contract, dir.path()).unwrap();
        (dir, written)
    }

    /// A header, a source and the type object, named `plugin` for every
    /// world, so that one C source builds against any: the world's own
    /// imports (the store's, for plugin-with-state; wasi:config's too, for
    /// plugin-with-state-and-secrets) join the contract's.
    #[test]
    fn c_bindings_are_a_header_a_source_and_the_type_object_named_plugin() {
        for (world, declares, lacks) in [
            (
                DEFAULT_WORLD,
                "exports_corral_plugin_tools_call",
                "wasi_keyvalue",
            ),
            (
                "plugin-with-state",
                "extern bool wasi_keyvalue_store_open(plugin_string_t *identifier",
                "plugin_with_state",
            ),
            (
                "plugin-with-state-and-secrets",
                "extern bool wasi_config_store_get(plugin_string_t *key",
                "plugin_with_state",
            ),
        ] {
            let (dir, written) = generate(Language::C, world);
            assert_eq!(
                written,
                ["plugin.c", "plugin.h", "plugin_component_type.o"],
                "{world}: {written:?}"
            );
            let header = fs::read_to_string(dir.path().join("plugin.h")).unwrap();
            assert!(
                header.contains(declares) && !header.contains(lacks),
                "{world}: {header}"
            );
        }
    }

    #[test]
    fn go_bindings_build_offline_against_the_bundled_module() {
        let (dir, written) = generate(Language::Go, DEFAULT_WORLD);
        assert!(
            written.contains(&"wit_exports.go".to_owned()),
            "{written:?}"
        );
        let go_mod = fs::read_to_string(dir.path().join("go.mod")).unwrap();
        assert!(
            go_mod.contains("replace go.bytecodealliance.org/pkg => ./pkg"),
            "{go_mod}"
        );
        let module = fs::read_to_string(dir.path().join("pkg/go.mod")).unwrap();
        assert!(
            module.contains("module go.bytecodealliance.org/pkg"),
            "{module}"
        );
        assert!(dir.path().join("pkg/wit/runtime/runtime.go").is_file());
    }
}
