"""Corral plugin `python-github`: searches GitHub's issues and pull requests
and reads one with its comments, through GitHub's REST API, with a token
the operator gives as the secret GITHUB_TOKEN.

Its manifest (python-github.toml) grants the secret (`[secrets]`, read here
through wasi:config/store) and outgoing HTTP to api.github.com alone
(`[http]`). The API's address is GITHUB_API_URL when the manifest's `[env]`
sets it (a GitHub Enterprise Server's https://HOST/api/v3, or a test's
stand-in), which the `[http]` grant must then list too.

The requests and what their answers become are in github.py (tested by
CPython in test_github.py), HTTP in wasi_http.py; this module only speaks
the plugin contract.
"""

import json
import os
import traceback

import github
import wasi_http
from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.tools import CallResult, Tool, ToolAnnotations
from wit_world.imports import host
from wit_world.imports import store as config
from wit_world.imports.corral_plugin_types import Content_Text, LogLevel, TextContent

READ_ONLY = ToolAnnotations(
    title=None, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)

NULLABLE_TEXT = {"type": ["string", "null"]}

ITEM = {
    "type": "object",
    "properties": {
        "repository": {**NULLABLE_TEXT, "description": "OWNER/REPO"},
        "number": {"type": "integer"},
        "title": {"type": "string"},
        "state": {"type": "string", "description": "open or closed"},
        "pull_request": {"type": "boolean"},
        "author": NULLABLE_TEXT,
        "labels": {"type": "array", "items": {"type": "string"}},
        "comments": {"type": "integer", "description": "how many comments it has"},
        "created_at": NULLABLE_TEXT,
        "updated_at": NULLABLE_TEXT,
        "closed_at": NULLABLE_TEXT,
        "url": {**NULLABLE_TEXT, "description": "its page on GitHub"},
    },
    "required": ["repository", "number", "title", "state", "pull_request", "author", "labels", "comments", "url"],
}

SEARCH_INPUT = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 256,
            "description": "GitHub's search syntax, e.g. `repo:rust-lang/rust is:issue is:open label:C-bug panic`",
        },
        "per_page": {
            "type": "integer",
            "minimum": 1,
            "maximum": github.MAX_PER_PAGE,
            "default": 30,
            "description": "Results per page (at most 100)",
        },
        "page": {
            "type": "integer",
            "minimum": 1,
            "default": 1,
            "description": "Which page of results (GitHub serves the first 1000 results)",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

SEARCH_OUTPUT = {
    "type": "object",
    "properties": {
        "total_count": {"type": "integer"},
        "incomplete_results": {"type": "boolean"},
        "page": {"type": "integer"},
        "per_page": {"type": "integer"},
        "items": {"type": "array", "items": ITEM},
    },
    "required": ["total_count", "incomplete_results", "page", "per_page", "items"],
}

ISSUE_INPUT = {
    "type": "object",
    "properties": {
        "owner": {"type": "string", "minLength": 1, "maxLength": 100, "description": "The repository's owner (a user or an organization)"},
        "repo": {"type": "string", "minLength": 1, "maxLength": 100, "description": "The repository's name"},
        "issue_number": {"type": "integer", "minimum": 1, "description": "The issue's (or pull request's) number"},
        "include_comments": {
            "type": "boolean",
            "default": True,
            "description": "Also read its comments (the first 100)",
        },
    },
    "required": ["owner", "repo", "issue_number"],
    "additionalProperties": False,
}

COMMENT = {
    "type": "object",
    "properties": {
        "id": {"type": ["integer", "null"]},
        "author": NULLABLE_TEXT,
        "created_at": NULLABLE_TEXT,
        "updated_at": NULLABLE_TEXT,
        "url": NULLABLE_TEXT,
        "body": {"type": "string"},
    },
    "required": ["id", "author", "created_at", "body"],
}

ISSUE_OUTPUT = {
    "type": "object",
    "properties": {
        "issue": {
            "type": "object",
            "properties": {
                **ITEM["properties"],
                "state_reason": NULLABLE_TEXT,
                "locked": {"type": "boolean"},
                "assignees": {"type": "array", "items": {"type": "string"}},
                "body": {"type": "string"},
            },
            "required": ITEM["required"] + ["body"],
        },
        "comments": {"type": "array", "items": COMMENT, "description": "present when include_comments is true"},
    },
    "required": ["issue"],
}

TOOLS = [
    Tool(
        name="search_issues",
        title="Search GitHub issues",
        description=(
            "Search issues and pull requests on GitHub with GitHub's search syntax "
            "(qualifiers such as repo:OWNER/REPO, is:issue, is:pr, is:open, label:NAME, author:LOGIN). "
            "Returns each match's repository, number, title, state, author, labels and link."
        ),
        input_schema=json.dumps(SEARCH_INPUT),
        output_schema=json.dumps(SEARCH_OUTPUT),
        annotations=READ_ONLY,
        icons=[],
        task_support=None,
    ),
    Tool(
        name="get_issue",
        title="Read a GitHub issue",
        description=(
            "Read one GitHub issue or pull request (its title, state, labels, assignees and "
            "description) and, unless include_comments is false, its first 100 comments."
        ),
        input_schema=json.dumps(ISSUE_INPUT),
        output_schema=json.dumps(ISSUE_OUTPUT),
        annotations=READ_ONLY,
        icons=[],
        task_support=None,
    ),
]


def text(message: str) -> list:
    return [Content_Text(TextContent(text=message, annotations=None))]


def failure(message: str) -> CallResult:
    return CallResult(content=text(message), structured_content=None, is_error=True)


def token() -> str | None:
    """The secret GITHUB_TOKEN, read at each call (a new value takes effect
    at the next one)."""
    try:
        return config.get(github.SECRET)
    except Err as err:
        raise github.ToolError(f"the secret {github.SECRET} could not be read: {err.value.value}") from None


class Tools(exports.Tools):
    def list(self) -> list[Tool]:
        return TOOLS

    def call(self, name: str, arguments: str) -> CallResult:
        args = json.loads(arguments)  # validated against the input schema by the host
        try:
            client = github.Client(github.Api(os.environ.get("GITHUB_API_URL")), token(), wasi_http.get)
            if name == "search_issues":
                answer, structured = client.search_issues(args["query"], args.get("per_page", 30), args.get("page", 1))
            elif name == "get_issue":
                answer, structured = client.get_issue(
                    args["owner"], args["repo"], args["issue_number"], args.get("include_comments", True)
                )
            else:
                return failure(f"unknown tool {name}")
        except github.ToolError as err:
            return failure(str(err))
        except Exception:
            host.log(LogLevel.ERROR, f"{name}: internal error\n{traceback.format_exc()}")
            return failure(f"internal error in {name}; see the server log")
        return CallResult(content=text(answer), structured_content=json.dumps(structured), is_error=False)
