"""SARIF 2.1.0 for GitHub code scanning (and any other SARIF viewer).

Valid against the official OASIS schema and carrying what GitHub's "SARIF support for code
scanning" page marks as required or uses:

- one run; ``tool.driver`` with ``name``, ``version``, ``semanticVersion`` (when the version is
  SemVer) and one ``rules[]`` entry per rule that ran, plus a minimal entry for each rule id that
  only findings name (conftest rules such as ``main.deny``). ``helpUri``: a builtin rule's
  section of docs/rules.md in trainlint's repository, a pack rule's first METADATA
  ``related_resources`` ref (none when it has none; ``report._links``).
- a rule's ``name`` is its slug (``checkpoint-too-frequent``): GitHub shows ``name`` to filter
  by rule, its own examples use slug-like names (``js/unused-local-variable``), and the slug is
  what users select, ignore and suppress. ``shortDescription`` is a title: the description's
  first sentence, cut to its main clause (and then without parentheses) when that sentence is
  longer than ``TITLE_LIMIT`` characters, as GitHub shows it as the rule's title;
  ``fullDescription`` is the description (both ≤ 1024 characters, GitHub's limit); ``help``
  is ``trainlint rule``'s page (GitHub shows ``help.markdown``). ``properties``: the
  category as a tag and ``problem.severity`` (GitHub's ordering for non-security rules). No
  ``precision`` (no measured false-positive rate) and no ``security-severity``: cost rules are
  not security rules, and that property would file their alerts as security alerts.
- a result's ``message.text`` is the text report's: the message on one line plus the waste per
  run. One location: ``uri`` as the finding's file, relative to the project root (the git work
  tree; ``config.project_root``) from whatever folder trainlint ran, POSIX separators,
  percent-encoded, with ``uriBaseId %SRCROOT%``; ``run.originalUriBaseIds`` gives ``%SRCROOT%``
  as the root's absolute ``file:///…/`` URI (SARIF §3.14.14: an absolute URI ending in ``/``),
  so any viewer can resolve the files. It is the only absolute path in the log, left out when
  the report does not know its root. ``region``: ``startLine``/``startColumn`` of the finding,
  ``endLine`` = ``startLine`` and no ``endColumn``: findings have one position, and by SARIF
  §3.30.8 an absent ``endColumn`` runs the region to the end of that line — the key or flag and
  its value, which is what a finding points at. Columns count Unicode code points
  (``columnKind``), as Python's ``str`` does.
- ``partialFingerprints["trainlintFingerprint/v1"]``: the finding's line-independent fingerprint
  and its job, so an alert survives moved lines and re-estimated costs. GitHub itself only reads
  ``primaryLocationLineHash``, which ``github/codeql-action/upload-sarif`` computes from the
  file when absent, so it is left to the action.
- suppressed findings carry ``suppressions``: ``inSource`` for inline and file comments,
  ``external`` for per-file-ignores, waivers and the baseline; status ``accepted``, the reason as
  ``justification`` (omitted when there is none: no empty strings); viewers that honour
  ``suppressions`` show the result as suppressed rather than open.
- a finding with a fix carries ``fixes``: the edits as ``artifactChanges[].replacements``
  (``deletedRegion`` and ``insertedContent``), ``properties.safe`` false for an unsafe one.
- run errors (a job that could not be checked) are ``toolExecutionNotifications`` of
  ``invocations[0]``, whose ``executionSuccessful`` is false when there are any.

Output is byte-stable: keys sorted, results in location order, no timestamps, and no absolute
path but the root's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

import trainlint
from trainlint.findings import Finding, Fix, Suppression
from trainlint.packs import RuleMeta
from trainlint.report._links import rule_help_uri
from trainlint.report.text import format_waste
from trainlint.results import Report
from trainlint.rule_docs import render_rule

SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT_KEY = "trainlintFingerprint/v1"
SRCROOT = "%SRCROOT%"
GITHUB_TEXT_LIMIT = 1024  # shortDescription / fullDescription
TITLE_LIMIT = 160  # a shortDescription longer than this is cut to its main clause
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}
IN_SOURCE = frozenset({"inline", "file"})  # the others (config, baseline) are "external"
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


def render(report: Report) -> str:
    findings = sorted(report.findings, key=_order)
    rules = _rules(report, findings)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    run = {
        "tool": {"driver": _driver(rules)},
        "columnKind": "unicodeCodePoints",
        "invocations": [_invocation(report)],
        "results": [_result(f, index[f.rule]) for f in findings],
    }
    if report.root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": root_uri(report.root)}}
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, sort_keys=True) + "\n"


def _order(finding: Finding) -> tuple[str, int, int, str, str, str]:
    return (finding.file, finding.line, finding.column, finding.rule, finding.job,
            finding.fingerprint)  # fmt: skip


def _driver(rules: list[dict[str, Any]]) -> dict[str, Any]:
    version = trainlint.__version__
    driver: dict[str, Any] = {"name": "trainlint", "version": version, "rules": rules}
    if _SEMVER.match(version):
        driver["semanticVersion"] = version
    return driver


def _rules(report: Report, findings: list[Finding]) -> list[dict[str, Any]]:
    """One descriptor per rule that ran, then per rule id only findings name; sorted by id."""
    described = {rule.id: _descriptor(rule, _params(report, rule)) for rule in report.rules}
    for finding in findings:
        if finding.rule not in described:
            described[finding.rule] = _minimal_descriptor(finding)
    return [described[key] for key in sorted(described)]


def _params(report: Report, rule: RuleMeta) -> dict[str, Any]:
    value = report.params.get(rule.package.rsplit(".", 1)[-1], {})
    return value if isinstance(value, dict) else {}


def _descriptor(rule: RuleMeta, params: dict[str, Any]) -> dict[str, Any]:
    page = render_rule(rule, params)
    description = " ".join(rule.description.split()) or rule.slug
    descriptor = {
        "id": rule.id,
        "name": rule.slug,
        "shortDescription": {"text": title(description)},
        "fullDescription": {"text": _clip(description)},
        "help": {"text": page, "markdown": page},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": [rule.category],
            "problem.severity": PROBLEM_SEVERITY[rule.severity],
        },
    }
    uri = rule_help_uri(rule)
    return descriptor if uri is None else {**descriptor, "helpUri": uri}


def _minimal_descriptor(finding: Finding) -> dict[str, Any]:
    """A rule without METADATA (a conftest ``deny``/``warn`` rule): its id says what it is."""
    text = f"Policy rule {finding.rule} (conftest-style deny/violation/warn rule)."
    return {
        "id": finding.rule,
        "name": finding.name,
        "shortDescription": {"text": text},
        "fullDescription": {"text": text},
        "help": {"text": text, "markdown": text},
        "defaultConfiguration": {"level": LEVELS[finding.severity]},
        "properties": {"tags": ["policy"]},
    }


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.!?]\s+(?=[A-Z`(\"'])")
_CLAUSE_END = re.compile(r"[:;] ")
_PARENTHESES = re.compile(r" \([^()]*\)")


def title(description: str) -> str:
    """One sentence a viewer can show as a rule's title: the first sentence, else its main
    clause (before the first ``:``/``;``), else that clause without parentheses, clipped at
    a word to ``TITLE_LIMIT``."""
    sentence = _first_sentence(description)
    if len(sentence) <= TITLE_LIMIT:
        return sentence
    clause = _CLAUSE_END.split(sentence, maxsplit=1)[0].rstrip(".") + "."
    if len(clause) > TITLE_LIMIT:
        clause = _PARENTHESES.sub("", clause)
    if len(clause) <= TITLE_LIMIT:
        return clause
    return clause[: TITLE_LIMIT - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _first_sentence(text: str) -> str:
    end = _SENTENCE_END.search(text)
    return text if end is None else text[: end.start() + 1]


def _clip(text: str, limit: int = GITHUB_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    message = " ".join(finding.message.split()) + format_waste(finding.waste)
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": _physical_location(finding)}],
        "partialFingerprints": {FINGERPRINT_KEY: result_fingerprint(finding)},
        "properties": {"job": finding.job},
    }
    waste = finding.waste.model_dump(exclude_none=True) if finding.waste else {}
    if waste:
        result["properties"]["waste"] = waste
    if finding.suppression is not None:
        result["suppressions"] = [_suppression(finding.suppression)]
    if finding.fix is not None:
        result["fixes"] = [_fix(finding.fix)]
    return result


def _fix(fix: Fix) -> dict[str, Any]:
    """SARIF's ``fix``: one ``artifactChange`` per file, each edit a ``replacement`` whose
    ``deletedRegion`` ends before ``endColumn`` (SARIF's regions end there, as TextEdit's
    do); ``properties.safe`` tells what ``check --fix`` applies from what needs
    ``--unsafe-fixes``."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for edit in fix.edits:
        by_path.setdefault(edit.path, []).append({
            "deletedRegion": {
                "startLine": edit.start_line, "startColumn": edit.start_column,
                "endLine": edit.end_line, "endColumn": edit.end_column,
            },
            "insertedContent": {"text": edit.new_text},
        })  # fmt: skip
    changes = [
        {"artifactLocation": {"uri": artifact_uri(path), "uriBaseId": SRCROOT},
         "replacements": replacements}
        for path, replacements in by_path.items()
    ]  # fmt: skip
    return {"description": {"text": fix.title}, "artifactChanges": changes,
            "properties": {"safe": fix.safe}}  # fmt: skip


