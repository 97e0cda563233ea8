//! The user's base folders, as the XDG Base Directory specification names
//! them: where the compile cache and plugins' default state live.

use std::path::PathBuf;

/// `$variable` (`XDG_CACHE_HOME`, `XDG_DATA_HOME`) when it is an absolute
/// path, else `$HOME/under_home` (`.cache`, `.local/share`) when `HOME`
/// is one; `None` without either (a relative value is ignored, as the
/// specification asks).
pub fn base(variable: &str, under_home: &str) -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute(variable).or_else(|| absolute("HOME").map(|home| home.join(under_home)))
}
