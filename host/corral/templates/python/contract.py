"""The contract's call result, checked before it leaves the plugin.

componentize-py converts what `call` returns into the contract's types
(wit/plugin.wit, record call-result) and, when a value has the wrong shape,
fails with words such as "expected str" or "'dict' object has no attribute
'content'", naming no field. Decorate `call` with `checked` and such a result
fails instead with the field that was wrong and what it should be. The shapes
are in Corral's docs/plugins.md, "The contract in Python and JavaScript".
"""

import functools

from wit_world.exports.tools import CallResult
from wit_world.imports.types import (
    BinaryContent,
    Content_Audio,
    Content_EmbeddedResource,
    Content_Image,
    Content_ResourceLink,
    Content_Text,
    EmbeddedResource,
    ResourceContents_Blob,
    ResourceContents_Text,
    ResourceLink,
    TextContent,
)

CONTENT = "Content_Text(TextContent(text=..., annotations=None)), or another Content_ case"


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _wrong(path: str, value, wanted: str):
    raise TypeError(f"tools.call returned {path} = {_show(value)}; the contract wants {wanted} there")


def _is(value, kind, path: str, wanted: str):
    # bool is an int, but never the other way round here.
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        _wrong(path, value, wanted)


def _content(item, path: str):
    if isinstance(item, Content_Text):
        _is(item.value, TextContent, f"{path}.value", "a TextContent(text=..., annotations=None)")
        _is(item.value.text, str, f"{path}.value.text", "a str")
    elif isinstance(item, (Content_Image, Content_Audio)):
        _is(item.value, BinaryContent, f"{path}.value", "a BinaryContent(data=..., mime_type=..., annotations=None)")
        _is(item.value.data, bytes, f"{path}.value.data", "bytes")
        _is(item.value.mime_type, str, f"{path}.value.mime_type", "a str")
    elif isinstance(item, Content_ResourceLink):
        _is(item.value, ResourceLink, f"{path}.value", "a ResourceLink(...)")
        _is(item.value.uri, str, f"{path}.value.uri", "a str")
        _is(item.value.name, str, f"{path}.value.name", "a str")
    elif isinstance(item, Content_EmbeddedResource):
        _is(item.value, EmbeddedResource, f"{path}.value", "an EmbeddedResource(...)")
        _is(item.value.uri, str, f"{path}.value.uri", "a str")
        contents = item.value.contents
        if isinstance(contents, ResourceContents_Text):
            _is(contents.value, str, f"{path}.value.contents.value", "a str")
        elif isinstance(contents, ResourceContents_Blob):
            _is(contents.value, bytes, f"{path}.value.contents.value", "bytes")
        else:
            _wrong(f"{path}.value.contents", contents, 'ResourceContents_Text("...") or ResourceContents_Blob(b"...")')
    else:
        _wrong(path, item, CONTENT)


def checked_result(result):
    """`result` when it has the contract's shape; a TypeError naming the
    first field that does not, otherwise."""
    _is(result, CallResult, "result", "a CallResult(content=[...], structured_content=None, is_error=False)")
    _is(result.content, list, "result.content", f"a list of {CONTENT}")
    for index, item in enumerate(result.content):
        _content(item, f"result.content[{index}]")
    if result.structured_content is not None:
        _is(result.structured_content, str, "result.structured_content", "JSON text (json.dumps(value)), or None")
    _is(result.is_error, bool, "result.is_error", "True or False")
    return result


def checked(call):
    """Decorates `Tools.call`: every result it returns is checked."""

    @functools.wraps(call)
    def checked_call(self, name: str, arguments: str):
        return checked_result(call(self, name, arguments))

    return checked_call
