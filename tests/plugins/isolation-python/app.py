"""Test fixture: a Python plugin, built by plugins/build-python, whose tool
`visit` keeps what it was called with in module-level state (a counter, a
list, a global rebound) and answers with all of it. Each call runs in an
instance no call ran in before, so every answer holds its own call alone:
`{"calls": 1, "marks": [MARK], "last": null}`. It also logs its mark, which
must reach the call that made it."""

import json

from wit_world import exports
from wit_world.exports.tools import CallResult, Tool
from wit_world.imports import host
from wit_world.imports.types import Content_Text, LogLevel, TextContent

CALLS = 0
MARKS: list[str] = []
LAST = None


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        schema = '{"type": "object", "properties": {"mark": {"type": "string"}}, "required": ["mark"]}'
        return [Tool(name="visit", title=None, description="Leaves a mark in module-level state.",
                     input_schema=schema, output_schema=None, annotations=None, icons=[], task_support=None)]

    def call(self, name: str, arguments: str) -> CallResult:
        global CALLS, LAST
        mark = json.loads(arguments)["mark"]
        CALLS += 1
        MARKS.append(mark)
        seen = {"calls": CALLS, "marks": MARKS, "last": LAST}
        LAST = mark
        host.log(LogLevel.INFO, f"visited by {mark}")
        return CallResult(content=[Content_Text(TextContent(text=json.dumps(seen), annotations=None))],
                          structured_content=None, is_error=False)
