"""What a report shows, from job rows: planned spend and waste per group, duplicate
experiments, and each budgeted team's or project's month-to-date planned spend.

- **Current jobs**: each repository's newest scanned commit. Groups by team, project, rule,
  repository and GPU are over these; ``untagged`` holds the jobs without the tag grouped by.
- **Added or changed in a month**: a job (repository and path) whose fingerprint or cost
  differs from its previous scanned version, counted in the month of that commit. The month
  trend and the budgets are over these: what a team planned to spend that month, cost per
  run x the job's declared runs (``# trainlint: runs=N``, default 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from trainlint.scans.records import JobRecord

By = Literal["team", "project", "rule", "repo", "gpu", "month"]
BY: tuple[By, ...] = ("team", "project", "rule", "repo", "gpu", "month")


@dataclass(frozen=True)
class Row:
    key: str
    jobs: int
    usd_per_run: float
    waste_usd: float
    gpu_hours: float
    findings: int


@dataclass(frozen=True)
class Duplicate:
    fingerprint: str
    jobs: list[dict[str, str]]


@dataclass(frozen=True)
class BudgetLine:
    group: str
    key: str
    month: str
    planned_usd: float
    planned_gpu_hours: float
    budget_usd: float | None
    budget_gpu_hours: float | None

    @property
    def over(self) -> bool:
        return (self.budget_usd is not None and self.planned_usd > self.budget_usd) or (
            self.budget_gpu_hours is not None and self.planned_gpu_hours > self.budget_gpu_hours
        )


@dataclass(frozen=True)
class Summary:
    by: By
    rows: list[Row]
    duplicates: list[Duplicate]
    budgets: list[BudgetLine]
    top: list[JobRecord] = field(default_factory=list)
    waste_by_rule: list[Row] = field(default_factory=list)
    trend: list[Row] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "rows": [asdict(row) for row in self.rows],
            "duplicates": [asdict(d) for d in self.duplicates],
            "budgets": [asdict(b) | {"over": b.over} for b in self.budgets],
        }


def summarise(
    records: Sequence[JobRecord], by: By, budgets: Mapping[str, Any], month: str
) -> Summary:
    """The report of ``records`` grouped ``by``, with budgets for ``month`` (YYYY-MM)."""
    current = current_jobs(records)
    changed = changed_jobs(records)
    rows = _by_month(changed) if by == "month" else _grouped(current, by)
    return Summary(
        by=by, rows=rows, duplicates=duplicates(current),
        budgets=budget_lines(changed, budgets, month),
        top=sorted(current, key=lambda r: -r.waste_usd)[:10],
        waste_by_rule=_grouped(current, "rule"), trend=_by_month(changed),
    )  # fmt: skip


def current_jobs(records: Iterable[JobRecord]) -> list[JobRecord]:
    """The jobs of each repository's newest scanned commit."""
    newest: dict[str, tuple[Any, str]] = {}
    for record in records:
        seen = newest.get(record.repo)
        if seen is None or (record.committed_at, record.commit) > seen:
            newest[record.repo] = (record.committed_at, record.commit)
    return [r for r in records if (r.committed_at, r.commit) == newest[r.repo]]


def changed_jobs(records: Iterable[JobRecord]) -> list[JobRecord]:
    """Each job version that differs (fingerprint or cost) from the one before it."""
    last: dict[tuple[str, str], tuple[str | None, float | None]] = {}
    changed = []
    for record in sorted(records, key=lambda r: (r.committed_at, r.repo, r.path)):
        shape = (record.fingerprint, record.usd_per_run)
        if last.get((record.repo, record.path)) != shape:
            changed.append(record)
        last[(record.repo, record.path)] = shape
    return changed


def _keys(record: JobRecord, by: By) -> list[str]:
    if by in ("team", "project"):
        return [record.tag(by)]
    if by == "repo":
        return [record.repo]
    if by == "gpu":
        return [record.gpu or "unknown"]
    if by == "month":
        return [record.month]
    return sorted({f.rule for f in record.findings})


def _grouped(records: Sequence[JobRecord], by: By) -> list[Row]:
    groups: dict[str, list[JobRecord]] = {}
    for record in records:
        for key in _keys(record, by):
            groups.setdefault(key, []).append(record)
    rows = [_row(key, members, key if by == "rule" else None) for key, members in groups.items()]
    return sorted(rows, key=lambda row: (-row.waste_usd, -row.usd_per_run, row.key))


def _by_month(records: Sequence[JobRecord]) -> list[Row]:
    return sorted(_grouped(records, "month"), key=lambda row: row.key)


def _row(key: str, records: Sequence[JobRecord], rule: str | None) -> Row:
    """A group's totals; grouped by rule, only that rule's findings count."""
    found = [f for r in records for f in r.findings if rule is None or f.rule == rule]
    return Row(
        key=key, jobs=len(records),
        usd_per_run=round(sum(r.usd_per_run or 0.0 for r in records), 2),
        waste_usd=round(sum(f.waste_usd or 0.0 for f in found), 2),
        gpu_hours=round(sum(r.gpu_hours or 0.0 for r in records), 2),
        findings=len(found),
    )  # fmt: skip


def duplicates(current: Sequence[JobRecord]) -> list[Duplicate]:
    """Fingerprints shared by jobs in more than one place (repository and path)."""
    places: dict[str, dict[tuple[str, str], JobRecord]] = {}
    for record in current:
        if record.fingerprint:
            places.setdefault(record.fingerprint, {})[(record.repo, record.path)] = record
    return [
        Duplicate(fp, [_place(r) for _, r in sorted(found.items())])
        for fp, found in sorted(places.items())
        if len(found) > 1
    ]


def _place(record: JobRecord) -> dict[str, str]:
    return {"repo": record.repo, "path": record.path, "team": record.tag("team"),
            "project": record.tag("project")}  # fmt: skip


def pack_budgets(params: Mapping[str, Any]) -> dict[str, Any]:
    """The budgets of a pack's rule parameters (``monthly_budget.budgets``), empty without."""
    return params.get("monthly_budget", {}).get("budgets") or {}


def budget_lines(
    changed: Sequence[JobRecord], budgets: Mapping[str, Any], month: str
) -> list[BudgetLine]:
    """Each budgeted team or project: the month's planned spend against its budget
    (``budgets`` as the pack's ``monthly_budget.budgets``: group → key → {usd, gpu_hours})."""
    lines = []
    for group in ("team", "project"):
        for key, limit in sorted((budgets.get(group) or {}).items()):
            members = [r for r in changed if r.month == month and r.tags.get(group) == key]
            lines.append(BudgetLine(
                group=group, key=key, month=month,
                planned_usd=round(sum((r.usd_per_run or 0.0) * r.runs for r in members), 2),
                planned_gpu_hours=round(sum((r.gpu_hours or 0.0) * r.runs for r in members), 2),
                budget_usd=limit.get("usd"), budget_gpu_hours=limit.get("gpu_hours"),
            ))  # fmt: skip
    return lines
