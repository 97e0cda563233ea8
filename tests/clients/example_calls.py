"""The example tools' calls and result checks, shared by the Python client scripts."""

import base64
import sys

from mcp import types

# Every example tool with arguments, and a check of its result.
CALLS = {
    "add": ({"a": 2, "b": 3}, lambda r: text(r) == "5"),
    "subtract": ({"a": 2, "b": 3}, lambda r: text(r) == "-1"),
    "multiply": ({"a": 2, "b": 3}, lambda r: text(r) == "6"),
    "divide": ({"a": 3, "b": 2}, lambda r: text(r) == "1.5"),
    "power": ({"base": 2, "exponent": 10}, lambda r: text(r) == "1024"),
    "sqrt": ({"x": 81}, lambda r: text(r) == "9"),
    "mandelbrot": ({"width": 16, "height": 16}, lambda r: png(r.content[0])),
    "tone": (
        {"frequency_hz": 440, "duration_ms": 20},
        lambda r: isinstance(r.content[0], types.AudioContent)
        and base64.b64decode(r.content[0].data)[:4] == b"RIFF",
    ),
    "swatch": ({"hex": "#ff8800"}, lambda r: any(png(c) for c in r.content)),
    "analyze_text": (
        {"text": "Hello world. Hello again."},
        lambda r: r.structured_content["words"] == 4
        and r.structured_content["top_words"][0]["word"] == "hello",
    ),
    "text_report": (
        {"text": "to be or not to be"},
        lambda r: any(isinstance(c, types.EmbeddedResource) for c in r.content)
        and any(isinstance(c, types.ResourceLink) for c in r.content),
    ),
    "countdown": ({"steps": 3, "delay_ms": 1}, lambda r: "3 steps" in text(r)),
    "sleep": ({"ms": 10}, lambda r: not r.is_error),
    "log_levels": ({}, lambda r: not r.is_error),
}


def text(result: types.CallToolResult) -> str:
    return next(c.text for c in result.content if isinstance(c, types.TextContent))


def png(content) -> bool:
    return isinstance(content, types.ImageContent) and base64.b64decode(content.data)[:4] == b"\x89PNG"


def fail(message: str) -> None:
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


async def exercise_every_tool(client) -> None:
    """Lists the tools and calls every example tool through `client` (a
    `ClientSession` or a high-level `Client`: both have `list_tools` and
    `call_tool`), then checks a tool execution error and progress."""
    listed = await client.list_tools()
    names = [tool.name for tool in listed.tools]
    missing = set(CALLS) - set(names)
    if missing:
        fail(f"tools missing from tools/list: {sorted(missing)} (got {names})")

    for name, (arguments, check) in CALLS.items():
        result = await client.call_tool(name, arguments)
        if result.is_error or not check(result):
            fail(f"{name}({arguments}) returned {result}")
        print(f"ok {name}")

    error = await client.call_tool("divide", {"a": 1, "b": 0})
    if not error.is_error:
        fail(f"divide by zero was not a tool execution error: {error}")
    print("ok divide by zero is a tool execution error")

    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    await client.call_tool("countdown", {"steps": 4, "delay_ms": 1}, progress_callback=on_progress)
    if progress != [1, 2, 3, 4]:
        fail(f"progress notifications: {progress}")
    print("ok progress")
