"""Drives `corral serve` with the official MCP Python SDK (PyPI `mcp`).

Usage: python python_sdk.py CORRAL_BINARY PLUGIN_DIR

Lists the tools, calls every example tool through `ClientSession` over
`stdio_client`, and checks what comes back. Exits non-zero on the first
mismatch; prints one line per call otherwise.
"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from example_calls import CALLS, exercise_every_tool, fail


async def main(binary: str, plugins: str) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    server = StdioServerParameters(command=binary, args=["serve", plugins])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            init = await session.initialize()
            print(f"negotiated {init.protocol_version} with {init.server_info.name}")

            await exercise_every_tool(session)

            await session.set_logging_level("info")
            await session.call_tool("log_levels", {})
            levels = [log.level for log in logs]
            if levels != ["info", "warning", "error"]:
                fail(f"log notifications at info and above: {levels}")
            print("ok logging")
    print(f"python sdk: {len(CALLS) + 3} checks passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
