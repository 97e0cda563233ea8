"""GitHub's REST API for the python-github plugin: the requests, exactly as
GitHub's documentation states them, and what their answers become. Pure
Python: the HTTP transport is passed in (wasi_http.get in the component, a
fake in test_github.py), so CPython tests all of it.

Every request carries the headers GitHub asks for
(https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api):
`Accept: application/vnd.github+json`, `Authorization: Bearer TOKEN`,
`X-GitHub-Api-Version: 2022-11-28` and a `User-Agent` (GitHub refuses a
request without one). Path segments are percent-encoded one by one, so an
owner, a repository or a query cannot add a segment or a parameter.

No message this module makes holds the token: GitHub's own words are passed
on (they never quote it), and each message is scrubbed of the token anyway.
"""

import json
from datetime import datetime, timezone
from urllib.parse import quote, urlsplit

API_VERSION = "2022-11-28"
ACCEPT = "application/vnd.github+json"
USER_AGENT = "corral-python-github/0.1"
DEFAULT_API_URL = "https://api.github.com"
SECRET = "GITHUB_TOKEN"
# What replaces the token, should a message ever hold it.
TOKEN_MARK = "[GITHUB_TOKEN]"

# Search returns at most 100 items a page, and the first 1000 results.
MAX_PER_PAGE = 100
SEARCH_RESULTS_CAP = 1000
# Comments read with an issue: one page of GitHub's largest size.
COMMENTS_PER_PAGE = 100
# A body (an issue's or a comment's) is cut past this many characters, so
# that 100 long comments stay well below the output limit.
MAX_BODY_CHARS = 20_000


class ToolError(Exception):
    """What the tool answers as an error (isError): a message for the model
    and its user, never holding the token."""


class TransportError(Exception):
    """The request did not get an HTTP answer (refused by the sandbox,
    DNS, connection, timeout); the message says which."""


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


class Api:
    """Where the API is: GITHUB_API_URL, else https://api.github.com. A
    GitHub Enterprise Server's is https://HOST/api/v3."""

    def __init__(self, url: str | None):
        text = (url or "").strip() or DEFAULT_API_URL
        parts = urlsplit(text)
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or "@" in parts.netloc
            or parts.query
            or parts.fragment
        ):
            raise ToolError(
                f"GITHUB_API_URL must be an http or https URL such as {DEFAULT_API_URL} "
                f"(with no user, query or fragment), not {text!r}"
            )
        self.scheme = parts.scheme
        self.authority = parts.netloc
        self.prefix = parts.path.rstrip("/")


def segment(value: str, what: str) -> str:
    """`value` as one path segment, percent-encoded (every byte but
    RFC 3986's unreserved characters)."""
    if value in ("", ".", ".."):
        raise ToolError(f"{what} {value!r} is not a name GitHub can have")
    return quote(value, safe="")


def query(pairs: list[tuple[str, str | int]]) -> str:
    """A query string, each name and value percent-encoded."""
    return "&".join(f"{quote(name, safe='')}={quote(str(value), safe='')}" for name, value in pairs)


def check_token(token: str | None) -> str:
    if not token:
        raise ToolError(
            f"no value for the secret {SECRET}: give the plugin a GitHub token, e.g. with "
            f"`corral secret set python-github {SECRET}`"
        )
    # A token is printable ASCII; anything else cannot travel in a header.
    if any(not ("\x21" <= char <= "\x7e") for char in token):
        raise ToolError(
            f"the secret {SECRET} holds characters an HTTP header cannot carry (spaces, line breaks "
            "or non-ASCII): set it again with the token alone"
        )
    return token


