"""Command line: thin click commands over the library (only this package imports click/rich).

One module per group of commands: ``checking`` (check, with ``--diff``), ``inspecting`` (show,
estimate, rule, rules, formats, init), ``packs`` (pack ...), ``posting`` (comment),
``probing`` (probe), ``serving`` (server) and ``scanning`` (scan, report); ``base`` holds
the ``main`` group, the exit codes and the error handler.
Importing this package registers every command.

Start-up time matters (a pre-commit hook runs this once per commit): these modules import click
and the cheap registries only; each command imports what it uses (pydantic models, the packs,
rich, yaml) when it runs, so ``--version`` and ``--help`` import almost nothing.
"""

from __future__ import annotations

import gc

from trainlint.cli import checking, inspecting, packs, posting, probing, scanning, serving
from trainlint.cli.base import main
from trainlint.cli.packs import SIGNING_ALGORITHMS

__all__ = ["SIGNING_ALGORITHMS", "checking", "collect_rarely", "inspecting", "main", "packs",
           "posting", "probing", "run", "scanning", "serving"]  # fmt: skip


def run() -> None:
    """The ``trainlint`` program (console script and ``python -m trainlint``): ``main`` with
    the garbage collector set for a short run. Tests call ``main`` and keep their own."""
    collect_rarely()
    main()


def collect_rarely() -> None:
    """A check allocates millions of small objects (parsed documents, facts, jobs) that live
    until the report is written, and CPython's default thresholds rescan them ever more often
    as they pile up: the collector took 0.14 s of a one-process 1,000-file check and 1.5 s of
    a 5,000-file one, 0.04 s and 0.26 s with this setting (docs/benchmarks.md). The objects
    alive now are frozen out of collection and the young generation is collected every 50,000
    allocations; reference cycles are still collected. Forked workers inherit the setting."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
