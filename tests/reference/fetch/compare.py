"""Drives the reference server mcp-server-fetch 2026.10.24 and `corral serve`
with plugins/python-fetch through the same scripted sessions, with the
official MCP Python SDK, and compares every answer: tools/list (name,
description, input and output schemas, annotations) and each call's content,
structuredContent and isError, or its protocol error. It also compares the
requests each side sent for each call (path and User-Agent, in order), as
the fixture servers saw them.

Usage: python compare.py REFERENCE_PYTHON CORRAL PLUGIN_WASM

The pages are served by two loopback HTTP servers started here: "site"
(the fixture pages of pages/, robots.txt, errors and redirects) and
"outside", which plays a host outside the plugin's grant: the plugin's
manifest allows exactly 127.0.0.1:SITE_PORT, and names under .invalid, which
never resolve (UNRESOLVABLE: a failed lookup is a connection issue for both,
not a refusal). Two sessions are run: with robots.txt obeyed, then ignored
(the original's --ignore-robots-txt, the plugin's IGNORE_ROBOTS_TXT=true in
its manifest's [env]) with a user agent of the user's (the original's
--user-agent, the plugin's USER_AGENT), which every request then carries.

How the original is run, and why:
- with --allow-private-ips, since the fixture servers are on loopback (the
  plugin's equivalent is its grant listing 127.0.0.1:PORT exactly);
- with PATH holding only its virtualenv's bin/: with Node.js and npm on the
  PATH, readabilipy (use_readability=True) npm-installs Readability.js and
  jsdom, unpinned, into its site-packages at the first fetch (printing npm's
  output on the server's stdout, the MCP stream) and simplifies pages with
  them; without Node it takes its pure-Python path, the one a WebAssembly
  component can run and the plugin runs. The driver checks that no
  node_modules was installed.

The differences allowed are the ones in ALLOWED below, each with its reason;
anything else fails. Exits non-zero after printing every mismatch.
"""

import asyncio
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import tool_list_problems  # noqa: E402

PAGES = Path(__file__).parent / "pages"

# Each allowed difference, with its reason (printed in the report).
ALLOWED = {
    "schema": "arguments that break the input schema (a missing url, max_length 0, a string for a "
    "boolean) are refused by Corral's validator before the plugin runs, with its own wording; the "
    "original's is pydantic's. Both are isError results with one text block",
    "grant": "a URL, or a redirect, to a host outside the plugin's [http] allow list: the original (run "
    "with --allow-private-ips) fetches it; Corral refuses the request, so the plugin answers an error naming "
    "the host and its grant (compared with the exact text expected for the URL and port), and the outside "
    "server sees no request from it. The requests both sent to the granted site are the same",
    "size": "a body past 32 MiB, as received or once decoded (a gzip bomb): the original (httpx) reads and "
    "decompresses any size; the plugin stops there, before its memory or fuel limit would, and answers the "
    "exact error expected. The requests both sent are the same",
}

# The plugin's words for a request Corral refused (fetcher.Refused).
REFUSED = ("Corral refused the request to {url}: {host_port} is not in this plugin's [http] allow list"
           " (or is allowed only through a wildcard and resolves to a private address)")
# The plugin's words for a body past its bound (wasi_http.TooLarge).
TOO_LARGE = "the response is larger than 32 MiB, the most this plugin reads"

