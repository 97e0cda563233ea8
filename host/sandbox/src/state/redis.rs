//! The shared backend: a Redis server (`redis://HOST:PORT/DB`, or
//! `rediss://` over TLS), so that replicas behind a load balancer see the
//! same state.
//!
//! Every write is one Lua script (`redis/*.lua`), which Redis runs
//! atomically: the quota a script checks is the usage it updates, and 200
//! concurrent `increment`s from any number of replicas end at exactly 200.
//!
//! A plugin's keys all carry its name as a hash tag, `corral:{NAME}:…`:
//! - `usage`, a hash of its `bytes` (keys and values) and `keys`;
//! - `buckets`, the set of its buckets that hold anything;
//! - `seq`, the counter that orders its keys for `list-keys`;
//! - `v:BUCKET`, a hash of key to value;
//! - `o:BUCKET`, a sorted set of key to its `seq`, the listing order (a key
//!   keeps its place when its value changes, so a listing sees it once).
//!
//! `corral:plugins` is the set of plugins that keep anything. A plugin's
//! name holds only `[A-Za-z0-9_-]` (the host makes it so), so the braces
//! end the name and no two namespaces share a key; a principal's own store
//! of a plugin (`[state] per = "principal"`) is the namespace
//! `NAME@KEY`, its key 32 hex digits (`crate::naming::principal_namespace`).
//!
//! Connections are kept for reuse; one that failed is dropped, with every
//! idle one (they failed the same way, most likely: the server went away),
//! so that calls work again as soon as the server is back.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use ::redis::{Client, Connection, ConnectionAddr, RedisError, Script, ScriptInvocation, Value};

use super::{Backend, Entry, Namespace, StateError, Usage};

/// How long a connection may take to open: a server that is away fails a
/// call quickly instead of holding it to its timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one command may wait for its answer (a batch moves at most
/// 16 MiB).
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// The most idle connections kept.
const MAX_IDLE: usize = 16;

/// The Lua scripts, loaded once per server (EVALSHA, with EVAL when the
/// server has forgotten them, after a restart).
struct Scripts {
    set_many: Script,
    get_many: Script,
    delete_many: Script,
    increment: Script,
    entries: Script,
    clear: Script,
}

/// A Redis server holding every plugin's entries.
pub struct Redis {
    client: Client,
    /// The URL without its password, for errors and logs.
    shown: String,
    idle: Mutex<Vec<Connection>>,
    scripts: Scripts,
}

impl Redis {
    /// The store at `url` (`redis://[USER:PASSWORD@]HOST[:PORT][/DB]`, or
    /// `rediss://` for TLS). Nothing is connected until the first use.
    pub fn new(url: &str) -> Result<Redis, String> {
        let client = Client::open(url).map_err(|err| format!("{url}: {err}"))?;
        let info = client.get_connection_info();
        let shown = match &info.addr {
            ConnectionAddr::Tcp(..) => format!("redis://{}/{}", info.addr, info.redis.db),
            ConnectionAddr::TcpTls { .. } => format!("rediss://{}/{}", info.addr, info.redis.db),
            ConnectionAddr::Unix(path) => format!("redis+unix://{}", path.display()),
        };
        Ok(Redis {
            client,
            shown,
            idle: Mutex::new(Vec::new()),
            scripts: Scripts {
                set_many: Script::new(include_str!("redis/set_many.lua")),
                get_many: Script::new(include_str!("redis/get_many.lua")),
                delete_many: Script::new(include_str!("redis/delete_many.lua")),
                increment: Script::new(include_str!("redis/increment.lua")),
                entries: Script::new(include_str!("redis/entries.lua")),
                clear: Script::new(include_str!("redis/clear.lua")),
            },
        })
    }

