"""ruff-like text: one line per finding, ``path:line:col: TL201 [warning] message (cost)``.

Suppressed findings are counted in the summary, not listed (the JSON report lists them).
"""

from __future__ import annotations

from collections import Counter

from trainlint.findings import Finding, Waste
from trainlint.results import OVERLAPS, Report, flagged_total, not_understood


def render(report: Report) -> str:
    lines = [format_finding(f) for f in report.findings if f.suppression is None]
    lines.extend(f"error: {e.job}: {e.message}" for e in report.errors)
    lines.append(summary(report))
    hint = fixable(report.findings)
    return "\n".join([*lines, *([hint] if hint else [])]) + "\n"


def fixable(findings: list[Finding]) -> str:
    """ruff's closing hint: how many of the findings that count ``--fix`` would fix, and how
    many more ``--unsafe-fixes`` would; "" when none."""
    fixes = [f.fix for f in findings if f.fix is not None and f.suppression is None]
    safe = sum(1 for fix in fixes if fix.safe)
    unsafe = len(fixes) - safe
    if not fixes:
        return ""
    more = f" ({unsafe} more with --unsafe-fixes)" if unsafe and safe else ""
    if not safe:
        return f"[*] {unsafe} fixable with --fix --unsafe-fixes."
    return f"[*] {safe} fixable with --fix{more}."


def format_finding(finding: Finding) -> str:
    cost = format_waste(finding.waste)
    where = f"{finding.file}:{finding.line}:{finding.column}"
    message = " ".join(finding.message.split())  # one line per finding, whatever the rule wrote
    return f"{where}: {finding.rule} [{finding.severity}] {message}{cost}"


def format_waste(waste: Waste | None) -> str:
    if waste is None or (waste.gpu_hours is None and waste.usd is None):
        return ""
    parts = []
    if waste.gpu_hours is not None and round(waste.gpu_hours, 1) > 0:
        parts.append(f"~{_amount(waste.gpu_hours)} GPU-h")
    if waste.usd is not None and round(waste.usd, 1) > 0:
        parts.append(f"~${_amount(waste.usd)}")
    return f" ({', '.join(parts)} per run)" if parts else ""


def _amount(value: float) -> str:
    return f"{value:,.1f}" if abs(value) < 10 else f"{value:,.0f}"


def summary(report: Report) -> str:
    jobs = _plural(len(report.jobs), "job")
    unread = not_understood(report.files)
    if unread:
        jobs += f"; {_plural(unread, 'file')} not understood"
    counted = [f for f in report.findings if f.suppression is None]
    hidden = len(report.findings) - len(counted)
    suppressed = f" ({hidden} suppressed)" if hidden else ""
    if not counted:
        return f"No findings in {jobs}{suppressed}."
    counts = Counter(f.severity for f in counted)
    by_severity = ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "info") if counts[s])
    usd = flagged_total(report.jobs, counted).usd
    cost = f"; ~${_amount(usd)} per run flagged ({OVERLAPS})" if usd else ""
    found = _plural(len(counted), "finding")
    return f"Found {found} ({by_severity}) in {jobs}{cost}{suppressed}."


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
