"""The official MCP Python SDK's `OAuthClientProvider` through the OAuth flow of
the MCP authorization spec against a Corral that only knows its URL: the first
request's 401 names the protected resource metadata, which names the
authorization server (tests/oidc/provider.mjs); the SDK discovers it,
registers itself (RFC 7591) and asks for a token for Corral's resource
(RFC 8707), with PKCE. The user's sign-in and consent are given here
programmatically: the "browser" this script stands in for follows the
provider's interaction pages and fills in their forms as the user would.

Usage: python python_oauth.py SPEC_JSON

SPEC_JSON is one JSON object:
  url      Corral's MCP endpoint (http://127.0.0.1:PORT/mcp)
  mode     a `Client(mode=...)` value: "legacy" or "2026-07-28"
  flow     "code" (authorization code + PKCE, signing in as `user`) or
           "client_credentials" (the SDK's ClientCredentialsOAuthProvider with
           the pre-registered `client_id`, `client_secret`, `scope` and
           `issuer`)
  calls    [{"name", "arguments"}] called in order after tools/list; the SDK
           answers a 403 insufficient_scope by asking the user again for the
           union of the scopes (the user consents here) and retrying

Prints one JSON line: {protocolVersion, tools: [names], calls: [{result} or
{error}], tokens: [the claims of each access token the SDK obtained],
authorizations: [the authorization requests' parameters], registrations: how
many clients the SDK registered}. Exits non-zero when the flow itself fails.
"""

import asyncio
import base64
import json
import re
import sys
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

# Where the authorization server sends the browser back; nothing listens there:
# the browser below stops at it and hands its query to the client.
REDIRECT = "http://127.0.0.1:1/callback"

tokens: list[dict] = []
authorizations: list[dict] = []
registrations = 0


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class Memory:
    """The SDK's TokenStorage, in memory, recording what the SDK stores."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens_: OAuthToken) -> None:
        tokens.append(claims(tokens_.access_token))
        self.tokens = tokens_

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        global registrations
        registrations += 1
        self.client = client_info


async def browse(authorization_url: str, user: str) -> dict[str, str]:
    """The user agent: from the authorization URL through the provider's
    sign-in and consent pages (oidc-provider's development interactions) to
    the redirect back to the client, whose query it returns."""
    cookies: dict[str, str] = {}
    url, method, form = authorization_url, "GET", None
    async with httpx2.AsyncClient(follow_redirects=False) as http:
        for _ in range(20):
            if url.startswith(REDIRECT):
                return dict(parse_qsl(urlsplit(url).query))
            headers = {"cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}
            response = await http.request(method, url, headers=headers, data=form)
            for cookie in response.headers.get_list("set-cookie"):
                name, _, value = cookie.split(";")[0].partition("=")
                if value:
                    cookies[name] = value
                else:
                    cookies.pop(name, None)
            if 300 <= response.status_code < 400:
                url, method, form = urljoin(url, response.headers["location"]), "GET", None
                continue
            page = response.text
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}: {page[:500]}")
            action = re.search(r'<form[^>]*action="([^"]+)"', page)
            prompt = re.search(r'name="prompt" value="([^"]+)"', page)
            if not action or not prompt:
                raise RuntimeError(f"no form on {url}: {page[:500]}")
            # Sign in as the user (the development pages take any password),
            # then grant what the client asked for.
            prompt = prompt.group(1)
            form = {"prompt": prompt, "login": user, "password": "any"} if prompt == "login" else {"prompt": prompt}
            url, method = urljoin(url, action.group(1).replace("&amp;", "&")), "POST"
    raise RuntimeError("the authorization did not come back to the client within 20 steps")


def provider(spec: dict) -> OAuthClientProvider:
    if spec["flow"] == "client_credentials":
        return ClientCredentialsOAuthProvider(
            server_url=spec["url"],
            storage=Memory(),
            client_id=spec["client_id"],
            client_secret=spec["client_secret"],
            scope=spec.get("scope"),
            issuer=spec["issuer"],
        )
    callbacks: list[dict[str, str]] = []

    async def redirect(url: str) -> None:
        authorizations.append(dict(parse_qsl(urlsplit(url).query)))
        callbacks.append(await browse(url, spec["user"]))

    async def callback() -> AuthorizationCodeResult:
        query = callbacks.pop()
        if "code" not in query:
            raise RuntimeError(f"the authorization was refused: {query}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    metadata = OAuthClientMetadata(
        client_name="corral python_oauth.py",
        redirect_uris=[REDIRECT],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(spec["url"], metadata, Memory(), redirect, callback)


async def main(spec: dict) -> None:
    http = httpx2.AsyncClient(auth=provider(spec), timeout=60)
    transport = streamable_http_client(spec["url"], http_client=http)
    calls = []
    async with http, Client(transport, mode=spec["mode"], read_timeout_seconds=60) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        for call in spec.get("calls", []):
            try:
                result = await client.call_tool(call["name"], call.get("arguments", {}))
                calls.append({"result": result.model_dump(mode="json", by_alias=True, exclude_none=True)})
            except Exception as err:  # the outcome is what the Rust test asserts on
                calls.append({"error": f"{type(err).__name__}: {err}"})
        version = client.protocol_version
    print(
        json.dumps(
            {
                "protocolVersion": version,
                "tools": tools,
                "calls": calls,
                "tokens": tokens,
                "authorizations": authorizations,
                "registrations": registrations,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