# (tool, arguments, what may differ): "SITE" in a string becomes the site's
# base URL, "OUTSIDE" the outside server's. What may differ is None, "schema",
# or ("grant", what failed, the URL refused) / ("size", what failed): the
# plugin's exact error is then "Error executing tool fetch: WHAT: " followed
# by REFUSED or TOO_LARGE.
SESSION = [
    # The article: headings, lists, links, code, a table, images.
    ("fetch", {"url": "SITE/article.html"}, None),
    ("fetch", {"url": "SITE/article.html", "max_length": 1000}, None),
    ("fetch", {"url": "SITE/article.html", "max_length": 1000, "start_index": 1000}, None),
    ("fetch", {"url": "SITE/article.html", "start_index": 3500, "max_length": 999999}, None),
    ("fetch", {"url": "SITE/article.html", "start_index": 100000}, None),
    ("fetch", {"url": "SITE/article.html", "raw": True}, None),
    ("fetch", {"url": "SITE/article.html", "raw": True, "max_length": 300, "start_index": 200}, None),
    ("fetch", {"url": "SITE/gzip.html"}, None),
    # A page larger than max_length, paged.
    ("fetch", {"url": "SITE/long.html"}, None),
    ("fetch", {"url": "SITE/long.html", "start_index": 5000}, None),
    ("fetch", {"url": "SITE/long.html", "start_index": 20000, "max_length": 10}, None),
    # Unicode, and a charset other than UTF-8.
    ("fetch", {"url": "SITE/unicode.html"}, None),
    ("fetch", {"url": "SITE/unicode.html", "max_length": 37, "start_index": 40}, None),
    ("fetch", {"url": "SITE/latin1.html"}, None),
    # Not HTML: raw content with the original's prefix.
    ("fetch", {"url": "SITE/data.json"}, None),
    ("fetch", {"url": "SITE/notes.txt"}, None),
    ("fetch", {"url": "SITE/feed.xml"}, None),
    ("fetch", {"url": "SITE/notes.txt", "max_length": 20, "start_index": 5}, None),
    ("fetch", {"url": "SITE/empty-body"}, None),
    # HTML without a content type, or with the wrong one; an empty page.
    ("fetch", {"url": "SITE/no-type"}, None),
    ("fetch", {"url": "SITE/html-as-text"}, None),
    ("fetch", {"url": "SITE/empty.html"}, None),
    # Errors.
    ("fetch", {"url": "SITE/missing"}, None),
    ("fetch", {"url": "SITE/error"}, None),
    # Redirects: one, a chain of every kind, relative, a loop, to a page
    # robots.txt forbids, to a host outside the grant.
    ("fetch", {"url": "SITE/redirect"}, None),
    ("fetch", {"url": "SITE/chain/1"}, None),
    ("fetch", {"url": "SITE/docs/old"}, None),
    ("fetch", {"url": "SITE/loop"}, None),
    ("fetch", {"url": "SITE/to-private"}, None),
    ("fetch", {"url": "SITE/outside"}, ("grant", "Failed to fetch robots.txt OUTSIDE/robots.txt", "OUTSIDE/robots.txt")),
    ("fetch", {"url": "OUTSIDE/landing.html"}, ("grant", "Failed to fetch robots.txt OUTSIDE/robots.txt", "OUTSIDE/robots.txt")),
    # robots.txt forbids /private/.
    ("fetch", {"url": "SITE/private/secret.html"}, None),
    # Locations httpx normalizes: a space, UTF-8 (sent as raw bytes), an
    # unparsable one, a default port, an IDN host (the grant lists its
    # Punycode name, which does not resolve: a connection issue for both).
    ("fetch", {"url": "SITE/to-space"}, None),
    ("fetch", {"url": "SITE/to-utf8"}, None),
    ("fetch", {"url": "SITE/to-bad-url"}, None),
    ("fetch", {"url": "SITE/to-port-80"}, None),
    ("fetch", {"url": "SITE/to-idn"}, None),
    # Hosts the grant lists that do not resolve (.invalid never does): a
    # connection issue for both, not a refusal; ß kept as UTS 46 keeps it.
    ("fetch", {"url": "http://nohost.invalid/page"}, None),
    ("fetch", {"url": "http://straße.invalid/page"}, None),
    # Content encodings: corrupt and truncated gzip, zlib and raw deflate.
    ("fetch", {"url": "SITE/gzip-corrupt.html"}, None),
    ("fetch", {"url": "SITE/gzip-truncated.html"}, None),
    ("fetch", {"url": "SITE/deflate.html"}, None),
    ("fetch", {"url": "SITE/deflate-raw.html"}, None),
    # A gzip bomb: 40 MiB of text from 40 kB; the plugin stops at 32 MiB.
    ("fetch", {"url": "SITE/bomb.txt"}, ("size", "Failed to fetch SITE/bomb.txt")),
    # Other robots.txt answers (a fourth element replaces the site's
    # /robots.txt for that call): refusals, a missing file, a server error
    # whose body is read as rules, rules for the original's user agent, a
    # redirect.
    ("fetch", {"url": "SITE/article.html"}, None, (403, {}, b"")),
    ("fetch", {"url": "SITE/article.html"}, None, (401, {}, b"")),
    ("fetch", {"url": "SITE/article.html", "max_length": 100}, None, (404, {}, b"")),
    ("fetch", {"url": "SITE/article.html"}, None, (500, {}, b"User-agent: *\nDisallow: /\n")),
    ("fetch", {"url": "SITE/article.html"}, None, (200, {}, b"User-agent: ModelContextProtocol\nDisallow: /article\n\nUser-agent: *\nAllow: /\n")),
    ("fetch", {"url": "SITE/unicode.html"}, None, (301, {"Location": "/private/robots.txt"}, b"")),
    # URLs as pydantic's AnyUrl serializes them.
    ("fetch", {"url": "SITE"}, None),
    ("fetch", {"url": "SITE/a/../article.html?q=tide pools&x=ü#Section 2", "max_length": 200}, None),
    ("fetch", {"url": "HTTP://127.0.0.1:SITE_PORT/./unicode.html", "max_length": 100}, None),
    # Bad URLs and arguments.
    ("fetch", {"url": "not a url"}, None),
    ("fetch", {"url": "ftp://127.0.0.1:SITE_PORT/file.txt"}, None),
    ("fetch", {"url": "SITE/article.html", "max_length": 0}, "schema"),
    ("fetch", {"url": "SITE/article.html", "start_index": -1}, "schema"),
    ("fetch", {"url": "SITE/article.html", "raw": "yes"}, "schema"),
    ("fetch", {"url": "SITE/article.html", "max_length": "10"}, "schema"),
    ("fetch", {}, "schema"),
    # Not a tool: a protocol error from both.
    ("no_such_tool", {}, None),
]

