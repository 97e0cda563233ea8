"""Corral plugin `python-dates`: calendar arithmetic that language models get
wrong when they do it in their heads (weekdays, ISO weeks, business days,
month ends, Unix timestamps).

Built with componentize-py against wit/ (world `plugin`) by plugins/build-python;
the calendar logic lives in dates.py, this module only speaks the plugin contract.
"""

import dataclasses
import json
import traceback

import dates
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool, ToolAnnotations
from wit_world.imports import host
from wit_world.imports.types import Content_Text, LogLevel, TextContent

DATE = {
    "type": "string",
    "pattern": r"^(\d{4}-\d{2}-\d{2}|today)$",
    "description": "A calendar date as YYYY-MM-DD (years 0001 to 9999), or \"today\" (UTC).",
}
# Wide enough for any real use and small enough that no call runs long.
COUNT = {"type": "integer", "minimum": -100000, "maximum": 100000, "default": 0}


def obj(properties: dict, required: list) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def int_fields(*names: str) -> dict:
    return {name: {"type": "integer"} for name in names}


DATE_INFO_OUTPUT = obj(
    {
        "date": {"type": "string", "description": "The date, YYYY-MM-DD."},
        "weekday": {"type": "string", "description": "Day of the week in English, e.g. Monday."},
        "iso_weekday": {"type": "integer", "description": "1 (Monday) to 7 (Sunday)."},
        "iso_week": {"type": "integer", "description": "ISO 8601 week number, 1 to 53."},
        "iso_year": {"type": "integer", "description": "The ISO 8601 week-numbering year, which differs from the calendar year around New Year."},
        "day_of_year": {"type": "integer", "description": "1 to 366."},
        "quarter": {"type": "integer", "description": "Calendar quarter, 1 to 4."},
        "is_leap_year": {"type": "boolean"},
        "days_in_month": {"type": "integer"},
        "days_in_year": {"type": "integer"},
        "is_weekend": {"type": "boolean", "description": "Saturday or Sunday."},
    },
    ["date", "weekday", "iso_weekday", "iso_week", "iso_year", "day_of_year", "quarter",
     "is_leap_year", "days_in_month", "days_in_year", "is_weekend"],
)

DATE_DIFF_OUTPUT = obj(
    {
        "start": {"type": "string"},
        "end": {"type": "string"},
        "days": {"type": "integer", "description": "end minus start in days; negative when end is earlier."},
        **int_fields("weeks", "remaining_days"),
        "years": {"type": "integer", "description": "With months and month_remaining_days: the calendar breakdown, e.g. 1 year 2 months 3 days."},
        **int_fields("months", "month_remaining_days"),
        "business_days": {"type": "integer", "description": "Monday-to-Friday days from start (included) to end (excluded); no public holidays."},
    },
    ["start", "end", "days", "weeks", "remaining_days", "years", "months", "month_remaining_days", "business_days"],
)

DATE_ADD_OUTPUT = obj(
    {
        "start": {"type": "string"},
        "date": {"type": "string", "description": "The resulting date, YYYY-MM-DD."},
        "weekday": {"type": "string"},
    },
    ["start", "date", "weekday"],
)

TIMESTAMP_OUTPUT = obj(
    {
        "unix_seconds": {"type": "number", "description": "Seconds since 1970-01-01T00:00:00Z."},
        "utc": {"type": "string", "description": "ISO 8601 in UTC, ending in Z."},
        "local": {"type": "string", "description": "ISO 8601 at the requested utc_offset."},
        "local_weekday": {"type": "string"},
    },
    ["unix_seconds", "utc", "local", "local_weekday"],
)

