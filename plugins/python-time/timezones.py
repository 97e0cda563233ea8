"""The time tools' logic, as plain Python that CPython can test: the
behaviour of the reference server `mcp-server-time` 2026.10.19 (PyPI),
`get_current_time` and `convert_time`, call for call.

Time zones come from the bundled `tzdata` package only (the component has no
/usr/share/zoneinfo), and a zone name must be an exact IANA key, as the
original requires.
"""

import _strptime  # noqa: F401  (datetime.strptime imports it lazily; componentize-py keeps only what was imported at build time)
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import tzbundle

tzbundle.install()

# Every zone parsed once, here: componentize-py runs this module while it
# builds the component and snapshots the result, so a call finds its zone
# in ZoneInfo's cache (as the original's process does after its first call
# of a zone) rather than parsing the zone's file again, which took most of
# a call (docs/benchmarks.md, "Where a call's time goes"). About 2 MB of
# the snapshot.
PARSED = {key: ZoneInfo(key) for key in tzbundle.available_timezones()}

class ToolError(Exception):
    """A failure the model reads as an isError result (the original's
    `ToolError`); its message is the original's."""


def known_timezones() -> frozenset[str]:
    """The exact IANA keys of the database (the original's set, read from
    the same tzdata list)."""
    return tzbundle.available_timezones()


def load_zoneinfo(name: str) -> ZoneInfo:
    """`ZoneInfo(name)`, accepting only an exact IANA key. `ZoneInfo` runs
    first, so a path or a directory keeps the error zoneinfo gives it."""
    zone = ZoneInfo(name)
    if name not in known_timezones():
        raise ZoneInfoNotFoundError(f"No time zone found with key {name}")
    return zone


def get_zoneinfo(name: str) -> ZoneInfo:
    try:
        return load_zoneinfo(name)
    except Exception as e:
        raise ToolError(f"Invalid timezone: {str(e)}") from e


def local_zone_name(environ) -> str:
    """The local zone: LOCAL_TIMEZONE, which must be a known IANA key (the
    original exits when --local-timezone is not one), else TZ when it is one
    (a leading ':' is dropped, as tzlocal does), else UTC."""
    explicit = environ.get("LOCAL_TIMEZONE")
    if explicit:
        try:
            load_zoneinfo(explicit)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError(
                f"invalid LOCAL_TIMEZONE {explicit!r}: not a known IANA timezone name"
            ) from None
        return explicit
    tz = environ.get("TZ", "").lstrip(":")
    if tz:
        try:
            load_zoneinfo(tz)
            return tz
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    return "UTC"


def require(name: str, value: str) -> None:
    """An empty zone is reported as missing, not as zoneinfo's own error."""
    if not value:
        raise ToolError(f"Missing required argument: {name}")


def time_result(name: str, moment: datetime) -> dict:
    return {
        "timezone": name,
        "datetime": moment.isoformat(timespec="seconds"),
        "day_of_week": moment.strftime("%A"),
        "is_dst": bool(moment.dst()),
    }


def get_current_time(timezone_name: str, now=None) -> dict:
    """`now(zone)` gives the current time; tests pass a fixed one."""
    require("timezone", timezone_name)
    zone = get_zoneinfo(timezone_name)
    current = now(zone) if now else datetime.now(zone)
    return time_result(timezone_name, current)


def convert_time(source_tz: str, time_str: str, target_tz: str, now=None) -> dict:
    """`time_str` (HH:MM) on today's date in `source_tz`, in `target_tz`."""
    require("source_timezone", source_tz)
    require("target_timezone", target_tz)
    source_zone = get_zoneinfo(source_tz)
    target_zone = get_zoneinfo(target_tz)
    try:
        parsed = datetime.strptime(time_str, "%H:%M").time()
    except ValueError:
        raise ToolError("Invalid time format. Expected HH:MM [24-hour format]") from None

    today = now(source_zone) if now else datetime.now(source_zone)
    source_time = datetime(
        today.year, today.month, today.day, parsed.hour, parsed.minute, tzinfo=source_zone
    )
    # A wall-clock time skipped by a clock change does not survive a round
    # trip through UTC.
    round_trip = datetime.fromtimestamp(source_time.timestamp(), source_zone)
    if round_trip.replace(tzinfo=None) != source_time.replace(tzinfo=None):
        raise ToolError(
            f"Invalid time: {time_str} does not exist in {source_tz} on "
            f"{source_time.date().isoformat()} (skipped by a clock change)"
        )

    target_time = source_time.astimezone(target_zone)
    source_offset = source_time.utcoffset() or timedelta()
    target_offset = target_time.utcoffset() or timedelta()
    hours = (target_offset - source_offset).total_seconds() / 3600
    if hours.is_integer():
        difference = f"{hours:+.1f}h"
    else:
        # Fractional hours, like Nepal's UTC+5:45.
        difference = f"{hours:+.2f}".rstrip("0").rstrip(".") + "h"

    return {
        "source": time_result(source_tz, source_time),
        "target": time_result(target_tz, target_time),
        "time_difference": difference,
    }


def _warm_moment(zone):
    return datetime(2026, 1, 1, 12, 0, tzinfo=zone)


# Both tools run once here too, at a fixed moment, for what they cache as
# the original's process does after its first call: strptime's compiled
# "%H:%M" pattern above all, which it compiled again at every call, a third
# of a convert_time call. Nothing of these runs reaches an answer.
get_current_time("UTC", now=_warm_moment)
convert_time("UTC", "12:00", "Asia/Tokyo", now=_warm_moment)
