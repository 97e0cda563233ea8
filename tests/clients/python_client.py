"""Drives `corral serve` with the official MCP Python SDK's high-level `Client`.

Usage: python python_client.py MODE PART CORRAL_BINARY PLUGIN_DIR

MODE is a `Client(mode=...)` value: "auto" (probe `server/discover`, fall back to
`initialize`), "legacy", or a pinned modern revision such as "2026-07-28".
PART "calls" lists the tools, calls every example tool and checks progress for
`countdown`; PART "list-changed" serves a temporary folder holding only calc, copies textstats in while
connected and waits for the tool list to change (through `Client.listen` on a
modern connection, a `notifications/tools/list_changed` otherwise). Exits
non-zero on the first mismatch.
"""

import asyncio
import os
import shutil
import sys
import tempfile

import anyio
from mcp import Client, StdioServerParameters, types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from example_calls import exercise_every_tool, fail

WAIT_SECONDS = 30


def server(binary: str, plugins: str) -> StdioServerParameters:
    return StdioServerParameters(command=binary, args=["serve", plugins], env=dict(os.environ))


async def calls(mode: str, binary: str, plugins: str) -> None:
    async with Client(server(binary, plugins), mode=mode, read_timeout_seconds=60) as client:
        print(f"{mode}: negotiated {client.protocol_version}")
        if mode != "auto" and mode != "legacy" and client.protocol_version != mode:
            fail(f"pinned {mode} but negotiated {client.protocol_version}")
        if mode == "auto" and client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            fail(f"auto mode fell back to {client.protocol_version}; corral speaks server/discover")

        await exercise_every_tool(client)


async def list_changed(mode: str, binary: str, plugins: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(os.path.join(plugins, "calc.wasm"), os.path.join(folder, "calc.wasm"))

        def add_textstats() -> None:
            # Copy under a name the watcher ignores, then rename: the plugin appears whole.
            partial = os.path.join(folder, "textstats.partial")
            shutil.copy(os.path.join(plugins, "textstats.wasm"), partial)
            os.rename(partial, os.path.join(folder, "textstats.wasm"))

        changed = anyio.Event()

        async def on_message(message) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                changed.set()

        async with Client(
            server(binary, folder), mode=mode, read_timeout_seconds=WAIT_SECONDS, message_handler=on_message
        ) as client:
            before = [tool.name for tool in (await client.list_tools()).tools]
            if "analyze_text" in before:
                fail(f"textstats served before it was copied in: {before}")

            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                try:
                    # Entering waits (read_timeout_seconds) for an acknowledgment the SDK accepts.
                    listening = client.listen(tools_list_changed=True)
                    subscription = await listening.__aenter__()
                except TimeoutError:
                    fail("subscriptions/listen: no valid notifications/subscriptions/acknowledged (see stderr)")
                try:
                    if not subscription.honored.tools_list_changed:
                        fail(f"subscriptions/listen did not honor toolsListChanged: {subscription.honored}")
                    add_textstats()
                    with anyio.fail_after(WAIT_SECONDS):
                        event = await subscription.__anext__()
                    print(f"ok listen event {type(event).__name__}")
                finally:
                    await listening.__aexit__(None, None, None)
            else:
                add_textstats()
                with anyio.fail_after(WAIT_SECONDS):
                    await changed.wait()
                print("ok notifications/tools/list_changed")

            # The change evicts the client's cached listing, so this reaches the server.
            after = [tool.name for tool in (await client.list_tools()).tools]
            if "analyze_text" not in after:
                fail(f"analyze_text missing from tools/list after the change: {after}")
            result = await client.call_tool("analyze_text", {"text": "one two"})
            if result.is_error or result.structured_content["words"] != 2:
                fail(f"analyze_text after the change returned {result}")
            print("ok list changed")


async def main(mode: str, part: str, binary: str, plugins: str) -> None:
    parts = {"calls": calls, "list-changed": list_changed}
    if part not in parts:
        fail(f"unknown part {part!r}: one of {sorted(parts)}")
    await parts[part](mode, binary, plugins)
    print(f"python client ({mode}): {part} passed")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
