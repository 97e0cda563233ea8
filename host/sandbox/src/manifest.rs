//! The optional manifest beside a plugin (`calc.toml` next to `calc.wasm`):
//! its limits, and the authority it is granted.
//!
//! Without a manifest a plugin runs under the default limits with no grants:
//! no directories, no environment variables, no network. Every key is
//! checked: an unknown key or a bad value is a load error naming the file,
//! the line and the reason, never silently ignored.
//!
//! ```toml
//! [limits]
//! fuel = 1_000_000_000     # CPU budget per call, in fuel units
//! memory = "64 MiB"        # linear memory per call
//! timeout = "10 s"         # wall-clock time per call, waits for the client excepted
//! input-wait = "5 min"     # how long one call may wait for its client, all its asks together
//! task-after = "2 s"       # a call still running this long becomes a task, for a client that takes one
//! task-timeout = "15 min"  # wall-clock time of a call that may become a task (instead of timeout)
//! task-ttl = "1 h"         # how long a task's result is kept (at most 24 h)
//! output = "1 MiB"         # size of a call's result
//! concurrency = 4          # calls of this plugin running at once (half may wait for clients)
//! validation = 4_000_000   # work units to check one value against a schema
//! metadata = "32 MiB"      # host memory its tools' schemas may hold
//! rate = 20                # calls per second per tool (token bucket)
//! burst = 40               # bucket size (default: rate)
//! rate-per = "principal"   # "tool" (default): one bucket per tool; "principal": per tool and caller
//!
//! [[dirs]]                 # a directory the plugin may use
//! host = "data"            # relative to the manifest's folder
//! guest = "/data"          # where the plugin sees it
//! mode = "ro"              # "ro" (read-only) or "rw"
//!
//! [env]
//! inherit = ["LANG"]                   # copied from the host, these names only
//! set = { API_BASE = "https://x.y" }   # literal values
//!
//! [http]
//! allow = ["api.example.com", "127.0.0.1:8080"]   # outgoing HTTP to these hosts only
//!
//! [state]                          # a durable key-value store (wasi:keyvalue)
//! buckets = ["default", "cache"]   # the bucket names it may open
//! quota = "64 MiB"                 # its keys and values together
//! value-limit = "4 MiB"            # one value
//! per = "principal"                # "plugin" (default): one store; "principal": one per caller
//!
//! [secrets]                        # values it may read (wasi:config/store), never leaked
//! GITHUB_TOKEN = { description = "Reads issues", required = true, env = false }
//! LINEAR_KEY = { description = "Your Linear key", required = true, per = "principal" }  # each caller's own
//!
//! [access]                         # what callers' tokens must grant, over authorized HTTP
//! scopes = ["files:read"]          # every tool, resource, template and prompt of the plugin
//! tools = { write_file = ["files:write"] }   # these tools need these too
//!
//! [results]
//! mirror-structured = true         # structured content as JSON text beside the plugin's own text too
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use corral_tool::Scopes;

use crate::limits::{Limits, RatePer};
use crate::units::{self, parse_duration};

/// A plugin's limits and grants, resolved and checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    /// Where the manifest was read from; `None` when the plugin has none.
    pub path: Option<PathBuf>,
    pub limits: Limits,
    pub dirs: Vec<DirGrant>,
    /// Environment variables the plugin sees, with their values.
    pub env: Vec<(String, String)>,
    /// Every variable name the manifest grants, inherited ones included
    /// whether or not this process has them set: what a person consents
    /// to (the server that runs the plugin may have them set).
    pub env_granted: Vec<String>,
    /// Hosts the plugin may send HTTP requests to; `None`: no network at all.
    pub http: Option<HttpGrant>,
    /// The plugin's key-value store; `None`: it keeps nothing between calls.
    pub state: Option<StateGrant>,
    /// The secrets it may read (`[secrets]`), by name; empty: none.
    pub secrets: Vec<SecretGrant>,
    /// How its results reach clients beyond what it returns.
    pub results: ResultOptions,
    /// The scopes callers need over authorized HTTP (`[access]`); open to
    /// anyone signed in by default.
    pub access: Access,
}

/// One secret a plugin may read (`[secrets] NAME = { ... }`): a name and
/// what it is for, never a value (values come from the operator's sources,
/// see [`crate::secrets`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretGrant {
    /// `[A-Z_][A-Z0-9_]*`, at most [`SecretGrant::MAX_NAME_BYTES`] bytes.
    pub name: String,
    /// What the secret is for, as the operator sees it.
    pub description: String,
    /// Without a value, the plugin's calls fail with a message naming it.
    pub required: bool,
    /// Also an environment variable of the same name in the sandbox.
    pub env: bool,
    /// Each principal's own (`per = "principal"`): an authorized caller's
    /// calls read the value that caller set (see [`crate::secrets::own`]),
    /// never the operator's; a call without a principal (stdio, one shared
    /// token) reads the operator's sources as for any secret.
    pub per_principal: bool,
}

impl SecretGrant {
    /// The most secrets one manifest may grant.
    pub const MAX_SECRETS: usize = 64;
    /// The longest name, in bytes.
    pub const MAX_NAME_BYTES: usize = 128;
    /// The longest description, in bytes.
    pub const MAX_DESCRIPTION_BYTES: usize = 1024;

    /// Whether `name` may name a secret: `[A-Z_][A-Z0-9_]*`, 1 to
    /// [`SecretGrant::MAX_NAME_BYTES`] bytes.
    pub fn is_name(name: &str) -> bool {
        let mut bytes = name.bytes();
        name.len() <= Self::MAX_NAME_BYTES
            && bytes
                .next()
                .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
            && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    }
}

/// What a caller's token must grant to see or reach the plugin's tools,
/// resources, templates and prompts over authorized HTTP (`[access]`).
/// Not authority of the plugin's: a policy of the operator's, which the
/// transport enforces with the [`corral_tool::Principal`] it validated.
/// Without authorization (stdio, a server with one shared token) it is not
/// consulted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    /// Needed for everything the plugin offers. Empty: anyone signed in.
    pub scopes: Scopes,
    /// Needed for these tools besides [`Access::scopes`], by the names the
    /// plugin gives them (not the names a collision may serve them under).
    pub tools: BTreeMap<String, Scopes>,
}

