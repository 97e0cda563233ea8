//! Writes the WASI preview1 *reactor* adapter to the file named by the first
//! argument. `wasm-tools component new --adapt wasi_snapshot_preview1=FILE`
//! uses it to turn a preview1 core module (what clang and wasi-libc produce)
//! into a WASI 0.2 component. The reactor flavour exports no `run`, which is
//! what a library-style plugin needs.
//!
//! Usage: cargo run --release -p wasi-adapter -- OUT_FILE

use std::{env, fs, path::PathBuf, process::ExitCode};

use wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;

fn main() -> ExitCode {
    let mut args = env::args_os().skip(1);
    let (Some(out), None) = (args.next(), args.next()) else {
        eprintln!("usage: wasi-adapter OUT_FILE");
        return ExitCode::from(2);
    };
    let out = PathBuf::from(out);
    // Write beside the destination and rename, so that a reader never sees a
    // half-written adapter.
    let mut tmp = out.clone().into_os_string();
    tmp.push(".tmp");
    let result = fs::write(&tmp, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER)
        .and_then(|()| fs::rename(&tmp, &out));
    if let Err(err) = result {
        eprintln!("wasi-adapter: cannot write {}: {err}", out.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
