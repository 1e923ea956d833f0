"""The import contracts of pyproject.toml (``[tool.importlinter]``), checked by import-linter.

Reports and comments never load the pipeline, sources never evaluate, estimate or report, and
click/rich, the Rego libraries, pygls and torch each stay behind the one package that owns
them. The first test holds the tree to them; the second shows that a planted violation breaks them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONTRACTS = [
    contract["name"]
    for contract in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
]
LINT_IMPORTS = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter on the ``trainlint`` package under ``root``, with ``root``'s
    pyproject.toml; a fresh process, so the package it analyses is the one under ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-c", LINT_IMPORTS, "--no-cache", "--config", "pyproject.toml"]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)


def test_the_import_contracts_hold() -> None:
    done = lint_imports(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in done.stdout


@pytest.mark.parametrize(
    ("module", "planted", "contract"),
    [
        ("report/text.py", "import click\n", "Only cli/ imports click and rich"),
        (
            "report/json_.py",
            "def _lazy() -> None:\n    from trainlint import lint  # noqa\n",
            "Reports and comments render results; they never run the pipeline",
        ),
        (
            "sources/base/table.py",
            "from trainlint.estimate import estimate\n",
            "Sources read files; they never evaluate, estimate or report",
        ),
        ("estimate/cost.py", "import regorus\n", "Only engine/ imports the Rego libraries"),
        ("files.py", "import torch\n", "Only probe/ imports torch"),
        ("read.py", "import pygls\n", "Only server/ imports pygls and lsprotocol"),
        ("files.py", "import sqlalchemy\n", "Only scans/ imports SQLAlchemy and Alembic"),
    ],
)
def test_a_planted_violation_breaks_its_contract(
    tmp_path: Path, module: str, planted: str, contract: str
) -> None:
    """A copy of the package with one import that a contract forbids (a function-level one
    counts too) fails the check, and the report names that contract."""
    assert contract in CONTRACTS
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    copy = tmp_path / "trainlint"
    shutil.copytree(REPO / "trainlint", copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / module).open("a", encoding="utf-8") as handle:
        handle.write("\n" + planted)
    done = lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{contract} BROKEN" in done.stdout
    assert f"Contracts: {len(CONTRACTS) - 1} kept, 1 broken." in done.stdout
