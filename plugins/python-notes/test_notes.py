"""Unit tests of the note logic and its questions, with the machine's
CPython and a fake asker (no bindings needed):
python3 -m unittest discover -s plugins/python-notes"""

import os
import tempfile
import unittest

import notes


class FakeAsker:
    """Answers by key from a dict; records what was asked."""

    def __init__(self, answers=None, can_elicit=True):
        self.answers = answers or {}
        self.elicits = can_elicit
        self.asked = []

    def can_elicit(self):
        return self.elicits

    def elicit(self, key, message, schema):
        self.asked.append((key, message, schema))
        return self.answers.get(key)

    def confirm(self, key, message):
        self.asked.append((key, message, None))
        return self.answers.get(key) is True


class NotesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        for title in ("groceries", "ideas"):
            with open(os.path.join(self.root, title + ".md"), "w") as f:
                f.write(title)

    def tearDown(self):
        self.dir.cleanup()

    def test_a_missing_title_is_asked_with_the_notes_as_choices(self):
        asker = FakeAsker({"note_title": {"title": "ideas"}, "confirm_delete": True})
        self.assertEqual(notes.delete_note(self.root, None, asker), "Deleted the note 'ideas'.")
        self.assertEqual(notes.titles(self.root), ["groceries"])
        key, _, schema = asker.asked[0]
        self.assertEqual(key, "note_title")
        self.assertEqual(schema["properties"]["title"]["enum"], ["groceries", "ideas"])
        self.assertEqual(asker.asked[1][0], "confirm_delete")

    def test_no_confirmation_no_deletion(self):
        asker = FakeAsker({"confirm_delete": False})
        self.assertIn("Nothing deleted", notes.delete_note(self.root, "ideas", asker))
        self.assertEqual(notes.titles(self.root), ["groceries", "ideas"])

    def test_declined_choice(self):
        self.assertEqual(notes.delete_note(self.root, None, FakeAsker()), "Nothing deleted: no note was chosen.")

    def test_without_elicitation(self):
        asker = FakeAsker(can_elicit=False)
        with self.assertRaisesRegex(notes.NoteError, "Pass `title`"):
            notes.delete_note(self.root, None, asker)
        self.assertIn("confirmed: true", notes.delete_note(self.root, "ideas", asker))
        self.assertEqual(notes.titles(self.root), ["groceries", "ideas"])
        self.assertEqual(notes.delete_note(self.root, "ideas", asker, confirmed=True), "Deleted the note 'ideas'.")
        self.assertEqual(asker.asked, [])

    def test_confirmed_does_not_skip_asking_a_client_that_can_ask(self):
        # The model's `confirmed: true` is not the user's consent.
        asker = FakeAsker({"confirm_delete": False})
        self.assertIn("Nothing deleted", notes.delete_note(self.root, "ideas", asker, confirmed=True))
        self.assertEqual([key for key, _, _ in asker.asked], ["confirm_delete"])
        self.assertEqual(notes.titles(self.root), ["groceries", "ideas"])
        asker = FakeAsker({"confirm_replace": False})
        self.assertIn("keep the note", notes.write_note(self.root, "ideas", "new", asker, confirmed=True))
        self.assertEqual([key for key, _, _ in asker.asked], ["confirm_replace"])
        self.assertEqual(notes.read_note(self.root, "ideas"), "ideas")
        asker = FakeAsker({"confirm_delete": True})
        self.assertEqual(notes.delete_note(self.root, "ideas", asker, confirmed=True), "Deleted the note 'ideas'.")

    def test_replacing_asks_writing_new_does_not(self):
        asker = FakeAsker()
        self.assertEqual(notes.write_note(self.root, "todo", "x", asker), "Saved the note 'todo'.")
        self.assertEqual(asker.asked, [])
        self.assertIn("keep the note", notes.write_note(self.root, "ideas", "new", asker))
        self.assertEqual(notes.read_note(self.root, "ideas"), "ideas")
        asker = FakeAsker({"confirm_replace": True})
        notes.write_note(self.root, "ideas", "new", asker)
        self.assertEqual(notes.read_note(self.root, "ideas"), "new")
        # A client that cannot ask: `confirmed` decides.
        asker = FakeAsker(can_elicit=False)
        self.assertIn("confirmed: true", notes.write_note(self.root, "ideas", "newer", asker))
        self.assertEqual(notes.read_note(self.root, "ideas"), "new")
        notes.write_note(self.root, "ideas", "newer", asker, confirmed=True)
        self.assertEqual(notes.read_note(self.root, "ideas"), "newer")
        self.assertEqual(asker.asked, [])

    def test_titles_cannot_escape(self):
        with self.assertRaises(notes.NoteError):
            notes.file_name("../etc/passwd")


if __name__ == "__main__":
    unittest.main()
