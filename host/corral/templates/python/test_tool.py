"""Unit tests of tool.py with the machine's python3 (no bindings needed):
./test, or python3 -m unittest"""

import unittest

import tool


class GreetTest(unittest.TestCase):
    def test_greets_by_name(self):
        self.assertEqual(tool.greet("Ada"), "Hello, Ada!")

    def test_a_blank_name_is_a_tool_failure(self):
        with self.assertRaisesRegex(tool.ToolFailure, "must not be blank"):
            tool.greet("  ")


if __name__ == "__main__":
    unittest.main()
