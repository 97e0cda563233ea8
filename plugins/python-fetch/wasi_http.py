"""One HTTP GET over `wasi:http/outgoing-handler`, redirects not followed.

The fetcher follows redirects itself, one request per hop, so that Corral
checks every hop against the plugin's `[http] allow` grant: a redirect to a
host outside the grant is refused by the host, and seen here as
`HTTP-request-denied`.

Each wasi:http resource is dropped (`__exit__`) as soon as it is done with,
children before parents: the host refuses to drop a response whose body or
headers are still alive ("resource has children").
"""

import zlib

from componentize_py_types import Err
from wit_world.imports import outgoing_handler
from wit_world.imports.streams import StreamError_Closed
from wit_world.imports.wasi_http_types import (
    ErrorCode_HttpRequestDenied,
    Fields,
    IncomingBody,
    Method_Get,
    OutgoingRequest,
    RequestOptions,
    Scheme_Http,
    Scheme_Https,
)

CHUNK = 64 * 1024


class Denied(Exception):
    """The host refused the request: its host is not in the [http] grant."""


class TransportError(Exception):
    """The request failed below HTTP (connection, timeout, protocol); the
    message is the wasi:http error code's name."""


class Response:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> str | None:
        """The first value of header `name` (case-insensitive), or None."""
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


def get(scheme: str, authority: str, path_with_query: str, headers: list[tuple[str, str]], timeout_s: float) -> Response:
    """GET scheme://authority/path_with_query; the body is decoded from gzip
    or deflate as httpx does (the request offers both, as httpx's does)."""
    request = OutgoingRequest(Fields.from_list([(k, v.encode("latin-1")) for k, v in headers]))
    request.set_method(Method_Get())
    request.set_scheme(Scheme_Https() if scheme == "https" else Scheme_Http())
    request.set_authority(authority)
    request.set_path_with_query(path_with_query)
    options = RequestOptions()
    nanos = int(timeout_s * 1e9)
    options.set_connect_timeout(nanos)
    options.set_first_byte_timeout(nanos)
    options.set_between_bytes_timeout(nanos)

    with outgoing_handler.handle(request, options) as future:
        with future.subscribe() as ready:
            ready.block()
        outcome = future.get()
    # outcome: Some(Ok(Ok(response) | Err(error-code))); the outer Err means
    # the response was already taken, which cannot happen here.
    result = outcome.value
    if isinstance(result, Err):
        code = result.value
        if isinstance(code, ErrorCode_HttpRequestDenied):
            raise Denied()
        raise TransportError(type(code).__name__.removeprefix("ErrorCode_"))
    with result.value as response:
        status = response.status()
        with response.headers() as fields:
            pairs = [(name, value.decode("latin-1")) for name, value in fields.entries()]
        body = response.consume()
        data = read_all(body)
    return Response(status, pairs, decode_content(data, pairs))


def read_all(body: IncomingBody) -> bytes:
    chunks = []
    with body.stream() as stream:
        while True:
            try:
                chunks.append(stream.blocking_read(CHUNK))
            except Err as err:
                if isinstance(err.value, StreamError_Closed):
                    break
                raise TransportError("HttpResponseIncomplete") from None
    with IncomingBody.finish(body):
        pass
    return b"".join(chunks)


def decode_content(data: bytes, headers: list[tuple[str, str]]) -> bytes:
    """Undoes a Content-Encoding of gzip or deflate (httpx does the same for
    the original); an unknown coding is left as it is, as httpx leaves it."""
    codings = [v.strip().lower() for k, v in headers if k.lower() == "content-encoding" for v in v.split(",")]
    for coding in reversed(codings):
        if coding == "gzip":
            data = zlib.decompress(data, zlib.MAX_WBITS | 16)
        elif coding == "deflate":
            try:
                data = zlib.decompress(data)
            except zlib.error:
                data = zlib.decompress(data, -zlib.MAX_WBITS)
    return data
