"""urls.normalize against pydantic's AnyUrl serialization, run with plain
CPython outside the component: python3 -m unittest test_urls (from this
folder). The expected strings are what pydantic 2.14 (pydantic-core's Rust
`url` crate) writes for each input."""

import unittest

from urls import InvalidUrl, join, normalize, robots_txt_url


class Normalize(unittest.TestCase):
    def test_like_anyurl(self):
        cases = {
            "HTTP://Example.COM:80": "http://example.com/",
            "http://127.0.0.1:1/ä b?q=ä b\"<>'`{}#f g`": "http://127.0.0.1:1/%C3%A4%20b?q=%C3%A4%20b%22%3C%3E%27`{}#f%20g%60",
            "http://x/a/../b/./c": "http://x/b/c",
            "http://x\\a\\b": "http://x/a/b",
            "ftp://x/y": "ftp://x/y",
            "http://2130706433/": "http://127.0.0.1/",
            "http://0x7f.1/": "http://127.0.0.1/",
            "http://user:pa ss@x/": "http://user:pa%20ss@x/",
            "https://x:443/p?": "https://x/p?",
            "http://x/p#": "http://x/p#",
            "http://bücher.de/": "http://xn--bcher-kva.de/",
            "http:///a": "http://a/",
            "mailto:a@b": "mailto:a@b",
            "http://x/%7e%zz": "http://x/%7e%zz",
            " http://x/\t": "http://x/",
        }
        for given, expected in cases.items():
            self.assertEqual(normalize(given), expected, given)

    def test_refusals_in_pydantics_words(self):
        for given, reason in {
            "not a url": "relative URL without a base",
            "http://x:99999/": "invalid port number",
            "http://": "empty host",
        }.items():
            with self.assertRaises(InvalidUrl) as caught:
                normalize(given)
            self.assertEqual(str(caught.exception), reason)


class Helpers(unittest.TestCase):
    def test_robots_and_join(self):
        self.assertEqual(robots_txt_url("http://h:1/a/b?q#f"), "http://h:1/robots.txt")
        self.assertEqual(join("http://h/a/b", "/c"), "http://h/c")
        self.assertEqual(join("http://h/a/b#top", "c"), "http://h/a/c#top")


if __name__ == "__main__":
    unittest.main()
