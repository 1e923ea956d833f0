"""``trainlint scan``: check repositories at a commit and record what was found.

A repository is checked at its HEAD commit (or each commit of a range, oldest first) from a
clean export of that commit (``git archive``), so uncommitted files never reach the org's
database; ``--working-tree`` checks the files as they are instead, recorded under the HEAD
commit. Every repository is read and checked before anything is written: a path that is not
a git repository fails the whole command with nothing written.
"""

from __future__ import annotations

import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from io import BytesIO
from pathlib import Path

from trainlint.errors import TrainlintError
from trainlint.results import Report
from trainlint.scans.records import Commit, JobRecord, job_records

Checker = Callable[[Path], Report]
"""Checks one folder (the CLI passes ``lint.check`` with the run's options)."""


class NotARepository(TrainlintError):
    """A scanned path is not a git repository, or a commit in it cannot be read."""


@dataclass(frozen=True)
class Scanned:
    commit: Commit
    records: list[JobRecord]


def scan(
    repositories: Sequence[Path], check: Checker, commits: str | None = None,
    working_tree: bool = False,
) -> list[Scanned]:  # fmt: skip
    """Each repository's scans: HEAD, each commit of ``commits`` (``A..B``), or the
    working tree."""
    plans = [(path, _commits(path, commits)) for path in repositories]  # refuse early
    found: list[Scanned] = []
    for path, shas in plans:
        name = repository_name(path)
        for sha in shas:
            commit = Commit(name, sha, _committed_at(path, sha))
            report = check(path) if working_tree else _checked_at(path, sha, check)
            found.append(Scanned(commit, job_records(report, commit)))
    return found


def _git(path: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, check=True, timeout=300
        )
    except FileNotFoundError:
        raise NotARepository("git is not installed: trainlint scan reads commits with it") from None
    except subprocess.CalledProcessError as error:
        reason = error.stderr.decode(errors="replace").strip().splitlines()
        raise NotARepository(f"{path}: {reason[0] if reason else 'git failed'}") from None
    return done.stdout


def _commits(path: Path, commits: str | None) -> list[str]:
    if not path.is_dir():
        raise NotARepository(f"{path}: not a directory")
    if not (path / ".git").exists() and _top(path) is None:
        raise NotARepository(f"{path}: not a git repository (scan records commits)")
    if commits is None:
        return [_git(path, "rev-parse", "HEAD").decode().strip()]
    listed = _git(path, "rev-list", "--reverse", commits).decode().split()
    if not listed:
        raise NotARepository(f"{path}: no commit in {commits}")
    return listed


def _top(path: Path) -> str | None:
    try:
        return _git(path, "rev-parse", "--show-toplevel").decode().strip()
    except NotARepository:
        return None


def repository_name(path: Path) -> str:
    """The repository's name as its origin remote gives it (``org/repo``), else its folder."""
    try:
        url = _git(path, "config", "--get", "remote.origin.url").decode().strip()
    except NotARepository:
        url = ""
    if url:
        tail = url.rstrip("/").removesuffix(".git").replace(":", "/").split("/")
        return "/".join(tail[-2:])
    top = _top(path)
    return Path(top).name if top else path.resolve().name


def _committed_at(path: Path, sha: str) -> datetime:
    return datetime.fromisoformat(_git(path, "show", "-s", "--format=%cI", sha).decode().strip())


def _checked_at(path: Path, sha: str, check: Checker) -> Report:
    """The report of the commit's own files, exported to a temporary folder."""
    archive = _git(path, "archive", "--format=tar", sha)
    with tempfile.TemporaryDirectory(prefix="trainlint-scan-") as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        subprocess.run(["git", "init", "-q", folder], check=True, capture_output=True)
        return check(Path(folder))
