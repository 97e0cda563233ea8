//! `corral adapter OUT`: the WASI preview1 *reactor* adapter, for plugins
//! built as preview1 core modules (C with clang and wasi-libc).
//! `wasm-tools component new --adapt wasi_snapshot_preview1=OUT` uses it to
//! turn such a module into a WASI 0.2 component; the reactor flavour exports
//! no `run`, which is what a library-style plugin needs.
//!
//! The adapter comes from the wasmtime release this binary is built on
//! (the workspace pins both to one version), so the WASI 0.2 interfaces it
//! imports are exactly the ones this Corral provides. `tools/wasi-adapter`
//! writes the same bytes for the repository's own build (`plugins/build-c`),
//! which so needs no built `corral`.

use std::fs;
use std::io;
use std::path::Path;

use wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;

/// The adapter's bytes: a core WebAssembly module.
pub const REACTOR: &[u8] = WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;

/// Writes the adapter to `out`, replacing what is there. It is written
/// beside `out` and renamed, so that a reader never sees half an adapter.
pub fn write(out: &Path) -> io::Result<()> {
    let mut temporary = out.as_os_str().to_owned();
    temporary.push(format!(".tmp{}", std::process::id()));
    let result = fs::write(&temporary, REACTOR).and_then(|()| fs::rename(&temporary, out));
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_core_module_and_replaces_an_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("adapter.wasm");
        fs::write(&out, "old").unwrap();
        write(&out).unwrap();
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
}