impl Access {
    /// The most scopes one list may name.
    pub const MAX_SCOPES: usize = 64;
    /// The longest scope, in bytes.
    pub const MAX_SCOPE_BYTES: usize = 128;
    /// The most tools `tools` may name (as many as a plugin may declare).
    pub const MAX_TOOLS: usize = 1_000;

    /// The scopes tool `tool` (the plugin's own name for it) needs: the
    /// plugin's, with its own entry's.
    pub fn tool_scopes(&self, tool: &str) -> Scopes {
        match self.tools.get(tool) {
            Some(own) => self.scopes.union(own),
            None => self.scopes.clone(),
        }
    }

    /// Whether anything needs a scope.
    pub fn is_open(&self) -> bool {
        self.scopes.is_empty() && self.tools.values().all(Scopes::is_empty)
    }

    /// Whether `scope` is a scope token (RFC 6749, 3.3: `%x21 / %x23-5B /
    /// %x5D-7E`, so no space, `"` or `\`) of at most
    /// [`Access::MAX_SCOPE_BYTES`] bytes.
    pub fn is_scope(scope: &str) -> bool {
        (1..=Self::MAX_SCOPE_BYTES).contains(&scope.len())
            && scope
                .bytes()
                .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
    }
}

/// What the host adds to a plugin's results (`[results]`). Not authority:
/// the plugin could return the same itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResultOptions {
    /// Every result with structured content also holds it as a last text
    /// item of JSON, unless a text item already does. Without it (the
    /// default) the protocol layer adds that text only to a result with no
    /// text item of its own: a plugin's text is what clients that cannot
    /// read `structuredContent` get, and the model does not see the same
    /// data twice.
    pub mirror_structured: bool,
}

/// A durable key-value store (`wasi:keyvalue`), in the plugin's own
/// namespace, keyed by its name (and, with [`StatePer::Principal`], by its
/// caller's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateGrant {
    /// Whose store a call opens: the plugin's one, or its caller's.
    pub per: StatePer,
    /// The bucket names `open` accepts; any other is refused.
    pub buckets: Vec<String>,
    /// Bytes of keys and values the plugin may keep, all buckets together.
    pub quota: u64,
    /// Bytes of one value.
    pub value_limit: u64,
}

/// Whose store a call of a plugin with a `[state]` grant opens (`[state]
/// per`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatePer {
    /// One store for the plugin, whoever calls (the default).
    #[default]
    Plugin,
    /// A store for each principal (by [`corral_tool::Principal::key`]), each
    /// under the plugin's quota. A call without a principal (stdio, a server
    /// with one shared token) opens the plugin's shared store.
    Principal,
}

impl StateGrant {
    /// A quota when the manifest names none.
    pub const DEFAULT_QUOTA: u64 = 64 << 20;
    /// The largest quota a manifest may grant.
    pub const MAX_QUOTA: u64 = 64 << 30;
    /// One value's limit when the manifest names none, and its largest.
    pub const DEFAULT_VALUE_LIMIT: u64 = 4 << 20;
    /// The longest bucket name.
    pub const MAX_BUCKET_NAME: usize = 64;
    /// The most buckets a manifest may list.
    pub const MAX_BUCKETS: usize = 64;
}

/// A host directory made visible to the plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGrant {
    /// Canonical host path.
    pub host: PathBuf,
    /// Absolute path inside the plugin.
    pub guest: String,
    pub writable: bool,
}

/// Outgoing HTTP allowed to these hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpGrant {
    /// `host` or `host:port`, lowercase. `*.example.com` matches subdomains.
    pub allow: Vec<String>,
}

/// Why a plugin's manifest was refused. The message names the file, and
/// the line when the fault is in its text.
#[derive(Debug)]
pub enum ManifestError {
    /// The manifest is there but cannot be read.
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The manifest's text is wrong: not TOML, an unknown key, a bad value.
    Invalid {
        path: PathBuf,
        /// The line of the offending value, counting from 1, when known.
        line: Option<usize>,
        reason: String,
    },
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::Unreadable { path, error } => {
                write!(f, "reading {}: {error}", path.display())
            }
            ManifestError::Invalid { path, line, reason } => {
                write!(f, "{}", path.display())?;
                if let Some(line) = line {
                    write!(f, ":{line}")?;
                }
                write!(f, ": {reason}")
            }
        }
    }
}

/// The I/O error is part of the message, not a source: a chain printed in
/// full (`{:#}`) would show it twice.
impl std::error::Error for ManifestError {}

impl Manifest {
    /// The manifest path for a plugin file: same stem, `.toml`.
    pub fn path_for(plugin: &Path) -> PathBuf {
        plugin.with_extension("toml")
    }

    /// Reads the manifest beside `plugin`, or the defaults when there is none.
    pub fn for_plugin(plugin: &Path) -> Result<Manifest, ManifestError> {
        let text = Self::read_text(plugin)?;
        Self::from_text(plugin, text.as_deref())
    }

