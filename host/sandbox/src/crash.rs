//! A crashed call's report for the plugin's author: what the language
//! runtime said went wrong, and where, without the runtime's noise.
//!
//! A Rust panic, an uncaught JavaScript exception and an uncaught Python
//! exception all end the call with the same trap, `wasm unreachable
//! instruction executed`, which says nothing to the author; what does is on
//! the guest's stderr, wrapped in each runtime's own words:
//!
//! - Rust: `thread '<unnamed>' (1) panicked at src/lib.rs:186:5:` then the
//!   message;
//! - JavaScript (componentize-js): the message and its stack, whose last
//!   frame is the generated glue (`...$call@.../initializer.js`), then
//!   `Redirecting call to abort() to mozalloc_abort`;
//! - Python (componentize-py): the traceback, then the runtime's own panic,
//!   `panicked at runtime/src/lib.rs:...: Python function threw an unexpected
//!   exception`.
//!
//! [`report`] keeps the first part of each and drops the rest; the trap and
//! stderr stay in the debug log. The report, like stderr in the log, is cut
//! to a few KiB by the sandbox (`plugin_text`).

/// Where the contract's shapes in Python and JavaScript are written down,
/// for an author whose plugin returned a value of the wrong shape.
const SHAPES: &str = "the contract's types in Python and JavaScript are in docs/plugins.md, \
                      \"The contract in Python and JavaScript\"";
/// Where componentize-py's runtime converts values between Python and the
/// contract: a panic there is a value of the wrong type.
const PYTHON_RUNTIME: &str = "runtime/src/lib.rs:";
/// The line componentize-js prints as it aborts after an uncaught exception.
const JS_ABORT: &str = "Redirecting call to abort() to mozalloc_abort";
/// The file of componentize-js's generated glue, the last frame of a stack.
const JS_GLUE: &str = "/initializer.js:";
/// What componentize-py's runtime panics with after an uncaught exception.
const PYTHON_UNCAUGHT: &str = "Python function threw an unexpected exception";
const PYTHON_TRACEBACK: &str = "Traceback (most recent call last):";

/// The report of a call whose guest wrote `stderr` before it trapped, when
/// stderr holds a crash a runtime recognizably reported; `None` otherwise
/// (the trap and stderr are then shown as they are).
pub fn report(stderr: &str) -> Option<String> {
    if let Some(start) = stderr.find(PYTHON_TRACEBACK) {
        return Some(format!(
            "raised an exception:\n{}",
            python(&stderr[start..])
        ));
    }
    if stderr.trim_end().ends_with(JS_ABORT) {
        return Some(javascript(stderr));
    }
    let (location, message) = rust_panic(stderr)?;
    if location.starts_with(PYTHON_RUNTIME)
        && let Some(error) = python_conversion(&message)
    {
        return Some(format!(
            "returned a value that does not match the contract's types: {error} ({SHAPES})"
        ));
    }
    Some(format!("panicked at {location}: {message}"))
}

/// `TYPE: MESSAGE` of the Python error componentize-py's runtime unwrapped
/// (`PyErr { type: <class 'TypeError'>, value: TypeError("..."), ... }`).
fn python_conversion(panic: &str) -> Option<String> {
    let rest = panic.split_once("PyErr { type: <class '")?.1;
    let (kind, rest) = rest.split_once("'>, value: ")?;
    let value = rest.strip_prefix(kind)?.strip_prefix("(")?;
    let value = value.rsplit_once("), traceback")?.0;
    // Python's repr of the message: in double quotes when it holds a
    // single one, else in single quotes.
    let value = ['"', '\'']
        .iter()
        .find_map(|quote| value.strip_prefix(*quote)?.strip_suffix(*quote))
        .unwrap_or(value);
    Some(format!("{kind}: {}", value.replace("\\\"", "\"")))
}

/// The traceback, without the runtime's panic after it.
fn python(traceback: &str) -> &str {
    let end = traceback
        .find(PYTHON_UNCAUGHT)
        .and_then(|at| traceback[..at].rfind("thread '"))
        .unwrap_or(traceback.len());
    traceback[..end].trim_end()
}

