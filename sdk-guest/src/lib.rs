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
mod completion;
mod content;
mod finite;
mod host;
mod prompt;
mod resource;
mod result;
mod schema;
pub mod secrets;
pub mod state;
mod tool;
mod uri_template;

// The bindings of the contract's widest world, `plugin-full`: the types and
// glue of every interface a plugin may export. Its `export!` macro is not
// used, since it would make every plugin export everything: `plugin!`
// exports only the interfaces of the world it picks, and embeds that world's
// description (built by build.rs) for the componentization to read.
#[doc(hidden)]
#[allow(missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin-full",
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

/// The `wasi:config` import behind [`secrets`], generated apart from the
/// plugin's world for the same reason as [`keyvalue`]: a plugin imports it
/// only when it reads a secret.
#[allow(missing_docs, dead_code)]
mod config {
    wit_bindgen::generate!({
        world: "wasi:config/imports",
        path: "wit/config",
    });
}

#[doc(hidden)]
pub mod __private;

pub use completion::{Completions, MAX_COMPLETIONS, complete_prefix};
pub use content::{Annotations, Content, EmbeddedResource, ResourceContents, ResourceLink, Role};
pub use host::{
    log, progress, prompts_changed, resource_updated, resources_changed, tools_changed,
};
pub use prompt::{
    IntoPromptResult, Prompt, PromptArgument, PromptError, PromptMessage, PromptResult,
};
pub use resource::{Blob, Contents, IntoContents, ReadError, Resource, ResourceTemplate};
pub use result::{Audio, CallResult, Image, IntoToolResult, Json, ToolError};
pub use tool::{Icon, NoArgs, TaskSupport, Tool};

/// Re-exported so that plugins can name `corral_sdk::serde_json::Value`
/// without another dependency.
pub use serde_json;

/// Exports a plugin's tools, resources, resource templates and prompts
/// from this crate.
///
/// Invoke it once, at the root of a `cdylib` crate. A plugin of tools only
/// lists its [`Tool`] expressions, comma-separated:
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
/// A plugin that offers more names each kind, in any order, each with an
/// array of definitions (or any expression giving a `Vec` of them, such as
/// a function call, for lists that depend on the plugin's [`state`]):
/// `tools` ([`Tool`]), `resources` ([`Resource`]), `templates`
/// ([`ResourceTemplate`]) and `prompts` ([`Prompt`]).
///
/// ```rust,no_run
/// use corral_sdk::{plugin, NoArgs, Prompt, Resource};
///
/// fn rules() -> &'static str {
///     "# House rules\n\nBe kind."
/// }
///
/// fn greet(_: NoArgs) -> &'static str {
///     "Greet the user by the house rules."
/// }
///
/// plugin! {
///     resources: [Resource::new("house://rules", "rules", rules).mime_type("text/markdown")],
///     prompts: [Prompt::new("greet", greet).description("Greet the user")],
/// }
/// ```
///
/// The lists are evaluated once per instance, i.e. once per host request,
/// so keep them cheap (they usually are: a name, a function and a few
/// strings).
///
/// **What the component exports** follows from the kinds named: the
/// contract's world `plugin` (interface `tools`) for tools only,
/// `resource-plugin` (`resources` and `completion`) for resources and
/// templates only, and `plugin-full` (`tools`, `resources`, `prompts` and
/// `completion`) otherwise, whose lists not named are empty. Corral offers
/// clients only what some plugin lists, so an empty list costs nothing; a
/// plugin of tools only exports exactly what it did before 0.3.0.
///
/// The macro also defines hidden functions `__corral_tools()`,
/// `__corral_resources()`, `__corral_templates()` and `__corral_prompts()`
/// in the invoking module, which tests can use to inspect the lists.
///
/// A plugin whose tools depend on its [`state`] may also name a function
/// that returns them, `plugin!(tools = FUNCTION)` (the same as
/// `plugin! { tools: FUNCTION() }`), called each time the host lists the
/// plugin or calls a tool; after a call that changed what it returns, the
/// tool says so with [`tools_changed`] ([`resources_changed`] and
/// [`prompts_changed`] for the other lists):
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
        $crate::__plugin_parts!([$tools()] [] [] []);
    };
    ($($kind:ident : $list:expr),+ $(,)?) => {
        $crate::__plugin_sections!([] [] [] [] $($kind : $list,)+);
    };
    ($($tool:expr),* $(,)?) => {
        $crate::__plugin_parts!([::std::vec![$($tool),*]] [] [] []);
    };
}

