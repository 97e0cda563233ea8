//! A plugin whose `list` panics: the host must skip it at load and keep
//! serving the other plugins in the folder. Written against the raw bindings.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

use exports::corral::plugin::tools::{CallResult, Guest, Tool};

struct ListPanics;

impl Guest for ListPanics {
    fn list() -> Vec<Tool> {
        panic!("hostile list panic: no tools for you")
    }

    fn call(_name: String, _arguments: String) -> CallResult {
        unreachable!("a plugin whose list fails is never called")
    }
}

export!(ListPanics);
