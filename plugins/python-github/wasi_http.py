"""One HTTP GET over `wasi:http/outgoing-handler` (after
plugins/python-fetch/wasi_http.py, without its decompression: GitHub's API
sends no compressed body unless asked).

Corral checks the request's host against the plugin's `[http] allow` grant;
a host outside it is refused (`HTTP-request-denied`), which becomes a
TransportError saying so. Each wasi:http resource is dropped as soon as it
is done with, children before parents: the host refuses to drop a response
whose body or headers are still alive.
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

from github import Response, TransportError

CHUNK = 64 * 1024
# The most an answer's body may hold: a search page of 100 items is some
# 500 KiB, 100 long comments a few MiB.
MAX_BODY = 16 * 1024 * 1024
CONNECT_TIMEOUT_S = 10
# GitHub's search may take some seconds; it answers incomplete_results
# rather than wait long.
ANSWER_TIMEOUT_S = 30


def get(scheme: str, authority: str, path_with_query: str, headers: list[tuple[str, str]]) -> Response:
    """GET scheme://authority/path_with_query with `headers`; the answer,
    whatever its status. Raises TransportError when there is none."""
    try:
        request = OutgoingRequest(Fields.from_list([(name, value.encode("latin-1")) for name, value in headers]))
    except Err:
        raise TransportError("a request header was refused") from None
    request.set_method(Method_Get())
    request.set_scheme(Scheme_Https() if scheme == "https" else Scheme_Http())
    try:
        request.set_authority(authority)
        request.set_path_with_query(path_with_query)
    except Err:
        request.__exit__(None, None, None)
        raise TransportError(f"{scheme}://{authority} is not a URL a request can go to") from None
    options = RequestOptions()
    options.set_connect_timeout(CONNECT_TIMEOUT_S * 1_000_000_000)
    options.set_first_byte_timeout(ANSWER_TIMEOUT_S * 1_000_000_000)
    options.set_between_bytes_timeout(ANSWER_TIMEOUT_S * 1_000_000_000)

    with outgoing_handler.handle(request, options) as future:
        with future.subscribe() as ready:
            ready.block()
        outcome = future.get()
    # outcome: Some(Ok(Ok(response) | Err(error-code))); the outer Err means
    # the response was already taken, which cannot happen here.
    result = outcome.value
    if isinstance(result, Err):
        code = result.value
        host = authority.rsplit("@", 1)[-1]
        if isinstance(code, ErrorCode_HttpRequestDenied):
            raise TransportError(
                f"the sandbox refused the request to {host}: the plugin's manifest "
                "(python-github.toml) must list it in its [http] allow grant"
            )
        reason = type(code).__name__.removeprefix("ErrorCode_")
        raise TransportError(f"the request to {host} failed ({reason})")
    with result.value as response:
        status = response.status()
        with response.headers() as fields:
            pairs = [(name, value.decode("latin-1")) for name, value in fields.entries()]
        body = response.consume()
        data = read_all(body)
    return Response(status, pairs, data)


def read_all(body: IncomingBody) -> bytes:
    """The whole body; a TransportError past MAX_BODY or when it breaks
    off. The body is dropped before raising, since its response cannot be
    dropped while it lives."""
    chunks, size, failure = [], 0, None
    with body.stream() as stream:
        while failure is None:
            try:
                chunks.append(stream.blocking_read(CHUNK))
            except Err as err:
                if isinstance(err.value, StreamError_Closed):
                    break
                failure = TransportError("the answer broke off before its end")
                break
            size += len(chunks[-1])
            if size > MAX_BODY:
                failure = TransportError(f"the answer is larger than {MAX_BODY // (1024 * 1024)} MiB")
    if failure is not None:
        body.__exit__(None, None, None)
        raise failure
    with IncomingBody.finish(body):
        pass
    return b"".join(chunks)
