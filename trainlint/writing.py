"""How trainlint writes every file of its own — a report, a baseline, a starter config, a
pack bundle, its signatures, a scaffold, the generated docs: replaced whole, never rewritten in
place, so a reader (or a run killed mid-write) never leaves or sees half a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from trainlint.errors import ConfigError


def replace_file(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) as the file ``path`` so that no reader ever sees part of
    it: into a new file in the same folder (flushed to disk), then renamed over ``path`` in one
    step. A reader that had the old file open keeps reading the old file whole; a run killed
    mid-write leaves
    ``path`` as it was (and at worst a ``.trainlint-*.tmp`` beside it). Missing folders are
    created (``--output reports/x.json``); the old file's permissions are kept; a symlink at
    ``path`` is replaced, not written through. A pipe or a device (``/dev/stdout``) cannot be
    replaced and is written to as a stream. Failures are a ConfigError naming the path."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            current: os.stat_result | None = path.stat()
        except FileNotFoundError:
            current = None
        if current is not None and not stat.S_ISREG(current.st_mode):
            with path.open("wb") as stream:
                stream.write(raw)
            return
        _replace(path, raw, current)
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