def result_fingerprint(finding: Finding) -> str:
    """The finding's line-independent fingerprint qualified by its job (one fact can be
    reported for two jobs that share a file)."""
    key = f"{finding.fingerprint}\0{finding.job}".encode()
    return hashlib.sha256(key).hexdigest()[:32]


def _physical_location(finding: Finding) -> dict[str, Any]:
    return {
        "artifactLocation": {"uri": artifact_uri(finding.file), "uriBaseId": SRCROOT},
        "region": {
            "startLine": finding.line,
            "startColumn": finding.column,
            "endLine": finding.line,
        },
    }


def root_uri(root: Path) -> str:
    """The project root as SARIF's ``originalUriBaseIds`` wants it: an absolute ``file`` URI
    ending in ``/`` (§3.14.14), percent-encoded."""
    uri = Path(os.path.abspath(root)).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def artifact_uri(file: str) -> str:
    """A finding's file as a relative URI reference: POSIX separators, percent-encoded (a
    ``:`` too, so a first segment never reads as a scheme), never absolute."""
    parts = [part for part in PurePosixPath(relative_path(file)).parts if part != "."]
    return quote("/".join(parts), safe="/-._~")


def relative_path(file: str) -> str:
    """``file`` in POSIX form, relative to the working directory when it is absolute (on
    another Windows drive, its path below the drive)."""
    path = Path(file)
    if path.is_absolute():
        try:
            path = Path(os.path.relpath(path, Path.cwd()))
        except ValueError:
            path = path.relative_to(path.anchor)
    return path.as_posix()


def _suppression(suppression: Suppression) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": "inSource" if suppression.kind in IN_SOURCE else "external",
        "status": "accepted",
    }
    if suppression.reason:
        entry["justification"] = suppression.reason
    details = {
        "trainlintKind": suppression.kind,
        "approvedBy": suppression.approved_by,
        "expires": suppression.expires,
        "source": _relative_source(suppression.source),
    }
    entry["properties"] = {key: value for key, value in details.items() if value is not None}
    return entry


def _relative_source(source: str | None) -> str | None:
    """A suppression's ``file[:line]`` with the file relative, like a finding's."""
    if not source:
        return source
    file, colon, line = source.rpartition(":")
    if colon and line.isdigit():
        return f"{relative_path(file)}:{line}"
    return relative_path(source)


def _invocation(report: Report) -> dict[str, Any]:
    invocation: dict[str, Any] = {"executionSuccessful": not report.errors}
    if report.errors:
        invocation["toolExecutionNotifications"] = [
            {
                "level": "error",
                "message": {"text": f"{error.job}: {error.message}"},
                "properties": {"job": error.job},
            }
            for error in sorted(report.errors, key=lambda e: (e.job, e.message))
        ]
    return invocation
