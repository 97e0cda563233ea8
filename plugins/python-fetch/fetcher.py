"""The fetch tool's logic, line for line the original's (mcp-server-fetch
2026.10.24, `mcp_server_fetch/server.py`): robots.txt for autonomous
fetches, redirects followed with each hop's robots.txt checked, HTML turned
into Markdown by readabilipy and markdownify, and the answer paged.

Only the transport differs: the original's httpx client becomes `send`, one
request without redirects (wasi_http.get in the component), and this module
follows redirects as httpx does (at most 20), so that every hop goes through
Corral's `[http] allow` check. A hop the grant does not cover is refused by
the host, and told as such. What httpx decides is httpx's own code
(httpx_parts): the URL each request goes to (its parsing and encoding, a
redirect's Location joined to it) and the decoding of the body.
"""

import codecs
import email.message
from urllib.parse import urlsplit

import html_compat  # noqa: F401  (before markdownify: see there)
import markdownify
import readabilipy.simple_json
from protego import Protego

import httpx_parts
import urls
from wasi_http import Denied, TooLarge, TransportError

# The original's user agent for the tool; its other one, for the fetch
# prompt, has no use here (plugins offer no prompts).
DEFAULT_USER_AGENT_AUTONOMOUS = "ModelContextProtocol/1.0 (Autonomous; +https://github.com/modelcontextprotocol/servers)"

# httpx's defaults: Client(max_redirects=20); the original's timeouts, 5 s
# for robots.txt (httpx's default) and 30 s for the page.
MAX_REDIRECTS = 20
ROBOTS_TIMEOUT = 5.0
PAGE_TIMEOUT = 30.0
REDIRECT_STATUSES = (301, 302, 303, 307, 308)


class ToolError(Exception):
    """A failure the original reports as a tool error (isError)."""


class HttpError(Exception):
    """What httpx raises as HTTPError: the message is its repr, as the
    original's `Failed to fetch {url}: {e!r}` shows it."""


class Refused(Exception):
    """The host refused a request outside the plugin's [http] grant. The
    guest sees only wasi:http's HTTP-request-denied, which Corral answers for
    two causes: a host the grant does not list, and a host listed through a
    wildcard that resolves to a non-public address; the message names both.
    (A listed host whose name does not resolve is wasi:http's DNS-error, a
    TransportError, told as the original tells a connection failure.)"""

    def __init__(self, url: str):
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        super().__init__(
            f"Corral refused the request to {url}: {parts.hostname}:{port} is not in this plugin's [http] allow list"
            " (or is allowed only through a wildcard and resolves to a private address)"
        )


