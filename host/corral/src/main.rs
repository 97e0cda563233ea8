//! The `corral` command line.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use clap::{Parser, Subcommand};
use corral::bindings;
use corral::catalog::{self, Catalog, Snapshot};
use corral::componentize;
use corral::contract::{Contract, DEFAULT_WORLD};
use corral::dev;
use corral::distribute;
use corral::grants;
use corral::host::FolderHost;
use corral::reload;
use corral::reports::Reports;
use corral::scaffold::{self, Language};
use corral::state;
use corral::telemetry::logs::{self, LogFormat};
use corral::telemetry::otlp::OtlpConfig;
use corral_mcp::{self as mcp, Revision, ServerOptions, ToolHost};
use corral_registry::lock::Lock;
use corral_sandbox::imports::Verdict;
use corral_sandbox::units::human_bytes;
use corral_sandbox::{Inspection, Sandbox, SandboxOptions, cache};
use corral_tool::{
    CallContext, CallEvent, EventSink, NotLoaded, PromptDef, ResourceDef, ResourceTemplateDef,
};
use serde_json::{Map, Value};

/// `serve --http`: the Streamable HTTP transport instead of stdio.
#[derive(clap::Args)]
struct HttpFlags {
    /// Serve MCP over Streamable HTTP on ADDR (host:port, or a bare port
    /// for 127.0.0.1) at the path /mcp, instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Require `Authorization: Bearer TOKEN` on every HTTP request. Needed
    /// to listen on a non-loopback address.
    #[arg(
        long,
        env = "CORRAL_BEARER_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    bearer_token: Option<String>,
    /// Listen on a non-loopback address without a bearer token (for a
    /// proxy in front that authenticates).
    #[arg(long)]
    allow_unauthenticated: bool,
    /// This server's canonical URI (such as https://mcp.example.com/mcp),
    /// which access tokens must name as their audience. With
    /// --oauth-issuer, the server is an OAuth resource server.
    #[arg(long, value_name = "URI", requires = "oauth_issuers")]
    resource: Option<String>,
    /// An authorization server whose access tokens are accepted, exactly as
    /// its tokens' `iss` says (repeatable). `http://` only on loopback.
    #[arg(long = "oauth-issuer", value_name = "URL", requires = "resource")]
    oauth_issuers: Vec<String>,
    /// An audience accepted in tokens besides --resource (repeatable): for
    /// an issuer that names the API by another identifier, such as the
    /// application (client) id Microsoft Entra ID puts in `aud`.
    #[arg(long = "oauth-audience", value_name = "AUD", requires = "resource")]
    oauth_audiences: Vec<String>,
    /// A scope every request's token must grant (repeatable), whatever the
    /// plugins' [access] policies ask besides.
    #[arg(long = "oauth-scope", value_name = "SCOPE", requires = "resource")]
    oauth_scopes: Vec<String>,
    /// Introspect opaque access tokens (RFC 7662) at the issuers'
    /// introspection endpoints as this client; its secret comes from
    /// CORRAL_OAUTH_CLIENT_SECRET.
    #[arg(long, value_name = "CLIENT_ID", requires = "resource")]
    oauth_introspection_client: Option<String>,
    /// Corral's own client registration at the (first) --oauth-issuer, with
    /// the redirect URI ORIGIN/corral/signin (ORIGIN: --resource's), so
    /// that users can sign in to the page where they set their own
    /// secrets (a plugin's `per = "principal"` secrets). Its secret comes
    /// from CORRAL_OAUTH_WEB_CLIENT_SECRET.
    #[arg(long, value_name = "CLIENT_ID", requires = "resource")]
    oauth_web_client: Option<String>,
    /// The file holding the key (32 bytes: 64 hex digits, or base64, such
    /// as `openssl rand -base64 32` writes) that encrypts users' own
    /// secrets at rest in the state store; or the key itself in
    /// CORRAL_SECRETS_KEY. Without either, plugins' per-user secrets are
    /// not kept.
    #[arg(long, value_name = "PATH")]
    secrets_key_file: Option<std::path::PathBuf>,
    /// A host name accepted in the Host header besides the loopback names
    /// (repeatable). Without any, a non-loopback listener accepts any host.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// A browser origin (scheme://host[:port]) accepted besides loopback
    /// origins (repeatable).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// The largest HTTP request body accepted, in bytes.
    #[arg(long, default_value_t = mcp::HttpOptions::default().max_body_bytes, value_name = "BYTES")]
    max_body_bytes: usize,
    /// The most HTTP connections open at once; more are answered 503 and
    /// closed.
    #[arg(long, default_value_t = mcp::HttpOptions::default().max_connections, value_name = "N")]
    max_connections: usize,
}

/// What an operator watches (`serve` and `dev`): see docs/observability.md.
#[derive(clap::Args)]
struct ObserveFlags {
    /// Serve /metrics (Prometheus), /healthz and /readyz on ADDR (host:port,
    /// or a bare port for 127.0.0.1), without authorization: bind it where
    /// only your scrapers reach. With --http they are also served on the
    /// MCP listener, /metrics behind its authorization.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<String>,
    /// Export traces over OTLP/HTTP (protobuf) to this collector's base URL
    /// (such as http://127.0.0.1:4318; /v1/traces is appended). Defaults to
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT;
    /// OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_HEADERS are read too.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
}

/// The address `flag` names: host:port, or a bare port for 127.0.0.1.
fn listen_address(flag: &str, addr: &str) -> Result<std::net::SocketAddr> {
    match addr.parse::<u16>() {
        Ok(port) => Ok(([127, 0, 0, 1], port).into()),
        Err(_) => addr
            .parse()
            .with_context(|| format!("{flag} {addr}: expected host:port or a port")),
    }
}

impl HttpFlags {
    /// The OAuth resource server's settings, if --resource names one.
    fn authorizer(&self) -> Result<Option<std::sync::Arc<mcp::auth::Authorizer>>> {
        let Some(resource) = &self.resource else {
            return Ok(None);
        };
        let mut options = mcp::auth::AuthOptions::new(resource.clone(), self.oauth_issuers.clone());
        options.scopes = self.oauth_scopes.clone();
        options.audiences = self.oauth_audiences.clone();
        if let Some(client) = &self.oauth_web_client {
            let secret = std::env::var("CORRAL_OAUTH_WEB_CLIENT_SECRET").map_err(|_| {
                anyhow::anyhow!(
                    "--oauth-web-client needs the client's secret in CORRAL_OAUTH_WEB_CLIENT_SECRET"
                )
            })?;
            options.web_client = Some(mcp::auth::WebClient {
                id: client.clone(),
                secret,
            });
        }
        if let Some(client) = &self.oauth_introspection_client {
            let secret = std::env::var("CORRAL_OAUTH_CLIENT_SECRET").map_err(|_| {
                anyhow::anyhow!(
                    "--oauth-introspection-client needs the client's secret in CORRAL_OAUTH_CLIENT_SECRET"
                )
            })?;
            options.introspection = Some((client.clone(), secret));
        }
        // Tests shorten the wait between two fetches of an issuer's keys.
        if let Ok(seconds) = std::env::var("CORRAL_OAUTH_KEY_REFETCH_SECS") {
            options.key_refetch_interval = std::time::Duration::from_secs(
                seconds
                    .parse()
                    .context("CORRAL_OAUTH_KEY_REFETCH_SECS must be a number of seconds")?,
            );
        }
        Ok(Some(std::sync::Arc::new(mcp::auth::Authorizer::new(
            options,
        )?)))
    }

