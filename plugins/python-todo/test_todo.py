"""Unit tests of the to-do logic with the machine's CPython and a dictionary
for a store (no bindings needed): python3 -m unittest discover -s plugins/python-todo"""

import unittest
from typing import Iterator, Optional

import todo


class DictStore:
    """todo.Store on a dictionary, with the store's own value encoding for
    counters (decimal text, as the host keeps them)."""

    def __init__(self):
        self.data: dict[str, bytes] = {}

    def get(self, key: str) -> Optional[bytes]:
        return self.data.get(key)

    def set(self, key: str, value: bytes) -> None:
        self.data[key] = value

    def keys(self) -> Iterator[str]:
        return iter(list(self.data))

    def get_many(self, keys: list[str]) -> list[Optional[bytes]]:
        return [self.data.get(key) for key in keys]

    def delete_many(self, keys: list[str]) -> None:
        for key in keys:
            self.data.pop(key, None)

    def increment(self, key: str, delta: int) -> int:
        total = int(self.data.get(key, b"0")) + delta
        self.data[key] = str(total).encode()
        return total


class TodoTest(unittest.TestCase):
    def setUp(self):
        self.store = DictStore()

    def test_ids_count_up_and_are_never_reused(self):
        first = todo.add(self.store, "buy milk")
        todo.remove(self.store, first["id"])
        second = todo.add(self.store, "call the bank")
        self.assertEqual((first["id"], second["id"]), (1, 2))

    def test_open_items_are_listed_by_priority_then_age(self):
        todo.add(self.store, "water plants", "low")
        todo.add(self.store, "buy milk")
        todo.add(self.store, "pay rent", "high")
        todo.add(self.store, "call mum")
        self.assertEqual([item["text"] for item in todo.items(self.store)],
                         ["pay rent", "buy milk", "call mum", "water plants"])

    def test_done_items_are_hidden_unless_asked_for_and_listed_last(self):
        milk = todo.add(self.store, "buy milk", "high")
        todo.add(self.store, "call mum")
        todo.complete(self.store, milk["id"])
        self.assertEqual([item["text"] for item in todo.items(self.store)], ["call mum"])
        self.assertEqual(todo.listing(todo.items(self.store, include_done=True)),
                         "#2 [ ] call mum\n#1 [x] (high) buy milk")

    def test_clear_done_removes_only_finished_items(self):
        for text in ["a", "b", "c"]:
            todo.add(self.store, text)
        todo.complete(self.store, 1)
        todo.complete(self.store, 3)
        self.assertEqual(todo.clear_done(self.store), 2)
        self.assertEqual(todo.clear_done(self.store), 0)
        self.assertEqual([item["id"] for item in todo.items(self.store, include_done=True)], [2])
        # The counter is kept: the next id is still new.
        self.assertEqual(todo.add(self.store, "d")["id"], 4)

    def test_an_unknown_id_is_an_error_naming_it(self):
        with self.assertRaisesRegex(todo.TodoError, "no item #7"):
            todo.complete(self.store, 7)
        with self.assertRaisesRegex(todo.TodoError, "no item #7"):
            todo.remove(self.store, 7)

    def test_text_is_trimmed_and_an_empty_one_refused(self):
        self.assertEqual(todo.add(self.store, "  tidy up \n")["text"], "tidy up")
        with self.assertRaisesRegex(todo.TodoError, "empty"):
            todo.add(self.store, "   ")

    def test_an_empty_list_says_so(self):
        self.assertEqual(todo.listing(todo.items(self.store)), "Nothing to do.")


if __name__ == "__main__":
    unittest.main()
