"""trainlint probe bootstrap: put this folder first on ``PYTHONPATH`` and every Python process
of the job runs it at start-up (``site`` imports ``sitecustomize``).

Without ``TRAINLINT_PROBE_DIR`` it does nothing but chain. With it, it loads
``trainlint/probe/hooks.py`` by path — stdlib only, so the job's interpreter need not import the
rest of trainlint — registered as ``trainlint.probe.hooks`` so a later
``from trainlint.probe import step`` shares the same state, and calls ``install()``.

Either way it then runs the next ``sitecustomize`` on ``sys.path`` (the environment's own),
which this module shadows, so a job that relies on one keeps it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib.machinery import PathFinder

_HERE = os.path.dirname(os.path.abspath(__file__))


def _probe() -> None:
    name = "trainlint.probe.hooks"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(os.path.dirname(_HERE), "hooks.py")
        )
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    module.install()


def _chain() -> None:
    """Run the ``sitecustomize`` this one hides (the first other one on ``sys.path``)."""
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None or spec.origin == __file__:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


if os.environ.get("TRAINLINT_PROBE_DIR"):
    try:
        _probe()
    except Exception as error:
        print(f"trainlint probe: bootstrap failed: {error}", file=sys.stderr)
_chain()