READ_ONLY = ToolAnnotations(
    title=None, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def tool(name: str, title: str, description: str, input_schema: dict, output_schema: dict | None) -> Tool:
    return Tool(
        name=name,
        title=title,
        description=description,
        input_schema=json.dumps(input_schema),
        output_schema=json.dumps(output_schema) if output_schema else None,
        annotations=dataclasses.replace(READ_ONLY, title=title),
        icons=[],
        task_support=None,
    )


TOOLS = [
    tool(
        "date_info",
        "Date info",
        "Describe a calendar date: weekday, ISO 8601 week and week-year, day of the year, quarter, "
        "whether the year is a leap year, the number of days in its month and year. "
        "Returns structured JSON.",
        obj({"date": DATE}, ["date"]),
        DATE_INFO_OUTPUT,
    ),
    tool(
        "date_diff",
        "Date difference",
        "Count the time between two dates: total days (negative when end is before start), "
        "weeks and days, a calendar breakdown in years, months and days, and business days "
        "(Monday to Friday, start included, end excluded, no public holidays). Returns structured JSON.",
        obj({"start": DATE, "end": DATE}, ["start", "end"]),
        DATE_DIFF_OUTPUT,
    ),
    tool(
        "date_add",
        "Add to a date",
        "Move a date by years, months, weeks, days and/or business days (any may be negative; "
        "applied in that order). Adding months keeps the day of the month but clamps it to the "
        "month's last day (2024-01-31 plus 1 month is 2024-02-29). Business days skip Saturdays "
        "and Sundays (no public holidays). Returns the new date and its weekday as structured JSON.",
        obj(
            {
                "date": DATE,
                "years": COUNT,
                "months": COUNT,
                "weeks": COUNT,
                "days": COUNT,
                "business_days": COUNT,
            },
            ["date"],
        ),
        DATE_ADD_OUTPUT,
    ),
    tool(
        "month_calendar",
        "Month calendar",
        "Render one month as a plain-text calendar grid (like the Unix `cal` command), "
        "weeks starting on Monday unless first_weekday is \"sunday\".",
        obj(
            {
                "year": {"type": "integer", "minimum": 1, "maximum": 9999},
                "month": {"type": "integer", "minimum": 1, "maximum": 12},
                "first_weekday": {"type": "string", "enum": ["monday", "sunday"], "default": "monday"},
            },
            ["year", "month"],
        ),
        None,
    ),
    tool(
        "convert_timestamp",
        "Convert timestamp",
        "Convert between Unix seconds and ISO 8601 date-times. value is either Unix seconds "
        "(e.g. \"1700000000\" or \"1700000000.5\") or an ISO 8601 date-time (e.g. "
        "\"2024-02-29T12:00:00+05:30\"; without an offset it is read as UTC). Returns the Unix "
        "seconds, the UTC time and the time at utc_offset (default Z) as structured JSON.",
        obj(
            {
                "value": {"type": "string", "minLength": 1, "maxLength": 64},
                "utc_offset": {
                    "type": "string",
                    "pattern": r"^(Z|[+-]\d{2}(:?\d{2})?)$",
                    "default": "Z",
                    "description": "Z, or +HH:MM / -HH:MM, e.g. -08:00.",
                },
            },
            ["value"],
        ),
        TIMESTAMP_OUTPUT,
    ),
]


def run(name: str, args: dict) -> dict | str:
    """The tool's answer: a dict becomes structured content, a str plain text."""
    if name == "date_info":
        return dates.date_info(dates.parse_date(args["date"], "date"))
    if name == "date_diff":
        return dates.date_diff(dates.parse_date(args["start"], "start"), dates.parse_date(args["end"], "end"))
    if name == "date_add":
        counts = [args.get(key, 0) for key in ("years", "months", "weeks", "days", "business_days")]
        return dates.date_add(dates.parse_date(args["date"], "date"), *counts)
    if name == "month_calendar":
        return dates.month_calendar(args["year"], args["month"], args.get("first_weekday", "monday"))
    if name == "convert_timestamp":
        return dates.convert_timestamp(args["value"], dates.parse_offset(args.get("utc_offset", "Z")))
    raise dates.DateError(f"unknown tool {name!r}")


def text(message: str) -> list:
    return [Content_Text(TextContent(text=message, annotations=None))]


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        return TOOLS

    def call(self, name: str, arguments: str) -> CallResult:
        # The host has validated the arguments against the input schema, so
        # only what a schema cannot say (February 30th, an out-of-range
        # result) needs checking here.
        args = json.loads(arguments)
        host.log(LogLevel.DEBUG, f"{name} {arguments}")
        try:
            answer = run(name, args)
        except dates.DateError as err:
            host.log(LogLevel.INFO, f"{name}: rejected input: {err}")
            return CallResult(content=text(str(err)), structured_content=None, is_error=True)
        except Exception:
            # A bug, not bad input: keep the traceback in the host log and
            # give the model a short explanation instead of trapping.
            host.log(LogLevel.ERROR, f"{name}: internal error\n{traceback.format_exc()}")
            return CallResult(content=text(f"internal error in {name}; see the server log"), structured_content=None, is_error=True)
        if isinstance(answer, str):
            return CallResult(content=text(answer), structured_content=None, is_error=False)
        # Clients that predate structured content read the same JSON as text.
        encoded = json.dumps(answer)
        return CallResult(content=text(encoded), structured_content=encoded, is_error=False)
