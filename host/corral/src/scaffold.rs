//! `corral new LANG NAME`: a plugin project to start from, in any of the
//! languages Corral's examples are written in. Each project is a folder
//! `NAME/` with a working one-tool plugin (the tool is called NAME), a
//! README, unit tests (`./test`) and a `./build` that installs its pinned
//! toolchain on first use and writes `NAME/NAME.wasm`.
//!
//! The templates are real files under `host/corral/templates/<language>/`,
//! compiled into the binary, with `{{name}}` (and, for Rust, the SDK
//! dependency) filled in. The files a project shares with this repository
//! are compiled in from where the repository keeps them, so they cannot
//! drift: the plugin contract `wit/plugin.wit`, the C plugins' JSON reader
//! (`plugins/c-hash/src/json.[ch]`) and the JavaScript toolchain's pins and
//! build scripts (`plugins/build-js.d/`, byte for byte, so that a project's
//! toolchain and the repository's are one install when they share a
//! toolchain folder; TypeScript projects use the same).

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The languages `corral new` writes projects in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// Rust, with the guest SDK corral-sdk.
    Rust,
    /// Python, made a component by componentize-py.
    Python,
    /// JavaScript, made a component by componentize-js.
    #[value(alias = "javascript")]
    Js,
    /// C, with wit-bindgen's C bindings, clang and wasi-libc.
    C,
    /// Go, with wit-bindgen's Go bindings and upstream Go (wasip1).
    Go,
    /// TypeScript: the contract's types from its WIT (jco), checked and
    /// compiled by tsc, made a component by componentize-js.
    #[value(alias = "typescript")]
    Ts,
}

impl Language {
    pub const ALL: [Language; 6] = [
        Language::Rust,
        Language::Python,
        Language::Js,
        Language::C,
        Language::Ts,
        Language::Go,
    ];

    /// The name people know it by.
    pub fn title(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::Js => "JavaScript",
            Language::C => "C",
            Language::Ts => "TypeScript",
            Language::Go => "Go",
        }
    }
}

/// What a new project's plugin offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// One tool (`corral new`).
    Tools,
    /// The tool, a resource, a resource template and a prompt with
    /// completion (`corral new rust|python|js|ts NAME --resources`).
    Resources,
}

/// Where a Rust project's `corral-sdk` dependency comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sdk {
    /// `corral-sdk = "0.1"` from crates.io: works anywhere once published.
    CratesIo,
    /// A local checkout's `sdk-guest/` folder (or the repository root that
    /// holds it).
    Path(PathBuf),
}

/// The guest SDK of the checkout this binary was built from, recorded at
/// build time: a project made by this `corral` then builds against the very
/// SDK that matches its contract, with no flag, as long as that checkout is
/// there.
pub const BUILT_FROM_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdk-guest");

/// Why a Rust project depends on the SDK it does, told to its author.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SdkOrigin {
    /// `--sdk-path` or `CORRAL_SDK_PATH` named it.
    Given,
    /// The checkout this `corral` was built from.
    BuiltFrom,
    /// crates.io, because the checkout this `corral` was built from (the
    /// path) is gone.
    CheckoutGone(PathBuf),
}

impl Sdk {
    /// The SDK a Rust project depends on: `given` (`--sdk-path`) when there
    /// is one, else the SDK at `built_from` (normally [`BUILT_FROM_SDK`])
    /// when it is still a corral-sdk crate, else crates.io.
    pub fn choose(
        given: Option<PathBuf>,
        built_from: &Path,
    ) -> Result<(Sdk, SdkOrigin), ScaffoldError> {
        if let Some(path) = given {
            return Ok((Sdk::Path(sdk_crate(&path)?), SdkOrigin::Given));
        }
        match sdk_crate(built_from) {
            Ok(path) => Ok((Sdk::Path(path), SdkOrigin::BuiltFrom)),
            Err(_) => Ok((
                Sdk::CratesIo,
                SdkOrigin::CheckoutGone(built_from.to_path_buf()),
            )),
        }
    }
}

/// Why a project could not be created. Nothing is left behind when any of
/// these is returned.
#[derive(Debug)]
pub enum ScaffoldError {
    /// NAME is not usable as a plugin, tool and project name.
    InvalidName { name: String, reason: String },
    /// `NAME/` (a folder or anything else) is already there.
    Exists(PathBuf),
    /// The folder to create `NAME/` in does not exist.
    NoParent(PathBuf),
    /// `--sdk-path` names no corral-sdk crate.
    Sdk { path: PathBuf, reason: String },
    /// `--resources` for a language without such a template.
    NoResources(Language),
    /// Writing the project failed.
    Io { path: PathBuf, source: io::Error },
}

