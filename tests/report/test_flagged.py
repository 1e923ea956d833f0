"""$ flagged per run: overlapping waste of one job counted once, never above the run's cost."""

from __future__ import annotations

import pytest

from trainlint.findings import Finding, Waste
from trainlint.job import Job
from trainlint.report import github, markdown, text
from trainlint.results import Report, combine, flagged_total


def _job(job_id: str, usd: float | None, gpu_hours: float | None = None) -> Job:
    run = {"usd": usd, "gpu_hours": gpu_hours, "hours": None, "steps": 1000}
    return Job.model_validate({"id": job_id, "sources": [], "estimates": {"run": run}})


def _finding(job_id: str, rule: str, usd: float) -> Finding:
    return Finding(rule=rule, name=rule.lower(), severity="warning", message="m", file=job_id,
                   line=1, column=1, job=job_id, waste=Waste(usd=usd))  # fmt: skip


def _readme_case() -> Report:
    """The README's example as issue 21 found it: two jobs costing $268, $300 flagged."""
    jobs = [_job("llama.slurm", 263.0, 75.0), _job("gpt2.sh", 4.53, 2.6)]
    findings = [_finding("llama.slurm", r, usd) for r, usd in
                (("TL101", 96), ("TL201", 175), ("TL107", 22), ("TL302", 5.3))]  # fmt: skip
    findings += [_finding("gpt2.sh", "TL101", 1.3), _finding("gpt2.sh", "TL303", 0.9)]
    return Report(findings=findings, jobs=jobs)


def test_flagged_never_exceeds_the_runs_cost() -> None:
    report = _readme_case()
    usd = flagged_total(report.jobs, report.findings).usd
    assert usd is not None and usd < 263.0 + 4.53
    # llama: 1 - (1 - 96/263)(1 - 175/263)(1 - 22/263)(1 - 5.3/263); gpt2 likewise
    llama = 263 * (1 - (1 - 96 / 263) * (1 - 175 / 263) * (1 - 22 / 263) * (1 - 5.3 / 263))
    gpt2 = 4.53 * (1 - (1 - 1.3 / 4.53) * (1 - 0.9 / 4.53))
    assert usd == pytest.approx(llama + gpt2)


def test_summaries_say_overlaps_are_counted_once() -> None:
    report = _readme_case()
    line = text.summary(report)
    assert line.endswith("~$215 per run flagged (overlaps counted once).")
    assert "~$215 per run flagged (overlaps counted once)" in markdown.render(report)
    assert r"Flagged per run: **\~\$215** (" in github.job_summary(report)
    assert "overlaps counted once" in github.job_summary(report)


def test_markdown_rows_combine_each_jobs_waste() -> None:
    rows = markdown.render(_readme_case()).splitlines()
    row = next(r for r in rows if r.startswith("| `llama.slurm`"))
    assert row.endswith("| 4 | ~$213 |")


def test_one_finding_above_the_run_cost_is_capped() -> None:
    assert combine(100.0, [150.0, 10.0]) == pytest.approx(100.0)


def test_unknown_run_cost_counts_only_the_largest_finding() -> None:
    assert combine(None, [40.0, 30.0]) == pytest.approx(40.0)
    assert combine(None, []) == 0.0
