"""Stable JSON (``version: 1``), described by schemas/findings.schema.json."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from trainlint.findings import Finding
from trainlint.job import Job
from trainlint.results import Report, RunError


class JsonReport(BaseModel):
    """The document ``trainlint check --format json`` writes."""

    model_config = ConfigDict(extra="forbid", title="trainlint findings")
    version: Literal[1] = 1
    findings: list[Finding]
    jobs: list[Job]
    errors: list[RunError]


def render(report: Report) -> str:
    document = JsonReport(findings=report.findings, jobs=report.jobs, errors=report.errors)
    return document.model_dump_json(indent=2, by_alias=True) + "\n"
