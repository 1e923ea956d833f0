"""Fixes (``trainlint check --fix``): the smallest text edit at each finding's span.

``attach`` gives each finding of a check its ``Fix`` (rules.py: one fixer per builtin rule,
keyed by slug), after the rules ran and before any report renders, so the text, SARIF and
the pull-request comment show the same edits that ``--fix`` writes. ``apply.py`` chooses the
fixes to write (safe ones, or unsafe too; overlapping ones dropped, as ruff does) and writes
them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainlint.findings import Finding
from trainlint.fix.rules import FIXERS
from trainlint.fix.site import Site
from trainlint.fix.text import SourceText, read_source
from trainlint.job import Job


class _Files:
    """The job files' texts, each read once per run (None: unreadable or not UTF-8)."""

    def __init__(self, root: Path | None) -> None:
        self.root, self.texts = root or Path.cwd(), dict[str, SourceText | None]()

    def __call__(self, path: str) -> SourceText | None:
        if path not in self.texts:
            self.texts[path] = read_source(self.root / path, path)
        return self.texts[path]


def attach(
    findings: list[Finding], jobs: list[Job], params: Mapping[str, Any], root: Path | None
) -> list[Finding]:
    """The findings, each with its fix where its rule has one and the text allows it."""
    by_id = {job.id: job for job in jobs}
    files = _Files(root)
    fixed = []
    for finding in findings:
        fixer, job = FIXERS.get(finding.name), by_id.get(finding.job)
        if fixer is None or job is None:
            fixed.append(finding)
            continue
        rule_params = params.get(finding.name.replace("-", "_"), {})
        site = Site(finding, job, rule_params if isinstance(rule_params, dict) else {}, files)
        fixed.append(finding.model_copy(update={"fix": fixer(site)}))
    return fixed
