"""GitLab Code Quality report (``artifacts:reports:codequality``): a JSON array of issues.

The fields GitLab reads (its "Code Quality report format", a subset of CodeClimate's): per
unsuppressed finding ``description`` (the message and the waste per run, as the text report
prints them), ``check_name`` (the rule id and slug, ``TL201 checkpoint-too-frequent``),
``fingerprint`` (the SARIF one: line-independent and qualified by the job, so an issue keeps
its identity in the merge request widget when lines move), ``severity`` and
``location.path`` (relative, POSIX) with ``location.lines.begin``.

Severity: info → ``info``, warning → ``minor``, error → ``major``; ``critical`` and
``blocker`` are left to security tools. A job that could not be checked is one ``major``
issue ``trainlint run-error`` at line 1 of the job's file, so the widget does not read as
clean. Suppressed findings are left out: GitLab has no notion of a suppressed issue.
Issues are in location order; the output is byte-stable.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from trainlint.findings import Finding
from trainlint.report.sarif import relative_path, result_fingerprint
from trainlint.report.text import format_waste
from trainlint.results import Report, RunError

SEVERITY = {"info": "info", "warning": "minor", "error": "major"}
RUN_ERROR = "trainlint run-error"


def render(report: Report) -> str:
    counted = sorted((f for f in report.findings if f.suppression is None), key=_order)
    issues = [_issue(f) for f in counted]
    issues += [_error_issue(e) for e in sorted(report.errors, key=lambda e: (e.job, e.message))]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def _order(finding: Finding) -> tuple[str, int, int, str, str]:
    return finding.file, finding.line, finding.column, finding.rule, finding.job


def _issue(finding: Finding) -> dict[str, Any]:
    check = finding.rule if finding.name == finding.rule else f"{finding.rule} {finding.name}"
    return {
        "description": " ".join(finding.message.split()) + format_waste(finding.waste),
        "check_name": check,
        "fingerprint": result_fingerprint(finding),
        "severity": SEVERITY[finding.severity],
        "location": {"path": _path(finding.file), "lines": {"begin": max(finding.line, 1)}},
    }


def _error_issue(error: RunError) -> dict[str, Any]:
    key = f"{error.job}\0{error.message}".encode()
    return {
        "description": f"not checked: {' '.join(error.message.split())}",
        "check_name": RUN_ERROR,
        "fingerprint": hashlib.sha256(key).hexdigest()[:32],
        "severity": "major",
        "location": {"path": _path(error.job), "lines": {"begin": 1}},
    }


def _path(file: str) -> str:
    return relative_path(file).removeprefix("./")
