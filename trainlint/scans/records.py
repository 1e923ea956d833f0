"""Rows a report is made of: one per job of a scanned commit, with its cost, waste and
findings, independent of where they are stored (``db``) or shown (``render``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from trainlint.findings import Finding
from trainlint.job import Job
from trainlint.results import Report
from trainlint.scans.fingerprint import fingerprint

UNTAGGED = "untagged"


@dataclass(frozen=True)
class FindingRecord:
    rule: str
    severity: str
    message: str
    file: str
    line: int
    waste_usd: float | None = None
    waste_gpu_hours: float | None = None


@dataclass(frozen=True)
class JobRecord:
    """One job as a commit of a repository states it."""

    repo: str
    commit: str
    committed_at: datetime
    path: str
    fingerprint: str | None
    tags: dict[str, str]
    gpu: str | None
    gpus: int | None
    usd_per_run: float | None
    usd_low: float | None
    usd_high: float | None
    gpu_hours: float | None
    runs: int = 1
    findings: tuple[FindingRecord, ...] = field(default=())

    @property
    def waste_usd(self) -> float:
        return sum(f.waste_usd or 0.0 for f in self.findings)

    @property
    def month(self) -> str:
        return self.committed_at.strftime("%Y-%m")

    def tag(self, key: str) -> str:
        return self.tags.get(key) or UNTAGGED


@dataclass(frozen=True)
class Commit:
    """Where a report's jobs come from: a repository's name, a commit and its time."""

    repo: str
    sha: str
    committed_at: datetime


def job_records(report: Report, commit: Commit) -> list[JobRecord]:
    """Every job of ``report`` with the findings that point into it (suppressed ones left
    out: a waiver or baseline entry says the team accepted them)."""
    by_job: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.suppression is None:
            by_job.setdefault(finding.job, []).append(finding)
    return [_record(job, by_job.get(job.id, []), commit) for job in report.jobs]


def _record(job: Job, findings: list[Finding], commit: Commit) -> JobRecord:
    run = job.estimates.run
    low, high = job.estimates.ranges.get("/run/usd", (None, None))
    return JobRecord(
        repo=commit.repo, commit=commit.sha, committed_at=commit.committed_at, path=job.id,
        fingerprint=fingerprint(job), tags=dict(job.tags), gpu=job.resources.gpu.model,
        gpus=job.resources.world_size, usd_per_run=run.usd, usd_low=low, usd_high=high,
        gpu_hours=run.gpu_hours, runs=job.budget.runs or 1,
        findings=tuple(_finding(f) for f in findings),
    )  # fmt: skip


def _finding(finding: Finding) -> FindingRecord:
    waste = finding.waste
    return FindingRecord(
        rule=finding.rule, severity=finding.severity, message=finding.message,
        file=finding.file, line=finding.line,
        waste_usd=waste.usd if waste is not None else None,
        waste_gpu_hours=waste.gpu_hours if waste is not None else None,
    )  # fmt: skip
