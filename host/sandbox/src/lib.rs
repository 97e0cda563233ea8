//! Corral's sandbox: WebAssembly component plugins, loaded from files and
//! run one fresh instance per call under the limits and grants of their
//! manifests.
//!
//! A [`Plugin`] is loaded once ([`plugin`]: compile through the [`cache`],
//! check its imports against its [`manifest`]'s grants in [`imports`], read
//! and bound its tools' metadata in `metadata`); each call then validates
//! the arguments against the tool's [`schema`] (`validation`), runs in the
//! [`sandbox`] under its [`limits`] (`quota` for rates, `capture` for
//! the guest's output streams, `http` for granted outgoing requests), and
//! checks what came back (`output`); what the answer need not wait for
//! follows it (`after_answer`). A plugin of contract 0.2.0 may ask the
//! call's client for input while it runs (`ask`), and one of 0.3.0 may say
//! that its lists changed or its resources were updated ([`changes`], then
//! [`Plugin::relist`]). A plugin of 0.3.0 may also export resources,
//! templates and prompts (checked at load in `offerings`, templates parsed
//! by [`uri_template`]), read, got and completed as tools are called;
//! [`bindings`] serves every contract version. The results are `corral-tool` values:
//! this crate knows nothing of the protocol that serves them.

mod after_answer;
mod ask;
mod audit;
pub mod bindings;
pub mod cache;
mod capture;
pub mod changes;
mod crash;
mod function_cache;
mod http;
pub mod imports;
pub mod limits;
pub mod manifest;
pub mod memory;
mod metadata;
mod missing_grant;
pub mod naming;
mod offerings;
mod output;
pub mod plugin;
mod plugin_text;
mod quota;
pub mod sandbox;
pub mod schema;
pub mod secrets;
mod spare;
pub mod state;
pub mod units;
mod updated;
pub mod uri_template;
pub mod user_dirs;
mod validation;
mod waiting;

pub use ask::{
    MAX_ANSWER_BYTES, MAX_ASK_BYTES, MAX_ASKS, MAX_FORM_CONTENT, MAX_REQUEST_BYTES, MAX_REQUESTS,
    WaitingCalls,
};
pub use bindings::Contract;
pub use limits::Limits;
pub use manifest::{Manifest, ManifestError};
pub use metadata::{is_valid_tool_name, printable};
pub use naming::plugin_name;
pub use offerings::{MAX_PROMPTS, MAX_RESOURCES, MAX_TEMPLATES, MAX_URI_BYTES};
pub use plugin::{ComponentShape, Inspection, Plugin, PluginFiles, component_shape, inspect};
pub use sandbox::{
    Failure, MAX_UPDATED_PER_CALL, PLUGIN_TARGET, Sandbox, SandboxOptions, engine_config,
};
pub use secrets::own::{Opened, OwnFuture, OwnSecrets};
pub use secrets::{SecretSource, SecretSources};
