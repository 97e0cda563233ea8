//! `corral componentize CORE.wasm OUT.wasm`: turns a WASI preview1 core
//! module (clang with wasi-libc, Go's wasip1 c-shared build) into the WASI
//! 0.2 component Corral loads, as `wasm-tools component embed` and
//! `component new --adapt` would, with wit-component linked into this binary.
//!
//! The preview1 calls are adapted by the *reactor* adapter of the wasmtime
//! this binary is built on ([`REACTOR`]; the workspace pins both to one
//! version), so the WASI 0.2 interfaces the component imports are exactly
//! the ones this Corral provides; the reactor flavour exports no `run`,
//! which a plugin (a library of exports) must not have. `corral adapter OUT`
//! writes that adapter for builds that run `wasm-tools` themselves;
//! `tools/wasi-adapter` writes the same bytes.

use std::fs;
use std::io;
use std::path::Path;

use anyhow::{Context, Result, bail};
use wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;
use wit_component::{ComponentEncoder, StringEncoding};

use crate::contract::Contract;

/// The adapter's bytes: a core WebAssembly module.
pub const REACTOR: &[u8] = WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;

/// A component from `core`. Its type information (which world it
/// implements) comes from the module itself when it carries some, as a C
/// module linked with the bindings' `plugin_component_type.o` does;
/// otherwise `contract`'s world is embedded first (Go, whose linker cannot
/// take that object).
pub fn componentize(mut core: Vec<u8>, contract: &Contract) -> Result<Vec<u8>> {
    if wasmparser::Parser::is_component(&core) {
        bail!("it is already a component; give the core module the compiler wrote");
    }
    if !wasmparser::Parser::is_core_wasm(&core) {
        bail!("it is not a WebAssembly module (it does not start with \\0asm and version 1)");
    }
    let carried = carries_world(&core)?;
    if !carried {
        wit_component::embed_component_metadata(
            &mut core,
            &contract.resolve,
            contract.world,
            StringEncoding::UTF8,
            false,
        )
        .context("cannot embed the world into the module")?;
    }
    let mismatch = if carried {
        "it does not implement the world its own type information names".to_owned()
    } else {
        let world = &contract.resolve.worlds[contract.world].name;
        format!("it does not implement the world `{world}` (`--world` names another)")
    };
    ComponentEncoder::default()
        .module(&core)
        .context(mismatch.clone())?
        .adapter("wasi_snapshot_preview1", REACTOR)
        .context("cannot use the WASI preview1 reactor adapter")?
        .validate(true)
        .encode()
        .context(mismatch)
}

/// Writes `bytes` to `out`, replacing what is there: beside `out` first,
/// then renamed, so that a reader (a server watching the folder) never sees
/// half a file.
pub fn write_by_rename(out: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temporary = out.as_os_str().to_owned();
    temporary.push(format!(".tmp{}", std::process::id()));
    let result = fs::write(&temporary, bytes).and_then(|()| fs::rename(&temporary, out));
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// Whether the module has a `component-type` custom section: the world's
/// type information, which wit-component reads.
fn carries_world(core: &[u8]) -> Result<bool> {
    for payload in wasmparser::Parser::new(0).parse_all(core) {
        if let wasmparser::Payload::CustomSection(section) =
            payload.context("the module is not valid WebAssembly")?
            && section.name().starts_with("component-type")
        {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_adapter_is_written_as_a_core_module_replacing_an_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("adapter.wasm");
        fs::write(&out, "old").unwrap();
        write_by_rename(&out, REACTOR).unwrap();
        let bytes = fs::read(&out).unwrap();
        // "\0asm", version 1: a core module (a component would be 0d 00 01 00).
        assert_eq!(&bytes[..8], b"\0asm\x01\0\0\0");
        assert_eq!(bytes, REACTOR);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_component_is_refused_with_what_to_give_instead() {
        let contract = Contract::load(None, "plugin").unwrap();
        // The component header: \0asm, version 0x0d, layer 1.
        let component = b"\0asm\x0d\0\x01\0".to_vec();
        let err = componentize(component, &contract).unwrap_err().to_string();
        assert!(err.contains("core module"), "{err}");
    }

    #[test]
    fn text_is_refused_as_not_webassembly() {
        let contract = Contract::load(None, "plugin").unwrap();
        let err = componentize(b"(module)".to_vec(), &contract)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a WebAssembly module"), "{err}");
    }
}
