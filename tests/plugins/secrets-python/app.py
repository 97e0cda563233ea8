"""Test fixture: a Python plugin, built by plugins/build-python, that reads
its secrets through wasi:config/store. Its manifest grants [http] too, so
that the world it is built against is composed of both grants
(plugin-with-http-and-secrets). Tool `secret` answers the value of the
secret `name` (or `none`, for a name it is not granted or that has no
value); tool `secrets` the names get-all returns."""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool
from wit_world.imports import store
from wit_world.imports.corral_plugin_types import Content_Text, TextContent


def text(value: str, is_error: bool = False) -> CallResult:
    return CallResult(content=[Content_Text(TextContent(text=value, annotations=None))],
                      structured_content=None, is_error=is_error)


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        schema = '{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}'
        return [
            Tool(name="secret", title=None, description="The value of one secret.", input_schema=schema,
                 output_schema=None, annotations=None, icons=[], task_support=None),
            Tool(name="secrets", title=None, description="The names of the secrets.",
                 input_schema='{"type": "object"}', output_schema=None, annotations=None, icons=[],
                 task_support=None),
        ]

    def call(self, name: str, arguments: str) -> CallResult:
        try:
            if name == "secret":
                value = store.get(json.loads(arguments)["name"])
                return text("none" if value is None else value)
            return text(",".join(sorted(key for key, _ in store.get_all())))
        except Err as err:
            # store.Error_Upstream or store.Error_Io, each with a message.
            return text(f"error: {err.value.value}", True)
