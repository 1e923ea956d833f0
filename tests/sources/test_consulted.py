"""Readers look at other files only through ``sources/base/consulted.py``: every file a
document's reading depends on besides its own text is noted, so the cache can tell when the
document is stale (tests/test_cache.py edits a ``_base_`` config to see it)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO
from trainlint.sources.base.consulted import noting
from trainlint.sources.structured.hydra_defaults import repository_text

SOURCES = REPO / "trainlint" / "sources"
LOOKS = {"is_file", "is_dir", "exists", "read_text", "read_bytes", "iterdir", "glob", "rglob",
         "stat", "listdir", "scandir", "walk", "isfile", "isdir", "open",
         "open_regular"}  # fmt: skip
ALLOWED = {
    SOURCES / "base" / "consulted.py",  # the one place, noted
    SOURCES / "structured" / "hydra_defaults.py",  # repository_text, noted as "text"
}


def file_system_calls(path: Path) -> list[str]:
    """The calls in ``path`` that look at the file system, as ``name:line``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
            if name in LOOKS and owner not in ("consulted", "ast"):  # ast.walk: no file
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {name}")
    return found


def test_readers_consult_other_files_only_through_consulted() -> None:
    calls = [call for path in sorted(SOURCES.rglob("*.py")) if path not in ALLOWED
             for call in file_system_calls(path)]  # fmt: skip
    assert calls == []


def test_a_file_read_and_a_place_checked_are_noted(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text("a: 1\n")
    with noting() as noted:
        assert repository_text(base, (tmp_path,)) == "a: 1\n"
    assert noted == [("text", str(base))]
