"""Configuring a pack opts into its rules (issue 17, item 7): they run without
``extend-select``, a lock on one is satisfied by that default, ``select`` still restricts,
and ``rules`` / ``rule ID`` show them with their pack's name. The example org pack ("acme",
examples/org-pack) is copied into a real repository folder that lists it by path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES
from trainlint.cli import main

BIG_JOB = """\
#!/bin/bash
#SBATCH --job-name=pretrain
#SBATCH --nodes=16
#SBATCH --gpus-per-node=8
#SBATCH --time=48:00:00
srun torchrun --nnodes=16 --nproc_per_node=8 train.py
"""
LOCKED_ACME001 = {"ACME001": {"approvers": ["platform@acme.example"]}}


def _repo(tmp_path: Path, config: str = "", *, lock_acme001: bool = False) -> Path:
    """A repository holding a 128-GPU SLURM job and the acme pack, listed by path."""
    folder = tmp_path / "repo"
    shutil.copytree(EXAMPLES / "org-pack", folder / "policy" / "acme")
    if lock_acme001:
        locks_file = folder / "policy" / "acme" / "trainlint" / "locks" / "data.json"
        locks = json.loads(locks_file.read_text())
        locks["rules"].update(LOCKED_ACME001)
        locks_file.write_text(json.dumps(locks))
    (folder / "train.slurm").write_text(BIG_JOB)
    (folder / ".trainlint.toml").write_text(f'{config}\n[[packs]]\npath = "policy/acme"\n')
    return folder


def _rules_found(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> set[str]:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["check", "train.slurm", "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return {finding["rule"] for finding in json.loads(result.output)["findings"]}


def test_a_configured_packs_rule_runs_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "ACME001" in _rules_found(_repo(tmp_path), monkeypatch)


def test_an_explicit_select_still_restricts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _rules_found(_repo(tmp_path, 'select = ["TL2"]\n'), monkeypatch)
    assert "ACME001" not in found
    locked = {"TL401", "TL402", "TL906"}  # acme locks TL401/TL402; the select turns them off
    assert all(rule.startswith("TL2") or rule in locked for rule in found)


def test_extend_select_adds_to_the_default_that_holds_the_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _rules_found(_repo(tmp_path, 'extend-select = ["TL1"]\n'), monkeypatch)
    assert "ACME001" in found


def test_listing_a_pack_that_locks_its_rule_is_no_lock_violation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _rules_found(_repo(tmp_path, lock_acme001=True), monkeypatch)
    assert "ACME001" in found
    assert "TL906" not in found


def test_deselecting_a_locked_pack_rule_is_still_a_lock_violation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _repo(tmp_path, 'ignore = ["ACME001"]\n', lock_acme001=True)
    found = _rules_found(folder, monkeypatch)
    assert {"ACME001", "TL906"} <= found


def test_rules_lists_the_configured_packs_rules_with_the_pack_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_repo(tmp_path))
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0, result.output
    acme = [line for line in result.output.splitlines() if line.startswith("ACME001")]
    assert len(acme) == 1 and "max-gpus-per-job" in acme[0] and "[pack acme]" in acme[0]
    assert any(line.startswith("TL201") for line in result.output.splitlines())


def test_rule_explains_a_pack_rule_and_names_its_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_repo(tmp_path))
    result = CliRunner().invoke(main, ["rule", "ACME001"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("# max-gpus-per-job (ACME001)")
    assert "Pack: acme" in result.output


@pytest.mark.parametrize("ignored", ["ACME", "ACME001", "max-gpus-per-job"])
def test_any_ignore_naming_a_pack_rule_turns_it_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ignored: str
) -> None:
    """Selected by default at the lowest specificity: a prefix ignore wins, as for TL rules."""
    found = _rules_found(_repo(tmp_path, f'ignore = ["{ignored}"]\n'), monkeypatch)
    assert "ACME001" not in found


def test_extend_select_overrides_a_broader_ignore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = 'ignore = ["ACME"]\nextend-select = ["ACME001"]\n'
    assert "ACME001" in _rules_found(_repo(tmp_path, config), monkeypatch)


def test_rules_lists_the_packs_the_ci_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pack named by TRAINLINT_PACKS (out of the repository's reach) runs, so it is listed."""
    pack = tmp_path / "acme"
    shutil.copytree(EXAMPLES / "org-pack", pack)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRAINLINT_PACKS", str(pack))
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0, result.output
    assert any(line.startswith("ACME001") and "[pack acme]" in line
               for line in result.output.splitlines())  # fmt: skip
