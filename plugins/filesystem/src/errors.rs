//! File system errors in Node's words, as the original reports them
//! (`ENOENT: no such file or directory, open '/data/x'`), and the
//! sandbox's refusals in words of our own.

use std::io;

/// The message Node's `fs` gives for `err` in `syscall` on `path` (and
/// `dest`, for a rename).
pub fn node_message(
    err: &io::Error,
    syscall: &str,
    path: Option<&str>,
    dest: Option<&str>,
) -> String {
    if let Some(refusal) = sandbox_refusal(err, syscall, path) {
        return refusal;
    }
    let (code, text) = code_of(err);
    let mut message = format!("{code}: {text}, {syscall}");
    if let Some(path) = path {
        message.push_str(&format!(" '{path}'"));
    }
    if let Some(dest) = dest {
        message.push_str(&format!(" -> '{dest}'"));
    }
    message
}

/// WASI's error numbers (wasi-libc's `errno.h`): what the host's sandbox
/// answers when a path would lead outside a preopened directory.
const WASI_EPERM: i32 = 63;
const WASI_ENOTCAPABLE: i32 = 76;
const WASI_ELOOP: i32 = 32;
const WASI_ENAMETOOLONG: i32 = 37;
const WASI_EXDEV: i32 = 75;
const WASI_EINVAL: i32 = 28;
const WASI_ENOSPC: i32 = 51;
const WASI_EROFS: i32 = 69;
const WASI_EACCES: i32 = 2;
const WASI_EBUSY: i32 = 10;

/// Whether the host's sandbox refused the operation (a path leading out of
/// the preopens), as opposed to the file system failing it.
pub fn is_sandbox_refusal(err: &io::Error) -> bool {
    cfg!(target_family = "wasm")
        && matches!(err.raw_os_error(), Some(WASI_EPERM | WASI_ENOTCAPABLE))
}

/// The sandbox refused the path: it leads outside the allowed directories
/// (through a symlink or a rename that raced the plugin's own check), or the
/// grant is read-only. Said plainly rather than as a bare errno.
fn sandbox_refusal(err: &io::Error, syscall: &str, path: Option<&str>) -> Option<String> {
    let raw = err.raw_os_error()?;
    if !cfg!(target_family = "wasm") {
        return None;
    }
    let path = path.map(|p| format!(" '{p}'")).unwrap_or_default();
    match raw {
        WASI_EPERM | WASI_ENOTCAPABLE => Some(format!(
            "Access denied - the sandbox refused {syscall}{path}: it leads outside the allowed directories"
        )),
        _ => None,
    }
}

/// Node's code and libuv's description of an error.
fn code_of(err: &io::Error) -> (&'static str, &'static str) {
    if cfg!(target_family = "wasm") {
        match err.raw_os_error() {
            Some(WASI_ELOOP) => return ("ELOOP", "too many symbolic links encountered"),
            Some(WASI_ENAMETOOLONG) => return ("ENAMETOOLONG", "name too long"),
            Some(WASI_EXDEV) => return ("EXDEV", "cross-device link not permitted"),
            Some(WASI_EINVAL) => return ("EINVAL", "invalid argument"),
            Some(WASI_ENOSPC) => return ("ENOSPC", "no space left on device"),
            Some(WASI_EROFS) => return ("EROFS", "read-only file system"),
            Some(WASI_EACCES) => return ("EACCES", "permission denied"),
            Some(WASI_EBUSY) => return ("EBUSY", "resource busy or locked"),
            _ => {}
        }
    }
    use io::ErrorKind::*;
    match err.kind() {
        NotFound => ("ENOENT", "no such file or directory"),
        AlreadyExists => ("EEXIST", "file already exists"),
        IsADirectory => ("EISDIR", "illegal operation on a directory"),
        NotADirectory => ("ENOTDIR", "not a directory"),
        DirectoryNotEmpty => ("ENOTEMPTY", "directory not empty"),
        PermissionDenied => ("EACCES", "permission denied"),
        ReadOnlyFilesystem => ("EROFS", "read-only file system"),
        InvalidFilename => ("ENAMETOOLONG", "name too long"),
        CrossesDevices => ("EXDEV", "cross-device link not permitted"),
        StorageFull => ("ENOSPC", "no space left on device"),
        InvalidInput => ("EINVAL", "invalid argument"),
        ResourceBusy => ("EBUSY", "resource busy or locked"),
        _ => ("EIO", "i/o error"),
    }
}

/// ELOOP, for the plugin's own symlink walk.
pub fn too_many_links(syscall: &str, path: &str) -> String {
    format!("ELOOP: too many symbolic links encountered, {syscall} '{path}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_syscall_and_paths_as_node_does() {
        let err = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(
            node_message(&err, "rename", Some("/a"), Some("/b")),
            "ENOENT: no such file or directory, rename '/a' -> '/b'"
        );
        let err = io::Error::from(io::ErrorKind::IsADirectory);
        assert_eq!(
            node_message(&err, "read", None, None),
            "EISDIR: illegal operation on a directory, read"
        );
    }
}
