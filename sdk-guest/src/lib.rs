//! Write Corral plugins in Rust: MCP tools served from
//! WebAssembly components.
//!
//! A plugin is a `cdylib` crate built for `wasm32-wasip2`. It declares its
//! tools with [`Tool::new`] and exports them with [`plugin!`]. Each tool is a
//! plain function from an argument type to a result type:
//!
//! - the argument type implements [`serde::Deserialize`] and
//!   [`schemars::JsonSchema`]; its JSON Schema (2020-12, doc comments become
//!   descriptions) is the tool's input schema. Tools without arguments take
//!   [`NoArgs`].
//! - the result type implements [`IntoToolResult`]: text (`String`, `&str`,
//!   numbers, `bool`), [`Json`] for structured content with an output schema,
//!   [`Image`], [`Audio`], a list of [`Content`], a hand-built [`CallResult`],
//!   or a `Result<_, E>` whose error becomes a tool execution error (the
//!   model sees the message and can correct itself).
//!
//! ```rust,no_run
//! use corral_sdk::{plugin, Tool, ToolError};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! /// Two numbers.
//! #[derive(Deserialize, JsonSchema)]
//! struct Pair {
//!     /// The left operand
//!     a: f64,
//!     /// The right operand
//!     b: f64,
//! }
//!
//! fn add(p: Pair) -> f64 {
//!     p.a + p.b
//! }
//!
//! fn divide(p: Pair) -> Result<f64, ToolError> {
//!     if p.b == 0.0 {
//!         return Err(ToolError::new("cannot divide by zero"));
//!     }
//!     Ok(p.a / p.b)
//! }
//!
//! plugin! {
//!     Tool::new("add", add).description("Add two numbers"),
//!     Tool::new("divide", divide).description("Divide a by b").read_only(),
//! }
//! ```
//!
//! Build with `cargo build --release --target wasm32-wasip2`; the resulting
//! `.wasm` file is a component that Corral can load.
//!
//! The host calls every tool in a fresh instance, so a plugin keeps nothing
//! in memory between calls; what it must remember goes into its store, a
//! [`state::Bucket`] (with a grant in its manifest). While a call runs, a
//! tool may write to the host's log with the functions in [`log`], report
//! [`progress`], and ask the user, the client's model or the client's roots
//! with the functions in [`client`] (read its rules first: a call may be run
//! again from the start).
//!
//! The crate also compiles for native targets so that plugin logic can be
//! unit-tested with `cargo test`: there [`log`] writes to stderr,
//! [`progress`] does nothing, [`client`] asks a fake client that tests set
//! ([`client::fake`]), [`state`] keeps buckets in memory ([`state::fake`]),
//! and [`Tool::call`] runs a tool directly.

#![warn(missing_docs)]

pub mod client;
mod content;
mod host;
mod result;
mod schema;
pub mod state;
mod tool;

#[doc(hidden)]
#[allow(missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin",
        path: "wit",
        pub_export_macro: true,
        default_bindings_module: "::corral_sdk::bindings",
    });
}

/// The `wasi:keyvalue` imports behind [`state`]. Generated apart from the
/// plugin's world so that a plugin imports them only when it calls
/// [`state`]: the linker drops what no code reaches, and the component then
/// does not import the interfaces at all.
#[allow(missing_docs, dead_code)]
mod keyvalue {
    wit_bindgen::generate!({
        world: "wasi:keyvalue/imports",
        path: "wit/keyvalue",
    });
}

#[doc(hidden)]
pub mod __private;

pub use content::{Annotations, Content, EmbeddedResource, ResourceContents, ResourceLink, Role};
pub use host::{log, progress, tools_changed};
pub use result::{Audio, CallResult, Image, IntoToolResult, Json, ToolError};
pub use tool::{Icon, NoArgs, Tool};

/// Re-exported so that plugins can name `corral_sdk::serde_json::Value`
/// without another dependency.
pub use serde_json;

/// Exports a plugin's tools from this crate.
///
/// Invoke it once, at the root of a `cdylib` crate, with a comma-separated
/// list of [`Tool`] expressions. The list is evaluated once per instance,
/// i.e. once per host request, so keep the expressions cheap (they usually
/// are: a name, a function and a few strings).
///
/// ```rust,no_run
/// use corral_sdk::{plugin, NoArgs, Tool};
///
/// fn hello(_: NoArgs) -> &'static str {
///     "hello"
/// }
///
/// plugin! {
///     Tool::new("hello", hello).description("Say hello"),
/// }
/// ```
///
/// The macro also defines a hidden function `__corral_tools() -> Vec<Tool>`
/// in the invoking module, which tests can use to inspect the tool list.
///
/// A plugin whose tools depend on its [`state`] names a function that
/// returns them instead, `plugin!(tools = FUNCTION)`, called each time the
/// host lists the plugin or calls a tool; after a call that changed what it
/// returns, the tool says so with [`tools_changed`]:
///
/// ```rust,no_run
/// use corral_sdk::state::{Bucket, StateError};
/// use corral_sdk::{plugin, NoArgs, Tool};
///
/// fn hello(_: NoArgs) -> &'static str {
///     "hello"
/// }
///
/// fn unlock(_: NoArgs) -> Result<&'static str, StateError> {
///     Bucket::open("default")?.set("unlocked", &true)?;
///     corral_sdk::tools_changed();
///     Ok("`hello` is served from now on")
/// }
///
/// fn tools() -> Vec<Tool> {
///     let unlocked = Bucket::open("default")
///         .and_then(|bucket| bucket.get::<bool>("unlocked"))
///         .ok()
///         .flatten()
///         .unwrap_or(false);
///     let mut tools = vec![Tool::new("unlock", unlock).description("Offer `hello`")];
///     if unlocked {
///         tools.push(Tool::new("hello", hello).description("Say hello"));
///     }
///     tools
/// }
///
/// plugin!(tools = tools);
/// ```
#[macro_export]
macro_rules! plugin {
    (tools = $tools:path $(,)?) => {
        /// The tools this plugin exports, as of now.
        #[doc(hidden)]
        #[allow(dead_code)]
        pub fn __corral_tools() -> ::std::vec::Vec<$crate::Tool> {
            $tools()
        }

        $crate::__export_plugin!();
    };
    ($($tool:expr),* $(,)?) => {
        /// The tools this plugin exports.
        #[doc(hidden)]
        #[allow(dead_code)]
        pub fn __corral_tools() -> ::std::vec::Vec<$crate::Tool> {
            ::std::vec![$($tool),*]
        }

        $crate::__export_plugin!();
    };
}

/// Exports `__corral_tools`, defined by [`plugin!`] in the invoking module.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_plugin {
    () => {

        #[doc(hidden)]
        struct __CorralPlugin;

        impl $crate::bindings::exports::corral::plugin::tools::Guest for __CorralPlugin {
            fn list() -> ::std::vec::Vec<$crate::bindings::exports::corral::plugin::tools::Tool> {
                $crate::__private::list(__corral_tools())
            }

            fn call(
                name: ::std::string::String,
                arguments: ::std::string::String,
            ) -> $crate::bindings::exports::corral::plugin::tools::CallResult {
                $crate::__private::call(__corral_tools(), &name, &arguments)
            }
        }

        $crate::bindings::export!(__CorralPlugin with_types_in $crate::bindings);
    };
}

#[cfg(test)]
mod tests;
