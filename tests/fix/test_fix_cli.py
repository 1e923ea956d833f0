"""``trainlint check --fix`` end to end: the example's fixes, exact and idempotent, the exit
code of what remains, the preview that writes nothing, and unsafe fixes only when asked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.fix.helpers import check, project, texts


def _rules(output: str) -> list[str]:
    return [finding["rule"] for finding in json.loads(output)["findings"]]


@pytest.fixture
def llama(in_tmp: Path) -> Path:
    shutil.copytree(EXAMPLES / "llama3-sft", in_tmp / "llama3-sft")
    return in_tmp / "llama3-sft"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_fix_on_the_example_changes_two_lines_and_keeps_the_comments(llama: Path) -> None:
    slurm, config = _lines(llama / "train.slurm"), _lines(llama / "configs/sft.yaml")
    result = check(llama, "--fix")
    assert "TL301" not in _rules(result.stdout) and "TL302" not in _rules(result.stdout)
    assert _lines(llama / "train.slurm") == [line for line in slurm
                                             if line != "export NCCL_DEBUG=INFO"]  # fmt: skip
    assert "# Left over from debugging a hang last week." in _lines(llama / "train.slurm")
    assert _lines(llama / "configs/sft.yaml") == [
        "logging_steps: 10" if line == "logging_steps: 1" else line for line in config
    ]
    assert "Fixed 2 finding(s). 1 more fixable with --unsafe-fixes." in result.stderr


def test_exit_code_counts_what_remains(llama: Path) -> None:
    """The example keeps warnings no fix removes: exit 1; with only fixable ones, exit 0."""
    assert check(llama, "--fix").exit_code == 1
    assert check(llama, "--fix", "--select", "TL301,TL302").exit_code == 0


def test_a_second_fix_changes_nothing(llama: Path) -> None:
    check(llama, "--fix", "--unsafe-fixes")
    fixed = {p: p.read_bytes() for p in llama.rglob("*") if p.is_file()}
    second = check(llama, "--fix", "--unsafe-fixes")
    assert {p: p.read_bytes() for p in llama.rglob("*") if p.is_file()} == fixed
    assert "Fixed 0 finding(s)." in second.stderr


def test_fix_diff_shows_the_diff_and_writes_nothing(llama: Path) -> None:
    before = {p: p.read_bytes() for p in llama.rglob("*") if p.is_file()}
    result = check(llama, "--fix-diff")
    assert result.exit_code == 1
    assert "-logging_steps: 1\n+logging_steps: 10\n" in result.stdout
    assert "-export NCCL_DEBUG=INFO\n" in result.stdout
    assert "gradient_checkpointing" not in result.stdout  # unsafe: not without --unsafe-fixes
    assert {p: p.read_bytes() for p in llama.rglob("*") if p.is_file()} == before


def test_unsafe_fixes_only_with_the_flag(llama: Path) -> None:
    check(llama, "--fix")
    assert "gradient_checkpointing: true" in (llama / "configs/sft.yaml").read_text()
    result = check(llama, "--fix", "--unsafe-fixes")
    assert "gradient_checkpointing: false" in (llama / "configs/sft.yaml").read_text()
    assert "TL107" not in _rules(result.stdout)


def test_suppressed_findings_are_not_fixed(in_tmp: Path) -> None:
    project(in_tmp)
    config = (
        (in_tmp / "sft.yaml")
        .read_text()
        .replace(
            "logging_steps: 1   # per-step curve while tuning",
            "logging_steps: 1   # trainlint: ignore[TL301] tuning run, short on purpose",
        )
    )
    (in_tmp / "sft.yaml").write_text(config)
    check(in_tmp, "--fix")
    assert texts(in_tmp)["sft.yaml"] == config


def test_fix_flags_refused_where_they_mean_nothing(in_tmp: Path) -> None:
    project(in_tmp)
    assert check(in_tmp, "--unsafe-fixes").exit_code == 2
    assert check(in_tmp, "--fix", "--diff", "main").exit_code == 2
    assert check(in_tmp, "--fix", "--write-baseline", "b.json").exit_code == 2
