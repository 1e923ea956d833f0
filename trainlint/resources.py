"""Where the bundled policies and schemas live: inside the wheel, or in the source tree."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def bundled(name: str) -> Path:
    """``policies`` or ``schemas``: the wheel's copy if installed, else the repository's."""
    installed = _PACKAGE / "_bundled" / name
    return installed if installed.is_dir() else _PACKAGE.parent / name
