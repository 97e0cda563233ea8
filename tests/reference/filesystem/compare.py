"""Drives the reference server npm @modelcontextprotocol/server-filesystem
2026.8.31 and `corral serve` with plugins/filesystem through the same
scripted session, with the official MCP Python SDK, and compares every
answer: tools/list (name, title, inputSchema, outputSchema, annotations;
descriptions may differ) and each call's content, structuredContent and
isError.

Usage: python compare.py compare  NODE ENTRY CORRAL PLUGIN_WASM WORKDIR
       python compare.py security NODE ENTRY CORRAL PLUGIN_WASM WORKDIR

The fixture tree is built under WORKDIR/fx by make_fixture(); the allowed
directories are WORKDIR/fx/data and WORKDIR/fx/data2. The original gets them
on its command line; Corral's plugin gets them as [[dirs]] grants whose guest
path is the host path, so both servers' texts name the same paths and no
substitution is needed. The two servers run one after the other on the same
paths, the fixture rebuilt identically (same names, contents, order and
modification times) between them, so that the writes of one do not reach the
other. The original runs with TZ=UTC: the plugin writes dates in UTC.

`compare` exits non-zero on any difference not in ALLOWED. `security` runs
the path escapes reported against the original on both servers, prints what
each did, and exits non-zero only if Corral's plugin read or wrote outside
its grants (the original's behaviour is recorded, not judged); then, Corral
only, every writing tool in a folder granted read-only.

ALLOWED differences, each with its reason (and the narrowest comparison):

1. "schema": arguments that break the input schema both servers advertise
   (a string for a number, a missing field, an empty paths array, a sortBy
   outside its enum). Both refuse them with isError and no
   structuredContent; the original's SDK in zod's words ("MCP error -32602:
   Input validation error: ..."), Corral's validator in its own ("Invalid
   arguments for tool `...`"), before the plugin runs.

2. "info": get_file_info's `created`, `accessed` and `permissions` lines.
   WASI exposes no birth time and no permission bits: the plugin reports the
   modification time as `created` and says that permissions are unknown.
   `accessed` moves with every read, and the two servers read at different
   moments. Compared: every other line exactly (size, modified, isDirectory,
   isFile), these three lines' formats (a JavaScript date; the plugin's
   fixed permissions sentence).

3. "title annotation" (tools/list): Corral's Rust SDK repeats a tool's title
   in annotations.title for clients older than the `title` field; the
   original sets only `title`. Compared: the annotations without `title`,
   and annotations.title equal to the tool's title.

4. "mirror" (read_media_file, the one tool whose results have
   structuredContent and no text): Corral's host adds a result's
   structuredContent as a last JSON text block when the result has no text
   of its own, as MCP advises tools for clients that cannot read
   structuredContent; the original does not. Compared: Corral's content
   without its last block, which must be a text block whose JSON equals
   structuredContent. Every result with text is compared exactly: the host
   adds nothing to it.

5. "absolute link": a symlink whose target is an absolute path. The sandbox
   (cap-std, under wasmtime's WASI) neither reads nor follows such a link,
   wherever it points: an absolute host path means nothing in the guest's
   namespace. The plugin refuses it with its own message, naming the link;
   the original follows it, and reads the file when the target is inside
   its directories (it refuses outside ones with its symlink message).
   Compared: Corral's exact refusal; the original's answer is printed, not
   judged. Relative symlinks, in or out, are compared like any call.

6. "link sizes": list_directory_with_sizes stats each entry through its
   symlinks; the sandbox does not follow a symlink out of the grants (nor an
   absolute one), so Corral lists those at 0 B, as the original lists any
   entry it cannot stat. (The original shows the size of the outside file.)
   Compared: every line, with those entries' sizes expected as 0 B; the
   combined size is not compared; sorted by size, the lines as a set (the
   0 B entries keep name order among themselves in both).
"""

import asyncio
import json
import os
import re
import shutil
import sys
import threading
import time

from mcp import Client, StdioServerParameters
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import schema_refusal_problems  # noqa: E402
from common import short as common_short  # noqa: E402

MTIME = 1_700_000_000  # Tue Nov 14 2023 22:13:20 UTC, for every fixture file
LINES = "".join(f"line {i}\n" for i in range(1, 5001))
MULTIBYTE = "é" * 700 + "\n" + "ü" * 700 + "\n" + "end"
CODE = (
    "def greet(name):\n"
    "    message = 'hello ' + name\n"
    "    print(message)\n"
    "    return message\n"
    "\n"
    "\n"
    "def main():\n"
    "    greet('world')\n"
)
REPEATS = "a\nb\na\nb\na\nb\nc\n"
LONG_FILE = "".join(f"row {i}\n" for i in range(1, 41))
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
SECRET = "TOP SECRET: outside the grants\n"


