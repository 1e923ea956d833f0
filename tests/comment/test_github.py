"""Posting to a real HTTP server that implements GitHub's issue-comment endpoints."""

from __future__ import annotations

import httpx
import pytest

from tests.comment.conftest import GITHUB_TOKEN, NOW
from tests.comment.fake_hosts import GITHUB_PREFIX, FakeHost, Request
from trainlint.comment import CommentError, GitHubPullRequest, RetryPolicy, github_from_env, sync
from trainlint.errors import ConfigError

M = "<!-- trainlint-comment -->"
LIST = f"{GITHUB_PREFIX}/issues/5/comments"


def pr(host: FakeHost, retry: RetryPolicy) -> GitHubPullRequest:
    return GitHubPullRequest("octo/models", 5, GITHUB_TOKEN, api_url=host.url, retry=retry)


def assert_headers(request: Request) -> None:
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["authorization"] == f"Bearer {GITHUB_TOKEN}"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert headers["user-agent"].startswith("trainlint/")


def test_first_run_creates_then_rerun_sends_nothing_then_change_patches(
    github: FakeHost, retry: RetryPolicy
) -> None:
    first = sync(pr(github, retry), f"{M}\n$10 per run", M)
    assert first.action == "created"
    assert [(r.method, r.path, r.query) for r in github.requests] == [
        ("GET", LIST, {"per_page": ["100"]}),
        ("POST", LIST, {}),
    ]
    assert github.requests[1].body == {"body": f"{M}\n$10 per run"}
    for request in github.requests:
        assert_headers(request)
    assert first.comment is not None and first.comment.url.startswith("https://github.test/")

    github.requests.clear()
    second = sync(pr(github, retry), f"{M}\n$10 per run", M)
    assert second.action == "unchanged"
    assert [r.method for r in github.requests] == ["GET"]

    github.requests.clear()
    third = sync(pr(github, retry), f"{M}\n$20 per run", M)
    assert third.action == "updated" and third.comment is not None
    assert third.comment.id == first.comment.id
    patch = github.calls("PATCH")
    assert [(r.path, r.body) for r in patch] == [
        (f"{GITHUB_PREFIX}/issues/comments/{first.comment.id}", {"body": f"{M}\n$20 per run"})
    ]
    assert github.bodies() == [f"{M}\n$20 per run"]


def test_marker_found_across_pages_and_only_the_newest_is_updated(
    github: FakeHost, retry: RetryPolicy
) -> None:
    github.add("LGTM")
    old = github.add(f"{M}\nold duplicate")
    github.add(f"> {M}\n> a quote is not ours")
    github.add("nit")
    newest = github.add(f"{M}\nlast run")
    outcome = sync(pr(github, retry), f"{M}\nthis run", M)
    gets = github.calls("GET")
    assert [r.query.get("page") for r in gets] == [None, ["2"], ["3"]]
    assert all(r.path == LIST for r in gets)
    assert outcome.action == "updated" and outcome.comment and outcome.comment.id == newest
    assert github.comments[old]["body"] == f"{M}\nold duplicate"


def test_delete_and_new_deletes_ours_then_posts(github: FakeHost, retry: RetryPolicy) -> None:
    github.add("human comment")
    a, b = github.add(f"{M}\na"), github.add(f"{M}\nb")
    outcome = sync(pr(github, retry), f"{M}\nc", M, "delete-and-new")
    writes = [(r.method, r.path) for r in github.calls("POST", "DELETE", "PATCH")]
    assert writes == [
        ("DELETE", f"{GITHUB_PREFIX}/issues/comments/{a}"),
        ("DELETE", f"{GITHUB_PREFIX}/issues/comments/{b}"),
        ("POST", LIST),
    ]
    assert outcome.action == "replaced" and outcome.deleted == (a, b)
    assert github.bodies() == ["human comment", f"{M}\nc"]


def test_new_always_posts_without_listing(github: FakeHost, retry: RetryPolicy) -> None:
    github.add(f"{M}\nfirst")
    sync(pr(github, retry), f"{M}\nsecond", M, "new")
    assert [r.method for r in github.requests] == ["POST"]
    assert github.bodies() == [f"{M}\nfirst", f"{M}\nsecond"]


def test_a_body_without_the_marker_gets_it(github: FakeHost, retry: RetryPolicy) -> None:
    sync(pr(github, retry), "plain", M)
    sync(pr(github, retry), "plain", M)
    assert github.bodies() == [f"{M}\nplain"]


def test_502_is_retried_with_backoff(
    github: FakeHost, retry: RetryPolicy, sleeps: list[float]
) -> None:
    github.fail(502, times=2)
    assert sync(pr(github, retry), f"{M}\nx", M).action == "created"
    assert [r.method for r in github.requests] == ["GET", "GET", "GET", "POST"]
    assert sleeps == [0.75, 1.5]  # base 1 s doubling, "equal jitter" at rand()=0.5


