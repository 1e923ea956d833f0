"""The builtin pack's Rego unit tests, one pytest case per ``test_*`` rule.

They run through ``run_rego_tests``, the runner ``trainlint test`` uses, so a broken runner
shows up here as well as a broken rule.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from trainlint.engine.rego_tests import RegoTestResult, list_rego_tests, run_rego_tests
from trainlint.packs import load_builtin_pack, load_pack

RULE_MODULE_HEADER = """\
# METADATA
# title: sample
# description: A rule for testing the test runner.
# custom:
#   id: X001
#   severity: info
#   category: testing
#   remediation: None needed.
package trainlint.rules.sample

import rego.v1

findings contains {"message": "m", "pointer": "/x"} if input.x > data.trainlint.params.sample.limit
"""

SAMPLE_TESTS = """\
package trainlint.rules.sample

import rego.v1

test_passes if { count(findings) == 1 with input as {"x": 5} }

test_mocks_params if {
\tcount(findings) == 0 with input as {"x": 5} with data.trainlint.params.sample.limit as 9
}

test_fails if { count(findings) == 1 with input as {"x": 0} }

test_errors if { 1 / 0 == 1 }

test_not_boolean := 3

todo_skipped if { false }
"""


@functools.cache
def _builtin_results() -> dict[str, RegoTestResult]:
    return {result.name: result for result in run_rego_tests(load_builtin_pack())}


@pytest.mark.parametrize("name", list_rego_tests(load_builtin_pack()))
def test_builtin_rego_test_passes(name: str) -> None:
    result = _builtin_results()[name]
    assert result.passed, f"{result.file}: {result.error}"


def test_every_rule_has_a_test_file_with_tests() -> None:
    pack = load_builtin_pack()
    for rule in pack.rules:
        short = rule.package.rsplit(".", 1)[-1]
        tests = [name for name in _builtin_results() if name.startswith(rule.package + ".")]
        assert f"{short}_test.rego" in pack.tests, rule.id
        assert len(tests) >= 3, f"{rule.id} needs firing and quiet cases"


def test_runner_reports_each_outcome(tmp_path: Path) -> None:
    (tmp_path / "sample.rego").write_text(RULE_MODULE_HEADER)
    (tmp_path / "sample_test.rego").write_text(SAMPLE_TESTS)
    (tmp_path / "data.json").write_text('{"trainlint": {"params": {"sample": {"limit": 1}}}}')
    results = {r.name.rsplit(".", 1)[-1]: r for r in run_rego_tests(load_pack(tmp_path))}
    assert list(results) == [
        "test_passes",
        "test_mocks_params",
        "test_fails",
        "test_errors",
        "test_not_boolean",
    ]
    assert results["test_passes"].passed and results["test_mocks_params"].passed
    assert results["test_fails"].error == "expected true, got undefined"
    assert "divide by zero" in (results["test_errors"].error or "")
    assert "sample_test.rego:13" in (results["test_errors"].error or "")
    assert results["test_not_boolean"].error == "expected true, got 3"
    assert all(r.file == "sample_test.rego" for r in results.values())
