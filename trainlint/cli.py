"""Command line: thin click commands over the library (only this module imports click/rich).

Exit codes (STYLE: pre-commit's tiers): 0 clean, 1 findings at or above ``--fail-on``,
2 usage/config/policy error, 3 crash (with a crash report), 130 interrupted.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import traceback
from collections.abc import Callable
from datetime import datetime, timezone
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar, cast

import click
import yaml
from rich.console import Console
from rich.highlighter import RegexHighlighter
from rich.table import Table
from rich.theme import Theme

from trainlint import __version__
from trainlint import engine as engines
from trainlint.errors import TrainlintError
from trainlint.estimate_view import document as estimate_document
from trainlint.estimate_view import render_text as render_estimates
from trainlint.estimate_view import view as estimate_view
from trainlint.findings import Severity, at_or_above
from trainlint.formats import catalogue
from trainlint.lint import check as run_check
from trainlint.lint import load_jobs
from trainlint.packs import load_builtin_pack
from trainlint.report import renderers

F = TypeVar("F", bound=Callable[..., Any])

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_CRASH, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class FindingHighlighter(RegexHighlighter):
    """Colours for the text format on a terminal; files and pipes get plain text."""

    base_style = "tl."
    highlights = [  # noqa: RUF012 (rich's API is a class attribute)
        r"^(?P<location>[^\s:]+:\d+:\d+):",
        r"(?P<rule>\bTL\d{3}\b)",
        r"(?P<error>\[error\])|(?P<warning>\[warning\])|(?P<info>\[info\])",
        r"(?P<cost>\(~[^)]*per run\))",
    ]


THEME = Theme({
    "tl.location": "bold", "tl.rule": "bold magenta", "tl.error": "bold red",
    "tl.warning": "yellow", "tl.info": "cyan", "tl.cost": "green",
})  # fmt: skip


def handle_errors(command: F) -> F:
    """One top-level handler: user errors are one line (exit 2), crashes leave a report (exit 3)."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except TrainlintError as exc:
            click.echo(f"trainlint: error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # `trainlint show | head`: the reader left, nothing is wrong
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stdout must stay open to exit)
            sys.exit(EXIT_CLEAN)
        except Exception:
            path = write_crash_report()
            click.echo(f"trainlint: internal error; crash report written to {path}", err=True)
            sys.exit(EXIT_CRASH)

    return wrapper  # type: ignore[return-value]


def write_crash_report() -> Path:
    """Versions and the traceback (never file contents), for a bug report."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    with tempfile.NamedTemporaryFile(
        "w", prefix=f"trainlint-crash-{stamp}-", suffix=".log", delete=False
    ) as handle:
        handle.write(
            f"trainlint {__version__}\npython {sys.version}\nplatform {platform.platform()}\n"
        )
        handle.write(f"argv {sys.argv}\n\n{traceback.format_exc()}")
    return Path(handle.name)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="trainlint")
def main() -> None:
    """Policy-as-code linter for ML training jobs."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here."
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default="warning",
    show_default=True,
    help="Exit 1 when a finding has at least this severity.",
)
@click.option(
    "--select",
    multiple=True,
    help="Rules to run: id, prefix (TL2) or slug; repeatable or comma-separated.",
)
@click.option(
    "--ignore",
    multiple=True,
    help="Rules to skip: id, prefix or slug; repeatable or comma-separated.",
)
@click.option(
    "--engine",
    "engine_name",
    type=click.Choice(sorted(engines.ENGINES)),
    default=engines.DEFAULT_ENGINE,
    show_default=True,
    help="Rego engine backend.",
)
@handle_errors
def check(
    paths: tuple[Path, ...],
    fmt: str,
    output: Path | None,
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    engine_name: str,
) -> None:
    """Check the training jobs under PATHS (default: the current directory)."""
    report = run_check(list(paths) or [Path(".")], engine_name, _split(select), _split(ignore))
    text = renderers()[fmt](report)
    if output is not None:
        output.write_text(text)
    elif fmt == "text" and sys.stdout.isatty():
        Console(highlighter=FindingHighlighter(), theme=THEME).print(text, end="", soft_wrap=True)
    else:
        click.echo(text, nl=False)
    if report.errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if at_or_above(report.findings, cast(Severity, fail_on)) else EXIT_CLEAN)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["json", "yaml"]), default="json", show_default=True
)
@handle_errors
def show(paths: tuple[Path, ...], fmt: str) -> None:
    """Show the jobs trainlint sees: every fact with its provenance, and the estimates."""
    jobs = load_jobs(list(paths) or [Path(".")])
    document = {"jobs": [job.as_input() for job in jobs]}
    if fmt == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(yaml.safe_dump(document, sort_keys=False), nl=False)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@handle_errors
def estimate(paths: tuple[Path, ...], fmt: str) -> None:
    """Estimate memory per GPU, step time, run cost and checkpoint overhead, with sources."""
    jobs = load_jobs(list(paths) or [Path(".")])
    if fmt == "json":
        click.echo(json.dumps(estimate_document(jobs), indent=2))
    elif sys.stdout.isatty() and jobs:
        console = Console()
        for job in jobs:
            shown = estimate_view(job)
            table = Table(title=shown.id, title_justify="left", show_header=True)
            for column in ("section", "estimate", "value", "source"):
                table.add_column(column, justify="right" if column == "value" else "left")
            section = None
            for row in shown.rows:
                heading = row.section if row.section != section else ""
                table.add_row(heading, row.label, row.value, row.source)
                section = row.section
            for name, how in shown.unknown:
                table.add_row("Unknown input", name, "", how, style="yellow")
            console.print(table)
    else:
        click.echo(render_estimates(jobs), nl=False)


@main.command()
@handle_errors
def rules() -> None:
    """List the rules of the builtin pack."""
    for rule in sorted(load_builtin_pack().rules, key=lambda r: r.id):
        summary = first_sentence(rule.description)
        click.echo(f"{rule.id}  {rule.slug:<26} {rule.severity:<8} {summary}")


@main.command()
@handle_errors
def formats() -> None:
    """List the formats trainlint reads, with example file names (docs/formats.md has keys)."""
    for info in catalogue():
        examples = ", ".join(info.examples)
        click.echo(f"{info.name:<16} {info.role:<11} {examples}")


def first_sentence(text: str) -> str:
    """A rule's one-line summary: the first sentence of its METADATA description."""
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]
