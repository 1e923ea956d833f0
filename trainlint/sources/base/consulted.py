"""What a reader consults besides the file it reads (a base config, a Hydra group file, a
script it checks for): noted while one document is read (``noting``), so a cache keeping
the document can tell when one of them changed (``cache.Stub``, ``cache.ClosureMemo``).
Readers look at other files only through ``is_file`` and ``note("text", ...)``
(``structured.hydra_defaults.repository_text``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

Consulted = tuple[str, str]
"""(kind, absolute path): "text", a file read; "file", a place checked for a file."""

_NOTED: ContextVar[list[Consulted] | None] = ContextVar("consulted", default=None)


@contextmanager
def noting() -> Iterator[list[Consulted]]:
    """Note every file consulted in the block, into the list it yields."""
    noted: list[Consulted] = []
    token = _NOTED.set(noted)
    try:
        yield noted
    finally:
        _NOTED.reset(token)


def note(kind: str, path: Path | str) -> None:
    """Note that ``path`` was consulted (nothing outside ``noting``)."""
    noted = _NOTED.get()
    if noted is not None:
        noted.append((kind, os.path.abspath(path)))


def is_file(path: Path) -> bool:
    """``path.is_file()``, noted."""
    note("file", path)
    return path.is_file()
