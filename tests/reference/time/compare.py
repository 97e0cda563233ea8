"""Drives the reference server mcp-server-time 2026.10.19 and `corral serve`
with plugins/python-time through the same scripted session, with the official
MCP Python SDK, and compares every answer: tools/list (names, descriptions,
input and output schemas, annotations) and each call's content text,
structuredContent and isError, or its protocol error.

Usage: python compare.py REFERENCE_PYTHON CORRAL PLUGIN_FOLDER LOCAL_ZONE

The reference runs as `python -m mcp_server_time --local-timezone LOCAL_ZONE`
with PYTHONTZPATH empty, so that both read the same database: the pinned
tzdata package (the plugin bundles the same release; the system's
/usr/share/zoneinfo could be another). The plugin's folder holds
python-time.wasm and a manifest whose [env] sets LOCAL_TIMEZONE to the same
zone.

The differences allowed are the ones in ALLOWED below, each with its reason;
anything else fails. Exits non-zero after printing every mismatch.
"""

import asyncio
import json
import os
import re
import sys
from datetime import datetime

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import tool_list_problems  # noqa: E402

# How far apart the two servers' clocks may read, in seconds.
CLOCK_SLACK = 5

# Each allowed difference, with its reason (printed in the report).
ALLOWED = {
    "clock": "get_current_time reads the clock: the two servers answer a few milliseconds apart, "
    f"so their datetimes may differ by up to {CLOCK_SLACK} seconds (same offset, everything else equal)",
    "schema": "arguments that break the input schema (a missing argument, a number for a string) "
    "are refused by Corral's validator before the plugin runs, with its own wording; the original's "
    "is pydantic's. Both are isError results without structured content",
    "path": "a zone name that is a folder of the database, or too long a file name, gets an OSError "
    "(IsADirectoryError, ENAMETOOLONG) that names the file: the original's site-packages path on "
    "the host, the plugin's 'tzdata/zoneinfo/...' (the component has no host path to show)",
    "midnight": "convert_time uses today's date in the source zone, get_current_time the day of "
    "the week: a pair of calls that straddles a midnight there is asked again once",
}
LONG = "Europe/" + "x" * 300

