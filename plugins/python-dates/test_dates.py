"""Unit tests of the calendar logic with the machine's CPython (no bindings
needed): python3 -m unittest discover -s plugins/python-dates"""

import datetime as dt
import unittest

import dates


def day(text: str) -> dt.date:
    return dates.parse_date(text, "date")


class DatesTest(unittest.TestCase):
    def test_iso_week_year_differs_around_new_year(self):
        info = dates.date_info(day("2024-12-30"))
        self.assertEqual((info["iso_year"], info["iso_week"], info["weekday"]), (2025, 1, "Monday"))
        self.assertTrue(info["is_leap_year"])

    def test_invalid_date_is_a_date_error(self):
        with self.assertRaisesRegex(dates.DateError, "2023-02-29"):
            day("2023-02-29")

    def test_month_end_clamps(self):
        self.assertEqual(dates.date_add(day("2024-01-31"), 0, 1, 0, 0, 0)["date"], "2024-02-29")
        self.assertEqual(dates.date_add(day("2024-02-29"), 1, 0, 0, 0, 0)["date"], "2025-02-28")

    def test_business_days(self):
        # From a Saturday, 5 business days end on the next Friday.
        self.assertEqual(dates.date_add(day("2024-06-01"), 0, 0, 0, 0, 5)["date"], "2024-06-07")
        self.assertEqual(dates.date_add(day("2024-06-03"), 0, 0, 0, 0, 10)["date"], "2024-06-17")
        self.assertEqual(dates.date_add(day("2024-06-03"), 0, 0, 0, 0, -1)["date"], "2024-05-31")
        self.assertEqual(dates.date_diff(day("2024-06-03"), day("2024-06-17"))["business_days"], 10)

    def test_business_days_agree_with_stepping(self):
        start = day("2024-01-01")
        for offset in range(0, 40):
            end = start + dt.timedelta(days=offset)
            slow = sum(1 for i in range(offset) if (start + dt.timedelta(days=i)).weekday() < 5)
            self.assertEqual(dates.date_diff(start, end)["business_days"], slow)

    def test_diff_breakdown(self):
        diff = dates.date_diff(day("2020-02-29"), day("2024-03-15"))
        self.assertEqual((diff["years"], diff["months"], diff["month_remaining_days"]), (4, 0, 15))
        back = dates.date_diff(day("2024-03-15"), day("2020-02-29"))
        self.assertEqual(back["days"], -diff["days"])

    def test_overflow_is_a_date_error(self):
        with self.assertRaises(dates.DateError):
            dates.date_add(day("9999-12-31"), 0, 0, 0, 1, 0)
        with self.assertRaises(dates.DateError):
            dates.date_add(day("9999-12-31"), 0, 1, 0, 0, 0)

    def test_timestamps(self):
        out = dates.convert_timestamp("1700000000", dates.parse_offset("+05:30"))
        self.assertEqual(out["utc"], "2023-11-14T22:13:20Z")
        self.assertEqual(out["local"], "2023-11-15T03:43:20+05:30")
        self.assertEqual(dates.convert_timestamp("2023-11-14T22:13:20", dt.timezone.utc)["unix_seconds"], 1700000000)
        with self.assertRaises(dates.DateError):
            dates.convert_timestamp("yesterday", dt.timezone.utc)


if __name__ == "__main__":
    unittest.main()
