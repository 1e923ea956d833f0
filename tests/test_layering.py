"""Architecture contracts (STYLE: conftest's separation): who may import what.

Only engine/ imports a Rego library, only cli imports click/rich, nothing imports torch yet
(the probe will), and the check path never imports a user's code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "trainlint"
ALLOWED = {
    "regorus": ("trainlint/engine/",),
    "regopy": ("trainlint/engine/",),
    "click": ("trainlint/cli.py",),
    "rich": ("trainlint/cli.py",),
    "torch": ("trainlint/probe/",),
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


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


def test_nothing_executes_or_imports_user_code() -> None:
    for path in PACKAGE.rglob("*.py"):
        used = calls_in(path)
        registry = path.name == "__init__.py" or path.parent.name == "engine"
        if registry and used <= {"import_module"}:
            continue  # registries import their own modules and backends' libraries by name
        assert not used, f"{path.relative_to(REPO)} calls {sorted(used)}"
