"""``trainlint pack test``: Rego unit tests (todo_ skipped) and data-driven cases, located."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.conftest import REPO
from trainlint.cli import main
from trainlint.errors import ConfigError
from trainlint.packs import load_pack
from trainlint.packs.testing import (
    format_result,
    load_case_file,
    run_case,
    run_pack_tests,
    run_tests,
)

RULE = """# METADATA
# title: fp32-training
# description: Fires when a job trains in fp32.
# custom:
#   id: ORG001
#   severity: warning
#   category: performance
#   remediation: Train in bf16.
package trainlint.rules.fp32_training

import rego.v1

findings contains finding if {
\tinput.training.precision == data.trainlint.params.fp32_training.banned
\tfinding := {"message": concat("", ["trains in ", input.training.precision]),
\t            "pointer": "/training/precision"}
}
"""

RULE_TESTS = """package trainlint.rules.fp32_training

import rego.v1

test_fires if {
\tcount(findings) == 1 with input as {"training": {"precision": "fp32"}}
}

test_quiet_on_bf16 if {
\tcount(findings) == 0 with input as {"training": {"precision": "bf16"}}
}

test_wrong_on_purpose if {
\tcount(findings) == 2 with input as {"training": {"precision": "fp32"}}
}

todo_test_fp16 if {
\tfalse
}
"""

FP32_YAML = (
    "model_name_or_path: gpt2\nper_device_train_batch_size: 8\nmax_steps: 1000\nbf16: false\n"
    "fp16: false\n"
)
BF16_YAML = (
    "model_name_or_path: gpt2\nper_device_train_batch_size: 8\nmax_steps: 1000\nbf16: true\n"
)

CASES = {
    "rule": "ORG001",
    "cases": [
        {
            "name": "fp32 hf trainer",
            "files": {"train.yaml": FP32_YAML},
            "expect": [{"file": "train.yaml", "line": 5, "column": 1, "message": "in fp32"}],
        },
        {"name": "bf16 is quiet", "files": {"train.yaml": BF16_YAML}, "expect": []},
        {
            "name": "wrong line on purpose",
            "files": {"train.yaml": FP32_YAML},
            "expect": [{"file": "train.yaml", "line": 2, "column": 1}],
        },
        {
            "name": "wrong message on purpose",
            "files": {"train.yaml": FP32_YAML},
            "expect": [{"file": "train.yaml", "line": 5, "column": 1, "message": ["fp32", "zz"]}],
        },
    ],
}


def _pack_dir(root: Path, *, failing: bool = True) -> Path:
    pack = root / "org-pack"
    (pack / "tests" / "cases").mkdir(parents=True)
    (pack / "fp32_training.rego").write_text(RULE)
    tests = RULE_TESTS if failing else RULE_TESTS.replace("== 2 with", "== 1 with")
    (pack / "fp32_training_test.rego").write_text(tests)
    (pack / "data.json").write_text(
        '{"trainlint": {"params": {"fp32_training": {"banned": "fp32"}}}}'
    )
    cases = CASES if failing else {**CASES, "cases": CASES["cases"][:2]}
    (pack / "tests" / "cases" / "ORG001.yaml").write_text(yaml.safe_dump(cases, sort_keys=False))
    return pack


def test_rego_tests_cases_and_locations(in_tmp: Path) -> None:
    pack_dir = _pack_dir(in_tmp)
    report = run_pack_tests(Path("org-pack"))
    got = [(r.kind, r.status, r.location, r.name) for r in report.results]
    test_file = "org-pack/fp32_training_test.rego"
    case_file = "org-pack/tests/cases/ORG001.yaml"
    package = "trainlint.rules.fp32_training"
    text = (pack_dir / "tests" / "cases" / "ORG001.yaml").read_text().splitlines()
    case_lines = [n for n, line in enumerate(text, 1) if line.startswith("- name: ")]
    assert len(case_lines) == 4
    assert got == [
        ("rego", "passed", f"{test_file}:5", "trainlint.rules.fp32_training.test_fires"),
        ("rego", "passed", f"{test_file}:9", "trainlint.rules.fp32_training.test_quiet_on_bf16"),
        ("rego", "failed", f"{test_file}:13", f"{package}.test_wrong_on_purpose"),
        ("rego", "skipped", f"{test_file}:17", "trainlint.rules.fp32_training.todo_test_fp16"),
        ("case", "passed", f"{case_file}:{case_lines[0]}", "ORG001 #0 fp32 hf trainer"),
        ("case", "passed", f"{case_file}:{case_lines[1]}", "ORG001 #1 bf16 is quiet"),
        ("case", "failed", f"{case_file}:{case_lines[2]}", "ORG001 #2 wrong line on purpose"),
        ("case", "failed", f"{case_file}:{case_lines[3]}", "ORG001 #3 wrong message on purpose"),
    ]  # fmt: skip
    wrong_line, wrong_message = report.results[-2:]
    assert wrong_line.detail == (
        "expected findings at train.yaml:2:1, got train.yaml:5:1: trains in fp32"
    )
    assert wrong_message.detail == "train.yaml:5: message lacks 'zz': trains in fp32"
    assert report.summary() == "4 passed, 3 failed, 1 skipped (4 Rego tests, 4 cases)."
    assert not report.ok
    assert format_result(report.results[2]).startswith(f"FAIL  {test_file}:13  ")
    assert "expected true, got" in format_result(report.results[2]).splitlines()[1]


def test_cases_from_another_folder_and_engine(in_tmp: Path) -> None:
    _pack_dir(in_tmp, failing=False)
    moved = in_tmp / "elsewhere"
    (in_tmp / "org-pack" / "tests" / "cases").rename(moved)
    report = run_pack_tests(Path("org-pack"), [moved], engine_name="regopy")
    assert report.ok
    assert report.summary() == "5 passed, 0 failed, 1 skipped (4 Rego tests, 2 cases)."
    assert all(r.location.startswith(str(moved)) for r in report.results if r.kind == "case")


def test_a_case_for_a_rule_the_pack_lacks_fails(in_tmp: Path) -> None:
    pack = load_pack(_pack_dir(in_tmp, failing=False))
    problems = run_case("TL201", {"files": {"train.yaml": FP32_YAML}}, pack=pack)
    assert problems and "unknown rule selector 'TL201'" in problems[0]


def test_malformed_case_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rule: ORG001\ncases:\n  - name: no files\n")
    with pytest.raises(ConfigError, match="case 0 needs 'files'"):
        load_case_file(bad)
    bad.write_text("cases: []\n")
    with pytest.raises(ConfigError, match="needs 'rule'"):
        load_case_file(bad)


def test_no_tests_is_not_a_pass(in_tmp: Path) -> None:
    pack = in_tmp / "empty"
    pack.mkdir()
    (pack / "lib.rego").write_text("package org.lib\n\nimport rego.v1\n\nx := 1\n")
    report = run_tests(load_pack(pack), "empty")
    assert report.results == [] and not report.ok
    assert report.summary().startswith("No tests found")


def test_cli_exit_codes_and_output(in_tmp: Path) -> None:
    _pack_dir(in_tmp)
    runner = CliRunner()
    failing = runner.invoke(main, ["pack", "test", "org-pack"])
    assert failing.exit_code == 1, failing.output
    assert "FAIL  org-pack/fp32_training_test.rego:13  " in failing.output
    assert "SKIP  org-pack/fp32_training_test.rego:17  " in failing.output
    assert failing.output.rstrip().endswith(
        "4 passed, 3 failed, 1 skipped (4 Rego tests, 4 cases)."
    )
    fixed = in_tmp / "fixed"
    fixed.mkdir()
    _pack_dir(fixed, failing=False)
    passing = runner.invoke(main, ["pack", "test", str(fixed / "org-pack")])
    assert passing.exit_code == 0, passing.output
    missing = runner.invoke(main, ["pack", "test", "org-pack", "--cases", "nowhere"])
    assert missing.exit_code == 2


# Every rule case again, through the CLI (tests/rules/test_cases.py runs them one by one): ~7 s.
@pytest.mark.slow
def test_builtin_pack_passes_its_tests_and_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(
        main, ["pack", "test", "policies/builtin", "--cases", "tests/rules/cases"]
    )
    assert result.exit_code == 0, "\n".join(
        line for line in result.output.splitlines() if not line.startswith("PASS")
    )
    assert "PASS  policies/builtin/checkpoint_too_frequent_test.rego:" in result.output
    assert "PASS  tests/rules/cases/TL201.yaml:" in result.output
    assert " 0 failed" in result.output.splitlines()[-1]


def test_rule_module_text_is_dedented() -> None:
    assert textwrap.dedent(RULE) == RULE  # the METADATA block must start at column 1