    fn fault(&self, reason: impl ToString) -> StateError {
        StateError::Backend {
            backend: self.describe(),
            reason: reason.to_string(),
        }
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Connection>> {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn connect(&self) -> Result<Connection, StateError> {
        let connection = self
            .client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(|err| self.fault(err))?;
        connection
            .set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|()| connection.set_write_timeout(Some(IO_TIMEOUT)))
            .map_err(|err| self.fault(err))?;
        Ok(connection)
    }

    /// Runs `work` on a connection. An idle connection that fails before
    /// any answer (the server restarted since it was used) is retried once
    /// on a new one when `idempotent`: running `work` twice then changes
    /// nothing more than running it once.
    fn with<T>(
        &self,
        idempotent: bool,
        work: impl Fn(&mut Connection) -> Result<T, RedisError>,
    ) -> Result<T, StateError> {
        let reused = self.idle().pop();
        let was_reused = reused.is_some();
        let mut connection = match reused {
            Some(connection) => connection,
            None => self.connect()?,
        };
        let mut result = work(&mut connection);
        if let Err(err) = &result
            && is_broken(err)
        {
            self.idle().clear();
            if !(was_reused && idempotent) {
                return Err(self.fault(err));
            }
            connection = self.connect()?;
            result = work(&mut connection);
        }
        match result {
            Ok(value) => {
                let mut idle = self.idle();
                if idle.len() < MAX_IDLE {
                    idle.push(connection);
                }
                Ok(value)
            }
            Err(err) => {
                if is_broken(&err) {
                    self.idle().clear();
                }
                Err(self.fault(err))
            }
        }
    }
}

/// Whether the connection is lost (rather than a command refused).
fn is_broken(err: &RedisError) -> bool {
    err.is_io_error()
        || err.is_connection_dropped()
        || err.is_timeout()
        || err.is_unrecoverable_error()
}

/// A plugin's keys (`corral:{NAME}:`), once its name is one the host gives.
struct Keys {
    prefix: String,
}

impl Keys {
    fn of(plugin: &str) -> Result<Keys, String> {
        let valid = (!plugin.is_empty() && plugin.chars().all(crate::naming::is_name_char))
            || crate::naming::is_host_namespace(plugin)
            || crate::naming::is_principal_namespace(plugin);
        if !valid {
            return Err(format!(
                "{:?} is not a plugin's name (letters, digits, `-` and `_`)",
                plugin
            ));
        }
        Ok(Keys {
            prefix: format!("corral:{{{plugin}}}:"),
        })
    }

    fn usage(&self) -> String {
        format!("{}usage", self.prefix)
    }
    fn buckets(&self) -> String {
        format!("{}buckets", self.prefix)
    }
    fn seq(&self) -> String {
        format!("{}seq", self.prefix)
    }
    fn values(&self, bucket: &str) -> String {
        format!("{}v:{bucket}", self.prefix)
    }
    fn order(&self, bucket: &str) -> String {
        format!("{}o:{bucket}", self.prefix)
    }

    /// A writing script's invocation (`set_many.lua`, `increment.lua`):
    /// the keys it touches, then the quota, the plugin and the bucket.
    fn write<'a>(&self, script: &'a Script, ns: &Namespace, quota: u64) -> ScriptInvocation<'a> {
        let mut invocation = script.key(self.usage());
        invocation
            .key(self.buckets())
            .key(self.seq())
            .key(self.values(&ns.bucket))
            .key(self.order(&ns.bucket))
            .key(PLUGINS)
            .arg(quota)
            .arg(&*ns.plugin)
            .arg(&ns.bucket);
        invocation
    }
}

const PLUGINS: &str = "corral:plugins";

/// A script's answer: its first element, a word, and the rest.
fn answer(value: Value) -> Result<(String, Vec<Value>), String> {
    match value {
        Value::Array(mut items) if !items.is_empty() => {
            let word = match items.remove(0) {
                Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Value::SimpleString(text) => text,
                other => return Err(format!("unexpected answer {other:?}")),
            };
            Ok((word, items))
        }
        other => Err(format!("unexpected answer {other:?}")),
    }
}

fn int(value: &Value) -> Result<i64, String> {
    match value {
        Value::Int(n) => Ok(*n),
        Value::BulkString(bytes) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|text| text.parse().ok())
            .ok_or_else(|| format!("not a number: {value:?}")),
        other => Err(format!("not a number: {other:?}")),
    }
}