    /// The store of users' own secrets, when the operator gave a key: in
    /// `state`, with its page when users can sign in to it.
    fn own_secrets(
        &self,
        state: Option<&corral_sandbox::state::StateStore>,
    ) -> Result<Option<Arc<corral::secrets::own::OwnStore>>> {
        use corral::secrets::own;
        let key = match (&self.secrets_key_file, std::env::var("CORRAL_SECRETS_KEY")) {
            (Some(path), _) => own::read_key(path)?,
            (None, Ok(key)) => own::parse_key(&key).context("CORRAL_SECRETS_KEY")?,
            (None, Err(_)) => return Ok(None),
        };
        let Some(state) = state else {
            bail!("users' own secrets are kept in the state store, and this server has none");
        };
        let page = match (&self.http, &self.resource, &self.oauth_web_client) {
            (Some(_), Some(resource), Some(_)) => {
                let after_scheme = resource.find("://").map_or(0, |at| at + 3);
                let origin = match resource[after_scheme..].find('/') {
                    Some(slash) => &resource[..after_scheme + slash],
                    None => resource.as_str(),
                };
                let issuer = self.oauth_issuers.first().cloned().unwrap_or_default();
                Ok((format!("{origin}/corral/secrets"), issuer))
            }
            _ => Err(
                "this server has no page where you could set it (its operator starts it with --oauth-web-client)"
                    .to_string(),
            ),
        };
        Ok(Some(Arc::new(own::OwnStore::new(
            state.0.clone(),
            key,
            page,
        ))))
    }

    /// The transport settings, or `None` for stdio.
    fn options(self) -> Result<Option<mcp::HttpOptions>> {
        let Some(addr) = self.http.clone() else {
            return Ok(None);
        };
        let listen = listen_address("--http", &addr)?;
        let authorizer = self.authorizer()?;
        if authorizer.is_some() && self.bearer_token.is_some() {
            bail!(
                "--bearer-token and --oauth-issuer exclude each other: one shared token, or each user's own from an issuer"
            );
        }
        if !listen.ip().is_loopback()
            && self.bearer_token.is_none()
            && authorizer.is_none()
            && !self.allow_unauthenticated
        {
            bail!(
                "--http {listen} is not a loopback address: set --resource and --oauth-issuer (each user signs in), or --bearer-token (or CORRAL_BEARER_TOKEN), or pass --allow-unauthenticated when a proxy in front authenticates"
            );
        }
        if self
            .bearer_token
            .as_ref()
            .is_some_and(|t| t.trim().is_empty())
        {
            bail!("--bearer-token must not be empty");
        }
        Ok(Some(mcp::HttpOptions {
            listen,
            bearer_token: self.bearer_token,
            authorizer,
            allowed_hosts: self.allowed_hosts,
            allowed_origins: self.allowed_origins,
            max_body_bytes: self.max_body_bytes,
            max_connections: self.max_connections.max(1),
            ..mcp::HttpOptions::default()
        }))
    }
}

/// Resolves on Ctrl-C or SIGTERM: the HTTP server then shuts down gracefully.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate()).expect("installing a SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

/// Serve WebAssembly components as MCP tools.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// Log level for stderr: error, warn, info, debug or trace for Corral and
    /// its plugins (libraries underneath log warnings only), or a RUST_LOG
    /// filter such as `plugin=debug` (only what plugins log) or
    /// `info,wasmtime=debug`.
    #[arg(long, global = true, env = "CORRAL_LOG")]
    log_level: Option<String>,
    /// How log lines are written to stderr: text, for a person, or json,
    /// one object per line with each field as a key.
    #[arg(
        long,
        global = true,
        env = "CORRAL_LOG_FORMAT",
        value_enum,
        default_value_t
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: AnyCommand,
}

/// Every subcommand: those that load plugins (each with the sandbox's
/// flags), `state` (what a folder's plugins keep), and those that help write
/// a plugin (which start no sandbox).
#[derive(Subcommand)]
enum AnyCommand {
    #[command(flatten)]
    Plugins(Box<Command>),
    /// Show or clear what the plugins of DIR keep in their state store
    /// ([state] grants), in the store `serve DIR` uses.
    #[command(subcommand)]
    State(StateCommand),
    /// Set, list or remove the secrets plugins may read ([secrets] grants)
    /// in Corral's own store; list shows where each value comes from,
    /// never a value.
    #[command(subcommand)]
    Secret(SecretCommand),
    #[command(flatten)]
    Authoring(Authoring),
}

#[derive(Subcommand)]
enum Authoring {
    /// Create NAME/: a plugin project with one tool (NAME), a README, tests
    /// (./test) and ./build, which installs its toolchain on first use and
    /// writes NAME/NAME.wasm.
    New {
        /// The plugin's language.
        language: Language,
        /// The plugin's name: its folder, its file NAME.wasm and its tool
        /// (a lowercase letter, then lowercase letters, digits, - and _).
        name: String,
        /// Create NAME/ in DIR instead of the current folder.
        #[arg(long, value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// Rust only: depend on the corral-sdk crate at PATH (the sdk-guest/
        /// folder of a checkout of Corral). Without it, a project depends on
        /// the SDK of the checkout this corral was built from, or on
        /// corral-sdk 0.1 from crates.io when that checkout is gone.
        #[arg(long, env = "CORRAL_SDK_PATH", value_name = "PATH")]
        sdk_path: Option<PathBuf>,
        /// Rust, Python, JavaScript and TypeScript, so far: the plugin also
        /// offers a resource, a resource template and a prompt, with
        /// completion.
        #[arg(long)]
        resources: bool,
    },
    /// Write a plugin's bindings to the contract this corral serves into
    /// OUT: for C, plugin.h, plugin.c and plugin_component_type.o (so named
    /// for every world); for Go, the
    /// package main layout with go.mod and the Go module it needs in OUT/pkg.
    Bindings {
        /// The plugin's language.
        language: bindings::Language,
        /// The folder to write into (created if missing).
        out: PathBuf,
        #[command(flatten)]
        contract: ContractFlags,
    },
    /// Make the component Corral loads from a WASI preview1 core module
    /// (clang with wasi-libc, or Go's `GOOS=wasip1 -buildmode=c-shared`):
    /// embeds the world unless the module carries one, and adapts WASI
    /// preview1 with this corral's reactor adapter.
    Componentize {
        /// The core module the compiler wrote.
        core: PathBuf,
        /// The component to write (replaced by rename, never half-written).
        out: PathBuf,
        #[command(flatten)]
        contract: ContractFlags,
    },
    /// Write the WASI preview1 reactor adapter to OUT, for building C
    /// plugins: `wasm-tools component new --adapt wasi_snapshot_preview1=OUT`.
    Adapter {
        /// The file to write (replaced if it exists).
        out: PathBuf,
    },
    /// Create a signing key pair in cosign's format: PATH.key (encrypted
    /// with the password in COSIGN_PASSWORD, or asked for on a terminal)
    /// and PATH.pub, for `push --key` and `pull --verify-key`.
    Keygen {
        /// Where to write the keys, without the .key/.pub suffix.
        path: PathBuf,
    },
}

