"""A builtin's type error makes its expression undefined, as in OPA, on every engine.

``startswith(null, "fp")`` is undefined in OPA (and regopy); regorus raised, and the whole job
was a run error. The pack below is a real bundle directory (two rule modules with METADATA,
one with the bad expression, and a conftest ``main`` namespace); it runs confined, like any
pack trainlint does not ship, so the notice crosses the worker's pipe too.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from trainlint import lint
from trainlint.engine import Engine, available_engines, create_engine
from trainlint.engine.builtin_errors import is_builtin_error
from trainlint.errors import PolicyError
from trainlint.packs import Pack, load_pack


def _rule(slug: str, rule_id: str, body: str) -> str:
    package = slug.replace("-", "_")
    return f"""# METADATA
# title: {slug}
# description: A test rule.
# custom:
#   id: {rule_id}
#   severity: warning
#   category: cost
#   remediation: Fix it.
package trainlint.rules.{package}

import rego.v1

{body}
"""


PREFIX_RULE = _rule(
    "precision-prefix",
    "ORG001",
    """findings contains finding if {
  startswith(input.training.precision, "fp")
  finding := {"message": "full or half precision", "pointer": "/training/precision"}
}
""",
)

STEPS_RULE = _rule(
    "few-steps",
    "ORG002",
    """findings contains finding if {
  is_number(input.training.max_steps)
  input.training.max_steps < 5000
  finding := {"message": "few steps", "pointer": "/training/max_steps"}
}
""",
)

CONFTEST_MAIN = """package main

import rego.v1

deny contains "precision starts with fp" if {
  startswith(input.training.precision, "fp")
}

deny contains "short run" if {
  input.training.max_steps < 5000
}
"""

UNKNOWN_PRECISION = {"id": "a.yaml", "training": {"precision": None, "max_steps": 100}}
FP32 = {"id": "b.yaml", "training": {"precision": "fp32", "max_steps": 100}}


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    root = tmp_path_factory.mktemp("org-pack")
    for name, source in {"prefix.rego": PREFIX_RULE, "steps.rego": STEPS_RULE,
                         "main.rego": CONFTEST_MAIN}.items():  # fmt: skip
        (root / name).write_text(source)
    return load_pack(root)


@pytest.fixture(scope="module")
def engines(pack: Pack) -> dict[str, Engine]:
    return {name: create_engine(name, pack) for name in available_engines()}


def _evaluate(engine: Engine, job: dict[str, Any]) -> dict[str, Any]:
    return {"findings": engine.evaluate(job), "deny": engine.query(job, "data.main.deny")}


def test_one_bad_expression_leaves_the_other_rules_running(
    engines: dict[str, Engine], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="trainlint.engine"):
        found = _evaluate(engines["regorus"], UNKNOWN_PRECISION)
    assert found["findings"] == {
        "few_steps": [{"message": "few steps", "pointer": "/training/max_steps"}],
        "precision_prefix": [],  # its only body is undefined: an empty set, as in OPA
    }
    assert found["deny"] is None  # the whole conftest rule is undefined (coarser than OPA)
    notices = " ".join(r.getMessage() for r in caplog.records)
    assert "trainlint.rules.precision_prefix is undefined for job a.yaml" in notices
    assert "`startswith` expects string argument" in notices


def test_a_good_job_is_untouched(engines: dict[str, Engine]) -> None:
    found = _evaluate(engines["regorus"], FP32)
    assert set(found["findings"]) == {"few_steps", "precision_prefix"}
    assert found["deny"] == ["precision starts with fp", "short run"]


@pytest.mark.parametrize("job", [UNKNOWN_PRECISION, FP32], ids=lambda job: job["id"])
def test_engines_agree_on_builtin_errors(engines: dict[str, Engine], job: dict[str, Any]) -> None:
    """The differential test: regopy is non-strict like OPA; regorus now gives the same rule
    findings (the conftest rule differs by design: regorus drops the whole rule)."""
    results = {name: engine.evaluate(job) for name, engine in engines.items()}
    assert len(results) > 1, "install trainlint[test]: the differential test needs regopy"
    assert all(found == results["regorus"] for found in results.values()), results


def test_check_reports_the_job_instead_of_a_run_error(in_tmp: Path, pack: Pack) -> None:
    (in_tmp / "train.yaml").write_text(
        "model_name_or_path: gpt2\nper_device_train_batch_size: 8\nmax_steps: 100\n"
    )
    report = lint.check([Path(".")], lint.CheckOptions(pack=pack, select=["ORG"]))
    assert not report.errors
    assert [f.rule for f in report.findings if f.rule.startswith("ORG")] == ["ORG002"]


def test_only_builtin_failures_are_undefined() -> None:
    assert is_builtin_error("regorus: p.rego:7:3: `startswith` expects string argument. Got `null`")
    assert is_builtin_error("regorus: p.rego:3:1: `count` requires array/object/set argument")
    assert is_builtin_error("regorus: p.rego:3:1: divide by zero")
    assert not is_builtin_error("regorus: p.rego:3:1: complete rules should not produce multiple "
                                "outputs")  # fmt: skip
    assert not is_builtin_error(PolicyError("regorus: p.rego:3:1: var x is unsafe"))


def test_a_pack_whose_rule_always_fails_on_a_builtin_still_loads(tmp_path: Path) -> None:
    """The load check evaluates every module once with an empty input, for compile errors;
    ``to_number("x")`` is undefined in OPA, so the pack loads and the rule finds nothing."""
    (tmp_path / "rule.rego").write_text(
        _rule(
            "bad-number",
            "ORG003",
            """findings contains f if {
  to_number("not a number") > 1
  f := {"message": "never", "pointer": "/training"}
}
""",
        )
    )
    engine = create_engine("regorus", load_pack(tmp_path))
    assert engine.evaluate(FP32) == {"bad_number": []}
