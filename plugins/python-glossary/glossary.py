"""The glossary behind plugin `python-glossary`: a few MCP terms and their
definitions, kept apart from the plugin contract so that it can be tested
with plain Python (test_glossary.py)."""

TERMS = {
    "tool": "A function a server offers for a model to call, with a JSON Schema for its arguments.",
    "resource": "A document a server offers at a URI, which a client reads and may give the model as context.",
    "prompt": "A conversation template a server offers, which a user picks and fills in with arguments.",
    "completion": "Values a server suggests for a prompt argument or a template variable as the user types.",
}


def uri(term: str) -> str:
    return f"glossary://{term}"


def definition(term: str):
    """The definition of `term`, or None if the glossary lacks it."""
    return TERMS.get(term)


def complete(typed: str) -> list:
    """The terms that start with what was typed, ignoring case."""
    return [term for term in TERMS if term.startswith(typed.lower())]


def term_of(address: str):
    """The term of a URI `glossary://TERM`, or None for any other URI."""
    prefix = "glossary://"
    if not address.startswith(prefix):
        return None
    term = address[len(prefix):]
    return term if term and "/" not in term else None
