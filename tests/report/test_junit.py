"""JUnit reporter: parses back, has the Jenkins/GitLab shape, counts add up, stable bytes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from click.testing import CliRunner

from tests.report.canonical import builtin_rule, canonical_report, finding
from tests.report.repo import job_repo_with_a_change
from trainlint.cli import main
from trainlint.findings import Finding, Suppression, Waste
from trainlint.packs import RuleMeta
from trainlint.report import junit, renderer
from trainlint.results import Report, RunError

JUNIT_XSD = Path(__file__).parent.parent / "schemas" / "junit-10.xsd"
COUNTS = ("tests", "failures", "errors", "skipped")


@cache
def _schema() -> xmlschema.XMLSchema:
    """Jenkins' junit-10.xsd (jenkinsci/xunit-plugin, see tests/schemas/MANIFEST.tsv)."""
    return xmlschema.XMLSchema(JUNIT_XSD)


def schema_problems(text: str) -> list[str]:
    """Where the document breaks junit-10.xsd."""
    return [f"{error.path}: {error.reason}" for error in _schema().iter_errors(text)]


def count_problems(root: ET.Element) -> list[str]:
    """Where the counts on the suites and the root do not add up."""
    problems = []
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        expected = {
            "tests": len(cases),
            "failures": sum(c.find("failure") is not None for c in cases),
            "errors": sum(c.find("error") is not None for c in cases),
            "skipped": sum(c.find("skipped") is not None for c in cases),
        }
        actual = {key: int(suite.get(key, "0")) for key in COUNTS}
        if actual != expected:
            problems.append(f"suite {suite.get('name')}: counts {actual} != {expected}")
        problems += [
            f"testcase {c.get('name')} of another class" for c in cases
            if c.get("classname") != suite.get("name")
        ]  # fmt: skip
        problems += [
            f"testcase {c.get('name')} has more than one outcome" for c in cases
            if len([o for o in c if o.tag != "system-out"]) > 1
        ]  # fmt: skip
    for key in COUNTS[:3]:
        total = sum(int(s.get(key, "0")) for s in root.findall("testsuite"))
        if int(root.get(key, "0")) != total:
            problems.append(f"root {key} {root.get(key)} != {total}")
    return problems


def parse(report: Report) -> ET.Element:
    text = junit.render(report)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    assert text.isascii()  # non-ASCII travels as character references
    assert schema_problems(text) == []
    root = ET.fromstring(text)
    assert count_problems(root) == []
    return root


def test_canonical_report_matches_golden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Any
) -> None:
    report = canonical_report(tmp_path, monkeypatch)
    text = junit.render(report)
    golden("report_junit.xml", text)
    assert str(tmp_path) not in text
    assert junit.render(report) == text  # rendering twice gives the same bytes


def test_canonical_report_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = canonical_report(tmp_path, monkeypatch)
    root = parse(report)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == sorted(job.id for job in report.jobs)
    for suite in suites:
        names = [case.get("name") for case in suite.findall("testcase")]
        assert names == sorted(f"{rule.id} {rule.slug}" for rule in report.rules)
    unsuppressed = {(f.job, f.rule) for f in report.findings if f.suppression is None}
    counted = {(f.job, f.rule) for f in report.findings
               if f.suppression is None and f.severity != "info"}  # fmt: skip
    suppressed = {(f.job, f.rule) for f in report.findings if f.suppression} - unsuppressed
    assert int(root.get("failures", "")) == len(counted)
    assert "skipped" not in root.attrib
    assert sum(int(s.get("skipped", "")) for s in suites) == len(suppressed)
    assert all(suite.get("file") for suite in suites)
    assert int(root.get("tests", "")) == len(report.jobs) * len(report.rules)
    skipped = root.find(".//testcase[@name='TL302 debug-logging']/skipped")
    assert skipped is not None
    assert skipped.get("message") == "suppressed: NCCL traces for the interconnect ticket"


def test_findings_below_fail_on_pass_with_system_out_and_the_others_fail() -> None:
    """Info findings do not set the exit code (default --fail-on warning), so they are not
    failures: a CI view must not show red where the job passed."""
    findings = [
        _finding(severity="info", message="logs every step", waste=Waste(usd=12.5)),
        _finding(rule="TL101", name="oversized-gpu", severity="error", message="too big"),
    ]
    root = parse(Report(findings=findings, jobs=[], rules=(_rule("TL201"), _rule("TL101"))))
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "jobs/train.yaml"
    by_name = {case.get("name"): case for case in suite.findall("testcase")}
    info = by_name["TL201 checkpoint-too-frequent"]
    assert info.find("failure") is None and info.find("skipped") is None
    out = info.find("system-out")
    assert out is not None
    assert out.text == "jobs/train.yaml:12:3: TL201 [info] logs every step (~$12 per run)"
    error = by_name["TL101 oversized-gpu"].find("failure")
    assert error is not None and error.get("type") == "error"
    assert root.get("failures") == "1"


def test_fail_on_info_makes_info_findings_failures() -> None:
    info = _finding(severity="info", message="logs every step", waste=Waste(usd=12.5))
    root = parse(Report(findings=[info], rules=(_rule("TL201"),), fail_on="info"))
    failure = root.find(".//failure")
    assert failure is not None
    assert (failure.get("type"), failure.get("message")) == (
        "info",
        "logs every step (~$12 per run)",
    )


