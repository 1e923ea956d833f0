"""JUnit XML for CI test-report views (GitLab ``artifacts:reports:junit``, Jenkins, Azure).

Valid against Jenkins' junit-10.xsd (jenkinsci/xunit-plugin, which validates every report it
reads; tests/schemas/junit-10.xsd). Shape (Ant's ``testsuites`` root):

- one ``<testsuite name=JOB file=FILE>`` per job, sorted by job id (``file``: the job's first
  source file); one ``<testcase classname=JOB name="TL201 checkpoint-too-frequent">`` per rule
  that ran on it (a conftest rule, which has no slug, is named by its id alone), by rule id;
- a test case fails only with findings that count toward the exit code: unsuppressed and at or
  above ``--fail-on`` (``Report.fail_on``, warning by default). It has ONE ``<failure
  type=SEVERITY message=...>`` whose text lists every finding as the text report prints it
  (``file:line:col: TL201 [warning] ... (cost)``): GitLab's parser reads a single failure per
  test case. ``type`` is the highest severity;
- findings below ``--fail-on`` (info, by default) leave their test case passing and are listed
  in its ``<system-out>``, so CI views count the same failures as the exit code;
- a test case whose findings are all suppressed is ``<skipped message="suppressed: REASON">``;
  suppressed findings of a failing or passing case are listed after the others;
- a job that could not be checked (a run error) gets a test case ``trainlint`` with an
  ``<error>`` (a job that failed to load gets a suite with that case alone);
- ``tests``/``failures``/``errors`` on every suite and on the root add up, ``skipped`` on the
  suites only (junit-10.xsd has no ``skipped`` on ``<testsuites>``). No ``file``/``line`` on
  test cases either: junit-10.xsd rejects them, and the xunit plugin validates; each finding's
  ``file:line:col`` starts its line in the failure text or system-out instead. No ``time``,
  ``timestamp`` or ``hostname``, so the output is byte-stable.

Text is escaped by ElementTree; characters XML 1.0 cannot hold (control characters) become
U+FFFD, and the document is ASCII with character references, so it stays valid UTF-8 whatever
encoding the file is written in.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field

from trainlint.findings import SEVERITY_RANK, Finding, Severity
from trainlint.report.text import format_finding, format_waste
from trainlint.results import Report, RunError

DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass
class _Case:
    name: str
    findings: list[Finding] = field(default_factory=list)


def render(report: Report) -> str:
    root = ET.Element("testsuites", name="trainlint")
    files = {job.id: job.sources[0].path for job in report.jobs if job.sources}
    for job in _job_ids(report):
        suite = _suite(job, _cases(report, job), [e for e in report.errors if e.job == job],
                       report.fail_on)  # fmt: skip
        if job in files:
            suite.set("file", _safe(files[job]))
        root.append(suite)
    _count(root, root.findall("testsuite"))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode").encode("ascii", "xmlcharrefreplace").decode()
    return DECLARATION + body + "\n"


def _job_ids(report: Report) -> list[str]:
    jobs = {job.id for job in report.jobs} | {finding.job for finding in report.findings}
    return sorted(jobs | {error.job for error in report.errors})


def _cases(report: Report, job: str) -> list[_Case]:
    """Every rule that ran, plus each rule only findings name (conftest rules), by id."""
    names = {rule.id: f"{rule.id} {rule.slug}" for rule in report.rules}
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        names.setdefault(finding.rule, _case_name(finding))
        if finding.job == job:
            by_rule[finding.rule].append(finding)
    return [_Case(names[rule], by_rule.get(rule, [])) for rule in sorted(names)]


def _case_name(finding: Finding) -> str:
    return finding.rule if finding.name == finding.rule else f"{finding.rule} {finding.name}"


def _suite(job: str, cases: list[_Case], errors: list[RunError], fail_on: Severity) -> ET.Element:
    suite = ET.Element("testsuite", name=_safe(job))
    for case in cases:
        suite.append(_testcase(job, case, fail_on))
    if errors:
        element = ET.SubElement(suite, "testcase", classname=_safe(job), name="trainlint")
        for error in errors:
            failure = ET.SubElement(element, "error", message=_safe(error.message), type="error")
            failure.text = _safe(error.message)
    _count(suite, suite.findall("testcase"))
    return suite


def _testcase(job: str, case: _Case, fail_on: Severity) -> ET.Element:
    element = ET.Element("testcase", classname=_safe(job), name=_safe(case.name))
    unsuppressed = [f for f in case.findings if f.suppression is None]
    counted = [f for f in unsuppressed if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on]]
    advice = [f for f in unsuppressed if f not in counted]
    suppressed = [f for f in case.findings if f.suppression is not None]
    if counted:
        worst = max(counted, key=lambda f: SEVERITY_RANK[f.severity])
        failure = ET.SubElement(
            element, "failure", message=_safe(_headline(counted)), type=worst.severity
        )
        failure.text = _lines([*counted, *advice, *suppressed])
    elif advice:
        ET.SubElement(element, "system-out").text = _lines([*advice, *suppressed])
    elif suppressed:
        reasons = sorted({_reason(f) for f in suppressed})
        ET.SubElement(element, "skipped", message=_safe(f"suppressed: {'; '.join(reasons)}"))
    return element


def _lines(findings: list[Finding]) -> str:
    return _safe("\n".join(_line(f) for f in findings))


def _headline(findings: list[Finding]) -> str:
    """The first finding's message and cost, as the text report prints them."""
    first = " ".join(findings[0].message.split()) + format_waste(findings[0].waste)
    more = len(findings) - 1
    return f"{first} (+{more} more)" if more else first


def _line(finding: Finding) -> str:
    if finding.suppression is None:
        return format_finding(finding)
    return f"{format_finding(finding)} [suppressed: {_reason(finding)}]"


def _reason(finding: Finding) -> str:
    suppression = finding.suppression
    if suppression is None:
        return ""
    return suppression.reason or f"{suppression.kind} (no reason given)"


def _count(element: ET.Element, children: list[ET.Element]) -> None:
    """tests/failures/errors/skipped of a suite (its cases) or of the root (its suites)."""
    if element.tag == "testsuites":
        keys: tuple[str, ...] = _KEYS[:3]  # junit-10.xsd: no ``skipped`` on the root
        totals = {key: sum(int(child.get(key, "0")) for child in children) for key in keys}
    else:
        keys = _KEYS
        totals = {
            "tests": len(children),
            "failures": sum(1 for c in children if c.find("failure") is not None),
            "errors": sum(1 for c in children if c.find("error") is not None),
            "skipped": sum(1 for c in children if c.find("skipped") is not None),
        }
    for key in keys:
        element.set(key, str(totals[key]))


_KEYS = ("tests", "failures", "errors", "skipped")


def _safe(text: str) -> str:
    """Text XML 1.0 can hold: control characters (other than tab and newlines) become U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)
