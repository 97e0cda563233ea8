"""Unit tests of glossary.py: python3 -m unittest (from this folder)."""

import unittest

import glossary


class GlossaryTest(unittest.TestCase):
    def test_every_term_has_a_uri_and_a_definition(self):
        for term in glossary.TERMS:
            self.assertEqual(glossary.term_of(glossary.uri(term)), term)
            self.assertTrue(glossary.definition(term))

    def test_other_uris_name_no_term(self):
        self.assertIsNone(glossary.term_of("other://tool"))
        self.assertIsNone(glossary.term_of("glossary://"))
        self.assertIsNone(glossary.term_of("glossary://a/b"))
        self.assertIsNone(glossary.definition("nope"))

    def test_completion_by_prefix(self):
        self.assertEqual(glossary.complete("P"), ["prompt"])
        self.assertEqual(glossary.complete(""), list(glossary.TERMS))
        self.assertEqual(glossary.complete("x"), [])


if __name__ == "__main__":
    unittest.main()
