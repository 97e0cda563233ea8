

# --- Resources, prompts and completion ----------------------------------------
# Because this module defines `Resources` and `Prompts`, ./build makes it a
# component of the world `plugin-full`, which exports `resources`, `prompts`
# and `completion` besides `tools`: the classes below (a list may be empty).
# What they serve is in greetings.py. Their imports are here, still at the
# module's top level, so that componentize-py keeps them.

import greetings  # noqa: E402
from componentize_py_types import Err  # noqa: E402
from wit_world.exports.completion import Completions, Reference_Prompt, Reference_ResourceTemplate  # noqa: E402
from wit_world.exports.prompts import (  # noqa: E402
    GetError_InvalidArguments,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptResult,
)
from wit_world.exports.resources import Contents, Listing, ReadError_NotFound, Resource, ResourceTemplate  # noqa: E402
from wit_world.imports.types import Content_EmbeddedResource, EmbeddedResource, ResourceContents_Text, Role  # noqa: E402

# A document at a fixed URI, and documents at the URIs that match a template:
# {{scheme}}://greetings/french gives language = "french".
GREETINGS_URI = "{{scheme}}://greetings"
GREETING_TEMPLATE = "{{scheme}}://greetings/{language}"


def greeting_uri(language: str) -> str:
    return f"{GREETINGS_URI}/{language}"


class Resources(exports.Resources):
    def list(self) -> Listing:
        every = Resource(
            uri=GREETINGS_URI,
            name="greetings",
            title=None,
            description="Hello in every language this plugin knows",
            mime_type="text/markdown",
            size=None,
            annotations=None,
            icons=[],
        )
        one = ResourceTemplate(
            uri_template=GREETING_TEMPLATE,
            name="greeting",
            title=None,
            description="Hello in one language",
            mime_type="text/plain",
            annotations=None,
            icons=[],
        )
        return Listing(resources=[every], templates=[one])

    def read(self, uri: str) -> list[Contents]:
        if uri == GREETINGS_URI:
            return [Contents(uri=uri, mime_type="text/markdown", body=ResourceContents_Text(greetings.markdown()))]
        language = uri.removeprefix(GREETINGS_URI + "/")
        hello = greetings.hello_in(language) if language != uri else None
        if hello is None:
            # The client is told "resource not found".
            raise Err(ReadError_NotFound())
        return [Contents(uri=uri, mime_type="text/plain", body=ResourceContents_Text(hello))]


class Prompts(exports.Prompts):
    def list(self) -> list[Prompt]:
        who = PromptArgument(name="name", title=None, description="Who to greet", required=True)
        language = PromptArgument(
            name="language",
            title=None,
            description="The language to greet in, e.g. french (default: english)",
            required=False,
        )
        return [
            Prompt(
                name="greet",
                title=None,
                description="Greet someone in a language of your choice",
                arguments=[who, language],
                icons=[],
            )
        ]

    def get(self, name: str, arguments: list[tuple[str, str]]) -> PromptResult:
        args = dict(arguments)
        language = args.get("language") or "english"
        hello = greetings.hello_in(language)
        if name != "greet" or hello is None:
            # The client is told its arguments are invalid, with this reason.
            raise Err(GetError_InvalidArguments(f"no greeting in {language}"))
        ask = Content_Text(
            TextContent(
                text=f"Greet {args.get('name', '')} warmly in {language}, starting with the greeting below.",
                annotations=None,
            )
        )
        # A conversation for the client's model, with a resource embedded in it.
        embedded = Content_EmbeddedResource(
            EmbeddedResource(
                uri=greeting_uri(language),
                mime_type="text/plain",
                contents=ResourceContents_Text(hello),
                annotations=None,
            )
        )
        return PromptResult(
            description=None,
            messages=[PromptMessage(role=Role.USER, content=ask), PromptMessage(role=Role.USER, content=embedded)],
        )


class Completion(exports.Completion):
    def complete(self, reference, name: str, value: str, context: list[tuple[str, str]]) -> Completions:
        asks_for_language = name == "language" and (
            (isinstance(reference, Reference_Prompt) and reference.value == "greet")
            or (isinstance(reference, Reference_ResourceTemplate) and reference.value == GREETING_TEMPLATE)
        )
        values = greetings.complete_language(value) if asks_for_language else []
        return Completions(values=values, total=None, has_more=False)