/// Sorts `plugin!`'s named lists into tools, resources, templates and
/// prompts.
#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_sections {
    ([$($t:tt)*] [$($r:tt)*] [$($m:tt)*] [$($p:tt)*]) => {
        $crate::__plugin_parts!([$($t)*] [$($r)*] [$($m)*] [$($p)*]);
    };
    ([] [$($r:tt)*] [$($m:tt)*] [$($p:tt)*] tools : $list:expr, $($rest:tt)*) => {
        $crate::__plugin_sections!([$list] [$($r)*] [$($m)*] [$($p)*] $($rest)*);
    };
    ([$($t:tt)*] [] [$($m:tt)*] [$($p:tt)*] resources : $list:expr, $($rest:tt)*) => {
        $crate::__plugin_sections!([$($t)*] [$list] [$($m)*] [$($p)*] $($rest)*);
    };
    ([$($t:tt)*] [$($r:tt)*] [] [$($p:tt)*] templates : $list:expr, $($rest:tt)*) => {
        $crate::__plugin_sections!([$($t)*] [$($r)*] [$list] [$($p)*] $($rest)*);
    };
    ([$($t:tt)*] [$($r:tt)*] [$($m:tt)*] [] prompts : $list:expr, $($rest:tt)*) => {
        $crate::__plugin_sections!([$($t)*] [$($r)*] [$($m)*] [$list] $($rest)*);
    };
    ([$($t:tt)*] [$($r:tt)*] [$($m:tt)*] [$($p:tt)*] $kind:ident : $list:expr, $($rest:tt)*) => {
        ::std::compile_error!(::std::concat!(
            "plugin!: `", ::std::stringify!($kind),
            "` is named twice or is not one of `tools`, `resources`, `templates` and `prompts`"
        ));
    };
}

/// Defines `plugin!`'s list functions and exports the world they need:
/// `plugin` for tools only, `resource-plugin` for resources and templates
/// only, `plugin-full` otherwise.
#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_parts {
    ([$($t:expr)?] [$($r:expr)?] [$($m:expr)?] [$($p:expr)?]) => {
        /// The tools this plugin exports.
        #[doc(hidden)]
        #[allow(dead_code, unreachable_code)]
        pub fn __corral_tools() -> ::std::vec::Vec<$crate::Tool> {
            $(return ::std::vec::Vec::from($t);)?
            ::std::vec::Vec::new()
        }

        /// The resources this plugin exports.
        #[doc(hidden)]
        #[allow(dead_code, unreachable_code)]
        pub fn __corral_resources() -> ::std::vec::Vec<$crate::Resource> {
            $(return ::std::vec::Vec::from($r);)?
            ::std::vec::Vec::new()
        }

        /// The resource templates this plugin exports.
        #[doc(hidden)]
        #[allow(dead_code, unreachable_code)]
        pub fn __corral_templates() -> ::std::vec::Vec<$crate::ResourceTemplate> {
            $(return ::std::vec::Vec::from($m);)?
            ::std::vec::Vec::new()
        }

        /// The prompts this plugin exports.
        #[doc(hidden)]
        #[allow(dead_code, unreachable_code)]
        pub fn __corral_prompts() -> ::std::vec::Vec<$crate::Prompt> {
            $(return ::std::vec::Vec::from($p);)?
            ::std::vec::Vec::new()
        }

        $crate::__export_plugin!([$($t)?] [$($r)?] [$($m)?] [$($p)?]);
    };
}

/// Exports the world for the lists `plugin!` was given: the glue of each
/// interface the world exports, and the world's description, which tells
/// the componentization what the component exports.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_plugin {
    ([$($t:expr)?] [] [] []) => {
        $crate::__export_world!(PLUGIN, PLUGIN_LEN, "plugin");
        $crate::__export_tools!();
    };
    ([] [$($r:expr)?] [$($m:expr)?] []) => {
        $crate::__export_world!(RESOURCES, RESOURCES_LEN, "resource-plugin");
        $crate::__export_resources!();
    };
    ([$($t:expr)?] [$($r:expr)?] [$($m:expr)?] [$($p:expr)?]) => {
        $crate::__export_world!(FULL, FULL_LEN, "plugin-full");
        $crate::__export_tools!();
        $crate::__export_resources!();
        $crate::__export_prompts!();
    };
}