    /// The text of the manifest beside `plugin`; `None` when it has none.
    pub fn read_text(plugin: &Path) -> Result<Option<String>, ManifestError> {
        let path = Self::path_for(plugin);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(ManifestError::Unreadable { path, error }),
        }
    }

    /// The manifest of `plugin` from `text`, its manifest's text as read
    /// already (`None`: it has none, so the defaults).
    pub fn from_text(plugin: &Path, text: Option<&str>) -> Result<Manifest, ManifestError> {
        match text {
            Some(text) => Self::parse(text, &Self::path_for(plugin)),
            None => Ok(Manifest::default()),
        }
    }

    /// Parses manifest `text` read from `path` (relative directory grants
    /// resolve against the path's folder).
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, ManifestError> {
        Self::parse_in(text, path, Dirs::MustExist)
    }

    /// Parses and checks a manifest as [`Manifest::parse`] does, except
    /// what depends on the machine: a directory grant is joined to `path`'s
    /// folder but need not exist there. For manifests that travel (`corral
    /// push` checks one before publishing it; `corral pull` shows what one
    /// asks for before the folder holds its directories).
    pub fn parse_portable(text: &str, path: &Path) -> Result<Manifest, ManifestError> {
        Self::parse_in(text, path, Dirs::MayBeMissing)
    }

    fn parse_in(text: &str, path: &Path, dirs_check: Dirs) -> Result<Manifest, ManifestError> {
        // Every error names the file and the line of the offending value.
        let at = |span: Option<std::ops::Range<usize>>, reason: &str| ManifestError::Invalid {
            path: path.to_owned(),
            line: span.map(|span| text[..span.start].matches('\n').count() + 1),
            reason: reason.trim().to_owned(),
        };
        let raw: RawManifest = toml::from_str(text).map_err(|err| at(err.span(), err.message()))?;
        let folder = path.parent().unwrap_or(Path::new("."));
        let limits = raw
            .limits
            .resolve()
            .map_err(|(span, err)| at(Some(span), &format!("[limits] {err}")))?;
        let mut dirs = Vec::new();
        for dir in raw.dirs {
            let dir = dir.resolve(folder, dirs_check);
            dirs.push(dir.map_err(|(span, err)| at(Some(span), &format!("[[dirs]] {err}")))?);
        }
        let (env, env_granted) = match raw.env {
            None => (Vec::new(), Vec::new()),
            Some(env) => {
                let span = env.span();
                env.into_inner()
                    .resolve()
                    .map_err(|err| at(Some(span), &format!("[env] {err}")))?
            }
        };
        let http = match raw.http {
            None => None,
            Some(http) => {
                let span = http.span();
                let grant = http.into_inner().resolve();
                Some(grant.map_err(|err| at(Some(span), &format!("[http] {err}")))?)
            }
        };
        let state = match raw.state {
            None => None,
            Some(state) => {
                let span = state.span();
                let grant = state.into_inner().resolve();
                Some(grant.map_err(|err| at(Some(span), &format!("[state] {err}")))?)
            }
        };
        let secrets = match raw.secrets {
            None => Vec::new(),
            Some(secrets) => {
                let span = secrets.span();
                resolve_secrets(secrets.into_inner(), span, &env_granted)
                    .map_err(|(span, err)| at(Some(span), &format!("[secrets] {err}")))?
            }
        };
        let results = ResultOptions {
            mirror_structured: raw.results.mirror_structured,
        };
        let access = match raw.access {
            None => Access::default(),
            Some(access) => access
                .resolve()
                .map_err(|(span, err)| at(Some(span), &format!("[access] {err}")))?,
        };
        Ok(Manifest {
            path: Some(path.to_owned()),
            limits,
            dirs,
            env,
            env_granted,
            http,
            state,
            secrets,
            results,
            access,
        })
    }
}

/// Whether a directory grant's host directory must exist.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dirs {
    MustExist,
    MayBeMissing,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    dirs: Vec<RawDir>,
    env: Option<Spanned<RawEnv>>,
    http: Option<Spanned<RawHttp>>,
    state: Option<Spanned<RawState>>,
    secrets: Option<Spanned<BTreeMap<Spanned<String>, Spanned<RawSecret>>>>,
    #[serde(default)]
    results: RawResults,
    access: Option<RawAccess>,
}

/// `[access]`, each list with where it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccess {
    scopes: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    tools: BTreeMap<Spanned<String>, Spanned<Vec<Spanned<String>>>>,
}

impl RawAccess {
    fn resolve(self) -> Checked<Access> {
        let scopes = match self.scopes {
            None => Scopes::default(),
            Some(list) => scope_list("scopes", list)?,
        };
        if self.tools.len() > Access::MAX_TOOLS {
            let (first, _) = self.tools.first_key_value().expect("more than none");
            return Err((
                first.span(),
                format!(
                    "tools names {} tools; at most {} are allowed",
                    self.tools.len(),
                    Access::MAX_TOOLS
                ),
            ));
        }
        let mut tools = BTreeMap::new();
        for (name, list) in self.tools {
            let (span, name) = (name.span(), name.into_inner());
            if !crate::metadata::is_valid_tool_name(&name) {
                return Err((
                    span,
                    format!(
                        "tools: `{}` is not a tool name (1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`)",
                        name.escape_debug()
                    ),
                ));
            }
            let what = format!("tools.{name}");
            tools.insert(name, scope_list(&what, list)?);
        }
        Ok(Access { scopes, tools })
    }
}

