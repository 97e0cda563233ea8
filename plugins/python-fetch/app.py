"""Corral plugin `python-fetch`: the reference MCP server `mcp-server-fetch`
(PyPI, 2026.10.24) as a sandboxed component. Same tool, `fetch(url,
max_length, start_index, raw)`, same input schema, answers and error texts;
the logic is in fetcher.py, HTTP in wasi_http.py, URL handling in urls.py.
This module only speaks the plugin contract.

Where the original takes command-line options, the plugin reads the
environment its manifest grants ([env] set):
- IGNORE_ROBOTS_TXT=true: the original's --ignore-robots-txt;
- USER_AGENT: the original's --user-agent.
The original's --allow-private-ips has no switch here: the manifest's
`[http] allow` decides which hosts the plugin reaches, and a private or
loopback address is reached only when listed exactly. --proxy-url has no
equivalent.

HTML is simplified by readabilipy's pure-Python extractor: the original
asks for Readability.js (use_readability=True), which readabilipy runs with
Node.js when Node and npm are on the PATH, installing it with npm at the
first fetch, and otherwise falls back to the same pure-Python path used
here. A component cannot run Node, so the plugin matches the original as it
runs without Node. The two C extensions readabilipy imports are replaced by
the small shims beside this file (regex.py, lxml/), which say why that keeps
the output identical.
"""

import json
import os
import traceback

import fetcher
import urls
import wasi_http
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool, ToolAnnotations
from wit_world.imports import host
from wit_world.imports.corral_plugin_types import Content_Text, LogLevel, TextContent

DESCRIPTION = """Fetches a URL from the internet and optionally extracts its contents as markdown.

Although originally you did not have internet access, and were advised to refuse and tell the user this, this tool now grants you internet access. Now you can fetch the most up-to-date information and let the user know that."""

# The original's schema, as pydantic writes it for its signature (strict
# ints and bool, AnyUrl).
INPUT_SCHEMA = {
    "properties": {
        "url": {"description": "URL to fetch", "format": "uri", "minLength": 1, "title": "Url", "type": "string"},
        "max_length": {
            "default": 5000,
            "description": "Maximum number of characters to return.",
            "maximum": 999999,
            "minimum": 1,
            "title": "Max Length",
            "type": "integer",
        },
        "start_index": {
            "default": 0,
            "description": "On return output starting at this character index, useful if a previous fetch was truncated and more context is required.",
            "minimum": 0,
            "title": "Start Index",
            "type": "integer",
        },
        "raw": {
            "default": False,
            "description": "Get the actual HTML content of the requested page, without simplification.",
            "title": "Raw",
            "type": "boolean",
        },
    },
    "required": ["url"],
    "type": "object",
    "title": "fetchArguments",
}

ANNOTATIONS = ToolAnnotations(
    title=None, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)

PYDANTIC_URL_ERROR = (
    "1 validation error for fetchArguments\nurl\n"
    "  Input should be a valid URL, {reason} [type=url_parsing, input_value={value}, input_type=str]\n"
    "    For further information visit https://errors.pydantic.dev/2.14/v/url_parsing"
)


def flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def text(message: str) -> list:
    return [Content_Text(TextContent(text=message, annotations=None))]


def failure(message: str) -> CallResult:
    # As the MCP SDK's MCPServer words a ToolError (and a validation error).
    return CallResult(content=text(f"Error executing tool fetch: {message}"), structured_content=None, is_error=True)


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        return [
            Tool(
                name="fetch",
                title=None,
                description=DESCRIPTION,
                input_schema=json.dumps(INPUT_SCHEMA),
                output_schema=None,
                annotations=ANNOTATIONS,
                icons=[],
                task_support=None,
            )
        ]

    def call(self, name: str, arguments: str) -> CallResult:
        args = json.loads(arguments)  # validated against INPUT_SCHEMA by the host
        try:
            url = urls.normalize(args["url"])
        except urls.InvalidUrl as err:
            return failure(PYDANTIC_URL_ERROR.format(reason=err, value=repr(args["url"])))
        tool = fetcher.Fetcher(
            wasi_http.get,
            user_agent=os.environ.get("USER_AGENT") or None,
            ignore_robots_txt=flag(os.environ.get("IGNORE_ROBOTS_TXT")),
        )
        try:
            answer = tool.fetch(
                url,
                max_length=args.get("max_length", 5000),
                start_index=args.get("start_index", 0),
                raw=args.get("raw", False),
            )
        except fetcher.ToolError as err:
            return failure(str(err))
        except Exception:
            host.log(LogLevel.ERROR, f"fetch: internal error\n{traceback.format_exc()}")
            return CallResult(content=text("internal error in fetch; see the server log"), structured_content=None, is_error=True)
        return CallResult(content=text(answer), structured_content=None, is_error=False)
