"""Shared test helpers: repository paths and the shared corpus (read in place, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
CORPUS = REPO.parent / "shared" / "corpus"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test from an empty temporary directory (paths in reports are cwd-relative)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
