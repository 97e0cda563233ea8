//! The reference MCP server `@modelcontextprotocol/server-filesystem`
//! (npm, 2026.8.31) as a Corral plugin: the same fourteen tools, input and
//! output schemas, texts and errors, with the allowed directories being the
//! manifest's `[[dirs]]` grants (the guest's preopens, under their guest
//! paths). Every path is checked as the original checks it (validate.rs);
//! what makes the check hold, symlink races included, is the sandbox: the
//! component can open nothing outside its preopens.

mod diff;
mod errors;
mod glob;
mod paths;
mod schemas;
mod text;
mod tools;
mod validate;

use corral_sdk::{Tool, plugin};
use schemas::{MediaOutput, TextOutput};

/// A read-only tool of a closed world, as the original annotates them.
fn reader(tool: Tool) -> Tool {
    tool.open_arguments()
        .read_only()
        .closed_world()
        .output_schema::<TextOutput>()
}

/// A tool that changes files: its three hints said explicitly.
fn writer(tool: Tool, destructive: bool, idempotent: bool) -> Tool {
    tool.open_arguments()
        .read_only_hint(false)
        .destructive_hint(destructive)
        .idempotent_hint(idempotent)
        .closed_world()
        .output_schema::<TextOutput>()
}

plugin! {
    reader(Tool::new("read_file", tools::read_text_file))
        .title("Read File (Deprecated)")
        .description("Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead."),
    reader(Tool::new("read_text_file", tools::read_text_file))
        .title("Read Text File")
        .description(
            "Read the complete contents of a file from the file system as text (UTF-8; invalid \
             bytes read as U+FFFD). Use 'head' to read only the first N lines or 'tail' for the \
             last N lines, not both. Only works within allowed directories.",
        ),
    Tool::new("read_media_file", tools::read_media_file)
        .open_arguments()
        .read_only()
        .closed_world()
        .output_schema::<MediaOutput>()
        .title("Read Media File")
        .description(
            "Read a file and return it as a base64-encoded content block with its MIME type. \
             Image and audio files are returned as image/audio content; any other file type is \
             returned as an embedded resource. Only works within allowed directories.",
        ),
    reader(Tool::new("read_multiple_files", tools::read_multiple_files))
        .title("Read Multiple Files")
        .description(
            "Read several files at once. Each file's content is returned after its path, \
             separated by '---'; a file that cannot be read gets its error instead and does not \
             stop the others. Only works within allowed directories.",
        ),
    writer(Tool::new("write_file", tools::write_file), true, true)
        .title("Write File")
        .description(
            "Create a new file or completely overwrite an existing file with new content (UTF-8). \
             Overwrites without warning. Only works within allowed directories.",
        ),
    writer(Tool::new("edit_file", tools::edit_file), true, false)
        .title("Edit File")
        .description(
            "Make line-based edits to a text file. Each edit replaces the first occurrence of \
             oldText with newText (if oldText does not occur exactly, lines that match it up to \
             leading and trailing whitespace are replaced, keeping their indentation). Returns a \
             git-style diff of the changes; with dryRun the file is left unchanged. Only works \
             within allowed directories.",
        ),
    writer(Tool::new("create_directory", tools::create_directory), false, true)
        .title("Create Directory")
        .description(
            "Create a directory, with any missing parents; succeeds silently if it exists. Only \
             works within allowed directories.",
        ),
    reader(Tool::new("list_directory", tools::list_directory))
        .title("List Directory")
        .description(
            "List the entries of a directory, each prefixed [FILE] or [DIR] (a symlink is listed \
             as [FILE]). Only works within allowed directories.",
        ),
    reader(Tool::new("list_directory_with_sizes", tools::list_directory_with_sizes))
        .title("List Directory with Sizes")
        .description(
            "List the entries of a directory with [FILE]/[DIR] prefixes and file sizes, sorted by \
             name or by size (largest first), with totals. Only works within allowed directories.",
        ),
    reader(Tool::new("directory_tree", tools::directory_tree))
        .title("Directory Tree")
        .description(
            "Get a recursive tree view of files and directories as JSON (2-space indentation). \
             Each entry has 'name' and 'type' (file/directory); directories have a 'children' \
             array. excludePatterns are glob patterns on paths relative to the given path (a \
             pattern without '*' also excludes that name anywhere). Only works within allowed \
             directories.",
        ),
    writer(Tool::new("move_file", tools::move_file), true, false)
        .title("Move File")
        .description(
            "Move or rename a file or directory. Fails if the destination exists. Both source and \
             destination must be within allowed directories.",
        ),
    reader(Tool::new("search_files", tools::search_files))
        .title("Search Files")
        .description(
            "Recursively search for files and directories whose path relative to the given path \
             matches a glob pattern ('*.ext' in that directory, '**/*.ext' at any depth; braces \
             and [classes] work, extended globs do not). Returns the full paths of the matches. \
             Only searches within allowed directories.",
        ),
    reader(Tool::new("get_file_info", tools::get_file_info))
        .title("Get File Info")
        .description(
            "Retrieve metadata about a file or directory: size, times, and type. Permissions are \
             not visible in the sandbox. Only works within allowed directories.",
        ),
    reader(Tool::new("list_allowed_directories", tools::list_allowed_directories))
        .title("List Allowed Directories")
        .description(
            "Returns the directories this plugin may access (its manifest's grants); their \
             subdirectories are accessible too.",
        ),
}