def make_fixture(fx):
    """The fixture tree, built the same way every time."""
    if os.path.exists(fx):
        shutil.rmtree(fx)
    data, data2 = f"{fx}/data", f"{fx}/data2"
    files = {
        "hello.txt": "hello\nworld\n",
        "empty.txt": "",
        "lines.txt": LINES,
        "crlf.txt": "one\r\ntwo\r\nthree\r\n",
        "noeol.txt": "a\nb\nc",
        "ünïcödé 文件.txt": "héllo wörld ✓\n",
        "multibyte.txt": MULTIBYTE,
        "invalid.txt": b"ok \xff\xfe bytes\n",
        "code.py": CODE,
        "repeats.txt": REPEATS,
        "long.txt": LONG_FILE,
        "fences.md": "text\n```\ncode\n```\n",
        "image.png": PNG,
        "UPPER.PNG": PNG,
        "sound.mp3": b"ID3\x03\x00fake mp3",
        "doc.pdf": b"%PDF-1.4 fake",
        "my doc é#1.bin": b"\x00\x01\x02binary",
        "move_src.txt": "to be moved\n",
        "move_dst.txt": "already here\n",
        "overwrite.txt": "old content\n",
        "sub/a.txt": "a\n",
        "sub/b.md": "# b\n",
        "sub/.hidden": "dot\n",
        "sub/deep/c.txt": "c\n",
        "sub/deep/d.py": "print('d')\n",
        "node_modules/pkg/index.js": "module.exports = 1\n",
        "sizes/a.txt": b"x" * 1023,
        "sizes/B.txt": b"x" * 1024,
        "sizes/b.txt": b"x" * 1152,
        "sizes/_under": b"x" * 1536,
        "sizes/10": b"x" * (2 * 1048576),
        "sizes/2": b"",
        "sizes/Zeta": b"x" * 5,
        "sizes/émoji 😀": b"x" * 7,
        "movedir/inner.txt": "inner\n",
        # Unicode forms: a decomposed name, and two names equal after NFC.
        "forms/cafe\u0301.txt": "decomposed\n",
        "forms/\u212b.txt": "angstrom sign\n",
        "forms/A\u030a.txt": "A and a ring\n",
    }
    for name, content in files.items():
        path = f"{data}/{name}"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
    os.makedirs(f"{data}/emptydir")
    os.makedirs(f"{data}/sizes/subdir")
    os.makedirs(data2)
    with open(f"{data2}/other.txt", "w") as f:
        f.write("second grant\n")
    os.makedirs(f"{fx}/outside")
    os.makedirs(f"{fx}/data_evil")
    for folder in ("outside", "data_evil"):
        with open(f"{fx}/{folder}/secret.txt", "w") as f:
            f.write(SECRET)
    os.symlink("hello.txt", f"{data}/link_in")
    os.symlink("../outside/secret.txt", f"{data}/link_out")
    os.symlink("../outside", f"{data}/link_dir_out")
    os.symlink(f"{fx}/outside/secret.txt", f"{data}/link_abs_out")
    os.symlink(f"{fx}/outside", f"{data}/link_abs_dir_out")
    os.symlink("nowhere", f"{data}/dangling")
    os.symlink(f"{data}/hello.txt", f"{data}/link_abs_in")
    os.symlink("../../outside/secret.txt", f"{data}/sub/link_rel_out")
    for folder, dirs, names in os.walk(fx):
        for name in dirs + names:
            os.utime(f"{folder}/{name}", (MTIME, MTIME), follow_symlinks=False)


