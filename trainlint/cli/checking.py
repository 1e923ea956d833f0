"""``trainlint check``: the linter itself, over a tree or (``--diff``) a change."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

import click

from trainlint import engine as engines
from trainlint.cli.base import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    handle_errors,
    main,
    split_values,
)
from trainlint.cli.fixing import FixMode, fix_and_recheck
from trainlint.cli.fixing import preview as preview_fixes
from trainlint.cli.scanning import database_context
from trainlint.cli.watching import (
    cache_folder,
    changed_files,
    refuse_with_baseline,
    refuse_with_diff,
    watch_and_check,
)
from trainlint.errors import ConfigError
from trainlint.parallel import THRESHOLD as PARALLEL_THRESHOLD
from trainlint.report import names as report_names
from trainlint.report import renderer

if TYPE_CHECKING:
    from rich.console import Console

    from trainlint.findings import Severity
    from trainlint.lint import CheckOptions
    from trainlint.results import DiffReport, Report


def run_check(paths: Sequence[Path], options: CheckOptions) -> Report:
    """``trainlint.lint.check``, imported when a check runs."""
    from trainlint.lint import check as lint_check

    return lint_check(paths, options)


def text_console(file: IO[str] | None = None, *, force_terminal: bool | None = None) -> Console:
    """A console that colours the text format on a terminal; files and pipes get plain text.
    (``file`` and ``force_terminal`` as rich's: stdout, and a terminal when it is one.)"""
    from rich.console import Console
    from rich.highlighter import RegexHighlighter
    from rich.theme import Theme

    class FindingHighlighter(RegexHighlighter):
        base_style = "tl."
        highlights = [  # noqa: RUF012 (rich's API is a class attribute)
            r"^(?P<location>[^\s:]+:\d+:\d+):",
            r"(?P<rule>\bTL\d{3}\b)",
            r"(?P<error>\[error\])|(?P<warning>\[warning\])|(?P<info>\[info\])",
            r"(?P<cost>\(~[^)]*per run\))",
        ]

    theme = Theme({
        "tl.location": "bold", "tl.rule": "bold magenta", "tl.error": "bold red",
        "tl.warning": "yellow", "tl.info": "cyan", "tl.cost": "green",
    })  # fmt: skip
    return Console(
        file=file, force_terminal=force_terminal, highlighter=FindingHighlighter(), theme=theme
    )


def print_text(console: Console, text: str) -> None:
    """Print a rendered report on a terminal: coloured by the highlighter, never read as rich
    markup, which would swallow ``[warning]`` and any bracketed file name or message."""
    console.print(text, end="", soft_wrap=True, markup=False)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(report_names()),
    default=None,
    help="Report format.  [default: github when GITHUB_ACTIONS=true, else text]",
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here."
)
@click.option(
    "--output-format",
    "also",
    multiple=True,
    metavar="FORMAT=FILE",
    help="Also write the report in FORMAT to FILE, rendered from the same evaluation "
    "(one check feeds annotations, SARIF and the PR comment); repeatable.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Use this config file for every checked file (a .trainlint.toml, .trainlint.yaml or "
    "pyproject.toml), instead of each file's closest one.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default=None,
    help="Exit 1 when a finding that counts has at least this severity.  [default: the "
    "config's fail-on, else warning]",
)
@click.option(
    "--exit-zero",
    is_flag=True,
    help="Exit 0 even when findings reach --fail-on (as ruff's); a usage, config or policy "
    "error still exits 2.",
)
@click.option(
    "--statistics",
    is_flag=True,
    help="Show each rule's count of findings and their cost per run, most findings first, "
    "instead of the findings (--format text or json).",
)
@click.option(
    "--select",
    multiple=True,
    help="Rules to run: id, prefix (TL2) or slug; repeatable or comma-separated. Replaces "
    "the config's select.",
)
@click.option(
    "--extend-select",
    multiple=True,
    help="Rules to run in addition to the selected ones.",
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
    help="Rego engine backend (opa: an OPA server's REST API, with --opa-url).",
)
@click.option(
    "--opa-url",
    metavar="URL",
    help="OPA server that evaluates the rules (--engine opa), e.g. http://opa:8181; a bearer "
    "token is read from TRAINLINT_OPA_TOKEN.",
)
@click.option(
    "--namespace",
    "namespaces",
    multiple=True,
    metavar="NS",
    help="Conftest-style namespace (package) whose deny/violation/warn rules run; repeatable, "
    "globs allowed (org.*).  [default: main]",
)
@click.option(
    "--all-namespaces",
    is_flag=True,
    help="Run the deny/violation/warn rules of every package in the pack.",
)
@click.option(
    "--conftest",
    "conftest_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    metavar="POLICY_DIR",
    help="Conftest mode: run this conftest policy directory's deny/violation/warn rules "
    "(package main, or --namespace) on every YAML, JSON and TOML file, each document as "
    "conftest parses it (input.kind, input.spec...), beside the job rules.",
)
@click.option(
    "--rego-v0",
    is_flag=True,
    help="Read pack modules whose .manifest declares no rego_version as Rego v0 "
    "(deny[msg] {...}), as conftest --rego-version v0 does.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Findings recorded in this baseline file do not count.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record the findings that count now in this file, then exit 0.",
)
@click.option(
    "--offline",
    is_flag=True,
    help="Use remote packs from the cache only; never touch the network.",
)
@click.option(
    "--diff",
    "diff_base",
    metavar="BASE_REF",
    help="Check only the jobs touched since the merge base of BASE_REF and HEAD (working "
    "tree included), at both revisions; report new, worsened and fixed findings and the cost "
    "change. Only new and worsened findings count for the exit code.",
)
@click.option(
    "--jobs",
    "-j",
    "workers",
    type=click.IntRange(min=1),
    help="Worker processes for parsing and evaluation.  [default: 2 (at most the cores) "
    f"from {PARALLEL_THRESHOLD} files or jobs, else 1]",
)
@click.option(
    "--pack",
    "packs",
    multiple=True,
    metavar="SOURCE",
    envvar="TRAINLINT_PACKS",
    help="An org pack the repository cannot remove: a path, entry-point:NAME or an https URL "
    "pinned by #sha256=HEX; repeatable. TRAINLINT_PACKS lists them separated by whitespace.",
)
@click.option(
    "--approved-by",
    "approved_by",
    metavar="NAMES",
    envvar="TRAINLINT_APPROVED_BY",
    help="Who approved this change, as the CI platform verified it (comma-separated): a waiver "
    "of a locked rule then counts only when its approved_by is among them.",
)
@click.option(
    "--db",
    "db_url",
    metavar="URL",
    help="The org's scan database (trainlint scan): TL406 names duplicate experiments in "
    "it, TL407 the team budgets this change crosses.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Report GPU workloads trainlint does not understand (TL907) as errors, for gates "
    "that want every workload checked.",
)
@click.option(
    "--fix",
    "fix",
    is_flag=True,
    help="Apply the safe fixes in place (the smallest text edit; comments and layout kept), "
    "then report what remains; the exit code counts only the remaining findings.",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="Also apply (with --fix) or show (with --fix-diff) the fixes that change the training "
    "itself: checkpoint interval, activation recomputation, mixed precision.",
)
@click.option(
    "--fix-diff",
    "fix_preview",
    is_flag=True,
    help="Print the unified diff --fix would write, and write nothing (ruff's --diff; --diff "
    "is diff mode here). Exit 1 when there is something to fix.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    envvar="TRAINLINT_NO_CACHE",
    help="Neither read nor write the cache (.trainlint_cache in the project root, or the "
    "config's cache-dir); the report is the same either way. Also TRAINLINT_NO_CACHE=1.",
)
@click.option(
    "--changed",
    is_flag=True,
    help="PATHS are changed files (pre-commit passes them): check the jobs that include any "
    "of them, read from the whole project (the rest comes from the cache).",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Check again whenever a file under PATHS changes, clearing the screen; Ctrl-C stops "
    "(needs trainlint[watch]).",
)
@handle_errors
def check(  # noqa: PLR0913 - a click command: one parameter per option
    paths: tuple[Path, ...],
    fmt: str | None,
    output: Path | None,
    also: tuple[str, ...],
    fail_on: str | None,
    exit_zero: bool,
    statistics: bool,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    engine_name: str,
    opa_url: str | None,
    namespaces: tuple[str, ...],
    all_namespaces: bool,
    baseline: Path | None,
    write_baseline: Path | None,
    offline: bool,
    diff_base: str | None = None,
    workers: int | None = None,
    strict: bool = False,
    packs: tuple[str, ...] = (),
    approved_by: str | None = None,
    config_file: Path | None = None,
    rego_v0: bool = False,
    conftest_dir: Path | None = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
    fix_preview: bool = False,
    db_url: str | None = None,
    no_cache: bool = False,
    changed: bool = False,
    watch: bool = False,
) -> None:
    """Check the training jobs under PATHS (default: the current directory). A click command
    takes each option as a parameter; the check's own go into one ``CheckOptions``."""
    from trainlint.config import load_config, run_config
    from trainlint.lint import CheckOptions

    _check_engine(engine_name, opa_url)
    out = Destination(fmt or _default_format(statistics), output, _extra_outputs(also),
                      statistics=statistics)  # fmt: skip
    _check_statistics(out, diff_base, write_baseline)
    targets = list(paths) or [Path(".")]
    config = load_config(config_file) if config_file is not None else run_config(targets)
    threshold = cast("Severity", fail_on or config.fail_on or "warning")
    options = CheckOptions(
        engine_name=engine_name, opa_url=opa_url, select=split_values(select) or None,
        extend_select=split_values(extend_select), ignore=split_values(ignore),
        baseline=baseline, namespaces=split_values(namespaces), all_namespaces=all_namespaces,
        offline=offline, workers=workers, strict=strict, packs=_pack_values(packs),
        approved_by=_names(approved_by), rego_v0=rego_v0, one_config=config_file is not None,
        conftest=conftest_dir.resolve() if conftest_dir else None,  # same policies in --diff
        context=database_context(db_url, targets),
    )  # fmt: skip
    fixing = FixMode(fix=fix, unsafe=unsafe_fixes, preview=fix_preview)
    _check_fix_flags(fixing, diff_base, write_baseline)
    if diff_base is not None:
        refuse_with_diff(changed=changed, watch=watch)
        if write_baseline is not None or config_file is not None:
            flag = "--write-baseline" if write_baseline is not None else "--config"
            raise ConfigError(f"{flag} cannot be combined with --diff (each revision is "
                              "checked under its own configs)")  # fmt: skip
        sys.exit(_exit_code(check_diff(targets, diff_base, options, out, threshold), exit_zero))
    own = [p for p in (output, write_baseline, baseline) if p is not None]
    own += [path for _, path in out.also]
    options = replace(options, config=config, exclude=own, cache=not no_cache)
    refuse_with_baseline(write_baseline, changed=changed, watch=watch)
    if watch and fixing.on:
        raise ConfigError("--watch cannot be combined with --fix or --fix-diff")
    if changed:
        targets, options = changed_files(targets, options)
    if watch:
        ignored = [*own, *([cache_folder(config)] if config.cache_dir else [])]
        watch_and_check(
            targets, ignored, lambda: _report(run_check(targets, options), out, threshold)
        )
    report = run_check(targets, options)
    if fixing.preview:
        sys.exit(_exit_code(preview_fixes(report, fixing), exit_zero))
    if fixing.fix:
        report = fix_and_recheck(report, lambda: run_check(targets, options), fixing)
    if write_baseline is not None:
        sys.exit(_write_baseline(report, write_baseline))
    sys.exit(_exit_code(_report(report, out, threshold), exit_zero))


