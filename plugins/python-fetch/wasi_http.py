"""One HTTP GET over `wasi:http/outgoing-handler`, redirects not followed.

The fetcher follows redirects itself, one request per hop, so that Corral
checks every hop against the plugin's `[http] allow` grant: a redirect to a
host outside the grant is refused by the host, and seen here as
`HTTP-request-denied`.

Each wasi:http resource is dropped (`__exit__`) as soon as it is done with,
children before parents: the host refuses to drop a response whose body or
headers are still alive ("resource has children").

A body is read up to MAX_BODY bytes, and decoded (Response.content) up to
MAX_BODY bytes: the original (httpx) reads and decompresses any size, which
a hostile page (a gzip bomb) would turn into a memory or fuel failure here.
"""

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

from httpx_parts import SUPPORTED_DECODERS, MultiDecoder

CHUNK = 64 * 1024
# The most a response body may hold, before and after decoding.
MAX_BODY = 32 * 1024 * 1024
# Compressed input is decoded this much at a time, so that one step yields at
# most some 4 MiB (deflate expands at most about 1032 times) before the size
# is checked.
DECODE_STEP = 4 * 1024


class Denied(Exception):
    """The host refused the request: its host is not in the [http] grant."""


class TransportError(Exception):
    """The request failed below HTTP (connection, timeout, protocol); the
    message is the wasi:http error code's name."""


class TooLarge(Exception):
    """A body past MAX_BODY, as received or once decoded."""

    def __init__(self):
        super().__init__(f"the response is larger than {MAX_BODY // (1024 * 1024)} MiB, the most this plugin reads")


class Response:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes):
        self.status = status
        self.headers = headers
        self.body = body  # as received, Content-Encoding not undone

    def content(self) -> bytes:
        """The body with its Content-Encoding undone, as httpx's
        Response.read does it (its decoders: gzip, deflate; an unknown coding
        left as it is; several undone last first). Raises httpx's
        DecodingError, or TooLarge past MAX_BODY."""
        codings = [
            value.strip().lower()
            for key, values in self.headers
            if key.lower() == "content-encoding"
            for value in values.split(",")
        ]
        decoders = [SUPPORTED_DECODERS[coding]() for coding in codings if coding in SUPPORTED_DECODERS]
        if not decoders:
            return self.body
        decoder = decoders[0] if len(decoders) == 1 else MultiDecoder(children=decoders)
        out, size = [], 0
        for start in range(0, len(self.body), DECODE_STEP):
            out.append(decoder.decode(self.body[start : start + DECODE_STEP]))
            size += len(out[-1])
            if size > MAX_BODY:
                raise TooLarge()
        out.append(decoder.flush())
        if size + len(out[-1]) > MAX_BODY:
            raise TooLarge()
        return b"".join(out)

    def header(self, name: str) -> str | None:
        """The first value of header `name` (case-insensitive), or None."""
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


def get(scheme: str, authority: str, path_with_query: str, headers: list[tuple[str, str]], timeout_s: float) -> Response:
    """GET scheme://authority/path_with_query; the body as received (see
    Response.content). A request wasi:http cannot express (an authority or a
    path its setters refuse) is a TransportError, as the original's
    connection would fail."""
    try:
        request = OutgoingRequest(Fields.from_list([(k, v.encode("latin-1")) for k, v in headers]))
    except Err:
        raise TransportError("HttpRequestHeaderSize") from None
    request.set_method(Method_Get())
    request.set_scheme(Scheme_Https() if scheme == "https" else Scheme_Http())
    try:
        request.set_authority(authority)
        request.set_path_with_query(path_with_query)
    except Err:
        request.__exit__(None, None, None)
        raise TransportError("HttpRequestUriInvalid") from None
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
            pairs = decode_headers(fields.entries())
        body = response.consume()
        data = read_all(body)
    return Response(status, pairs, data)


def decode_headers(entries: list[tuple[str, bytes]]) -> list[tuple[str, str]]:
    """Header values as httpx's Headers decodes them: all as ASCII, else all
    as UTF-8, else all as Latin-1."""
    values = [value for _, value in entries]
    for encoding in ("ascii", "utf-8"):
        try:
            for value in values:
                value.decode(encoding)
        except UnicodeDecodeError:
            continue
        break
    else:
        encoding = "iso-8859-1"
    return [(name, value.decode(encoding)) for name, value in entries]


def read_all(body: IncomingBody) -> bytes:
    """The whole body, or TooLarge past MAX_BODY. The body is dropped before
    raising, since its response cannot be dropped while it lives."""
    chunks, size, failure = [], 0, None
    with body.stream() as stream:
        while failure is None:
            try:
                chunks.append(stream.blocking_read(CHUNK))
            except Err as err:
                if isinstance(err.value, StreamError_Closed):
                    break
                failure = TransportError("HttpResponseIncomplete")
                break
            size += len(chunks[-1])
            if size > MAX_BODY:
                failure = TooLarge()
    if failure is not None:
        body.__exit__(None, None, None)
        raise failure
    with IncomingBody.finish(body):
        pass
    return b"".join(chunks)