def test_primary_rate_limit_waits_until_reset(
    github: FakeHost, retry: RetryPolicy, sleeps: list[float]
) -> None:
    reset = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 42)}
    github.fail(403, reset, message="API rate limit exceeded")
    sync(pr(github, retry), f"{M}\nx", M)
    assert sleeps == [42.0]


def test_429_honours_retry_after(github: FakeHost, retry: RetryPolicy, sleeps: list[float]) -> None:
    github.fail(429, {"Retry-After": "7"})
    sync(pr(github, retry), f"{M}\nx", M)
    assert sleeps == [7.0]


def test_a_rate_limit_longer_than_the_cap_fails_at_once(
    github: FakeHost, retry: RetryPolicy, sleeps: list[float]
) -> None:
    reset = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 3600)}
    github.fail(403, reset, message="API rate limit exceeded")
    with pytest.raises(CommentError, match=r"403 Forbidden.*rate limited for 3600 s"):
        sync(pr(github, retry), f"{M}\nx", M)
    assert sleeps == []


def test_a_plain_403_is_not_retried_and_hints_at_permissions(
    github: FakeHost, retry: RetryPolicy, sleeps: list[float]
) -> None:
    github.fail(403, message="Resource not accessible by integration")
    with pytest.raises(CommentError, match="pull-requests: write") as raised:
        sync(pr(github, retry), f"{M}\nx", M)
    assert len(github.requests) == 1 and sleeps == []
    assert f"GET {LIST} failed: 403 Forbidden: Resource not accessible" in str(raised.value)


def test_retries_exhausted_names_status_and_endpoint(github: FakeHost, retry: RetryPolicy) -> None:
    github.fail(503, times=10)
    with pytest.raises(CommentError) as raised:
        sync(pr(github, retry), f"{M}\nx", M)
    message = str(raised.value)
    assert message == f"GitHub API: GET {LIST} failed: 503 Service Unavailable: injected " + (
        "(after 4 attempts)"
    )
    assert GITHUB_TOKEN not in message and len(github.requests) == 4


def test_the_token_never_reaches_an_error(github: FakeHost, retry: RetryPolicy) -> None:
    github.fail(422, message=f"echoing your token {GITHUB_TOKEN}")
    with pytest.raises(CommentError) as raised:
        sync(pr(github, retry), f"{M}\nx", M)
    assert GITHUB_TOKEN not in str(raised.value) and "***" in str(raised.value)
    assert GITHUB_TOKEN not in repr(raised.value)


def test_unreachable_host_is_retried_then_fails(retry: RetryPolicy, sleeps: list[float]) -> None:
    dead = GitHubPullRequest("o/r", 1, GITHUB_TOKEN, api_url="http://127.0.0.1:9", retry=retry)
    with pytest.raises(CommentError, match=r"ConnectError.*after 4 attempts"):
        dead.list_comments()
    assert len(sleeps) == 3


def test_missing_token_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="GITHUB_TOKEN is not set"):
        github_from_env("octo/models", 5, {})


@pytest.mark.parametrize(
    "url", ["http://api.example.com", "ftp://127.0.0.1", "https://user:pw@api.example.com"]
)
def test_only_https_or_loopback_http(url: str) -> None:
    with pytest.raises(ConfigError, match="GITHUB_API_URL"):
        github_from_env("octo/models", 5, {"GITHUB_TOKEN": "t", "GITHUB_API_URL": url})


def test_api_url_from_env_and_default() -> None:
    ghes = github_from_env(
        "o/r", 1, {"GITHUB_TOKEN": "t", "GITHUB_API_URL": "https://ghe.x/api/v3/"}
    )
    assert ghes.api.base_url == "https://ghe.x/api/v3"
    assert github_from_env("o/r", 1, {"GITHUB_TOKEN": "t"}).api.base_url == "https://api.github.com"


def test_bad_repo_is_refused() -> None:
    with pytest.raises(ConfigError, match="OWNER/NAME"):
        GitHubPullRequest("../etc", 1, "t")


def test_base_ref_from_the_pull_request(github: FakeHost, retry: RetryPolicy) -> None:
    assert pr(github, retry).base_ref() == "main"


def test_secondary_rate_limit_without_headers_waits_a_minute(
    github: FakeHost, retry: RetryPolicy, sleeps: list[float]
) -> None:
    github.fail(403, message="You have exceeded a secondary rate limit.")
    sync(pr(github, retry), f"{M}\nx", M)
    assert sleeps == [60.0]


def test_a_next_link_to_another_host_is_not_followed(retry: RetryPolicy) -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        link = '<https://evil.example/repos/o/r/issues/1/comments?page=2>; rel="next"'
        return httpx.Response(200, json=[], headers={"Link": link})

    host = GitHubPullRequest(
        "o/r", 1, GITHUB_TOKEN, retry=retry, transport=httpx.MockTransport(answer)
    )
    with pytest.raises(CommentError, match="another host"):
        host.list_comments()
    assert seen == ["https://api.github.com/repos/o/r/issues/1/comments?per_page=100"]
