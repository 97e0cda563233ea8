"""Corral plugin `python-time`: the reference MCP server `mcp-server-time`
(PyPI, 2026.10.19) as a sandboxed component. Same tools, input schemas and
results: `get_current_time` and `convert_time` over the IANA time zone
database, bundled from the pinned `tzdata` package (requirements.txt).

The local zone, named in the tools' argument descriptions, comes from the
environment the manifest grants (python-time.toml's [env]): LOCAL_TIMEZONE,
else TZ, else UTC. The logic is in timezones.py; this module only speaks the
plugin contract.
"""

import json
import os
import traceback

import timezones
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool, ToolAnnotations
from wit_world.imports import host
from wit_world.imports.types import Content_Text, LogLevel, TextContent

READ_ONLY = ToolAnnotations(
    title=None, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def string(title: str, description: str) -> dict:
    return {"description": description, "title": title, "type": "string"}


# The original's schemas, as pydantic writes them (titles included).
TIME_RESULT_PROPERTIES = {
    "properties": {
        "timezone": {"title": "Timezone", "type": "string"},
        "datetime": {"title": "Datetime", "type": "string"},
        "day_of_week": {"title": "Day Of Week", "type": "string"},
        "is_dst": {"title": "Is Dst", "type": "boolean"},
    },
    "required": ["timezone", "datetime", "day_of_week", "is_dst"],
}
TIME_RESULT = {**TIME_RESULT_PROPERTIES, "type": "object", "title": "TimeResult"}
CONVERSION_RESULT = {
    "properties": {
        "source": {"$ref": "#/$defs/TimeResult"},
        "target": {"$ref": "#/$defs/TimeResult"},
        "time_difference": {"title": "Time Difference", "type": "string"},
    },
    "required": ["source", "target", "time_difference"],
    "type": "object",
    "$defs": {"TimeResult": {**TIME_RESULT_PROPERTIES, "title": "TimeResult", "type": "object"}},
    "title": "TimeConversionResult",
}


def tools(local: str) -> list[Tool]:
    def tool(name: str, description: str, properties: dict, output: dict) -> Tool:
        schema = {
            "properties": properties,
            "required": list(properties),
            "type": "object",
            "title": f"{name}Arguments",
        }
        return Tool(
            name=name,
            title=None,
            description=description,
            input_schema=json.dumps(schema),
            output_schema=json.dumps(output),
            annotations=READ_ONLY,
            icons=[],
            task_support=None,
        )

    return [
        tool(
            "get_current_time",
            "Get current time in a specific timezone",
            {
                "timezone": string(
                    "Timezone",
                    f"IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use '{local}' as local timezone if no timezone provided by the user.",
                )
            },
            TIME_RESULT,
        ),
        tool(
            "convert_time",
            "Convert time between timezones",
            {
                "source_timezone": string(
                    "Source Timezone",
                    f"Source IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use '{local}' as local timezone if no source timezone provided by the user.",
                ),
                "time": string("Time", "Time to convert in 24-hour format (HH:MM)"),
                "target_timezone": string(
                    "Target Timezone",
                    f"Target IANA timezone name (e.g., 'Asia/Tokyo', 'America/San_Francisco'). Use '{local}' as local timezone if no target timezone provided by the user.",
                ),
            },
            CONVERSION_RESULT,
        ),
    ]


def text(message: str) -> list:
    return [Content_Text(TextContent(text=message, annotations=None))]


def run(name: str, args: dict) -> dict:
    if name == "get_current_time":
        return timezones.get_current_time(args["timezone"])
    if name == "convert_time":
        return timezones.convert_time(args["source_timezone"], args["time"], args["target_timezone"])
    raise timezones.ToolError(f"Unknown tool: {name}")


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        # Raises (and Corral refuses the plugin, naming the reason) when
        # LOCAL_TIMEZONE is not a zone, as the original exits at startup.
        return tools(timezones.local_zone_name(os.environ))

    def call(self, name: str, arguments: str) -> CallResult:
        args = json.loads(arguments)  # validated against the input schema by the host
        try:
            answer = run(name, args)
        except timezones.ToolError as err:
            return CallResult(
                content=text(f"Error executing tool {name}: {err}"), structured_content=None, is_error=True
            )
        except Exception:
            host.log(LogLevel.ERROR, f"{name}: internal error\n{traceback.format_exc()}")
            return CallResult(
                content=text(f"internal error in {name}; see the server log"), structured_content=None, is_error=True
            )
        # As the original (pydantic's model_dump_json(indent=2)): the JSON as
        # text, and the same object as structured content.
        return CallResult(
            content=text(json.dumps(answer, indent=2, ensure_ascii=False)),
            structured_content=json.dumps(answer, ensure_ascii=False),
            is_error=False,
        )
