"""Run a block with another working directory (``contextlib.chdir`` arrived in Python 3.11).

Job ids and report paths are relative to the working directory, so a check runs from its
project root (``at_root``): the report, its fingerprints and the baseline's entries are the
same from any folder (``cd configs && trainlint check ..`` reports what ``trainlint check .``
does from the root). Not thread-safe: ``os.chdir``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


@contextlib.contextmanager
def at_root(root: Path, paths: Sequence[Path]) -> Iterator[list[Path]]:
    """Inside ``root``, with ``paths`` (named from the current directory) as named from
    ``root``: relative under it, absolute outside it."""
    absolute = [Path(os.path.abspath(path)) for path in paths]
    with working_directory(root):
        yield [from_root(path, root) for path in absolute]


def from_root(path: Path, root: Path) -> Path:
    """An absolute ``path`` relative to ``root`` when it lies under it (as named, else with
    symlinks resolved: a root found through ``realpath``), else as it is."""
    real = Path(os.path.realpath(path))
    for named, top in ((path, os.path.abspath(root)), (real, os.path.realpath(root))):
        if named.is_relative_to(top):
            return named.relative_to(top)
    return path