def _check_fix_flags(mode: FixMode, diff_base: str | None, baseline: Path | None) -> None:
    """Fixes edit the working tree once: not in diff mode (two revisions) nor while a
    baseline is written; --unsafe-fixes widens --fix or --fix-diff and means nothing alone."""
    if mode.on and (diff_base is not None or baseline is not None):
        option = "--diff" if diff_base is not None else "--write-baseline"
        raise ConfigError(f"--fix and --fix-diff cannot be combined with {option}")
    if mode.unsafe and not mode.on:
        raise ConfigError("--unsafe-fixes applies with --fix or --fix-diff")


def _exit_code(code: int, exit_zero: bool) -> int:
    """``--exit-zero``: findings never fail the run (ruff's); errors still exit 2."""
    return EXIT_CLEAN if exit_zero and code == EXIT_FINDINGS else code


def _check_statistics(out: Destination, diff_base: str | None, baseline: Path | None) -> None:
    """``--statistics`` tallies one check's findings as text or JSON, as ruff's does."""
    if not out.statistics:
        return
    if out.fmt not in STATISTICS_FORMATS:
        raise ConfigError(f"--statistics is shown as text or json, not {out.fmt}")
    if diff_base is not None or baseline is not None:
        option = "--diff" if diff_base is not None else "--write-baseline"
        raise ConfigError(f"--statistics cannot be combined with {option}")


