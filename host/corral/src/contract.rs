//! The plugin contract this binary serves, as WIT compiled into it: the
//! package `corral:plugin` (`wit/plugin.wit` and the worlds beside it) with
//! the WASI, wasi:keyvalue and wasi:config packages it uses (`wit/deps/`). `corral
//! bindings` and `corral componentize` read it, so a plugin is built for
//! exactly the contract the corral that builds it serves, with no copy of
//! the WIT in the plugin's project to fall out of date.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use wit_parser::{PackageId, Resolve, SourceMap, UnresolvedPackageGroup, WorldId};

/// The world a plugin is built against when none is named.
pub const DEFAULT_WORLD: &str = "plugin";

macro_rules! wit {
    ($path:literal) => {
        ($path, include_str!(concat!("../../../wit/", $path)))
    };
}

/// The package `corral:plugin`: one file per world family.
const MAIN: &[(&str, &str)] = &[
    wit!("plugin.wit"),
    wit!("plugin-with-state.wit"),
    wit!("plugin-with-http.wit"),
    wit!("plugin-with-files.wit"),
    wit!("plugin-with-secrets.wit"),
];

/// The packages it uses, one entry per package (wasi:keyvalue is four
/// files); `deps/keyvalue` and `deps/config` are links to `keyvalue/` and
/// `config/` in the repository.
const DEPS: &[&[(&str, &str)]] = &[
    &[wit!("deps/cli.wit")],
    &[wit!("deps/clocks.wit")],
    &[wit!("deps/filesystem.wit")],
    &[wit!("deps/http.wit")],
    &[wit!("deps/io.wit")],
    &[wit!("deps/random.wit")],
    &[wit!("deps/sockets.wit")],
    &[
        wit!("keyvalue/atomic.wit"),
        wit!("keyvalue/batch.wit"),
        wit!("keyvalue/store.wit"),
        wit!("keyvalue/world.wit"),
    ],
    &[wit!("config/store.wit"), wit!("config/world.wit")],
];

/// A resolved WIT package and the world chosen from it.
pub struct Contract {
    pub resolve: Resolve,
    pub world: WorldId,
}

impl Contract {
    /// The world `world` of the built-in contract, or of the WIT package in
    /// `wit_dir` (a folder with a `deps/` folder, or one file, as
    /// wit-bindgen takes) for a plugin pinned to another contract.
    pub fn load(wit_dir: Option<&Path>, world: &str) -> Result<Contract> {
        let mut resolve = Resolve::default();
        let package = match wit_dir {
            Some(dir) => {
                resolve
                    .push_path(dir)
                    .with_context(|| format!("cannot read the WIT in {}", dir.display()))?
                    .0
            }
            None => push_built_in(&mut resolve)?,
        };
        let world = resolve
            .select_world(&[package], Some(world))
            .map_err(|err| {
                let worlds: Vec<&str> = resolve.packages[package]
                    .worlds
                    .keys()
                    .map(String::as_str)
                    .collect();
                anyhow!("{err:#}; the worlds are: {}", worlds.join(", "))
            })?;
        Ok(Contract { resolve, world })
    }
}

fn push_built_in(resolve: &mut Resolve) -> Result<PackageId> {
    let deps = DEPS
        .iter()
        .map(|files| parse(files))
        .collect::<Result<Vec<_>>>()?;
    let main = parse(MAIN)?;
    Ok(resolve.push_groups(main, deps)?)
}

fn parse(files: &[(&str, &str)]) -> Result<UnresolvedPackageGroup> {
    let mut map = SourceMap::new();
    for (path, text) in files {
        map.push_str(&format!("wit/{path}"), *text);
    }
    map.parse()
        .map_err(|(map, err)| anyhow!("{}", err.render(&map)))
        .context("the contract compiled into corral does not parse")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_world_of_the_built_in_contract_resolves() {
        for world in [
            "plugin",
            "plugin-full",
            "resource-plugin",
            "plugin-with-state",
            "plugin-with-http",
            "plugin-with-files",
            "plugin-with-state-and-files",
            "plugin-with-secrets",
            "plugin-with-state-and-secrets",
        ] {
            let contract = Contract::load(None, world).unwrap();
            let resolved = &contract.resolve.worlds[contract.world];
            assert_eq!(resolved.name, world);
        }
    }

    #[test]
    fn an_unknown_world_names_the_ones_there_are() {
        let err = Contract::load(None, "plugins").err().unwrap().to_string();
        assert!(err.contains("plugin-full"), "{err}");
    }
}
