"""Output formats: every module here with a ``render(report) -> str`` is one, named after it.

``names`` lists the formats without importing them (the CLI's ``--format`` choices on every
start); ``renderer`` imports only the one a run asks for. Reports are written with
``writing.replace_file``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainlint.results import Report

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
