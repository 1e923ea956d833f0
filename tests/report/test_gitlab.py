"""GitLab Code Quality reporter: valid against GitLab's documented format, stable, complete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from tests.report.canonical import canonical_report, finding
from trainlint.cli import main
from trainlint.findings import Suppression, Waste
from trainlint.report import gitlab, renderer
from trainlint.results import Report, RunError

SCHEMA = Path(__file__).parent.parent / "schemas" / "gitlab-code-quality.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def issues(report: Report, validator: jsonschema.protocols.Validator) -> list[dict[str, Any]]:
    text = gitlab.render(report)
    parsed: list[dict[str, Any]] = json.loads(text)
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(parsed)]
    assert errors == []
    return parsed


def test_canonical_report_matches_golden_and_validates(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    golden: Any,
    validator: jsonschema.protocols.Validator,
) -> None:
    report = canonical_report(tmp_path, monkeypatch)
    text = gitlab.render(report)
    golden("report_gitlab.json", text)
    assert str(tmp_path) not in text
    parsed = issues(report, validator)
    assert len(parsed) == sum(f.suppression is None for f in report.findings)
    fingerprints = [issue["fingerprint"] for issue in parsed]
    assert len(set(fingerprints)) == len(fingerprints)  # the widget merges equal ones


def test_issue_fields(validator: jsonschema.protocols.Validator) -> None:
    findings = [
        finding(waste=Waste(gpu_hours=49.97, usd=174.88), file="./jobs/train.yaml"),
        finding(rule="TL404", name="unknown-hardware", severity="info", line=2),
        finding(rule="TL102", name="does-not-fit", severity="error", line=5),
    ]
    by_check = {issue["check_name"]: issue for issue in issues(Report(findings=findings),
                                                               validator)}  # fmt: skip
    first = by_check["TL201 checkpoint-too-frequent"]
    assert first == {
        "description": "checkpoint every 10 steps (~50 GPU-h, ~$175 per run)",
        "check_name": "TL201 checkpoint-too-frequent",
        "fingerprint": first["fingerprint"],
        "severity": "minor",
        "location": {"path": "jobs/train.yaml", "lines": {"begin": 12}},
    }
    assert by_check["TL404 unknown-hardware"]["severity"] == "info"
    assert by_check["TL102 does-not-fit"]["severity"] == "major"


def test_suppressed_findings_are_left_out_and_run_errors_are_issues(
    validator: jsonschema.protocols.Validator,
) -> None:
    waived = finding(suppression=Suppression(kind="waiver", reason="ok"))
    errors = [RunError(job="jobs/broken.yaml", message="cannot\nparse")]
    (issue,) = issues(Report(findings=[waived], errors=errors), validator)
    assert issue["check_name"] == gitlab.RUN_ERROR
    assert issue["description"] == "not checked: cannot parse"
    assert issue["location"] == {"path": "jobs/broken.yaml", "lines": {"begin": 1}}


def test_the_schema_rejects_what_gitlab_rejects(validator: jsonschema.protocols.Validator) -> None:
    """The schema can fail: a wrong severity, an absolute path, a missing line."""
    issue = {"description": "x", "check_name": "c", "fingerprint": "f", "severity": "warning"}
    bad: list[Any] = [{**issue, "location": {"path": "/abs/a.yaml"}}]
    messages = " ".join(e.message for e in validator.iter_errors(bad))
    assert "'warning' is not one of" in messages
    assert "should not be valid" in messages
    assert "is not valid under any of the given schemas" in messages


def test_format_is_registered_and_offered_by_the_cli(tmp_path: Path) -> None:
    assert renderer("gitlab") is gitlab.render
    assert "gitlab" in CliRunner().invoke(main, ["check", "--help"]).output
    job = tmp_path / "train.sh"
    job.write_text("#!/bin/bash\n#SBATCH --gres=gpu:1\ntorchrun train.py --logging_steps 1\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path), "--format", "gitlab"])
    assert result.exit_code in (0, 1), result.output
    assert isinstance(json.loads(result.output), list)
