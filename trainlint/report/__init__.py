"""Output formats: every module here with a ``render(report) -> str`` is one, named after it.

``names`` lists the formats without importing them (the CLI's ``--format`` choices on every
start); ``renderer`` imports only the one a run asks for. ``replace_file`` is how trainlint
writes every file of its own (the report, the baseline, a starter config).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import stat
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from trainlint.errors import ConfigError

if TYPE_CHECKING:
    from trainlint.lint import Report

Renderer = Callable[["Report"], str]


@cache
def _modules() -> dict[str, str]:
    """Format name (``json_`` → ``json``) → module name, from this folder's file names."""
    found = {
        info.name.rstrip("_"): info.name
        for info in pkgutil.iter_modules(__path__)
        if not info.name.startswith("_")
    }
    return dict(sorted(found.items()))


def names() -> list[str]:
    """The format names, sorted, without importing any format module."""
    return list(_modules())


def renderer(name: str) -> Renderer:
    """The render function of one format (KeyError if there is no such format)."""
    module = importlib.import_module(f"{__name__}.{_modules()[name]}")
    render: Renderer = module.render
    return render


@cache
def renderers() -> dict[str, Renderer]:
    """Format name (``json_`` → ``json``) → render function, discovered from this folder."""
    found: dict[str, Renderer] = {}
    for name, module_name in _modules().items():
        module = importlib.import_module(f"{__name__}.{module_name}")
        render = getattr(module, "render", None)
        if callable(render):
            found[name] = render
    return found


def replace_file(path: Path, text: str) -> None:
    """Write ``text`` as the file ``path`` so that no reader ever sees part of it: into a new
    file in the same folder (flushed to disk), then renamed over ``path`` in one step. A reader
    that had the old file open keeps reading the old file whole; a run killed mid-write leaves
    ``path`` as it was (and at worst a ``.trainlint-*.tmp`` beside it). Missing folders are
    created (``--output reports/x.json``); the old file's permissions are kept; a symlink at
    ``path`` is replaced, not written through. A pipe or a device (``/dev/stdout``) cannot be
    replaced and is written to as a stream. Failures are a ConfigError naming the path."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            current: os.stat_result | None = path.stat()
        except FileNotFoundError:
            current = None
        if current is not None and not stat.S_ISREG(current.st_mode):
            with path.open("w", encoding="utf-8") as stream:
                stream.write(text)
            return
        _replace(path, text.encode("utf-8"), current)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


def _replace(path: Path, data: bytes, current: os.stat_result | None) -> None:
    """Stage ``data`` beside ``path`` (new name, exclusive create), then ``os.replace``."""
    staged = path.parent / f".trainlint-{os.urandom(6).hex()}.tmp"
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            if current is not None:
                os.fchmod(handle.fileno(), stat.S_IMODE(current.st_mode))
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staged, path)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
