"""Calls a tool that asks the user, through the official MCP Python SDK's `Client`
with an elicitation callback that answers as a user would.

Usage: python python_asks.py MODE SERVER TOOL ARGUMENTS ANSWERS EXPECT

MODE is a `Client(mode=...)` value: "legacy" (the server sends `elicitation/create`
requests during the call) or "2026-07-28" (the server answers `input_required` and
the SDK calls again with the answers). SERVER is a Streamable HTTP URL, or
`stdio:BINARY:DIR` to start `BINARY serve DIR`. ARGUMENTS is the call's JSON object;
ANSWERS a JSON list of what the user answers, in order, each an object with
`action` and, to accept, `content`. The result's text must contain EXPECT, and
every answer must have been asked for. Exits non-zero on the first mismatch.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters, types

from example_calls import fail


def connect_to(server: str) -> StdioServerParameters | str:
    if server.startswith("stdio:"):
        _, binary, folder = server.split(":", 2)
        return StdioServerParameters(command=binary, args=["serve", folder], env=dict(os.environ))
    return server


async def main(mode: str, server: str, tool: str, arguments: str, answers: str, expect: str) -> None:
    pending = list(json.loads(answers))
    asked: list[str] = []

    async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        if not pending:
            fail(f"asked once more than expected: {params.message!r}")
        asked.append(params.message)
        schema = getattr(params, "requested_schema", None)
        if schema is None or schema.get("type") != "object":
            fail(f"a form elicitation without an object schema: {params}")
        answer = pending.pop(0)
        return types.ElicitResult(action=answer["action"], content=answer.get("content"))

    async with Client(
        connect_to(server), mode=mode, read_timeout_seconds=60, elicitation_callback=on_elicit
    ) as client:
        result = await client.call_tool(tool, json.loads(arguments))
        text = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
        if expect not in text:
            fail(f"{tool} returned {text!r} (error: {result.is_error}); expected it to contain {expect!r}")
        if pending:
            fail(f"{len(pending)} answer(s) never asked for; asked: {asked}")
        print(f"python client ({mode}, {client.protocol_version}): {tool} asked {asked} and said {text!r}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:7]))
