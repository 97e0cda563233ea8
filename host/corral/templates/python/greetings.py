"""The greetings that the resources and the prompt of app.py serve: plain
Python that test_greetings.py tests with the machine's python3."""

GREETINGS = {
    "english": "Hello",
    "french": "Bonjour",
    "german": "Hallo",
    "spanish": "Hola",
}


def hello_in(language: str) -> str | None:
    """Hello in `language`, or None when this plugin does not know it."""
    return GREETINGS.get(language)


def markdown() -> str:
    """Every greeting, one per line."""
    return "".join(f"- {language}: {hello}\n" for language, hello in GREETINGS.items())


def complete_language(typed: str) -> list[str]:
    """The languages that start with what the user has typed so far."""
    return [language for language in GREETINGS if language.startswith(typed.lower())]
