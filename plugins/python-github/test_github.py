"""github.py outside the component, with a fake transport: the requests it
sends (paths, queries, headers) and what GitHub's answers become. The
plugin end to end, against a stand-in for api.github.com, is tests/github.rs.

Run: python3 -B -m unittest discover -s plugins/python-github -p 'test_*.py'
"""

import json
import unittest

import github

TOKEN = "ghp_unitTestToken0123456789abcdefABCDEF"


class Fake:
    """Answers each request with the next of `answers` (status, headers,
    JSON), and keeps what was asked."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    def __call__(self, scheme, authority, path_with_query, headers):
        self.requests.append((scheme, authority, path_with_query, headers))
        status, headers, document = self.answers.pop(0)
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        return github.Response(status, headers, body)


def client(fake, url=None):
    return github.Client(github.Api(url), TOKEN, fake)


ISSUE = {
    "number": 7,
    "title": "Crash on start",
    "state": "closed",
    "state_reason": "completed",
    "locked": False,
    "user": {"login": "octocat"},
    "labels": [{"name": "bug"}],
    "assignees": [{"login": "hubot"}],
    "comments": 2,
    "created_at": "2026-01-02T03:04:05Z",
    "updated_at": "2026-01-03T03:04:05Z",
    "closed_at": "2026-01-03T03:04:05Z",
    "html_url": "https://github.com/octo-org/app/issues/7",
    "repository_url": "https://api.github.com/repos/octo-org/app",
    "body": "It crashes.",
}


class Requests(unittest.TestCase):
    def test_search_sends_the_documented_request(self):
        fake = Fake((200, [], {"total_count": 0, "incomplete_results": False, "items": []}))
        client(fake).search_issues("repo:octo-org/app is:issue crash & burn", 5, 2)
        scheme, authority, target, headers = fake.requests[0]
        self.assertEqual((scheme, authority), ("https", "api.github.com"))
        self.assertEqual(
            target, "/search/issues?q=repo%3Aocto-org%2Fapp%20is%3Aissue%20crash%20%26%20burn&per_page=5&page=2"
        )
        self.assertEqual(
            headers,
            [
                ("Accept", "application/vnd.github+json"),
                ("Authorization", f"Bearer {TOKEN}"),
                ("X-GitHub-Api-Version", "2022-11-28"),
                ("User-Agent", "corral-python-github/0.1"),
            ],
        )

    def test_path_segments_are_percent_encoded(self):
        fake = Fake((200, [], ISSUE | {"comments": 0}))
        client(fake).get_issue("octo org", "a/b?c#d", 7)
        self.assertEqual(fake.requests[0][2], "/repos/octo%20org/a%2Fb%3Fc%23d/issues/7")

    def test_dot_segments_are_refused_before_any_request(self):
        fake = Fake()
        for owner, repo in [("..", "app"), ("octo-org", "."), ("octo-org", "")]:
            with self.assertRaises(github.ToolError):
                client(fake).get_issue(owner, repo, 1)
        self.assertEqual(fake.requests, [])

    def test_issue_then_its_comments(self):
        comments = [
            {"id": 1, "user": {"login": "hubot"}, "created_at": "c1", "updated_at": "u1", "html_url": "h1", "body": "Same here"},
            {"id": 2, "user": None, "created_at": "c2", "updated_at": "u2", "html_url": "h2", "body": "Fixed"},
        ]
        fake = Fake((200, [], ISSUE), (200, [], comments))
        text, result = client(fake).get_issue("octo-org", "app", 7)
        self.assertEqual(
            [request[2] for request in fake.requests],
            ["/repos/octo-org/app/issues/7", "/repos/octo-org/app/issues/7/comments?per_page=100"],
        )
        self.assertEqual(result["issue"]["repository"], "octo-org/app")
        self.assertEqual(result["issue"]["assignees"], ["hubot"])
        self.assertEqual(result["issue"]["state_reason"], "completed")
        self.assertEqual([c["author"] for c in result["comments"]], ["hubot", None])
        self.assertIn("Issue octo-org/app#7: Crash on start", text)
        self.assertIn("closed (completed)", text)
        self.assertIn("--- hubot on c1 (h1):\nSame here", text)

    def test_without_comments_one_request(self):
        fake = Fake((200, [], ISSUE))
        _, result = client(fake).get_issue("octo-org", "app", 7, include_comments=False)
        self.assertEqual(len(fake.requests), 1)
        self.assertNotIn("comments", result)

    def test_an_issue_without_comments_needs_no_second_request(self):
        fake = Fake((200, [], ISSUE | {"comments": 0}))
        _, result = client(fake).get_issue("octo-org", "app", 7)
        self.assertEqual(len(fake.requests), 1)
        self.assertEqual(result["comments"], [])

    def test_an_enterprise_server_keeps_its_path_prefix(self):
        fake = Fake((200, [], ISSUE | {"comments": 0}))
        client(fake, "http://127.0.0.1:8080/api/v3/").get_issue("o", "r", 1)
        self.assertEqual(fake.requests[0][:3], ("http", "127.0.0.1:8080", "/api/v3/repos/o/r/issues/1"))

    def test_a_bad_api_url_is_refused(self):
        for url in ["ftp://example.com", "https://user:pw@example.com", "https://example.com/?x=1", "nonsense"]:
            with self.assertRaises(github.ToolError, msg=url):
                github.Api(url)


class Tokens(unittest.TestCase):
    def test_missing_token_names_the_command(self):
        for token in [None, ""]:
            with self.assertRaises(github.ToolError) as caught:
                github.Client(github.Api(None), token, Fake())
            self.assertIn("corral secret set python-github GITHUB_TOKEN", str(caught.exception))

    def test_a_token_a_header_cannot_carry_is_refused_without_quoting_it(self):
        for token in ["ghp_with space", "ghp_line\nbreak", "ghp_nonascii\u00e9"]:
            with self.assertRaises(github.ToolError) as caught:
                github.Client(github.Api(None), token, Fake())
            self.assertNotIn(token, str(caught.exception))
            self.assertIn("GITHUB_TOKEN", str(caught.exception))


class Failures(unittest.TestCase):
    def failure(self, status, headers, document, call=lambda c: c.search_issues("x")):
        with self.assertRaises(github.ToolError) as caught:
            call(client(Fake((status, headers, document))))
        message = str(caught.exception)
        self.assertNotIn(TOKEN, message)
        return message

    def test_401(self):
        message = self.failure(401, [], {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
        self.assertIn("GitHub refused the token (Bad credentials), status 401", message)
        self.assertIn("corral secret set python-github GITHUB_TOKEN", message)

    def test_primary_rate_limit(self):
        headers = [
            ("x-ratelimit-limit", "5000"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-used", "5000"),
            ("x-ratelimit-reset", "1798761600"),
            ("x-ratelimit-resource", "core"),
        ]
        message = self.failure(403, headers, {"message": "API rate limit exceeded for user ID 1."})
        self.assertEqual(
            message,
            "GitHub's rate limit is exhausted (API rate limit exceeded for user ID 1.), status 403: "
            "5000 of 5000 requests of the core budget used; it resets at 2027-01-01 00:00:00 UTC",
        )

    def test_secondary_rate_limit(self):
        message = self.failure(429, [("retry-after", "60")], {"message": "You have exceeded a secondary rate limit."})
        self.assertIn("rate limit is exhausted", message)
        self.assertIn("retry after 60 s", message)

    def test_403_without_a_rate_limit_is_about_permissions(self):
        message = self.failure(403, [("x-ratelimit-remaining", "4999")], {"message": "Resource not accessible by personal access token"})
        self.assertIn("status 403: the token may lack a permission", message)

    def test_404_names_what_was_not_found(self):
        message = self.failure(404, [], {"message": "Not Found"}, lambda c: c.get_issue("octo-org", "app", 99))
        self.assertIn("not found on GitHub: octo-org/app#99 (Not Found), status 404", message)

    def test_422_gives_githubs_reasons(self):
        document = {
            "message": "Validation Failed",
            "errors": [{"message": "The listed users cannot be searched.", "resource": "Search", "field": "q", "code": "invalid"}, {"resource": "Search", "field": "q", "code": "missing"}],
            "status": "422",
        }
        message = self.failure(422, [], document)
        self.assertEqual(
            message,
            "GitHub rejected the search 'x' (Validation Failed), status 422: "
            "The listed users cannot be searched.; Search q missing",
        )

    def test_a_message_quoting_the_token_is_scrubbed(self):
        message = self.failure(500, [], {"message": f"token {TOKEN} broke us"})
        self.assertIn("token [GITHUB_TOKEN] broke us", message)

    def test_a_body_that_is_not_json(self):
        message = self.failure(502, [], b"<html>Bad gateway</html>")
        self.assertIn("status 502 (<html>Bad gateway</html>)", message)

    def test_a_transport_error(self):
        def send(*_):
            raise github.TransportError("the request to api.github.com failed (DnsError)")

        with self.assertRaises(github.ToolError) as caught:
            client(send).search_issues("x")
        self.assertIn("could not be reached for the search 'x'", str(caught.exception))


class Shapes(unittest.TestCase):
    def test_search_result(self):
        found = {
            "total_count": 41,
            "incomplete_results": False,
            "items": [
                ISSUE | {"state": "open", "comments": 1},
                ISSUE | {"number": 8, "pull_request": {"url": "x"}, "labels": [], "user": None},
            ],
        }
        text, result = client(Fake((200, [], found))).search_issues("crash", 2, 3)
        self.assertEqual(result["total_count"], 41)
        self.assertEqual(result["page"], 3)
        self.assertEqual([item["pull_request"] for item in result["items"]], [False, True])
        self.assertEqual(
            text,
            "41 results for 'crash'; 5 to 6 on page 3:\n"
            "- octo-org/app#7 Crash on start (issue, open; by octocat; 1 comment; labels: bug)\n"
            "  https://github.com/octo-org/app/issues/7\n"
            "- octo-org/app#8 Crash on start (pull request, closed; 2 comments)\n"
            "  https://github.com/octo-org/app/issues/7\n"
            "More on page 4.",
        )

    def test_no_results(self):
        text, _ = client(Fake((200, [], {"total_count": 0, "incomplete_results": False, "items": []}))).search_issues("zzz")
        self.assertEqual(text, "0 results for 'zzz'.")

    def test_long_bodies_are_cut(self):
        fake = Fake((200, [], ISSUE | {"comments": 0, "body": "x" * (github.MAX_BODY_CHARS + 5)}))
        _, result = client(fake).get_issue("o", "r", 7)
        self.assertTrue(result["issue"]["body"].endswith(f"(cut: {github.MAX_BODY_CHARS + 5} characters in all)"))


if __name__ == "__main__":
    unittest.main()
