"""A misspelt rule code, wherever it is given, is answered with the rule it was meant to be."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import EXAMPLES
from trainlint.cli import main


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def repo(in_tmp: Path) -> Path:
    shutil.copytree(EXAMPLES / "llama3-sft", in_tmp / "repo")
    return in_tmp / "repo"


def test_a_misspelt_select_suggests_the_rule(repo: Path) -> None:
    result = run("check", "repo", "--select", "TL2O1")
    assert result.exit_code == 2
    assert "unknown rule selector 'TL2O1': no rule id, prefix or slug matches (did you mean " \
        "'TL201'?)" in result.output  # fmt: skip


def test_a_misspelt_rule_to_explain_suggests_the_rule(in_tmp: Path) -> None:
    result = run("rule", "checkpoint-to-frequent")
    assert result.exit_code == 2
    assert "did you mean 'checkpoint-too-frequent'?" in result.output


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        (".trainlint.toml", 'ignore = ["TL3", "TL2O1"]\n', "1:19: ignore"),
        (".trainlint.yaml", "per-file-ignores:\n  '*.slurm': [TL2O1]\n",
         "2:15: per-file-ignores.*.slurm"),
    ],
)  # fmt: skip
def test_a_misspelt_selector_in_the_config_is_located(
    repo: Path, name: str, text: str, where: str
) -> None:
    (repo / name).write_text(text)
    result = run("check", "repo")
    assert result.exit_code == 2
    expected = f"repo/{name}:{where}: unknown rule selector 'TL2O1' (did you mean 'TL201'?)"
    assert expected in result.output


def test_misspelt_suppressions_say_which_rule_was_meant(repo: Path) -> None:
    """An inline ignore and a waiver are TL905 findings (a notice), with the suggestion."""
    script = (repo / "train.slurm").read_text().splitlines(keepends=True)
    script[19] = script[19].rstrip("\n") + "  # trainlint: ignore[TL2O1] cheap saves\n"
    (repo / "train.slurm").write_text("".join(script))
    waiver = '[[waivers]]\nrule = "chekpoint-too-frequent"\nreason = "cheap"\n'
    (repo / ".trainlint.toml").write_text(waiver)
    data = json.loads(run("check", "repo", "--format", "json").output)
    messages = {f["message"] for f in data["findings"] if f["rule"] == "TL905"}
    assert any("'TL2O1' (did you mean 'TL201'?)" in m for m in messages)
    assert any("'chekpoint-too-frequent' (did you mean 'checkpoint-too-frequent'?)" in m
               for m in messages)  # fmt: skip
