"""Rego engines behind one small interface (DESIGN §1, step 5).

A backend compiles a pack's modules and data once, in its constructor; ``evaluate`` only sets
the input and queries every rule's ``findings`` (the embedded backends through the generated
module of ``collect``), and ``query`` reads any other document (the
conftest-style ``data.<namespace>.deny`` rules). The ``opa`` backend is remote: it compiles
nothing and sends each job to an OPA server (``--opa-url``), so it is not listed by
``available_engines``. Backends are imported on demand, and each
imports its Rego library inside its constructor, so ``import trainlint.engine`` stays cheap
and a missing optional library only matters to whoever asks for that backend. Only this
package may import a Rego library.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from trainlint.errors import PolicyError

if TYPE_CHECKING:
    from trainlint.packs import Pack

Findings = dict[str, list[dict[str, Any]]]
"""Per rule package (``checkpoint_too_frequent``): its raw findings, in a stable order."""


class Engine(Protocol):
    """A pack compiled into one Rego engine, ready to evaluate any number of jobs."""

    name: str

    def evaluate(self, job_input: dict[str, Any]) -> Findings:
        """Findings of every rule for one job (``Job.as_input()``)."""
        ...

    def query(self, job_input: dict[str, Any], query: str) -> Any:
        """The value of a reference such as ``data.main.deny`` for one job; None if undefined."""
        ...


@dataclass(frozen=True)
class Backend:
    """Where a backend lives and what it needs installed."""

    module: str
    library: str
    install: str
    remote: bool = False  # evaluates on a server: needs its URL, compiles nothing locally


ENGINES: dict[str, Backend] = {
    "regorus": Backend(
        "trainlint.engine.regorus_backend", "regorus", "pip install gordon-to-regorus"
    ),
    "regopy": Backend(
        "trainlint.engine.regopy_backend", "regopy", "pip install 'trainlint[regopy]'"
    ),
    "opa": Backend("trainlint.engine.opa_backend", "httpx", "pip install httpx", remote=True),
}
DEFAULT_ENGINE = "regorus"


def available_engines() -> list[str]:
    """The embedded backends whose Rego library imports in this environment, in registry order
    (a remote backend needs a server, so it is never one of them)."""
    return [
        name
        for name, backend in ENGINES.items()
        if not backend.remote and _importable(backend.library)
    ]


def create_engine(name: str, pack: Pack, *, opa_url: str | None = None) -> Engine:
    """Compile ``pack`` with the named backend; PolicyError if unknown, missing or invalid.

    ``opa_url`` is the server of a remote backend (required there, unused by the others).
    """
    backend = ENGINES.get(name)
    if backend is None:
        raise PolicyError(f"unknown engine {name!r}; choose one of: {', '.join(ENGINES)}")
    if not _importable(backend.library):
        raise PolicyError(f"engine {name!r} is not installed: {backend.install}")
    module = importlib.import_module(backend.module)
    if backend.remote:
        if not opa_url:
            raise PolicyError(f"engine {name!r} needs the server's URL (--opa-url)")
        remote: Callable[..., Engine] = module.create
        return remote(pack, url=opa_url)
    factory: Callable[[Pack], Engine] = module.create
    return factory(pack)


@functools.cache
def _importable(library: str) -> bool:
    try:
        importlib.import_module(library)
    except (ImportError, OSError):
        return False
    return True
