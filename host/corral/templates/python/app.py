"""{{name}}: a Corral plugin written in Python, made a WebAssembly component by
componentize-py (./build). This module speaks the plugin contract
(wit/plugin.wit: the world `plugin`, or the one ./build picks, see
README.md); the tool itself is in tool.py.

Import every module at the top of a file: componentize-py keeps what was
imported while it built the component.
"""

import json
import traceback

import tool
from contract import checked
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool, ToolAnnotations
from wit_world.imports import host
from wit_world.imports.types import Content_Text, LogLevel, TextContent

TOOL_NAME = "{{name}}"

# The host checks every call's arguments against this schema before the
# plugin runs.
INPUT_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Who to greet."}},
    "required": ["name"],
    "additionalProperties": False,
}

READ_ONLY = ToolAnnotations(
    title=None, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def text_result(text: str, is_error: bool = False) -> CallResult:
    content = [Content_Text(TextContent(text=text, annotations=None))]
    return CallResult(content=content, structured_content=None, is_error=is_error)


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        return [
            Tool(
                name=TOOL_NAME,
                title=None,
                description="Say hello to someone by name.",
                input_schema=json.dumps(INPUT_SCHEMA),
                output_schema=None,
                annotations=READ_ONLY,
                icons=[],
                task_support=None,
            )
        ]

    # `checked`: a result of the wrong shape fails naming the field, not in
    # the bindings' words.
    @checked
    def call(self, name: str, arguments: str) -> CallResult:
        if name != TOOL_NAME:
            return text_result(f"unknown tool {name!r}", is_error=True)
        args = json.loads(arguments)
        try:
            text = tool.greet(args["name"])
        except tool.ToolFailure as err:
            return text_result(str(err), is_error=True)
        except Exception:
            # A bug, not bad input: the traceback goes to the server's log,
            # and the model gets a short explanation instead of a trap.
            host.log(LogLevel.ERROR, f"{name}: internal error\n{traceback.format_exc()}")
            return text_result(f"internal error in {name}; see the server log", is_error=True)
        host.log(LogLevel.INFO, f"{name}: greeted {args['name']!r}")
        return text_result(text)