/// How the plugins a command loads are run and where what they keep is
/// kept: the options of every command that loads plugins (not of those
/// that write one).
#[derive(clap::Args, Clone)]
struct SandboxFlags {
    /// Include each call's arguments in the audit log (they may be private).
    #[arg(long)]
    log_arguments: bool,
    /// Calls per second accepted across all tools (each tool also has its own
    /// limit, set in its plugin's manifest).
    #[arg(long, default_value_t = SandboxOptions::default().global_rate)]
    global_rate: f64,
    /// Where compiled plugins are cached [default: $XDG_CACHE_HOME/corral
    /// or ~/.cache/corral].
    #[arg(long, env = "CORRAL_CACHE_DIR", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Compile every plugin every time: no compile cache.
    #[arg(long)]
    no_cache: bool,
    #[command(flatten)]
    state: StateFlag,
    #[command(flatten)]
    secrets: SecretsFlag,
}

/// Where the values of plugins' [secrets] grants come from (`corral secret
/// list` asks the same sources).
#[derive(clap::Args, Clone)]
struct SecretsFlag {
    /// Where plugins' [secrets] come from, first asked first: a
    /// comma-separated list of store (Corral's store, which `corral secret
    /// set` writes: $CORRAL_SECRETS_FILE, else secrets.toml under
    /// $XDG_CONFIG_HOME/corral or ~/.config/corral), store:PATH, folder:DIR
    /// (DIR/PLUGIN/NAME, else DIR/NAME, as Docker and Kubernetes mount
    /// secrets) and env:PREFIX (the variable PREFIX+NAME); or none.
    #[arg(long, env = "CORRAL_SECRETS", value_name = "SOURCES", default_value = corral::secrets::DEFAULT_SPEC)]
    secrets: String,
}

/// Where plugins keep their state (`corral state` reads the same store).
#[derive(clap::Args, Clone)]
struct StateFlag {
    /// Where plugins with a [state] grant keep their keys: sqlite:PATH
    /// (sqlite:PATH?sync=full to flush each write to the disk before it
    /// returns, not only at checkpoints), or
    /// redis://[USER:PASSWORD@]HOST[:PORT][/DB] (rediss:// for TLS) for
    /// replicas that share state [default: a SQLite file per served folder
    /// under $XDG_DATA_HOME/corral/state or ~/.local/share/corral/state].
    #[arg(long, env = "CORRAL_STATE", value_name = "SPEC")]
    state: Option<String>,
}

/// Which contract `bindings` and `componentize` build for.
#[derive(clap::Args)]
struct ContractFlags {
    /// The world the plugin implements: plugin (tools), plugin-full (also
    /// resources, prompts and completion), resource-plugin, or
    /// plugin-with-state, -http, -files, -secrets, -state-and-files,
    /// -state-and-secrets; with --wit, any world of that folder (the build
    /// scripts compose one per grant there, such as
    /// plugin-with-http-and-secrets).
    #[arg(long, default_value = DEFAULT_WORLD)]
    world: String,
    /// Read the contract from this WIT folder (with its deps/) instead of
    /// the one this corral serves, for a plugin pinned to an older contract.
    #[arg(long, value_name = "DIR")]
    wit: Option<PathBuf>,
}

impl ContractFlags {
    fn load(&self) -> Result<Contract> {
        Contract::load(self.wit.as_deref(), &self.world)
    }
}

/// How `push` and `pull` reach a registry.
#[derive(clap::Args)]
struct RegistryFlags {
    /// Speak plain HTTP to the registry. Only needed for a registry that is
    /// not on this machine: loopback registries get plain HTTP anyway.
    #[arg(long)]
    plain_http: bool,
    /// The registry user name (its password or token read from standard
    /// input with --password-stdin). Without one, docker's config.json
    /// (`docker login`) and its credential helpers are used.
    #[arg(long, value_name = "USER")]
    username: Option<String>,
    /// Read the password or token for --username from standard input.
    #[arg(long)]
    password_stdin: bool,
    /// Give up when the whole transfer takes longer than this (the
    /// consent question excepted), e.g. "90 s" or "1 h".
    #[arg(long, value_name = "DURATION", default_value = "30 min", value_parser = parse_timeout)]
    timeout: std::time::Duration,
}

fn parse_timeout(text: &str) -> Result<std::time::Duration, String> {
    corral_sandbox::units::parse_duration("--timeout", text)
}

