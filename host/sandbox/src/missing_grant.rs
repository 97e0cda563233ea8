//! Telling a plugin's author which grant a failed call lacked.
//!
//! A plugin with no `[[dirs]]` grant sees no files, and what its author
//! reads when it tries is the guest runtime's `No such file or directory
//! (os error 44)` (Rust, Python), `Capabilities insufficient` (C) or `Bad
//! file number` (Go); one that opens a socket reads `Permission denied`.
//! Nothing points at the manifest. The guest's libc asks for its
//! directories (`wasi:filesystem/preopens.get-directories`) the first time
//! a call opens a path, and for its network
//! (`wasi:sockets/instance-network`) before it connects or looks a name up,
//! so the host wraps those two functions to note what the call reached for.
//! A call that reached for what it has not been granted, and then failed,
//! gets the manifest lines that would grant it after its own message.
//!
//! Two runtimes need more than that note:
//!
//! - CPython opens the source files of a traceback's frames to quote them,
//!   so formatting a traceback asks for the directories whatever the tool
//!   did (the `corral new python` scaffold logs one for every unexpected
//!   exception); JavaScript's runtime does the same as it prints an
//!   uncaught exception. After a traceback or a trap, only the call's words
//!   (its error, its log messages, its stderr) saying that a file was
//!   missing count.
//! - Go reads its directories once, as it starts, and from then on
//!   resolves every path itself: with none granted, `open` fails inside the
//!   plugin (`open /x: Bad file number`) without reaching the host, and Go's
//!   network (`net`, `net/http`) is a fake that fails inside it too (`dial
//!   tcp …`, `lookup … write udp …`). A runtime that asked for its
//!   directories as it started is told the grants by those words.

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

/// What a call reached for that a grant gives, and what it said about it.
#[derive(Debug, Default, Clone, Copy)]
pub struct Reached {
    /// It asked for its directories: it opened, or tried to open, a path
    /// (or its runtime formatted a traceback).
    pub files: bool,
    /// It asked for the network: a socket or a name lookup.
    pub network: bool,
    /// Its runtime asked for its directories as it started, before the
    /// request: Go's does, and resolves every path itself from then on.
    pub directories_at_start: bool,
    /// What its log messages and stderr said (the host hears them as they
    /// pass, [`Said::hear`]).
    pub said: Said,
}

impl Reached {
    /// Forgets what the runtime reached for as it started, which is not
    /// the request's doing, but notes whether it asked for its directories.
    pub fn started(&mut self) {
        *self = Reached {
            directories_at_start: self.files,
            ..Reached::default()
        };
    }
}

/// What a call's words (its error, log messages and stderr) say about why
/// it failed, in the words of its runtime.
#[derive(Debug, Default, Clone, Copy)]
pub struct Said {
    /// A Python traceback: formatting it asked for the directories.
    traceback: bool,
    /// A path that could not be opened (`NO_FILE`).
    no_file: bool,
    /// Go's words for a path under no granted directory.
    no_file_go: bool,
    /// Go's words for its network.
    network_go: bool,
}