def _check_engine(engine_name: str, opa_url: str | None) -> None:
    """``--engine opa`` needs ``--opa-url``, and only it takes one; the URL must be https, or
    plain http to loopback, before anything is read."""
    if engine_name == "opa" and not opa_url:
        raise ConfigError("--engine opa needs --opa-url URL (the OPA server)")
    if opa_url and engine_name != "opa":
        raise ConfigError("--opa-url is only used with --engine opa")
    if opa_url:
        from trainlint.engine.opa_backend import check_url

        check_url(opa_url)


def _default_format(statistics: bool = False) -> str:
    """github annotations in GitHub Actions, else text; statistics are text everywhere."""
    in_actions = os.environ.get("GITHUB_ACTIONS") == "true"
    return "github" if in_actions and not statistics else "text"


STATISTICS_FORMATS = ("text", "json")


@dataclass(frozen=True)
class Destination:
    """Where a report goes: ``--output``, else stdout (coloured for text on a terminal)."""

    fmt: str
    output: Path | None
    also: tuple[tuple[str, Path], ...] = ()
    """``--output-format FORMAT=FILE``: more renderings of the same evaluation."""
    statistics: bool = False
    """``--statistics``: each rule's count and cost instead of the findings."""

    def render(self, report: Report) -> str:
        if self.statistics:
            from trainlint.report import _statistics

            tally = _statistics.render_json if self.fmt == "json" else _statistics.render_text
            return tally(report)
        if self.fmt == "markdown":
            from trainlint.report import markdown

            return markdown.render(report, link_base=link_base(diff_mode=False))
        return renderer(self.fmt)(report)

    def emit(self, text: str, render: Callable[[str], str] | None = None) -> None:
        """Write ``text`` (the main format), then each ``also`` rendering (``render(fmt)``)."""
        if render is not None:
            for fmt, path in self.also:
                write_report(path, render(fmt))
        if self.output is not None:
            write_report(self.output, text)
        elif self.fmt == "text" and sys.stdout.isatty():
            print_text(text_console(), text)
        else:
            click.echo(text, nl=False)


