"""Fixtures: a fake GitHub / GitLab on 127.0.0.1, and a retry policy that never sleeps."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.comment.fake_hosts import FakeHost, serve
from trainlint.comment import RetryPolicy

GITHUB_TOKEN = "ghp_SECRETtoken0123456789abcdef"
GITLAB_TOKEN = "glpat-SECRETtoken0123456789"
NOW = 1_800_000_000.0


def _run(host: FakeHost) -> Iterator[FakeHost]:
    server, thread = serve(host)
    try:
        yield host
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def github() -> Iterator[FakeHost]:
    yield from _run(FakeHost("github", GITHUB_TOKEN))


@pytest.fixture
def gitlab() -> Iterator[FakeHost]:
    yield from _run(FakeHost("gitlab", GITLAB_TOKEN))


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def retry(sleeps: list[float]) -> RetryPolicy:
    return RetryPolicy(sleep=sleeps.append, now=lambda: NOW, rand=lambda: 0.5)