# (tool, arguments, what may differ): the scripted session, in order.
SESSION = [
    # get_current_time: zones with and without DST, fractional offsets.
    ("get_current_time", {"timezone": "UTC"}, "clock"),
    ("get_current_time", {"timezone": "LOCAL"}, "clock"),
    ("get_current_time", {"timezone": "America/New_York"}, "clock"),
    ("get_current_time", {"timezone": "Europe/London"}, "clock"),
    ("get_current_time", {"timezone": "Australia/Lord_Howe"}, "clock"),
    ("get_current_time", {"timezone": "Asia/Kathmandu"}, "clock"),
    ("get_current_time", {"timezone": "Asia/Kolkata"}, "clock"),
    ("get_current_time", {"timezone": "Pacific/Chatham"}, "clock"),
    ("get_current_time", {"timezone": "America/St_Johns"}, "clock"),
    ("get_current_time", {"timezone": "Etc/GMT+12"}, "clock"),
    ("get_current_time", {"timezone": "EST5EDT"}, "clock"),
    ("get_current_time", {"timezone": "UTC", "extra": True}, "clock"),
    # get_current_time: bad zones, the original's errors.
    ("get_current_time", {"timezone": "Invalid/Zone"}, None),
    ("get_current_time", {"timezone": "europe/london"}, None),
    ("get_current_time", {"timezone": ""}, None),
    ("get_current_time", {"timezone": "../etc"}, None),
    ("get_current_time", {"timezone": "/etc/passwd"}, None),
    ("get_current_time", {"timezone": "America//New_York"}, None),
    ("get_current_time", {"timezone": "America"}, "path"),
    ("get_current_time", {"timezone": "tzdata.zi"}, None),
    ("get_current_time", {"timezone": "zones"}, None),
    ("get_current_time", {"timezone": "America.Argentina/Salta"}, None),
    ("get_current_time", {"timezone": "Europe/Warsaw/x"}, None),
    ("get_current_time", {"timezone": "Zürich/Ünïcødé 🕰"}, None),
    ("get_current_time", {"timezone": "a\u0000b"}, None),
    ("get_current_time", {"timezone": "UTC "}, None),
    ("get_current_time", {"timezone": LONG}, "path"),
    ("get_current_time", {}, "schema"),
    ("get_current_time", {"timezone": 5}, "schema"),
    ("get_current_time", {"timezone": None}, "schema"),
    # convert_time: DST and fractional offsets on today's date.
    ("convert_time", {"source_timezone": "America/New_York", "time": "14:30", "target_timezone": "Asia/Kathmandu"}, "midnight"),
    ("convert_time", {"source_timezone": "America/New_York", "time": "02:30", "target_timezone": "Europe/London"}, "midnight"),
    ("convert_time", {"source_timezone": "Europe/London", "time": "01:30", "target_timezone": "America/New_York"}, "midnight"),
    ("convert_time", {"source_timezone": "Australia/Lord_Howe", "time": "02:00", "target_timezone": "UTC"}, "midnight"),
    ("convert_time", {"source_timezone": "Australia/Adelaide", "time": "09:15", "target_timezone": "Australia/Lord_Howe"}, "midnight"),
    ("convert_time", {"source_timezone": "Asia/Kolkata", "time": "09:00", "target_timezone": "Asia/Kathmandu"}, "midnight"),
    ("convert_time", {"source_timezone": "Asia/Kathmandu", "time": "09:00", "target_timezone": "Asia/Kolkata"}, "midnight"),
    ("convert_time", {"source_timezone": "America/St_Johns", "time": "23:59", "target_timezone": "Pacific/Chatham"}, "midnight"),
    ("convert_time", {"source_timezone": "Pacific/Pago_Pago", "time": "00:00", "target_timezone": "Pacific/Kiritimati"}, "midnight"),
    ("convert_time", {"source_timezone": "LOCAL", "time": "12:00", "target_timezone": "LOCAL"}, "midnight"),
    ("convert_time", {"source_timezone": "UTC", "time": "1:5", "target_timezone": "Asia/Tokyo"}, "midnight"),
    ("convert_time", {"source_timezone": "UTC", "time": "\uff11\uff12:\uff10\uff10", "target_timezone": "Asia/Tokyo"}, "midnight"),
    # convert_time: bad times and zones, in the original's order of checks.
    ("convert_time", {"source_timezone": "UTC", "time": "25:00", "target_timezone": "Asia/Tokyo"}, None),
    ("convert_time", {"source_timezone": "UTC", "time": "12:60", "target_timezone": "Asia/Tokyo"}, None),
    ("convert_time", {"source_timezone": "UTC", "time": "noon", "target_timezone": "Asia/Tokyo"}, None),
    ("convert_time", {"source_timezone": "UTC", "time": "", "target_timezone": "Asia/Tokyo"}, None),
    ("convert_time", {"source_timezone": "UTC", "time": "12:00:00", "target_timezone": "Asia/Tokyo"}, None),
    ("convert_time", {"source_timezone": "UTC", "time": "🕛", "target_timezone": "Asia/Tokyo"}, None),
    ("convert_time", {"source_timezone": "Invalid/Zone", "time": "25:00", "target_timezone": "Asia/Tokyo"}, None),
    ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Mars/Olympus_Mons"}, None),
    ("convert_time", {"source_timezone": "", "time": "99:99", "target_timezone": ""}, None),
    ("convert_time", {"source_timezone": "Bad/Zone", "time": "12:00", "target_timezone": ""}, None),
    ("convert_time", {"source_timezone": "UTC", "target_timezone": "Asia/Tokyo"}, "schema"),
    ("convert_time", {"source_timezone": "UTC", "time": 1200, "target_timezone": "Asia/Tokyo"}, "schema"),
    ("convert_time", {"source_timezone": ["UTC"], "time": "12:00", "target_timezone": "Asia/Tokyo"}, "schema"),
    # Not a tool: a protocol error from both.
    ("no_such_tool", {}, None),
]

TOOL_FIELDS = ("name", "description", "inputSchema", "outputSchema", "annotations")


def answer(result) -> dict:
    """The parts of a CallToolResult that are compared."""
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {key: dumped.get(key) for key in ("content", "structuredContent", "isError")}


async def ask(session, tool, arguments):
    try:
        return answer(await session.call_tool(tool, arguments))
    except MCPError as err:
        return {"protocolError": {"code": err.error.code, "message": err.error.message}}


