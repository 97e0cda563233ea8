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

from example_calls import CALLS, fail


async def main(binary: str, plugins: str) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    server = StdioServerParameters(command=binary, args=["serve", plugins])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            init = await session.initialize()
            print(f"negotiated {init.protocol_version} with {init.server_info.name}")

            listed = await session.list_tools()
            names = [tool.name for tool in listed.tools]
            missing = set(CALLS) - set(names)
            if missing:
                fail(f"tools missing from tools/list: {sorted(missing)} (got {names})")

            for name, (arguments, check) in CALLS.items():
                result = await session.call_tool(name, arguments)
                if result.is_error or not check(result):
                    fail(f"{name}({arguments}) returned {result}")
                print(f"ok {name}")

            error = await session.call_tool("divide", {"a": 1, "b": 0})
            if not error.is_error:
                fail(f"divide by zero was not a tool execution error: {error}")
            print("ok divide by zero is a tool execution error")

            progress: list[float] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append(done)

            await session.call_tool("countdown", {"steps": 4, "delay_ms": 1}, progress_callback=on_progress)
            if progress != [1, 2, 3, 4]:
                fail(f"progress notifications: {progress}")
            print("ok progress")

            await session.set_logging_level("info")
            await session.call_tool("log_levels", {})
            levels = [log.level for log in logs]
            if levels != ["info", "warning", "error"]:
                fail(f"log notifications at info and above: {levels}")
            print("ok logging")
    print(f"python sdk: {len(CALLS) + 3} checks passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
