"""What a check run produces, as the reports read it: the ``Report`` of a check, each
candidate file's outcome, and diff mode's ``DiffReport``.

Models only: nothing here imports the pipeline (lint, sources, engine), so the formats in
report/ and the comment code render a run without loading what computes it (the import
contracts in pyproject.toml hold it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from trainlint.findings import Finding, Severity, Waste
from trainlint.job import Job, Location
from trainlint.packs import RuleMeta

Outcome = Literal["job", "member", "skipped", "unsupported"]


class FileOutcome(BaseModel):
    """One candidate file's outcome; ``kind`` and ``location`` only for an unsupported one."""

    model_config = ConfigDict(extra="forbid")
    path: str
    outcome: Outcome
    reason: str
    format: str | None = None
    jobs: list[str] = []
    kind: str | None = None
    location: Location | None = None


def not_understood(files: Sequence[FileOutcome]) -> int:
    return sum(1 for f in files if f.outcome == "unsupported")


class RunError(BaseModel):
    """A problem that stopped one job from being checked; the other jobs still are."""

    job: str
    message: str


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    errors: list[RunError] = field(default_factory=list)
    rules: tuple[RuleMeta, ...] = ()
    """The rules that ran (the effective pack's), for reports that describe them (SARIF)."""
    params: dict[str, Any] = field(default_factory=dict)
    """The effective ``data.trainlint.params``: rule options as the layers set them."""
    files: list[FileOutcome] = field(default_factory=list)
    """What became of every candidate file (``trainlint show --files``)."""
    fail_on: Severity = "warning"
    """``--fail-on``: the lowest severity that sets the exit code, so reports that gate (JUnit
    failures) count the same findings as the exit code."""
    root: Path | None = None
    """The project root (absolute) every path in the report is relative to; None: unknown."""


# -- money flagged -----------------------------------------------------------------------------

OVERLAPS = "overlaps counted once"
"""How the summaries say the findings' waste was combined (``flagged``)."""


def combine(total: float | None, amounts: Sequence[float]) -> float:
    """One job's waste from its findings' amounts, each a share of the run's ``total``.

    Savings of one run compound rather than add: removing a 20% checkpoint overhead and
    moving to a GPU 30% cheaper per hour saves 1 - 0.8 · 0.7 = 44%, not 50%, and no set of
    fixes saves more than the run costs. So shares combine as 1 - Π(1 - fᵢ) of ``total``. When
    the run's total is unknown the largest amount is all that can be claimed.
    """
    positive = [a for a in amounts if a > 0]
    if not positive:
        return 0.0
    if total is None or total <= 0:
        return max(positive)
    kept = math.prod(1 - min(a / total, 1.0) for a in positive)
    return total * (1 - kept)


def flagged(jobs: Sequence[Job], findings: Iterable[Finding]) -> dict[str, Waste]:
    """Each job's flagged waste per run (``combine``, in USD and GPU-hours), by job id; a
    finding whose job is not in ``jobs`` counts on its own."""
    runs = {job.id: job.estimates.run for job in jobs}
    by_job: dict[str, list[Waste]] = {}
    for finding in findings:
        if finding.waste is not None:
            by_job.setdefault(finding.job, []).append(finding.waste)
    result = {}
    for job_id, wastes in by_job.items():
        run = runs.get(job_id)
        usd = combine(run.usd if run else None, [w.usd for w in wastes if w.usd])
        hours = [w.gpu_hours for w in wastes if w.gpu_hours]
        result[job_id] = Waste(usd=usd, gpu_hours=combine(run.gpu_hours if run else None, hours))
    return result


def flagged_total(jobs: Sequence[Job], findings: Iterable[Finding]) -> Waste:
    """Waste flagged per run over every job: each job's ``combine``d waste, summed (jobs are
    separate runs, so their waste does not overlap)."""
    per_job = flagged(jobs, findings).values()
    return Waste(usd=sum(w.usd or 0.0 for w in per_job),
                 gpu_hours=sum(w.gpu_hours or 0.0 for w in per_job))  # fmt: skip


# -- diff mode ---------------------------------------------------------------------------------

WORKTREE = "WORKTREE"
Status = Literal["added", "removed", "modified"]


class JobCost(BaseModel):
    """A job's hardware and estimated cost per run at one revision (None: unknown)."""

    model_config = ConfigDict(extra="forbid")
    gpu: str | None = None
    gpus: int | None = None
    hours: float | None = None
    gpu_hours: float | None = None
    usd: float | None = None

    @classmethod
    def of(cls, job: Job) -> JobCost:
        run, est = job.estimates.run, job.estimates
        return cls(gpu=est.gpu, gpus=est.gpus, hours=run.hours, gpu_hours=run.gpu_hours,
                   usd=run.usd)  # fmt: skip


