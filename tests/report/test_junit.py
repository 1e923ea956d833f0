"""JUnit reporter: parses back, has the Jenkins/GitLab shape, counts add up, stable bytes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.report.canonical import builtin_rule, canonical_report, finding
from trainlint.cli import main
from trainlint.findings import Finding, Suppression, Waste
from trainlint.packs import RuleMeta
from trainlint.report import junit, renderer
from trainlint.results import Report, RunError

# The common shape (Ant's junit task, as Jenkins' junit plugin and GitLab read it): the
# elements each element may hold and the attributes it must / may have.
CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testcase", "properties", "system-out", "system-err"},
    "testcase": {"failure", "error", "skipped", "system-out", "system-err"},
    "failure": set(),
    "error": set(),
    "skipped": set(),
}
REQUIRED = {
    "testsuites": {"tests", "failures", "errors"},
    "testsuite": {"name", "tests", "failures", "errors"},
    "testcase": {"name", "classname"},
    "failure": {"message", "type"},
    "error": {"message", "type"},
    "skipped": set(),
}
OPTIONAL = {
    "testsuites": {"name", "skipped"},
    "testsuite": {"skipped"},
    "testcase": set(),
    "failure": set(),
    "error": set(),
    "skipped": {"message"},
}
COUNTS = ("tests", "failures", "errors", "skipped")


def shape_problems(root: ET.Element) -> list[str]:
    """Where the document leaves the common JUnit shape or its counts do not add up."""
    problems = []
    if root.tag != "testsuites":
        problems.append(f"root is <{root.tag}>")
    for element in root.iter():
        tag = element.tag
        allowed_children = CHILDREN.get(tag)
        if allowed_children is None:
            problems.append(f"unexpected <{tag}>")
            continue
        names = set(element.attrib)
        if missing := REQUIRED[tag] - names:
            problems.append(f"<{tag}> lacks {sorted(missing)}")
        if extra := names - REQUIRED[tag] - OPTIONAL[tag]:
            problems.append(f"<{tag}> has {sorted(extra)}")
        problems += [f"<{c.tag}> inside <{tag}>" for c in element if c.tag not in allowed_children]
        if tag == "testcase" and len([c for c in element if c.tag != "system-out"]) > 1:
            problems.append(f"testcase {element.get('name')} has more than one outcome")
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
    for key in COUNTS:
        total = sum(int(s.get(key, "0")) for s in root.findall("testsuite"))
        if int(root.get(key, "0")) != total:
            problems.append(f"root {key} {root.get(key)} != {total}")
    return problems


def parse(report: Report) -> ET.Element:
    text = junit.render(report)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    assert text.isascii()  # non-ASCII travels as character references
    root = ET.fromstring(text)
    assert shape_problems(root) == []
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
    counted = {(f.job, f.rule) for f in report.findings if f.suppression is None}
    suppressed = {(f.job, f.rule) for f in report.findings if f.suppression} - counted
    assert int(root.get("failures", "")) == len(counted)
    assert int(root.get("skipped", "")) == len(suppressed)
    assert int(root.get("tests", "")) == len(report.jobs) * len(report.rules)
    skipped = root.find(".//testcase[@name='TL302 debug-logging']/skipped")
    assert skipped is not None
    assert skipped.get("message") == "suppressed: NCCL traces for the interconnect ticket"


def test_every_unsuppressed_finding_fails_with_its_severity_as_type() -> None:
    findings = [
        _finding(severity="info", message="logs every step", waste=Waste(usd=12.5)),
        _finding(rule="TL101", name="oversized-gpu", severity="error", message="too big"),
    ]
    root = parse(Report(findings=findings, jobs=[], rules=(_rule("TL201"), _rule("TL101"))))
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "jobs/train.yaml"
    by_name = {case.get("name"): case for case in suite.findall("testcase")}
    info = by_name["TL201 checkpoint-too-frequent"].find("failure")
    error = by_name["TL101 oversized-gpu"].find("failure")
    assert info is not None and error is not None
    assert (info.get("type"), info.get("message")) == ("info", "logs every step (~$12 per run)")
    assert info.text == "jobs/train.yaml:12:3: TL201 [info] logs every step (~$12 per run)"
    assert error.get("type") == "error"


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
    assert root.get("skipped") == "1"


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
        "name": "trainlint", "tests": "0", "failures": "0", "errors": "0", "skipped": "0"
    }  # fmt: skip


def test_format_is_registered_and_offered_by_the_cli() -> None:
    assert renderer("junit") is junit.render
    result = CliRunner().invoke(main, ["check", "--help"])
    assert "junit" in result.output


def _rule(rule_id: str) -> RuleMeta:
    return builtin_rule(rule_id)


def _finding(**changes: Any) -> Finding:
    return finding(**changes)
