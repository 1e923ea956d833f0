"""``trainlint check --changed`` (the pre-commit hook) and ``--watch`` (a terminal kept open).

``--changed``: pre-commit passes the staged files, but a training job spans several files (a
launch script and the configs it references), so a file alone is no job to check. The whole
project is loaded (from the cache, but for what changed) and only the jobs that include one
of the files are evaluated and reported: edit a member config and its launch script's job is
checked again. A changed repo config can change any job, so it checks every job.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from trainlint.cli.base import EXIT_CLEAN
from trainlint.errors import ConfigError, TrainlintError

if TYPE_CHECKING:
    from trainlint.config import RepoConfig
    from trainlint.lint import CheckOptions

WATCHING = "trainlint: watching for changes (Ctrl-C stops)"
"""Printed to stderr after each report of ``--watch``: where one report ends."""


STARTED_MS = 200
"""How soon after the watcher starts the first check runs (watchfiles yields nothing until
a change or this timeout): the watcher is running before anything is read."""


def refuse_with_diff(*, changed: bool, watch: bool) -> None:
    """``--diff`` checks two revisions of a change already; it takes neither option."""
    for flag, given in (("--changed", changed), ("--watch", watch)):
        if given:
            raise ConfigError(f"{flag} cannot be combined with --diff")


def refuse_with_baseline(baseline: Path | None, *, changed: bool, watch: bool) -> None:
    """A baseline records every finding of the tree: one written from the jobs of some files
    (``--changed``) would drop the others' findings from it."""
    if baseline is not None and (changed or watch):
        flag = "--changed" if changed else "--watch"
        raise ConfigError(f"{flag} cannot be combined with --write-baseline")


def changed_files(
    targets: Sequence[Path], options: CheckOptions
) -> tuple[list[Path], CheckOptions]:
    """The project root to load, and ``options`` that report only the jobs including one of
    the ``targets`` (each named as an absolute path); the run's config is the root's."""
    from trainlint.config import project_root, run_config

    config = options.config
    root = project_root(targets, config) if config is not None else Path.cwd()
    if not options.one_config:
        config = run_config([root])
    files = tuple(Path(os.path.abspath(path)) for path in targets)
    return [root], replace(options, config=config, changed=files, root=root)


def cache_folder(config: RepoConfig) -> Path:
    """The config's ``cache-dir`` (relative to the config's folder)."""
    return config.root / (config.cache_dir or ".")


def watch_and_check(
    targets: Sequence[Path], ignored: Sequence[Path], check: Callable[[], object]
) -> NoReturn:
    """Run ``check``, then again after each change under ``targets`` (the screen cleared on a
    terminal); changes to ``ignored`` (the report being written, the cache) do not count."""
    try:
        from watchfiles import DefaultFilter, watch
    except ImportError:
        raise ConfigError("--watch needs watchfiles: pip install 'trainlint[watch]'") from None
    from trainlint.cache import CACHE_DIR
    from trainlint.cli.base import collect_rarely

    collect_rarely()  # a long run: garbage must not pile up check after check
    skipped = {os.path.abspath(path) for path in ignored}
    dirs = (*DefaultFilter.ignore_dirs, CACHE_DIR)

    class Changes(DefaultFilter):
        def __call__(self, change: object, path: str) -> bool:
            outside = not any(path == s or path.startswith(s + os.sep) for s in skipped)
            return outside and super().__call__(change, path)  # type: ignore[arg-type]

    first = True
    for changes in watch(*targets, watch_filter=Changes(ignore_dirs=dirs), raise_interrupt=False,
                         yield_on_timeout=True, rust_timeout=STARTED_MS):  # fmt: skip
        if first or changes:  # the first check once the watcher runs: no edit is missed
            if not first:
                click.clear()
            _once(check)
            first = False
    sys.exit(EXIT_CLEAN)


def _once(check: Callable[[], object]) -> None:
    """One check; a user error is shown and watching goes on (the next save may fix it)."""
    try:
        check()
    except TrainlintError as exc:
        click.echo(f"trainlint: error: {exc}", err=True)
    sys.stdout.flush()  # the report before the line that ends it
    click.echo(WATCHING, err=True)
