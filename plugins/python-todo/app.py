"""Corral plugin `python-todo`: a to-do list that outlives the conversation.
The model adds items, lists what is left, ticks items off and clears the
finished ones; the list stays in the plugin's own key-value store between
calls and across server restarts.

It shows a Python plugin keeping state through the standard
`wasi:keyvalue@0.2.0-draft` interfaces: `store` (get, set, paged list-keys),
`atomics` (increment, for unique ids) and `batch` (get-many, delete-many).
The store exists only with the grant in python-todo.toml beside the
component:

    [state]
    buckets = ["default"]

plugins/build-python sees that [state] table and builds this project against
the world `plugin-with-state` (wit/plugin-with-state.wit), which adds the
wasi:keyvalue imports to `plugin`. The list logic is in todo.py; this module
speaks the plugin contract and adapts the bindings to todo.Store.
"""

import json
import traceback
from typing import Iterator, Optional

import todo
from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool, ToolAnnotations
from wit_world.imports import atomics, batch, host, store
from wit_world.imports.types import Content_Text, LogLevel, TextContent

# The bucket python-todo.toml grants; opening any other is refused by the host.
BUCKET = "default"
# The host answers get-many and delete-many for at most 1,000 keys at once.
BATCH = 1000


class StoreError(Exception):
    """The store refused an operation (the quota is full, the grant is
    missing): the host's message is meant to be shown."""


def refusal(err: Err) -> StoreError:
    error = err.value
    if isinstance(error, store.Error_Other):
        return StoreError(f"the store refused: {error.value}")
    if isinstance(error, store.Error_AccessDenied):
        return StoreError(f"the store refused access to bucket `{BUCKET}`; python-todo.toml must grant it")
    return StoreError("the store is missing")


class Bucket:
    """todo.Store on a wasi:keyvalue bucket. Every binding call raises
    componentize_py_types.Err when the host refuses; that becomes a
    StoreError here."""

    def __init__(self, bucket: store.Bucket):
        self.bucket = bucket

    @classmethod
    def open(cls) -> "Bucket":
        try:
            return cls(store.open(BUCKET))
        except Err as err:
            raise refusal(err) from None

    def get(self, key: str) -> Optional[bytes]:
        try:
            return self.bucket.get(key)
        except Err as err:
            raise refusal(err) from None

    def set(self, key: str, value: bytes) -> None:
        try:
            self.bucket.set(key, value)
        except Err as err:
            raise refusal(err) from None

    def keys(self) -> Iterator[str]:
        # list-keys answers a page at a time; the cursor is None after the
        # last page.
        cursor = None
        while True:
            try:
                page = self.bucket.list_keys(cursor)
            except Err as err:
                raise refusal(err) from None
            yield from page.keys
            cursor = page.cursor
            if cursor is None:
                return

    def get_many(self, keys: list[str]) -> list[Optional[bytes]]:
        values: list[Optional[bytes]] = []
        for start in range(0, len(keys), BATCH):
            try:
                found = batch.get_many(self.bucket, keys[start:start + BATCH])
            except Err as err:
                raise refusal(err) from None
            # Each answer is (key, value), or None for a key that is gone
            # (deleted by another call since it was listed).
            values.extend(None if pair is None else pair[1] for pair in found)
        return values

    def delete_many(self, keys: list[str]) -> None:
        for start in range(0, len(keys), BATCH):
            try:
                batch.delete_many(self.bucket, keys[start:start + BATCH])
            except Err as err:
                raise refusal(err) from None

    def increment(self, key: str, delta: int) -> int:
        try:
            return atomics.increment(self.bucket, key, delta)
        except Err as err:
            raise refusal(err) from None


def obj(properties: dict, required: list) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


ID = {"type": "integer", "minimum": 1, "description": "The item's id, as todo_list shows it (#3 is 3)."}
ITEM = obj(
    {
        "id": {"type": "integer"},
        "text": {"type": "string"},
        "priority": {"type": "string", "enum": list(todo.PRIORITIES)},
        "done": {"type": "boolean"},
    },
    ["id", "text", "priority", "done"],
)


def tool(name, title, description, schema, output, read_only=False, destructive=False, idempotent=False) -> Tool:
    hints = ToolAnnotations(title=title, read_only_hint=read_only, destructive_hint=destructive,
                            idempotent_hint=idempotent, open_world_hint=False)
    return Tool(name=name, title=title, description=description, input_schema=json.dumps(schema),
                output_schema=json.dumps(output), annotations=hints, icons=[], task_support=None)


TOOLS = [
    tool("todo_add", "Add a to-do item",
         "Add an item to the user's to-do list, which is kept between conversations. Returns the item and its id.",
         obj({"text": {"type": "string", "minLength": 1, "maxLength": todo.MAX_TEXT, "description": "What is to be done."},
              "priority": {"type": "string", "enum": list(todo.PRIORITIES), "default": "normal"}},
             ["text"]),
         ITEM),
    tool("todo_list", "List to-do items",
         "List the open items of the user's to-do list (high priority first, then oldest first); "
         "with include_done, the finished ones too.",
         obj({"include_done": {"type": "boolean", "default": False}}, []),
         obj({"items": {"type": "array", "items": ITEM}}, ["items"]),
         read_only=True, idempotent=True),
    tool("todo_done", "Tick off a to-do item", "Mark an item as done. It stays listed with include_done until todo_clear_done.",
         obj({"id": ID}, ["id"]), ITEM, idempotent=True),
    tool("todo_remove", "Remove a to-do item", "Delete an item from the list, done or not.",
         obj({"id": ID}, ["id"]), ITEM, destructive=True),
    tool("todo_clear_done", "Clear finished items", "Delete every item marked done. Returns how many went.",
         obj({}, []), obj({"removed": {"type": "integer"}}, ["removed"]), destructive=True, idempotent=True),
]


def run(name: str, args: dict) -> tuple[str, dict]:
    """The text the model reads and the structured result, for one call."""
    bucket = Bucket.open()
    if name == "todo_add":
        item = todo.add(bucket, args["text"], args.get("priority", "normal"))
        return f"Added {todo.line(item)}", item
    if name == "todo_list":
        found = todo.items(bucket, args.get("include_done", False))
        return todo.listing(found), {"items": found}
    if name == "todo_done":
        item = todo.complete(bucket, args["id"])
        return f"Done: {todo.line(item)}", item
    if name == "todo_remove":
        item = todo.remove(bucket, args["id"])
        return f"Removed {todo.line(item)}", item
    if name == "todo_clear_done":
        removed = todo.clear_done(bucket)
        return f"Removed {removed} finished item{'' if removed == 1 else 's'}.", {"removed": removed}
    raise todo.TodoError(f"unknown tool {name}")


def text(value: str) -> list:
    return [Content_Text(TextContent(text=value, annotations=None))]


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        return TOOLS

    def call(self, name: str, arguments: str) -> CallResult:
        # The host has validated the arguments against the input schema.
        args = json.loads(arguments)
        try:
            shown, structured = run(name, args)
        except (todo.TodoError, StoreError) as err:
            return CallResult(content=text(str(err)), structured_content=None, is_error=True)
        except Exception:
            # A bug, not bad input: keep the traceback in the host log and
            # give the model a short explanation instead of trapping.
            host.log(LogLevel.ERROR, f"{name}: internal error\n{traceback.format_exc()}")
            return CallResult(content=text(f"internal error in {name}; see the server log"),
                              structured_content=None, is_error=True)
        return CallResult(content=text(shown), structured_content=json.dumps(structured), is_error=False)
