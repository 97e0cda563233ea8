"""What the drivers in tests/reference/NAME/compare.py share: how a result is
shown in a failure, the "schema" allowed difference of the npm originals, and
the comparison of two tools/list answers. Each driver puts this folder on
sys.path and imports it."""

import json

# How the npm originals' SDK refuses arguments that break the input schema
# (zod's issues), and how Corral's validator does, before the plugin runs.
ZOD_REFUSAL = "MCP error -32602: Input validation error: "


def corral_refusal(tool):
    return f"Invalid arguments for tool `{tool}`"


def short(value, limit=400):
    """`value` as JSON, cut at `limit` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def schema_refusal_problems(original, corral, tool, limit=400):
    """The "schema" allowed difference of an npm original: both refuse the
    arguments (isError, no structuredContent), the original in zod's words,
    Corral in its validator's. Returns what breaks it."""
    problems = []
    if not (original["isError"] and corral["isError"]):
        problems.append("both should refuse the arguments")
    if original.get("structuredContent") is not None or corral.get("structuredContent") is not None:
        problems.append("a refusal carries no structuredContent")
    if not original["content"][0]["text"].startswith(ZOD_REFUSAL):
        problems.append(f"original's refusal is not zod's: {short(original, limit)}")
    if not corral["content"][0]["text"].startswith(corral_refusal(tool)):
        problems.append(f"corral's refusal is not the host's: {short(corral, limit)}")
    return problems


def tool_list_problems(label, theirs, ours, fields):
    """Compares two tools/list answers (each a dict of name to the tool's
    JSON) on `fields`; returns the differences, each prefixed with `label`."""
    problems = []
    if sorted(theirs) != sorted(ours):
        problems.append(f"{label}tools/list names: corral {sorted(ours)}, original {sorted(theirs)}")
    for name in sorted(set(theirs) & set(ours)):
        for field in fields:
            if ours[name].get(field) != theirs[name].get(field):
                problems.append(
                    f"{label}tools/list {name}.{field}:\n    corral:   {json.dumps(ours[name].get(field))}\n"
                    f"    original: {json.dumps(theirs[name].get(field))}"
                )
    return problems