impl Said {
    /// Notes what `text`, words of the call, say.
    pub fn hear(&mut self, text: &str) {
        self.traceback |= text.contains(PYTHON_TRACEBACK);
        self.no_file |= NO_FILE.iter().any(|words| text.contains(words));
        self.no_file_go |= text.contains(NO_FILE_GO);
        self.network_go |= NETWORK_GO.iter().any(|words| text.contains(words));
    }
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

/// Go's `EBADF`, which its `open`, `stat` and the like answer for a path
/// under none of the directories it read as it started.
const NO_FILE_GO: &str = "Bad file number";

/// Go's network errors (`net.OpError`: `dial tcp 127.0.0.1:9: …`, a name
/// lookup's `write udp 127.0.0.1:8->[::1]:53: …`).
const NETWORK_GO: [&str; 6] = [
    "dial tcp",
    "dial udp",
    "read tcp",
    "read udp",
    "write tcp",
    "write udp",
];

/// The first line of a Python traceback.
const PYTHON_TRACEBACK: &str = "Traceback (most recent call last):";

/// What a failed call of plugin `plugin` is told, after its own message,
/// about what it reached for without a grant; `None` when it lacked none.
/// `failure` is the failure's text or the error the call returned, and
/// `trapped` whether the call trapped rather than returned an error. A
/// plugin with a directory grant is told nothing of files: a missing file
/// there is the tool's own business (and the reference servers' answers
/// must stay theirs).
pub fn hint(
    plugin: &str,
    manifest: &Manifest,
    reached: Reached,
    failure: &str,
    trapped: bool,
) -> Option<String> {
    let mut said = reached.said;
    said.hear(failure);
    let manifest_file = format!("{plugin}.toml, beside {plugin}.wasm");
    // After a trap or a traceback, the runtime may have looked for its
    // directories itself: only words about a missing file count then.
    let runtime_looked = trapped || said.traceback;
    let opened = reached.files && (said.no_file || !runtime_looked);
    let opened_go = reached.directories_at_start && said.no_file_go;
    if (opened || opened_go) && manifest.dirs.is_empty() {
        return Some(format!(
            "Plugin `{plugin}` has no directory granted, so it sees no files. To grant one, add \
             to {manifest_file}:\n\n[[dirs]]\nhost = \"/path/on/the/host\"   # or relative to \
             the manifest's folder\nguest = \"/data\"               # the path the plugin \
             opens\nmode = \"ro\"                    # \"rw\" to let it write"
        ));
    }
    let network_go = reached.directories_at_start && said.network_go;
    if reached.network || network_go {
        // Sockets are never granted: HTTP is, host by host.
        let go = if network_go {
            " (which Go's net/http does not use: in a component, Go's own dials and name \
             lookups fail inside the plugin)"
        } else {
            ""
        };
        return Some(format!(
            "Plugin `{plugin}` opened a socket or looked up a name, and plugins get no sockets. \
             Outgoing HTTP is granted host by host, through wasi:http/outgoing-handler{go}: add \
             to {manifest_file}:\n\n[http]\nallow = [\"api.example.com\"]"
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
        directories_at_start: false,
        said: Said {
            traceback: false,
            no_file: false,
            no_file_go: false,
            network_go: false,
        },
    };

    /// What a call that said `words` (in a log message, on stderr) reached.
    fn saying(reached: Reached, words: &str) -> Reached {
        let mut reached = reached;
        reached.said.hear(words);
        reached
    }

    #[test]
    fn a_returned_error_after_looking_for_files_gets_the_directory_grant() {
        let hint = hint("notes", &manifest(""), FILES, "could not read it", false).unwrap();
        assert!(hint.contains("notes.toml, beside notes.wasm"), "{hint}");
        assert!(hint.contains("[[dirs]]"), "{hint}");
    }

    /// A JavaScript runtime looks for its directories while it prints an
    /// uncaught exception: a trap whose text is about no file gets no hint.
    #[test]
    fn a_trap_gets_the_directory_grant_only_when_it_is_about_a_missing_file() {
        let thrown = "plugin trapped: wasm trap: wasm `unreachable` instruction executed\n\
                      plugin stderr:\nthe widget is broken\nStack:\n  greet@tool.js:10:31";
        assert_eq!(hint("js", &manifest(""), FILES, thrown, true), None);
        let python =
            "plugin stderr:\nFileNotFoundError: [Errno 44] No such file or directory: '/x'";
        assert!(hint("py", &manifest(""), FILES, python, true).is_some());
        let rust = "panicked at src/lib.rs:3:5:\ncalled `Result::unwrap()` on an `Err` value: \
                    Os { code: 44, kind: NotFound, message: \"No such file or directory\" }";
        assert!(hint("rs", &manifest(""), FILES, rust, true).is_some());
    }

    /// CPython looks for its directories while it formats a traceback: an
    /// error returned after one (logged by the `corral new python`
    /// scaffold) gets the hint only when the traceback is about a file.
    #[test]
    fn an_error_after_a_traceback_gets_the_directory_grant_only_when_it_is_about_a_file() {
        let internal = "internal error in greet; see the server log";
        let bug = saying(
            FILES,
            "greet: internal error\nTraceback (most recent call last):\n  File \"/0/tool.py\", \
             line 3, in greet\nValueError: the widget is broken",
        );
        assert_eq!(hint("py", &manifest(""), bug, internal, false), None);
        let missing = saying(
            FILES,
            "greet: internal error\nTraceback (most recent call last):\n  File \"/0/tool.py\", \
             line 3, in greet\nFileNotFoundError: [Errno 44] No such file or directory: '/x'",
        );
        assert!(hint("py", &manifest(""), missing, internal, false).is_some());
        // A traceback returned as the error is heard too.
        let returned = "Traceback (most recent call last):\nValueError: no";
        assert_eq!(hint("py", &manifest(""), FILES, returned, false), None);
    }

    /// Go resolves paths itself against the directories it read as it
    /// started: only its words tell that a call opened one.
    #[test]
    fn a_runtime_that_read_its_directories_at_start_is_heard_by_its_words() {
        let mut go = Reached {
            files: true,
            ..Reached::default()
        };
        go.started();
        assert!(!go.files && go.directories_at_start);
        assert_eq!(
            hint("go", &manifest(""), go, "`name` is blank", false),
            None
        );
        let opened = "open /data/names.txt: Bad file number";
        assert!(
            hint("go", &manifest(""), go, opened, false)
                .unwrap()
                .contains("[[dirs]]")
        );
        let fetched = "Get \"http://example.com/\": dial tcp: lookup example.com on [::1]:53: \
                       write udp 127.0.0.1:8->[::1]:53: write: Connection reset by peer";
        let told = hint("go", &manifest(""), go, fetched, false).unwrap();
        assert!(told.contains("Go's net/http does not use"), "{told}");
        assert!(told.contains("[http]\nallow = "), "{told}");
        // Another runtime's EBADF is no sign of a path.
        assert_eq!(
            hint("c", &manifest(""), Reached::default(), opened, false),
            None
        );
    }

    #[test]
    fn a_plugin_with_a_directory_grant_keeps_its_own_words() {
        let granted = manifest("[[dirs]]\nhost = \"/tmp\"\nguest = \"/data\"\nmode = \"ro\"\n");
        assert_eq!(hint("files", &granted, FILES, "", false), None);
    }

    #[test]
    fn reaching_for_the_network_gets_the_http_grant() {
        let network = Reached {
            network: true,
            ..Reached::default()
        };
        let told = hint("web", &manifest(""), network, "", true).unwrap();
        assert!(told.contains("[http]\nallow = "), "{told}");
        assert!(!told.contains("Go's"), "{told}");
        assert_eq!(
            hint("web", &manifest(""), Reached::default(), "", false),
            None
        );
    }
}
