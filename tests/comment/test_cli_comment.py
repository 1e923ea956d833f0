"""``trainlint comment`` through CliRunner against the fake hosts (GITHUB_API_URL → 127.0.0.1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.comment.conftest import GITHUB_TOKEN, GITLAB_TOKEN
from tests.comment.fake_hosts import GITHUB_PREFIX, GITLAB_PREFIX, FakeHost
from tests.conftest import EXAMPLES
from tests.test_diff import commit, git, set_save_steps
from trainlint import cli
from trainlint.cli import posting
from trainlint.report.markdown import MARKER

GITHUB = ["comment", "--github", "--repo", "octo/models", "--pr", "5"]
GITLAB = ["comment", "--gitlab", "--project", "ml/training", "--mr", "7"]
CLEAN = {"GITHUB_BASE_REF": None, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": None}


def github_env(host: FakeHost, **extra: str | None) -> dict[str, str | None]:
    return {**CLEAN, "GITHUB_API_URL": host.url, "GITHUB_TOKEN": GITHUB_TOKEN, **extra}


def invoke(args: list[str], env: dict[str, str | None]) -> Result:
    return CliRunner().invoke(cli.main, args, env=env)


def assert_secret(result: Result) -> None:
    assert GITHUB_TOKEN not in result.output + result.stderr
    assert GITLAB_TOKEN not in result.output + result.stderr


def test_body_file_twice_creates_once_then_updates(github: FakeHost, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text(f"{MARKER}\nrun costs $10\n")
    args = [*GITHUB, "--body-file", str(body)]
    first = invoke(args, github_env(github))
    assert first.exit_code == 0, first.output
    assert "comment created: https://github.test/octo/models/pull/5#issuecomment-" in first.stderr
    second = invoke(args, github_env(github))
    assert "comment unchanged" in second.stderr
    body.write_text(f"{MARKER}\nrun costs $20\n")
    third = invoke(args, github_env(github))
    assert "comment updated" in third.stderr
    methods = [r.method for r in github.requests]
    assert methods == ["GET", "POST", "GET", "GET", "PATCH"]
    assert github.bodies() == [f"{MARKER}\nrun costs $20\n"]
    for result in (first, second, third):
        assert_secret(result)


def test_behavior_new_posts_a_second(github: FakeHost, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text("x")
    invoke([*GITHUB, "--body-file", str(body)], github_env(github))
    result = invoke([*GITHUB, "--body-file", str(body), "--behavior", "new"], github_env(github))
    assert result.exit_code == 0 and len(github.comments) == 2


def test_dry_run_prints_the_body_and_sends_nothing(github: FakeHost, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text(f"{MARKER}\nhello\n")
    env = {**CLEAN, "GITHUB_API_URL": github.url, "GITHUB_TOKEN": None}
    result = invoke([*GITHUB, "--body-file", str(body), "--dry-run"], env)
    assert result.exit_code == 0
    assert result.stdout == f"{MARKER}\nhello\n"
    assert github.requests == []


def test_missing_token_is_a_clear_error(github: FakeHost, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text("x")
    env = {**CLEAN, "GITHUB_API_URL": github.url, "GITHUB_TOKEN": None}
    result = invoke([*GITHUB, "--body-file", str(body)], env)
    assert result.exit_code == 2
    assert "GITHUB_TOKEN is not set" in result.stderr
    assert github.requests == []


def test_host_errors_exit_2_without_the_token(github: FakeHost, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text("x")
    github.fail(403, message="Resource not accessible by integration")
    result = invoke([*GITHUB, "--body-file", str(body)], github_env(github))
    assert result.exit_code == 2
    assert f"GET {GITHUB_PREFIX}/issues/5/comments failed: 403" in result.stderr
    assert_secret(result)


@pytest.mark.parametrize(
    "args",
    [
        ["comment", "--github", "--repo", "octo/models"],
        ["comment", "--gitlab", "--repo", "octo/models", "--pr", "5"],
        ["comment", "--repo", "octo/models", "--pr", "5"],
    ],
)
def test_incomplete_target_is_a_usage_error(args: list[str]) -> None:
    result = invoke(args, {})
    assert result.exit_code == 2 and "--github --repo OWNER/NAME --pr N" in result.stderr


def test_gitlab_with_a_project_token(gitlab: FakeHost, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text("note")
    env = {**CLEAN, "CI_API_V4_URL": gitlab.url, "GITLAB_TOKEN": GITLAB_TOKEN}
    for _ in range(2):
        result = invoke([*GITLAB, "--body-file", str(body)], env)
        assert result.exit_code == 0, result.stderr
        assert_secret(result)
    assert [(r.method, r.path) for r in gitlab.requests] == [
        ("GET", f"{GITLAB_PREFIX}/notes"),
        ("POST", f"{GITLAB_PREFIX}/notes"),
        ("GET", f"{GITLAB_PREFIX}/notes"),
    ]
    assert gitlab.bodies() == [f"{MARKER}\nnote"]


@pytest.mark.parametrize(
    ("env", "dry_run", "expected"),
    [
        ({"GITHUB_BASE_REF": "release"}, True, "release"),
        ({}, False, "main"),  # the pull request's base, read from the API
    ],
)
def test_base_ref_defaults(  # noqa: PLR0913 - pytest: 3 fixtures, 3 parameters
    github: FakeHost,
    in_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    dry_run: bool,
    expected: str,
) -> None:
    seen: list[str] = []

    def diff_body(paths: object, base: str, links: object, db_url: object = None) -> str:
        seen.append(base)
        return "b"

    monkeypatch.setattr(posting, "diff_body", diff_body)
    args = [*GITHUB, *(["--dry-run"] if dry_run else [])]
    result = invoke(args, github_env(github, **env))
    assert result.exit_code == 0, result.stderr
    assert seen == [expected]


def test_dry_run_without_a_base_is_a_clear_error(github: FakeHost, in_tmp: Path) -> None:
    result = invoke([*GITHUB, "--dry-run"], github_env(github))
    assert result.exit_code == 2 and "--base is required" in result.stderr
    assert github.requests == []


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The llama example at base (checkpoints every 500 steps), then every 10 steps on head."""
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLES / "llama3-sft", root / "examples" / "llama3-sft")
    set_save_steps(root, 500)
    git(root, "init", "-q")
    commit(root, "base")
    git(root, "branch", "base")
    set_save_steps(root, 10)
    commit(root, "checkpoint more often")
    monkeypatch.chdir(root)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    return root


def test_diff_comment_posted_once_then_left_alone(github: FakeHost, repo: Path) -> None:
    env = github_env(github, GITHUB_BASE_REF="base", GITHUB_SERVER_URL="https://github.test")
    first = invoke(GITHUB, env)
    assert first.exit_code == 0, first.stderr
    second = invoke(GITHUB, env)
    assert second.exit_code == 0, second.stderr
    assert [r.method for r in github.requests] == ["GET", "POST", "GET"]
    (body,) = github.bodies()
    assert body.startswith(MARKER) and "TL201" in body
    assert "https://github.test/octo/models/blob/" in body
