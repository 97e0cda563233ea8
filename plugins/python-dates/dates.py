"""Calendar arithmetic for the python-dates plugin, in plain standard-library
Python so that it can be unit-tested with any CPython (see test_dates.py)
without the component bindings.

Every function takes already-parsed arguments and returns a JSON-ready dict,
or raises DateError with a message written for the model that called the
tool: it says what was wrong and what would be accepted instead.
"""

import calendar
import datetime as dt
import re

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# Accepted by parse_offset: "Z", "+05:30", "-0800", "+05".
_OFFSET = re.compile(r"^(?:Z|([+-])(\d{2}):?(\d{2})?)$")


class DateError(ValueError):
    """Bad input that the input schema cannot catch (e.g. February 30th)."""


def today() -> dt.date:
    # UTC, so that "today" does not depend on a time zone the sandbox lacks.
    return dt.datetime.now(dt.timezone.utc).date()


def parse_date(text: str, field: str) -> dt.date:
    if text == "today":
        return today()
    try:
        return dt.date.fromisoformat(text)
    except ValueError as err:
        raise DateError(
            f"{field}: {text!r} is not a valid calendar date ({err}); "
            "use YYYY-MM-DD, e.g. 2024-02-29, or \"today\""
        ) from None


def parse_offset(text: str) -> dt.timezone:
    match = _OFFSET.match(text)
    if not match:
        raise DateError(f"utc_offset: {text!r} is not a UTC offset; use Z, +HH:MM or -HH:MM, e.g. +05:30")
    if text == "Z":
        return dt.timezone.utc
    sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
    if hours > 23 or minutes > 59:
        raise DateError(f"utc_offset: {text!r} is out of range; offsets go from -23:59 to +23:59")
    delta = dt.timedelta(hours=hours, minutes=minutes)
    return dt.timezone(-delta if sign == "-" else delta)


def date_info(day: dt.date) -> dict:
    iso = day.isocalendar()
    return {
        "date": day.isoformat(),
        "weekday": WEEKDAYS[day.weekday()],
        "iso_weekday": iso.weekday,
        "iso_week": iso.week,
        "iso_year": iso.year,
        "day_of_year": day.timetuple().tm_yday,
        "quarter": (day.month - 1) // 3 + 1,
        "is_leap_year": calendar.isleap(day.year),
        "days_in_month": calendar.monthrange(day.year, day.month)[1],
        "days_in_year": 366 if calendar.isleap(day.year) else 365,
        "is_weekend": day.weekday() >= 5,
    }


def _add_months(day: dt.date, months: int) -> dt.date:
    """Moves by whole months, clamping to the month's last day (Jan 31 + 1 month = Feb 28/29),
    which is what people mean by "one month later"."""
    index = day.year * 12 + (day.month - 1) + months
    year, month = divmod(index, 12)
    if not dt.MINYEAR <= year <= dt.MAXYEAR:
        raise DateError(f"the result would be in year {year}, outside the supported years 1 to 9999")
    return dt.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _weekdays_between(start: dt.date, end: dt.date) -> int:
    """Monday-to-Friday days in [start, end) for start <= end, in O(1)."""
    days = (end - start).days
    full_weeks, rest = divmod(days, 7)
    count = full_weeks * 5
    first = start.weekday()
    count += sum(1 for i in range(rest) if (first + i) % 7 < 5)
    return count


def date_diff(start: dt.date, end: dt.date) -> dict:
    sign = -1 if end < start else 1
    low, high = (start, end) if sign > 0 else (end, start)
    # Calendar breakdown: the most whole months that fit, then the days left.
    months = (high.year - low.year) * 12 + (high.month - low.month)
    if _add_months(low, months) > high:
        months -= 1
    rest = (high - _add_months(low, months)).days
    days = (high - low).days
    return {
        "start": start.isoformat(),
        "end": end.isoformat(),
        "days": sign * days,
        "weeks": sign * (days // 7),
        "remaining_days": sign * (days % 7),
        "years": sign * (months // 12),
        "months": sign * (months % 12),
        "month_remaining_days": sign * rest,
        "business_days": sign * _weekdays_between(low, high),
    }


def date_add(day: dt.date, years: int, months: int, weeks: int, days: int, business_days: int) -> dict:
    try:
        result = _add_months(day, years * 12 + months)
        result += dt.timedelta(weeks=weeks, days=days)
        step = 1 if business_days >= 0 else -1
        # Business days move one weekday at a time, skipping Saturdays and Sundays.
        # Whole weeks first (5 business days each), leaving 1 to 5 days to step
        # through so that a start on a weekend still lands on a weekday.
        remaining = abs(business_days)
        full_weeks = max(remaining - 1, 0) // 5
        remaining -= full_weeks * 5
        result += dt.timedelta(weeks=step * full_weeks)
        while remaining:
            result += dt.timedelta(days=step)
            if result.weekday() < 5:
                remaining -= 1
    except OverflowError:
        raise DateError("the result is outside the supported dates 0001-01-01 to 9999-12-31") from None
    return {"start": day.isoformat(), "date": result.isoformat(), "weekday": WEEKDAYS[result.weekday()]}


def month_calendar(year: int, month: int, first_weekday: str) -> str:
    first = calendar.SUNDAY if first_weekday == "sunday" else calendar.MONDAY
    return calendar.TextCalendar(first).formatmonth(year, month)


def convert_timestamp(value: str, offset: dt.timezone) -> dict:
    """value is Unix seconds (an integer or decimal) or an ISO 8601 date-time;
    a date-time without an offset is read as UTC."""
    text = value.strip()
    try:
        if re.fullmatch(r"[+-]?\d+(\.\d+)?", text):
            moment = dt.datetime.fromtimestamp(float(text), dt.timezone.utc)
        else:
            # Python 3.11 accepts "Z" and most ISO 8601 forms.
            moment = dt.datetime.fromisoformat(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.timezone.utc)
    except (ValueError, OverflowError, OSError) as err:
        raise DateError(
            f"value: {value!r} is neither Unix seconds nor an ISO 8601 date-time ({err}); "
            "examples: 1700000000, 2024-02-29T12:00:00Z, 2024-02-29T12:00:00+05:30"
        ) from None
    local = moment.astimezone(offset)
    seconds = moment.timestamp()
    return {
        "unix_seconds": int(seconds) if seconds == int(seconds) else seconds,
        "utc": moment.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z"),
        "local": local.isoformat(),
        "local_weekday": WEEKDAYS[local.weekday()],
    }
