"""Architecture contracts (STYLE: conftest's separation): who may import what.

Only engine/ imports a Rego library, only cli imports click/rich, only the probe imports torch,
and the check path never imports a user's code: the probe alone runs a job, and only when a
user asks for it (`trainlint probe --mode entrypoint`, DESIGN §8).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "trainlint"
ALLOWED = {
    "regorus": ("trainlint/engine/",),
    "regopy": ("trainlint/engine/",),
    "click": ("trainlint/cli/",),
    "rich": ("trainlint/cli/",),
    "torch": ("trainlint/probe/",),
}


@functools.cache  # each library's test reads the same files
def imported_roots(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text())
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return frozenset(roots)


@pytest.mark.parametrize("library", sorted(ALLOWED))
def test_library_is_imported_only_where_allowed(library: str) -> None:
    offenders = [
        path.relative_to(REPO).as_posix()
        for path in PACKAGE.rglob("*.py")
        if library in imported_roots(path)
        and not path.relative_to(REPO).as_posix().startswith(ALLOWED[library])
    ]
    assert offenders == []


BUILTINS = {"exec", "eval", "compile", "__import__"}
METHODS = {"import_module", "run_path", "run_module", "exec_module", "load_module"}


def calls_in(path: Path) -> set[str]:
    """Names of builtins called bare, and of the loader methods called on anything."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            names.add(node.func.id if node.func.id in BUILTINS else "")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            names.add(node.func.attr if node.func.attr in METHODS else "")
    return names - {""}


PROBE = PACKAGE / "probe"


def test_nothing_executes_or_imports_user_code() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PROBE):
            continue  # runs the job by request; test_check_never_imports_the_probe keeps it apart
        used = calls_in(path)
        registry = path.name == "__init__.py" or path.parent.name == "engine"
        if registry and used <= {"import_module"}:
            continue  # registries import their own modules and backends' libraries by name
        assert not used, f"{path.relative_to(REPO)} calls {sorted(used)}"


def test_check_never_imports_the_probe() -> None:
    """The code that executes jobs is unreachable from the linter's import graph."""
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PROBE) or path == PACKAGE / "cli" / "probing.py":
            continue  # the `probe` command imports the probe when it runs
        tree = ast.parse(path.read_text())
        modules = {node.module for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and node.module}  # fmt: skip
        modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names}  # fmt: skip
        # the schema generator (a dev tool, off the check path) renders the measurement model
        allowed = {"trainlint.probe.result"} if path == PACKAGE / "schema.py" else set()
        assert not any(m.startswith("trainlint.probe") for m in modules - allowed), path
