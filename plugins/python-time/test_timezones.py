"""Unit tests for timezones.py, run by CPython (python3 -m unittest in this
folder, with the pinned tzdata on PYTHONPATH). Dates are fixed through the
`now` parameter, so the DST boundaries are checked on their own days."""

import unittest
from datetime import datetime
from zoneinfo import ZoneInfo

import timezones
from timezones import ToolError


def on(year, month, day, hour=12, minute=0):
    return lambda zone: datetime(year, month, day, hour, minute, tzinfo=zone)


class ConvertTime(unittest.TestCase):
    def test_fractional_offsets(self):
        result = timezones.convert_time("America/New_York", "14:30", "Asia/Kathmandu", now=on(2026, 11, 26))
        self.assertEqual(result["time_difference"], "+10.75h")
        self.assertEqual(result["target"]["datetime"], "2026-11-27T01:15:00+05:45")
        self.assertEqual(result["target"]["day_of_week"], "Friday")
        result = timezones.convert_time("UTC", "00:00", "Asia/Kolkata", now=on(2026, 1, 1))
        self.assertEqual(result["time_difference"], "+5.5h")

    def test_whole_hours_keep_one_decimal(self):
        result = timezones.convert_time("Europe/London", "12:00", "Europe/Warsaw", now=on(2026, 7, 1))
        self.assertEqual(result["time_difference"], "+1.0h")
        self.assertTrue(result["source"]["is_dst"])

    def test_a_time_skipped_by_spring_forward(self):
        with self.assertRaisesRegex(ToolError, r"^Invalid time: 02:30 does not exist in America/New_York on 2026-03-08 \(skipped by a clock change\)$"):
            timezones.convert_time("America/New_York", "02:30", "UTC", now=on(2026, 3, 8))
        # The next day it exists, in daylight time.
        result = timezones.convert_time("America/New_York", "02:30", "UTC", now=on(2026, 3, 9))
        self.assertEqual(result["source"]["datetime"], "2026-03-09T02:30:00-04:00")

    def test_lord_howe_half_hour_dst(self):
        # Lord Howe moves by 30 minutes: +10:30 in winter, +11:00 in summer.
        summer = timezones.convert_time("Australia/Lord_Howe", "12:00", "UTC", now=on(2026, 1, 15))
        winter = timezones.convert_time("Australia/Lord_Howe", "12:00", "UTC", now=on(2026, 7, 15))
        self.assertEqual((summer["time_difference"], summer["source"]["is_dst"]), ("-11.0h", True))
        self.assertEqual((winter["time_difference"], winter["source"]["is_dst"]), ("-10.5h", False))

    def test_fall_back_takes_the_first_occurrence(self):
        result = timezones.convert_time("Europe/London", "01:30", "UTC", now=on(2026, 10, 25))
        self.assertEqual(result["source"]["datetime"], "2026-10-25T01:30:00+01:00")

    def test_lenient_time_format_as_strptime(self):
        result = timezones.convert_time("UTC", "1:5", "UTC", now=on(2026, 1, 1))
        self.assertEqual(result["source"]["datetime"], "2026-01-01T01:05:00+00:00")
        for bad in ("25:00", "12:60", "noon", "", "12:00:00"):
            with self.assertRaisesRegex(ToolError, r"^Invalid time format\. Expected HH:MM \[24-hour format\]$"):
                timezones.convert_time("UTC", bad, "UTC")

    def test_missing_zones_come_first(self):
        with self.assertRaisesRegex(ToolError, "^Missing required argument: source_timezone$"):
            timezones.convert_time("", "99:99", "")
        with self.assertRaisesRegex(ToolError, "^Missing required argument: target_timezone$"):
            timezones.convert_time("Nope/Nope", "12:00", "")


class Zones(unittest.TestCase):
    def error(self, name):
        with self.assertRaises(ToolError) as caught:
            timezones.get_current_time(name)
        return str(caught.exception)

    def test_the_originals_messages(self):
        self.assertEqual(self.error("Invalid/Zone"), "Invalid timezone: 'No time zone found with key Invalid/Zone'")
        self.assertEqual(self.error("europe/london"), "Invalid timezone: 'No time zone found with key europe/london'")
        self.assertEqual(self.error("../etc"), "Invalid timezone: ZoneInfo keys must refer to subdirectories of TZPATH, got: ../etc")
        self.assertEqual(self.error("/etc/passwd"), "Invalid timezone: ZoneInfo keys may not be absolute paths, got: /etc/passwd")
        self.assertEqual(self.error("America"), "Invalid timezone: [Errno 21] Is a directory: 'tzdata/zoneinfo/America'")
        self.assertEqual(self.error("tzdata.zi"), "Invalid timezone: Invalid TZif file: magic not found")
        self.assertEqual(self.error("a\0b"), "Invalid timezone: embedded null byte")
        self.assertEqual(self.error("America.Argentina/Salta"), "Invalid timezone: 'No time zone found with key America.Argentina/Salta'")
        self.assertEqual(
            self.error("Europe/" + "x" * 256),
            f"Invalid timezone: [Errno 36] File name too long: 'tzdata/zoneinfo/Europe/{'x' * 256}'",
        )
        self.assertEqual(self.error(""), "Missing required argument: timezone")

    def test_current_time(self):
        result = timezones.get_current_time("Asia/Kathmandu", now=on(2026, 6, 1, 9, 7))
        self.assertEqual(
            result,
            {"timezone": "Asia/Kathmandu", "datetime": "2026-06-01T09:07:00+05:45", "day_of_week": "Monday", "is_dst": False},
        )
        self.assertEqual(ZoneInfo("Etc/GMT+5").utcoffset(None).total_seconds(), -5 * 3600)

    def test_local_zone(self):
        self.assertEqual(timezones.local_zone_name({"LOCAL_TIMEZONE": "Asia/Tokyo", "TZ": "UTC"}), "Asia/Tokyo")
        self.assertEqual(timezones.local_zone_name({"TZ": ":Europe/Paris"}), "Europe/Paris")
        self.assertEqual(timezones.local_zone_name({"TZ": "CET-1CEST"}), "UTC")
        self.assertEqual(timezones.local_zone_name({}), "UTC")
        with self.assertRaisesRegex(ValueError, "not a known IANA timezone name"):
            timezones.local_zone_name({"LOCAL_TIMEZONE": "Mars/Olympus"})


if __name__ == "__main__":
    unittest.main()
