//! Host-side bindings for the plugin contract in `wit/plugin.wit`.
//!
//! Exports are called asynchronously so that a call can be timed out or
//! cancelled by dropping its future (the store yields at every epoch tick).

wasmtime::component::bindgen!({
    world: "plugin",
    path: "../../wit/0.1.0",
    exports: { default: async },
});

pub use self::corral::plugin::types;
pub use self::exports::corral::plugin::tools;
