"""Posting to a real HTTP server that implements GitLab's merge request notes endpoints."""

from __future__ import annotations

import pytest

from tests.comment.conftest import GITLAB_TOKEN, NOW
from tests.comment.fake_hosts import GITLAB_PREFIX, FakeHost
from trainlint.comment import CommentError, GitLabMergeRequest, RetryPolicy, gitlab_from_env, sync
from trainlint.comment.gitlab import token_from_env
from trainlint.errors import ConfigError

M = "<!-- trainlint-comment -->"
NOTES = f"{GITLAB_PREFIX}/notes"


def mr(host: FakeHost, retry: RetryPolicy) -> GitLabMergeRequest:
    token = ("PRIVATE-TOKEN", GITLAB_TOKEN)
    return GitLabMergeRequest("ml/training", 7, token, api_url=host.url, retry=retry)


def test_create_rerun_update_with_an_encoded_project_path(
    gitlab: FakeHost, retry: RetryPolicy
) -> None:
    assert sync(mr(gitlab, retry), f"{M}\n$1", M).action == "created"
    first = gitlab.requests
    assert [(r.method, r.path) for r in first] == [("GET", NOTES), ("POST", NOTES)]
    assert first[0].query == {
        "sort": ["asc"],
        "order_by": ["created_at"],
        "per_page": ["100"],
    }
    assert first[1].body == {"body": f"{M}\n$1"}
    headers = {k.lower(): v for k, v in first[1].headers.items()}
    assert headers["private-token"] == GITLAB_TOKEN and "authorization" not in headers
    (note,) = gitlab.comments

    gitlab.requests.clear()
    assert sync(mr(gitlab, retry), f"{M}\n$1", M).action == "unchanged"
    assert [r.method for r in gitlab.requests] == ["GET"]

    gitlab.requests.clear()
    assert sync(mr(gitlab, retry), f"{M}\n$2", M).action == "updated"
    assert [(r.method, r.path, r.body) for r in gitlab.calls("PUT")] == [
        ("PUT", f"{NOTES}/{note}", {"body": f"{M}\n$2"})
    ]
    assert gitlab.bodies() == [f"{M}\n$2"]


def test_pages_follow_and_system_notes_are_skipped(gitlab: FakeHost, retry: RetryPolicy) -> None:
    gitlab.add(f"{M}\nsystem notes never are ours", system=True)
    gitlab.add("added 1 commit", system=True)
    ours = gitlab.add(f"{M}\nold", system=False)
    gitlab.add("looks good", system=False)
    gitlab.add("approved", system=True)
    outcome = sync(mr(gitlab, retry), f"{M}\nnew", M)
    assert [r.query.get("page") for r in gitlab.calls("GET")] == [None, ["2"], ["3"]]
    assert outcome.comment is not None and outcome.comment.id == ours


def test_delete_and_new(gitlab: FakeHost, retry: RetryPolicy) -> None:
    old = gitlab.add(f"{M}\nold", system=False)
    sync(mr(gitlab, retry), f"{M}\nnew", M, "delete-and-new")
    assert [(r.method, r.path) for r in gitlab.calls("DELETE", "POST")] == [
        ("DELETE", f"{NOTES}/{old}"),
        ("POST", NOTES),
    ]


def test_job_token_and_429_retry(gitlab: FakeHost, retry: RetryPolicy, sleeps: list[float]) -> None:
    gitlab.fail(429, {"Retry-After": "3"})
    gitlab.fail(500)
    host = gitlab_from_env(
        "ml/training", 7, {"CI_JOB_TOKEN": GITLAB_TOKEN, "CI_API_V4_URL": gitlab.url}, retry=retry
    )
    sync(host, f"{M}\nx", M)
    assert sleeps == [3.0, 1.5]
    headers = {k.lower(): v for k, v in gitlab.requests[-1].headers.items()}
    assert headers["job-token"] == GITLAB_TOKEN


def test_ratelimit_reset_header(gitlab: FakeHost, retry: RetryPolicy, sleeps: list[float]) -> None:
    gitlab.fail(429, {"RateLimit-Reset": str(int(NOW) + 5)})
    sync(mr(gitlab, retry), f"{M}\nx", M)
    assert sleeps == [5.0]


def test_errors_name_the_endpoint_without_the_token(gitlab: FakeHost, retry: RetryPolicy) -> None:
    gitlab.fail(404, message="404 Project Not Found")
    with pytest.raises(CommentError) as raised:
        sync(mr(gitlab, retry), f"{M}\nx", M)
    assert f"GitLab API: GET {NOTES} failed: 404 Not Found" in str(raised.value)
    assert GITLAB_TOKEN not in str(raised.value)


def test_tokens_from_env() -> None:
    env = {"GITLAB_TOKEN": "a", "CI_JOB_TOKEN": "b"}
    assert token_from_env(env) == ("PRIVATE-TOKEN", "a")
    assert token_from_env({"CI_JOB_TOKEN": "b"}) == ("JOB-TOKEN", "b")
    with pytest.raises(ConfigError, match="GITLAB_TOKEN"):
        gitlab_from_env("ml/training", 7, {})
    default = gitlab_from_env("42", 7, {"GITLAB_TOKEN": "a"})
    assert default.api.base_url == "https://gitlab.com/api/v4"


def test_target_branch(gitlab: FakeHost, retry: RetryPolicy) -> None:
    assert mr(gitlab, retry).base_ref() == "develop"