def sessions(fx):
    """(label, tool, arguments, expectation): expectation "same" (every field
    equal), or "schema"/"info" (ALLOWED 1 and 2)."""
    d = f"{fx}/data"
    return [
        ("allowed directories", "list_allowed_directories", {}, "same"),
        ("read a file", "read_text_file", {"path": f"{d}/hello.txt"}, "same"),
        ("read_file, the deprecated alias", "read_file", {"path": f"{d}/hello.txt"}, "same"),
        ("empty file", "read_text_file", {"path": f"{d}/empty.txt"}, "same"),
        ("unicode name", "read_text_file", {"path": f"{d}/ünïcödé 文件.txt"}, "same"),
        ("CRLF file as it is", "read_text_file", {"path": f"{d}/crlf.txt"}, "same"),
        ("invalid UTF-8", "read_text_file", {"path": f"{d}/invalid.txt"}, "same"),
        ("relative path", "read_text_file", {"path": "hello.txt"}, "same"),
        ("relative path in a subfolder", "read_text_file", {"path": "sub/a.txt"}, "same"),
        ("path with a trailing slash and dots", "read_text_file", {"path": f"{d}/sub/./../hello.txt"}, "same"),
        ("second grant", "read_text_file", {"path": f"{fx}/data2/other.txt"}, "same"),
        ("a 2 MiB file", "read_text_file", {"path": f"{d}/sizes/10"}, "same"),
        ("head 3 of a big file", "read_text_file", {"path": f"{d}/lines.txt", "head": 3}, "same"),
        ("tail 3 of a big file", "read_text_file", {"path": f"{d}/lines.txt", "tail": 3}, "same"),
        ("tail 1 (the empty piece after the last newline)", "read_text_file", {"path": f"{d}/lines.txt", "tail": 1}, "same"),
        ("tail 300 (several 1 KiB chunks)", "read_text_file", {"path": f"{d}/lines.txt", "tail": 300}, "same"),
        ("head 0 is no head", "read_text_file", {"path": f"{d}/noeol.txt", "head": 0}, "same"),
        ("head -1", "read_text_file", {"path": f"{d}/lines.txt", "head": -1}, "same"),
        ("tail -2", "read_text_file", {"path": f"{d}/lines.txt", "tail": -2}, "same"),
        ("head 2.5", "read_text_file", {"path": f"{d}/lines.txt", "head": 2.5}, "same"),
        ("tail 2.5", "read_text_file", {"path": f"{d}/lines.txt", "tail": 2.5}, "same"),
        ("tail 0.5 (slice(-0) keeps the whole chunk)", "read_text_file", {"path": f"{d}/lines.txt", "tail": 0.5}, "same"),
        ("head beyond the end", "read_text_file", {"path": f"{d}/noeol.txt", "head": 100000}, "same"),
        ("tail beyond the start", "read_text_file", {"path": f"{d}/noeol.txt", "tail": 100000}, "same"),
        ("head and tail together", "read_text_file", {"path": f"{d}/hello.txt", "head": 1, "tail": 1}, "same"),
        ("head 2 without a final newline", "read_text_file", {"path": f"{d}/noeol.txt", "head": 2}, "same"),
        ("tail 2 without a final newline", "read_text_file", {"path": f"{d}/noeol.txt", "tail": 2}, "same"),
        ("head keeps CR", "read_text_file", {"path": f"{d}/crlf.txt", "head": 2}, "same"),
        ("tail drops CR", "read_text_file", {"path": f"{d}/crlf.txt", "tail": 2}, "same"),
        ("head 1 across a chunk boundary in a 2-byte character", "read_text_file", {"path": f"{d}/multibyte.txt", "head": 2}, "same"),
        ("tail 1 of multibyte text", "read_text_file", {"path": f"{d}/multibyte.txt", "tail": 2}, "same"),
        ("head of an empty file", "read_text_file", {"path": f"{d}/empty.txt", "head": 5}, "same"),
        ("tail of an empty file", "read_text_file", {"path": f"{d}/empty.txt", "tail": 5}, "same"),
        ("a directory", "read_text_file", {"path": f"{d}/sub"}, "same"),
        ("a missing file", "read_text_file", {"path": f"{d}/missing.txt"}, "same"),
        ("below a file", "read_text_file", {"path": f"{d}/hello.txt/x"}, "same"),
        ("a sibling with the grant's name as prefix", "read_text_file", {"path": f"{fx}/data_evil/secret.txt"}, "same"),
        ("dot-dot out of the grant", "read_text_file", {"path": f"{d}/../outside/secret.txt"}, "same"),
        ("relative dot-dot out of the grant", "read_text_file", {"path": "../outside/secret.txt"}, "same"),
        ("absolute path elsewhere", "read_text_file", {"path": "/etc/passwd"}, "same"),
        ("symlink inside to inside", "read_text_file", {"path": f"{d}/link_in"}, "same"),
        ("absolute symlink inside to inside", "read_text_file", {"path": f"{d}/link_abs_in"}, "absolute link"),
        ("absolute symlink inside to outside", "read_text_file", {"path": f"{d}/link_abs_out"}, "absolute link"),
        ("through an absolute directory symlink to outside", "read_text_file", {"path": f"{d}/link_abs_dir_out/secret.txt"}, "absolute link"),
        ("symlink inside to outside", "read_text_file", {"path": f"{d}/link_out"}, "same"),
        ("symlink in a subfolder to outside", "read_text_file", {"path": f"{d}/sub/link_rel_out"}, "same"),
        ("through a directory symlink to outside", "read_text_file", {"path": f"{d}/link_dir_out/secret.txt"}, "same"),
        ("dangling symlink", "read_text_file", {"path": f"{d}/dangling"}, "same"),
        ("Windows drive path", "read_text_file", {"path": "C:\\Users\\x.txt"}, "same"),
        ("head as a string", "read_text_file", {"path": f"{d}/hello.txt", "head": "2"}, "schema"),
        ("no path", "read_text_file", {}, "schema"),
        ("a decomposed name asked composed", "read_text_file", {"path": f"{d}/forms/caf\u00e9.txt"}, "same"),
        ("two names equal to the one asked after NFC", "read_text_file", {"path": f"{d}/forms/\u00c5.txt"}, "same"),
        ("write to a decomposed name asked composed", "write_file", {"path": f"{d}/forms/caf\u00e9.txt", "content": "rewritten\n"}, "same"),
        ("the forms folder after the write", "list_directory", {"path": f"{d}/forms"}, "same"),
        # read_media_file
        ("PNG image", "read_media_file", {"path": f"{d}/image.png"}, "same"),
        ("upper-case extension", "read_media_file", {"path": f"{d}/UPPER.PNG"}, "same"),
        ("MP3 audio", "read_media_file", {"path": f"{d}/sound.mp3"}, "same"),
        ("PDF as an embedded resource", "read_media_file", {"path": f"{d}/doc.pdf"}, "same"),
        ("resource URI percent-encoded", "read_media_file", {"path": f"{d}/my doc é#1.bin"}, "same"),
        ("empty file as a resource", "read_media_file", {"path": f"{d}/empty.txt"}, "same"),
        ("missing media file", "read_media_file", {"path": f"{d}/missing.png"}, "same"),
        ("media through a symlink out", "read_media_file", {"path": f"{d}/link_out"}, "same"),
        # read_multiple_files
        ("several files, some bad", "read_multiple_files", {"paths": [f"{d}/hello.txt", f"{d}/empty.txt", f"{d}/missing.txt", f"{d}/link_out", "sub/a.txt", f"{fx}/data_evil/secret.txt", f"{d}/sub"]}, "same"),
        ("one file", "read_multiple_files", {"paths": [f"{d}/ünïcödé 文件.txt"]}, "same"),
        ("no files", "read_multiple_files", {"paths": []}, "schema"),
        # write_file
        ("write a new file", "write_file", {"path": f"{d}/new.txt", "content": "fresh\ncontent"}, "same"),
        ("read it back", "read_text_file", {"path": f"{d}/new.txt"}, "same"),
        ("overwrite a file", "write_file", {"path": f"{d}/overwrite.txt", "content": "new content\n"}, "same"),
        ("read the overwrite back", "read_text_file", {"path": f"{d}/overwrite.txt"}, "same"),
        ("write an empty file with a unicode name", "write_file", {"path": f"{d}/nouveau é 🎉.txt", "content": ""}, "same"),
        ("write unicode content, relative path", "write_file", {"path": "sub/unicode.txt", "content": "日本語 ✓ \u0000 nul\n"}, "same"),
        ("read unicode content back", "read_text_file", {"path": f"{d}/sub/unicode.txt"}, "same"),
        ("write into a missing folder", "write_file", {"path": f"{d}/nofolder/x.txt", "content": "x"}, "same"),
        ("write outside", "write_file", {"path": f"{fx}/outside/new.txt", "content": "x"}, "same"),
        ("write through a symlink out", "write_file", {"path": f"{d}/link_out", "content": "x"}, "same"),
        ("write without content", "write_file", {"path": f"{d}/x.txt"}, "schema"),
        # edit_file
        ("edit one line", "edit_file", {"path": f"{d}/code.py", "edits": [{"oldText": "print(message)", "newText": "print(message.upper())"}]}, "same"),
        ("the edit was written", "read_text_file", {"path": f"{d}/code.py"}, "same"),
        ("dry run", "edit_file", {"path": f"{d}/code.py", "edits": [{"oldText": "def main():", "newText": "def run():"}], "dryRun": True}, "same"),
        ("the dry run wrote nothing", "read_text_file", {"path": f"{d}/code.py"}, "same"),
        ("several edits in order", "edit_file", {"path": f"{d}/code.py", "edits": [{"oldText": "greet('world')", "newText": "greet('there')"}, {"oldText": "def main():", "newText": "def main() -> None:\n    \"\"\"Entry.\"\"\""}]}, "same"),
        ("an edit that does not match", "edit_file", {"path": f"{d}/code.py", "edits": [{"oldText": "not in the file", "newText": "x"}]}, "same"),
        ("a later edit fails: nothing written", "edit_file", {"path": f"{d}/code.py", "edits": [{"oldText": "def greet", "newText": "def hello"}, {"oldText": "absent", "newText": "x"}]}, "same"),
        ("whitespace-flexible match keeps indentation", "edit_file", {"path": f"{d}/code.py", "edits": [{"oldText": "message = 'hello ' + name\n  print(message.upper())", "newText": "message = 'hi ' + name\n      print(message)"}]}, "same"),
        ("after the flexible edit", "read_text_file", {"path": f"{d}/code.py"}, "same"),
        ("no edits", "edit_file", {"path": f"{d}/code.py", "edits": []}, "same"),
        ("edit in a file without a final newline", "edit_file", {"path": f"{d}/noeol.txt", "edits": [{"oldText": "c", "newText": "C"}]}, "same"),
        ("edit a CRLF file", "edit_file", {"path": f"{d}/crlf.txt", "edits": [{"oldText": "two\r\n", "newText": "2\n"}]}, "same"),
        ("ambiguous diff: repeated lines", "edit_file", {"path": f"{d}/repeats.txt", "edits": [{"oldText": "b\na\nb\nc", "newText": "c\nb"}], "dryRun": True}, "same"),
        ("ambiguous diff: swap two lines", "edit_file", {"path": f"{d}/repeats.txt", "edits": [{"oldText": "a\nb\na\nb\na\nb\nc\n", "newText": "b\na\nb\na\nc\nb\n"}], "dryRun": True}, "same"),
        ("two hunks far apart", "edit_file", {"path": f"{d}/long.txt", "edits": [{"oldText": "row 2\n", "newText": "ROW 2\n"}, {"oldText": "row 35\n", "newText": ""}]}, "same"),
        ("two changes close enough for one hunk", "edit_file", {"path": f"{d}/long.txt", "edits": [{"oldText": "row 10\n", "newText": "row ten\nrow 10.5\n"}, {"oldText": "row 17\n", "newText": "row seventeen\n"}]}, "same"),
        ("insert at the start, append at the end", "edit_file", {"path": f"{d}/long.txt", "edits": [{"oldText": "row 1\n", "newText": "header\nrow 1\n"}, {"oldText": "row 40\n", "newText": "row 40\nfooter"}]}, "same"),
        ("empty oldText inserts at the start", "edit_file", {"path": f"{d}/hello.txt", "edits": [{"oldText": "", "newText": "top\n"}], "dryRun": True}, "same"),
        ("content with a fence of three backticks", "edit_file", {"path": f"{d}/fences.md", "edits": [{"oldText": "code", "newText": "more code"}]}, "same"),
        ("edit a missing file", "edit_file", {"path": f"{d}/missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}, "same"),
        ("edit through a symlink out", "edit_file", {"path": f"{d}/link_out", "edits": [{"oldText": "TOP", "newText": "x"}]}, "same"),
        ("edit without oldText", "edit_file", {"path": f"{d}/code.py", "edits": [{"newText": "x"}]}, "schema"),
        # create_directory
        ("create nested folders", "create_directory", {"path": f"{d}/made/nested/deep"}, "same"),
        ("create an existing folder", "create_directory", {"path": f"{d}/made"}, "same"),
        ("create where a file is", "create_directory", {"path": f"{d}/hello.txt"}, "same"),
        ("create below a file", "create_directory", {"path": f"{d}/hello.txt/sub"}, "same"),
        ("create outside", "create_directory", {"path": f"{fx}/data_evil/new"}, "same"),
        # listings
        ("list the grant", "list_directory", {"path": d}, "same"),
        ("list an empty folder", "list_directory", {"path": f"{d}/emptydir"}, "same"),
        ("list a file", "list_directory", {"path": f"{d}/hello.txt"}, "same"),
        ("list a missing folder", "list_directory", {"path": f"{d}/nothing"}, "same"),
        ("list through a symlink out", "list_directory", {"path": f"{d}/link_dir_out"}, "same"),
        ("sizes by name", "list_directory_with_sizes", {"path": f"{d}/sizes"}, "same"),
        ("sizes by size", "list_directory_with_sizes", {"path": f"{d}/sizes", "sortBy": "size"}, "same"),
        ("sizes by name, said", "list_directory_with_sizes", {"path": f"{d}/sub/deep", "sortBy": "name"}, "same"),
        ("sizes of an empty folder", "list_directory_with_sizes", {"path": f"{d}/emptydir"}, "same"),
        ("sizes of the grant (symlinks in, out, dangling)", "list_directory_with_sizes", {"path": d}, "link sizes"),
        ("sizes by size with symlinks out", "list_directory_with_sizes", {"path": d, "sortBy": "size"}, "link sizes"),
        ("sizes sorted by date", "list_directory_with_sizes", {"path": d, "sortBy": "date"}, "schema"),
        ("tree of a folder", "directory_tree", {"path": f"{d}/sub"}, "same"),
        ("tree of an empty folder", "directory_tree", {"path": f"{d}/emptydir"}, "same"),
        ("tree with excludes", "directory_tree", {"path": d, "excludePatterns": ["node_modules", "*.md", "sizes", "**/deep"]}, "same"),
        ("tree with a relative path", "directory_tree", {"path": "sub", "excludePatterns": ["deep/*.py"]}, "same"),
        ("tree of a file", "directory_tree", {"path": f"{d}/hello.txt"}, "same"),
        # search_files
        ("search *.txt (this folder only)", "search_files", {"path": d, "pattern": "*.txt"}, "same"),
        ("search **/*.txt", "search_files", {"path": d, "pattern": "**/*.txt"}, "same"),
        ("search with braces", "search_files", {"path": d, "pattern": "**/*.{md,py}"}, "same"),
        ("search with excludes", "search_files", {"path": d, "pattern": "**/*.txt", "excludePatterns": ["sizes/**", "sub/deep"]}, "same"),
        ("search a class", "search_files", {"path": f"{d}/sub", "pattern": "[ab].*"}, "same"),
        ("search dotfiles", "search_files", {"path": d, "pattern": "**/.hidden"}, "same"),
        ("search a folder name", "search_files", {"path": d, "pattern": "sub/deep"}, "same"),
        ("search with no match", "search_files", {"path": d, "pattern": "*.nothing"}, "same"),
        ("search with ?", "search_files", {"path": f"{d}/sizes", "pattern": "?"}, "same"),
        ("search outside", "search_files", {"path": f"{fx}/outside", "pattern": "*"}, "same"),
        # get_file_info
        ("info of a file", "get_file_info", {"path": f"{d}/hello.txt"}, "info"),
        ("info of a folder", "get_file_info", {"path": f"{d}/sub/deep"}, "info"),
        ("info of a missing file", "get_file_info", {"path": f"{d}/missing.txt"}, "same"),
        ("info through a symlink out", "get_file_info", {"path": f"{d}/link_out"}, "same"),
        # move_file
        ("move a file", "move_file", {"source": f"{d}/move_src.txt", "destination": f"{d}/moved.txt"}, "same"),
        ("the moved file", "read_text_file", {"path": f"{d}/moved.txt"}, "same"),
        ("move onto an existing file", "move_file", {"source": f"{d}/moved.txt", "destination": f"{d}/move_dst.txt"}, "same"),
        ("move a missing file", "move_file", {"source": f"{d}/move_src.txt", "destination": f"{d}/elsewhere.txt"}, "same"),
        ("move outside", "move_file", {"source": f"{d}/moved.txt", "destination": f"{fx}/outside/moved.txt"}, "same"),
        ("move a folder across grants", "move_file", {"source": f"{d}/movedir", "destination": f"{fx}/data2/movedir"}, "same"),
        ("the moved folder", "list_directory", {"path": f"{fx}/data2/movedir"}, "same"),
        ("move onto a dangling symlink", "move_file", {"source": f"{d}/moved.txt", "destination": f"{d}/dangling"}, "same"),
        ("the grant at the end", "directory_tree", {"path": d, "excludePatterns": ["sizes", "node_modules"]}, "same"),
    ]


def dump(result):
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {key: dumped.get(key) for key in ("content", "structuredContent", "isError")}


def tool_entries(tools):
    out = {}
    for tool in tools.tools:
        entry = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        out[tool.name] = {key: entry.get(key) for key in ("name", "title", "inputSchema", "outputSchema", "annotations")}
    return out


def original_params(node, entry, fx):
    env = dict(os.environ, TZ="UTC")
    return StdioServerParameters(command=node, args=[entry, f"{fx}/data", f"{fx}/data2"], env=env)


def corral_params(corral, wasm, workdir, fx):
    """Corral serving the plugin with data and data2 granted read-write,
    each under its host path. Results
    may hold a 2 MiB file twice (text and structured content): the output
    limit is raised as the docs' manifest does."""
    plugins = f"{workdir}/plugins"
    os.makedirs(plugins, exist_ok=True)
    shutil.copy(wasm, f"{plugins}/filesystem.wasm")
    with open(f"{plugins}/filesystem.toml", "w") as f:
        f.write('[limits]\noutput = "64 MiB"\n\n')
        for folder in ("data", "data2"):
            f.write(f'[[dirs]]\nhost = "{fx}/{folder}"\nguest = "{fx}/{folder}"\nmode = "rw"\n\n')
    return StdioServerParameters(command=corral, args=["serve", plugins], env=dict(os.environ))


async def run(params, calls):
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        tools = tool_entries(await client.list_tools())
        results = []
        for _label, tool, arguments, _expect in calls:
            results.append(dump(await client.call_tool(tool, arguments)))
        return tools, results


def short(value, limit=1500):
    return common_short(value, limit)


DATE = r"[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT\+0000 \(Coordinated Universal Time\)"
PERMISSIONS_CORRAL = "permissions: unknown (WASI does not expose permission bits)"


def info_lines(result, permissions):
    """get_file_info's text with the ALLOWED 2 lines checked and taken out;
    None when they are malformed, or the text is not the one block."""
    if result["isError"] or len(result["content"]) != 1:
        return None
    text = result["content"][0]["text"]
    if result["structuredContent"] != {"content": text}:
        return None
    kept = []
    for line in text.split("\n"):
        key = line.split(":", 1)[0]
        if key in ("created", "accessed"):
            if not re.fullmatch(f"{key}: {DATE}", line):
                return None
        elif key == "permissions":
            if not re.fullmatch(permissions, line):
                return None
        else:
            kept.append(line)
    return kept


def unmirrored(original, corral):
    """Corral's result without the JSON text block the host adds to a
    structured result that has no text (ALLOWED 4): where the original's
    result has structuredContent and no text block, Corral's must have that
    block, last, holding exactly the structured content. Any other result
    is returned as it is, to be compared exactly."""
    structured = corral["structuredContent"]
    has_text = any(item.get("type") == "text" for item in original["content"] or [])
    if structured is None or original["structuredContent"] is None or has_text:
        return corral
    content = corral["content"]
    if not content or content[-1].get("type") != "text":
        return dict(corral, content=content + [{"missing": "the JSON mirror of structuredContent"}])
    try:
        mirrored = json.loads(content[-1]["text"])
    except ValueError:
        mirrored = None
    if mirrored != structured:
        return dict(corral, content=content + [{"missing": "the JSON mirror of structuredContent"}])
    return dict(corral, content=content[:-1])


def absolute_link_refusal(link, dirs):
    return (
        f"Access denied - symlink target outside allowed directories: {link} points to an absolute path, "
        f"which the sandbox does not follow (only relative symlinks that stay within {dirs} are followed)"
    )


def compare(expect, original, corral, tool, arguments=None, fx=None):
    corral = unmirrored(original, corral)
    if expect == "absolute link":
        path = arguments["path"]
        link = path if os.path.basename(path).startswith("link_") else os.path.dirname(path)
        wanted = {
            "content": [{"type": "text", "text": absolute_link_refusal(link, f"{fx}/data, {fx}/data2")}],
            "structuredContent": None,
            "isError": True,
        }
        return [] if corral == wanted else [f"corral should refuse the absolute symlink:\n  corral:   {short(corral)}\n  wanted:   {short(wanted)}"]
    if expect == "link sizes":
        return link_sizes(original, corral)
    if expect == "same":
        return [] if original == corral else [f"results differ:\n  original: {short(original)}\n  corral:   {short(corral)}"]
    problems = []
    if expect == "schema":
        problems += schema_refusal_problems(original, corral, tool, limit=1500)
    elif expect == "info":
        theirs = info_lines(original, r"permissions: [0-7]{3}")
        ours = info_lines(corral, re.escape(PERMISSIONS_CORRAL))
        if theirs is None or ours is None or theirs != ours:
            problems.append(f"file info differs:\n  original: {short(original)}\n  corral:   {short(corral)}")
    return problems


# The fixture's symlinks that the sandbox does not follow (ALLOWED 6).
UNFOLLOWED = {"link_out", "link_dir_out", "link_abs_out", "link_abs_dir_out", "link_abs_in"}


def link_sizes(original, corral):
    """ALLOWED 6: list_directory_with_sizes, the same lines but for the
    unfollowed symlinks, which Corral lists at 0 B, and the combined size
    (the sum of the listed sizes). Sorted by size, the unfollowed links move
    among the 0 B entries: then the lines are compared as sets."""
    theirs = original["content"][0]["text"].split("\n") if not original["isError"] else None
    ours = corral["content"][0]["text"].split("\n") if not corral["isError"] else None
    if theirs is None or ours is None or original["structuredContent"] != {"content": original["content"][0]["text"]} \
            or corral["structuredContent"] != {"content": corral["content"][0]["text"]} \
            or len(original["content"]) != 1 or len(corral["content"]) != 1:
        return [f"both should list:\n  original: {short(original)}\n  corral:   {short(corral)}"]
    def expected(line):
        name = line[len("[FILE] "):].rstrip()
        name = name.rsplit("  ", 1)[0].rstrip() if "  " in name else name
        if line.startswith("[FILE] ") and name in UNFOLLOWED:
            return f"[FILE] {name.ljust(30)} {'0 B'.rjust(10)}"
        return line
    wanted = [expected(line) for line in theirs if not line.startswith("Combined size: ")]
    got = [line for line in ours if not line.startswith("Combined size: ")]
    same = wanted == got or (sorted(wanted) == sorted(got))
    if not same or not any(line.startswith("Combined size: ") for line in ours):
        return [f"listings differ beyond the unfollowed symlinks:\n  wanted: {short(wanted)}\n  corral: {short(got)}"]
    return []


def compare_tools(original, corral):
    problems = []
    if list(original) != list(corral):
        return [f"tool lists differ: {list(original)} vs {list(corral)}"]
    for name, theirs in original.items():
        ours = dict(corral[name])
        annotations = dict(ours.get("annotations") or {})
        if annotations.pop("title", None) != ours.get("title"):
            problems.append(f"{name}: annotations.title is not the title")
        ours["annotations"] = annotations
        if theirs != ours:
            problems.append(f"{name} differs:\n  original: {short(theirs, 4000)}\n  corral:   {short(ours, 4000)}")
    return problems


async def main_compare(node, entry, corral, wasm, workdir):
    fx = f"{workdir}/fx"
    make_fixture(fx)
    calls = sessions(fx)
    original_tools, original_results = await run(original_params(node, entry, fx), calls)
    make_fixture(fx)
    corral_tools, corral_results = await run(corral_params(corral, wasm, workdir, fx), calls)

    failures = 0
    problems = compare_tools(original_tools, corral_tools)
    if problems:
        failures += 1
        print("FAIL tools/list")
        for problem in problems:
            print(f"     {problem}")
    else:
        print(f"ok   tools/list: {len(original_tools)} tools, names, titles, input and output schemas, annotations")
    for (label, tool, _arguments, expect), theirs, ours in zip(calls, original_results, corral_results):
        problems = compare(expect, theirs, ours, tool, _arguments, fx)
        if problems:
            failures += 1
            print(f"FAIL {tool}: {label} ({expect})")
            for problem in problems:
                print(f"     {problem}")
        else:
            print(f"ok   {tool}: {label} ({expect}, isError={ours['isError']})")
    used = {tool for _label, tool, _arguments, _expect in calls}
    missing = set(original_tools) - used
    if missing:
        failures += 1
        print(f"FAIL tools never called: {sorted(missing)}")
    print(f"{len(calls)} calls compared, {failures} failures")
    return failures


# --- security ---------------------------------------------------------------

RACE_ROUNDS = 150


def leaked(result):
    return SECRET.strip() in json.dumps(result, ensure_ascii=False)


class Swapper:
    """Keeps swapping data/race between a real folder (holding an
    innocent secret.txt) and a symlink to the outside folder, as fast as it
    can, while the server reads and writes through it."""

    def __init__(self, data, outside):
        self.race, self.parked, self.outside = f"{data}/race", f"{data}/race_parked", outside
        os.makedirs(self.race)
        with open(f"{self.race}/secret.txt", "w") as f:
            f.write("inside\n")
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stop.is_set():
            try:
                os.rename(self.race, self.parked)
                os.symlink(self.outside, self.race)
                time.sleep(0.0005)
                os.unlink(self.race)
                os.rename(self.parked, self.race)
                time.sleep(0.0005)
            except OSError:
                pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def escapes(fx):
    """(name, read calls, write calls with the outside file each would make)."""
    d, out = f"{fx}/data", f"{fx}/outside"
    return [
        ("1 symlink inside pointing outside",
         [("read_text_file", {"path": f"{d}/link_out"}), ("read_text_file", {"path": f"{d}/link_dir_out/secret.txt"}),
          ("read_text_file", {"path": f"{d}/link_abs_out"}), ("read_text_file", {"path": f"{d}/link_abs_dir_out/secret.txt"}),
          ("list_directory", {"path": f"{d}/link_dir_out"}), ("search_files", {"path": d, "pattern": "**/secret.txt"})],
         [("write_file", {"path": f"{d}/link_dir_out/w1.txt", "content": "pwned"}, f"{out}/w1.txt"),
          ("write_file", {"path": f"{d}/link_abs_dir_out/w1b.txt", "content": "pwned"}, f"{out}/w1b.txt"),
          ("write_file", {"path": f"{d}/link_out", "content": "pwned"}, f"{out}/secret.txt"),
          ("edit_file", {"path": f"{d}/link_abs_out", "edits": [{"oldText": "TOP", "newText": "pwned"}]}, f"{out}/secret.txt")]),
        ("2 sibling data_evil with the grant's prefix",
         [("read_text_file", {"path": f"{fx}/data_evil/secret.txt"})],
         [("write_file", {"path": f"{fx}/data_evil/w2.txt", "content": "pwned"}, f"{fx}/data_evil/w2.txt")]),
        ("3 dot-dot traversal",
         [("read_text_file", {"path": f"{d}/../outside/secret.txt"}), ("read_text_file", {"path": "../outside/secret.txt"})],
         [("write_file", {"path": f"{d}/../outside/w3.txt", "content": "pwned"}, f"{out}/w3.txt"),
          ("create_directory", {"path": f"{d}/sub/../../outside/d3"}, f"{out}/d3")]),
        ("4 absolute host path outside the grants",
         [("read_text_file", {"path": f"{out}/secret.txt"}), ("read_text_file", {"path": "/etc/hostname"})],
         [("write_file", {"path": f"{out}/w4.txt", "content": "pwned"}, f"{out}/w4.txt"),
          ("move_file", {"source": f"{d}/hello.txt", "destination": f"{out}/moved4.txt"}, f"{out}/moved4.txt")]),
    ]


def outside_intact(fx):
    with open(f"{fx}/outside/secret.txt") as f:
        return f.read() == SECRET


async def security_of(params, fx):
    """What one server does with each escape: {name: (read verdict, write verdict)}."""
    verdicts = {}
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        for name, reads, writes in escapes(fx):
            read_leaks = [tool for tool, args in reads if leaked(dump(await client.call_tool(tool, args)))]
            refusals = []
            for tool, args, made in writes:
                result = dump(await client.call_tool(tool, args))
                refusals.append(result["isError"])
            written = [made for _tool, _args, made in writes if os.path.exists(made) and made != f"{fx}/outside/secret.txt"]
            if not outside_intact(fx):
                written.append("outside/secret.txt overwritten")
            verdicts[name] = (
                f"read the outside file ({', '.join(read_leaks)})" if read_leaks else "refused",
                f"wrote outside ({', '.join(os.path.basename(w) for w in written)})" if written else "refused",
            )
        # 5: a rename racing the check.
        read_leaks, inside, refusals = 0, 0, {}
        with Swapper(f"{fx}/data", f"{fx}/outside"):
            for _ in range(RACE_ROUNDS):
                result = dump(await client.call_tool("read_text_file", {"path": f"{fx}/data/race/secret.txt"}))
                if leaked(result):
                    read_leaks += 1
                elif result["isError"]:
                    text = result["content"][0]["text"]
                    refusals[text] = refusals.get(text, 0) + 1
                else:
                    inside += 1
            for i in range(RACE_ROUNDS):
                await client.call_tool("write_file", {"path": f"{fx}/data/race/w5-{i}.txt", "content": "pwned"})
        written = [name for name in os.listdir(f"{fx}/outside") if name.startswith("w5-")]
        kept = len([name for name in os.listdir(f"{fx}/data/race") if name.startswith("w5-")])
        verdicts["5 rename racing the check"] = (
            f"read the outside file ({read_leaks}/{RACE_ROUNDS} calls)" if read_leaks else f"refused ({inside} read inside)",
            f"wrote outside ({len(written)}/{RACE_ROUNDS} files)" if written else f"refused ({kept} written inside)",
        )
        verdicts["race refusals"] = refusals
    return verdicts


async def read_only_refusals(params, fx):
    """Corral only (the original has no read-only directories): every
    writing tool is refused in a folder granted read-only, in words, and
    the folder is left as it was. Returns the failures."""
    ro = f"{fx}/data2"
    before = sorted(os.listdir(ro))
    calls = [
        ("write_file", {"path": f"{ro}/new.txt", "content": "x"}),
        ("write_file", {"path": f"{ro}/other.txt", "content": "x"}),
        ("edit_file", {"path": f"{ro}/other.txt", "edits": [{"oldText": "second", "newText": "x"}]}),
        ("create_directory", {"path": f"{ro}/made"}),
        ("move_file", {"source": f"{ro}/other.txt", "destination": f"{fx}/data/stolen.txt"}),
        ("move_file", {"source": f"{fx}/data/hello.txt", "destination": f"{ro}/hello.txt"}),
    ]
    failures = 0
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        dry = dump(await client.call_tool("edit_file", {"path": f"{ro}/other.txt", "edits": [{"oldText": "second", "newText": "x"}], "dryRun": True}))
        if dry["isError"]:
            failures += 1
            print(f"corral: a dry run in a read-only folder should answer its diff: {short(dry)}")
        for tool, args in calls:
            result = dump(await client.call_tool(tool, args))
            text = result["content"][0]["text"] if result["content"] else ""
            if not (result["isError"] and text.startswith("Access denied - read-only directory: ")):
                failures += 1
                print(f"corral: {tool} in a read-only folder was not refused in words: {short(result)}")
    with open(f"{ro}/other.txt") as f:
        intact = f.read() == "second grant\n"
    if sorted(os.listdir(ro)) != before or not intact:
        failures += 1
        print("corral: the read-only folder changed")
    print(f"read-only grant: corral refused {len(calls)} writes in words" if not failures else "read-only grant: FAILED")
    return failures


async def main_security(node, entry, corral, wasm, workdir):
    fx = f"{workdir}/fx"
    make_fixture(fx)
    theirs = await security_of(original_params(node, entry, fx), fx)
    make_fixture(fx)
    ours = await security_of(corral_params(corral, wasm, workdir, fx), fx)
    width = max(len(name) for name in theirs) + 2
    print(f"{'escape':<{width}} | {'original: read':<34} | {'original: write':<30} | {'corral: read':<20} | corral: write")
    failures = 0
    race_words = {"original": theirs.pop("race refusals"), "corral": ours.pop("race refusals")}
    for name in theirs:
        (their_read, their_write), (our_read, our_write) = theirs[name], ours[name]
        print(f"{name:<{width}} | {their_read:<34} | {their_write:<30} | {our_read:<20} | {our_write}")
        if not our_read.startswith("refused") or not our_write.startswith("refused"):
            failures += 1
    for server, words in race_words.items():
        for text, count in sorted(words.items(), key=lambda item: -item[1])[:4]:
            print(f"{server} refused a racing read {count} times: {text}")
    print(f"{len(theirs)} escapes tried on both, {failures} not refused by corral")
    make_fixture(fx)
    plugins = f"{workdir}/plugins"
    params = corral_params(corral, wasm, workdir, fx)
    with open(f"{plugins}/filesystem.toml") as f:
        manifest = f.read()
    with open(f"{plugins}/filesystem.toml", "w") as f:
        f.write(manifest.replace(f'guest = "{fx}/data2"\nmode = "rw"', f'guest = "{fx}/data2"\nmode = "ro"'))
    failures += await read_only_refusals(params, fx)
    return failures


if __name__ == "__main__":
    mode, *rest = sys.argv[1:]
    main = {"compare": main_compare, "security": main_security}[mode]
    sys.exit(1 if asyncio.run(main(*rest)) else 0)
