"""Notes kept as Markdown files in one directory, and the decisions of the
tools that change them: what to ask the user, and when.

This module knows nothing of WIT: the asking goes through an `asker`
(ask.py in the component, a fake in test_notes.py), so the logic runs
under plain CPython. The rule every tool here follows: ask first, act
last. A client of MCP 2026-07-28 answers "input required" and calls
again with the answers, and the host runs the tool again from the start,
so anything done before the last question would be done once per round.
And consent is the user's: a client that can ask is always asked, and
`confirmed: true` (the model's claim that the user agreed) counts only
when the client cannot ask.
"""

import os
import re

# Titles become file names: keep them short and free of path tricks.
TITLE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 _.,'()-]{0,79}$"
MAX_NOTE_BYTES = 64 * 1024
# Choices shown in one form: a bound on the form's size.
MAX_CHOICES = 50


class NoteError(Exception):
    """Bad input or a missing directory: told to the model as a tool error."""


def file_name(title: str) -> str:
    if not re.match(TITLE_PATTERN, title):
        raise NoteError(f"{title!r} is not a valid title (letters, digits, spaces and _.,'()-, at most 80)")
    return title + ".md"


def titles(root: str) -> list[str]:
    """Every note's title, sorted (so a form lists them alike on every run)."""
    try:
        names = os.listdir(root)
    except OSError as err:
        raise NoteError(f"cannot read {root}: {err.strerror} (the manifest python-notes.toml must grant "
                        f"a directory as {root}, mode \"rw\")") from None
    return sorted(name[:-3] for name in names if name.endswith(".md") and os.path.isfile(os.path.join(root, name)))


def list_notes(root: str) -> str:
    found = titles(root)
    if not found:
        return "No notes yet."
    return "Notes:\n" + "\n".join(f"- {title}" for title in found)


def read_note(root: str, title: str) -> str:
    path = os.path.join(root, file_name(title))
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise NoteError(f"there is no note {title!r}") from None


def consent(asker, key: str, question: str, confirmed: bool) -> bool | None:
    """Whether the user agreed to `question`: asked whenever the client can
    ask (`confirmed` is the model's word, not the user's); otherwise
    `confirmed` stands for it. None: the client cannot ask and nothing was
    confirmed, so the caller says what to ask the user."""
    if asker.can_elicit():
        return asker.confirm(key, question)
    return True if confirmed else None


def write_note(root: str, title: str, text: str, asker, confirmed: bool = False) -> str:
    """Writes a note; replacing an existing one needs the user's consent:
    asked when the client can ask, else `confirmed`."""
    if len(text.encode()) > MAX_NOTE_BYTES:
        raise NoteError(f"a note holds at most {MAX_NOTE_BYTES} bytes")
    path = os.path.join(root, file_name(title))
    if title in titles(root):
        question = f"Replace the note {title!r}? Its current text will be lost."
        agreed = consent(asker, "confirm_replace", question, confirmed)
        if agreed is None:
            return (f"Nothing written: a note {title!r} exists and this client cannot ask for confirmation. "
                    f"Ask the user \"{question}\" and, if they agree, call again with confirmed: true.")
        if not agreed:
            return f"Nothing written: the user chose to keep the note {title!r}."
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return f"Saved the note {title!r}."


def delete_note(root: str, title: str | None, asker, confirmed: bool = False) -> str:
    """Deletes a note: asks which one when `title` is missing, then asks for
    consent (`confirmed` stands for it only when the client cannot ask), and
    only then deletes."""
    existing = titles(root)
    if not existing:
        return "There are no notes to delete."
    if not title:
        if not asker.can_elicit():
            raise NoteError("Which note? Pass `title`; this client cannot ask the user. " + list_notes(root))
        if len(existing) > MAX_CHOICES:
            raise NoteError(f"there are {len(existing)} notes, too many to choose from; pass `title`")
        answer = asker.elicit("note_title", "Which note should be deleted?", {
            "type": "object",
            "properties": {"title": {"type": "string", "title": "Note", "enum": existing}},
            "required": ["title"],
        })
        if answer is None:
            return "Nothing deleted: no note was chosen."
        title = answer["title"]
    if title not in existing:
        raise NoteError(f"there is no note {title!r}")
    question = f"Delete the note {title!r}? This cannot be undone."
    agreed = consent(asker, "confirm_delete", question, confirmed)
    if agreed is None:
        return (f"Nothing deleted: this client cannot ask for confirmation. Ask the user \"{question}\" "
                f"and, if they agree, call again with title and confirmed: true.")
    if not agreed:
        return f"Nothing deleted: the user chose to keep {title!r}."
    os.remove(os.path.join(root, file_name(title)))
    return f"Deleted the note {title!r}."
