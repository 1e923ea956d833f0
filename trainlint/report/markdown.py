"""Markdown: a check report (``render``) and the sticky pull-request comment (``render_comment``).

The check report leads with what costs most: a row per job (cost per run, $ flagged), then
every finding as a list item, most costly first, its message on a line of its own rather than
squeezed into a table cell.

The comment's first line is the hidden ``MARKER`` by which a bot finds it again. It is kept
under ``limit`` characters (GitHub: 65,536) by dropping the collapsed details first, then
shortening the lists (``… and N more``) and the job tables; a table row, a list item, a code
fence or a ``<details>`` block is never cut in the middle.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from trainlint.findings import SEVERITY_RANK, Finding, Severity
from trainlint.fix.suggestion import suggestion
from trainlint.fix.text import read_source
from trainlint.report._links import file_link, rule_help_uri
from trainlint.report.text import format_waste
from trainlint.results import (
    OVERLAPS,
    DiffReport,
    JobCost,
    JobDiff,
    Report,
    Worsened,
    flagged,
    flagged_total,
)

MARKER = "<!-- trainlint:pr-comment -->"
LIMIT = 65536
ICONS = {"error": "🛑", "warning": "⚠️", "info": "\N{INFORMATION SOURCE}\ufe0f"}
TIMES = "\N{MULTIPLICATION SIGN}"
TITLES: dict[Severity, str] = {"error": "Errors", "warning": "Warnings", "info": "Info"}
MAX_MESSAGE = 600  # characters of one finding's message in a list item or table cell
CHART_JOBS = 8


def render(report: Report, *, link_base: str | None = None) -> str:
    """A check report: a summary, one table row per job (its cost per run and what was
    flagged), then every finding as a list item, most costly first ($ per run, then
    severity), its message on a line of its own; suppressed findings collapsed below.

    ``link_base`` (``https://github.com/OWNER/REPO/blob/SHA/``, ``_links.blob_base``) makes
    the file:line links absolute, for a report read in a pull request; else they are
    relative to the repository root.
    """
    counted = sorted((f for f in report.findings if f.suppression is None), key=_cost_order)
    lines = ["## trainlint", "", _check_summary(report, counted), ""]
    lines += _jobs_table(report, counted)
    if counted:
        help_uris = {rule.id: rule_help_uri(rule) for rule in report.rules}
        lines += ["### Findings, most costly first", ""]
        lines += [_finding_entry(f, link_base, help_uris.get(f.rule)) + _suggested(f, report.root)
                  for f in counted]  # fmt: skip
        lines.append("")
    suppressed = [f for f in report.findings if f.suppression is not None]
    if suppressed:
        items = [f"- {_item(f, link_base)} — {_suppression(f)}" for f in suppressed]
        lines += _details(f"{len(suppressed)} suppressed", items)
    lines += [f"- **error** `{_code(e.job)}`: {_cell(e.message)}" for e in report.errors]
    return "\n".join(lines).rstrip() + "\n"


def _suggested(finding: Finding, root: Path | None) -> str:
    """The finding's fix as a GitHub ``suggestion`` block in its list item: the whole lines
    it changes, after the fix, read from the file under ``root`` (the current directory when
    None); "" when it has none or its lines cannot be read. A reviewer who copies it onto the
    lines (or a review comment there) gets what ``check --fix`` writes."""
    if finding.fix is None:
        return ""
    path = finding.fix.edits[0].path if finding.fix.edits else finding.file
    source = read_source((root or Path.cwd()) / path, path)
    shown = suggestion(finding.fix, source) if source is not None else None
    if shown is None:
        return ""
    how = "`trainlint check --fix`" if finding.fix.safe else "`--fix --unsafe-fixes`, unsafe"
    last = f"-{shown.last}" if shown.last != shown.first else ""
    span = f"line{'s' if last else ''} {shown.first}{last}"
    fence = "```" + "`" * max((len(run) - 2 for run in re.findall(r"`{3,}", shown.text)), default=0)
    body = [f"  {line}" if line else "" for line in shown.text.split("\n")] if shown.text else []
    head = f"  {_cell(finding.fix.title)} ({how}), {span} of `{_code(path)}`:"
    return "\n".join(["", "", head, "", f"  {fence}suggestion", *body, f"  {fence}"])


def _cost_order(finding: Finding) -> tuple[float, int, str, int, int, str]:
    """Most costly first: $ per run, then severity, then location."""
    usd = finding.waste.usd if finding.waste and finding.waste.usd is not None else 0.0
    return (-usd, -SEVERITY_RANK[finding.severity], finding.file, finding.line, finding.column,
            finding.rule)  # fmt: skip


def _check_summary(report: Report, counted: Sequence[Finding]) -> str:
    jobs = _plural(len(report.jobs), "job")
    if not counted:
        return f"No findings in {jobs}."
    counts = Counter(f.severity for f in counted)
    parts = ", ".join(f"{counts[s]} {s}" for s in TITLES if counts[s])
    usd = flagged_total(report.jobs, counted).usd
    cost = f" · ~{_usd(usd)} per run flagged ({OVERLAPS})" if usd else ""
    return f"**{_plural(len(counted), 'finding')}** ({parts}) in {jobs}{cost}."


def _jobs_table(report: Report, counted: Sequence[Finding]) -> list[str]:
    """One row per job, the one with the most $ flagged first."""
    if not report.jobs:
        return []
    by_job = {job.id: [f for f in counted if f.job == job.id] for job in report.jobs}
    waste = flagged(report.jobs, counted)

    def _flagged(job_id: str) -> float:
        return waste[job_id].usd or 0.0 if job_id in waste else 0.0

    jobs = sorted(report.jobs, key=lambda j: (-_flagged(j.id), -len(by_job[j.id]), j.id))
    rows = ["| Job | GPUs | Run | Cost per run | Findings | Flagged per run |",
            "|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for job in jobs:
        run, usd = job.estimates.run, _flagged(job.id)
        hours = f"~{_hours(run.hours)}" if run.hours is not None else "?"
        cost = f"~{_usd(run.usd)}" if run.usd is not None else "?"
        rows.append(f"| `{_code(job.id)}` | {_gpus(job.estimates.gpu, job.estimates.gpus)} | "
                    f"{hours} | {cost} | {len(by_job[job.id])} | "
                    f"{f'~{_usd(usd)}' if usd else '—'} |")  # fmt: skip
    return [*rows, ""]


def _finding_entry(finding: Finding, link_base: str | None, help_uri: str | None) -> str:
    """``- ⚠️ **~$175 per run** · TL201 checkpoint-too-frequent · file:line`` and, on the
    next line (a hard break), the message."""
    where = f"{finding.file}:{finding.line}"
    place = f"[`{_code(where)}`]({file_link(finding.file, finding.line, link_base)})"
    rule = f"[`{_code(finding.name)}`]({help_uri})" if help_uri else f"`{_code(finding.name)}`"
    head = []
    if finding.waste and (finding.waste.usd or finding.waste.gpu_hours):
        head.append(f"**{format_waste(finding.waste).strip(' ()')}**")
    head += [f"**{finding.rule}** {rule}", place]
    job = f" (job `{_code(finding.job)}`)" if finding.job != finding.file else ""
    icon = ICONS[finding.severity]
    return f"- {icon} {' · '.join(head)}{job}\\\n  {_cell(finding.message)}"


# -- the pull-request comment ------------------------------------------------------------------


@dataclass(frozen=True)
class _Budget:
    """How much of the comment fits: None = everything."""

    details: bool = True
    chart: bool = True
    new: int | None = None
    worsened: int | None = None
    fixed: int | None = None
    suppressed: int | None = None
    jobs: int | None = None


def render_comment(diff: DiffReport, *, limit: int = LIMIT, link_base: str | None = None) -> str:
    """The sticky PR comment for ``diff``, at most ``limit`` characters.

    ``link_base`` (``https://github.com/OWNER/REPO/blob/SHA/``) makes the file:line links
    absolute; without it they are relative (``path#L12``).
    """

    cache: dict[int, str] = {}
    at_head = {id(f) for f in diff.new}  # fixes edit the head's text; a new finding's own item

    def item(finding: Finding) -> str:  # each list item is formatted once, however many tries
        if id(finding) not in cache:
            fix = _suggested(finding, None) if id(finding) in at_head else ""
            cache[id(finding)] = _item(finding, link_base) + fix
        return cache[id(finding)]

    def build(budget: _Budget) -> str:
        return _comment(diff, budget, item)

    budget = _Budget()
    body = build(budget)
    for flag in ("details", "chart"):  # drop the collapsed details first, then the chart
        if len(body) <= limit:
            return body
        budget = replace(budget, **{flag: False})
        body = build(budget)
    sizes = {"fixed": len(diff.fixed), "suppressed": len(diff.suppressed),
             "worsened": len(diff.worsened), "new": len(diff.new),
             "jobs": len(diff.jobs)}  # fmt: skip
    for field, size in sizes.items():  # then shorten the lists, least important first
        if len(body) <= limit:
            return body
        budget = _shortened(budget, field, size, lambda b: len(build(b)) <= limit)
        body = build(budget)
    return body if len(body) <= limit else _cut(body, limit)


def _shortened(budget: _Budget, field: str, size: int, fits: Callable[[_Budget], bool]) -> _Budget:
    """``budget`` with the most items of ``field`` that still fit."""
    keep = _largest(lambda n: fits(replace(budget, **{field: n})), size)  # type: ignore[arg-type]
    return replace(budget, **{field: keep})  # type: ignore[arg-type]


def _largest(fits: Callable[[int], bool], high: int) -> int:
    """The largest n in [0, high] with fits(n) (fits is monotone), else 0."""
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _cut(body: str, limit: int) -> str:
    """Last resort for a tiny limit: whole lines up to the first blank line that fits."""
    kept: list[str] = []
    for line in body.split("\n"):
        if len("\n".join([*kept, line])) + 1 > limit or line.startswith(("|", "```", "<")):
            break
        kept.append(line)
    return "\n".join(kept).rstrip() + "\n"


def _comment(diff: DiffReport, budget: _Budget, item: Callable[[Finding], str]) -> str:
    lines = [MARKER, f"### trainlint: {_headline(diff)}", "", _diff_summary(diff), ""]
    changed = [j for j in diff.jobs if _changed(j)]
    shown = changed if budget.jobs is None else changed[: budget.jobs]
    for job in shown:
        lines += _job_table(job)
    lines += _more(len(changed) - len(shown), "job", blank=True)
    if budget.chart:
        lines += _chart(changed)
    lines += _by_severity(diff.new, budget.new, item)
    if diff.worsened:
        items = _items(diff.worsened, budget.worsened, item, _worse)
        lines += [f"#### 📈 Worsened ({len(diff.worsened)})", "", *items, ""]
    if diff.suppressed:
        items = _items(diff.suppressed, budget.suppressed, item, _suppression)
        lines += [f"#### Newly suppressed ({len(diff.suppressed)})", "", *items, ""]
    if diff.fixed:
        items = _items(diff.fixed, budget.fixed, item)
        lines += _details(f"✅ Fixed ({len(diff.fixed)})", items)
    if budget.details:
        lines += _detail_sections(diff, item)
    else:
        lines += ["_Some details were left out to fit the comment size limit._", ""]
    for error in diff.errors:
        lines.append(f"- **error** at {error.side}, `{_code(error.job)}`: {_cell(error.message)}")
    base = f"`{_code(diff.base)}` at `{diff.base_commit[:7]}`"
    note = f"<sub>Compared with {base}; estimates per run.</sub>"
    lines += [*([""] if lines[-1] else []), note]
    return "\n".join(lines).rstrip() + "\n"


def _headline(diff: DiffReport) -> str:
    before, after = diff.usd_before, diff.usd_after
    if before is None or after is None:
        return "cost per run unknown" if diff.jobs else "no job changed"
    if abs(after - before) < 0.005:
        return "no cost change"
    return f"{_delta(before, after)} per run{_pct(before, after)}"


def diff_line(diff: DiffReport) -> str:
    """``check --diff``'s summary: "2 new, 0 fixed in 1 touched job; cost per run $92 → …"."""
    jobs = _plural(len(diff.jobs), "touched job")
    worse = f"{len(diff.worsened)} worsened, " if diff.worsened else ""
    line = f"{len(diff.new)} new, {worse}{len(diff.fixed)} fixed in {jobs}"
    before, after = diff.usd_before, diff.usd_after
    if before is not None and after is not None:
        line += f"; cost per run {_usd(before)} → {_usd(after)}{_pct(before, after)}"
    return line + "."


def _diff_summary(diff: DiffReport) -> str:
    counts = Counter(f.severity for f in diff.new)
    detail = ", ".join(f"{counts[s]} {s}" for s in TITLES if counts[s])
    new = f"**{len(diff.new)} new** finding{'' if len(diff.new) == 1 else 's'}"
    new += f" ({detail})" if detail else ""
    worse = [f"**{len(diff.worsened)} worsened**"] if diff.worsened else []
    parts = [new, *worse, f"**{len(diff.fixed)} fixed**",
             _plural(len(diff.jobs), "job") + " touched"]  # fmt: skip
    if diff.usd_before is not None and diff.usd_after is not None:
        parts.append(f"{_usd(diff.usd_before)} → {_usd(diff.usd_after)} per run")
    return " · ".join(parts)


def _changed(job: JobDiff) -> bool:
    counts = job.new + job.worsened + job.fixed
    return job.status != "modified" or counts > 0 or job.before != job.after


def _job_table(job: JobDiff) -> list[str]:
    before, after = job.before, job.after

    def row(label: str, show: Callable[[JobCost], str], extra: str = "") -> str:
        old = show(before) if before else "—"
        new = show(after) if after else "—"
        return f"| {label} | {old} | {new}{extra} |"

    usd = ""
    if before and after and before.usd is not None and after.usd is not None:
        usd = f" ({_delta(before.usd, after.usd)}{_pct(before.usd, after.usd, ', ')})"
    return [
        f"#### `{_code(job.job)}` ({job.status})",
        "",
        "| | before | after |",
        "|---|---:|---:|",
        row("GPUs", lambda c: _gpus(c.gpu, c.gpus)),
        row("Hours", lambda c: _hours(c.hours)),
        row("GPU-hours", lambda c: _number(c.gpu_hours)),
        row("$ per run", lambda c: _usd(c.usd), usd),
        "",
    ]


def _chart(jobs: Sequence[JobDiff]) -> list[str]:
    """Bars of $ per run before and after, per job whose cost changed (mermaid xychart)."""
    known = [j for j in jobs if _usd_pair(j) is not None and _usd_pair(j) != (0.0, 0.0)]
    known = sorted(known, key=lambda j: -abs(_gap(j)))[:CHART_JOBS]
    if not known or all(_gap(j) == 0 for j in known):
        return []
    labels: list[str] = []
    values: list[float] = []
    top = 0.0
    for job in known:
        name = _short(job.job)
        pair = _usd_pair(job) or (0.0, 0.0)
        labels += [f'"{name} before"', f'"{name} after"']
        values += list(pair)
        top = max(top, *pair)
    digits = 0 if top >= 100 else 2  # $4.53 → $3.25 must not be drawn as 5 → 3
    axis = f'    y-axis "USD per run" 0 --> {_axis_top(top):g}'  # from zero: bars compare
    return ["```mermaid", "xychart-beta", '    title "Estimated $ per run, before and after"',
            f"    x-axis [{', '.join(labels)}]", axis,
            f"    bar [{', '.join(f'{v:.{digits}f}' for v in values)}]", "```", ""]  # fmt: skip


def _axis_top(value: float) -> float:
    """The chart's y-axis end: ``value`` rounded up to 1, 2, 2.5 or 5 times 10^k. Mermaid would
    otherwise start the axis near the smallest bar, so a +64% change looks tenfold."""
    if value <= 0:
        return 1.0
    scale = 10.0 ** math.floor(math.log10(value))
    return next(step * scale for step in (1, 2, 2.5, 5, 10) if step * scale >= value)


def _usd_pair(job: JobDiff) -> tuple[float, float] | None:
    sides = [job.before, job.after]
    if any(s is not None and s.usd is None for s in sides):
        return None
    before = job.before.usd or 0.0 if job.before else 0.0
    return before, job.after.usd or 0.0 if job.after else 0.0


def _gap(job: JobDiff) -> float:
    pair = _usd_pair(job) or (0.0, 0.0)
    return pair[1] - pair[0]


def _short(job: str) -> str:
    parts = job.split("/")
    name = "/".join(parts[-2:]) if len(parts) > 1 else job
    return name.replace('"', "'")[:40]


def _by_severity(
    findings: Sequence[Finding], keep: int | None, item: Callable[[Finding], str]
) -> list[str]:
    ordered = sorted(findings, key=lambda f: (-SEVERITY_RANK[f.severity], -_dollars(f)))
    shown = ordered if keep is None else ordered[:keep]
    lines: list[str] = []
    for severity in TITLES:
        group = [f for f in shown if f.severity == severity]
        total = sum(f.severity == severity for f in findings)
        if not total:
            continue
        lines += [f"#### {ICONS[severity]} New {TITLES[severity].lower()} ({total})", ""]
        lines += [f"- {item(f)}" for f in group]
        lines += [*_more(total - len(group), "finding"), ""]
    return lines


def _items(
    findings: Sequence[Finding], keep: int | None, item: Callable[[Finding], str],
    extra: Callable[[Finding], str] | None = None,
) -> list[str]:  # fmt: skip
    shown = findings if keep is None else findings[:keep]
    items = [f"- {item(f)}" + (f" — {extra(f)}" if extra else "") for f in shown]
    return items + _more(len(findings) - len(shown), "finding")


def _dollars(finding: Finding) -> float:
    return finding.waste.usd if finding.waste and finding.waste.usd is not None else 0.0


def _worse(finding: Finding) -> str:
    """What got worse, Δ$ first: "**+$420 per run** (was $46)", or the severity it rose from."""
    if not isinstance(finding, Worsened):
        return ""
    parts = []
    delta, before = finding.usd_delta, finding.waste_before
    if delta is not None and before is not None and before.usd is not None:
        parts.append(f"**+{_usd(delta)} per run** (was {_usd(before.usd)})")
    if finding.severity_before != finding.severity:
        parts.append(f"{finding.severity_before} → {finding.severity}")
    return "; ".join(parts) or "worse than at the base"


def _detail_sections(diff: DiffReport, item: Callable[[Finding], str]) -> list[str]:
    lines: list[str] = []
    if diff.vanished:
        items = [f"- {item(f)}" for f in diff.vanished]
        summary = f"No longer reported, though the fact is unchanged ({len(diff.vanished)})"
        note = "_Another change turned these rules off; the facts they point at are the same._"
        lines += _details(summary, [note, "", *items])
    if diff.unchanged:
        items = [f"- {item(f)}" for f in diff.unchanged]
        lines += _details(f"Unchanged findings in the touched jobs ({len(diff.unchanged)})", items)
    if diff.changed_files:
        files = [f"- `{_code(name)}`" for name in diff.changed_files]
        lines += _details(f"Changed files ({len(diff.changed_files)})", files)
    return lines


def _details(summary: str, items: Iterable[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *items, "", "</details>", ""]


def _item(finding: Finding, link_base: str | None) -> str:
    where = f"{finding.file}:{finding.line}"
    place = f"[`{_code(where)}`]({_link(finding, link_base)})"
    cost = format_waste(finding.waste)
    return f"{place} **{finding.rule}** `{finding.name}`: {_cell(finding.message)}{cost}"


def _link(finding: Finding, link_base: str | None) -> str:
    return file_link(finding.file, finding.line, link_base)


def _suppression(finding: Finding) -> str:
    s = finding.suppression
    if s is None:
        return ""
    who = f", approved by {_cell(s.approved_by)}" if s.approved_by else ""
    until = f", until {s.expires}" if s.expires else ""
    return f"{s.kind}: {_cell(s.reason or 'no reason given')}{who}{until}"


def _more(count: int, what: str, *, blank: bool = False) -> list[str]:
    if count <= 0:
        return []
    return [f"- … and {count} more {what}{'' if count == 1 else 's'}", *([""] if blank else [])]


# -- formatting --------------------------------------------------------------------------------


def _cell(text: str) -> str:
    """One line, safe in a table cell or list item: no pipes, HTML or @-mentions."""
    flat = " ".join(text.split())
    if len(flat) > MAX_MESSAGE:
        flat = flat[: MAX_MESSAGE - 1].rstrip() + "…"
    return (flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("@", "&#64;"))  # fmt: skip


def _code(text: str) -> str:
    return text.replace("`", "'").replace("\n", " ")


def _usd(value: float | None) -> str:
    if value is None:
        return "?"
    return f"${value:,.0f}" if abs(value) >= 10 else f"${value:,.2f}"


def _delta(before: float, after: float) -> str:
    change = after - before
    return ("+" if change >= 0 else "-") + _usd(abs(change))


def _pct(before: float, after: float, lead: str = " ") -> str:
    if before <= 0:
        return ""
    body = f"{(after - before) / before * 100:+.0f}%"
    return f"{lead}({body})" if lead == " " else f"{lead}{body}"


def _hours(value: float | None) -> str:
    return "?" if value is None else f"{value:,.1f} h" if value < 100 else f"{value:,.0f} h"


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _gpus(gpu: str | None, gpus: int | None) -> str:
    if gpu is None and gpus is None:
        return "GPUs unknown"
    return f"{gpus if gpus is not None else '?'}{TIMES} {gpu or 'unknown GPU'}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
