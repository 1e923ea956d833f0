"""Links the reports share: a rule's documentation and a file's blob URL on the code host.

Builtin rules link to their section of ``docs/rules.md`` in trainlint's repository on its
default branch (``RULES_DOCS``; GitHub's heading anchors: ``#checkpoint-too-frequent-tl201``),
so a link keeps working across releases. Pack rules link to the first of their METADATA
``related_resources``; a rule with neither has no link.

A report read in a pull or merge request links files to the host's blob view of the commit
checked: from the CI's variables (``blob_base``), or in diff mode from the ``origin`` remote
and HEAD (``blob_base_from_remote``); elsewhere links stay relative to the repository root,
where a relative link in a PR comment would 404.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from urllib.parse import quote

from trainlint.packs import RuleMeta, load_builtin_pack

RULES_DOCS = "https://github.com/trainlint/trainlint/blob/main/docs/rules.md"


@cache
def _builtin_rules() -> frozenset[RuleMeta]:
    return frozenset(load_builtin_pack().rules)


def rule_help_uri(rule: RuleMeta) -> str | None:
    """The rule's documentation URL: its docs/rules.md section (builtin), else its first
    ``related_resources`` ref, else None."""
    if rule in _builtin_rules():
        return f"{RULES_DOCS}#{f'{rule.slug}-{rule.id}'.lower()}"
    return rule.references[0] if rule.references else None


def blob_base(env: Mapping[str, str]) -> str | None:
    """``<host>/<repo>/blob/<sha>/`` from the CI's variables (GitHub Actions:
    GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_SHA; GitLab CI: CI_PROJECT_URL,
    CI_COMMIT_SHA), else None."""
    server, repo, sha = (env.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY",
                                                  "GITHUB_SHA"))  # fmt: skip
    if repo and sha:
        return f"{(server or 'https://github.com').rstrip('/')}/{repo}/blob/{sha}/"
    project, commit = env.get("CI_PROJECT_URL", ""), env.get("CI_COMMIT_SHA", "")
    if project and commit:
        return f"{project.rstrip('/')}/-/blob/{commit}/"
    return None


def file_link(file: str, line: int, base: str | None) -> str:
    """``file#L<line>``: absolute under ``base`` when given, else relative."""
    path = quote(file.removeprefix("./"))
    prefix = base.rstrip("/") + "/" if base else ""
    return f"{prefix}{path}#L{line}"


_REMOTE = re.compile(
    r"^(?:(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/"
    r"|[^@/]+@(?P<scp_host>[^:/]+):)(?P<path>[^?#]+?)(?:\.git)?/?$"
)


def blob_base_from_remote(remote: str, sha: str) -> str | None:
    """``<host>/<repo>/blob/<sha>/`` for a GitHub or GitLab remote URL (https, ssh or
    ``git@host:owner/repo.git``), else None: another host's blob URLs are unknown."""
    match = _REMOTE.match(remote.strip())
    if match is None or not sha:
        return None
    host = (match["host"] or match["scp_host"]).lower()
    path = match["path"].strip("/")
    if "github" in host:
        return f"https://{host}/{path}/blob/{sha}/"
    if "gitlab" in host:
        return f"https://{host}/{path}/-/blob/{sha}/"
    return None