def _extra_outputs(values: Sequence[str]) -> tuple[tuple[str, Path], ...]:
    """``FORMAT=FILE`` pairs, each format one of ``--format``'s."""
    pairs = []
    for value in values:
        fmt, sep, file = value.partition("=")
        if not sep or not file or fmt not in report_names():
            raise ConfigError(f"--output-format {value!r}: expected FORMAT=FILE with FORMAT "
                              f"one of {', '.join(report_names())}")  # fmt: skip
        pairs.append((fmt, Path(file)))
    return tuple(pairs)


def _report(report: Report, out: Destination, threshold: Severity) -> int:
    """Render the report; the exit code: errors, else whether a finding that counts reaches
    ``threshold``."""
    from trainlint.findings import at_or_above

    judged = replace(report, fail_on=threshold)
    text = out.render(judged)
    if out.fmt == "github":
        append_step_summary(report)
    out.emit(text, lambda fmt: Destination(fmt, None).render(judged))
    if report.errors:
        return EXIT_ERROR
    counted = [f for f in report.findings if f.suppression is None]
    return EXIT_FINDINGS if at_or_above(counted, threshold) else EXIT_CLEAN


def _write_baseline(report: Report, path: Path) -> int:
    """``--write-baseline``: the findings that count now, recorded; exit 0 unless a job failed."""
    from trainlint import suppress

    written = suppress.write_baseline(report.findings, path)
    click.echo(f"Wrote {written} finding(s) to {path}.")
    return EXIT_ERROR if report.errors else EXIT_CLEAN


