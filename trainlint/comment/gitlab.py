"""GitLab merge request notes through the REST API v4.

Endpoints (docs.gitlab.com/api/notes): ``GET /projects/:id/merge_requests/:iid/notes``
(``sort=asc&order_by=created_at&per_page=100``, paginated by ``Link``/``X-Next-Page``), ``POST``
to the same path, ``PUT``/``DELETE .../notes/:note_id``, and ``GET
/projects/:id/merge_requests/:iid`` for the target branch. ``:id`` is a numeric id or the
URL-encoded path (``group/sub/project`` → ``group%2Fsub%2Fproject``). System notes (GitLab's own
"added 1 commit" entries) are never ours. The token: ``GITLAB_TOKEN`` (sent as
``PRIVATE-TOKEN``), else ``CI_JOB_TOKEN`` (``JOB-TOKEN``; GitLab lets job tokens reach only some
endpoints, so a project/group access token in ``GITLAB_TOKEN`` is the dependable choice). The API
base: ``CI_API_V4_URL`` (set in GitLab CI), else https://gitlab.com/api/v4.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from trainlint.comment.http import (
    ApiClient,
    CommentError,
    RetryPolicy,
    api_id,
    api_object,
    api_ref,
    api_text,
    check_base_url,
    kind,
)
from trainlint.comment.sticky import Comment
from trainlint.errors import ConfigError

DEFAULT_API_URL = "https://gitlab.com/api/v4"
AUTH_HINT = "does the token have the api scope and at least Reporter access to the project?"


class GitLabMergeRequest:
    """The notes of merge request ``iid`` in ``project`` (numeric id or ``group/project``)."""

    def __init__(  # noqa: PLR0913 - an HTTP client's setup: which MR, token, and how
        self,
        project: str,
        iid: int,
        token_header: tuple[str, str],
        *,
        api_url: str = DEFAULT_API_URL,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        name, token = token_header
        if not project.strip("/"):
            raise ConfigError("--project: expected a project id or path")
        if iid < 1:
            raise ConfigError(f"--mr {iid}: expected a merge request IID")
        if not token:
            raise ConfigError(
                "GITLAB_TOKEN (or CI_JOB_TOKEN) is not set: it is needed to post the MR note"
            )
        self.label = f"{project}!{iid}"
        self._base = f"/projects/{quote(project.strip('/'), safe='')}/merge_requests/{iid}"
        self.api = ApiClient(
            check_base_url(api_url, "CI_API_V4_URL"),
            {name: token, "Accept": "application/json"},
            token,
            host="GitLab",
            auth_hint=AUTH_HINT,
            retry=retry,
            transport=transport,
        )

    def list_comments(self) -> list[Comment]:
        path = f"{self._base}/notes?sort=asc&order_by=created_at&per_page=100"
        return [note for note in map(_note, self.api.pages(path)) if note is not None]

    def create(self, body: str) -> Comment:
        return _created(self.api.json("POST", f"{self._base}/notes", {"body": body}))

    def update(self, comment_id: int, body: str) -> Comment:
        path = f"{self._base}/notes/{comment_id}"
        return _created(self.api.json("PUT", path, {"body": body}))

    def delete(self, comment_id: int) -> None:
        self.api.request("DELETE", f"{self._base}/notes/{comment_id}")

    def base_ref(self) -> str:
        """The merge request's target branch name."""
        request = api_object(self.api.json("GET", self._base), f"GitLab API: {self.label}")
        return api_ref(request.get("target_branch"), f"GitLab API: the target of {self.label}")


def token_from_env(env: Mapping[str, str]) -> tuple[str, str]:
    """``("PRIVATE-TOKEN", GITLAB_TOKEN)``, else ``("JOB-TOKEN", CI_JOB_TOKEN)``."""
    if env.get("GITLAB_TOKEN"):
        return "PRIVATE-TOKEN", env["GITLAB_TOKEN"]
    return "JOB-TOKEN", env.get("CI_JOB_TOKEN", "")


def gitlab_from_env(
    project: str, iid: int, env: Mapping[str, str] | None = None, **options: Any
) -> GitLabMergeRequest:
    """A :class:`GitLabMergeRequest` with the token and API base from the environment."""
    env = os.environ if env is None else env
    api_url = env.get("CI_API_V4_URL") or DEFAULT_API_URL
    return GitLabMergeRequest(project, iid, token_from_env(env), api_url=api_url, **options)


def _note(item: Any) -> Comment | None:
    """A note of the API's answer, checked; None for a system note (GitLab's own entries)."""
    fields = api_object(item, "GitLab API: a note")
    system = fields.get("system", False)
    if not isinstance(system, bool):
        raise CommentError(f"GitLab API: a note's system flag is {kind(system)}, not a boolean")
    if system:
        return None
    note_id = api_id(fields.get("id"), "GitLab API: a note's id")
    return Comment(note_id, api_text(fields.get("body"), "GitLab API: a note's body"))


def _created(item: Any) -> Comment:
    """The note the API says it created or edited (never a system note)."""
    note = _note(item)
    if note is None:
        raise CommentError("GitLab API: the note written is a system note")
    return note
