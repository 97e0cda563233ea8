"""Drives the reference server npm @modelcontextprotocol/server-sequential-thinking
and `corral serve` with the js-sequential-thinking plugin through the same
scripted session, with the official MCP Python SDK, and compares every result.

Usage: python compare.py NODE ORIGINAL_ENTRY CORRAL_BINARY PLUGIN_DIR STATE_DB

NODE runs ORIGINAL_ENTRY (the package's dist/index.js); CORRAL_BINARY serves
PLUGIN_DIR (the built plugin and its manifest) with `--state sqlite:STATE_DB`.
Prints each call's outcome and exits non-zero when a result differs in a way
not allowed below (ALLOWED).

Compared, for every call: the content (type and text), structuredContent and
isError. For tools/list: the tool's name, title, inputSchema, outputSchema and
annotations (the description may differ; here it does not).

ALLOWED differences, each with its reason:

1. "schema": arguments that break the input schema both servers advertise
   (a missing field, a wrong type, a number below its minimum). Both refuse
   them with isError and no structuredContent, and neither records the
   thought; the words differ. The original's SDK reports zod's issues
   ("MCP error -32602: Input validation error: ..."); Corral checks the
   arguments against the advertised schema before the plugin runs, and
   answers with its own message ("Invalid arguments for tool
   `sequentialthinking`: ..."), the same for every plugin. Arguments the
   schema allows but zod refuses (a string other than "true"/"false" for a
   boolean) are refused by the plugin itself, and their text is compared.

2. "coerced": numeric strings ("5") for the integer fields. Their schema says
   "integer", but the original's zod (z.coerce.number()) accepts the string
   and turns it into a number; Corral refuses arguments its schema forbids.
   These calls come last, so that the thought the original records and Corral
   does not changes no other call's thoughtHistoryLength.
"""

import asyncio
import os
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import schema_refusal_problems, short  # noqa: E402

TOOL = "sequentialthinking"


def thought(number, total, text=None, needed=True, **extra):
    args = {
        "thought": text if text is not None else f"Thought {number} of {total}",
        "nextThoughtNeeded": needed,
        "thoughtNumber": number,
        "totalThoughts": total,
    }
    args.update(extra)
    return args


LONG = "A long thought. " * 8192  # 128 KiB
UNICODE = "Ünïcödé: 思考 🤔 مرحبا שלום \u0301e\u200d \U0001f9e0 \t tab \n newline \\ \" quote \x00 nul"

# (label, arguments, expectation): "same" (every field equal), "schema" or
# "coerced" (ALLOWED 1 and 2 above).
SESSION = [
    ("first thought", thought(1, 5), "same"),
    ("second thought", thought(2, 5), "same"),
    ("thoughtNumber above totalThoughts raises it", thought(7, 5), "same"),
    ("totalThoughts adjusted down", thought(8, 3), "same"),
    ("totalThoughts adjusted up", thought(9, 12), "same"),
    ("revision", thought(3, 12, isRevision=True, revisesThought=2), "same"),
    ("revision without revisesThought", thought(4, 12, isRevision=True), "same"),
    ("isRevision false", thought(5, 12, isRevision=False, revisesThought=1), "same"),
    ("branch a", thought(6, 12, branchFromThought=3, branchId="a"), "same"),
    ("branch a again", thought(7, 12, branchFromThought=3, branchId="a"), "same"),
    ("numeric branch ids sort first (10)", thought(7, 12, branchFromThought=2, branchId="10"), "same"),
    ("numeric branch ids sort first (2)", thought(7, 12, branchFromThought=2, branchId="2"), "same"),
    ("unicode branch id", thought(8, 12, branchFromThought=1, branchId="ветка-🌿"), "same"),
    ("branchId without branchFromThought", thought(8, 12, branchId="orphan"), "same"),
    ("branchFromThought without branchId", thought(8, 12, branchFromThought=2), "same"),
    ("empty branchId", thought(8, 12, branchFromThought=2, branchId=""), "same"),
    ("branch id 'constructor' breaks the original's bookkeeping", thought(9, 12, branchFromThought=1, branchId="constructor"), "same"),
    ("branch id '__proto__'", thought(9, 12, branchFromThought=1, branchId="__proto__"), "same"),
    ("revision and branch together", thought(9, 12, isRevision=True, revisesThought=4, branchFromThought=4, branchId="b"), "same"),
    ("needsMoreThoughts", thought(12, 12, needsMoreThoughts=True), "same"),
    ("nextThoughtNeeded as the string \"false\"", thought(13, 12, needed="false"), "same"),
    ("nextThoughtNeeded as \"TRUE\"", thought(13, 13, needed="TRUE"), "same"),
    ("isRevision as \"False\", needsMoreThoughts as \"true\"", thought(14, 14, isRevision="False", needsMoreThoughts="true"), "same"),
    ("nextThoughtNeeded as \"maybe\"", thought(15, 15, needed="maybe"), "same"),
    ("nextThoughtNeeded as \"\"", thought(15, 15, needed=""), "same"),
    ("three bad boolean strings", thought(15, 15, needed="yes", isRevision="no", needsMoreThoughts="1"), "same"),
    ("unknown argument is ignored", thought(15, 15, mood="curious"), "same"),
    ("unicode thought", thought(16, 16, text=UNICODE), "same"),
    ("long thought (128 KiB)", thought(17, 17, text=LONG), "same"),
    ("empty thought", thought(18, 18, text=""), "same"),
    ("integral float 19.0", thought(19.0, 20.0), "same"),
    ("largest safe integer", thought(9007199254740991, 1), "same"),
    ("final thought", thought(20, 20, needed=False), "same"),
    ("missing thought", {k: v for k, v in thought(21, 21).items() if k != "thought"}, "schema"),
    ("missing nextThoughtNeeded", {k: v for k, v in thought(21, 21).items() if k != "nextThoughtNeeded"}, "schema"),
    ("no arguments", {}, "schema"),
    ("thoughtNumber 0", thought(0, 21), "schema"),
    ("totalThoughts -1", thought(21, -1), "schema"),
    ("thoughtNumber 1.5", thought(1.5, 21), "schema"),
    ("thoughtNumber above the largest safe integer", thought(9007199254740992, 21), "schema"),
    ("thought as a number", thought(21, 21, text=42), "schema"),
    ("nextThoughtNeeded null", thought(21, 21, needed=None), "schema"),
    ("nextThoughtNeeded as a number", thought(21, 21, needed=1), "schema"),
    ("thoughtNumber as a word", thought("three", 21), "schema"),
    ("revisesThought 0", thought(21, 21, isRevision=True, revisesThought=0), "schema"),
    ("branchId as a number", thought(21, 21, branchFromThought=1, branchId=7), "schema"),
    ("schema and boolean-string errors together", thought(0, 21, needed="maybe"), "schema"),
    ("after the refusals, the history is unchanged", thought(21, 21), "same"),
    # Last (ALLOWED 2): the original records these, Corral refuses them.
    ("thoughtNumber as the string \"22\"", thought("22", 22), "coerced"),
    ("totalThoughts as the string \"30\"", thought(23, "30"), "coerced"),
]


