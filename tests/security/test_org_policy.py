"""Issue 15's design points on what a pull request can change about the policy it is checked
under: the packs an org requires, the packs a repository config may read, and who a waiver of
a locked rule says approved it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trainlint.cli import main
from trainlint.errors import PolicyError
from trainlint.lint import CheckOptions, check

# An org pack that locks TL201 and names who may waive it.
LOCKS = {
    "locks": {"rules": {"TL201": {"approvers": ["finops-lead"]}}},
    "params": {},
}
WASTE = (
    "#!/bin/bash\n#SBATCH --gres=gpu:h100:8\n#SBATCH --time=4:00:00\n"
    "torchrun --nproc_per_node 8 train.py --model_name_or_path gpt2 --max_seq_length 1024 "
    "--per_device_train_batch_size 8 --max_steps 10000 --save_steps 1\n"
)


def org_pack(folder: Path) -> Path:
    (folder / "trainlint" / "locks").mkdir(parents=True)
    (folder / "trainlint" / "locks" / "data.json").write_text(json.dumps(LOCKS["locks"]))
    (folder / ".manifest").write_text(json.dumps({"roots": ["trainlint/locks"],
                                                  "metadata": {"name": "acme"}}))  # fmt: skip
    return folder


def repo(root: Path, config: str = "") -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "train.slurm").write_text(WASTE)
    if config:
        (root / ".trainlint.toml").write_text(config)
    return root


def tl201(report_rules: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    return [r for r in report_rules if r[0] == "TL201"]


def test_a_pack_named_on_the_command_line_binds_whatever_the_config_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository config lists no pack and ignores TL201: the org's required pack (named
    by the CI job, not by the repository) still locks it, and the attempt is TL906."""
    pack = org_pack(tmp_path / "acme")
    root = repo(tmp_path / "repo", 'ignore = ["TL201"]\n')
    monkeypatch.chdir(root)
    report = check([Path(".")], CheckOptions(packs=[str(pack)]))
    rules = {f.rule for f in report.findings if f.suppression is None}
    assert {"TL201", "TL906"} <= rules
    monkeypatch.setenv("TRAINLINT_PACKS", str(pack))
    result = CliRunner().invoke(main, ["check", ".", "--format", "json"])
    assert {f["rule"] for f in json.loads(result.output)["findings"]} >= {"TL201", "TL906"}


def test_a_repository_config_cannot_read_a_pack_outside_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request could point ``path`` at the runner's home folder and have its files
    loaded as pack data (and printed by a rule of its own)."""
    outside = tmp_path / "home"
    (outside / ".docker").mkdir(parents=True)
    (outside / ".docker" / "config.json").write_text('{"auths": {"x": {"auth": "c2VjcmV0"}}}')
    for written in ("../home", str(outside), "~/.."):
        root = tmp_path / f"repo{abs(hash(written))}"
        repo(root, f'[[packs]]\npath = "{written}"\n')
        monkeypatch.chdir(root)
        with pytest.raises(PolicyError, match="outside the repository"):
            check([Path(".")])


def test_a_pack_inside_the_repository_is_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path / "repo", '[[packs]]\npath = "policy/acme"\n')
    org_pack(root / "policy" / "acme")
    monkeypatch.chdir(root)
    assert "TL201" in {f.rule for f in check([Path(".")]).findings}


@pytest.mark.parametrize(
    ("approved_by", "suppressed"),
    [(None, True), (["finops-lead", "someone"], True), (["someone"], False), ([], False)],
)
def test_a_waiver_of_a_locked_rule_needs_a_verified_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, approved_by: list[str] | None,
    suppressed: bool,
) -> None:  # fmt: skip
    """Any pull request can write ``approved_by = "finops-lead"``; with the approvals the CI
    platform verified (the action passes the PR's approving reviewers), the waiver counts
    only when that person really approved the change, else it is TL906."""
    pack = org_pack(tmp_path / "acme")
    waiver = (
        '[[waivers]]\nrule = "TL201"\npath = "train.slurm"\nreason = "smoke test"\n'
        'approved-by = "finops-lead"\n'
    )
    root = repo(tmp_path / "repo", waiver)
    monkeypatch.chdir(root)
    report = check([Path(".")], CheckOptions(packs=[str(pack)], approved_by=approved_by))
    [finding] = [f for f in report.findings if f.rule == "TL201"]
    assert (finding.suppression is not None) == suppressed
    violations = [f.message for f in report.findings if f.rule == "TL906"]
    assert bool(violations) == (not suppressed)
    if not suppressed:
        assert "has not approved this change" in violations[0]


def test_the_cli_reads_verified_approvals_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = org_pack(tmp_path / "acme")
    waiver = (
        '[[waivers]]\nrule = "TL201"\npath = "train.slurm"\nreason = "smoke"\n'
        'approved-by = "finops-lead"\n'
    )
    monkeypatch.chdir(repo(tmp_path / "repo", waiver))
    monkeypatch.setenv("TRAINLINT_APPROVED_BY", "alice,bob")
    result = CliRunner().invoke(main, ["check", ".", "--pack", str(pack), "--format", "json"])
    findings = json.loads(result.output)["findings"]
    assert any(f["rule"] == "TL906" for f in findings)


@pytest.mark.parametrize("url", ["http://opa.example.com:8181", "http://10.0.0.5:8181"])
def test_the_opa_token_is_refused_over_plain_http_before_anything_is_read(
    url: str, in_tmp: Path
) -> None:
    result = CliRunner().invoke(main, ["check", ".", "--engine", "opa", "--opa-url", url])
    assert result.exit_code == 2 and "plain http://" in result.output
