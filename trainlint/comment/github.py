"""GitHub pull request comments through the REST API (issue comments: every PR is an issue).

Endpoints (docs.github.com/en/rest/issues/comments, API version 2022-11-28):
``GET /repos/{owner}/{repo}/issues/{number}/comments?per_page=100`` (oldest first, paginated by
``Link: rel="next"``), ``POST`` to the same path, ``PATCH``/``DELETE
/repos/{owner}/{repo}/issues/comments/{id}``, and ``GET /repos/{owner}/{repo}/pulls/{number}``
for the base branch. The token comes from ``GITHUB_TOKEN`` (in Actions the job needs
``permissions: pull-requests: write``); the API base from ``GITHUB_API_URL`` (GitHub Enterprise
Server sets it), else https://api.github.com.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from trainlint.comment.http import (
    ApiClient,
    RetryPolicy,
    api_id,
    api_object,
    api_ref,
    api_text,
    check_base_url,
)
from trainlint.comment.sticky import Comment
from trainlint.errors import ConfigError

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
AUTH_HINT = "can the token write PR comments? in Actions: permissions: pull-requests: write"


class GitHubPullRequest:
    """The comment thread of pull request ``number`` in ``repo`` (``OWNER/NAME``)."""

    def __init__(  # noqa: PLR0913 - an HTTP client's setup: which PR, token, and how
        self,
        repo: str,
        number: int,
        token: str,
        *,
        api_url: str = DEFAULT_API_URL,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not _REPO.match(repo) or {".", ".."} & set(repo.split("/")):
            raise ConfigError(f"--repo {repo!r}: expected OWNER/NAME")
        if number < 1:
            raise ConfigError(f"--pr {number}: expected a pull request number")
        if not token:
            raise ConfigError("GITHUB_TOKEN is not set: it is needed to post the PR comment")
        self.label = f"{repo}#{number}"
        self._repo = "/".join(quote(part, safe="") for part in repo.split("/"))
        self._number = number
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
        }
        self.api = ApiClient(
            check_base_url(api_url, "GITHUB_API_URL"),
            headers,
            token,
            host="GitHub",
            auth_hint=AUTH_HINT,
            retry=retry,
            transport=transport,
        )

    def list_comments(self) -> list[Comment]:
        path = f"/repos/{self._repo}/issues/{self._number}/comments?per_page=100"
        return [_comment(item) for item in self.api.pages(path)]

    def create(self, body: str) -> Comment:
        path = f"/repos/{self._repo}/issues/{self._number}/comments"
        return _comment(self.api.json("POST", path, {"body": body}))

    def update(self, comment_id: int, body: str) -> Comment:
        path = f"/repos/{self._repo}/issues/comments/{comment_id}"
        return _comment(self.api.json("PATCH", path, {"body": body}))

    def delete(self, comment_id: int) -> None:
        self.api.request("DELETE", f"/repos/{self._repo}/issues/comments/{comment_id}")

    def base_ref(self) -> str:
        """The pull request's base branch name."""
        pull = api_object(self.api.json("GET", f"/repos/{self._repo}/pulls/{self._number}"),
                          f"GitHub API: pull request {self.label}")  # fmt: skip
        base = api_object(pull.get("base"), f"GitHub API: the base of {self.label}")
        return api_ref(base.get("ref"), f"GitHub API: the base ref of {self.label}")


def github_from_env(
    repo: str, number: int, env: Mapping[str, str] | None = None, **options: Any
) -> GitHubPullRequest:
    """A :class:`GitHubPullRequest` with the token and API base from the environment."""
    env = os.environ if env is None else env
    api_url = env.get("GITHUB_API_URL") or DEFAULT_API_URL
    return GitHubPullRequest(repo, number, env.get("GITHUB_TOKEN", ""), api_url=api_url, **options)


def _comment(item: Any) -> Comment:
    """A comment of the API's answer, checked: an id, text for the body and the link."""
    fields = api_object(item, "GitHub API: a comment")
    return Comment(
        api_id(fields.get("id"), "GitHub API: a comment's id"),
        api_text(fields.get("body"), "GitHub API: a comment's body"),
        api_text(fields.get("html_url"), "GitHub API: a comment's html_url"),
    )
