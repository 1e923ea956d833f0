"""``trainlint scan`` and ``trainlint report``: the platform team's view across repositories
(``trainlint.scans``). SQLAlchemy and Alembic are imported only when these commands run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from trainlint.cli.base import handle_errors, main

if TYPE_CHECKING:
    from trainlint.job import Job

DB_HELP = "Scan database URL: sqlite:///FILE (default sqlite:///trainlint.db) or postgresql://…"
BY = ("team", "project", "rule", "repo", "gpu", "month")


@main.command()
@click.argument("repositories", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--db", "url", default="sqlite:///trainlint.db", show_default=True, help=DB_HELP)
@click.option("--commits", metavar="RANGE", help="Scan each commit of RANGE (A..B), oldest first.")
@click.option(
    "--working-tree",
    is_flag=True,
    help="Check the files as they are (uncommitted changes too), recorded under HEAD.",
)
@click.option("--pack", "packs", multiple=True, help="An org pack (path or URL), as for check.")
@handle_errors
def scan(
    repositories: tuple[Path, ...], url: str, commits: str | None, working_tree: bool,
    packs: tuple[str, ...],
) -> None:  # fmt: skip
    """Check each repository (its HEAD commit) and record its jobs, estimates, findings and
    tags in the scan database; scanning a commit again replaces what it recorded."""
    from trainlint.lint import CheckOptions, check

    _require_scans()
    from trainlint.scans import db
    from trainlint.scans.scan import scan as scan_repositories

    options = CheckOptions(packs=packs)
    engine = db.connect(url)  # refuse an unreachable or newer database before any work
    try:
        scanned = scan_repositories(
            list(repositories), lambda path: check([path], options), commits, working_tree
        )
        for found in scanned:
            commit = (found.commit.repo, found.commit.sha, found.commit.committed_at)
            db.write_scan(engine, found.records, commit)
            click.echo(
                f"trainlint: scanned {found.commit.repo}@{found.commit.sha[:12]}: "
                f"{len(found.records)} jobs", err=True,
            )  # fmt: skip
    finally:
        engine.dispose()


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--db", "url", help=DB_HELP + " Without it, PATHS are checked now.")
@click.option("--by", type=click.Choice(BY), default="team", show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "csv", "html"]), default="text",
    show_default=True,
)  # fmt: skip
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--month", metavar="YYYY-MM", help="The budgets' month.  [default: this month]")
@click.option("--pack", "packs", multiple=True, help="The org pack holding budgets.")
@handle_errors
def report(  # noqa: PLR0913 - a click command: one parameter per option
    paths: tuple[Path, ...], url: str | None, by: str, fmt: str, output: Path | None,
    month: str | None, packs: tuple[str, ...],
) -> None:  # fmt: skip
    """Planned spend per run and waste per team, project, rule, repository, GPU or month, with
    duplicate experiments and monthly budgets, from the scan database or from PATHS."""
    from trainlint.errors import ConfigError
    from trainlint.scans.render import render
    from trainlint.scans.summary import summarise

    if url is None and not paths:
        raise ConfigError("report needs --db URL or PATHS to check")
    _require_scans()
    records, budgets = _records(paths, url, packs)
    month = month or datetime.now(timezone.utc).strftime("%Y-%m")
    text = render(summarise(records, by, budgets, month), fmt)  # type: ignore[arg-type]
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


def _records(paths: tuple[Path, ...], url: str | None, packs: tuple[str, ...]) -> tuple[list, dict]:  # type: ignore[type-arg]
    """The rows to report (the database's, else a check of PATHS now) and the budgets of the
    run's pack (``monthly_budget.budgets``)."""
    from trainlint.config import run_config
    from trainlint.lint import CheckOptions, check
    from trainlint.policy import load_policy
    from trainlint.scans import db
    from trainlint.scans.records import Commit, job_records
    from trainlint.scans.summary import pack_budgets

    targets = list(paths) or [Path(".")]
    policy = load_policy(run_config(targets), None, required=packs)
    budgets = pack_budgets(policy.pack.data.get("trainlint", {}).get("params", {}))
    if url is not None:
        with db.opened(url) as engine:
            return db.read_records(engine), budgets
    report = check(targets, CheckOptions(packs=packs))
    now = datetime.now(timezone.utc)
    return job_records(report, Commit(Path(".").resolve().name, "working-tree", now)), budgets


def database_context(
    url: str | None, paths: Sequence[Path]
) -> Callable[[Sequence[Job], Mapping[str, Any]], None] | None:
    """``check --db URL``: the scan database's duplicates and budgets, for TL406 and TL407,
    with the checked repository named as scans name it."""
    if url is None:
        return None

    _require_scans()

    def attach(jobs: Sequence[Job], params: Mapping[str, Any]) -> None:
        from trainlint.scans import context
        from trainlint.scans.scan import repository_name

        context.attach(jobs, url, repository_name(paths[0] if paths else Path(".")), params)

    return attach


def _require_scans() -> None:
    """The scan database's libraries are an extra: say how to install them."""
    import importlib.util

    from trainlint.errors import ConfigError

    if (
        importlib.util.find_spec("sqlalchemy") is None
        or importlib.util.find_spec("alembic") is None
    ):
        raise ConfigError("the scan database needs its extra: pip install 'trainlint[scans]'")
