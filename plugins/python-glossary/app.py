"""Corral plugin `python-glossary`: a glossary of MCP terms offered as
resources (`glossary://TERM`, and the template `glossary://{term}`), a prompt
(`define`, which embeds a term's resource) and completion of the terms.

Built with componentize-py against wit/ by plugins/build-python, which picks
the world `plugin-full` because this module defines `Resources` (or
`Prompts`): a component of that world exports `tools`, `resources`,
`prompts` and `completion`, so this module defines all four classes (its
tool list is empty). The glossary itself lives in glossary.py.
"""

from typing import List, Tuple

import glossary
from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.completion import Completions, Reference_Prompt, Reference_ResourceTemplate
from wit_world.exports.prompts import (
    GetError_InvalidArguments,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptResult,
)
from wit_world.exports.resources import Contents, Listing, ReadError_NotFound, Resource, ResourceTemplate
from wit_world.exports.tools import CallResult, Tool
from wit_world.imports.types import (
    Content_EmbeddedResource,
    Content_Text,
    EmbeddedResource,
    ResourceContents_Text,
    Role,
    TextContent,
)

TEMPLATE = "glossary://{term}"


class Tools(exports.Tools):
    """No tools: the world `plugin-full` exports `tools`, so the class is here."""

    def list(self) -> List[Tool]:
        return []

    def call(self, name: str, arguments: str) -> CallResult:
        return CallResult([Content_Text(TextContent(f"unknown tool: {name}", None))], None, True)


class Resources(exports.Resources):
    def list(self) -> Listing:
        resources = [
            Resource(glossary.uri(term), term, None, f"What \"{term}\" means in MCP", "text/plain", None, None, [])
            for term in glossary.TERMS
        ]
        template = ResourceTemplate(TEMPLATE, "term", "Glossary term", "A term by name", "text/plain", None, [])
        return Listing(resources, [template])

    def read(self, uri: str) -> List[Contents]:
        term = glossary.term_of(uri)
        text = glossary.definition(term) if term else None
        if text is None:
            raise Err(ReadError_NotFound())
        return [Contents(uri, "text/plain", ResourceContents_Text(text))]


class Prompts(exports.Prompts):
    def list(self) -> List[Prompt]:
        term = PromptArgument("term", None, "The term to define, e.g. resource", True)
        return [Prompt("define", "Define a term", "Ask the model to explain an MCP term", [term], [])]

    def get(self, name: str, arguments: List[Tuple[str, str]]) -> PromptResult:
        term = dict(arguments).get("term", "")
        text = glossary.definition(term)
        if name != "define" or text is None:
            raise Err(GetError_InvalidArguments(f"no term {term!r}; the terms are {', '.join(glossary.TERMS)}"))
        ask = Content_Text(TextContent(f"Explain the MCP term \"{term}\" with an example.", None))
        embedded = Content_EmbeddedResource(
            EmbeddedResource(glossary.uri(term), "text/plain", ResourceContents_Text(text), None)
        )
        return PromptResult(f"Define {term}", [PromptMessage(Role.USER, ask), PromptMessage(Role.USER, embedded)])


class Completion(exports.Completion):
    def complete(self, reference, name: str, value: str, context: List[Tuple[str, str]]) -> Completions:
        asks_for_term = (isinstance(reference, Reference_Prompt) and reference.value == "define") or (
            isinstance(reference, Reference_ResourceTemplate) and reference.value == TEMPLATE
        )
        values = glossary.complete(value) if asks_for_term and name == "term" else []
        return Completions(values, None, False)
