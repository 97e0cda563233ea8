//! The host side of `wasi:config/store@0.2.0-draft` for one call: the
//! secrets the plugin's grant names that have values, resolved when the
//! call's store was made. Any other key reads as none.

use wasmtime::component::HasData;

use super::Granted;
use generated::wasi::config::store;

/// The bindings of `wasi:config@0.2.0-draft` (`wit/config/`).
mod generated {
    wasmtime::component::bindgen!({
        world: "wasi:config/imports",
        path: "../../wit/config",
    });
}

/// Adds `wasi:config/store` to `linker`, served from each call's
/// [`Granted`] secrets.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    view: fn(&mut T) -> ConfigView<'_>,
) -> wasmtime::Result<()> {
    store::add_to_linker::<T, Config>(linker, view)
}

/// The part of a call's state that `wasi:config` reads.
pub struct ConfigView<'a> {
    /// `None` for a plugin without a `[secrets]` grant (the import gate
    /// keeps such a plugin from loading; this is the second lock).
    pub granted: Option<&'a Granted>,
}

/// Ties [`ConfigView`] to the linker.
pub struct Config;

impl HasData for Config {
    type Data<'a> = ConfigView<'a>;
}

impl store::Host for ConfigView<'_> {
    fn get(&mut self, key: String) -> Result<Option<String>, store::Error> {
        Ok(self
            .granted
            .and_then(|granted| granted.value(&key))
            .map(str::to_owned))
    }

    fn get_all(&mut self) -> Result<Vec<(String, String)>, store::Error> {
        Ok(self
            .granted
            .map(|granted| {
                granted
                    .values()
                    .map(|(name, value)| (name.to_owned(), value.to_owned()))
                    .collect()
            })
            .unwrap_or_default())
    }
}