/// Embeds the world `$world` (a `component-type` custom section) and
/// defines the type that implements its interfaces and everything the
/// plugin exports, `__corral_plugin()`.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_world {
    ($world:ident, $len:ident, $name:literal) => {
        #[cfg(target_arch = "wasm32")]
        #[unsafe(link_section = ::std::concat!("component-type:corral-sdk:", $name))]
        #[doc(hidden)]
        #[used]
        static __CORRAL_WORLD: [u8; $crate::__private::worlds::$len] =
            $crate::__private::worlds::$world;

        #[doc(hidden)]
        struct __CorralPlugin;

        /// Everything this plugin exports.
        #[allow(dead_code)]
        fn __corral_plugin() -> $crate::__private::Plugin {
            $crate::__private::Plugin {
                tools: __corral_tools(),
                resources: __corral_resources(),
                templates: __corral_templates(),
                prompts: __corral_prompts(),
            }
        }
    };
}

/// Exports `tools`.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_tools {
    () => {
        impl $crate::bindings::exports::corral::plugin::tools::Guest for __CorralPlugin {
            fn list() -> ::std::vec::Vec<$crate::bindings::exports::corral::plugin::tools::Tool> {
                $crate::__private::list_tools(__corral_tools())
            }

            fn call(
                name: ::std::string::String,
                arguments: ::std::string::String,
            ) -> $crate::bindings::exports::corral::plugin::tools::CallResult {
                $crate::__private::call(__corral_tools(), &name, &arguments)
            }
        }

        $crate::bindings::exports::corral::plugin::tools::__export_corral_plugin_tools_0_3_0_cabi!(
            __CorralPlugin with_types_in $crate::bindings::exports::corral::plugin::tools
        );
    };
}

/// Exports `resources` and `completion`.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_resources {
    () => {
        impl $crate::bindings::exports::corral::plugin::resources::Guest for __CorralPlugin {
            fn list() -> $crate::bindings::exports::corral::plugin::resources::Listing {
                $crate::__private::list_resources(__corral_plugin())
            }

            fn read(
                uri: ::std::string::String,
            ) -> ::std::result::Result<
                ::std::vec::Vec<$crate::bindings::exports::corral::plugin::resources::Contents>,
                $crate::bindings::exports::corral::plugin::resources::ReadError,
            > {
                $crate::__private::read_resource(&__corral_plugin(), &uri)
            }
        }

        impl $crate::bindings::exports::corral::plugin::completion::Guest for __CorralPlugin {
            fn complete(
                reference: $crate::bindings::exports::corral::plugin::completion::Reference,
                name: ::std::string::String,
                value: ::std::string::String,
                context: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> $crate::bindings::exports::corral::plugin::completion::Completions {
                $crate::__private::complete_reference(
                    &__corral_plugin(),
                    reference,
                    &name,
                    &value,
                    context,
                )
            }
        }

        $crate::bindings::exports::corral::plugin::resources::__export_corral_plugin_resources_0_3_0_cabi!(
            __CorralPlugin with_types_in $crate::bindings::exports::corral::plugin::resources
        );
        $crate::bindings::exports::corral::plugin::completion::__export_corral_plugin_completion_0_3_0_cabi!(
            __CorralPlugin with_types_in $crate::bindings::exports::corral::plugin::completion
        );
    };
}

/// Exports `prompts`.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_prompts {
    () => {
        impl $crate::bindings::exports::corral::plugin::prompts::Guest for __CorralPlugin {
            fn list() -> ::std::vec::Vec<$crate::bindings::exports::corral::plugin::prompts::Prompt> {
                $crate::__private::list_prompts(__corral_prompts())
            }

            fn get(
                name: ::std::string::String,
                arguments: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<
                $crate::bindings::exports::corral::plugin::prompts::PromptResult,
                $crate::bindings::exports::corral::plugin::prompts::GetError,
            > {
                $crate::__private::get_prompt(&__corral_plugin(), &name, arguments)
            }
        }

        $crate::bindings::exports::corral::plugin::prompts::__export_corral_plugin_prompts_0_3_0_cabi!(
            __CorralPlugin with_types_in $crate::bindings::exports::corral::plugin::prompts
        );
    };
}

#[cfg(test)]
mod tests;