# The second run, robots.txt ignored, and a user agent of the user's
# (USER_AGENT, the original's --user-agent): every request carries it.
SESSION_IGNORING_ROBOTS = [
    ("fetch", {"url": "SITE/private/secret.html"}, None),
    ("fetch", {"url": "SITE/to-private"}, None),
    ("fetch", {"url": "SITE/article.html", "max_length": 500}, None),
    ("fetch", {"url": "SITE/chain/1", "max_length": 300}, None),
    ("fetch", {"url": "SITE/loop"}, None),
    ("fetch", {"url": "SITE/missing"}, None),
    ("fetch", {"url": "SITE/outside"}, ("grant", "Failed to fetch SITE/outside", "OUTSIDE/landing.html")),
    ("fetch", {"url": "OUTSIDE/landing.html"}, ("grant", "Failed to fetch OUTSIDE/landing.html", "OUTSIDE/landing.html")),
    ("fetch", {"url": "ftp://127.0.0.1:SITE_PORT/file.txt"}, None),
]

TOOL_FIELDS = ("name", "description", "inputSchema", "outputSchema", "annotations")


class Log:
    """The requests a fixture server saw: (path, User-Agent)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []

    def add(self, entry):
        with self.lock:
            self.requests.append(entry)

    def since(self, mark):
        with self.lock:
            return list(self.requests[mark:])

    def mark(self):
        with self.lock:
            return len(self.requests)


def page(name):
    return (PAGES / name).read_bytes()


def raw_deflate(data):
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


# Past the plugin's 32 MiB bound once decoded (wasi_http.MAX_BODY).
BOMB = gzip.compress(b"a" * (40 * 1024 * 1024), mtime=0)
# The hosts the grant lists beside the site: names that never resolve.
UNRESOLVABLE = ["nohost.invalid", "xn--bcher-kva.invalid", "xn--strae-oqa.invalid"]
USER_AGENT = "FixtureAgent/1.0 (set by the user)"


def site_routes(outside_base):
    """path -> (status, headers, body) for the site."""
    html = "text/html; charset=utf-8"
    redirect = lambda status, to: (status, {"Location": to}, b"")  # noqa: E731
    return {
        "/": (200, {"Content-Type": html}, page("index.html")),
        "/robots.txt": (200, {"Content-Type": "text/plain"}, page("robots.txt")),
        "/article.html": (200, {"Content-Type": html}, page("article.html")),
        "/gzip.html": (200, {"Content-Type": html, "Content-Encoding": "gzip"}, gzip.compress(page("article.html"), mtime=0)),
        "/long.html": (200, {"Content-Type": html}, page("long.html")),
        "/unicode.html": (200, {"Content-Type": html}, page("unicode.html")),
        "/latin1.html": (200, {"Content-Type": "text/html; charset=ISO-8859-1"}, page("latin1.html")),
        "/data.json": (200, {"Content-Type": "application/json"}, page("data.json")),
        "/notes.txt": (200, {"Content-Type": "text/plain; charset=utf-8"}, page("notes.txt")),
        "/feed.xml": (200, {"Content-Type": "application/rss+xml"}, page("feed.xml")),
        "/empty-body": (200, {"Content-Type": "text/plain"}, b""),
        "/no-type": (200, {}, page("index.html")),
        "/html-as-text": (200, {"Content-Type": "text/plain"}, page("index.html")),
        "/empty.html": (200, {"Content-Type": html}, page("empty.html")),
        "/private/secret.html": (200, {"Content-Type": html}, page("secret.html")),
        "/private/robots.txt": (200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /unicode\n"),
        "/missing": (404, {"Content-Type": html}, b"<html><body><h1>Not found</h1></body></html>"),
        "/error": (500, {"Content-Type": html}, b"<html><body><h1>Internal error</h1></body></html>"),
        "/redirect": redirect(302, "/article.html"),
        "/chain/1": redirect(301, "/chain/2"),
        "/chain/2": redirect(302, "3"),
        "/chain/3": redirect(307, "/chain/4"),
        "/chain/4": redirect(308, "/unicode.html"),
        "/docs/old": redirect(301, "new"),
        "/docs/new": redirect(303, "../article.html"),
        "/loop": redirect(302, "/loop"),
        "/to-private": redirect(302, "/private/secret.html"),
        "/outside": redirect(302, f"{outside_base}/landing.html"),
        "/to-space": redirect(302, "/two words.html"),
        "/two%20words.html": (200, {"Content-Type": html}, page("unicode.html")),
        # send_header writes a str as Latin-1: this sends the UTF-8 bytes.
        "/to-utf8": redirect(302, "/café.html".encode().decode("latin-1")),
        "/caf%C3%A9.html": (200, {"Content-Type": html}, page("article.html")),
        "/to-bad-url": redirect(302, "http://[::1/"),
        "/to-port-80": redirect(302, "http://nohost.invalid:80/y"),
        "/to-idn": redirect(301, "http://Bücher.invalid/x".encode().decode("latin-1")),
        "/gzip-corrupt.html": (200, {"Content-Type": html, "Content-Encoding": "gzip"}, b"<html>not gzip</html>"),
        "/gzip-truncated.html": (200, {"Content-Type": html, "Content-Encoding": "gzip"}, gzip.compress(page("article.html"), mtime=0)[:1500]),
        "/deflate.html": (200, {"Content-Type": html, "Content-Encoding": "deflate"}, zlib.compress(page("long.html"))),
        "/deflate-raw.html": (200, {"Content-Type": html, "Content-Encoding": "deflate"}, raw_deflate(page("unicode.html"))),
        "/bomb.txt": (200, {"Content-Type": "text/plain", "Content-Encoding": "gzip"}, BOMB),
    }


def serve(routes, log):
    """A loopback HTTP server answering from `routes` (anything else: 404),
    logging every request; returns the server (its port in server_address)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            log.add((self.path, self.headers.get("User-Agent")))
            path = self.path.split("?", 1)[0]
            status, headers, body = routes().get(path, (404, {"Content-Type": "text/plain"}, b"not here"))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def answer(result) -> dict:
    """The parts of a CallToolResult that are compared."""
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {key: dumped.get(key) for key in ("content", "structuredContent", "isError")}


