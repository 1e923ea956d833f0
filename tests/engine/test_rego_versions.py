"""Rego v0 packs run where the manifest or ``--rego-v0`` says so, as OPA reads them.

The org pack below is a real bundle directory an org kept from before OPA 1.0: ``deny[msg]
{...}`` rules, no ``if``, no ``contains``, a ``.manifest`` that says ``"rego_version": 0``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trainlint import lint
from trainlint.cli import main
from trainlint.engine import create_engine
from trainlint.errors import PolicyError
from trainlint.packs import load_builtin_pack, load_pack, with_rego_v0
from trainlint.packs.layering import layer

V0_POLICY = """package main

deny[msg] {
  input.training.precision == "fp32"
  msg := sprintf("%s trains in fp32", [input.id])
}

warn[msg] {
  not input.tags.team
  msg = "no team tag"
}
"""

V1_POLICY = """package org.modern

deny contains "modern rule ran" if {
  input.training.precision == "fp32"
}
"""

TRAIN_YAML = """model_name_or_path: gpt2
per_device_train_batch_size: 8
max_steps: 1000
bf16: false
fp16: false
"""

FP32 = {"id": "train.yaml", "training": {"precision": "fp32"}}


def _bundle(root: Path, manifest: dict[str, object] | None) -> Path:
    pack = root / "legacy-pack"
    pack.mkdir()
    (pack / "main.rego").write_text(V0_POLICY)
    (pack / "modern.rego").write_text(V1_POLICY)
    if manifest is not None:
        (pack / ".manifest").write_text(json.dumps(manifest))
    return pack


def test_manifest_rego_version_0_parses_deny_msg_rules(tmp_path: Path) -> None:
    pack = load_pack(_bundle(tmp_path, {"rego_version": 0, "file_rego_versions": {
        "modern.rego": 1}}))  # fmt: skip
    assert pack.rego_versions == {"main.rego": 0, "modern.rego": 1}
    engine = create_engine("regorus", pack)
    assert engine.query(FP32, "data.main.deny") == ["train.yaml trains in fp32"]
    assert engine.query(FP32, "data.main.warn") == ["no team tag"]
    assert engine.query(FP32, "data.org.modern.deny") == ["modern rule ran"]


def test_versions_survive_layering(tmp_path: Path) -> None:
    pack = load_pack(_bundle(tmp_path, {"rego_version": 0, "metadata": {"name": "legacy"}}))
    layered, _, _ = layer([load_builtin_pack(), pack])
    assert layered.rego_versions["legacy/main.rego"] == 0
    assert create_engine("regorus", layered).query(FP32, "data.main.deny")


def test_undeclared_v0_module_says_how_to_declare_it(tmp_path: Path) -> None:
    pack = load_pack(_bundle(tmp_path, None))
    with pytest.raises(PolicyError, match=r"rego_version\": 0\) or pass --rego-v0"):
        create_engine("regorus", pack)
    engine = create_engine("regorus", with_rego_v0(pack))  # v1 modules without import: declared
    assert engine.query(FP32, "data.main.deny") == ["train.yaml trains in fp32"]


def test_regopy_refuses_v0_rather_than_misreading_it(tmp_path: Path) -> None:
    """rego-cpp reads ``deny[msg] {...}`` as a partial object ({"msg": true}) without a word."""
    pack = load_pack(_bundle(tmp_path, {"rego_version": 0}))
    with pytest.raises(PolicyError, match="is Rego v0, which regopy cannot parse"):
        create_engine("regopy", pack)


def test_check_runs_a_v0_org_pack_from_the_manifest(in_tmp: Path) -> None:
    (in_tmp / "train.yaml").write_text(TRAIN_YAML)
    _bundle(in_tmp, {"rego_version": 0, "file_rego_versions": {"modern.rego": 1}})
    (in_tmp / ".trainlint.toml").write_text('[[packs]]\npath = "legacy-pack"\n')
    result = CliRunner().invoke(main, ["check", ".", "--format", "json"])
    assert result.exit_code == 1, result.output
    rules = {f["rule"]: f["message"] for f in json.loads(result.output)["findings"]}
    assert rules["main.deny"] == "train.yaml trains in fp32"


def test_rego_v0_option_reads_undeclared_modules_as_v0(in_tmp: Path) -> None:
    (in_tmp / "train.yaml").write_text(TRAIN_YAML)
    pack = _bundle(in_tmp, None)
    (pack / "modern.rego").unlink()
    (in_tmp / ".trainlint.toml").write_text('[[packs]]\npath = "legacy-pack"\n')
    without = CliRunner().invoke(main, ["check", "."])
    assert without.exit_code == 2 and "--rego-v0" in without.output
    report = lint.check([Path(".")], lint.CheckOptions(rego_v0=True))
    assert not report.errors
    assert {f.rule for f in report.findings} >= {"main.deny", "main.warn"}