/// A list of scopes (`what` names it in errors): 1 to
/// [`Access::MAX_SCOPES`] scope tokens.
fn scope_list(what: &str, list: Spanned<Vec<Spanned<String>>>) -> Checked<Scopes> {
    let (span, list) = (list.span(), list.into_inner());
    if list.is_empty() {
        return Err((
            span,
            format!("{what} lists no scope; leave it out (nothing needed: anyone signed in)"),
        ));
    }
    if list.len() > Access::MAX_SCOPES {
        return Err((
            span,
            format!(
                "{what} lists {} scopes; at most {} are allowed",
                list.len(),
                Access::MAX_SCOPES
            ),
        ));
    }
    let mut scopes = Vec::with_capacity(list.len());
    for scope in list {
        let (span, scope) = (scope.span(), scope.into_inner());
        if !Access::is_scope(&scope) {
            return Err((
                span,
                format!(
                    "{what}: `{}` is not a scope (1 to {} printable ASCII characters, no space, `\"` or `\\`)",
                    crate::plugin_text::cut(&scope).escape_debug(),
                    Access::MAX_SCOPE_BYTES
                ),
            ));
        }
        scopes.push(scope);
    }
    Ok(Scopes::new(scopes))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawResults {
    #[serde(rename = "mirror-structured", default)]
    mirror_structured: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    fuel: Option<Spanned<u64>>,
    memory: Option<Spanned<Size>>,
    timeout: Option<Spanned<String>>,
    #[serde(rename = "input-wait")]
    input_wait: Option<Spanned<String>>,
    #[serde(rename = "task-after")]
    task_after: Option<Spanned<String>>,
    #[serde(rename = "task-timeout")]
    task_timeout: Option<Spanned<String>>,
    #[serde(rename = "task-ttl")]
    task_ttl: Option<Spanned<String>>,
    output: Option<Spanned<Size>>,
    concurrency: Option<Spanned<u32>>,
    validation: Option<Spanned<u64>>,
    metadata: Option<Spanned<Size>>,
    rate: Option<Spanned<f64>>,
    burst: Option<Spanned<f64>>,
    #[serde(rename = "rate-per")]
    rate_per: Option<RatePer>,
}

/// A value's checked result, or where it is and what is wrong with it.
type Checked<T> = Result<T, (std::ops::Range<usize>, String)>;

/// Checks an optional spanned value, falling back to `default` when absent.
fn check<T, U>(
    value: Option<Spanned<T>>,
    default: U,
    valid: impl FnOnce(T) -> Result<U, String>,
) -> Checked<U> {
    match value {
        None => Ok(default),
        Some(value) => {
            let span = value.span();
            valid(value.into_inner()).map_err(|err| (span, err))
        }
    }
}

/// A size: a number of bytes, or a string such as "64 MiB".
#[derive(Deserialize)]
#[serde(untagged)]
enum Size {
    Bytes(u64),
    Text(String),
}

impl RawLimits {
    fn resolve(self) -> Checked<Limits> {
        let defaults = Limits::default();
        let fuel = check(self.fuel, defaults.fuel, |fuel| match fuel {
            0 => Err("fuel must be positive".into()),
            fuel => Ok(fuel),
        })?;
        let memory_bytes = check(self.memory, defaults.memory_bytes, |size| {
            let bytes = parse_size("memory", size)?;
            if (1 << 20..=4 << 30).contains(&bytes) {
                Ok(bytes)
            } else {
                Err("memory must be between 1 MiB and 4 GiB".into())
            }
        })?;
        let timeout = check(self.timeout, defaults.timeout, |text| {
            let timeout = parse_duration("timeout", &text)?;
            if timeout.is_zero() || timeout > Duration::from_secs(3600) {
                return Err("timeout must be between 1 ms and 1 hour".into());
            }
            Ok(timeout)
        })?;
        let input_wait = check(self.input_wait, defaults.input_wait, |text| {
            let wait = parse_duration("input-wait", &text)?;
            if wait.is_zero() || wait > Duration::from_secs(3600) {
                return Err("input-wait must be between 1 ms and 1 hour".into());
            }
            Ok(wait)
        })?;
        let task_after = check(self.task_after, defaults.task.after, |text| {
            let after = parse_duration("task-after", &text)?;
            if after > Duration::from_secs(3600) {
                return Err("task-after must be at most 1 hour (\"0 s\": every call of a client that takes tasks is one)".into());
            }
            Ok(after)
        })?;
        let task_timeout = check(self.task_timeout, defaults.task_timeout, |text| {
            let timeout = parse_duration("task-timeout", &text)?;
            if timeout.is_zero() || timeout > Duration::from_secs(24 * 3600) {
                return Err("task-timeout must be between 1 ms and 24 hours".into());
            }
            Ok(timeout)
        })?;
        let task_ttl = check(self.task_ttl, defaults.task.ttl, |text| {
            let ttl = parse_duration("task-ttl", &text)?;
            if ttl < Duration::from_secs(1) || ttl > corral_tool::task::MAX_TASK_TTL {
                return Err("task-ttl must be between 1 s and 24 hours".into());
            }
            Ok(ttl)
        })?;
        let output_bytes = check(self.output, defaults.output_bytes, |size| match parse_size(
            "output", size,
        )? {
            0 => Err("output must be positive".into()),
            bytes => Ok(bytes),
        })?;
        let concurrency = check(self.concurrency, defaults.concurrency, |n| match n {
            0 => Err("concurrency must be at least 1".into()),
            n => Ok(n),
        })?;
        let validation_units = check(self.validation, defaults.validation_units, |n| match n {
            0 => Err("validation must be a positive number of work units".into()),
            n => Ok(n),
        })?;
        let metadata_bytes = check(self.metadata, defaults.metadata_bytes, |size| {
            let bytes = parse_size("metadata", size)?;
            if (1 << 20..=1 << 30).contains(&bytes) {
                Ok(bytes)
            } else {
                Err("metadata must be between 1 MiB and 1 GiB".into())
            }
        })?;
        let rate_given = self.rate.is_some();
        let rate = check(self.rate, defaults.rate, |rate| {
            if rate.is_finite() && rate > 0.0 {
                Ok(rate)
            } else {
                Err("rate must be a positive number of calls per second".into())
            }
        })?;
        let default_burst = if rate_given {
            rate.max(1.0)
        } else {
            defaults.burst
        };
        let burst = check(self.burst, default_burst, |burst| {
            if burst.is_finite() && burst >= 1.0 {
                Ok(burst)
            } else {
                Err("burst must be at least 1".into())
            }
        })?;
        Ok(Limits {
            fuel,
            memory_bytes,
            timeout,
            input_wait,
            task: corral_tool::TaskPolicy {
                after: task_after,
                ttl: task_ttl,
            },
            task_timeout,
            output_bytes,
            concurrency,
            validation_units,
            metadata_bytes,
            rate,
            burst,
            rate_per: self.rate_per.unwrap_or_default(),
        })
    }
}

fn parse_size(what: &str, size: Size) -> Result<usize, String> {
    let bytes = match size {
        Size::Bytes(bytes) => bytes,
        Size::Text(text) => units::parse_bytes(what, &text)?,
    };
    usize::try_from(bytes).map_err(|_| format!("{what} is too large"))
}

/// A `[[dirs]]` entry, each value with where it is, so that an error
/// names the line of the value at fault, not of the table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDir {
    host: Spanned<PathBuf>,
    guest: Spanned<String>,
    mode: Spanned<String>,
}