impl RegistryFlags {
    fn access(self) -> distribute::Access {
        distribute::Access {
            plain_http: self.plain_http,
            username: self.username,
            password_stdin: self.password_stdin,
            timeout: self.timeout,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve every plugin (*.wasm component) in DIR over stdio (MCP), or
    /// over Streamable HTTP with --http.
    Serve {
        /// The plugin folder.
        dir: PathBuf,
        /// Tools per tools/list page.
        #[arg(long, default_value_t = ServerOptions::default().page_size)]
        page_size: usize,
        /// Serve the plugins as they are at startup; do not watch DIR for
        /// changes (clients are then not told of any: listChanged is false).
        #[arg(long)]
        no_watch: bool,
        /// The key that seals the requestState of stateless (2026-07-28)
        /// calls that ask the client for input: 32 bytes, as 64 hex digits
        /// (`openssl rand -hex 32`) or base64. Replicas serving one client
        /// need the same key; without one each process draws its own.
        /// Prefer setting CORRAL_STATE_KEY in the environment: a key given
        /// on the command line shows in `ps` and in shell history.
        #[arg(
            long,
            env = "CORRAL_STATE_KEY",
            value_name = "KEY",
            hide_env_values = true
        )]
        state_key: Option<String>,
        #[command(flatten)]
        sandbox: SandboxFlags,
        #[command(flatten)]
        http: HttpFlags,
        #[command(flatten)]
        observe: ObserveFlags,
    },
    /// Develop the plugin project in DIR: run its ./build, serve DIR over
    /// stdio (or Streamable HTTP with --http) as `serve` does, and build
    /// again whenever a source changes; each build's output, its outcome
    /// and each call's audit line go to stderr (and the outcome to the
    /// client's log). A failed build leaves the last good one serving.
    Dev {
        /// The plugin project (what `corral new` writes, with ./build).
        #[arg(default_value = ".")]
        dir: PathBuf,
        #[command(flatten)]
        sandbox: SandboxFlags,
        #[command(flatten)]
        http: HttpFlags,
        #[command(flatten)]
        observe: ObserveFlags,
    },
    /// Print the tools that `serve DIR` would offer.
    ///
    /// Exits with 1 when a plugin in DIR fails to load (each reason is
    /// printed on stderr), so that a plugin's CI can gate on it.
    List {
        /// The plugin folder.
        dir: PathBuf,
        /// Print the tools as MCP JSON (newest revision) instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sandbox: SandboxFlags,
    },
    /// Run one tool call and print its result as MCP JSON.
    ///
    /// Exits with 1 when the result is a tool execution error.
    Call {
        /// The plugin folder.
        dir: PathBuf,
        /// The tool name, as `list` shows it.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        #[command(flatten)]
        sandbox: SandboxFlags,
    },
    /// Publish the plugin FILE (and its manifest FILE.toml, with its grants)
    /// to an OCI registry as a WebAssembly artifact; prints the pinned
    /// reference REGISTRY/REPOSITORY@sha256:DIGEST.
    Push {
        /// The plugin, NAME.wasm.
        file: PathBuf,
        /// Where: REGISTRY/REPOSITORY:TAG.
        reference: String,
        /// Also sign it with this cosign key (a .key file from `corral
        /// keygen` or `cosign generate-key-pair`; its password in
        /// COSIGN_PASSWORD, or asked for on a terminal).
        #[arg(long, value_name = "KEY")]
        key: Option<PathBuf>,
        #[command(flatten)]
        sandbox: SandboxFlags,
        #[command(flatten)]
        registry: RegistryFlags,
    },
    /// Install a plugin from an OCI registry into DIR as NAME.wasm (and
    /// NAME.toml), pinned by digest in DIR/corral.lock. A served folder
    /// reloads it like any other change.
    ///
    /// Nothing in DIR changes unless every check passes.
    Pull {
        #[command(flatten)]
        request: distribute::PullRequest,
        #[command(flatten)]
        sandbox: SandboxFlags,
        #[command(flatten)]
        registry: RegistryFlags,
    },
    /// Load the plugin FILE as `serve` would, so that its compiled code is
    /// in the compile cache and the first call after a build is fast.
    ///
    /// A plugin project's `./build` runs it on the new file before moving
    /// it into place (`corral compile NAME.wasm.tmp --as NAME.wasm`), so
    /// that a server watching the folder finds it compiled, and a plugin
    /// Corral would not load never replaces the last good one. Exits with 1
    /// when the plugin would not load (the reason is printed on stderr).
    Compile {
        /// The plugin, NAME.wasm (its manifest, if any, is NAME.toml beside it).
        file: PathBuf,
        /// Load FILE's bytes as if they were the plugin PATH (NAME.wasm):
        /// named NAME, under the manifest NAME.toml beside PATH, with the
        /// state of PATH's folder. The compile cache is keyed by the bytes
        /// alone, so a server loading PATH once FILE is moved there finds
        /// them compiled.
        #[arg(long = "as", value_name = "PATH")]
        install_as: Option<PathBuf>,
        #[command(flatten)]
        sandbox: SandboxFlags,
    },
    /// Show a plugin's tools, imports, limits and the authority it is granted.
    Inspect {
        /// The plugin file (its manifest, if any, is the .toml beside it).
        file: PathBuf,
        #[command(flatten)]
        sandbox: SandboxFlags,
    },
}

#[derive(Subcommand)]
enum StateCommand {
    /// The plugins that keep anything, or the entries of plugin NAME
    /// (values cut short, at most 1,000 entries).
    List {
        /// The plugin folder.
        dir: PathBuf,
        /// The plugin (its file stem).
        name: Option<String>,
        #[command(flatten)]
        store: StateFlag,
        // The values of the secrets DIR's plugins are granted show as
        // markers: where they come from, as `serve` takes it.
        #[command(flatten)]
        secrets: SecretsFlag,
    },
    /// Print the value plugin NAME keeps at KEY (the value of a secret
    /// DIR's plugins are granted shows as a marker, as in `list`).
    Get {
        /// The plugin folder.
        dir: PathBuf,
        /// The plugin (its file stem).
        name: String,
        key: String,
        /// The bucket.
        #[arg(long, default_value = "default")]
        bucket: String,
        #[command(flatten)]
        store: StateFlag,
        #[command(flatten)]
        secrets: SecretsFlag,
    },
    /// Delete everything plugin NAME keeps (removing a plugin keeps its
    /// state; this is how it goes).
    Clear {
        /// The plugin folder.
        dir: PathBuf,
        /// The plugin (its file stem).
        name: String,
        #[command(flatten)]
        store: StateFlag,
    },
}