def dump(result):
    """The compared parts of a CallToolResult."""
    return {
        "content": [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in result.content],
        "structuredContent": result.structured_content,
        "isError": bool(result.is_error),
    }


def tool_entry(tools):
    found = [tool for tool in tools.tools if tool.name == TOOL]
    if len(found) != 1:
        raise SystemExit(f"expected one tool {TOOL}, got {[tool.name for tool in tools.tools]}")
    entry = found[0].model_dump(mode="json", by_alias=True, exclude_none=True)
    return {key: entry.get(key) for key in ("name", "title", "inputSchema", "outputSchema", "annotations")}


async def session_of(params, calls):
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        entry = tool_entry(await client.list_tools())
        results = []
        for arguments in calls:
            results.append(dump(await client.call_tool(TOOL, arguments)))
        return entry, results


async def session(params):
    return await session_of(params, [arguments for _label, arguments, _expect in SESSION])


def compare(label, expect, original, corral):
    """Returns the problems with one call's pair of results."""
    if expect == "same":
        return [] if original == corral else [f"results differ:\n  original: {short(original)}\n  corral:   {short(corral)}"]
    problems = []
    if expect == "schema":
        problems += schema_refusal_problems(original, corral, TOOL)
    elif expect == "coerced":
        if original["isError"] or original["structuredContent"] is None:
            problems.append(f"the original should coerce the string: {short(original)}")
        if not corral["isError"] or not corral["content"][0]["text"].startswith(f"Invalid arguments for tool `{TOOL}`"):
            problems.append(f"corral should refuse the string: {short(corral)}")
    return problems


async def main():
    node, entry, corral, plugins, state = sys.argv[1:6]
    quiet = dict(os.environ, DISABLE_THOUGHT_LOGGING="true")
    original_params = StdioServerParameters(command=node, args=[entry], env=quiet)
    corral_params = StdioServerParameters(
        command=corral, args=["serve", plugins, "--state", f"sqlite:{state}"], env=dict(os.environ)
    )
    original_entry, original_results = await session(original_params)
    corral_entry, corral_results = await session(corral_params)

    failures = 0
    if original_entry != corral_entry:
        failures += 1
        print(f"FAIL tools/list entry differs:\n  original: {short(original_entry, 4000)}\n  corral:   {short(corral_entry, 4000)}")
    else:
        print("ok   tools/list: name, title, inputSchema, outputSchema, annotations")
    for (label, _arguments, expect), original, ours in zip(SESSION, original_results, corral_results):
        problems = compare(label, expect, original, ours)
        if problems:
            failures += 1
            print(f"FAIL {label} ({expect})")
            for problem in problems:
                print(f"     {problem}")
        else:
            print(f"ok   {label} ({expect}, isError={ours['isError']})")
    # Not compared: Corral's history outlives the server (it is in the
    # store), where the original's dies with its process. A new server on
    # the same store counts on from the session's last thought.
    recorded = max(r["structuredContent"]["thoughtHistoryLength"] for r in corral_results if r["structuredContent"])
    _entry, again = await session_of(corral_params, [thought(1, 1)])
    if again[0]["structuredContent"]["thoughtHistoryLength"] != recorded + 1:
        failures += 1
        print(f"FAIL corral restarted on the same store: {short(again[0])}, expected history {recorded + 1}")
    else:
        print(f"ok   corral restarted on the same store counts on: thoughtHistoryLength {recorded + 1}")
    print(f"{len(SESSION)} calls compared, {failures} failures")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
