"""Candidate discovery: suffixes, shebangs, default excludes and .gitignore."""

from __future__ import annotations

from pathlib import Path

from trainlint.discover import discover


def touch(root: Path, relative: str, text: str = "") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_discovery_rules(tmp_path: Path) -> None:
    touch(tmp_path, "configs/sft.yaml")
    touch(tmp_path, "configs/ds.json")
    touch(tmp_path, "scripts/launch", "#!/usr/bin/env bash\ntorchrun train.py\n")
    touch(tmp_path, "scripts/notes", "plain text\n")
    touch(tmp_path, "train.py")
    touch(tmp_path, ".venv/lib/x.yaml")
    touch(tmp_path, "node_modules/y.json")
    touch(tmp_path, "package.json")
    touch(tmp_path, "outputs/run1/trainer_state.json")
    touch(tmp_path, ".gitignore", "outputs/\n*.tmp.yaml\n")
    touch(tmp_path, "scratch.tmp.yaml")
    found = {p.relative_to(tmp_path).as_posix() for p in discover([tmp_path])}
    assert found == {"configs/sft.yaml", "configs/ds.json", "scripts/launch", "train.py"}


def test_explicit_files_are_always_candidates(tmp_path: Path) -> None:
    explicit = touch(tmp_path, "node_modules/odd.txt")
    assert discover([explicit]) == [explicit]


def test_other_tools_toml_files_are_not_candidates(tmp_path: Path) -> None:
    touch(tmp_path, "pyproject.toml", "[project\n")
    touch(tmp_path, "rust/Cargo.toml")
    touch(tmp_path, "train_configs/llama3_8b.toml", "[training\n")
    found = {p.relative_to(tmp_path).as_posix() for p in discover([tmp_path])}
    assert found == {"train_configs/llama3_8b.toml"}