impl RawDir {
    fn resolve(self, folder: &Path, check: Dirs) -> Result<DirGrant, (Range<usize>, String)> {
        let (mode_span, mode) = (self.mode.span(), self.mode.into_inner());
        let writable = match mode.as_str() {
            "ro" => false,
            "rw" => true,
            other => {
                return Err((
                    mode_span,
                    format!(
                        "mode must be \"ro\" or \"rw\", not \"{}\"",
                        other.escape_debug()
                    ),
                ));
            }
        };
        let (guest_span, guest) = (self.guest.span(), self.guest.into_inner());
        if !guest.starts_with('/')
            || guest.split('/').any(|part| part == "..")
            || guest.chars().any(char::is_control)
        {
            return Err((
                guest_span,
                format!(
                    "guest path `{}` must be absolute, without `..` or control characters",
                    guest.escape_debug()
                ),
            ));
        }
        let (host_span, host) = (self.host.span(), self.host.into_inner());
        let fault = |reason: String| Err((host_span.clone(), reason));
        if host.to_string_lossy().chars().any(char::is_control) {
            return fault(format!(
                "host path `{}` has control characters",
                host.display().to_string().escape_debug()
            ));
        }
        let host = folder.join(&host);
        let host = match host.canonicalize() {
            Ok(host) => host,
            // Shown to a person as where it would be: `..` taken out.
            Err(_) if check == Dirs::MayBeMissing => lexically_absolute(&host),
            Err(err) => return fault(format!("host directory {}: {err}", host.display())),
        };
        if check == Dirs::MustExist && !host.is_dir() {
            return fault(format!("host path {} is not a directory", host.display()));
        }
        Ok(DirGrant {
            host,
            guest,
            writable,
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawEnv {
    #[serde(default)]
    inherit: Vec<String>,
    #[serde(default)]
    set: BTreeMap<String, String>,
}

impl RawEnv {
    /// The variables with their values, and the names granted.
    #[allow(clippy::type_complexity)]
    fn resolve(self) -> Result<(Vec<(String, String)>, Vec<String>), String> {
        let granted: Vec<String> = self
            .inherit
            .iter()
            .chain(self.set.keys())
            .cloned()
            .collect();
        for name in &granted {
            // Names are shown to people deciding on a grant: no control
            // characters (a terminal escape could rewrite what they read).
            if name.is_empty() || name.contains('=') || name.chars().any(char::is_control) {
                return Err(format!(
                    "`{}` is not an environment variable name",
                    name.escape_debug()
                ));
            }
        }
        let mut env = Vec::new();
        for name in self.inherit {
            match std::env::var(&name) {
                Ok(value) => env.push((name, value)),
                Err(_) => {
                    tracing::warn!("environment variable {name} is granted but not set on the host")
                }
            }
        }
        for (name, value) in self.set {
            env.retain(|(n, _)| *n != name);
            env.push((name, value));
        }
        let mut granted = granted;
        granted.sort();
        granted.dedup();
        Ok((env, granted))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    allow: Vec<String>,
}

impl RawHttp {
    fn resolve(self) -> Result<HttpGrant, String> {
        let mut allow = Vec::new();
        for host in self.allow {
            let host = host.trim().to_ascii_lowercase();
            let valid = !host.is_empty()
                && !host.contains("://")
                && !host.contains('/')
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-:*[]".contains(c));
            if !valid {
                return Err(format!(
                    "`{host}` is not a host name such as \"api.example.com\" or \"127.0.0.1:8080\""
                ));
            }
            allow.push(host);
        }
        if allow.is_empty() {
            return Err("allow lists no host; remove [http] to deny all network access".into());
        }
        Ok(HttpGrant { allow })
    }
}

/// One entry of `[secrets]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSecret {
    description: String,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    env: bool,
    #[serde(default)]
    per: SecretPer,
}

/// Whose value a secret is (`per`).
#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum SecretPer {
    /// The operator's, for every caller.
    #[default]
    Server,
    /// Each authorized caller's own.
    Principal,
}

/// `[secrets]`, checked: names, descriptions, and no `env = true` name that
/// `[env]` grants too.
fn resolve_secrets(
    raw: BTreeMap<Spanned<String>, Spanned<RawSecret>>,
    table: Range<usize>,
    env_granted: &[String],
) -> Checked<Vec<SecretGrant>> {
    if raw.len() > SecretGrant::MAX_SECRETS {
        return Err((
            table,
            format!(
                "grants {} secrets, more than the {} a plugin may have",
                raw.len(),
                SecretGrant::MAX_SECRETS
            ),
        ));
    }
    let mut secrets = Vec::with_capacity(raw.len());
    for (name, secret) in raw {
        let span = name.span();
        let name = name.into_inner();
        if !SecretGrant::is_name(&name) {
            return Err((
                span,
                format!(
                    "`{}` is not a secret name: upper-case letters, digits and `_`, not starting with a digit, 1 to {} bytes (like GITHUB_TOKEN)",
                    crate::printable(&name),
                    SecretGrant::MAX_NAME_BYTES
                ),
            ));
        }
        let secret_span = secret.span();
        let secret = secret.into_inner();
        if secret.description.trim().is_empty() {
            return Err((
                secret_span,
                format!("{name} needs a description: what the secret is for"),
            ));
        }
        if secret.description.len() > SecretGrant::MAX_DESCRIPTION_BYTES {
            return Err((
                secret_span,
                format!(
                    "{name}'s description is {} bytes, more than the {} it may have",
                    secret.description.len(),
                    SecretGrant::MAX_DESCRIPTION_BYTES
                ),
            ));
        }
        if secret.env && env_granted.contains(&name) {
            return Err((
                secret_span,
                format!(
                    "{name} has env = true, but [env] grants a variable of that name too: one of them must go"
                ),
            ));
        }
        secrets.push(SecretGrant {
            name,
            description: secret.description,
            required: secret.required,
            env: secret.env,
            per_principal: secret.per == SecretPer::Principal,
        });
    }
    Ok(secrets)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawState {
    buckets: Vec<String>,
    quota: Option<Size>,
    #[serde(rename = "value-limit")]
    value_limit: Option<Size>,
    #[serde(default)]
    per: StatePer,
}

impl RawState {
    fn resolve(self) -> Result<StateGrant, String> {
        if self.buckets.is_empty() {
            return Err(
                "buckets lists no bucket; name those the plugin may open, such as buckets = [\"default\"]"
                    .into(),
            );
        }
        if self.buckets.len() > StateGrant::MAX_BUCKETS {
            return Err(format!(
                "buckets lists {} buckets; at most {} are allowed",
                self.buckets.len(),
                StateGrant::MAX_BUCKETS
            ));
        }
        let mut buckets = Vec::new();
        for bucket in self.buckets {
            let valid = !bucket.is_empty()
                && bucket.len() <= StateGrant::MAX_BUCKET_NAME
                && bucket
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
            if !valid {
                return Err(format!(
                    "bucket `{}` must be 1 to {} letters, digits, `-`, `_` or `.`",
                    bucket.escape_debug(),
                    StateGrant::MAX_BUCKET_NAME
                ));
            }
            if !buckets.contains(&bucket) {
                buckets.push(bucket);
            }
        }
        let size = |what: &str, size: Option<Size>, default: u64, max: u64| match size {
            None => Ok(default),
            Some(size) => {
                let bytes = parse_size(what, size)? as u64;
                if bytes == 0 || bytes > max {
                    Err(format!(
                        "{what} must be between 1 byte and {}",
                        units::human_bytes(max as usize)
                    ))
                } else {
                    Ok(bytes)
                }
            }
        };
        let quota = size(
            "quota",
            self.quota,
            StateGrant::DEFAULT_QUOTA,
            StateGrant::MAX_QUOTA,
        )?;
        let value_limit = size(
            "value-limit",
            self.value_limit,
            StateGrant::DEFAULT_VALUE_LIMIT,
            StateGrant::DEFAULT_VALUE_LIMIT,
        )?;
        Ok(StateGrant {
            per: self.per,
            buckets,
            quota,
            value_limit,
        })
    }
}

impl HttpGrant {
    /// Whether `host` (and `port`) is on the allow list. An entry without a
    /// port allows every port; `*.example.com` allows its subdomains.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        self.allow.iter().any(|entry| {
            let (entry_host, entry_port) = split_host_port(entry);
            let port_ok = entry_port.is_none_or(|p| p == port);
            let host_ok = match entry_host.strip_prefix("*.") {
                Some(domain) => host.ends_with(&format!(".{domain}")),
                None => entry_host == host,
            };
            port_ok && host_ok
        })
    }

    /// Whether `host` is listed literally (not through a wildcard): only such
    /// entries may reach private, loopback or link-local addresses.
    pub fn lists_exactly(&self, host: &str) -> bool {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        self.allow
            .iter()
            .any(|entry| split_host_port(entry).0 == host)
    }
}

/// "example.com:8080" -> ("example.com", Some(8080)); "[::1]:80" -> ("::1", Some(80)).
fn split_host_port(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        return (host, after.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match entry.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, port.parse().ok()),
        _ => (entry, None),
    }
}

