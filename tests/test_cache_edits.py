"""Edits of real repositories (tests/fresh/repos), at random and at the files readings share:
after each, the cached report is the uncached one, byte for byte. These found documents kept
while a ``_base_`` config or a Hydra group file they were read through had changed
(mmpretrain, verl). ``benchmarks/cache_stress.py`` runs the same over every repository."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from trainlint.lint import CheckOptions, check
from trainlint.report import renderer

REPOS = REPO / "tests" / "fresh" / "repos"
SHARED = {  # a file other files are read through, edited first
    "mmpretrain": "configs/_base_/default_runtime.py",
    "verl": "verl/trainer/config/model/hf_model.yaml",
    "detectron2": "configs/Base-RCNN-FPN.yaml",
}


@pytest.fixture(autouse=True)
def _user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TRAINLINT_NO_CACHE")


def report(root: Path, *, cache: bool) -> str:
    return renderer("json")(check([root], CheckOptions(cache=cache)))


def edit(path: Path, rng: random.Random) -> None:
    """Delete a line, change a number or add a blank line: bytes, values or positions."""
    text = path.read_text(errors="replace")
    lines = text.splitlines(keepends=True)
    numbers = list(re.finditer(r"\b\d+\b", text))
    kind = rng.choice(["line", "number", "blank"])
    if kind == "line" and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
        path.write_text("".join(lines))
    elif kind == "number" and numbers:
        found = rng.choice(numbers)
        path.write_text(f"{text[: found.start()]}{int(found.group()) * 2 + 1}{text[found.end() :]}")
    else:
        path.write_text("\n" + text)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mmpretrain", "verl", "detectron2", "nanotron"])
def test_every_edit_gives_the_uncached_report(tmp_path: Path, name: str) -> None:
    root = tmp_path / name
    shutil.copytree(REPOS / name, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    rng = random.Random(name)
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
                   and p.suffix in (".yaml", ".yml", ".json", ".sh", ".py", ".toml"))  # fmt: skip
    shared = [root / SHARED[name]] if name in SHARED else []
    report(root, cache=True)
    for path in shared:  # every value read through it moves a line down
        path.write_text("\n" + path.read_text())
        assert report(root, cache=True) == report(root, cache=False), path.relative_to(root)
    for path in rng.sample(files, 4):
        edit(path, rng)
        assert report(root, cache=True) == report(root, cache=False), path.relative_to(root)
