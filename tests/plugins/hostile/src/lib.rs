//! A hostile plugin: every tool attacks the sandbox in one way, so that the
//! end-to-end tests (`tests/sandbox.rs`) can prove each attack fails.
//!
//! Every attack reports what it achieved: on success the tool returns what it
//! got (file contents, a directory listing, a variable's value), and on
//! failure it returns a tool error carrying the guest-side error message.
//! Tests assert on both. `ok` is the harmless call made after each attack to
//! prove the server still serves.

use std::hint::black_box;
use std::io::Write as _;

use corral_sdk::{NoArgs, Tool, ToolError, plugin};
use schemars::JsonSchema;
use serde::Deserialize;

/// A size in mebibytes.
#[derive(Deserialize, JsonSchema)]
struct Mebibytes {
    /// How many MiB.
    mib: u32,
}

/// A path in the guest's file system view.
#[derive(Deserialize, JsonSchema)]
struct PathArg {
    /// The path, as the guest sees it (e.g. `/data/file.txt`).
    path: String,
}

/// A file to write.
#[derive(Deserialize, JsonSchema)]
struct WriteArgs {
    /// The path, as the guest sees it.
    path: String,
    /// What to write.
    contents: String,
}

/// An environment variable.
#[derive(Deserialize, JsonSchema)]
struct EnvArg {
    /// The variable's name.
    name: String,
}

/// A socket address.
#[derive(Deserialize, JsonSchema)]
struct AddrArg {
    /// `host:port`, e.g. `127.0.0.1:80`.
    addr: String,
}

const MIB: usize = 1 << 20;

/// Burns CPU forever.
fn spin(_: NoArgs) -> String {
    let mut counter: u64 = 0;
    loop {
        counter = black_box(counter.wrapping_add(1));
    }
}

/// Allocates 1 MiB chunks forever, touching every page so the memory is real.
fn memory_bomb(_: NoArgs) -> String {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut chunk = vec![0u8; MIB];
        // Write to every 4 KiB page so that the memory is really committed.
        for page in (0..MIB).step_by(4096) {
            chunk[page] = 0xAB;
        }
        chunks.push(black_box(chunk));
        black_box(&chunks);
    }
}

/// Unbounded non-tail recursion.
fn recurse(depth: u64) -> u64 {
    if depth == black_box(u64::MAX) {
        return 0;
    }
    let below = recurse(black_box(depth + 1));
    black_box(below).wrapping_add(depth)
}

fn deep_recursion(_: NoArgs) -> String {
    format!("recursion returned {}", recurse(0))
}

/// A result of `mib` MiB.
fn huge_output(args: Mebibytes) -> String {
    "x".repeat(args.mib as usize * MIB)
}

fn read_file(args: PathArg) -> Result<String, ToolError> {
    std::fs::read_to_string(&args.path)
        .map_err(|err| ToolError::new(format!("reading {}: {err}", args.path)))
}

fn write_file(args: WriteArgs) -> Result<String, ToolError> {
    std::fs::write(&args.path, &args.contents)
        .map_err(|err| ToolError::new(format!("writing {}: {err}", args.path)))?;
    Ok(format!(
        "wrote {} bytes to {}",
        args.contents.len(),
        args.path
    ))
}

fn list_dir(args: PathArg) -> Result<String, ToolError> {
    let entries = std::fs::read_dir(&args.path)
        .map_err(|err| ToolError::new(format!("listing {}: {err}", args.path)))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|err| ToolError::new(format!("listing {}: {err}", args.path)))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names.join("\n"))
}

/// The variable's value, and how many variables the plugin can see at all.
fn read_env(args: EnvArg) -> Result<String, ToolError> {
    let count = std::env::vars().count();
    match std::env::var(&args.name) {
        Ok(value) => Ok(format!("{}={value} ({count} variables visible)", args.name)),
        Err(err) => Err(ToolError::new(format!(
            "{}: {err} ({count} variables visible)",
            args.name
        ))),
    }
}

/// Tries a TCP connection to `addr` and a DNS lookup of example.com. Succeeds
/// (reporting what worked) if either did.
fn open_socket(args: AddrArg) -> Result<String, ToolError> {
    use std::net::{TcpStream, ToSocketAddrs};
    let connect = TcpStream::connect(&args.addr)
        .map(|stream| format!("connected to {:?}", stream.peer_addr()));
    let lookup = "example.com:80"
        .to_socket_addrs()
        .map(|addrs| format!("example.com resolved to {:?}", addrs.collect::<Vec<_>>()));
    match (connect, lookup) {
        (Err(connect), Err(lookup)) => Err(ToolError::new(format!(
            "connecting to {}: {connect}; looking up example.com: {lookup}",
            args.addr
        ))),
        (connect, lookup) => Ok(format!(
            "connect {}: {}; lookup example.com: {}",
            args.addr,
            connect.unwrap_or_else(|e| format!("failed: {e}")),
            lookup.unwrap_or_else(|e| format!("failed: {e}")),
        )),
    }
}

/// Writes `mib` MiB to stdout and to stderr (ignoring errors, to push as hard
/// as possible), then answers "flooded".
fn stdout_flood(args: Mebibytes) -> String {
    let line = "FLOOD this line is not JSON and must never reach the protocol stream\n";
    let chunk = line.repeat(MIB / line.len() + 1);
    let chunk = &chunk.as_bytes()[..MIB];
    let mut errors = Vec::new();
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    for _ in 0..args.mib {
        if let Err(err) = stdout.write_all(chunk) {
            errors.push(format!("stdout: {err}"));
        }
        if let Err(err) = stderr.write_all(chunk) {
            errors.push(format!("stderr: {err}"));
        }
    }
    let _ = stdout.flush();
    let _ = stderr.flush();
    errors.dedup();
    if errors.is_empty() {
        "flooded".into()
    } else {
        format!("flooded ({} write errors: {})", errors.len(), errors[0])
    }
}

fn panic(_: NoArgs) -> String {
    panic!("hostile panic: boom")
}

fn ok(_: NoArgs) -> &'static str {
    "ok"
}

plugin! {
    Tool::new("spin", spin).description("Loop forever."),
    Tool::new("memory_bomb", memory_bomb).description("Allocate 1 MiB chunks forever."),
    Tool::new("deep_recursion", deep_recursion).description("Recurse without end."),
    Tool::new("huge_output", huge_output).description("Return a string of `mib` MiB."),
    Tool::new("read_file", read_file).description("Read a file as text."),
    Tool::new("write_file", write_file).description("Write a file."),
    Tool::new("list_dir", list_dir).description("List a directory."),
    Tool::new("read_env", read_env).description("Read an environment variable."),
    Tool::new("open_socket", open_socket).description("Open a TCP connection and resolve a name."),
    Tool::new("stdout_flood", stdout_flood).description("Write `mib` MiB to stdout and stderr."),
    Tool::new("panic", panic).description("Panic."),
    Tool::new("ok", ok).description("Answer \"ok\"."),
}
