"""``check --fix``, ``--unsafe-fixes`` and ``--fix-diff``: the fixes written (or shown), then
the check run again so the report and the exit code are those of what remains (as ruff's)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trainlint.cli.base import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS

if TYPE_CHECKING:
    from trainlint.results import Report

MAX_PASSES = 10
"""Passes of fix-then-check: a fix dropped for overlapping another applies on the next pass;
a fix that keeps producing fixes (which none should) stops here."""


@dataclass(frozen=True)
class FixMode:
    """What the fix flags asked for."""

    fix: bool = False
    unsafe: bool = False
    preview: bool = False

    @property
    def on(self) -> bool:
        return self.fix or self.preview


def fix_and_recheck(report: Report, recheck: Callable[[], Report], mode: FixMode) -> Report:
    """Write the chosen fixes and check again until none applies (``MAX_PASSES`` at most);
    the last check's report, with a summary of what was fixed on stderr."""
    from trainlint.fix.apply import chosen, plan, write

    root = report.root or Path.cwd()
    fixed = 0
    for _ in range(MAX_PASSES):
        files = plan(root, chosen(report.findings, mode.unsafe))
        if not files:
            break
        write(root, files)
        fixed += sum(file.fixed for file in files)
        report = recheck()
    click.echo(f"Fixed {fixed} finding(s).{_unsafe_hint(report, mode)}", err=True)
    return report


def preview(report: Report, mode: FixMode) -> int:
    """``--fix-diff``: the unified diff of what ``--fix`` would write, on stdout; nothing is
    written. Exit 1 when there is something to fix (ruff's ``--diff``), 2 on errors."""
    from trainlint.fix.apply import chosen, plan

    files = plan(report.root or Path.cwd(), chosen(report.findings, mode.unsafe))
    click.echo("".join(file.diff() for file in files), nl=False)
    count = sum(file.fixed for file in files)
    click.echo(f"Would fix {count} finding(s).{_unsafe_hint(report, mode)}", err=True)
    if report.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if files else EXIT_CLEAN


def _unsafe_hint(report: Report, mode: FixMode) -> str:
    """How many more findings ``--unsafe-fixes`` would fix, when it is off and some would."""
    if mode.unsafe:
        return ""
    more = sum(1 for f in report.findings
               if f.fix is not None and not f.fix.safe and f.suppression is None)  # fmt: skip
    return f" {more} more fixable with --unsafe-fixes." if more else ""