impl fmt::Display for ScaffoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScaffoldError::InvalidName { name, reason } => {
                write!(f, "`{name}` cannot name a plugin: {reason}")
            }
            ScaffoldError::Exists(path) => write!(
                f,
                "{} already exists; choose another name, or remove it first",
                path.display()
            ),
            ScaffoldError::NoParent(path) => write!(f, "{} is not a folder", path.display()),
            ScaffoldError::Sdk { path, reason } => {
                write!(f, "--sdk-path {}: {reason}", path.display())
            }
            ScaffoldError::NoResources(language) => {
                let with_template: Vec<Language> = Language::ALL
                    .into_iter()
                    .filter(|language| files(*language, Offer::Resources).is_some())
                    .collect();
                let titles: Vec<&str> = with_template.iter().map(|l| l.title()).collect();
                let commands: Vec<String> = with_template
                    .iter()
                    .filter_map(clap::ValueEnum::to_possible_value)
                    .map(|value| value.get_name().to_owned())
                    .collect();
                // The languages without a template (C and Go) use bindings.
                write!(
                    f,
                    "--resources: only a {} project comes with resources and prompts so far \
                     (`corral new {} NAME --resources`); a {} plugin offers them by exporting \
                     the world plugin-full (`corral bindings c|go OUT --world plugin-full`, and \
                     the same --world to `corral componentize`; docs/plugins.md, \"Resources, \
                     prompts and completion\")",
                    either(&titles),
                    commands.join("|"),
                    language.title(),
                )
            }
            ScaffoldError::Io { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for ScaffoldError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ScaffoldError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn either(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [first @ .., last] => format!("{} or {last}", first.join(", ")),
    }
}

/// The longest NAME: Corral's limit on tool names.
const MAX_NAME: usize = 64;

