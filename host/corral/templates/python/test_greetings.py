"""Unit tests of greetings.py with the machine's python3 (no bindings
needed): ./test, or python3 -m unittest"""

import unittest

import greetings


class GreetingsTest(unittest.TestCase):
    def test_hello_in_a_known_language(self):
        self.assertEqual(greetings.hello_in("french"), "Bonjour")
        self.assertIsNone(greetings.hello_in("klingon"))

    def test_the_listing_has_every_greeting(self):
        self.assertIn("- german: Hallo\n", greetings.markdown())
        self.assertEqual(greetings.markdown().count("\n"), len(greetings.GREETINGS))

    def test_languages_complete_by_prefix(self):
        self.assertEqual(greetings.complete_language("Fr"), ["french"])
        self.assertEqual(len(greetings.complete_language("")), len(greetings.GREETINGS))


if __name__ == "__main__":
    unittest.main()
