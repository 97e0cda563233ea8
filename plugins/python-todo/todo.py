"""The to-do list itself, apart from the bindings so that the machine's
CPython can test it (test_todo.py) with a dictionary for a store.

The list lives in the plugin's key-value store (one bucket), laid out as:

    next-id      the last id handed out, kept by the store's atomic
                 `increment`, so that two calls adding at once never get the
                 same id
    item/<id>    one item as JSON: {"id", "text", "priority", "done"}

One key per item (rather than one key holding the whole list) keeps every
change a single small write: no call rewrites what another call changed.
"""

import json
from typing import Iterable, Iterator, Optional, Protocol

MAX_TEXT = 500
PRIORITIES = ("high", "normal", "low")
ITEM_PREFIX = "item/"
NEXT_ID = "next-id"


class TodoError(Exception):
    """A mistake the model can correct (an id that is not on the list)."""


class Store(Protocol):
    """What the list needs from a key-value bucket. app.py implements it on
    wasi:keyvalue; test_todo.py on a dictionary."""

    def get(self, key: str) -> Optional[bytes]: ...
    def set(self, key: str, value: bytes) -> None: ...
    def keys(self) -> Iterator[str]: ...
    def get_many(self, keys: list[str]) -> list[Optional[bytes]]: ...
    def delete_many(self, keys: list[str]) -> None: ...
    def increment(self, key: str, delta: int) -> int: ...


def item_key(item_id: int) -> str:
    return f"{ITEM_PREFIX}{item_id}"


def add(store: Store, text: str, priority: str = "normal") -> dict:
    text = text.strip()
    if not text:
        raise TodoError("the text is empty")
    if priority not in PRIORITIES:
        raise TodoError(f"priority must be one of {', '.join(PRIORITIES)}")
    item = {"id": store.increment(NEXT_ID, 1), "text": text[:MAX_TEXT], "priority": priority, "done": False}
    store.set(item_key(item["id"]), encode(item))
    return item


def items(store: Store, include_done: bool = False) -> list[dict]:
    """Open items first, then by priority, then oldest first."""
    keys = [key for key in store.keys() if key.startswith(ITEM_PREFIX)]
    found = [decode(value) for value in store.get_many(keys) if value is not None]
    if not include_done:
        found = [item for item in found if not item["done"]]
    return sorted(found, key=lambda item: (item["done"], PRIORITIES.index(item["priority"]), item["id"]))


def complete(store: Store, item_id: int) -> dict:
    item = get(store, item_id)
    item["done"] = True
    store.set(item_key(item_id), encode(item))
    return item


def remove(store: Store, item_id: int) -> dict:
    item = get(store, item_id)
    store.delete_many([item_key(item_id)])
    return item


def clear_done(store: Store) -> int:
    """Removes every finished item in one batch; returns how many."""
    done = [item_key(item["id"]) for item in items(store, include_done=True) if item["done"]]
    if done:
        store.delete_many(done)
    return len(done)


def get(store: Store, item_id: int) -> dict:
    value = store.get(item_key(item_id))
    if value is None:
        raise TodoError(f"there is no item #{item_id} (todo_list shows the ids)")
    return decode(value)


def line(item: dict) -> str:
    """One item as the model reads it, e.g. `#3 [ ] (high) call the bank`."""
    mark = "x" if item["done"] else " "
    priority = "" if item["priority"] == "normal" else f"({item['priority']}) "
    return f"#{item['id']} [{mark}] {priority}{item['text']}"


def listing(found: Iterable[dict]) -> str:
    lines = [line(item) for item in found]
    return "\n".join(lines) if lines else "Nothing to do."


def encode(item: dict) -> bytes:
    return json.dumps(item, ensure_ascii=False).encode()


def decode(value: bytes) -> dict:
    return json.loads(value)
