"""Output formats: every module here with a ``render(report) -> str`` is one, named after it."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache

from trainlint.lint import Report

Renderer = Callable[[Report], str]


@cache
def renderers() -> dict[str, Renderer]:
    """Format name (``json_`` → ``json``) → render function, discovered from this folder."""
    found: dict[str, Renderer] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        render = getattr(module, "render", None)
        if callable(render):
            found[info.name.rstrip("_")] = render
    return dict(sorted(found.items()))
