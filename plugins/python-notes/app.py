"""Corral plugin `python-notes`: notes as Markdown files in a directory the
manifest grants as /notes. It shows a Python plugin asking the user (plugin
contract 0.2.0, interface `client`): `delete_note` asks which note when the
model leaves the title out (a form whose choices are the existing notes),
and both `delete_note` and `write_note` (when it would replace a note) ask
for confirmation before the change, even when the model says
`confirmed: true`. Clients that cannot ask get a clear answer instead: pass
the title, and `confirmed: true` once the user agreed (counted only then).

Built with componentize-py against wit/ (world `plugin`) by
plugins/build-python. The note logic is in notes.py, the asking in ask.py;
this module only speaks the plugin contract.

    # python-notes.toml, beside python-notes.wasm
    [[dirs]]
    host = "/home/me/notes"
    guest = "/notes"
    mode = "rw"
"""

import json
import traceback

import notes
from ask import Asker, AskFailed
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool, ToolAnnotations
from wit_world.imports import host
from wit_world.imports.types import Content_Text, LogLevel, TextContent

ROOT = "/notes"

TITLE = {"type": "string", "pattern": notes.TITLE_PATTERN, "description": "The note's title (its file name without .md)."}
CONFIRMED = {
    "type": "boolean",
    "default": False,
    "description": "True only when the user already agreed in the conversation. Used only when the client "
                   "cannot ask the user; a client that can ask is always asked, whatever this says.",
}


def obj(properties: dict, required: list) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def annotations(title: str, read_only: bool, destructive: bool) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=read_only, destructive_hint=destructive,
                           idempotent_hint=read_only, open_world_hint=False)


def tool(name: str, title: str, description: str, schema: dict, read_only=False, destructive=False) -> Tool:
    return Tool(name=name, title=title, description=description, input_schema=json.dumps(schema),
                output_schema=None, annotations=annotations(title, read_only, destructive), icons=[],
                task_support=None)


TOOLS = [
    tool("list_notes", "List notes", "List the titles of the saved notes.", obj({}, []), read_only=True),
    tool("read_note", "Read a note", "Return the text of one note.", obj({"title": TITLE}, ["title"]), read_only=True),
    tool("write_note", "Write a note",
         "Save a note under a title. Replacing an existing note asks the user first (when the client cannot "
         "ask, it needs confirmed: true).",
         obj({"title": TITLE, "text": {"type": "string", "maxLength": notes.MAX_NOTE_BYTES}, "confirmed": CONFIRMED},
             ["title", "text"]),
         destructive=True),
    tool("delete_note", "Delete a note",
         "Delete a note. Without a title, asks the user which one; always asks the user for confirmation "
         "first (when the client cannot ask, it needs title and confirmed: true).",
         obj({"title": TITLE, "confirmed": CONFIRMED}, []),
         destructive=True),
]


def run(name: str, args: dict) -> str:
    asker = Asker()
    confirmed = args.get("confirmed", False)
    if name == "list_notes":
        return notes.list_notes(ROOT)
    if name == "read_note":
        return notes.read_note(ROOT, args["title"])
    if name == "write_note":
        return notes.write_note(ROOT, args["title"], args["text"], asker, confirmed)
    if name == "delete_note":
        return notes.delete_note(ROOT, args.get("title"), asker, confirmed)
    raise notes.NoteError(f"unknown tool {name!r}")


def text(message: str) -> list:
    return [Content_Text(TextContent(text=message, annotations=None))]


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        return TOOLS

    def call(self, name: str, arguments: str) -> CallResult:
        args = json.loads(arguments)
        try:
            answer = run(name, args)
        except (notes.NoteError, AskFailed) as err:
            return CallResult(content=text(str(err)), structured_content=None, is_error=True)
        except Exception:
            host.log(LogLevel.ERROR, f"{name}: internal error\n{traceback.format_exc()}")
            return CallResult(content=text(f"internal error in {name}; see the server log"),
                              structured_content=None, is_error=True)
        return CallResult(content=text(answer), structured_content=None, is_error=False)
