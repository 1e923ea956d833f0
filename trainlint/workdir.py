"""Run a block with another working directory (``contextlib.chdir`` arrived in Python 3.11).

Job ids and report paths are relative to the working directory, so checking a case folder or a
revision's tree from inside it gives the paths a user sees. Not thread-safe: ``os.chdir``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)