class Client:
    """The two reads the tools need. `send(scheme, authority,
    path_with_query, headers)` returns a Response or raises TransportError."""

    def __init__(self, api: Api, token: str | None, send):
        self.api = api
        self.token = check_token(token)
        self.send = send

    def headers(self) -> list[tuple[str, str]]:
        return [
            ("Accept", ACCEPT),
            ("Authorization", f"Bearer {self.token}"),
            ("X-GitHub-Api-Version", API_VERSION),
            ("User-Agent", USER_AGENT),
        ]

    def scrub(self, text: str) -> str:
        return text.replace(self.token, TOKEN_MARK)

    def get(self, path: str, params: list[tuple[str, str | int]], what: str):
        """GET the API's `path` (its segments already encoded) with `params`;
        the decoded JSON of a 200, else a ToolError saying why."""
        target = self.api.prefix + path + (f"?{query(params)}" if params else "")
        try:
            response = self.send(self.api.scheme, self.api.authority, target, self.headers())
        except TransportError as err:
            raise ToolError(self.scrub(f"GitHub could not be reached for {what}: {err}")) from None
        if response.status != 200:
            raise ToolError(self.scrub(failure(response, what)))
        try:
            return json.loads(response.body)
        except ValueError:
            raise ToolError(f"GitHub's answer for {what} is not JSON (status 200)") from None

    def search_issues(self, q: str, per_page: int = 30, page: int = 1) -> tuple[str, dict]:
        found = self.get(
            "/search/issues",
            [("q", q), ("per_page", per_page), ("page", page)],
            f"the search {q!r}",
        )
        items = [summary(item) for item in found.get("items") or []]
        result = {
            "total_count": found.get("total_count", 0),
            "incomplete_results": bool(found.get("incomplete_results")),
            "page": page,
            "per_page": per_page,
            "items": items,
        }
        return search_text(q, result), result

    def get_issue(self, owner: str, repo: str, number: int, include_comments: bool = True) -> tuple[str, dict]:
        path = f"/repos/{segment(owner, 'owner')}/{segment(repo, 'repo')}/issues/{number}"
        what = f"{owner}/{repo}#{number}"
        issue = details(self.get(path, [], what))
        result = {"issue": issue}
        if include_comments:
            comments = []
            if issue["comments"] > 0:
                listed = self.get(
                    f"{path}/comments", [("per_page", COMMENTS_PER_PAGE)], f"the comments of {what}"
                )
                comments = [comment(item) for item in listed]
            result["comments"] = comments
        return issue_text(owner, repo, result), result


def failure(response: Response, what: str) -> str:
    """What an answer other than 200 means, in words: GitHub's message
    and, for a rate limit, when it resets."""
    status = response.status
    message, errors = "", []
    try:
        document = json.loads(response.body)
    except ValueError:
        document = None
    if isinstance(document, dict):
        message = str(document.get("message") or "")
        errors = document.get("errors") or []
    elif response.body:
        message = response.body[:200].decode("utf-8", "replace").strip()
    said = f" ({message})" if message else ""
    remaining = response.header("x-ratelimit-remaining")
    retry_after = response.header("retry-after")
    if status == 401:
        return (
            f"GitHub refused the token{said}, status 401: the secret {SECRET} is wrong, expired or "
            f"revoked. Give the plugin a valid token, e.g. with `corral secret set python-github {SECRET}`"
        )
    if status in (403, 429) and (remaining == "0" or retry_after or "rate limit" in message.lower()):
        return rate_limited(response, status, said)
    if status == 403:
        return (
            f"GitHub refused access to {what}{said}, status 403: the token may lack a permission "
            "(a fine-grained token needs read access to the repository's issues, and to the "
            "repository itself when it is private)"
        )
    if status == 404:
        return (
            f"not found on GitHub: {what}{said}, status 404. It does not exist, or the token "
            "cannot see it (a private repository needs a token allowed to read it)"
        )
    if status == 422:
        reasons = "; ".join(validation_reason(error) for error in errors if error)
        return f"GitHub rejected {what}{said}, status 422" + (f": {reasons}" if reasons else "")
    return f"GitHub answered {what} with status {status}{said}"


def rate_limited(response: Response, status: int, said: str) -> str:
    limit = response.header("x-ratelimit-limit")
    used = response.header("x-ratelimit-used")
    resource = response.header("x-ratelimit-resource")
    reset = response.header("x-ratelimit-reset")
    retry_after = response.header("retry-after")
    text = f"GitHub's rate limit is exhausted{said}, status {status}"
    if limit:
        budget = f"the {resource} budget" if resource else "the budget"
        text += f": {used or limit} of {limit} requests of {budget} used"
    if retry_after and retry_after.isdigit():
        text += f"; retry after {retry_after} s"
    elif reset and reset.isdigit():
        at = datetime.fromtimestamp(int(reset), timezone.utc)
        text += f"; it resets at {at.strftime('%Y-%m-%d %H:%M:%S')} UTC"
    return text


def validation_reason(error) -> str:
    """One entry of a 422's `errors`: its message, else what failed."""
    if isinstance(error, str):
        return error
    if not isinstance(error, dict):
        return str(error)
    if error.get("message"):
        return str(error["message"])
    parts = [str(error[key]) for key in ("resource", "field", "code") if error.get(key)]
    return " ".join(parts) or json.dumps(error)


