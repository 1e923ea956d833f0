"""What ``trainlint comment`` does around :func:`sync`: the body, the base ref, the host.

The body is the diff-mode comment (computed by the CLI: this package never runs the check) or a
prepared file (``--body-file``). The base ref is ``--base``, else ``$GITHUB_BASE_REF`` /
``$CI_MERGE_REQUEST_TARGET_BRANCH_NAME`` (set in pull request / merge request pipelines), else
the PR's base branch read from the API; a branch name that git does not know locally is tried
as ``origin/<name>`` (CI checkouts rarely have local branches besides the head).
``--dry-run`` sends no request at all, so there it must come from ``--base`` or the
environment.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from trainlint.comment.github import GitHubPullRequest, github_from_env
from trainlint.comment.gitlab import GitLabMergeRequest, gitlab_from_env
from trainlint.comment.sticky import BEHAVIORS, Behavior
from trainlint.errors import ConfigError

HostKind = Literal["github", "gitlab"]
BASE_ENV = {"github": "GITHUB_BASE_REF", "gitlab": "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"}


def target(
    kind: str | None, repo: str | None, pr: int | None, project: str | None, mr: int | None
) -> tuple[HostKind, str, int]:
    """The host, the repository/project and the PR/MR number from the command's options."""
    if kind == "github" and repo and pr is not None:
        return "github", repo, pr
    if kind == "gitlab" and project and mr is not None:
        return "gitlab", project, mr
    raise ConfigError("use --github --repo OWNER/NAME --pr N, or --gitlab --project ID --mr IID")


def as_behavior(value: str) -> Behavior:
    for behavior in BEHAVIORS:
        if behavior == value:
            return behavior
    raise ConfigError(f"--behavior {value!r}: expected one of {', '.join(BEHAVIORS)}")


def marker() -> str:
    """The hidden first line that finds our comment again (the markdown reporter's)."""
    from trainlint.report.markdown import MARKER

    return MARKER


def open_host(
    kind: HostKind, target: str, number: int, env: Mapping[str, str]
) -> GitHubPullRequest | GitLabMergeRequest:
    if kind == "github":
        return github_from_env(target, number, env)
    return gitlab_from_env(target, number, env)


def base_ref(
    kind: HostKind,
    given: str | None,
    env: Mapping[str, str],
    host: GitHubPullRequest | GitLabMergeRequest | None,
) -> str:
    """``--base``, else the CI variable, else the PR's base from the API (``host``)."""
    ref = given or env.get(BASE_ENV[kind], "")
    if not ref and host is not None:
        ref = host.base_ref()
    if not ref:
        raise ConfigError(f"--base is required (${BASE_ENV[kind]} is not set)")
    return git_ref(ref)


def git_ref(ref: str, cwd: Path | None = None) -> str:
    """``ref`` if git knows it, else ``origin/<ref>`` when that exists, else ``ref`` unchanged."""
    for candidate in (ref, f"origin/{ref}"):
        found = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
            cwd=cwd,
            capture_output=True,
            check=False,
        )
        if found.returncode == 0:
            return candidate
    return ref


def link_base(kind: HostKind, target: str, env: Mapping[str, str]) -> str | None:
    """``<server>/<repo>/blob/<HEAD>/`` so the comment's file:line links open on the host."""
    head = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "HEAD"], capture_output=True, check=False
    )
    sha = head.stdout.decode().strip()
    if head.returncode != 0 or not sha:
        return None
    if kind == "github":
        server = env.get("GITHUB_SERVER_URL") or "https://github.com"
        return f"{server.rstrip('/')}/{target}/blob/{sha}/"
    server = env.get("CI_SERVER_URL") or "https://gitlab.com"
    return None if target.isdigit() else f"{server.rstrip('/')}/{target.strip('/')}/-/blob/{sha}/"