#[derive(Subcommand)]
enum SecretCommand {
    /// Set plugin PLUGIN's secret NAME in Corral's store: the value is read
    /// from standard input (one trailing newline dropped) when it is not a
    /// terminal, else asked for without echo.
    Set {
        /// The plugin (its file stem, as `corral list` shows it).
        plugin: String,
        /// The secret's name, as the plugin's [secrets] table lists it.
        name: String,
        #[command(flatten)]
        secrets: SecretsFlag,
    },
    /// The secrets Corral's store holds (plugin, name, where from), and
    /// with DIR every secret its plugins are granted, each with the source
    /// that holds it under --secrets, or "missing". Never a value.
    List {
        /// A plugin folder whose grants to show.
        dir: Option<PathBuf>,
        #[command(flatten)]
        secrets: SecretsFlag,
    },
    /// Remove plugin PLUGIN's secret NAME from Corral's store.
    Remove {
        /// The plugin (its file stem).
        plugin: String,
        /// The secret's name.
        name: String,
        #[command(flatten)]
        secrets: SecretsFlag,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Traces are a server's: exported by `serve` and `dev` only.
    let traces = match &cli.command {
        AnyCommand::Plugins(command) => match command.as_ref() {
            Command::Serve { observe, .. } | Command::Dev { observe, .. } => {
                match OtlpConfig::from_flag_and_env(observe.otlp_endpoint.as_deref()) {
                    Ok(config) => config,
                    Err(err) => {
                        eprintln!("corral: {err:#}");
                        return ExitCode::from(2);
                    }
                }
            }
            _ => None,
        },
        _ => None,
    };
    let _traces = logs::init(cli.log_level.as_deref(), cli.log_format, traces);
    let command = match cli.command {
        AnyCommand::Plugins(command) => *command,
        AnyCommand::State(command) => {
            end_quietly_on_a_closed_pipe();
            return exit_code(state_command(command));
        }
        AnyCommand::Secret(command) => {
            end_quietly_on_a_closed_pipe();
            return exit_code(secret_command(command));
        }
        AnyCommand::Authoring(authoring) => return author(authoring),
    };
    if !matches!(command, Command::Serve { .. } | Command::Dev { .. }) {
        end_quietly_on_a_closed_pipe();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("starting the async runtime");
    exit_code(runtime.block_on(run(command)))
}

/// A command's exit code; its error, if it failed, on stderr.
fn exit_code(result: Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("corral: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Serves the plugins of `dir` over stdio, or HTTP when `http` says so,
/// watching `dir` for changes when `watch`; what the server says about its
/// plugins goes to `reports`.
/// What `serve` serves: a folder's plugins, its reports, whether it is
/// watched, and where users' own secrets are kept.
struct Folder<'a> {
    dir: &'a Path,
    reports: Arc<Reports>,
    watch: bool,
    own_secrets: Option<Arc<corral::secrets::own::OwnStore>>,
}

async fn serve(
    sandbox: Arc<Sandbox>,
    folder: Folder<'_>,
    page_size: usize,
    state_key: mcp::StateKey,
    (http, observe): (HttpFlags, ObserveFlags),
) -> Result<ExitCode> {
    let Folder {
        dir,
        reports,
        watch,
        own_secrets,
    } = folder;
    let mut http = http.options()?;
    let metrics_listen = observe
        .metrics
        .as_deref()
        .map(|addr| listen_address("--metrics", addr))
        .transpose()?;
    // Metrics are kept where someone can read them: on their own listener,
    // or on the HTTP one. Otherwise no recorder: the layers' records cost
    // nothing.
    let recorder = match metrics_listen.is_some() || http.is_some() {
        true => Some(corral::telemetry::metrics::Metrics::install()?),
        false => None,
    };
    let state_store = sandbox.options().state.clone();
    // Tasks are kept where the plugins keep their state: a task outlives
    // this process, and replicas sharing a store answer for each other's.
    let tasks = match &sandbox.options().state {
        Some(store) => Arc::new(mcp::tasks::Tasks::new(Arc::new(
            corral::task_store::StateTasks::new(store.0.clone()),
        ))),
        None => Arc::default(),
    };
    let host = Arc::new(FolderHost {
        catalog: Arc::new(Catalog::starting()),
        reports,
    });
    // Answer ping at once; initialize, server/discover and every list,
    // call, read or get wait for the first load, which runs in the
    // background (the capabilities depend on what it finds).
    let reloading = reload::start(
        sandbox,
        dir,
        host.catalog.clone(),
        host.reports.clone(),
        watch,
    )?;
    let probes = Arc::new(corral::telemetry::ServerProbes {
        metrics: recorder,
        catalog: host.catalog.clone(),
        state: state_store,
    });
    if let Some(listen) = metrics_listen {
        tokio::spawn(mcp::serve_probes(listen, probes.clone()).await?);
    }
    if let Some(http) = &mut http {
        http.probes = Some(probes);
    }
    if let (Some(http), Some(store)) = (&mut http, own_secrets) {
        http.secret_page = Some(Arc::new(corral::secrets::own::OwnSecretPage {
            store,
            catalog: host.catalog.clone(),
        }));
    }
    let options = ServerOptions {
        page_size,
        list_changed: reloading.is_watching(),
        state_key,
        tasks,
        ..ServerOptions::default()
    };
    match http {
        Some(http) => mcp::serve_http(host, options, http, shutdown_signal()).await?,
        None => mcp::serve_stdio(host, options).await?,
    }
    drop(reloading);
    Ok(ExitCode::SUCCESS)
}

/// A command that prints (`list`, `call`, `inspect`) piped into `head`
/// ends as Unix tools do when the reader goes: by SIGPIPE, silently, not
/// with a panic from `println!`. (Rust ignores SIGPIPE by default; `serve`
/// keeps that, as its stdout closing is a client leaving, handled.)
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: restoring a signal's default disposition, before any thread
    // that could be writing starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `corral state`: what the plugins of a folder keep.
fn state_command(command: StateCommand) -> Result<ExitCode> {
    let store = |dir: &Path, flag: &StateFlag| {
        if !dir.is_dir() {
            bail!("{} is not a folder", dir.display());
        }
        state::store(flag.state.as_deref(), dir)
    };
    let mut out = std::io::stdout().lock();
    match command {
        StateCommand::List {
            dir,
            name,
            store: flag,
            secrets,
        } => {
            let mut listed = Vec::new();
            state::list(&store(&dir, &flag)?, name.as_deref(), &mut listed)?;
            // A plugin may have stored a secret it was granted: its value
            // is shown as a marker, as in what the plugin's calls return.
            let sources = corral::secrets::sources(&secrets.secrets)?;
            let values = corral::secrets::list::granted_values(&sources, &dir);
            let (listed, _) =
                corral_sandbox::secrets::redact(&String::from_utf8_lossy(&listed), &values);
            out.write_all(listed.as_bytes())?;
        }
        StateCommand::Get {
            dir,
            name,
            key,
            bucket,
            store: flag,
            secrets,
        } => {
            let value = state::get(&store(&dir, &flag)?, &name, &bucket, &key)?;
            // As in `list`: the bytes as stored, but a granted secret's
            // value (as it is or escaped) shows as its marker.
            let sources = corral::secrets::sources(&secrets.secrets)?;
            let values = corral::secrets::list::granted_values(&sources, &dir);
            let (value, _) = corral_sandbox::secrets::redact_bytes(&value, &values);
            out.write_all(&value)?;
        }
        StateCommand::Clear {
            dir,
            name,
            store: flag,
        } => {
            let removed = state::clear(&store(&dir, &flag)?, &name)?;
            eprintln!("cleared {name}: {removed} entries deleted");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `corral secret`: Corral's store of secrets, and where each granted one
/// comes from.
fn secret_command(command: SecretCommand) -> Result<ExitCode> {
    use corral::secrets;
    match command {
        SecretCommand::Set {
            plugin,
            name,
            secrets: flag,
        } => {
            let store = secrets::writable_store(&flag.secrets)?;
            secrets::store::check_names(&plugin, &name)?;
            let value = secrets::prompt::read_value(&format!("{plugin} {name}"))?;
            store.set(&plugin, &name, &value)?;
            if value.len() < corral_sandbox::secrets::MIN_REDACTED_BYTES {
                eprintln!(
                    "corral: warning: the value is shorter than {} bytes, so it is not redacted from what the plugin sends out",
                    corral_sandbox::secrets::MIN_REDACTED_BYTES
                );
            }
            eprintln!(
                "set {plugin} {name} in {} (the next call reads it)",
                store.path().display()
            );
        }
        SecretCommand::Remove {
            plugin,
            name,
            secrets: flag,
        } => {
            let store = secrets::writable_store(&flag.secrets)?;
            if !store.remove(&plugin, &name)? {
                bail!(
                    "{} holds no secret {name} of {plugin}: `corral secret list` shows what it holds",
                    store.path().display()
                );
            }
            eprintln!("removed {plugin} {name} from {}", store.path().display());
        }
        SecretCommand::List { dir, secrets: flag } => {
            let mut out = std::io::stdout().lock();
            secrets::list::print(&flag.secrets, dir.as_deref(), &mut out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `corral new` and `corral adapter`: files for a plugin's author.
fn author(command: Authoring) -> ExitCode {
    let result = match command {
        Authoring::New {
            language,
            name,
            dir,
            sdk_path,
            resources,
        } => {
            let origin = scaffold::Origin::this_corral(sdk_path);
            let offer = if resources {
                scaffold::Offer::Resources
            } else {
                scaffold::Offer::Tools
            };
            scaffold::create(language, &name, &dir, &origin, offer)
                .map(|created| print!("{}", created.next_steps()))
                .map_err(anyhow::Error::from)
        }
        Authoring::Bindings {
            language,
            out,
            contract,
        } => contract.load().and_then(|mut contract| {
            let written = bindings::write(language, &mut contract, &out)?;
            eprintln!(
                "corral: wrote {} files of bindings to {}",
                written.len(),
                out.display()
            );
            Ok(())
        }),
        Authoring::Componentize {
            core,
            out,
            contract,
        } => contract.load().and_then(|contract| {
            let module =
                std::fs::read(&core).with_context(|| format!("cannot read {}", core.display()))?;
            let component = componentize::componentize(module, &contract)
                .with_context(|| format!("cannot make a component of {}", core.display()))?;
            componentize::write_by_rename(&out, &component)
                .with_context(|| format!("cannot write {}", out.display()))?;
            eprintln!(
                "corral: wrote {} ({} bytes)",
                out.display(),
                component.len()
            );
            Ok(())
        }),
        Authoring::Adapter { out } => componentize::write_by_rename(&out, componentize::REACTOR)
            .with_context(|| format!("cannot write {}", out.display())),
        Authoring::Keygen { path } => distribute::keygen(&path).map(|fingerprint| {
            println!("wrote {0}.key and {0}.pub ({fingerprint})", path.display())
        }),
    };
    exit_code(result.map(|()| ExitCode::SUCCESS))
}

/// The plugin folder a command works on, whose state store it uses.
fn folder(command: &Command) -> Option<&Path> {
    match command {
        Command::Serve { dir, .. }
        | Command::Dev { dir, .. }
        | Command::List { dir, .. }
        | Command::Call { dir, .. } => Some(dir),
        Command::Compile {
            install_as: Some(file),
            ..
        }
        | Command::Inspect { file, .. }
        | Command::Compile { file, .. } => Some(file.parent().unwrap_or(Path::new("."))),
        Command::Push { .. } | Command::Pull { .. } => None,
    }
}

async fn run(command: Command) -> Result<ExitCode> {
    let flags = match &command {
        Command::Serve { sandbox, .. }
        | Command::Dev { sandbox, .. }
        | Command::List { sandbox, .. }
        | Command::Call { sandbox, .. }
        | Command::Push { sandbox, .. }
        | Command::Pull { sandbox, .. }
        | Command::Compile { sandbox, .. }
        | Command::Inspect { sandbox, .. } => sandbox.clone(),
    };
    if !(flags.global_rate.is_finite() && flags.global_rate > 0.0) {
        bail!("--global-rate must be a positive number");
    }
    let cache_dir = flags.cache_dir.clone();
    let mut options = SandboxOptions {
        global_rate: flags.global_rate,
        log_arguments: flags.log_arguments,
        cache: cache::configured(flags.cache_dir, flags.no_cache).map(Arc::new),
        state: None,
        secrets: corral::secrets::sources(&flags.secrets.secrets)?,
        own_secrets: None,
    };
    if let Some(folder) = folder(&command).filter(|folder| folder.is_dir()) {
        options.state = Some(state::store(flags.state.state.as_deref(), folder)?);
    }
    let own_secrets = match &command {
        Command::Serve { http, .. } => http.own_secrets(options.state.as_ref())?,
        _ => None,
    };
    options.own_secrets = own_secrets
        .clone()
        .map(|own| own as Arc<dyn corral_sandbox::OwnSecrets>);
    let sandbox = Sandbox::new(options)?;
    match command {
        Command::Serve {
            dir,
            page_size,
            no_watch,
            state_key,
            http,
            observe,
            ..
        } => {
            if !dir.is_dir() {
                bail!("{} is not a folder", dir.display());
            }
            // Checked before anything starts; the key itself is never echoed.
            let state_key = match state_key {
                Some(key) => mcp::StateKey::parse(&key).map_err(|problem| {
                    anyhow::anyhow!("--state-key (or CORRAL_STATE_KEY): {problem}")
                })?,
                None => mcp::StateKey::process(),
            };
            let reports = Arc::new(Reports::default());
            let watch = !no_watch;
            let folder = Folder {
                dir: &dir,
                reports,
                watch,
                own_secrets,
            };
            serve(sandbox, folder, page_size, state_key, (http, observe)).await
        }
        Command::Dev {
            dir, http, observe, ..
        } => {
            let project = dev::Project::open(&dir)?;
            let reports = Arc::new(Reports::default());
            // Built in the background: the server answers at once, with
            // what the last build left, and loads each new build as it lands.
            let _dev = dev::start(project, reports.clone(), cache_dir)?;
            let page_size = ServerOptions::default().page_size;
            let state_key = mcp::StateKey::process();
            let folder = Folder {
                dir: &dir,
                reports,
                watch: true,
                own_secrets: None,
            };
            serve(sandbox, folder, page_size, state_key, (http, observe)).await
        }
        Command::List { dir, json, .. } => {
            let (host, failed) = load(&sandbox, &dir).await?;
            print_tools(&host.catalog.snapshot(), json);
            // Every failure was reported with its reason as it happened; the
            // exit status lets a plugin's CI gate on it.
            if failed.is_empty() {
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!(
                    "corral: {} plugin(s) failed to load: {}",
                    failed.len(),
                    file_names(&failed)
                );
                Ok(ExitCode::FAILURE)
            }
        }
        Command::Call {
            dir,
            tool,
            arguments,
            ..
        } => {
            let arguments: Map<String, Value> =
                serde_json::from_str(&arguments).context("the arguments must be a JSON object")?;
            let (host, failed) = load(&sandbox, &dir).await?;
            let Ok(output) = host
                .call(
                    &tool,
                    arguments,
                    CallContext {
                        events: Some(print_events()),
                        client: None,
                        as_task: false,
                        principal: None,
                    },
                )
                .await
            else {
                let tools = host.tools();
                let hint = corral_tool::unknown_tool_hint(&tool, tools.iter().map(|t| &*t.name));
                if !failed.is_empty() {
                    bail!(
                        "unknown tool `{tool}`{hint}{}",
                        corral_tool::unknown_tool_not_loaded(&failed)
                    );
                }
                bail!(
                    "unknown tool `{tool}`{hint}; `corral list {}` shows the tools",
                    dir.display()
                );
            };
            let result = mcp::call_result_json(&output, Revision::NEWEST_LEGACY);
            println!("{}", serde_json::to_string_pretty(&result)?);
            Ok(if output.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Push {
            file,
            reference,
            key,
            registry,
            ..
        } => {
            let pushed = distribute::push(
                &sandbox,
                &file,
                &reference,
                key.as_deref(),
                &registry.access(),
            )
            .await;
            Ok(failure_to_exit_code(pushed.map(drop)))
        }
        Command::Pull {
            request, registry, ..
        } => {
            // Interrupted, the pull is dropped, and with it its download:
            // the folder is left as it was.
            let access = registry.access();
            tokio::select! {
                pulled = distribute::pull(&request, &access) => {
                    Ok(failure_to_exit_code(pulled.map(drop)))
                }
                () = shutdown_signal() => {
                    eprintln!("corral: interrupted; {} is unchanged", request.dir.display());
                    Ok(ExitCode::from(130))
                }
            }
        }
        Command::Compile {
            file, install_as, ..
        } => {
            // Without a cache the load still checks the plugin: a build
            // that runs this before installing its file must not be stopped
            // by a machine with nowhere to keep compiled code.
            let cached = sandbox.options().cache.is_some();
            let started = std::time::Instant::now();
            // The plugin as it will be served: FILE's bytes, and the name
            // and manifest of where it goes (FILE itself without --as).
            let plugin = install_as.as_deref().unwrap_or(&file);
            let loaded = match corral_sandbox::PluginFiles::read_as(&file, plugin).await {
                Ok(files) => corral_sandbox::Plugin::load_from(&sandbox, plugin, files).await,
                Err(err) => Err(err),
            };
            let shown = match &install_as {
                Some(plugin) => format!("{} as {}", file.display(), plugin.display()),
                None => file.display().to_string(),
            };
            match loaded {
                Ok(loaded) => {
                    let (done, so) = if cached {
                        ("compiled", "the first call will not wait for it")
                    } else {
                        (
                            "checked",
                            "it loads; with no compile cache (--no-cache, or neither XDG_CACHE_HOME nor HOME is set) its first call compiles it again",
                        )
                    };
                    eprintln!(
                        "{done} {shown} ({} tool(s)) in {:.1} s: {so}",
                        loaded.tools().len(),
                        started.elapsed().as_secs_f64()
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(err) => {
                    eprintln!("corral: {shown} would not load: {err:#}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        Command::Inspect { file, .. } => {
            let inspection = corral_sandbox::inspect(&sandbox, &file).await?;
            print_inspection(&inspection);
            print_secrets(&inspection, &sandbox.options().secrets);
            let pinned = print_pin(&file).await?;
            Ok(if inspection.loaded.is_ok() && pinned {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

/// For `inspect`: where the plugin was pulled from, if its folder's lock
/// lists it, and whether it still matches; false when it does not.
async fn print_pin(file: &Path) -> Result<bool> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let lock = corral_registry::lock::Lock::read(dir)?;
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let Some(entry) = lock.plugins.get(name.as_ref()) else {
        println!("pinned   no: not pulled, or not listed in corral.lock");
        return Ok(true);
    };
    let files = corral_sandbox::PluginFiles::read(file).await?;
    let signer = match &entry.signer {
        Some(fingerprint) => format!("signed by {fingerprint}"),
        None => "signature not verified".to_owned(),
    };
    println!("pinned   {}@{} ({signer})", entry.reference, entry.digest);
    match catalog::check_pinned(&lock, file, &files) {
        Ok(()) => Ok(true),
        Err(mismatch) => {
            println!("         REFUSED: {mismatch}");
            Ok(false)
        }
    }
}

/// A push or pull that failed exits with 1, after saying why (2 is for
/// a command that could not start).
fn failure_to_exit_code(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("corral: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The plugins of `dir`, loaded once (for `list` and `call`), and the
/// files that failed to load.
async fn load(sandbox: &Arc<Sandbox>, dir: &Path) -> Result<(FolderHost, Vec<NotLoaded>)> {
    if !dir.is_dir() {
        bail!("{} is not a folder", dir.display());
    }
    // A lock that cannot be read stops the command: serving the folder
    // without checking what it pins would defeat it.
    let lock = Lock::read(dir)?;
    let reports = Arc::new(Reports::default());
    let loaded = catalog::load_dir(sandbox, dir, lock, &reports).await?;
    let host = FolderHost {
        catalog: Arc::new(Catalog::new(loaded.snapshot)),
        reports,
    };
    Ok((host, loaded.failed))
}

/// "a.wasm, b.wasm".
fn file_names(failed: &[NotLoaded]) -> String {
    let names: Vec<String> = failed.iter().map(|failure| failure.file.clone()).collect();
    names.join(", ")
}

/// Prints the served tools, then, only when there are any, the resources,
/// templates and prompts (so that the output of a folder of tools alone is
/// what it always was, for scripts).
fn print_tools(snapshot: &Snapshot, json: bool) {
    if json {
        let tools: Vec<Value> = snapshot
            .tools()
            .iter()
            .map(|tool| mcp::tool_json(tool, Revision::NEWEST_LEGACY))
            .collect();
        let mut listing = serde_json::json!({ "tools": tools });
        let optional = |value: &Option<String>| value.clone().map_or(Value::Null, Value::String);
        if !snapshot.resources().is_empty() {
            let resources: Vec<Value> = snapshot
                .resources()
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "uri": r.uri, "name": r.name, "title": optional(&r.title),
                        "description": optional(&r.description), "mimeType": optional(&r.mime_type),
                    })
                })
                .collect();
            listing["resources"] = Value::Array(resources);
        }
        if !snapshot.templates().is_empty() {
            let templates: Vec<Value> = snapshot
                .templates()
                .iter()
                .map(|t| {
                    serde_json::json!({
                        "uriTemplate": t.uri_template, "name": t.name, "title": optional(&t.title),
                        "description": optional(&t.description), "mimeType": optional(&t.mime_type),
                    })
                })
                .collect();
            listing["resourceTemplates"] = Value::Array(templates);
        }
        if !snapshot.prompts().is_empty() {
            let prompts: Vec<Value> = snapshot
                .prompts()
                .iter()
                .map(|p| {
                    let arguments: Vec<Value> = p
                        .arguments
                        .iter()
                        .map(|a| serde_json::json!({ "name": a.name, "required": a.required }))
                        .collect();
                    serde_json::json!({
                        "name": p.name, "title": optional(&p.title),
                        "description": optional(&p.description), "arguments": arguments,
                    })
                })
                .collect();
            listing["prompts"] = Value::Array(prompts);
        }
        println!("{}", serde_json::to_string_pretty(&listing).unwrap());
        return;
    }
    let width = snapshot
        .tools()
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0);
    for tool in snapshot.tools().iter() {
        println!("{:width$}  {}", tool.name, first_line(&tool.description));
    }
    for (heading, rows) in documents(
        snapshot.resources().iter(),
        snapshot.templates().iter(),
        snapshot.prompts().iter(),
    ) {
        if rows.is_empty() {
            continue;
        }
        println!("\n{heading}:");
        let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
        for (name, summary) in rows {
            println!("  {name:width$}  {summary}");
        }
    }
}

/// For `corral call`: show progress and plugin logs on stderr.
fn print_events() -> EventSink {
    Arc::new(|event| match event {
        CallEvent::Progress {
            done,
            total,
            message,
        } => {
            let total = total.map(|t| format!("/{t}")).unwrap_or_default();
            eprintln!("progress {done}{total} {}", message.unwrap_or_default());
        }
        // Already logged to stderr by the sandbox; `corral call` has no
        // principal, so nothing asks for a user's own secret.
        CallEvent::Log { .. } | CallEvent::ElicitationComplete { .. } => {}
    })
}

fn print_inspection(inspection: &Inspection) {
    let manifest = &inspection.manifest;
    println!(
        "plugin   {} ({})",
        inspection.name,
        human_bytes(inspection.bytes as usize)
    );
    match &inspection.contract {
        Ok(contract) => println!("contract {contract}"),
        Err(reason) => println!("contract none the host serves: {reason}"),
    }
    match &manifest.path {
        Some(path) => println!("manifest {}", path.display()),
        None => println!("manifest none: default limits, no grants"),
    }
    println!("limits   {}", grants::limits_line(manifest));
    println!("authority");
    for line in grants::authority_lines(manifest) {
        println!("  {line}");
    }
    println!("imports");
    for (name, verdict) in &inspection.imports {
        let what = match verdict {
            Verdict::Provided(what) => what.to_string(),
            Verdict::NeedsGrant {
                grant,
                granted: true,
            } => format!("granted ({grant})"),
            Verdict::NeedsGrant {
                grant,
                granted: false,
            } => format!("REFUSED: needs {grant}"),
            Verdict::Unknown => "REFUSED: Corral does not provide it".to_string(),
        };
        println!("  {name}: {what}");
    }
    // Over authorized HTTP only: the scopes callers need.
    let served: Option<Vec<&str>> = inspection
        .loaded
        .as_ref()
        .ok()
        .map(|plugin| plugin.tools().map(|tool| tool.name.as_str()).collect());
    println!("access");
    for line in grants::access_lines(manifest, served.as_deref()) {
        println!("  {line}");
    }
    let plugin = match &inspection.loaded {
        Ok(plugin) => plugin,
        Err(reason) => {
            println!("does not load: {reason}");
            return;
        }
    };
    // Tools always (a plugin may have none); the rest only when offered.
    println!("tools");
    for tool in plugin.tools() {
        println!("  {}  {}", tool.name, first_line(&tool.description));
    }
    for (heading, rows) in documents(
        plugin.resources().iter(),
        plugin.templates(),
        plugin.prompts().iter(),
    ) {
        if !rows.is_empty() {
            println!("{heading}");
            for (name, summary) in rows {
                println!("  {name}  {summary}");
            }
        }
    }
}

/// For `inspect`: each secret the plugin is granted, whether it is
/// required, what it is for, and which source holds it (never its value).
fn print_secrets(inspection: &Inspection, sources: &corral_sandbox::SecretSources) {
    let granted = corral::secrets::list::granted(&inspection.manifest);
    if granted.is_empty() {
        return;
    }
    println!("secrets");
    for secret in granted {
        let from =
            corral::secrets::list::origin(sources, &inspection.name, &secret.name, secret.required);
        let required = if secret.required {
            "required"
        } else {
            "optional"
        };
        println!(
            "  {} ({required}): {}",
            secret.name,
            corral_sandbox::printable(&secret.description)
        );
        match from {
            Ok(source) => println!("    from {source}"),
            Err(missing) => println!("    {missing}"),
        }
    }
}

/// What `list` and `inspect` show besides tools: each kind's heading, and
/// for each item its URI, template or name with its description's first line.
fn documents<'a>(
    resources: impl Iterator<Item = &'a ResourceDef>,
    templates: impl Iterator<Item = &'a ResourceTemplateDef>,
    prompts: impl Iterator<Item = &'a PromptDef>,
) -> [(&'static str, Vec<(&'a str, &'a str)>); 3] {
    [
        (
            "resources",
            resources
                .map(|r| (r.uri.as_str(), first_line(&r.description)))
                .collect(),
        ),
        (
            "resource templates",
            templates
                .map(|t| (t.uri_template.as_str(), first_line(&t.description)))
                .collect(),
        ),
        (
            "prompts",
            prompts
                .map(|p| (p.name.as_str(), first_line(&p.description)))
                .collect(),
        ),
    ]
}

/// The first line of a description, or nothing.
fn first_line(description: &Option<String>) -> &str {
    description
        .as_deref()
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("")
}
