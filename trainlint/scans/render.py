"""A platform report as text, JSON, CSV or one self-contained HTML page (inline CSS and SVG,
no script, nothing fetched: it opens offline and in mail clients' previews)."""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Sequence

from trainlint.job import Job
from trainlint.scans.records import JobRecord
from trainlint.scans.summary import Row, Summary

COLUMNS = ("key", "jobs", "usd_per_run", "waste_usd", "gpu_hours", "findings")


def render(summary: Summary, fmt: str) -> str:
    return {"text": text, "json": as_json, "csv": as_csv, "html": page}[fmt](summary)


def as_json(summary: Summary) -> str:
    return json.dumps(summary.as_json(), indent=2) + "\n"


def as_csv(summary: Summary) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([summary.by, *COLUMNS[1:]])
    for row in summary.rows:
        writer.writerow([getattr(row, column) for column in COLUMNS])
    return out.getvalue()


def _usd(value: float | None) -> str:
    return "—" if value is None else f"${value:,.0f}"


def text(summary: Summary) -> str:
    header = (
        f"{summary.by:<28} {'jobs':>5} {'$/run':>12} {'waste $':>10} {'GPU-h':>10} {'findings':>8}"
    )
    lines = [header, "-" * len(header)]
    for row in summary.rows:
        lines.append(
            f"{row.key[:28]:<28} {row.jobs:>5} {_usd(row.usd_per_run):>12} "
            f"{_usd(row.waste_usd):>10} {row.gpu_hours:>10,.1f} {row.findings:>8}"
        )
    for line in summary.budgets:
        state = "OVER" if line.over else "within"
        lines.append(
            f"budget {line.group} {line.key} {line.month}: planned {_usd(line.planned_usd)} of "
            f"{_usd(line.budget_usd)} ({state})"
        )
    for duplicate in summary.duplicates:
        places = ", ".join(f"{j['repo']}:{j['path']} ({j['team']})" for j in duplicate.jobs)
        lines.append(f"duplicate experiment {duplicate.fingerprint}: {places}")
    return "\n".join(lines) + "\n"


def _bars(title: str, rows: Sequence[Row], fields: Sequence[tuple[str, str]]) -> str:
    """A horizontal bar chart of ``rows``: one bar per (field, colour) per row."""
    width, label, bar_h = 720, 200, 16
    top = max((getattr(r, f) for r in rows for f, _ in fields), default=0.0) or 1.0
    height = 30 + len(rows) * (bar_h * len(fields) + 10)
    parts = [f'<svg class="chart" role="img" aria-label="{html.escape(title)}" '
             f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="0" y="16" class="title">{html.escape(title)}</text>']  # fmt: skip
    y = 30
    for row in rows:
        parts.append(
            f'<text x="0" y="{y + bar_h}" class="label">{html.escape(row.key[:28])}</text>'
        )
        for field, colour in fields:
            value = getattr(row, field)
            length = max(1.0, (width - label - 90) * value / top)
            parts.append(
                f'<rect class="bar" data-value="{value}" x="{label}" y="{y}" width="{length:.1f}" '
                f'height="{bar_h - 2}" fill="{colour}"/>'
                f'<text x="{label + length + 4:.1f}" y="{y + bar_h - 4}" class="value">'
                f"{_usd(value)}</text>"
            )
            y += bar_h
        y += 10
    parts.append("</svg>")
    return "".join(parts)


def _link(job: JobRecord) -> str:
    """The job's first finding's line on GitHub when the repository name is owner/name."""
    where = job.findings[0] if job.findings else None
    name = html.escape(job.path)
    if "/" not in job.repo or where is None:
        return name
    url = f"https://github.com/{job.repo}/blob/{job.commit}/{where.file}#L{where.line}"
    return f'<a href="{html.escape(url)}">{name}:{where.line}</a>'


_STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.title{font-weight:600;font-size:13px}.label,.value{font-size:11px}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left}
td.n{text-align:right}.over{color:#b00020;font-weight:600}
"""


def page(summary: Summary) -> str:
    spend = _bars(f"Planned spend and waste per run by {summary.by}", summary.rows,
                  [("usd_per_run", "#4a78c2"), ("waste_usd", "#d9534f")])  # fmt: skip
    rules = _bars("Waste by rule", summary.waste_by_rule, [("waste_usd", "#d9534f")])
    trend = _bars("Planned spend of jobs added or changed, by month", summary.trend,
                  [("usd_per_run", "#4a78c2")])  # fmt: skip
    top = "".join(
        f"<tr><td>{html.escape(j.repo)}</td><td>{_link(j)}</td><td>{html.escape(j.tag('team'))}</td>"
        f'<td class="n">{_usd(j.usd_per_run)}</td><td class="n">{_usd(j.waste_usd)}</td></tr>'
        for j in summary.top
    )
    budgets = "".join(
        f'<tr><td>{b.group} {html.escape(b.key)}</td><td>{b.month}</td><td class="n">'
        f'{_usd(b.planned_usd)}</td><td class="n">{_usd(b.budget_usd)}</td>'
        f'<td class="{"over" if b.over else ""}">{"over" if b.over else "within"}</td></tr>'
        for b in summary.budgets
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>trainlint GPU spend by {summary.by}</title><style>{_STYLE}</style></head><body>"
        f"<h1>GPU spend and waste by {summary.by}</h1>{spend}{rules}{trend}"
        "<h2>Most wasteful jobs</h2><table><tr><th>repository</th><th>job</th><th>team</th>"
        f"<th>$/run</th><th>waste $</th></tr>{top}</table>"
        "<h2>Monthly budgets</h2><table><tr><th>group</th><th>month</th><th>planned</th>"
        f"<th>budget</th><th></th></tr>{budgets}</table></body></html>\n"
    )


def budget_notes(jobs: Sequence[Job]) -> list[str]:
    """ "This PR takes team nlp to $48,000 of its $40,000 budget for 2026-12", once per team
    or project a job of the change takes past its month's budget."""
    notes = []
    for job in jobs:
        for status in job.platform.budgets:
            if status.budget_usd is None or status.after_usd is None:
                continue
            if status.after_usd > status.budget_usd:
                notes.append(
                    f"this PR takes {status.group} {status.key} to {_usd(status.after_usd)} of "
                    f"its {_usd(status.budget_usd)} budget for {status.month} "
                    f"({job.id}: {_usd(status.after_usd - status.before_usd)})"
                )
    return sorted(set(notes))