/// The message and its stack, without the glue's frame and the abort. An
/// exception thrown in the glue itself, with no frame of the plugin's, is
/// the glue failing to convert what an export returned.
fn javascript(stderr: &str) -> String {
    // The glue's frame for the export itself (`export_tools_0_3_0$call@...`;
    // frames of its helpers may come first).
    let glue = stderr
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("export_") && line.contains(JS_GLUE));
    let kept: Vec<&str> = stderr
        .lines()
        .filter(|line| !line.contains(JS_GLUE) && line.trim() != JS_ABORT)
        .collect();
    let text = kept.join("\n");
    let text = text.trim();
    match (text.strip_suffix("\nStack:"), glue) {
        (Some(message), Some(frame)) => {
            let export = frame
                .split_once('$')
                .and_then(|(_, rest)| rest.split_once('@'))
                .map_or("an export", |(name, _)| name);
            format!(
                "returned from `{export}` a value that does not match the contract's types: {} ({SHAPES})",
                message.trim()
            )
        }
        _ => format!("threw an exception: {text}"),
    }
}

/// The location and message of the first panic on stderr.
fn rust_panic(stderr: &str) -> Option<(String, String)> {
    let (before, after) = stderr.split_once(" panicked at ")?;
    // The panic line starts `thread 'NAME'` (with ` (ID)` since Rust 1.88).
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    if !before[line_start..].starts_with("thread '") {
        return None;
    }
    let (location, message) = after.split_once(":\n").unwrap_or((after, ""));
    Some((location.to_owned(), message.trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Each stderr below is what the runtime printed, captured from a
    // plugin built with the project's toolchains.

    #[test]
    fn a_rust_panic_is_its_location_and_message() {
        let stderr = "thread '<unnamed>' (1) panicked at tests/plugins/hostile/src/lib.rs:186:5:\n\
                      hostile panic: boom";
        assert_eq!(
            report(stderr).unwrap(),
            "panicked at tests/plugins/hostile/src/lib.rs:186:5: hostile panic: boom"
        );
        // Older Rust: no thread id.
        let old = "thread '<unnamed>' panicked at src/lib.rs:3:5:\nno";
        assert_eq!(report(old).unwrap(), "panicked at src/lib.rs:3:5: no");
    }

    #[test]
    fn an_uncaught_javascript_exception_is_its_message_and_stack_without_the_glue() {
        let stderr = "the widget is broken\nStack:\n  greet@tool.js:10:31\n  call@plugin.js:36:25\n  \
                      export_tools_0_3_0$call@/tmp/07b63ae9d93d/sources/initializer.js:1067:15\n\n\
                      Redirecting call to abort() to mozalloc_abort";
        assert_eq!(
            report(stderr).unwrap(),
            "threw an exception: the widget is broken\nStack:\n  greet@tool.js:10:31\n  call@plugin.js:36:25"
        );
    }

    #[test]
    fn an_uncaught_python_exception_is_its_traceback_without_the_runtime_panic() {
        let stderr = "Traceback (most recent call last):\n  File \"/0/app.py\", line 59, in call\n  \
                      File \"/0/tool.py\", line 12, in greet\nValueError: the widget is broken\n\n\
                      thread '<unnamed>' (1) panicked at runtime/src/lib.rs:1280:25:\n\
                      Python function threw an unexpected exception";
        assert_eq!(
            report(stderr).unwrap(),
            "raised an exception:\nTraceback (most recent call last):\n  File \"/0/app.py\", line 59, \
             in call\n  File \"/0/tool.py\", line 12, in greet\nValueError: the widget is broken"
        );
    }

    #[test]
    fn a_javascript_value_of_the_wrong_shape_names_the_export_that_returned_it() {
        let stderr = "invalid variant tag value `undefined` (received `[object Object]`) specified for `Content`\n\
                      Stack:\n  export_tools_0_3_0$call@/tmp/5f0c/sources/initializer.js:1067:15\n\n\
                      Redirecting call to abort() to mozalloc_abort";
        assert_eq!(
            report(stderr).unwrap(),
            format!(
                "returned from `call` a value that does not match the contract's types: invalid variant \
                 tag value `undefined` (received `[object Object]`) specified for `Content` ({SHAPES})"
            )
        );
    }

    #[test]
    fn a_python_value_of_the_wrong_type_is_the_python_error() {
        let stderr = "thread '<unnamed>' (1) panicked at runtime/src/lib.rs:1662:66:\n\
                      called `Result::unwrap()` on an `Err` value: PyErr { type: <class 'AttributeError'>, \
                      value: AttributeError(\"'dict' object has no attribute 'is_error'\"), traceback: None }";
        assert_eq!(
            report(stderr).unwrap(),
            format!(
                "returned a value that does not match the contract's types: AttributeError: 'dict' \
                 object has no attribute 'is_error' ({SHAPES})"
            )
        );
    }

    #[test]
    fn anything_else_is_no_report() {
        assert_eq!(report(""), None);
        assert_eq!(report("some log line\nanother"), None);
        assert_eq!(report("a message that says panicked at noon"), None);
    }
}