class Fetcher:
    """`send(scheme, authority, path_with_query, headers, timeout)` returns a
    wasi_http.Response or raises wasi_http.Denied / TransportError."""

    def __init__(self, send, user_agent: str | None = None, ignore_robots_txt: bool = False):
        self.send = send
        self.user_agent_autonomous = user_agent or DEFAULT_USER_AGENT_AUTONOMOUS
        self.ignore_robots_txt = ignore_robots_txt

    # -- one request, as httpx would send it ------------------------------------

    def request(self, url, user_agent: str, timeout: float):
        """GET the httpx URL `url`, without following a redirect."""
        if url.scheme not in ("http", "https"):
            raise HttpError(repr(httpx_parts.UnsupportedProtocol(f"Request URL has an unsupported protocol '{url.scheme}://'.")))
        host = url.raw_host.decode("ascii")
        authority = (f"[{host}]" if ":" in host else host) + (f":{url.port}" if url.port is not None else "")
        headers = [
            ("accept", "*/*"),
            ("accept-encoding", "gzip, deflate"),
            ("user-agent", user_agent),
        ]
        try:
            return self.send(url.scheme, authority, url.raw_path.decode("ascii"), headers, timeout)
        except Denied:
            raise Refused(str(url)) from None
        except TransportError as err:
            raise HttpError(f"{err}") from None

    def get(self, url: str, user_agent: str, timeout: float, before_hop=None):
        """GET `url`, following redirects as httpx's follow_redirects=True;
        `before_hop(url)` runs before each request after the first. The
        response's body is decoded (wasi_http.Response.content)."""
        current = httpx_parts.URL(url)
        history = 0
        while True:
            if history > MAX_REDIRECTS:
                raise HttpError("TooManyRedirects('Exceeded maximum allowed redirects.')")
            if history and before_hop:
                before_hop(str(current))
            response = self.request(current, user_agent, timeout)
            location = response.header("location")
            if response.status not in REDIRECT_STATUSES or location is None:
                response.body = read(response)
                return response
            # httpx builds the next request, then reads the redirect's body.
            try:
                current = urls.redirect_url(current, location)
            except httpx_parts.HTTPError as exc:
                raise HttpError(repr(exc)) from None
            read(response)
            history += 1

    # -- the original's functions ---------------------------------------------

    def check_may_autonomously_fetch_url(self, url: str, user_agent: str) -> None:
        robot_txt_url = urls.robots_txt_url(url)
        try:
            response = self.get(robot_txt_url, user_agent, ROBOTS_TIMEOUT)
        except HttpError:
            raise ToolError(f"Failed to fetch robots.txt {robot_txt_url} due to a connection issue") from None
        except (Refused, TooLarge) as refused:
            raise ToolError(f"Failed to fetch robots.txt {robot_txt_url}: {refused}") from None
        if response.status in (401, 403):
            raise ToolError(
                f"When fetching robots.txt ({robot_txt_url}), received status {response.status} so assuming that autonomous fetching is not allowed, the user can try manually fetching by using the fetch prompt"
            )
        elif 400 <= response.status < 500:
            return
        robot_txt = text(response)
        processed_robot_txt = "\n".join(line for line in robot_txt.splitlines() if not line.strip().startswith("#"))
        robot_parser = Protego.parse(processed_robot_txt)
        if not robot_parser.can_fetch(str(url), user_agent):
            raise ToolError(
                f"The sites robots.txt ({robot_txt_url}), specifies that autonomous fetching of this page is not allowed, "
                f"<useragent>{user_agent}</useragent>\n"
                f"<url>{url}</url>"
                f"<robots>\n{robot_txt}\n</robots>\n"
                f"The assistant must let the user know that it failed to view the page. The assistant may provide further guidance based on the above information.\n"
                f"The assistant can tell the user that they can try manually fetching the page by using the fetch prompt within their UI."
            )

    def fetch_url(self, url: str, user_agent: str, force_raw: bool = False, check_robots_txt: bool = False) -> tuple[str, str]:
        before_hop = None
        if check_robots_txt:
            def before_hop(hop: str) -> None:
                self.check_may_autonomously_fetch_url(hop, user_agent)
        try:
            response = self.get(url, user_agent, PAGE_TIMEOUT, before_hop)
        except HttpError as err:
            raise ToolError(f"Failed to fetch {url}: {err}") from None
        except (Refused, TooLarge) as refused:
            raise ToolError(f"Failed to fetch {url}: {refused}") from None
        if response.status >= 400:
            raise ToolError(f"Failed to fetch {url} - status code {response.status}")
        page_raw = text(response)
        content_type = response.header("content-type") or ""
        is_page_html = "<html" in page_raw[:100] or "text/html" in content_type or not content_type
        if is_page_html and not force_raw:
            return extract_content_from_html(page_raw), ""
        return (
            page_raw,
            f"Content type {content_type} cannot be simplified to markdown, but here is the raw content:\n",
        )

    def fetch(self, url: str, max_length: int = 5000, start_index: int = 0, raw: bool = False) -> str:
        """The tool: `url` is the normalized page URL (urls.normalize)."""
        page_url = url
        if not self.ignore_robots_txt:
            self.check_may_autonomously_fetch_url(page_url, self.user_agent_autonomous)
        content, prefix = self.fetch_url(
            page_url, self.user_agent_autonomous, force_raw=raw, check_robots_txt=not self.ignore_robots_txt
        )
        original_length = len(content)
        if start_index >= original_length:
            content = "<error>No more content available.</error>"
        else:
            truncated_content = content[start_index : start_index + max_length]
            content = truncated_content
            actual_content_length = len(truncated_content)
            remaining_content = original_length - (start_index + actual_content_length)
            if actual_content_length == max_length and remaining_content > 0:
                next_start = start_index + actual_content_length
                content += f"\n\n<error>Content truncated. Call the fetch tool with a start_index of {next_start} to get more content.</error>"
        return f"{prefix}Contents of {page_url}:\n{content}"


def read(response) -> bytes:
    """The decoded body; a decoding failure is httpx's DecodingError."""
    try:
        return response.content()
    except httpx_parts.DecodingError as exc:
        raise HttpError(repr(exc)) from None


def extract_content_from_html(html: str) -> str:
    """The original's, on readabilipy's pure-Python path (see app.py for why
    use_readability is False here)."""
    ret = readabilipy.simple_json.simple_json_from_html_string(html, use_readability=False)
    failed = "<error>Page failed to be simplified from HTML</error>"
    if not ret["content"]:
        return failed
    content = markdownify.markdownify(ret["content"], heading_style=markdownify.ATX)
    if not content.strip():
        return failed
    return content


def text(response) -> str:
    """httpx's Response.text: the Content-Type charset when Python knows it,
    else UTF-8, undecodable bytes replaced."""
    encoding = None
    content_type = response.header("content-type")
    if content_type is not None:
        message = email.message.Message()
        message["content-type"] = content_type
        encoding = message.get_content_charset(failobj=None)
        if encoding is not None:
            try:
                codecs.lookup(encoding)
            except LookupError:
                encoding = None
    if not response.body:
        return ""
    decoder = codecs.getincrementaldecoder(encoding or "utf-8")(errors="replace")
    return decoder.decode(response.body) + decoder.decode(b"", True)
