"""Fixes in the reports: SARIF ``fixes`` (valid against the official schema) and GitHub
suggestion blocks in the pull-request comment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from tests.report.canonical import builtin_rule, finding
from tests.report.test_sarif import validator  # noqa: F401 - the schema fixture
from trainlint.findings import Finding, Fix, Suppression, TextEdit
from trainlint.report import markdown, sarif, text
from trainlint.results import DiffReport, Report

FIX = Fix(
    title="Log every 10 steps instead of every step",
    safe=True,
    edits=(TextEdit("jobs/train.yaml", 12, 16, 12, 17, "10"),),
)


def _sarif(fix: Fix) -> dict[str, Any]:
    report = Report(findings=[finding(fix=fix)], rules=(builtin_rule("TL201"),))
    log: dict[str, Any] = json.loads(sarif.render(report))
    return log


def test_sarif_fixes_are_replacements(validator: jsonschema.protocols.Validator) -> None:  # noqa: F811
    log = _sarif(FIX)
    validator.validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["fixes"] == [{
        "description": {"text": "Log every 10 steps instead of every step"},
        "artifactChanges": [{
            "artifactLocation": {"uri": "jobs/train.yaml", "uriBaseId": "%SRCROOT%"},
            "replacements": [{
                "deletedRegion": {"startLine": 12, "startColumn": 16, "endLine": 12,
                                  "endColumn": 17},
                "insertedContent": {"text": "10"},
            }],
        }],
        "properties": {"safe": True},
    }]  # fmt: skip


def test_sarif_without_a_fix_has_no_fixes() -> None:
    report = Report(findings=[finding()], rules=(builtin_rule("TL201"),))
    assert "fixes" not in json.loads(sarif.render(report))["runs"][0]["results"][0]


def test_pr_comment_suggests_the_fixed_line_of_a_new_finding(in_tmp: Path) -> None:
    (in_tmp / "jobs").mkdir()
    lines = ["# train", *[f"k{n}: {n}" for n in range(2, 12)], "logging_steps: 1   # why", ""]
    (in_tmp / "jobs/train.yaml").write_text("\n".join(lines))
    edit = TextEdit("jobs/train.yaml", 12, 16, 12, 17, "10")
    new = finding(fix=Fix("Log every 10 steps", True, (edit,)))
    comment = markdown.render_comment(DiffReport(base="main", base_commit="0" * 40, new=[new]))
    assert "  Log every 10 steps (`trainlint check --fix`), line 12 of `jobs/train.yaml`:\n\n" \
        "  ```suggestion\n  logging_steps: 10   # why\n  ```\n" in comment  # fmt: skip


def test_pr_comment_suggests_deleting_a_line_with_an_empty_block(in_tmp: Path) -> None:
    (in_tmp / "run.sh").write_text("set -e\nexport NCCL_DEBUG=INFO\ntorchrun x.py\n")
    edit = TextEdit("run.sh", 2, 1, 3, 1, "")
    new = finding(file="run.sh", line=2, fix=Fix("Remove NCCL_DEBUG=INFO", True, (edit,)))
    comment = markdown.render_comment(DiffReport(base="main", base_commit="0" * 40, new=[new]))
    assert "line 2 of `run.sh`:\n\n  ```suggestion\n  ```" in comment


def test_no_suggestion_where_the_file_is_not_there(in_tmp: Path) -> None:
    new = finding(fix=FIX)
    comment = markdown.render_comment(DiffReport(base="main", base_commit="0" * 40, new=[new]))
    assert "suggestion" not in comment


def test_text_report_closes_with_what_fix_would_fix() -> None:
    unsafe = Fix("Checkpoint every 500 steps", False, FIX.edits)
    waived = Suppression(kind="inline", reason="tuning run")
    findings = [finding(fix=FIX), finding(fix=unsafe), finding(fix=FIX, suppression=waived)]
    rendered = text.render(Report(findings=findings))
    assert rendered.endswith("\n[*] 1 fixable with --fix (1 more with --unsafe-fixes).\n")
    only_unsafe = text.render(Report(findings=[finding(fix=unsafe)]))
    assert only_unsafe.endswith("\n[*] 1 fixable with --fix --unsafe-fixes.\n")
    assert "[*]" not in text.render(Report(findings=[finding()]))


def test_a_finding_with_its_fix_survives_json() -> None:
    """JSON readers (a cache, the language server, diff mode) get the same Fix back."""
    with_fix = finding(fix=FIX)
    assert Finding.model_validate_json(with_fix.model_dump_json()) == with_fix