async def ask(session, tool, arguments):
    try:
        return answer(await session.call_tool(tool, arguments))
    except MCPError as err:
        return {"protocolError": {"code": err.error.code, "message": err.error.message}}


def one_text_error(result) -> bool:
    return (
        result.get("isError") is True
        and result.get("structuredContent") is None
        and len(result.get("content") or []) == 1
        and result["content"][0]["type"] == "text"
    )


def text_of(result) -> str | None:
    return result["content"][0].get("text") if one_text_error(result) else None


def compare(kind, ours, theirs, our_requests, their_requests, bases) -> str | None:
    """None when the two answers (and the requests each sent) are the same
    but for the allowed difference `kind`; else what differs."""
    site_ours, outside_ours = our_requests
    site_theirs, outside_theirs = their_requests
    if outside_ours:
        return f"the plugin reached the outside server: {outside_ours}"
    if site_ours != site_theirs:
        return f"requests to the site differ:\n    corral:   {site_ours}\n    original: {site_theirs}"
    name = kind[0] if isinstance(kind, tuple) else kind
    if name == "schema":
        if not (text_of(ours) or "").startswith("Invalid arguments for tool `fetch`"):
            return f"corral did not refuse the arguments with its validator: {ours}"
        if "validation error for fetchArguments" not in (text_of(theirs) or ""):
            return f"the original did not refuse the arguments with pydantic: {theirs}"
        return None
    if name == "grant":
        if not outside_theirs:
            return "the original did not follow the redirect outside (the comparison expects it to)"
        what, url = substitute(kind[1], bases), substitute(kind[2], bases)
        host_port = url.split("/")[2]
        expected = f"Error executing tool fetch: {what}: " + REFUSED.format(url=url, host_port=host_port)
        if text_of(ours) != expected:
            return f"the plugin did not refuse the request outside its grant as expected:\n    corral:   {ours}\n    expected: {expected}"
        return None
    if outside_theirs:
        return f"the original reached the outside server unexpectedly: {outside_theirs}"
    if name == "size":
        expected = f"Error executing tool fetch: {substitute(kind[1], bases)}: {TOO_LARGE}"
        if text_of(ours) != expected:
            return f"the plugin did not stop at its bound as expected:\n    corral:   {ours}\n    expected: {expected}"
        if theirs.get("isError"):
            return f"the original did not read the large body (the comparison expects it to): {theirs}"
        return None
    if ours != theirs:
        return f"corral:   {json.dumps(ours, ensure_ascii=False)}\n    original: {json.dumps(theirs, ensure_ascii=False)}"
    return None


