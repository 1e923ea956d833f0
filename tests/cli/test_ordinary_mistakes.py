"""Ordinary mistakes are usage errors (exit 2, one line naming the problem), never crashes."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from trainlint.cli import main

CASES = """\
rule: ORG001
cases:
  - name: fires
    files: {train.yaml: "save_steps: 1\\n"}
    expect: [{file: train.yaml, line: 1, column: 1}]
  - name: no column
    files: {train.yaml: "save_steps: 1\\n"}
    expect: [{file: train.yaml, line: 1}]
"""


def test_a_case_without_a_column_names_the_case_and_the_key(in_tmp: Path) -> None:
    """``pack test`` crashed (exit 3, KeyError 'column') on a case that left it out."""
    runner = CliRunner()
    assert runner.invoke(main, ["pack", "init", "org", "--dir", "org"]).exit_code == 0
    cases = in_tmp / "cases"
    cases.mkdir()
    (cases / "ORG001.yaml").write_text(CASES)
    result = runner.invoke(main, ["pack", "test", "org", "--cases", "cases"])
    assert result.exit_code == 2, result.output
    assert result.output == (
        "trainlint: error: cases/ORG001.yaml:6: case 1: expect[0] lacks 'column' (each "
        "expected finding needs file, line and column)\n"
    )


def test_init_into_a_folder_that_does_not_exist_creates_it(in_tmp: Path) -> None:
    """As ``git init DIR`` and ``cargo init DIR`` do (and ``--output`` here)."""
    result = CliRunner().invoke(main, ["init", "new/project"])
    assert result.exit_code == 0, result.output
    assert (in_tmp / "new" / "project" / ".trainlint.toml").is_file()


def test_init_under_a_file_is_a_usage_error(in_tmp: Path) -> None:
    (in_tmp / "notes.txt").write_text("x\n")
    result = CliRunner().invoke(main, ["init", "notes.txt/project"])
    assert result.exit_code == 2
    assert result.output.startswith("trainlint: error: cannot write notes.txt/project/")
