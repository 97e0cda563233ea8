"""URLs as the original sees them.

The original's `url` argument is a pydantic `AnyUrl`, and the page URL it
fetches and names in every answer is `str(url)`: the URL parsed and
serialized by the WHATWG URL standard (pydantic-core uses the Rust `url`
crate). `normalize` reproduces that serialization for the cases a fetch
meets: scheme and host lower-cased, IPv4 shorthands expanded, IDNA host
names in Punycode (UTS 46), default ports dropped, `.` and `..` segments resolved,
an empty path made `/`, and the characters the standard escapes
percent-encoded in each part. A URL it cannot parse raises `InvalidUrl` with
pydantic's wording.

`redirect_url` resolves a redirect's Location as the original's httpx does,
with httpx's own URL class (httpx_parts).
"""

import encodings.punycode  # noqa: F401  (see below)
import re
from urllib.parse import urlparse, urlunparse

import httpx_parts
import idna
import idna.uts46data  # noqa: F401

# componentize-py keeps only the modules imported while it builds the
# component: the Punycode codec and idna's UTS 46 table, otherwise imported
# at the first international name (here and in httpx's URL), are imported
# above for that reason.

# Schemes the URL standard calls special, with their default ports.
SPECIAL = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "file": None}

# The WHATWG percent-encode sets (C0 controls and every non-ASCII code point
# are always encoded).
USERINFO_SET = set(" \"#<>?`{}/:;=@[\\]^|")
PATH_SET = set(" \"#<>?`{}")
QUERY_SET = set(" \"#<>'")
FRAGMENT_SET = set(" \"<>`")
# Code points refused in a host (the standard's forbidden host code points).
FORBIDDEN_HOST = set("\x00\t\n\r #/:<>?@[\\]^|%")

SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


class InvalidUrl(ValueError):
    """pydantic's url_parsing error; the message is its short reason."""


def _encode(text: str, charset: set) -> str:
    out = []
    for char in text:
        if ord(char) < 0x20 or ord(char) > 0x7E or char in charset:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
        else:
            out.append(char)
    return "".join(out)


def _ipv4_number(part: str) -> int | None:
    """One part of an IPv4 address (decimal, 0x hex or 0 octal), or None."""
    try:
        if part[:2].lower() == "0x":
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part[0] == "0":
            return int(part[1:], 8)
        return int(part, 10)
    except ValueError:
        return None


def _ipv4(host: str) -> str | None:
    """The dotted form of `host` when the standard parses it as IPv4."""
    parts = host.split(".")
    if parts and parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if not parts or _ipv4_number(parts[-1]) is None:
        return None
    numbers = [_ipv4_number(part) for part in parts]
    if len(numbers) > 4 or any(n is None for n in numbers):
        raise InvalidUrl("invalid IPv4 address")
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise InvalidUrl("invalid IPv4 address")
    value = numbers[-1]
    for index, n in enumerate(numbers[:-1]):
        value += n * 256 ** (3 - index)
    return ".".join(str((value >> shift) & 255) for shift in (24, 16, 8, 0))