/// Checks that `name` can be the project's folder, the plugin's file
/// (`NAME.wasm`, whose stem names the plugin), its tool and, for Rust, its
/// crate: a lowercase ASCII letter, then lowercase letters, digits, `-` and
/// `_`, at most 64 in all. Every such name is a valid tool name for every
/// client, a folder name that needs no quoting, and a package name cargo builds
/// (even a keyword such as `fn`: only `cargo new` refuses those).
pub fn check_name(name: &str) -> Result<(), ScaffoldError> {
    let invalid = |reason: &str| {
        Err(ScaffoldError::InvalidName {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    if name.is_empty() || name.len() > MAX_NAME {
        return invalid("it must be 1 to 64 characters long");
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return invalid("it must start with a lowercase letter (a-z)");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    {
        return invalid("use only lowercase letters, digits, `-` and `_`");
    }
    Ok(())
}

/// One file of a project.
struct File {
    /// Where it goes, relative to the project folder.
    path: &'static str,
    text: &'static str,
    /// `{{...}}` placeholders are filled in (false for files that must stay
    /// byte for byte as the repository has them).
    template: bool,
    executable: bool,
}

/// A template file of `host/corral/templates/$language/`, written at the
/// same path in the project.
macro_rules! template {
    ($language:literal, $path:literal) => {
        template!($language, $path, $path)
    };
    ($language:literal, $source:literal, $path:literal) => {
        File {
            path: $path,
            text: include_str!(concat!("../templates/", $language, "/", $source)),
            template: true,
            executable: false,
        }
    };
}

/// A template file with another after it, as one file: what `--resources`
/// adds where the entry module of a plain project ends.
macro_rules! continued {
    ($language:literal, $path:literal, $more:literal) => {
        File {
            path: $path,
            text: concat!(
                include_str!(concat!("../templates/", $language, "/", $path)),
                include_str!(concat!("../templates/", $language, "/", $more))
            ),
            template: true,
            executable: false,
        }
    };
}

/// An executable template (`build`, `test`).
macro_rules! script {
    ($language:literal, $path:literal) => {
        File {
            executable: true,
            ..template!($language, $path)
        }
    };
}

/// A file of this repository, copied unchanged.
macro_rules! shared {
    ($source:literal, $path:literal) => {
        File {
            path: $path,
            text: include_str!(concat!("../../../", $source)),
            template: false,
            executable: false,
        }
    };
}

/// The manifest every project but a Rust one starts with, `NAME.toml`: it
/// grants nothing, and shows a commented `[secrets]` table.
const MANIFEST: File = File {
    path: "{{name}}.toml",
    text: include_str!("../templates/manifest.toml"),
    template: true,
    executable: false,
};

/// The templates keep `.gitignore` as `gitignore`: under its real name it
/// would apply to the templates folder itself.
const RUST: &[File] = &[
    template!("rust", "Cargo.toml"),
    template!("rust", "src/lib.rs"),
    template!("rust", "README.md"),
    template!("rust", "gitignore", ".gitignore"),
    script!("rust", "build"),
    script!("rust", "test"),
];

/// What `--resources` makes of a Rust project: a plugin that also offers
/// resources and a prompt (in place of `RUST`'s src/lib.rs).
const RUST_RESOURCES: &[File] = &[template!("rust", "src/lib-resources.rs", "src/lib.rs")];

const PYTHON: &[File] = &[
    template!("python", "app.py"),
    template!("python", "contract.py"),
    template!("python", "tool.py"),
    template!("python", "test_tool.py"),
    template!("python", "README.md"),
    template!("python", "gitignore", ".gitignore"),
    script!("python", "build"),
    script!("python", "test"),
    shared!("wit/plugin.wit", "wit/plugin.wit"),
    // The world `./build` picks when NAME.toml grants [state], and the
    // wasi:keyvalue package it imports (wit-parser reads a folder's
    // dependencies from its deps/).
    shared!("wit/plugin-with-state.wit", "wit/plugin-with-state.wit"),
    shared!("wit/keyvalue/store.wit", "wit/deps/keyvalue/store.wit"),
    shared!("wit/keyvalue/atomic.wit", "wit/deps/keyvalue/atomic.wit"),
    shared!("wit/keyvalue/batch.wit", "wit/deps/keyvalue/batch.wit"),
    shared!("wit/keyvalue/world.wit", "wit/deps/keyvalue/world.wit"),
    // The world `./build` picks when NAME.toml grants [secrets] (or
    // [state] and [secrets]), and the wasi:config package it imports.
    shared!("wit/plugin-with-secrets.wit", "wit/plugin-with-secrets.wit"),
    shared!("wit/config/store.wit", "wit/deps/config/store.wit"),
    shared!("wit/config/world.wit", "wit/deps/config/world.wit"),
    MANIFEST,
];

/// What `--resources` makes of a Python project: app.py goes on with the
/// classes `Resources`, `Prompts` and `Completion` (which make ./build pick
/// the world plugin-full), serving what greetings.py holds.
const PYTHON_RESOURCES: &[File] = &[
    continued!("python", "app.py", "app-resources.py"),
    template!("python", "greetings.py"),
    template!("python", "test_greetings.py"),
];

const JS: &[File] = &[
    template!("js", "plugin.js"),
    template!("js", "contract.js"),
    template!("js", "tool.js"),
    template!("js", "tool.test.js"),
    template!("js", "package.json"),
    template!("js", "README.md"),
    template!("js", "gitignore", ".gitignore"),
    script!("js", "build"),
    script!("js", "test"),
    shared!("wit/plugin.wit", "wit/plugin.wit"),
    // As for Python: the world for a plugin that keeps state, and its import.
    shared!("wit/plugin-with-state.wit", "wit/plugin-with-state.wit"),
    shared!("wit/keyvalue/store.wit", "wit/deps/keyvalue/store.wit"),
    shared!("wit/keyvalue/atomic.wit", "wit/deps/keyvalue/atomic.wit"),
    shared!("wit/keyvalue/batch.wit", "wit/deps/keyvalue/batch.wit"),
    shared!("wit/keyvalue/world.wit", "wit/deps/keyvalue/world.wit"),
    // The world `./build` picks when NAME.toml grants [secrets] (or
    // [state] and [secrets]), and the wasi:config package it imports.
    shared!("wit/plugin-with-secrets.wit", "wit/plugin-with-secrets.wit"),
    shared!("wit/config/store.wit", "wit/deps/config/store.wit"),
    shared!("wit/config/world.wit", "wit/deps/config/world.wit"),
    MANIFEST,
    shared!("plugins/build-js.d/package.json", "toolchain/package.json"),
    shared!(
        "plugins/build-js.d/package-lock.json",
        "toolchain/package-lock.json"
    ),
    shared!(
        "plugins/build-js.d/componentize.mjs",
        "toolchain/componentize.mjs"
    ),
];

/// What `--resources` makes of a JavaScript project, as `PYTHON_RESOURCES`:
/// plugin.js goes on with `resources`, `prompts` and `completion`.
const JS_RESOURCES: &[File] = &[
    continued!("js", "plugin.js", "plugin-resources.js"),
    template!("js", "greetings.js"),
    template!("js", "greetings.test.js"),
];

/// What `--resources` makes of a TypeScript project, as `JS_RESOURCES`,
/// typed by the world plugin-full's declarations.
const TS_RESOURCES: &[File] = &[
    continued!("ts", "plugin.ts", "plugin-resources.ts"),
    template!("ts", "greetings.ts"),
    template!("ts", "greetings.test.ts"),
];

const C: &[File] = &[
    template!("c", "src/plugin.c"),
    template!("c", "src/greeting.c"),
    template!("c", "src/greeting.h"),
    template!("c", "tests/test_greeting.c"),
    template!("c", "README.md"),
    template!("c", "gitignore", ".gitignore"),
    script!("c", "build"),
    script!("c", "test"),
    shared!("plugins/c-hash/src/json.c", "src/json.c"),
    shared!("plugins/c-hash/src/json.h", "src/json.h"),
    MANIFEST,
];

const GO: &[File] = &[
    template!("go", "go.mod"),
    template!("go", "tool.go"),
    template!("go", "tool_test.go"),
    template!("go", "plugin/plugin.go"),
    template!("go", "README.md"),
    template!("go", "gitignore", ".gitignore"),
    script!("go", "build"),
    script!("go", "test"),
    MANIFEST,
];

/// As `JS`, in TypeScript: the toolchain adds jco (the contract's types,
/// `toolchain/guest-types.mjs`) and typescript to the same pinned install.
const TS: &[File] = &[
    template!("ts", "plugin.ts"),
    template!("ts", "tool.ts"),
    template!("ts", "tool.test.ts"),
    template!("ts", "tsconfig.json"),
    template!("ts", "tsconfig.test.json"),
    template!("ts", "package.json"),
    template!("ts", "README.md"),
    template!("ts", "gitignore", ".gitignore"),
    template!("ts", "toolchain/install"),
    script!("ts", "build"),
    script!("ts", "test"),
    shared!("wit/plugin.wit", "wit/plugin.wit"),
    shared!("wit/plugin-with-state.wit", "wit/plugin-with-state.wit"),
    shared!("wit/keyvalue/store.wit", "wit/deps/keyvalue/store.wit"),
    shared!("wit/keyvalue/atomic.wit", "wit/deps/keyvalue/atomic.wit"),
    shared!("wit/keyvalue/batch.wit", "wit/deps/keyvalue/batch.wit"),
    shared!("wit/keyvalue/world.wit", "wit/deps/keyvalue/world.wit"),
    // The world `./build` picks when NAME.toml grants [secrets] (or
    // [state] and [secrets]), and the wasi:config package it imports.
    shared!("wit/plugin-with-secrets.wit", "wit/plugin-with-secrets.wit"),
    shared!("wit/config/store.wit", "wit/deps/config/store.wit"),
    shared!("wit/config/world.wit", "wit/deps/config/world.wit"),
    MANIFEST,
    shared!("plugins/build-js.d/package.json", "toolchain/package.json"),
    shared!(
        "plugins/build-js.d/package-lock.json",
        "toolchain/package-lock.json"
    ),
    shared!(
        "plugins/build-js.d/componentize.mjs",
        "toolchain/componentize.mjs"
    ),
    shared!(
        "plugins/build-js.d/guest-types.mjs",
        "toolchain/guest-types.mjs"
    ),
];

/// The files of a project, or `None` for a combination no template has:
/// the language's, with those of the offer added (or in place of the file
/// of the same path).
fn files(language: Language, offer: Offer) -> Option<Vec<&'static File>> {
    let (project, offered): (&[File], &[File]) = match (language, offer) {
        (Language::Rust, Offer::Tools) => (RUST, &[]),
        (Language::Rust, Offer::Resources) => (RUST, RUST_RESOURCES),
        (Language::Python, Offer::Tools) => (PYTHON, &[]),
        (Language::Python, Offer::Resources) => (PYTHON, PYTHON_RESOURCES),
        (Language::Js, Offer::Tools) => (JS, &[]),
        (Language::Js, Offer::Resources) => (JS, JS_RESOURCES),
        (Language::C, Offer::Tools) => (C, &[]),
        (Language::Ts, Offer::Tools) => (TS, &[]),
        (Language::Ts, Offer::Resources) => (TS, TS_RESOURCES),
        (Language::Go, Offer::Tools) => (GO, &[]),
        _ => return None,
    };
    let replaced = |file: &File| offered.iter().any(|offer| offer.path == file.path);
    Some(
        project
            .iter()
            .filter(|file| !replaced(file))
            .chain(offered)
            .collect(),
    )
}

/// A project that [`create`] wrote.
#[derive(Debug)]
pub struct Created {
    pub language: Language,
    pub name: String,
    /// The project folder, `PARENT/NAME`.
    pub dir: PathBuf,
    pub sdk: Sdk,
    pub offer: Offer,
    /// Why the SDK is that one (Rust projects only; `None` for the others).
    pub sdk_origin: Option<SdkOrigin>,
}

impl Created {
    /// What to do next, for a person at a terminal.
    pub fn next_steps(&self) -> String {
        let what = match self.offer {
            Offer::Tools => format!("one tool, `{}`", self.name),
            Offer::Resources => format!(
                "a tool, `{}`, a resource, a resource template and a prompt",
                self.name
            ),
        };
        let mut text = format!(
            "Created {} (a {} plugin with {what}). Next:\n  cd {}\n  ./build\n  ./test\n  corral call . {} '{{\"name\": \"Ada\"}}'\n",
            self.dir.display(),
            self.language.title(),
            self.dir.display(),
            self.name,
        );
        match (&self.sdk, &self.sdk_origin) {
            (Sdk::Path(path), Some(SdkOrigin::BuiltFrom)) => text.push_str(&format!(
                "It depends on corral-sdk at {}, the checkout this corral was built from.\n",
                path.display()
            )),
            (Sdk::Path(path), _) => text.push_str(&format!(
                "It depends on corral-sdk at {} (--sdk-path).\n",
                path.display()
            )),
            (Sdk::CratesIo, Some(SdkOrigin::CheckoutGone(checkout))) => text.push_str(&format!(
                "It depends on corral-sdk 0.1 from crates.io: the checkout this corral was built \
                 from ({}) is gone. To build against a checkout of Corral instead, run in the \
                 project: {SDK_FIX}\n",
                checkout.display()
            )),
            (Sdk::CratesIo, _) => {}
        }
        text
    }
}

/// The one command that points a Rust project at a checkout's SDK, for
/// `./build` and the next steps to print when the SDK cannot be had. (Not
/// `cargo add --path`: cargo cannot load a project whose path dependency is
/// gone, not even to replace it.)
pub const SDK_FIX: &str = "./build --sdk-path /path/to/corral/sdk-guest";

/// What a project needs to know of the `corral` that writes it.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    /// `--sdk-path` (or `CORRAL_SDK_PATH`), Rust only.
    pub sdk_path: Option<PathBuf>,
    /// The checkout's SDK recorded when this `corral` was built
    /// ([`BUILT_FROM_SDK`]).
    pub built_from_sdk: PathBuf,
    /// This `corral` binary, for a C project's build to fall back on when no
    /// `corral` is on PATH (`None` when it cannot be told).
    pub corral: Option<PathBuf>,
}

impl Origin {
    /// The running `corral`, built from the checkout at [`BUILT_FROM_SDK`].
    pub fn this_corral(sdk_path: Option<PathBuf>) -> Origin {
        Origin {
            sdk_path,
            built_from_sdk: PathBuf::from(BUILT_FROM_SDK),
            corral: std::env::current_exe().and_then(fs::canonicalize).ok(),
        }
    }
}

/// Writes the project `parent/name/` for `language`, whose plugin offers
/// `offer`. Refuses an existing `name` (file or folder); on any failure
/// removes what it wrote.
pub fn create(
    language: Language,
    name: &str,
    parent: &Path,
    origin: &Origin,
    offer: Offer,
) -> Result<Created, ScaffoldError> {
    check_name(name)?;
    let files = files(language, offer).ok_or(ScaffoldError::NoResources(language))?;
    // Everything that can be checked is checked before the folder exists.
    // Only a Rust project has the SDK dependency; a path given for another
    // language is ignored (CORRAL_SDK_PATH may be set for every `corral new`).
    let (sdk, sdk_origin) = match language {
        Language::Rust => {
            let (sdk, why) = Sdk::choose(origin.sdk_path.clone(), &origin.built_from_sdk)?;
            (sdk, Some(why))
        }
        _ => (Sdk::CratesIo, None),
    };
    if !parent.is_dir() {
        return Err(ScaffoldError::NoParent(parent.to_path_buf()));
    }
    let dir = parent.join(name);
    // create_dir, not create_dir_all: it fails if anything is there, so an
    // existing project is never written into.
    if let Err(source) = fs::create_dir(&dir) {
        return Err(if source.kind() == io::ErrorKind::AlreadyExists {
            ScaffoldError::Exists(dir)
        } else {
            ScaffoldError::Io { path: dir, source }
        });
    }
    let substitutions = substitutions(name, &sdk, origin.corral.as_deref());
    if let Err(err) = write_files(&dir, &files, &substitutions) {
        // The folder is ours: create_dir made it just now.
        let _ = fs::remove_dir_all(&dir);
        return Err(err);
    }
    Ok(Created {
        language,
        name: name.to_string(),
        dir,
        sdk,
        offer,
        sdk_origin,
    })
}

/// The placeholders and their values.
fn substitutions(name: &str, sdk: &Sdk, corral: Option<&Path>) -> Vec<(&'static str, String)> {
    let (dependency, readme) = match sdk {
        Sdk::CratesIo => (
            "corral-sdk = \"0.1\"".to_string(),
            format!(
                "`Cargo.toml` depends on `corral-sdk = \"0.1\"` from crates.io. To build against \
                 a checkout of Corral's repository instead, point the dependency at its \
                 `sdk-guest/` folder: `{SDK_FIX}`."
            ),
        ),
        Sdk::Path(path) => (
            format!(
                "# The guest SDK of a local checkout of Corral.\ncorral-sdk = {{ path = {} }}",
                toml_string(&path.to_string_lossy())
            ),
            format!(
                "`Cargo.toml` depends on the SDK in a local checkout of Corral, `{}`: cargo builds \
                 it from there. If that checkout moves, point the dependency at its new place \
                 with `{SDK_FIX}`; to use the published crate instead, write \
                 `corral-sdk = \"0.1\"` (from crates.io).",
                path.display()
            ),
        ),
    };
    vec![
        ("name", name.to_string()),
        // A URI scheme has no `_` (RFC 3986): `my_plugin://` would be refused.
        ("scheme", name.replace('_', "-")),
        ("sdk_dependency", dependency),
        ("sdk_readme", readme),
        ("sdk_fix", SDK_FIX.to_string()),
        (
            "corral_path",
            shell_string(
                &corral
                    .map(|path| path.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
        ),
    ]
}

/// `text` as one word of bash: in single quotes, each `'` written `'\''`.
fn shell_string(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Fills in every `{{key}}` of `text`.
fn render(text: &str, substitutions: &[(&str, String)]) -> String {
    let mut text = text.to_string();
    for (key, value) in substitutions {
        text = text.replace(&format!("{{{{{key}}}}}"), value);
    }
    text
}

fn write_files(
    dir: &Path,
    files: &[&File],
    substitutions: &[(&str, String)],
) -> Result<(), ScaffoldError> {
    for file in files {
        // A template's path may name the project too (`{{name}}.toml`).
        let path = dir.join(if file.template {
            render(file.path, substitutions)
        } else {
            file.path.to_string()
        });
        let io_error = |source| ScaffoldError::Io {
            path: path.clone(),
            source,
        };
        if let Some(folder) = path.parent() {
            fs::create_dir_all(folder).map_err(io_error)?;
        }
        let text = if file.template {
            render(file.text, substitutions)
        } else {
            file.text.to_string()
        };
        fs::write(&path, text).map_err(io_error)?;
        if file.executable {
            make_executable(&path).map_err(io_error)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
}

/// The scripts are bash: elsewhere they are run with `bash build`.
#[cfg(not(unix))]
fn make_executable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// The corral-sdk crate at `path`, or in its `sdk-guest/` folder when
/// `path` is the repository root, as an absolute path: the dependency is
/// written into a project in another folder.
fn sdk_crate(path: &Path) -> Result<PathBuf, ScaffoldError> {
    let error = |reason: String| ScaffoldError::Sdk {
        path: path.to_path_buf(),
        reason,
    };
    let absolute = fs::canonicalize(path).map_err(|err| error(err.to_string()))?;
    for candidate in [absolute.clone(), absolute.join("sdk-guest")] {
        let Ok(manifest) = fs::read_to_string(candidate.join("Cargo.toml")) else {
            continue;
        };
        if is_corral_sdk(&manifest) {
            if candidate.to_str().is_none() {
                return Err(error(
                    "the path is not UTF-8, which Cargo.toml cannot hold".into(),
                ));
            }
            return Ok(candidate);
        }
    }
    Err(error(
        "no corral-sdk crate there; name the sdk-guest/ folder of a checkout of Corral".into(),
    ))
}

/// Whether a Cargo.toml is corral-sdk's: its `[package]` is named so.
fn is_corral_sdk(manifest: &str) -> bool {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package
            && let Some(value) = line.strip_prefix("name")
            && let Some(value) = value.trim_start().strip_prefix('=')
        {
            return value.trim() == "\"corral-sdk\"";
        }
    }
    false
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04X}", c as u32)),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_identifiers_of_at_most_64_characters() {
        for good in ["greet", "my-tool", "word_count2", &"a".repeat(64)] {
            check_name(good).unwrap();
        }
        for (bad, why) in [
            ("", "1 to 64"),
            (&"a".repeat(65), "1 to 64"),
            ("2fast", "start with a lowercase letter"),
            ("-x", "start with a lowercase letter"),
            ("Greet", "start with a lowercase letter"),
            ("greet.v2", "only lowercase letters"),
            ("my tool", "only lowercase letters"),
            ("../x", "start with a lowercase letter"),
            ("a/b", "only lowercase letters"),
        ] {
            let err = check_name(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }

    /// Every template's placeholders are known: none is left after rendering.
    #[test]
    fn every_placeholder_is_filled_in() {
        for language in Language::ALL {
            for sdk in [Sdk::CratesIo, Sdk::Path("/x/sdk-guest".into())] {
                let projects = [Offer::Tools, Offer::Resources]
                    .into_iter()
                    .filter_map(|offer| files(language, offer));
                for file in projects.flatten().filter(|f| f.template) {
                    let text = render(
                        file.text,
                        &substitutions("greet", &sdk, Some(Path::new("/x/corral"))),
                    );
                    assert!(
                        !text.contains("{{"),
                        "{language:?} {}: a placeholder is left:\n{text}",
                        file.path
                    );
                }
            }
        }
    }

    /// An [`Origin`] with no `--sdk-path` and a built-from checkout at `sdk`.
    fn origin(sdk: &Path) -> Origin {
        Origin {
            sdk_path: None,
            built_from_sdk: sdk.to_path_buf(),
            corral: Some("/opt/it's/corral".into()),
        }
    }

    fn this_checkout() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn creates_the_project_and_refuses_to_overwrite_it() {
        let parent = tempfile::tempdir().unwrap();
        let created = create(
            Language::Python,
            "greet",
            parent.path(),
            &Origin::default(),
            Offer::Tools,
        )
        .unwrap();
        assert_eq!(created.dir, parent.path().join("greet"));
        let app = fs::read_to_string(created.dir.join("app.py")).unwrap();
        assert!(app.contains("TOOL_NAME = \"greet\""), "{app}");
        assert_eq!(
            fs::read_to_string(created.dir.join("wit/plugin.wit")).unwrap(),
            include_str!("../../../wit/plugin.wit")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(created.dir.join("build"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o111, 0o111, "build is executable");
        }

        // Neither an existing project nor a file of that name is written into.
        fs::write(created.dir.join("app.py"), "mine").unwrap();
        let err = create(
            Language::C,
            "greet",
            parent.path(),
            &Origin::default(),
            Offer::Tools,
        )
        .unwrap_err();
        assert!(matches!(err, ScaffoldError::Exists(_)), "{err}");
        assert_eq!(
            fs::read_to_string(created.dir.join("app.py")).unwrap(),
            "mine"
        );
        fs::write(parent.path().join("file"), "").unwrap();
        let err = create(
            Language::C,
            "file",
            parent.path(),
            &Origin::default(),
            Offer::Tools,
        )
        .unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
    }

    #[test]
    fn a_missing_parent_or_a_wrong_sdk_path_writes_nothing() {
        let parent = tempfile::tempdir().unwrap();
        let missing = parent.path().join("nope");
        let err = create(
            Language::Rust,
            "greet",
            &missing,
            &Origin::default(),
            Offer::Tools,
        )
        .unwrap_err();
        assert!(matches!(err, ScaffoldError::NoParent(_)), "{err}");

        let given = Origin {
            sdk_path: Some(parent.path().to_path_buf()),
            ..origin(&this_checkout())
        };
        let err = create(Language::Rust, "greet", parent.path(), &given, Offer::Tools).unwrap_err();
        assert!(
            err.to_string().contains("no corral-sdk crate there"),
            "{err}"
        );
        assert!(!parent.path().join("greet").exists());
    }

    #[test]
    fn the_sdk_path_may_be_the_crate_or_the_repository_root() {
        let repo = this_checkout();
        let sdk = fs::canonicalize(repo.join("sdk-guest")).unwrap();
        assert_eq!(sdk_crate(&repo).unwrap(), sdk);
        assert_eq!(sdk_crate(&repo.join("sdk-guest")).unwrap(), sdk);

        let parent = tempfile::tempdir().unwrap();
        let given = Origin {
            sdk_path: Some(repo),
            ..Origin::default()
        };
        let created = create(Language::Rust, "greet", parent.path(), &given, Offer::Tools).unwrap();
        assert_eq!(created.sdk_origin, Some(SdkOrigin::Given));
        let manifest = fs::read_to_string(created.dir.join("Cargo.toml")).unwrap();
        let line = format!(
            "corral-sdk = {{ path = {} }}",
            toml_string(sdk.to_str().unwrap())
        );
        assert!(manifest.contains(&line), "{manifest}");
    }

    /// With no --sdk-path, a Rust project depends on the SDK of the checkout
    /// that built corral, and says so; when that checkout is gone, on
    /// crates.io, saying why and the command that points it at a checkout.
    #[test]
    fn the_sdk_is_the_built_from_checkouts_until_it_is_gone() {
        assert!(
            is_corral_sdk(
                &fs::read_to_string(Path::new(BUILT_FROM_SDK).join("Cargo.toml")).unwrap()
            ),
            "BUILT_FROM_SDK names this checkout's sdk-guest"
        );
        let parent = tempfile::tempdir().unwrap();
        let built_from = this_checkout().join("sdk-guest");
        let created = create(
            Language::Rust,
            "here",
            parent.path(),
            &origin(&built_from),
            Offer::Tools,
        )
        .unwrap();
        let sdk = fs::canonicalize(&built_from).unwrap();
        assert_eq!(created.sdk, Sdk::Path(sdk.clone()));
        let manifest = fs::read_to_string(created.dir.join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains(&toml_string(sdk.to_str().unwrap())),
            "{manifest}"
        );
        let said = created.next_steps();
        assert!(
            said.contains(&format!(
                "corral-sdk at {}, the checkout this corral was built from",
                sdk.display()
            )),
            "{said}"
        );

        let gone = parent.path().join("moved-away/sdk-guest");
        let created = create(
            Language::Rust,
            "gone",
            parent.path(),
            &origin(&gone),
            Offer::Tools,
        )
        .unwrap();
        assert_eq!(created.sdk, Sdk::CratesIo);
        let manifest = fs::read_to_string(created.dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("corral-sdk = \"0.1\""), "{manifest}");
        let said = created.next_steps();
        assert!(
            said.contains(&format!(
                "from crates.io: the checkout this corral was built from ({}) is gone",
                gone.display()
            )) && said.contains(SDK_FIX),
            "{said}"
        );
    }

    /// A C project's build falls back on the corral that wrote it, quoted
    /// for bash whatever its path.
    #[test]
    fn a_c_project_records_the_corral_that_wrote_it() {
        let parent = tempfile::tempdir().unwrap();
        let created = create(
            Language::C,
            "cc",
            parent.path(),
            &origin(Path::new("/nowhere")),
            Offer::Tools,
        )
        .unwrap();
        let build = fs::read_to_string(created.dir.join("build")).unwrap();
        assert!(
            build.contains(r"written_by='/opt/it'\''s/corral'"),
            "{build}"
        );
        assert_eq!(created.sdk_origin, None);
    }

    /// A TypeScript project's toolchain is the JavaScript one, byte for
    /// byte, so that both are one install in a shared toolchain folder; its
    /// generated types and builds stay out of git.
    #[test]
    fn a_typescript_project_shares_the_javascript_toolchain() {
        let parent = tempfile::tempdir().unwrap();
        let created = create(
            Language::Ts,
            "greet_ts",
            parent.path(),
            &origin(Path::new("/nowhere")),
            Offer::Tools,
        )
        .unwrap();
        for (file, repository) in [
            (
                "package-lock.json",
                include_str!("../../../plugins/build-js.d/package-lock.json"),
            ),
            (
                "guest-types.mjs",
                include_str!("../../../plugins/build-js.d/guest-types.mjs"),
            ),
        ] {
            let copied = fs::read_to_string(created.dir.join("toolchain").join(file)).unwrap();
            assert_eq!(copied, repository, "toolchain/{file}");
        }
        let plugin = fs::read_to_string(created.dir.join("plugin.ts")).unwrap();
        assert!(plugin.contains("const TOOL_NAME = 'greet_ts';"), "{plugin}");
        let ignored = fs::read_to_string(created.dir.join(".gitignore")).unwrap();
        assert_eq!(
            ignored,
            "/greet_ts.wasm\n/greet_ts.wasm.tmp\n/.build/\n/types/\n"
        );
        assert!(created.next_steps().contains("a TypeScript plugin"));
    }

    #[test]
    fn resources_come_in_four_languages_and_c_and_go_are_told_how() {
        let parent = tempfile::tempdir().unwrap();
        let given = Origin {
            sdk_path: Some(this_checkout().join("sdk-guest")),
            ..Origin::default()
        };
        let created = create(
            Language::Rust,
            "my_docs",
            parent.path(),
            &given,
            Offer::Resources,
        )
        .unwrap();
        let lib = fs::read_to_string(created.dir.join("src/lib.rs")).unwrap();
        assert!(lib.contains("\"my-docs://greetings/{language}\""), "{lib}");
        assert!(lib.contains("Tool::new(\"my_docs\""), "{lib}");
        assert!(
            created
                .next_steps()
                .contains("a resource template and a prompt")
        );

        let err = create(
            Language::C,
            "cdocs",
            parent.path(),
            &Origin::default(),
            Offer::Resources,
        )
        .unwrap_err();
        assert!(
            matches!(err, ScaffoldError::NoResources(Language::C)),
            "{err}"
        );
        // The refusal says what does work, in that language.
        let said = err.to_string();
        assert!(
            said.contains(
                "only a Rust, Python, JavaScript or TypeScript project comes with resources"
            ) && said.contains("corral new rust|python|js|ts NAME --resources")
                && said.contains("--world plugin-full"),
            "{said}"
        );
        assert!(!parent.path().join("cdocs").exists());

        // Python, JavaScript and TypeScript: the entry module goes on with
        // what makes ./build pick plugin-full, and greetings.* holds what it
        // serves.
        for (language, entry, offers, files) in [
            (
                Language::Python,
                "app.py",
                [
                    "\nclass Tools(exports.Tools):",
                    "\nclass Resources(exports.Resources):",
                ],
                ["greetings.py", "test_greetings.py", "tool.py"],
            ),
            (
                Language::Js,
                "plugin.js",
                ["\nexport const tools = ", "\nexport const resources = "],
                ["greetings.js", "greetings.test.js", "tool.js"],
            ),
            (
                Language::Ts,
                "plugin.ts",
                ["\nexport const tools: ", "\nexport const resources: "],
                ["greetings.ts", "greetings.test.ts", "tool.ts"],
            ),
        ] {
            let folder = tempfile::tempdir().unwrap();
            let created = create(
                language,
                "my_docs",
                folder.path(),
                &Origin::default(),
                Offer::Resources,
            )
            .unwrap();
            let source = fs::read_to_string(created.dir.join(entry)).unwrap();
            assert!(
                offers.iter().all(|offer| source.contains(offer))
                    && source.contains("my-docs://greetings/{language}"),
                "{entry}: {source}"
            );
            for file in files {
                assert!(created.dir.join(file).is_file(), "{language:?}: {file}");
            }
        }
    }

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_string(r#"C:\a "b""#), r#""C:\\a \"b\"""#);
        assert_eq!(toml_string("a\nb"), r#""a\u000Ab""#);
    }

    /// componentize-py's failure is tidied by the same code in a project's
    /// ./build and in the repository's plugins/build-python; a project is
    /// standalone, so each has a copy, which must not drift.
    #[test]
    fn python_builds_tidy_componentize_py_failures_alike() {
        fn function(script: &str) -> &str {
            let start = script
                .find("\ncomponentize_py_reason() {\n")
                .expect("componentize_py_reason is defined");
            let body = &script[start..];
            &body[..body.find("\n}\n").expect("it ends") + 3]
        }
        let project = include_str!("../templates/python/build");
        let repository = include_str!("../../../plugins/build-python");
        assert_eq!(function(project), function(repository));
    }
}