def _pack_values(packs: tuple[str, ...]) -> list[str]:
    """``--pack`` values, and ``TRAINLINT_PACKS`` split on whitespace."""
    return [word for value in packs for word in value.split()]


def _names(approved_by: str | None) -> list[str] | None:
    """``--approved-by a,b``: the verified approvers; None when the platform said nothing."""
    if approved_by is None:
        return None
    return [name.strip() for name in approved_by.split(",") if name.strip()]


def check_diff(
    targets: list[Path], base: str, options: CheckOptions, out: Destination, threshold: Severity
) -> int:
    """``check --diff``: the diff rendered (``render_diff``); new and worsened findings count."""
    from trainlint.diff import diff_check
    from trainlint.findings import at_or_above

    diff = diff_check(targets, base, options)
    rendered = render_diff(diff, out.fmt, threshold)
    if out.fmt == "github":
        append_step_summary(diff.head_report_counted())
    out.emit(rendered, lambda fmt: render_diff(diff, fmt, threshold))
    if diff.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if at_or_above([*diff.new, *diff.worsened], threshold) else EXIT_CLEAN


def render_diff(diff: DiffReport, fmt: str, threshold: Severity = "warning") -> str:
    """text = the new and worsened findings and a summary, json = the DiffReport, markdown =
    the PR comment, sarif = every finding of the touched jobs at the head; any other format
    renders the head's new and worsened findings (``threshold``: ``--fail-on``)."""
    from trainlint.report import markdown, text

    if fmt == "json":
        return diff.model_dump_json(indent=2) + "\n"
    if fmt == "markdown":
        return markdown.render_comment(diff, link_base=link_base(diff_mode=True))
    if fmt == "sarif":  # every finding of the touched jobs, so code scanning keeps their alerts
        return renderer(fmt)(replace(diff.head_report(), fail_on=threshold))
    if fmt == "text":
        report = diff.head_report_counted()
        lines = [text.format_finding(f) for f in report.findings]
        lines += [f"error: {e.side}: {e.job}: {e.message}" for e in diff.errors]
        return "\n".join([*lines, markdown.diff_line(diff)]) + "\n"
    return renderer(fmt)(replace(diff.head_report_counted(), fail_on=threshold))


def link_base(*, diff_mode: bool) -> str | None:
    """Where markdown's file links point: the host's blob view of the commit when the report
    is read in a pull request (the CI's variables set, or diff mode: the ``origin`` remote at
    HEAD), else None (links relative to the repository root)."""
    from trainlint.report._links import blob_base, blob_base_from_remote

    base = blob_base(os.environ)
    if base is not None or not diff_mode:
        return base
    remote, head = _git_output("remote", "get-url", "origin"), _git_output("rev-parse", "HEAD")
    return blob_base_from_remote(remote, head) if remote and head else None


def _git_output(*args: str) -> str:
    """``git ARGS``'s output in the working directory, "" when git fails."""
    import subprocess

    done = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def write_report(output: Path, text: str) -> None:
    """``--output``: replaced whole, never rewritten in place (``writing.replace_file``); a
    folder that does not exist yet is created (as ruff does)."""
    from trainlint.writing import replace_file

    replace_file(output, text)


def append_step_summary(report: Report) -> None:
    """In GitHub Actions, add the job summary (every finding) to the step's summary file: the
    runner owns that file, so it is appended to (one write), not replaced."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        from trainlint.report import github as github_report

        data = github_report.job_summary(report).encode("utf-8")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except OSError as exc:
            raise ConfigError(f"cannot append to $GITHUB_STEP_SUMMARY ({path}): "
                              f"{exc.strerror or exc}") from None  # fmt: skip