class JobDiff(BaseModel):
    model_config = ConfigDict(extra="forbid")
    job: str = Field(description="Entry file relative to the repository root")
    status: Status
    before: JobCost | None = None
    after: JobCost | None = None
    new: int = 0
    fixed: int = 0
    worsened: int = 0


class Worsened(Finding):
    """A finding at the base and at the head (same rule, job, file and fingerprint) that got
    worse: its waste grew by 10% or more, or its severity rose (``findings.worsened``)."""

    waste_before: Waste | None = Field(description="The waste at the base")
    severity_before: Severity

    @property
    def usd_delta(self) -> float | None:
        """Dollars per run more than at the base (None: unknown on a side)."""
        before = self.waste_before.usd if self.waste_before else None
        after = self.waste.usd if self.waste else None
        return None if before is None or after is None else after - before


class DiffError(RunError):
    side: Literal["base", "head"]


class DiffReport(BaseModel):
    """What ``trainlint check --diff BASE --format json`` writes (schemas/diff.schema.json)."""

    model_config = ConfigDict(extra="forbid", title="trainlint diff")
    version: Literal[1] = 1
    base: str = Field(description="The base ref as given")
    base_commit: str = Field(
        description="What was compared: the merge base of the ref and HEAD, or the ref itself "
        "when they share no history (a shallow clone)"
    )
    head: str = Field(default=WORKTREE, description="The working tree (uncommitted changes too)")
    changed_files: list[str] = Field(default_factory=list)
    jobs: list[JobDiff] = Field(default_factory=list)
    new: list[Finding] = Field(default_factory=list, description="Count at head, not at base")
    worsened: list[Worsened] = Field(
        default_factory=list,
        description="Counted at base and at head, and worse at head (waste +10% or more, or "
        "a higher severity); most dollars more first",
    )
    fixed: list[Finding] = Field(
        default_factory=list,
        description="Counted at base, gone at head, and the fact each points at changed (or "
        "its job is gone)",
    )
    vanished: list[Finding] = Field(
        default_factory=list,
        description="Counted at base, gone at head, though the fact each points at is the "
        "same: another fact turned the rule off (a precondition changed), so not fixed",
    )
    suppressed: list[Finding] = Field(
        default_factory=list, description="Counted at base, suppressed at head (newly waived)"
    )
    unchanged: list[Finding] = Field(default_factory=list)
    errors: list[DiffError] = Field(default_factory=list)
    usd_before: float | None = Field(default=None, description="Touched jobs' cost per run")
    usd_after: float | None = None
    _head: Report | None = PrivateAttr(default=None)

    def head_report(self) -> Report:
        """The head's report of the touched jobs, every finding (suppressed ones marked): what
        code scanning should see of them (``check --diff --format sarif``)."""
        return self._head or Report()

    def head_report_counted(self) -> Report:
        """The head's report with the findings that count in diff mode, for any
        ``render(report)``: the new ones, and the worsened ones, whose message says by how much
        (``worse_message``)."""
        head = self._head or Report()
        errors = [RunError(job=e.job, message=e.message) for e in self.errors if e.side == "head"]
        worse = [Finding.model_validate(
            {**w.model_dump(exclude={"waste_before", "severity_before"}),
             "message": worse_message(w)}) for w in self.worsened]  # fmt: skip
        return Report(findings=[*self.new, *worse], jobs=list(head.jobs), errors=errors,
                      rules=head.rules, params=head.params, root=head.root)  # fmt: skip


def worse_message(finding: Worsened) -> str:
    """The finding's message with what got worse: ``… (worse than the base: $46 → $466 per
    run, +$420)`` or the severity it rose from."""
    parts = []
    if finding.severity_before != finding.severity:
        parts.append(f"{finding.severity_before} → {finding.severity}")
    before = finding.waste_before.usd if finding.waste_before else None
    delta = finding.usd_delta
    if before is not None and delta is not None:
        parts.append(f"{dollars(before)} → {dollars(before + delta)} per run, "
                     f"+{dollars(delta)}")  # fmt: skip
    elif finding.waste_before and finding.waste_before.gpu_hours is not None and finding.waste:
        hours = finding.waste.gpu_hours
        parts.append(f"{finding.waste_before.gpu_hours:,.1f} → {hours or 0:,.1f} GPU-h per run")
    return f"{finding.message} (worse than the base: {'; '.join(parts)})"


def dollars(value: float) -> str:
    """``$1,234`` from $10 on, ``$4.60`` below (the reports' way of writing money)."""
    return f"${value:,.0f}" if abs(value) >= 10 else f"${value:,.2f}"