def repository(item: dict) -> str | None:
    """OWNER/REPO from an item's repository_url (.../repos/OWNER/REPO)."""
    url = item.get("repository_url") or ""
    _, found, rest = url.rpartition("/repos/")
    return rest if found and rest.count("/") == 1 else None


def login(user) -> str | None:
    return user.get("login") if isinstance(user, dict) else None


def cut(body) -> str:
    body = body or ""
    if len(body) <= MAX_BODY_CHARS:
        return body
    return body[:MAX_BODY_CHARS] + f"\n... (cut: {len(body)} characters in all)"


def summary(item: dict) -> dict:
    """What a search result's item, or an issue, tells at a glance."""
    return {
        "repository": repository(item),
        "number": item.get("number"),
        "title": item.get("title") or "",
        "state": item.get("state") or "",
        "pull_request": "pull_request" in item,
        "author": login(item.get("user")),
        "labels": [label.get("name", "") if isinstance(label, dict) else str(label) for label in item.get("labels") or []],
        "comments": item.get("comments") or 0,
        "created_at": item.get("created_at"),
        "updated_at": item.get("updated_at"),
        "closed_at": item.get("closed_at"),
        "url": item.get("html_url"),
    }


def details(issue: dict) -> dict:
    """An issue in full: its summary, body, assignees and how it closed."""
    return summary(issue) | {
        "state_reason": issue.get("state_reason"),
        "locked": bool(issue.get("locked")),
        "assignees": [login(user) for user in issue.get("assignees") or [] if login(user)],
        "body": cut(issue.get("body")),
    }


def comment(item: dict) -> dict:
    return {
        "id": item.get("id"),
        "author": login(item.get("user")),
        "created_at": item.get("created_at"),
        "updated_at": item.get("updated_at"),
        "url": item.get("html_url"),
        "body": cut(item.get("body")),
    }


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def line(item: dict) -> str:
    kind = "pull request" if item["pull_request"] else "issue"
    where = f"{item['repository']}#{item['number']}" if item["repository"] else f"#{item['number']}"
    facts = [f"{kind}, {item['state']}"]
    if item["author"]:
        facts.append(f"by {item['author']}")
    facts.append(plural(item["comments"], "comment"))
    if item["labels"]:
        facts.append("labels: " + ", ".join(item["labels"]))
    return f"- {where} {item['title']} ({'; '.join(facts)})\n  {item['url']}"


def search_text(q: str, result: dict) -> str:
    total, items, page, per_page = result["total_count"], result["items"], result["page"], result["per_page"]
    head = f"{plural(total, 'result')} for {q!r}"
    if not items:
        return head + (f"; none on page {page}" if total else "") + "."
    first = (page - 1) * per_page + 1
    head += f"; {first} to {first + len(items) - 1} on page {page}"
    if result["incomplete_results"]:
        head += " (GitHub's search timed out: the results may be incomplete)"
    lines = [head + ":"] + [line(item) for item in items]
    reachable = min(total, SEARCH_RESULTS_CAP)
    if page * per_page < reachable:
        lines.append(f"More on page {page + 1}.")
    return "\n".join(lines)


def issue_text(owner: str, repo: str, result: dict) -> str:
    issue = result["issue"]
    kind = "Pull request" if issue["pull_request"] else "Issue"
    state = issue["state"] + (f" ({issue['state_reason']})" if issue["state_reason"] else "")
    facts = [state]
    if issue["author"]:
        facts.append(f"opened by {issue['author']} on {issue['created_at']}")
    if issue["closed_at"]:
        facts.append(f"closed on {issue['closed_at']}")
    if issue["labels"]:
        facts.append("labels: " + ", ".join(issue["labels"]))
    if issue["assignees"]:
        facts.append("assignees: " + ", ".join(issue["assignees"]))
    facts.append(plural(issue["comments"], "comment"))
    lines = [
        f"{kind} {owner}/{repo}#{issue['number']}: {issue['title']}",
        "; ".join(facts),
        str(issue["url"]),
        "",
        issue["body"] or "(no description)",
    ]
    comments = result.get("comments")
    if comments:
        shown = f"Comments ({len(comments)}"
        if issue["comments"] > len(comments):
            shown += f" of {issue['comments']}, the first shown"
        lines += ["", shown + "):"]
        for item in comments:
            lines += ["", f"--- {item['author'] or 'someone'} on {item['created_at']} ({item['url']}):", item["body"]]
    return "\n".join(lines)
