"""GitHub Actions workflow commands: one annotation per finding, plus a job summary.

``::error file=F,line=L,col=C,endLine=L,endColumn=C,title=TL201 checkpoint-too-frequent::msg``
(``::warning`` for warnings, ``::notice`` for info). A finding has one position, so ``endLine``
is its line and ``endColumn`` its column: GitHub marks the line and the column where the fact
was set. Escaping is the one @actions/toolkit's ``command.ts`` applies: data (the message)
``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``; property values additionally ``:`` → ``%3A`` and
``,`` → ``%2C``.

GitHub shows at most 10 error, 10 warning and 10 notice annotations per step and 50 per job
(actions/toolkit docs/problem-matchers.md, "Limitations"); extra ones are dropped silently. So
the most costly findings (waste in $ per run, then location) of each severity are annotated,
the rest are folded into one ``::notice`` and listed as plain lines in a collapsed log group.
Suppressed findings are not annotated. Every finding, annotated or not, is in the job summary
(:func:`job_summary`), which the CLI appends to ``$GITHUB_STEP_SUMMARY``: rendering stays pure.

File names (git allows a newline in one), messages and rule names come from the repository
and its packs, and the runner reads every log line for commands (actions/runner
``ActionCommand``): a line that starts with ``::`` once leading whitespace is trimmed, or that
holds ``##[`` anywhere (the older syntax). So nothing from a finding reaches the log unescaped:
in commands through the toolkit's escaping, in the plain lines (the folded findings, the
summary) through :func:`plain`, which also keeps them off both command syntaxes. The job
summary is Markdown with every such text escaped and on one table row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from trainlint.findings import Finding, Severity
from trainlint.report.text import _amount, _plural, format_finding, format_waste, summary
from trainlint.results import OVERLAPS, Report, flagged_total

PER_STEP = 10
"""Annotations of one kind (error, warning, notice) GitHub shows per step."""
SUMMARY_LIMIT = 1024 * 1024
"""Bytes GitHub accepts in one step's ``$GITHUB_STEP_SUMMARY`` (larger uploads are aborted)."""

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


