"""urls.normalize against pydantic's own AnyUrl serialization (the
original's `str(url)`): run with the reference server's Python, which has
the pinned pydantic (tests/reference/fetch.rs runs it), outside the
component."""

import unittest

import httpx
from pydantic import AnyUrl, TypeAdapter, ValidationError

import httpx_parts
from urls import InvalidUrl, normalize, redirect_url, robots_txt_url

ANY_URL = TypeAdapter(AnyUrl)

CASES = [
    "HTTP://Example.COM:80",
    "http://127.0.0.1:1/ä b?q=ä b\"<>'`{}#f g`",
    "http://x/a/../b/./c",
    "http://x/a/b/..",
    "http://x/a/%2e%2E/c",
    "http://x\\a\\b",
    "ftp://x/y",
    "ftp://x:21/y",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://127.1:8080",
    "http://user:pa ss@x/",
    "http://user@x/",
    "https://x:443/p?",
    "https://x:8443/p",
    "http://x/p#",
    "http://bücher.de/",
    "http://straße.de/",
    "http://FAß.de/x",
    "http://☃.net/",
    "http://ΣΑΣ.gr/",
    "http://ｅｘａｍｐｌｅ.com/",
    "http://Bücher.DE./",
    "http:///a",
    "mailto:a@b",
    "http://x/%7e%zz",
    " http://x/\t",
    "http://[::1]:8080/",
    "http://[0:0::1]/",
    "http://x/?a=1&b=%20&c=d d#frag ment",
    "HTTPS://WWW.Example.org/Path/To/Page.HTML",
]

REFUSED = ["not a url", "http://x:99999/", "http://", "http://x:port/", "//x/y", ""]


def pydantic(url: str):
    try:
        return str(ANY_URL.validate_python(url)), None
    except ValidationError as err:
        return None, err.errors()[0]["msg"].removeprefix("Input should be a valid URL, ")


class Normalize(unittest.TestCase):
    def test_serializes_as_anyurl(self):
        for given in CASES:
            expected, refused = pydantic(given)
            self.assertIsNone(refused, given)
            self.assertEqual(normalize(given), expected, given)

    def test_refuses_as_anyurl_in_its_words(self):
        for given in REFUSED:
            expected, reason = pydantic(given)
            if expected is None and given == "":
                continue  # an empty url never reaches the plugin: the schema has minLength 1
            self.assertIsNone(expected, given)
            with self.assertRaises(InvalidUrl, msg=given) as caught:
                normalize(given)
            self.assertEqual(str(caught.exception), reason, given)


class Helpers(unittest.TestCase):
    def test_robots_txt_url_keeps_only_the_origin(self):
        self.assertEqual(robots_txt_url("http://h:1/a/b?q#f"), "http://h:1/robots.txt")

    def test_redirect_url_is_httpx_clients(self):
        """Against the reference's httpx Client._redirect_url itself, with the
        Location's bytes as a server sends them."""
        client = httpx.Client()
        for base, location in REDIRECTS:
            request = httpx.Request("GET", base)
            response = httpx.Response(302, headers=[(b"Location", location)], request=request)
            try:
                expected = str(client._redirect_url(request, response))
            except httpx.RemoteProtocolError as err:
                expected = repr(err)
            try:
                ours = str(redirect_url(httpx_parts.URL(base), response.headers["location"]))
            except httpx_parts.RemoteProtocolError as err:
                ours = repr(err)
            self.assertEqual(ours, expected, (base, location))


# (base URL, Location header bytes).
REDIRECTS = [
    ("http://h/a/b", b"/c"),
    ("http://h/a/b", b"../c"),
    ("http://h/a/b#top", b"c"),
    ("http://h/a", b"http://o:8/x"),
    ("http://h/a", b"/c d"),
    ("http://h/a", "/café".encode()),
    ("http://h/a", "/café".encode("latin-1")),
    ("http://h/a", "http://Bücher.de/x".encode()),
    ("http://h/a", "http://straße.de/x".encode()),
    ("http://h/a", b"http://x.com:80/y"),
    ("https://h/a", b"https://x.com:443/y?q=a b|c#f g"),
    ("http://h/a", b"HTTP://X.COM/Y"),
    ("http://h/a", b"//other:81/p"),
    ("http://h/a", b"http:/no-host"),
    ("http://h/a", b"?q=1"),
    ("http://h/a/b", b"./c/../d/./e"),
    ("http://h/a", b"/p[1]{x}^`|\\"),
    ("http://h/a", b"http://[::1]:8080/"),
    ("http://h/a", b"http://x:99999/"),
    ("http://h/a", b"http://[::1/"),
    ("http://h/a", b"http://a b/"),
    ("http://h/a", b"ftp://x/y"),
]

if __name__ == "__main__":
    unittest.main()