def clock_free(result: dict) -> tuple[dict, datetime | None]:
    """The result with its datetime taken out (text and structured), and the
    datetime."""
    structured = result.get("structuredContent")
    if result.get("isError") or not structured or "datetime" not in structured:
        return result, None
    moment = datetime.fromisoformat(structured["datetime"])
    result = json.loads(json.dumps(result))
    result["structuredContent"]["datetime"] = "<now>"
    for block in result["content"]:
        block["text"] = block["text"].replace(structured["datetime"], "<now>")
    return result, moment


def allowed(kind, ours, theirs) -> str | None:
    """None when the two answers are the same but for the allowed
    difference `kind`; else what differs."""
    if kind == "clock":
        ours, our_time = clock_free(ours)
        theirs, their_time = clock_free(theirs)
        if (our_time is None) != (their_time is None):
            return "one has a datetime, the other not"
        if our_time is not None:
            if our_time.utcoffset() != their_time.utcoffset():
                return f"offsets differ: {our_time} vs {their_time}"
            if abs((our_time - their_time).total_seconds()) > CLOCK_SLACK:
                return f"clocks differ by more than {CLOCK_SLACK} s: {our_time} vs {their_time}"
    if kind == "schema":
        for side, result in (("corral", ours), ("original", theirs)):
            if result.get("isError") is not True or result.get("structuredContent") is not None:
                return f"{side} did not refuse the arguments: {result}"
            if len(result["content"]) != 1 or result["content"][0]["type"] != "text":
                return f"{side}'s refusal is not one text block: {result}"
        return None
    if kind == "path":
        theirs = json.loads(
            re.sub(r"'[^']*/site-packages/tzdata/zoneinfo/", "'tzdata/zoneinfo/", json.dumps(theirs))
        )
    if ours != theirs:
        return f"corral:   {json.dumps(ours, ensure_ascii=False)}\n    original: {json.dumps(theirs, ensure_ascii=False)}"
    return None


async def main(reference_python: str, corral: str, folder: str, local: str) -> int:
    original = StdioServerParameters(
        command=reference_python,
        args=["-m", "mcp_server_time", "--local-timezone", local],
        env={"PYTHONTZPATH": ""},
    )
    # The SDK passes a server only a few safe variables (HOME, PATH...):
    # Corral's log level and compile cache are passed on explicitly.
    ours = StdioServerParameters(
        command=corral,
        args=["serve", folder],
        env={name: os.environ[name] for name in ("CORRAL_LOG", "CORRAL_CACHE_DIR") if name in os.environ},
    )
    failures = []
    async with stdio_client(original) as (r1, w1), stdio_client(ours) as (r2, w2):
        async with ClientSession(r1, w1) as theirs_s, ClientSession(r2, w2) as ours_s:
            await theirs_s.initialize()
            await ours_s.initialize()

            their_tools = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await theirs_s.list_tools()).tools}
            our_tools = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await ours_s.list_tools()).tools}
            failures += tool_list_problems("", their_tools, our_tools, TOOL_FIELDS)
            print(f"tools/list: {len(their_tools)} tools compared ({', '.join(TOOL_FIELDS)})")

            used = set()
            for index, (tool, arguments, kind) in enumerate(SESSION, 1):
                arguments = {k: (local if v == "LOCAL" else v) for k, v in arguments.items()}
                theirs = await ask(theirs_s, tool, arguments)
                mine = await ask(ours_s, tool, arguments)
                difference = allowed(kind, mine, theirs)
                # Whether the allowed difference was needed: equal answers
                # (JSON objects compared as objects) need none.
                needed = mine != theirs
                if difference and kind in ("midnight", "clock"):
                    theirs = await ask(theirs_s, tool, arguments)
                    mine = await ask(ours_s, tool, arguments)
                    difference = allowed(kind if kind == "clock" else None, mine, theirs)
                label = f"{index:2} {tool} {json.dumps(arguments, ensure_ascii=False)[:90]}"
                if difference:
                    failures.append(f"{label}\n    {difference}")
                    print(f"MISMATCH {label}")
                else:
                    if needed:
                        used.add(kind)
                    verdict = "error" if theirs.get("isError") or "protocolError" in theirs else "ok"
                    print(f"same     {label} -> {verdict}" + (f" (allowed: {kind})" if needed else ""))
    print(f"{len(SESSION)} calls compared; allowed differences met: {sorted(used)}")
    for kind in sorted(used):
        print(f"  {kind}: {ALLOWED[kind]}")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:5])))