def substitute(value, bases):
    if isinstance(value, str):
        for placeholder, replacement in bases:
            value = value.replace(placeholder, replacement)
    return value


async def run_session(label, session_calls, original, ours, routes, site_log, outside_log, bases, failures, used):
    async with stdio_client(original) as (r1, w1), stdio_client(ours) as (r2, w2):
        async with ClientSession(r1, w1) as theirs_s, ClientSession(r2, w2) as ours_s:
            await theirs_s.initialize()
            await ours_s.initialize()

            their_tools = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await theirs_s.list_tools()).tools}
            our_tools = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await ours_s.list_tools()).tools}
            failures += tool_list_problems(f"{label}: ", their_tools, our_tools, TOOL_FIELDS)
            print(f"{label}: tools/list: {len(their_tools)} tool(s) compared ({', '.join(TOOL_FIELDS)})")

            for index, (tool, arguments, kind, *robots) in enumerate(session_calls, 1):
                arguments = {key: substitute(value, bases) for key, value in arguments.items()}
                saved_robots = routes["/robots.txt"]
                if robots:
                    routes["/robots.txt"] = robots[0]
                marks = (site_log.mark(), outside_log.mark())
                theirs = await ask(theirs_s, tool, arguments)
                their_requests = (site_log.since(marks[0]), outside_log.since(marks[1]))
                marks = (site_log.mark(), outside_log.mark())
                mine = await ask(ours_s, tool, arguments)
                our_requests = (site_log.since(marks[0]), outside_log.since(marks[1]))
                routes["/robots.txt"] = saved_robots
                difference = compare(kind, mine, theirs, our_requests, their_requests, bases)
                kind = kind[0] if isinstance(kind, tuple) else kind
                needed = mine != theirs or our_requests != their_requests
                line = f"{label} {index:2} {tool} {json.dumps(arguments, ensure_ascii=False)[:100]}"
                if difference:
                    failures.append(f"{line}\n    {difference}")
                    print(f"MISMATCH {line}")
                else:
                    if needed:
                        used.add(kind)
                    verdict = "error" if theirs.get("isError") or "protocolError" in theirs else "ok"
                    requests = len(their_requests[0]) + len(their_requests[1])
                    note = f" (allowed: {kind}; the original sent {len(their_requests[1])} request(s) outside, the plugin none)" if kind == "grant" else (f" (allowed: {kind})" if needed else "")
                    print(f"same     {line} -> {verdict}, {requests} request(s){note}")
    return len(session_calls)


