//! Telling a plugin's author which grant a failed call lacked.
//!
//! A plugin with no `[[dirs]]` grant sees no files, and what its author
//! reads when it tries is the guest runtime's `No such file or directory
//! (os error 44)` (Rust, Python) or `Capabilities insufficient` (C); one
//! that opens a socket reads `Permission denied`. Nothing points at the
//! manifest. The guest's libc asks for its directories
//! (`wasi:filesystem/preopens.get-directories`) the first time a call opens
//! a path, and for its network (`wasi:sockets/instance-network`) before it
//! connects or looks a name up, so the host wraps those two functions to
//! note what the call reached for. A call that reached for what it has not
//! been granted, and then failed, gets the manifest lines that would grant
//! it after its own message.

use wasmtime::StoreContextMut;
use wasmtime::component::Linker;
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p2::bindings::filesystem::preopens;
use wasmtime_wasi::p2::bindings::sockets::instance_network;
use wasmtime_wasi::sockets::WasiSocketsView;

use crate::manifest::Manifest;

/// The newest WASI 0.2 release wasmtime-wasi links, under which every 0.2.x
/// import resolves.
const WASI: &str = "0.2.12";

/// What a call reached for that a grant gives.
#[derive(Debug, Default, Clone, Copy)]
pub struct Reached {
    /// It asked for its directories: it opened, or tried to open, a path.
    pub files: bool,
    /// It asked for the network: a socket or a name lookup.
    pub network: bool,
}

/// Replaces wasmtime-wasi's `get-directories` and `instance-network` with
/// ones that note in the store's [`Reached`] (`reached` finds it) what the
/// call reached for, then answer the same.
pub fn add_to_linker<T: WasiView + 'static>(
    linker: &mut Linker<T>,
    reached: fn(&mut T) -> &mut Reached,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let result = shadow(linker, reached);
    linker.allow_shadowing(false);
    result
}

fn shadow<T: WasiView + 'static>(
    linker: &mut Linker<T>,
    reached: fn(&mut T) -> &mut Reached,
) -> wasmtime::Result<()> {
    linker
        .instance(&format!("wasi:filesystem/preopens@{WASI}"))?
        .func_wrap(
            "get-directories",
            move |mut store: StoreContextMut<'_, T>, (): ()| {
                let state = store.data_mut();
                reached(state).files = true;
                let directories = preopens::Host::get_directories(&mut state.filesystem())?;
                Ok((directories,))
            },
        )?;
    linker
        .instance(&format!("wasi:sockets/instance-network@{WASI}"))?
        .func_wrap(
            "instance-network",
            move |mut store: StoreContextMut<'_, T>, (): ()| {
                let state = store.data_mut();
                reached(state).network = true;
                let network = instance_network::Host::instance_network(&mut state.sockets())?;
                Ok((network,))
            },
        )?;
    Ok(())
}

/// How a guest runtime words a path it cannot open for want of a
/// directory: Rust's and Python's libc (`os error 44`, `[Errno 44]`), Rust's
/// `ErrorKind` in a panic's `unwrap`, and C's `ENOTCAPABLE`.
const NO_FILE: [&str; 3] = [
    "No such file or directory",
    "kind: NotFound",
    "Capabilities insufficient",
];

/// What a failed call of plugin `plugin` is told, after its own message,
/// about what it reached for without a grant; `None` when it lacked none.
/// `trapped` holds the failure's text when the call trapped rather than
/// returned an error: a JavaScript or Python runtime looks for its
/// directories itself while it prints an uncaught exception's stack, so
/// after a trap only a message about a missing file counts. A plugin with
/// a directory grant is told nothing of files: a missing file there is the
/// tool's own business (and the reference servers' answers must stay
/// theirs).
pub fn hint(
    plugin: &str,
    manifest: &Manifest,
    reached: Reached,
    trapped: Option<&str>,
) -> Option<String> {
    let manifest_file = format!("{plugin}.toml, beside {plugin}.wasm");
    let about_files = trapped.is_none_or(|text| NO_FILE.iter().any(|words| text.contains(words)));
    if reached.files && about_files && manifest.dirs.is_empty() {
        return Some(format!(
            "Plugin `{plugin}` has no directory granted, so it sees no files. To grant one, add \
             to {manifest_file}:\n\n[[dirs]]\nhost = \"/path/on/the/host\"   # or relative to \
             the manifest's folder\nguest = \"/data\"               # the path the plugin \
             opens\nmode = \"ro\"                    # \"rw\" to let it write"
        ));
    }
    if reached.network {
        // Sockets are never granted: HTTP is, host by host.
        return Some(format!(
            "Plugin `{plugin}` opened a socket or looked up a name, and plugins get no sockets. \
             Outgoing HTTP is granted host by host, through wasi:http/outgoing-handler: add to \
             {manifest_file}:\n\n[http]\nallow = [\"api.example.com\"]"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(dirs: &str) -> Manifest {
        Manifest::parse(dirs, std::path::Path::new("/tmp/plugin.toml")).unwrap()
    }

    const FILES: Reached = Reached {
        files: true,
        network: false,
    };

    #[test]
    fn a_returned_error_after_looking_for_files_gets_the_directory_grant() {
        let hint = hint("notes", &manifest(""), FILES, None).unwrap();
        assert!(hint.contains("notes.toml, beside notes.wasm"), "{hint}");
        assert!(hint.contains("[[dirs]]"), "{hint}");
    }

    /// A JavaScript runtime looks for its directories while it prints an
    /// uncaught exception: a trap whose text is about no file gets no hint.
    #[test]
    fn a_trap_gets_the_directory_grant_only_when_it_is_about_a_missing_file() {
        let thrown = "plugin trapped: wasm trap: wasm `unreachable` instruction executed\n\
                      plugin stderr:\nthe widget is broken\nStack:\n  greet@tool.js:10:31";
        assert_eq!(hint("js", &manifest(""), FILES, Some(thrown)), None);
        let python =
            "plugin stderr:\nFileNotFoundError: [Errno 44] No such file or directory: '/x'";
        assert!(hint("py", &manifest(""), FILES, Some(python)).is_some());
        let rust = "panicked at src/lib.rs:3:5:\ncalled `Result::unwrap()` on an `Err` value: \
                    Os { code: 44, kind: NotFound, message: \"No such file or directory\" }";
        assert!(hint("rs", &manifest(""), FILES, Some(rust)).is_some());
    }

    #[test]
    fn a_plugin_with_a_directory_grant_keeps_its_own_words() {
        let granted = manifest("[[dirs]]\nhost = \"/tmp\"\nguest = \"/data\"\nmode = \"ro\"\n");
        assert_eq!(hint("files", &granted, FILES, None), None);
    }

    #[test]
    fn reaching_for_the_network_gets_the_http_grant() {
        let network = Reached {
            files: false,
            network: true,
        };
        let told = hint("web", &manifest(""), network, Some("")).unwrap();
        assert!(told.contains("[http]\nallow = "), "{told}");
        assert_eq!(hint("web", &manifest(""), Reached::default(), None), None);
    }
}
