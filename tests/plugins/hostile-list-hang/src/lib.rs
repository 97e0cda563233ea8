//! A plugin whose `list` never returns: the host must give up on it at load
//! (under its time limit) and keep serving the other plugins in the folder.
//! Written against the raw bindings.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

use std::hint::black_box;

use exports::corral::plugin::tools::{CallResult, Guest, Tool};

struct ListHangs;

impl Guest for ListHangs {
    fn list() -> Vec<Tool> {
        let mut counter: u64 = 0;
        loop {
            counter = black_box(counter.wrapping_add(1));
        }
    }

    fn call(_name: String, _arguments: String) -> CallResult {
        unreachable!("a plugin whose list fails is never called")
    }
}

export!(ListHangs);