def escape_data(value: str) -> str:
    """Escape a workflow command's message (``escapeData`` in @actions/core)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a workflow command's property value (``escapeProperty`` in @actions/core)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int) -> str:
    """``::name k=v,k=v::message`` with the toolkit's escaping; empty properties are dropped."""
    props = ",".join(
        f"{key}={escape_property(str(value))}" for key, value in properties.items() if value != ""
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(finding: Finding) -> str:
    return command(
        COMMAND[finding.severity],
        finding.message + format_waste(finding.waste),
        file=finding.file, line=finding.line, col=finding.column,
        endLine=finding.line, endColumn=finding.column,
        title=f"{finding.rule} {finding.name}",
    )  # fmt: skip


def cost_order(findings: Iterable[Finding]) -> list[Finding]:
    """Most costly first ($ per run, then GPU-hours), then by location."""

    def key(f: Finding) -> tuple[float, float, str, int, int, str]:
        usd = f.waste.usd if f.waste and f.waste.usd is not None else 0.0
        hours = f.waste.gpu_hours if f.waste and f.waste.gpu_hours is not None else 0.0
        return -usd, -hours, f.file, f.line, f.column, f.rule

    return sorted(findings, key=key)


def select(report: Report) -> tuple[list[Finding], list[Finding]]:
    """(annotated, folded): each severity's most costly findings within GitHub's per-step
    limits; run errors use error annotations first, and one notice is kept for the fold line."""
    counted = cost_order(f for f in report.findings if f.suppression is None)
    budget = {
        "error": max(PER_STEP - len(report.errors), 0),
        "warning": PER_STEP,
        "info": PER_STEP,
    }
    by_severity = {s: [f for f in counted if f.severity == s] for s in SEVERITIES}
    if any(len(by_severity[s]) > budget[s] for s in SEVERITIES):
        budget["info"] -= 1  # the "N more findings" notice takes one notice slot
    shown = {id(f) for s in SEVERITIES for f in by_severity[s][: budget[s]]}
    annotated = [f for f in counted if id(f) in shown]
    folded = [f for f in counted if id(f) not in shown]
    return annotated, folded


def render(report: Report) -> str:
    lines = [command("error", f"{e.job}: {e.message}") for e in report.errors]
    annotated, folded = select(report)
    lines.extend(annotation(f) for f in annotated)
    if folded:
        more = f"{_plural(len(folded), 'more finding')} not annotated: see the job summary"
        lines.append(command("notice", more, title="trainlint"))
        lines.append(f"::group::{escape_data(more)}")
        lines.extend(plain(format_finding(f)) for f in folded)
        lines.append("::endgroup::")
    lines.append(plain(summary(report)))
    return "\n".join(lines) + "\n"


def plain(line: str) -> str:
    """One log line that no runner reads as a workflow command, whatever a file name holds:
    CR and LF escaped as in a command's data (one finding, one line), ``##[`` broken up, and a
    ``::`` that would start the line once whitespace is trimmed written ``%3A:``."""
    text = escape_data(line).replace("##[", "#%23[")
    trimmed = text.lstrip()
    if trimmed.startswith("::"):
        text = text[: len(text) - len(trimmed)] + "%3A" + trimmed[1:]
    return text


def job_summary(report: Report, *, limit: int = SUMMARY_LIMIT) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: counts by severity, $ flagged per run and a table
    of every finding that counts, most costly first (suppressed ones collapsed below); the least
    costly rows are left out when the whole would pass ``limit`` bytes."""
    counted = cost_order(f for f in report.findings if f.suppression is None)
    suppressed = [f for f in report.findings if f.suppression is not None]
    head = ["## trainlint", "", _text(summary(report)), ""]
    if counted:
        counts = Counter(f.severity for f in counted)
        waste = flagged_total(report.jobs, counted)
        head += ["| Severity | Findings |", "|---|---:|"]
        head += [f"| {s} | {counts[s]} |" for s in SEVERITIES]
        usd, hours = (
            _text(f"~${_amount(waste.usd or 0)}"),
            _text(f"~{_amount(waste.gpu_hours or 0)}"),
        )
        head += ["", f"Flagged per run: **{usd}** ({hours} GPU-h; {OVERLAPS}).", ""]
    if report.errors:
        head += ["**Errors** (these jobs were not checked):", ""]
        head += [f"- {_code(e.job)}: {_text(e.message)}" for e in report.errors]
        head.append("")
    table = ["| Location | Rule | Severity | Message | Cost per run |", "|---|---|---|---|---:|"]
    rows = [_row(f) for f in counted]
    tail = []
    if suppressed:
        title = _plural(len(suppressed), "suppressed finding")
        tail += ["", f"<details><summary>{title}</summary>", ""]
        tail += ["| Location | Rule | Suppression | Reason |", "|---|---|---|---|"]
        tail += [
            f"| {_code(_where(f))} | {_text(f'{f.rule} {f.name}')} | {f.suppression.kind} | "
            f"{_text(f.suppression.reason or '')} |"
            for f in suppressed
            if f.suppression is not None
        ]
        tail += ["", "</details>"]
    return _fit(head, table if rows else [], rows, tail, limit)


def _fit(head: list[str], table: list[str], rows: list[str], tail: list[str], limit: int) -> str:
    """Join the parts, keeping as many rows (most costly first) as fit in ``limit`` bytes."""

    def size(lines: list[str]) -> int:
        return sum(len(line.encode()) + 1 for line in lines)

    whole = head + table + rows + tail
    if size(whole) <= limit:
        return "\n".join(whole) + "\n"
    note = [
        "",
        f"_Less costly findings left out to fit GitHub's {limit // 1024} KiB limit: see the log._",
    ]
    room = limit - size(head + table + note)
    if size(tail) <= room // 2:
        room -= size(tail)
    else:
        tail = []
    kept = []
    for row in rows:
        room -= len(row.encode()) + 1
        if room < 0:
            break
        kept.append(row)
    return "\n".join(head + (table + kept if kept else []) + note + tail) + "\n"


def _row(f: Finding) -> str:
    cost = format_waste(f.waste).strip().removeprefix("(").removesuffix(" per run)")
    return (
        f"| {_code(_where(f))} | {_text(f'{f.rule} {f.name}')} | {f.severity} | "
        f"{_text(f.message)} | {_text(cost)} |"
    )


def _where(f: Finding) -> str:
    return f"{f.file}:{f.line}"


_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|$&~"})


def _text(text: str) -> str:
    """Plain text in Markdown: one line; no HTML, emphasis, links, math or table breaks."""
    return " ".join(text.split()).translate(_MARKDOWN)


def _code(text: str) -> str:
    """A code span on one line (backticks and table pipes replaced: GFM splits cells first)."""
    return "`" + " ".join(text.split()).replace("`", "'").replace("|", "\\|") + "`"
