"""``check --statistics``: the findings that count, tallied by rule (as ``ruff --statistics``),
with what each rule's findings cost per run; as text or as JSON (``StatisticsReport``,
schemas/statistics.schema.json). Not a format of its own (the leading ``_``): it replaces the
text and JSON reports' findings when asked for.

Rows are sorted as ruff sorts them, most findings first, then by cost (highest first), then
by rule id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from trainlint.findings import SEVERITY_RANK, Finding, Severity, Waste
from trainlint.report.text import format_waste, summary
from trainlint.results import Report, RunError


class RuleStatistics(BaseModel):
    """One rule's findings that count: how many, the highest severity, the summed waste."""

    model_config = ConfigDict(extra="forbid")
    rule: str = Field(description="Stable rule id, e.g. TL201")
    name: str = Field(description="Rule slug, e.g. checkpoint-too-frequent")
    severity: Severity = Field(description="The highest severity among the rule's findings")
    count: int = Field(ge=1)
    waste: Waste = Field(
        description="Summed over the findings whose waste is known (null: none is known)"
    )


class StatisticsReport(BaseModel):
    """The document ``trainlint check --statistics --format json`` writes."""

    model_config = ConfigDict(extra="forbid", title="trainlint statistics")
    version: Literal[1] = 1
    statistics: list[RuleStatistics]
    errors: list[RunError]


def rule_statistics(findings: Iterable[Finding]) -> list[RuleStatistics]:
    """The unsuppressed findings by rule, sorted (most first, then costliest, then by id)."""
    by_rule: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.suppression is None:
            by_rule.setdefault(finding.rule, []).append(finding)
    rows = [_row(rule, found) for rule, found in by_rule.items()]
    return sorted(rows, key=lambda row: (-row.count, -(row.waste.usd or 0), row.rule))


def _row(rule: str, findings: list[Finding]) -> RuleStatistics:
    severity = max((f.severity for f in findings), key=SEVERITY_RANK.__getitem__)
    wastes = [f.waste for f in findings if f.waste is not None]
    return RuleStatistics(
        rule=rule, name=findings[0].name, severity=severity, count=len(findings),
        waste=Waste(gpu_hours=_total(w.gpu_hours for w in wastes),
                    usd=_total(w.usd for w in wastes)),
    )  # fmt: skip


def _total(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def render_text(report: Report) -> str:
    """``count  rule  slug  [severity]  (cost per run)``, one line per rule, then the summary."""
    rows = rule_statistics(report.findings)
    width = max((len(str(row.count)) for row in rows), default=1)
    slug = max((len(row.name) for row in rows), default=0)
    lines = [
        f"{row.count:>{width}}  {row.rule}  {row.name:<{slug}}  {f'[{row.severity}]':<9}"
        f"{format_waste(row.waste)}".rstrip()
        for row in rows
    ]
    lines.extend(f"error: {e.job}: {e.message}" for e in report.errors)
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    document = StatisticsReport(statistics=rule_statistics(report.findings), errors=report.errors)
    return document.model_dump_json(indent=2) + "\n"
