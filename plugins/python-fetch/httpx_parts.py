"""The parts of httpx (0.28.1, bundled from PyPI like the original's) that
decide what the original sends and reads: its URL class (parsing, percent-
encoding, IDNA, default ports, joining a redirect's Location), its content
decoders (gzip, deflate) and its exceptions, whose reprs the original shows
(`Failed to fetch URL: DecodingError('...')`).

httpx's client cannot run in a component (httpcore, anyio and ssl sockets),
and `import httpx` would import it: so the package is registered here as an
empty module whose path is httpx's folder, and only these submodules are
imported from it. They import nothing but the standard library, `idna` and
each other.
"""

import importlib.util
import sys
import types

if "httpx" not in sys.modules:
    _spec = importlib.util.find_spec("httpx")
    if _spec is None or not _spec.submodule_search_locations:
        raise ImportError("httpx is not bundled (plugins/python-fetch/requirements.txt)")
    _package = types.ModuleType("httpx")
    _package.__path__ = list(_spec.submodule_search_locations)
    sys.modules["httpx"] = _package

from httpx._decoders import SUPPORTED_DECODERS, ContentDecoder, MultiDecoder  # noqa: E402
from httpx._exceptions import (  # noqa: E402
    DecodingError,
    HTTPError,
    InvalidURL,
    RemoteProtocolError,
    TooManyRedirects,
    UnsupportedProtocol,
)
from httpx._urls import URL  # noqa: E402

__all__ = [
    "SUPPORTED_DECODERS",
    "ContentDecoder",
    "MultiDecoder",
    "DecodingError",
    "HTTPError",
    "InvalidURL",
    "RemoteProtocolError",
    "TooManyRedirects",
    "UnsupportedProtocol",
    "URL",
]