def _idna(host: str) -> str:
    """UTS 46 ToASCII, non-transitional, as the URL standard (and the Rust
    idna crate under pydantic-core) does: `ß` stays `ß` (xn--strae-oqa.de),
    where Python's "idna" codec (IDNA 2003) would map it to "ss". The mapping
    is the idna package's; each label is then Punycode. Like the URL
    standard, neither hyphens, lengths nor IDNA 2008's code point classes are
    checked (pydantic writes ☃.net as xn--n3h.net). Not checked either, and
    refused by pydantic: a joiner (U+200C, U+200D) in the wrong context."""
    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        return ".".join(label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii") for label in mapped.split("."))
    except (idna.IDNAError, UnicodeError):
        raise InvalidUrl("invalid international domain name") from None


def _host(host: str) -> str:
    from urllib.parse import unquote

    if host.startswith("["):
        if not host.endswith("]"):
            raise InvalidUrl("invalid IPv6 address")
        import ipaddress

        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            raise InvalidUrl("invalid IPv6 address") from None
    host = unquote(host)
    if not host:
        raise InvalidUrl("empty host")
    if not host.isascii():
        host = _idna(host)
    host = host.lower()
    if any(char in FORBIDDEN_HOST for char in host):
        raise InvalidUrl("invalid domain character")
    return _ipv4(host) or host


def _path(path: str) -> str:
    segments = []
    parts = path.split("/")[1:] if path.startswith("/") else path.split("/")
    for index, segment in enumerate(parts):
        last = index == len(parts) - 1
        lowered = segment.lower()
        if lowered in ("..", ".%2e", "%2e.", "%2e%2e"):
            if segments:
                segments.pop()
            if last:
                segments.append("")
        elif lowered in (".", "%2e"):
            if last:
                segments.append("")
        else:
            segments.append(_encode(segment, PATH_SET))
    return "/" + "/".join(segments)


def normalize(url: str) -> str:
    """`str(AnyUrl(url))`."""
    url = url.strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f"
                    "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
    url = url.replace("\t", "").replace("\n", "").replace("\r", "")
    match = SCHEME.match(url)
    if not match:
        raise InvalidUrl("relative URL without a base")
    scheme = match.group(1).lower()
    rest = url[match.end():]
    if scheme not in SPECIAL or scheme == "file":
        # Not a web URL: kept as given (the fetch then fails on its scheme).
        return scheme + ":" + rest
    rest = rest.replace("\\", "/").lstrip("/")
    fragment = query = None
    if "#" in rest:
        rest, fragment = rest.split("#", 1)
    if "?" in rest:
        rest, query = rest.split("?", 1)
    authority, slash, path = rest.partition("/")
    userinfo = ""
    if "@" in authority:
        credentials, authority = authority.rsplit("@", 1)
        user, colon, password = credentials.partition(":")
        userinfo = _encode(user, USERINFO_SET)
        if colon and password:
            userinfo += ":" + _encode(password, USERINFO_SET)
        userinfo = userinfo + "@" if userinfo else ""
    port = ""
    port_match = re.match(r"^(.*?)(?::([^:\]]*))?$", authority)
    host, port_text = port_match.group(1), port_match.group(2)
    if port_text:
        if not port_text.isdigit() or int(port_text) > 65535:
            raise InvalidUrl("invalid port number")
        if int(port_text) != SPECIAL[scheme]:
            port = f":{int(port_text)}"
    result = f"{scheme}://{userinfo}{_host(host)}{port}{_path('/' + path)}"
    if query is not None:
        result += "?" + _encode(query, QUERY_SET)
    if fragment is not None:
        result += "#" + _encode(fragment, FRAGMENT_SET)
    return result


def robots_txt_url(url: str) -> str:
    """The original's get_robots_txt_url."""
    parsed = urlparse(url)
    return urlunparse((parsed.scheme, parsed.netloc, "/robots.txt", "", "", ""))


def redirect_url(request_url, location: str):
    """httpx's Client._redirect_url: the httpx URL a Location leads to from
    the httpx URL `request_url`; an unparsable Location raises httpx's
    RemoteProtocolError (the original shows its repr)."""
    try:
        url = httpx_parts.URL(location)
    except httpx_parts.InvalidURL as exc:
        raise httpx_parts.RemoteProtocolError(f"Invalid URL in location header: {exc}.") from None
    # A malformed absolute Location without a host keeps the request's host.
    if url.scheme and not url.host:
        url = url.copy_with(host=request_url.host)
    if url.is_relative_url:
        url = request_url.join(url)
    # The previous fragment, if the Location has none (RFC 7231 7.1.2).
    if request_url.fragment and not url.fragment:
        url = url.copy_with(fragment=request_url.fragment)
    return url