fn bytes(value: Value) -> Result<Option<Vec<u8>>, String> {
    match value {
        Value::Nil => Ok(None),
        Value::BulkString(bytes) => Ok(Some(bytes)),
        Value::SimpleString(text) => Ok(Some(text.into_bytes())),
        other => Err(format!("not a value: {other:?}")),
    }
}

fn quota_error(quota: u64, rest: &[Value]) -> Result<StateError, String> {
    match rest {
        [used, needed] => Ok(StateError::Quota {
            quota,
            used: int(used)?.max(0) as u64,
            needed: int(needed)?.max(0) as u64,
        }),
        _ => Err(format!("unexpected quota answer {rest:?}")),
    }
}

impl Backend for Redis {
    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn kind(&self) -> &'static str {
        "redis"
    }

    fn ping(&self) -> Result<(), StateError> {
        self.with(true, |connection| {
            redis::cmd("PING").query::<String>(connection).map(drop)
        })
    }

    fn get_many(
        &self,
        ns: &Namespace,
        keys: &[String],
        budget: u64,
    ) -> Result<Vec<Option<Vec<u8>>>, StateError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let names = Keys::of(&ns.plugin).map_err(|err| self.fault(err))?;
        let value: Value = self.with(true, |connection| {
            self.scripts
                .get_many
                .key(names.values(&ns.bucket))
                .arg(budget)
                .arg(keys)
                .invoke(connection)
        })?;
        let (word, mut rest) = answer(value).map_err(|err| self.fault(err))?;
        match (word.as_str(), rest.pop()) {
            ("too-large", None) => Err(StateError::TooLarge { budget }),
            ("ok", Some(Value::Array(values))) if values.len() == keys.len() => values
                .into_iter()
                .map(bytes)
                .collect::<Result<_, _>>()
                .map_err(|err| self.fault(err)),
            (word, _) => Err(self.fault(format!("unexpected answer `{word}` to get-many"))),
        }
    }

    fn set_many(
        &self,
        ns: &Namespace,
        entries: &[(String, Vec<u8>)],
        quota: u64,
    ) -> Result<(), StateError> {
        if entries.is_empty() {
            return Ok(());
        }
        let names = Keys::of(&ns.plugin).map_err(|err| self.fault(err))?;
        let value: Value = self.with(true, |connection| {
            let mut invocation = names.write(&self.scripts.set_many, ns, quota);
            for (key, value) in entries {
                invocation.arg(key).arg(value.as_slice());
            }
            invocation.invoke(connection)
        })?;
        let (word, rest) = answer(value).map_err(|err| self.fault(err))?;
        match word.as_str() {
            "ok" => Ok(()),
            "quota" => Err(quota_error(quota, &rest).map_err(|err| self.fault(err))?),
            word => Err(self.fault(format!("unexpected answer `{word}` to set-many"))),
        }
    }

    fn delete_many(&self, ns: &Namespace, keys: &[String]) -> Result<(), StateError> {
        if keys.is_empty() {
            return Ok(());
        }
        let names = Keys::of(&ns.plugin).map_err(|err| self.fault(err))?;
        let _deleted: i64 = self.with(true, |connection| {
            self.scripts
                .delete_many
                .key(names.usage())
                .key(names.buckets())
                .key(names.values(&ns.bucket))
                .key(names.order(&ns.bucket))
                .key(PLUGINS)
                .arg(&*ns.plugin)
                .arg(&ns.bucket)
                .arg(keys)
                .invoke(connection)
        })?;
        Ok(())
    }

    fn exists(&self, ns: &Namespace, key: &str) -> Result<bool, StateError> {
        let names = Keys::of(&ns.plugin).map_err(|err| self.fault(err))?;
        self.with(true, |connection| {
            ::redis::cmd("HEXISTS")
                .arg(names.values(&ns.bucket))
                .arg(key)
                .query(connection)
        })
    }

    fn list_keys(
        &self,
        ns: &Namespace,
        cursor: Option<u64>,
        limit: usize,
    ) -> Result<(Vec<String>, Option<u64>), StateError> {
        let names = Keys::of(&ns.plugin).map_err(|err| self.fault(err))?;
        // One more than a page: whether there is a next page.
        let found: Vec<(String, u64)> = self.with(true, |connection| {
            ::redis::cmd("ZRANGEBYSCORE")
                .arg(names.order(&ns.bucket))
                .arg(format!("({}", cursor.unwrap_or(0)))
                .arg("+inf")
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(0)
                .arg(limit + 1)
                .query(connection)
        })?;
        let more = found.len() > limit;
        let mut keys = Vec::with_capacity(found.len().min(limit));
        let mut last = None;
        for (key, seq) in found.into_iter().take(limit) {
            keys.push(key);
            last = Some(seq);
        }
        Ok((keys, if more { last } else { None }))
    }

    fn increment(
        &self,
        ns: &Namespace,
        key: &str,
        delta: u64,
        quota: u64,
    ) -> Result<u64, StateError> {
        let names = Keys::of(&ns.plugin).map_err(|err| self.fault(err))?;
        // Not retried: an answer lost on the way back may have counted.
        let value: Value = self.with(false, |connection| {
            names
                .write(&self.scripts.increment, ns, quota)
                .arg(key)
                .arg(delta.to_string())
                .invoke(connection)
        })?;
        let (word, rest) = answer(value).map_err(|err| self.fault(err))?;
        let key = key.to_string();
        match (word.as_str(), rest.as_slice()) {
            ("ok", [Value::BulkString(digits)]) => std::str::from_utf8(digits)
                .ok()
                .and_then(|digits| digits.parse().ok())
                .ok_or_else(|| self.fault(format!("not a counter in answer: {digits:?}"))),
            ("not-a-counter", _) => Err(StateError::NotACounter { key }),
            ("overflow", _) => Err(StateError::Overflow { key }),
            ("quota", rest) => Err(quota_error(quota, rest).map_err(|err| self.fault(err))?),
            (word, _) => Err(self.fault(format!("unexpected answer `{word}` to increment"))),
        }
    }

    fn usage(&self, plugin: &str) -> Result<Usage, StateError> {
        let names = Keys::of(plugin).map_err(|err| self.fault(err))?;
        let (bytes, keys): (Option<u64>, Option<u64>) = self.with(true, |connection| {
            ::redis::cmd("HMGET")
                .arg(names.usage())
                .arg("bytes")
                .arg("keys")
                .query(connection)
        })?;
        Ok(Usage {
            keys: keys.unwrap_or(0),
            bytes: bytes.unwrap_or(0),
        })
    }

    fn entries(
        &self,
        plugin: &str,
        limit: usize,
        preview: usize,
    ) -> Result<Vec<Entry>, StateError> {
        let names = Keys::of(plugin).map_err(|err| self.fault(err))?;
        let mut buckets: Vec<String> = self.with(true, |connection| {
            ::redis::cmd("SMEMBERS")
                .arg(names.buckets())
                .query(connection)
        })?;
        buckets.sort();
        let mut entries = Vec::new();
        for bucket in buckets {
            let room = limit - entries.len();
            if room == 0 {
                break;
            }
            let keys: Vec<String> = self.with(true, |connection| {
                ::redis::cmd("ZRANGE")
                    .arg(names.order(&bucket))
                    .arg(0)
                    .arg(room as i64 - 1)
                    .query(connection)
            })?;
            if keys.is_empty() {
                continue;
            }
            let found: Vec<Value> = self.with(true, |connection| {
                self.scripts
                    .entries
                    .key(names.values(&bucket))
                    .arg(preview)
                    .arg(&keys)
                    .invoke(connection)
            })?;
            let mut found = found.into_iter();
            for key in keys {
                let (Some(size), Some(value)) = (found.next(), found.next()) else {
                    return Err(self.fault("a short answer to a listing"));
                };
                let size = int(&size).map_err(|err| self.fault(err))?;
                // A key deleted between the two reads is left out.
                if size < 0 {
                    continue;
                }
                entries.push(Entry {
                    bucket: bucket.clone(),
                    key,
                    value: bytes(value)
                        .map_err(|err| self.fault(err))?
                        .unwrap_or_default(),
                    size: size as u64,
                });
            }
        }
        Ok(entries)
    }

    fn plugins(&self) -> Result<Vec<String>, StateError> {
        let mut plugins: Vec<String> = self.with(true, |connection| {
            ::redis::cmd("SMEMBERS").arg(PLUGINS).query(connection)
        })?;
        plugins.sort();
        Ok(plugins)
    }

    fn clear(&self, plugin: &str) -> Result<u64, StateError> {
        let names = Keys::of(plugin).map_err(|err| self.fault(err))?;
        let removed: i64 = self.with(true, |connection| {
            self.scripts
                .clear
                .key(names.usage())
                .key(names.buckets())
                .key(names.seq())
                .key(PLUGINS)
                .arg(plugin)
                .arg(&names.prefix)
                .invoke(connection)
        })?;
        Ok(removed.max(0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::process::{Child, Command, Stdio};
    use std::time::Instant;

    use super::*;
    use crate::state::contract;

    /// A `redis-server` of its own on a loopback port, in memory only,
    /// stopped when dropped.
    struct Server {
        child: Child,
        port: u16,
        url: String,
    }

    impl Server {
        /// A server on a free port.
        fn new() -> Server {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            Server::on(port)
        }

        /// A server on `port`, once it answers.
        fn on(port: u16) -> Server {
            let child = Command::new("redis-server")
                .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
                .args(["--save", "", "--appendonly", "no"])
                .stdout(Stdio::null())
                .spawn()
                .unwrap_or_else(|err| {
                    panic!(
                        "cannot run redis-server ({err}): the tests need Debian's redis-server; \
                         install it with `scripts/system-packages test`"
                    )
                });
            let server = Server {
                child,
                port,
                url: format!("redis://127.0.0.1:{port}/0"),
            };
            let client = Client::open(server.url.as_str()).unwrap();
            let started = Instant::now();
            while client.get_connection().is_err() {
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "redis-server did not start on port {port}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            server
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn store() -> (Server, Redis) {
        let server = Server::new();
        let store = Redis::new(&server.url).unwrap();
        (server, store)
    }

    contract::suite!(store());

    #[test]
    fn a_server_that_goes_away_fails_calls_naming_it_until_it_is_back() {
        let (server, store) = store();
        let a = contract::ns("p", "default");
        contract::set(&store, &a, "k", b"v", 100).unwrap();
        let (url, port) = (server.url.clone(), server.port);
        drop(server);
        for err in [
            store.exists(&a, "k").unwrap_err(),
            store.increment(&a, "n", 1, 100).unwrap_err(),
        ] {
            let err = err.to_string();
            assert!(
                err.contains(&format!("the state store ({url}) failed")),
                "{err}"
            );
        }
        // A new (empty) server on the same port: calls work again.
        let _back = Server::on(port);
        assert_eq!(store.increment(&a, "n", 1, 100).unwrap(), 1);
        assert!(!store.exists(&a, "k").unwrap());
    }

    /// A server restarted with no call in between leaves idle connections
    /// that fail on first use: a read is retried on a new one.
    #[test]
    fn a_reused_connection_to_a_restarted_server_is_replaced() {
        let (server, store) = store();
        let a = contract::ns("p", "default");
        contract::set(&store, &a, "k", b"v", 100).unwrap();
        let port = server.port;
        drop(server);
        let _back = Server::on(port);
        assert!(!store.exists(&a, "k").unwrap());
    }

    #[test]
    fn the_url_is_shown_without_its_password() {
        let store = Redis::new("redis://user:secret@127.0.0.1:6390/3").unwrap();
        assert_eq!(store.describe(), "redis://127.0.0.1:6390/3");
        let tls = Redis::new("rediss://:secret@example.com/1").unwrap();
        assert_eq!(tls.describe(), "rediss://example.com:6379/1");
        assert!(Redis::new("http://example.com").is_err());
    }

    #[test]
    fn names_that_are_not_the_hosts_are_refused() {
        let (_server, store) = store();
        let err = store.clear("a}:v:x").unwrap_err().to_string();
        assert!(err.contains("is not a plugin's name"), "{err}");
    }
}