/// `path` made absolute and with `.` and `..` taken out by name, for a path
/// that does not exist (so symbolic links cannot be followed).
fn lexically_absolute(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(text, Path::new("/tmp/plugin.toml"))
    }

    #[test]
    fn an_empty_manifest_means_defaults_and_no_grants() {
        let manifest = parse("").unwrap();
        assert_eq!(manifest.limits, Limits::default());
        assert!(manifest.dirs.is_empty() && manifest.env.is_empty() && manifest.http.is_none());
    }

    #[test]
    fn limits_accept_units() {
        let manifest = parse(
            "[limits]\nfuel = 1_000_000\nmemory = \"64 MiB\"\ntimeout = \"500 ms\"\ninput-wait = \"2 min\"\noutput = 2048\nconcurrency = 2\nrate = 5\n",
        )
        .unwrap();
        let limits = manifest.limits;
        assert_eq!(limits.fuel, 1_000_000);
        assert_eq!(limits.memory_bytes, 64 << 20);
        assert_eq!(limits.timeout, Duration::from_millis(500));
        assert_eq!(limits.input_wait, Duration::from_secs(120));
        assert_eq!(limits.output_bytes, 2048);
        assert_eq!(limits.concurrency, 2);
        assert_eq!((limits.rate, limits.burst), (5.0, 5.0));
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_file_and_line() {
        let err = parse("[limits]\nfuel = 10\nfule = 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("/tmp/plugin.toml:3:"), "{err}");
        assert!(err.contains("unknown field `fule`"), "{err}");
        let err = parse("[limits]\nfuel = 5\nmemory = \"64 MB\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown unit `MB`"), "{err}");
        assert!(err.starts_with("/tmp/plugin.toml:3:"), "{err}");
        let err = parse("[limits]\nfuel = -1\n").unwrap_err().to_string();
        assert!(err.contains("/tmp/plugin.toml:2"), "{err}");
        let err = parse("[[dirs]]\nhost = \"/\"\nguest = \"data\"\nmode = \"ro\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("must be absolute"), "{err}");
        let err = parse("[[dirs]]\nhost = \"/\"\nguest = \"/d\"\nmode = \"rwx\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"ro\" or \"rw\""), "{err}");
        // The line of the value at fault, in the second table of several.
        let err = parse(
            "# two grants\n[[dirs]]\nhost = \"/\"\nguest = \"/a\"\nmode = \"ro\"\n\n[[dirs]]\nhost = \"/\"\nguest = \"b\"\nmode = \"readonly\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("/tmp/plugin.toml:10: [[dirs]] mode must be"),
            "{err}"
        );
        let err = parse("[[dirs]]\nmode = \"ro\"\nguest = \"b\"\nhost = \"/\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/tmp/plugin.toml:3: [[dirs]] guest path"),
            "{err}"
        );
        let err = parse("[[dirs]]\nguest = \"/b\"\nmode = \"ro\"\nhost = \"/no/such/dir\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/tmp/plugin.toml:4: [[dirs]] host directory"),
            "{err}"
        );
        let err = parse("[http]\nallow = [\"https://example.com/\"]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a host name"), "{err}");
    }

    #[test]
    fn an_unreadable_manifest_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("plugin.toml")).unwrap();
        let err = Manifest::for_plugin(&dir.path().join("plugin.wasm")).unwrap_err();
        assert!(matches!(err, ManifestError::Unreadable { .. }), "{err:?}");
        let prefix = format!("reading {}: ", dir.path().join("plugin.toml").display());
        assert!(err.to_string().starts_with(&prefix), "{err}");
    }

    #[test]
    fn env_grants_take_listed_names_only() {
        // PATH is set in any test environment.
        let manifest = parse("[env]\ninherit = [\"PATH\"]\nset = { GREETING = \"hi\" }\n").unwrap();
        let names: Vec<&str> = manifest.env.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["PATH", "GREETING"]);
        assert_eq!(manifest.env[1].1, "hi");
    }

    #[test]
    fn every_granted_name_counts_even_when_unset_here() {
        let manifest = parse(
            "[env]\ninherit = [\"CORRAL_SURELY_UNSET_VARIABLE\", \"PATH\"]\nset = { GREETING = \"hi\" }\n",
        )
        .unwrap();
        let names: Vec<&str> = manifest.env.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["PATH", "GREETING"]);
        assert_eq!(
            manifest.env_granted,
            ["CORRAL_SURELY_UNSET_VARIABLE", "GREETING", "PATH"]
        );
    }

    #[test]
    fn control_characters_are_refused_where_people_read_them() {
        for text in [
            "[env]\ninherit = [\"A\\u001b[1AB\"]\n",
            "[env.set]\n\"X\\u0007\" = \"v\"\n",
            "[[dirs]]\nhost = \"/\"\nguest = \"/d\\u001b[2K\"\nmode = \"ro\"\n",
            "[[dirs]]\nhost = \"/tmp\\n/x\"\nguest = \"/d\"\nmode = \"ro\"\n",
        ] {
            let err = Manifest::parse_portable(text, Path::new("/tmp/plugin.toml"))
                .unwrap_err()
                .to_string();
            assert!(
                !err.chars().any(|c| c == '\u{1b}' || c == '\u{7}'),
                "{err:?}"
            );
            assert!(
                err.contains("control characters")
                    || err.contains("not an environment variable name"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn a_portable_manifest_shows_missing_directories_where_they_would_be() {
        let manifest = Manifest::parse_portable(
            "[[dirs]]\nhost = \"../../corral-surely-missing/x/..\"\nguest = \"/d\"\nmode = \"rw\"\n",
            Path::new("/srv/plugins/calc.toml"),
        )
        .unwrap();
        assert_eq!(manifest.dirs[0].host, Path::new("/corral-surely-missing"));
        assert!(
            parse("[[dirs]]\nhost = \"corral-surely-missing\"\nguest = \"/d\"\nmode = \"ro\"\n")
                .is_err()
        );
    }

    #[test]
    fn a_state_grant_names_buckets_and_bounds_its_sizes() {
        let grant =
            parse("[state]\nbuckets = [\"default\", \"cache\", \"default\"]\nquota = \"1 MiB\"\n")
                .unwrap()
                .state
                .unwrap();
        assert_eq!(grant.buckets, ["default", "cache"]);
        assert_eq!(grant.quota, 1 << 20);
        assert_eq!(grant.value_limit, StateGrant::DEFAULT_VALUE_LIMIT);
        let grant = parse("[state]\nbuckets = [\"b\"]\n")
            .unwrap()
            .state
            .unwrap();
        assert_eq!(grant.quota, StateGrant::DEFAULT_QUOTA);
        assert_eq!(parse("").unwrap().state, None);
        for (text, why) in [
            ("[state]\nbuckets = []\n", "buckets lists no bucket"),
            ("[state]\nbuckets = [\"a/b\"]\n", "bucket `a/b` must be"),
            (
                "[state]\nbuckets = [\"a\"]\nquota = \"100 GiB\"\n",
                "quota must be between",
            ),
            (
                "[state]\nbuckets = [\"a\"]\nvalue-limit = \"5 MiB\"\n",
                "value-limit must be between",
            ),
            (
                "[state]\nbuckets = [\"a\"]\nttl = 1\n",
                "unknown field `ttl`",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.contains(why) && err.contains("plugin.toml:"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn results_mirror_structured_content_only_when_asked() {
        assert!(!parse("").unwrap().results.mirror_structured);
        assert!(!parse("[results]\n").unwrap().results.mirror_structured);
        let manifest = parse("[results]\nmirror-structured = true\n").unwrap();
        assert!(manifest.results.mirror_structured);
        for (text, why) in [
            (
                "[results]\nmirror-structured = \"yes\"\n",
                "plugin.toml:2: invalid type: string \"yes\", expected a boolean",
            ),
            ("[results]\nmirror = true\n", "unknown field `mirror`"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn access_names_the_scopes_of_the_plugin_and_of_some_tools() {
        let scopes = |list: &[&str]| Scopes::new(list.iter().map(|s| s.to_string()));
        assert_eq!(parse("").unwrap().access, Access::default());
        assert!(parse("").unwrap().access.is_open());
        let access = parse(
            "[access]\nscopes = [\"files:read\", \"files:read\"]\ntools = { write_file = [\"files:write\"], edit_file = [\"files:write\", \"files:read\"] }\n",
        )
        .unwrap()
        .access;
        assert!(!access.is_open());
        assert_eq!(access.scopes, scopes(&["files:read"]));
        assert_eq!(
            access.tool_scopes("write_file"),
            scopes(&["files:read", "files:write"])
        );
        assert_eq!(
            access.tool_scopes("edit_file"),
            scopes(&["files:read", "files:write"])
        );
        assert_eq!(access.tool_scopes("read_file"), scopes(&["files:read"]));
        // Only some tools, as its own table.
        let access = parse("[access.tools]\ntally_reset = [\"admin\"]\n")
            .unwrap()
            .access;
        assert!(access.scopes.is_empty());
        assert_eq!(access.tool_scopes("tally_reset"), scopes(&["admin"]));
        assert_eq!(access.tool_scopes("tally_add"), Scopes::default());
        // Every character a scope token may hold.
        let every: String = (0x21u8..=0x7e)
            .filter(|b| *b != b'"' && *b != b'\\')
            .map(char::from)
            .collect();
        assert!(Access::is_scope(&every[..90]) && Access::is_scope(&every[90..]));
        assert!(Access::is_scope(&"s".repeat(128)));
    }

    #[test]
    fn access_refuses_what_is_not_a_scope_naming_the_line() {
        let many: Vec<String> = (0..65).map(|i| format!("\"s{i}\"")).collect();
        let many = format!("[access]\nscopes = [{}]\n", many.join(", "));
        let long = format!("[access]\nscopes = [\"{}\"]\n", "s".repeat(129));
        for (text, why) in [
            (
                "[access]\n\nscopes = [\"a\", \"files read\"]\n",
                "plugin.toml:3: [access] scopes: `files read` is not a scope",
            ),
            (
                "[access]\nscopes = [\"café\"]\n",
                "plugin.toml:2: [access] scopes: `café` is not a scope",
            ),
            (
                "[access]\nscopes = [\"a\\\\b\"]\n",
                "plugin.toml:2: [access] scopes: `a\\\\b` is not a scope",
            ),
            ("[access]\nscopes = [\"\\\"q\\\"\"]\n", "is not a scope"),
            (
                "[access]\nscopes = [\"\"]\n",
                "plugin.toml:2: [access] scopes: `` is not a scope",
            ),
            (
                "[access]\nscopes = [\"a\\u001b[2J\"]\n",
                "`a\\u{1b}[2J` is not a scope",
            ),
            (long.as_str(), "is not a scope (1 to 128 printable ASCII"),
            (
                many.as_str(),
                "plugin.toml:2: [access] scopes lists 65 scopes; at most 64 are allowed",
            ),
            (
                "[access]\nscopes = []\n",
                "plugin.toml:2: [access] scopes lists no scope",
            ),
            (
                "[access]\nscopes = \"files:read\"\n",
                "plugin.toml:2: invalid type: string \"files:read\", expected a sequence",
            ),
            (
                "[access]\ntools = { \"write file\" = [\"w\"] }\n",
                "plugin.toml:2: [access] tools: `write file` is not a tool name",
            ),
            (
                "[access.tools]\nwrite_file = []\n",
                "plugin.toml:2: [access] tools.write_file lists no scope",
            ),
            (
                "[access.tools]\nwrite_file = [\"ok\"]\nedit_file = [\"not ok\"]\n",
                "plugin.toml:3: [access] tools.edit_file: `not ok` is not a scope",
            ),
            (
                "[access]\nprompts = { p = [\"a\"] }\n",
                "plugin.toml:2: unknown field `prompts`, expected `scopes` or `tools`",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn state_and_rate_limits_may_be_kept_per_principal() {
        let manifest = parse("[state]\nbuckets = [\"b\"]\n").unwrap();
        assert_eq!(manifest.state.unwrap().per, StatePer::Plugin);
        assert_eq!(manifest.limits.rate_per, RatePer::Tool);
        let manifest =
            parse("[state]\nbuckets = [\"b\"]\nper = \"principal\"\n\n[limits]\nrate = 2\nrate-per = \"principal\"\n")
                .unwrap();
        assert_eq!(manifest.state.unwrap().per, StatePer::Principal);
        assert_eq!(manifest.limits.rate_per, RatePer::Principal);
        assert_eq!(manifest.limits.rate, 2.0);
        let manifest =
            parse("[state]\nbuckets = [\"b\"]\nper = \"plugin\"\n[limits]\nrate-per = \"tool\"\n")
                .unwrap();
        assert_eq!(manifest.state.unwrap().per, StatePer::Plugin);
        assert_eq!(manifest.limits.rate_per, RatePer::Tool);
        for (text, why) in [
            (
                "[state]\nbuckets = [\"b\"]\nper = \"user\"\n",
                "plugin.toml:3: unknown variant `user`, expected `plugin` or `principal`",
            ),
            (
                "[limits]\nrate = 1\nrate-per = \"caller\"\n",
                "plugin.toml:3: unknown variant `caller`, expected `tool` or `principal`",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn http_allow_lists_match_hosts_ports_and_wildcards() {
        let grant = parse("[http]\nallow = [\"API.example.com\", \"*.github.com\", \"127.0.0.1:8080\", \"[::1]:9\"]\n")
            .unwrap()
            .http
            .unwrap();
        assert!(grant.allows("api.example.com", 443));
        assert!(grant.allows("raw.github.com", 443));
        assert!(!grant.allows("github.com.evil.net", 443));
        assert!(!grant.allows("example.com", 443));
        assert!(grant.allows("127.0.0.1", 8080));
        assert!(!grant.allows("127.0.0.1", 8081));
        assert!(grant.allows("[::1]", 9));
        assert!(grant.lists_exactly("127.0.0.1"));
        assert!(!grant.lists_exactly("raw.github.com"));
    }

    #[test]
    fn a_secrets_grant_names_and_describes_each_secret() {
        let manifest = parse(
            "[secrets]\nGITHUB_TOKEN = { description = \"Reads issues\", required = true, env = true }\nOTHER_1 = { description = \"x\", per = \"principal\" }\n",
        )
        .unwrap();
        assert_eq!(
            manifest.secrets,
            vec![
                SecretGrant {
                    name: "GITHUB_TOKEN".into(),
                    description: "Reads issues".into(),
                    required: true,
                    env: true,
                    per_principal: false,
                },
                SecretGrant {
                    name: "OTHER_1".into(),
                    description: "x".into(),
                    required: false,
                    env: false,
                    per_principal: true,
                },
            ]
        );
        assert!(parse("").unwrap().secrets.is_empty());
        let long = "A".repeat(129);
        let many: String = (0..65)
            .map(|i| format!("S{i} = {{ description = \"d\" }}\n"))
            .collect();
        for (text, reason, line) in [
            (
                "[secrets]\ngithub_token = { description = \"d\" }\n".to_string(),
                "`github_token` is not a secret name",
                2,
            ),
            (
                "[secrets]\n1A = { description = \"d\" }\n".to_string(),
                "`1A` is not a secret name",
                2,
            ),
            (
                format!("[secrets]\n{long} = {{ description = \"d\" }}\n"),
                "is not a secret name",
                2,
            ),
            (
                "[secrets]\nA = { required = true }\n".to_string(),
                "missing field `description`",
                2,
            ),
            (
                "[secrets]\n\nA = { description = \" \" }\n".to_string(),
                "A needs a description",
                3,
            ),
            (
                format!(
                    "[secrets]\nA = {{ description = \"{}\" }}\n",
                    "d".repeat(1025)
                ),
                "A's description is 1025 bytes",
                2,
            ),
            (
                "[secrets]\nA = { description = \"d\", secret = true }\n".to_string(),
                "unknown field `secret`",
                2,
            ),
            (
                "[secrets]\nA = { description = \"d\", required = \"yes\" }\n".to_string(),
                "invalid type",
                2,
            ),
            (
                "[env]\nset = { A = \"x\" }\n[secrets]\nA = { description = \"d\", env = true }\n"
                    .to_string(),
                "A has env = true, but [env] grants",
                4,
            ),
            (format!("[secrets]\n{many}"), "grants 65 secrets", 1),
        ] {
            let expected = line;
            let err = parse(&text).unwrap_err();
            let ManifestError::Invalid {
                line, reason: got, ..
            } = &err
            else {
                panic!("{err}")
            };
            assert!(got.contains(reason), "{text}: {got}");
            assert_eq!(*line, Some(expected), "{text}: {err}");
        }
        // An [env] name without env = true is no collision.
        assert!(
            parse("[env]\nset = { A = \"x\" }\n[secrets]\nA = { description = \"d\" }\n").is_ok()
        );
    }
}