def test_cli_junit_failures_follow_fail_on(tmp_path: Path) -> None:
    """The CLI hands --fail-on to the report: failures and the exit code agree."""
    job = tmp_path / "train.sh"
    job.write_text(
        "#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH --time=01:00:00\n"
        "torchrun --nproc_per_node=1 train.py --logging_steps 1 --max_steps 100000\n"
    )
    for fail_on in ("warning", "info"):
        result = CliRunner().invoke(main, ["check", str(job), "--format", "junit",
                                           "--fail-on", fail_on])  # fmt: skip
        root = ET.fromstring(result.output)
        assert schema_problems(result.output) == []
        failures = int(root.get("failures", ""))
        assert (failures > 0) == (result.exit_code == 1), (fail_on, result.output)


def test_cli_diff_junit_failures_follow_fail_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In --diff mode too: the new findings' report counts failures as the exit code does."""
    job_repo_with_a_change(tmp_path)
    monkeypatch.chdir(tmp_path)
    for fail_on in ("error", "info"):
        args = ["check", "--diff", "base", "--format", "junit", "--fail-on", fail_on]
        result = CliRunner().invoke(main, args)
        assert schema_problems(result.output) == [], result.output
        failures = int(ET.fromstring(result.output).get("failures", ""))
        assert (failures > 0) == (result.exit_code == 1), (fail_on, result.output)


def test_the_schema_rejects_what_jenkins_rejects() -> None:
    """junit-10.xsd is really applied: a skipped count on the root and a line on a test case
    (both once written by other tools) fail it."""
    bad = ('<testsuites skipped="0"><testsuite name="a" tests="1" failures="0" errors="0">'
           '<testcase name="x" line="3"/></testsuite></testsuites>')  # fmt: skip
    problems = " ".join(schema_problems(bad))
    assert "skipped" in problems and "line" in problems


def test_several_findings_of_one_rule_make_one_failure_listing_all() -> None:
    findings = [
        _finding(message="first", line=3),
        _finding(message="second", line=9, severity="error"),
        _finding(message="waived", line=20, suppression=Suppression(kind="waiver", reason="ok")),
    ]
    root = parse(Report(findings=findings, rules=(_rule("TL201"),)))
    (failure,) = root.findall(".//failure")
    assert failure.get("message") == "first (+1 more)"
    assert failure.get("type") == "error"  # the worst severity of the case
    assert failure.text is not None
    assert failure.text.splitlines() == [
        "jobs/train.yaml:3:3: TL201 [warning] first",
        "jobs/train.yaml:9:3: TL201 [error] second",
        "jobs/train.yaml:20:3: TL201 [warning] waived [suppressed: ok]",
    ]
    assert root.find(".//skipped") is None


def test_all_suppressed_is_skipped_with_the_reasons() -> None:
    findings = [
        _finding(suppression=Suppression(kind="inline", reason="short debug run")),
        _finding(line=30, suppression=Suppression(kind="baseline")),
    ]
    root = parse(Report(findings=findings, rules=(_rule("TL201"),)))
    (skipped,) = root.findall(".//skipped")
    assert skipped.get("message") == "suppressed: baseline (no reason given); short debug run"
    assert root.get("failures") == "0"
    suite = root.find("testsuite")
    assert suite is not None and suite.get("skipped") == "1"


def test_text_is_escaped_and_control_characters_replaced() -> None:
    nasty = "a <b> & \"c\" 'd'\nline two\x01\x1b ≥ 2 workers"
    root = parse(Report(findings=[_finding(message=nasty, job='j"<&>')], rules=()))
    failure = root.find(".//failure")
    assert failure is not None
    assert failure.get("message") == "a <b> & \"c\" 'd' line two\ufffd\ufffd ≥ 2 workers"
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == 'j"<&>'


def test_run_errors_are_error_cases() -> None:
    errors = [RunError(job="jobs/broken.yaml", message="cannot parse <line 3>")]
    root = parse(Report(findings=[_finding()], errors=errors, rules=(_rule("TL201"),)))
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    broken = suites["jobs/broken.yaml"]
    error = broken.find("testcase[@name='trainlint']/error")
    assert error is not None
    assert error.get("message") == "cannot parse <line 3>"
    assert root.get("errors") == "1"


def test_conftest_rules_are_named_by_their_id() -> None:
    finding = _finding(rule="main.deny", name="main.deny", severity="error", message="no fp32")
    root = parse(Report(findings=[finding], rules=(_rule("TL201"),)))
    names = [case.get("name") for case in root.iter("testcase")]
    assert names == ["TL201 checkpoint-too-frequent", "main.deny"]


def test_empty_report_is_a_valid_document() -> None:
    root = parse(Report())
    assert dict(root.attrib) == {
        "name": "trainlint", "tests": "0", "failures": "0", "errors": "0"
    }  # fmt: skip


def test_format_is_registered_and_offered_by_the_cli() -> None:
    assert renderer("junit") is junit.render
    result = CliRunner().invoke(main, ["check", "--help"])
    assert "junit" in result.output


def _rule(rule_id: str) -> RuleMeta:
    return builtin_rule(rule_id)


def _finding(**changes: Any) -> Finding:
    return finding(**changes)
