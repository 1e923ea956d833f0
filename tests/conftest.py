"""Shared test helpers: repository paths and the shared corpus (read in place, never copied),
golden files, and the Hypothesis profile of the fast loop."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
CORPUS = REPO.parent / "shared" / "corpus"

# Configs copied from other repositories (tests/fresh): test data, never test modules.
collect_ignore_glob = ["fresh/repos/*"]


# CI variables that change what the CLI does (GitHub annotations, step summaries, PR comments):
# tests set them when they mean to, so the suite behaves the same on a laptop and on CI.
CI_ENVIRONMENT = (
    "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_TOKEN", "GITHUB_API_URL", "GITHUB_BASE_REF",
    "GITLAB_TOKEN", "CI_JOB_TOKEN", "CI_API_V4_URL", "TRAINLINT_OPA_TOKEN",
)  # fmt: skip


@pytest.fixture(autouse=True)
def _no_ci_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CI_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    # A check writes no cache (.trainlint_cache, the user's key) unless its test asks for one:
    # tests/test_cache.py and the --changed and --watch tests do.
    monkeypatch.setenv("TRAINLINT_NO_CACHE", "1")


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test from an empty temporary directory (paths in reports are cwd-relative)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# The fast loop, ``pytest -m "not slow"``: a tenth of every Hypothesis budget (tests/fast_loop.py).
# The full run (CI's ``pytest``) keeps Hypothesis's default profile and each test's own budget.
settings.register_profile("fast", max_examples=10)


def pytest_configure(config: pytest.Config) -> None:
    """Load the "fast" profile when slow tests are deselected and no profile is named."""
    deselects_slow = re.search(r"\bnot\s+slow\b", config.option.markexpr or "")
    if deselects_slow and not config.getoption("--hypothesis-profile", default=None):
        settings.load_profile("fast")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", help="Rewrite golden files from current output."
    )


Golden = Callable[[str, str], None]
"""The type of the ``golden`` fixture."""


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """``golden("name.txt", text)`` compares with tests/golden/name.txt (or rewrites it)."""
    update = request.config.getoption("--update-golden")

    def compare(name: str, actual: str) -> None:
        path = REPO / "tests" / "golden" / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual)
        assert path.exists(), f"missing golden file {path}; run pytest --update-golden"
        assert actual == path.read_text()

    return compare
