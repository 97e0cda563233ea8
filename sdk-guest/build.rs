//! Encodes the contract's three worlds (`plugin`, `plugin-full` and
//! `resource-plugin`) as the `component-type` custom sections that
//! `wit-component` reads when it turns a plugin's core module into a
//! component. `plugin!` embeds the one it picks, so that a component exports
//! exactly that world's interfaces (see `__export_plugin!` in lib.rs).

use std::path::PathBuf;

fn main() {
    let contract = PathBuf::from("wit/plugin.wit");
    println!("cargo::rerun-if-changed={}", contract.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let mut resolve = wit_parser::Resolve::default();
    let package = resolve.push_file(&contract).expect("wit/plugin.wit parses");
    for world in ["plugin", "plugin-full", "resource-plugin"] {
        let id = resolve
            .select_world(&[package], Some(world))
            .expect("the contract has the world");
        let section = wit_component::metadata::encode(
            &resolve,
            id,
            wit_component::StringEncoding::UTF8,
            None,
        )
        .expect("the world encodes");
        std::fs::write(out.join(format!("{world}.bin")), section).expect("OUT_DIR is writable");
    }
}
