"""``check --db``: what the org database says about the jobs being checked, for the rules
that need it (TL406 duplicate-experiment, TL407 monthly-budget): other places training the
same experiment, and the month-to-date planned spend of the job's team and project with and
without this job's change."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from trainlint.job import BudgetStatus, DuplicateJob, Job, Platform
from trainlint.scans import db
from trainlint.scans.fingerprint import fingerprint
from trainlint.scans.records import JobRecord
from trainlint.scans.summary import changed_jobs, current_jobs, pack_budgets


def attach(jobs: Sequence[Job], url: str, repo: str, params: Mapping[str, Any]) -> None:
    """Fill each job's ``platform`` from the database at ``url``; ``repo`` is the checked
    repository's name as scans record it (its own jobs are not duplicates of themselves)."""
    with db.opened(url) as engine:
        records = db.read_records(engine)
    budgets = pack_budgets(params)
    month = datetime.now(timezone.utc).strftime("%Y-%m")
    for job in jobs:
        job.platform = Platform(
            duplicates=_duplicates(job, records, repo),
            budgets=_budgets(job, records, repo, budgets, month),
        )


def _duplicates(job: Job, records: Sequence[JobRecord], repo: str) -> list[DuplicateJob]:
    mine = fingerprint(job)
    if mine is None:
        return []
    return [
        DuplicateJob(repo=r.repo, path=r.path, tags=r.tags)
        for r in current_jobs(records)
        if r.fingerprint == mine and (r.repo, r.path) != (repo, job.id)
    ]


def _budgets(
    job: Job, records: Sequence[JobRecord], repo: str, budgets: Mapping[str, Any], month: str
) -> list[BudgetStatus]:
    """The month's planned spend of each budgeted group the job is tagged with: before (the
    database, without this job's path) and after (with this job's cost x runs)."""
    changed = [r for r in changed_jobs(records) if r.month == month]
    runs = job.budget.runs or 1
    statuses = []
    for group in ("team", "project"):
        key = job.tags.get(group)
        limit = (budgets.get(group) or {}).get(key) if key else None
        if key is None or not limit:
            continue
        others = [
            r for r in changed if r.tags.get(group) == key and (r.repo, r.path) != (repo, job.id)
        ]
        before_usd = sum((r.usd_per_run or 0.0) * r.runs for r in others)
        before_hours = sum((r.gpu_hours or 0.0) * r.runs for r in others)
        run = job.estimates.run
        statuses.append(BudgetStatus(
            group=group, key=key, month=month,
            budget_usd=limit.get("usd"), budget_gpu_hours=limit.get("gpu_hours"),
            before_usd=round(before_usd, 2), before_gpu_hours=round(before_hours, 2),
            after_usd=None if run.usd is None else round(before_usd + run.usd * runs, 2),
            after_gpu_hours=(
                None if run.gpu_hours is None else round(before_hours + run.gpu_hours * runs, 2)
            ),
        ))  # fmt: skip
    return statuses
