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

from trainlint.cli import checking, inspecting, packs, posting, probing, scanning, serving
from trainlint.cli.base import collect_never, collect_rarely, main
from trainlint.cli.packs import SIGNING_ALGORITHMS

__all__ = ["SIGNING_ALGORITHMS", "checking", "collect_never", "collect_rarely", "inspecting",
           "main", "packs", "posting", "probing", "run", "scanning", "serving"]  # fmt: skip


def run() -> None:
    """The ``trainlint`` program (console script and ``python -m trainlint``): ``main`` with
    the garbage collector off for a one-shot run. Tests call ``main`` and keep their own."""
    collect_never()
    main()
