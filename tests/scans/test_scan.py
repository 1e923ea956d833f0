"""``trainlint scan`` into SQLite and into a real PostgreSQL, ``report`` from the database:
three repositories made with git, two of them running one experiment under other tags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.scans.conftest import commit, make_repo, write_job
from trainlint.cli import main

pytestmark = pytest.mark.slow


def trainlint(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trainlint", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)  # fmt: skip


def report(url: str, by: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["report", "--db", url, "--by", by, "--format", "json"])
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.output)
    return found


def scan(url: str, *repos: Path, extra: tuple[str, ...] = ()) -> None:
    result = CliRunner().invoke(main, ["scan", *map(str, repos), "--db", url, *extra])
    assert result.exit_code == 0, result.output


def check_three_repos(url: str, repos: list[Path]) -> None:
    scan(url, *repos)
    teams = {row["key"]: row for row in report(url, "team")["rows"]}
    assert set(teams) == {"nlp", "research", "vision"}
    assert [teams[t]["jobs"] for t in ("nlp", "research", "vision")] == [1, 1, 1]
    # The same job under other tags costs the same; vision's runs twice as many steps.
    assert teams["nlp"]["usd_per_run"] == teams["research"]["usd_per_run"] > 0
    assert teams["vision"]["usd_per_run"] == pytest.approx(2 * teams["nlp"]["usd_per_run"], 0.01)
    duplicates = report(url, "team")["duplicates"]
    assert [[(j["repo"], j["team"]) for j in d["jobs"]] for d in duplicates] == [
        [("org/nlp", "nlp"), ("org/research", "research")]
    ]
    scan(url, *repos)  # idempotent per (repository, commit)
    assert report(url, "repo")["rows"] == report(url, "repo")["rows"]
    assert sum(row["jobs"] for row in report(url, "repo")["rows"]) == 3


def test_three_repositories_into_sqlite(three_repos: list[Path], tmp_path: Path) -> None:
    check_three_repos(f"sqlite:///{tmp_path / 'scans.db'}", three_repos)


def test_three_repositories_into_postgresql(three_repos: list[Path], fresh_postgres: str) -> None:
    check_three_repos(fresh_postgres, three_repos)


def test_untagged_jobs_are_their_own_group(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "plain", "gpu=H100")
    url = f"sqlite:///{tmp_path / 'scans.db'}"
    scan(url, repo)
    assert [row["key"] for row in report(url, "team")["rows"]] == ["untagged"]


def test_a_commit_range_gives_the_month_trend(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "nlp", "tag.team=nlp")
    first = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.strip()  # fmt: skip
    write_job(repo, "tag.team=nlp", steps=6000)
    commit(repo, "longer", date="2027-01-05T10:00:00+00:00")
    url = f"sqlite:///{tmp_path / 'scans.db'}"
    scan(url, repo, extra=("--commits", f"{first}~0^!"))
    scan(url, repo, extra=("--commits", f"{first}..HEAD"))
    months = {row["key"]: row["usd_per_run"] for row in report(url, "month")["rows"]}
    assert list(months) == ["2026-12", "2027-01"]
    assert months["2027-01"] == pytest.approx(3 * months["2026-12"], 0.01)
    # Current jobs are the newest commit's only.
    assert report(url, "repo")["rows"][0]["usd_per_run"] == months["2027-01"]


def test_four_concurrent_scans_lose_nothing(tmp_path: Path, fresh_postgres: str) -> None:
    repos = [make_repo(tmp_path, f"r{i}", f"tag.team=t{i % 2}", steps=1000 * (i + 1))
             for i in range(4)]  # fmt: skip
    running = [subprocess.Popen([sys.executable, "-m", "trainlint", "scan", str(repo), "--db",
                                 fresh_postgres], stderr=subprocess.PIPE, text=True)
               for repo in [*repos, *repos]]  # fmt: skip  # each twice: same rows, racing
    for process in running:
        assert process.wait(timeout=300) == 0, process.stderr.read() if process.stderr else ""
    parallel = {by: report(fresh_postgres, by) for by in ("team", "repo")}
    serial_url = f"sqlite:///{tmp_path / 'serial.db'}"
    for repo in repos:
        scan(serial_url, repo)
    assert parallel == {by: report(serial_url, by) for by in ("team", "repo")}
    assert sum(row["jobs"] for row in parallel["repo"]["rows"]) == 4


def test_an_unreachable_database_is_a_clear_error(three_repos: list[Path]) -> None:
    done = trainlint("scan", str(three_repos[0]), "--db",
                     "postgresql://scanner:s3cret@127.0.0.1:1/scans")  # fmt: skip
    assert done.returncode == 2
    assert "cannot reach the database postgresql://scanner:***@127.0.0.1:1/scans" in done.stderr
    assert "s3cret" not in done.stderr + done.stdout


def test_a_database_from_a_newer_schema_is_refused(three_repos: list[Path], tmp_path: Path) -> None:
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'scans.db'}"
    scan(url, three_repos[0])
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    done = trainlint("scan", str(three_repos[1]), "--db", url)
    assert done.returncode == 2
    assert "schema (9999) is newer than this trainlint knows" in done.stderr
    with sa.create_engine(url).connect() as connection:  # nothing written by the refused scan
        assert connection.execute(sa.text("SELECT count(*) FROM scans")).scalar_one() == 1


def test_a_folder_that_is_not_a_repository_writes_nothing(
    three_repos: list[Path], tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    url = f"sqlite:///{tmp_path / 'scans.db'}"
    done = trainlint("scan", str(three_repos[0]), str(plain), "--db", url)
    assert done.returncode == 2
    assert f"{plain}: not a git repository" in done.stderr
    assert report(url, "repo")["rows"] == []  # the good repository before it was not written