def title_tokenizer_refusal(reference_python: str) -> str | None:
    """Why the comparison cannot hold on the reference's Python, or None.

    CPython 3.9.23, 3.10.18, 3.11.13, 3.12.11, 3.13.6, 3.14 and later
    (gh-135661) tokenize <title> as text (html.parser.HTMLParser has
    RCDATA_CONTENT_ELEMENTS), so the original's Markdown starts with a
    literal `<p>Title</p>` and no blank line, where the plugin
    (html_compat.py) writes the title as a paragraph, as earlier releases do.
    That shifts every later character by five, so no narrow allowed
    difference covers it (a paged answer differs throughout): the driver
    refuses to compare, naming the cause, rather than compare loosely."""
    probe = "import html.parser, sys; print(hasattr(html.parser.HTMLParser, 'RCDATA_CONTENT_ELEMENTS'), sys.version.split()[0])"
    done = subprocess.run([reference_python, "-c", probe], capture_output=True, text=True, check=True)
    new_tokenizer, version = done.stdout.split()
    if new_tokenizer == "False":
        return None
    return (
        f"the reference's Python ({reference_python}, CPython {version}) tokenizes <title> as text "
        "(html.parser.HTMLParser.RCDATA_CONTENT_ELEMENTS, gh-135661: CPython 3.9.23, 3.10.18, 3.11.13, "
        "3.12.11, 3.13.6, 3.14 and later), so the original writes every page's title as a literal <p>Title</p>, "
        "which the plugin does not (plugins/python-fetch/html_compat.py). Run tests/reference/fetch/setup "
        "with REFERENCE_PYTHON set to an earlier CPython 3.10-3.13 (e.g. 3.11.7), after deleting "
        "target/clients/reference/fetch"
    )


async def main(reference_python: str, corral: str, plugin_wasm: str) -> int:
    node_modules = Path(reference_python).parent.parent.glob("lib/python*/site-packages/readabilipy/javascript/node_modules")
    if any(node_modules):
        print("the reference's readabilipy has Readability.js installed (node_modules): it would not take "
              "the pure-Python path; delete target/clients/reference/fetch and run tests/reference/fetch/setup",
              file=sys.stderr)
        return 1
    refusal = title_tokenizer_refusal(reference_python)
    if refusal:
        print(refusal, file=sys.stderr)
        return 1

    site_log, outside_log = Log(), Log()
    outside = serve(lambda: {"/landing.html": (200, {"Content-Type": "text/html"}, b"<html><body><p>Outside the grant.</p></body></html>"),
                             "/robots.txt": (404, {}, b"")}, outside_log)
    outside_base = f"http://127.0.0.1:{outside.server_address[1]}"
    routes = site_routes(outside_base)
    site = serve(lambda: routes, site_log)
    port = site.server_address[1]
    bases = [("SITE_PORT", str(port)), ("SITE", f"http://127.0.0.1:{port}"), ("OUTSIDE", outside_base)]

    failures, used, calls = [], set(), 0
    # The SDK passes a server only a few safe variables (HOME, PATH...): PATH
    # is replaced for the original (see the docstring), Corral's log level
    # and compile cache are passed on explicitly.
    corral_env = {name: os.environ[name] for name in ("CORRAL_LOG", "CORRAL_CACHE_DIR") if name in os.environ}
    original_env = {"PATH": str(Path(reference_python).parent)}
    for label, flags, env, session_calls in (
        ("robots", [], "", SESSION),
        ("no-robots", ["--ignore-robots-txt", "--user-agent", USER_AGENT],
         f'[env]\nset = {{ IGNORE_ROBOTS_TXT = "true", USER_AGENT = "{USER_AGENT}" }}\n', SESSION_IGNORING_ROBOTS),
    ):
        with tempfile.TemporaryDirectory() as folder:
            shutil.copy(plugin_wasm, Path(folder) / "python-fetch.wasm")
            # The grant: exactly the site, and names that never resolve.
            allow = ", ".join(json.dumps(host) for host in [f"127.0.0.1:{port}", *UNRESOLVABLE])
            (Path(folder) / "python-fetch.toml").write_text(f'[http]\nallow = [{allow}]\n\n{env}')
            original = StdioServerParameters(
                command=reference_python,
                args=["-m", "mcp_server_fetch", "--allow-private-ips", *flags],
                env=original_env,
            )
            ours = StdioServerParameters(command=corral, args=["serve", folder], env=corral_env)
            calls += await run_session(label, session_calls, original, ours, routes, site_log, outside_log, bases, failures, used)

    outside_total = outside_log.mark()
    print(f"{calls} calls compared; allowed differences met: {sorted(used)}")
    for kind in sorted(used):
        print(f"  {kind}: {ALLOWED[kind]}")
    print(f"the outside server saw {outside_total} request(s), all from the original")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    site.shutdown()
    outside.shutdown()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:4])))
