"""A report as the editor shows it: diagnostics, hovers and code actions (pure functions).

Lines and columns: trainlint's are 1-based, LSP's 0-based; both count characters here as
trainlint does (code points), and ``app`` converts to the client's units (UTF-16 by default).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types

from trainlint.assemble import split_pointer
from trainlint.estimate_view import view
from trainlint.findings import Finding
from trainlint.job import Job, Location
from trainlint.packs import RuleMeta
from trainlint.report._links import rule_help_uri
from trainlint.rule_docs import render_rule
from trainlint.server.session import Session

SOURCE = "trainlint"
SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
REASON_PLACEHOLDER = "<why this is acceptable here>"
"""The reason a suppress action writes: the user replaces it (an ignore says why)."""
NO_COMMENTS = frozenset({".json"})
"""Formats without comments: their findings are waived in the repo config, not inline."""
_TOKEN_END = re.compile(r"\S*")
_INLINE_IGNORE = re.compile(r"#\s*trainlint:\s*ignore\[(?P<codes>[^\]]*)\]")
ESTIMATE_LINES = ("/launcher/", "/resources/gpu", "/resources/world_size", "/resources/nodes")
"""Pointers whose line is the launch line or the GPU line: hover there shows the estimates."""
ESTIMATE_ROWS = (
    ("Memory per GPU", "total", "memory per GPU"),
    ("Memory per GPU", "utilization", "of GPU memory"),
    ("Step", "step time", "step time"),
    ("Run", "time", "run time"),
    ("Run", "GPU-hours", "GPU-hours per run"),
    ("Run", "cost", "$ per run"),
)
"""(section, label) of ``estimate_view`` rows a launch hover shows, and its own label."""


# -- diagnostics ------------------------------------------------------------------------------


def diagnostics(
    findings: Iterable[Finding], text: str, rules: Sequence[RuleMeta]
) -> list[types.Diagnostic]:
    """One diagnostic per finding, over the token its location starts."""
    by_id = {rule.id: rule for rule in rules}
    lines = text.splitlines()
    return [_diagnostic(f, lines, by_id.get(f.rule)) for f in findings]


def _diagnostic(finding: Finding, lines: Sequence[str], rule: RuleMeta | None) -> types.Diagnostic:
    href = rule_help_uri(rule) if rule is not None else None  # as SARIF's helpUri
    return types.Diagnostic(
        range=token_range(lines, finding.line, finding.column),
        message=finding.message,
        severity=SEVERITIES[finding.severity],
        code=finding.rule,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data={"fingerprint": finding.fingerprint, "name": finding.name},
    )


def token_range(lines: Sequence[str], line: int, column: int) -> types.Range:
    """From the 1-based ``line``/``column`` to the end of the word there (the key or flag),
    or to the end of the line when the column starts blank space."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    start = min(column - 1, len(text))
    word = _TOKEN_END.match(text, start)
    end = start + len(word.group()) if word is not None else start
    end = end if end > start else len(text)
    return types.Range(types.Position(line - 1, start), types.Position(line - 1, end))


# -- hover ------------------------------------------------------------------------------------


def hover(session: Session, path: Path, line: int, character: int) -> str | None:
    """Markdown for the 1-based ``line`` at 0-based ``character``: the findings there with
    their rule's docs, the facts the line states (normalized value, where it came from) and,
    on a launch or GPU line, the job's memory per GPU, step time and cost per run."""
    report = session.report
    if report is None:
        return None
    parts = [_finding_hover(f, report.rules, report.params) for f in session.findings(path)
             if f.line == line]  # fmt: skip
    facts = _under_cursor(session.facts_at(path, line), character)
    parts += [_fact_hover(job, pointer, where) for job, pointer, where in facts]
    jobs = {job.id: job for job, pointer, _ in session.facts_at(path, line)
            if pointer.startswith(ESTIMATE_LINES)}  # fmt: skip
    parts += [_estimate_hover(job) for job in jobs.values()]
    return "\n\n---\n\n".join(parts) if parts else None


def _finding_hover(finding: Finding, rules: Sequence[RuleMeta], params: dict[str, Any]) -> str:
    rule = next((r for r in rules if r.id == finding.rule), None)
    head = f"**{finding.rule}** ({finding.name}, {finding.severity}): {finding.message}"
    if rule is None:
        return head
    options = params.get(rule.package.rsplit(".", 1)[-1], {})
    return f"{head}\n\n{render_rule(rule, options if isinstance(options, dict) else {}, 3)}"


def _under_cursor(
    facts: Sequence[tuple[Job, str, Location]], character: int
) -> list[tuple[Job, str, Location]]:
    """The facts of the word under the cursor: those starting at the last column at or before
    it (several pointers can share one flag), else every fact of the line."""
    before = [fact for fact in facts if fact[2].column - 1 <= character]
    if not before:
        return list(facts)
    column = max(fact[2].column for fact in before)
    return [fact for fact in before if fact[2].column == column]


def _fact_hover(job: Job, pointer: str, where: Location) -> str:
    value = pointer_value(job.model_dump(mode="json"), pointer)
    formats = {source.path: source.format for source in job.sources}
    how = "derived from other facts" if pointer in job.derived else "stated"
    origin = f"{where.file}:{where.line}:{where.column}"
    read_as = formats.get(where.file)
    origin += f" (read as {read_as})" if read_as else ""
    return f"`{pointer}` = `{json.dumps(value)}` in job `{job.id}`: {how} at {origin}"


def pointer_value(document: Any, pointer: str) -> Any:
    """The value at a JSON pointer (``/resources/gpus_per_node``); None when absent."""
    for name in split_pointer(pointer):
        if isinstance(document, dict):
            document = document.get(name)
        elif isinstance(document, list) and name.isdigit() and int(name) < len(document):
            document = document[int(name)]
        else:
            return None
    return document


def _estimate_hover(job: Job) -> str:
    """The job's headline estimates, each with its range and source (``trainlint estimate``)."""
    rows = {(row.section, row.label): row for row in view(job).rows}
    lines = [f"**Estimates for `{job.id}`** (`trainlint estimate {job.id}` for all)"]
    for section, label, shown in ESTIMATE_ROWS:
        row = rows.get((section, label))
        if row is not None:
            lines.append(f"- {shown}: {row.value} ({row.source})")
    return "\n".join(lines)


# -- code actions -----------------------------------------------------------------------------


def code_actions(session: Session, path: Path, first: int, last: int) -> list[types.CodeAction]:
    """For each finding on lines ``first``..``last`` (1-based): its fixes (``finding.fix``,
    where the rule has one) and "suppress with a reason"."""
    actions: list[types.CodeAction] = []
    lines = session.text(path).splitlines()
    for finding in session.findings(path):
        if first <= finding.line <= last:
            actions += fix_actions(session, finding)
            suppress = suppress_action(finding, path, lines)
            actions += [suppress] if suppress is not None else []
    return actions


def fix_actions(session: Session, finding: Finding) -> list[types.CodeAction]:
    """The finding's fix as a workspace edit; preferred when safe."""
    fix = finding.fix
    if fix is None or not fix.edits:
        return []
    changes: dict[str, list[types.TextEdit]] = {}
    for edit in fix.edits:
        uri = session.where(str(edit.path)).as_uri()
        start = types.Position(edit.start_line - 1, edit.start_column - 1)
        end = types.Position(edit.end_line - 1, edit.end_column - 1)
        changes.setdefault(uri, []).append(types.TextEdit(types.Range(start, end), edit.new_text))
    title = fix.title if fix.safe else f"{fix.title} (unsafe: changes the training)"
    return [
        types.CodeAction(
            title=f"{finding.rule}: {title}",
            kind=types.CodeActionKind.QuickFix,
            edit=types.WorkspaceEdit(changes=changes),
            is_preferred=fix.safe,
        )
    ]


def suppress_action(finding: Finding, path: Path, lines: Sequence[str]) -> types.CodeAction | None:
    """``# trainlint: ignore[RULE] <reason>`` at the end of the finding's line, or the rule
    added to the line's ignore; none where a comment cannot go (JSON) or would change the
    file's meaning (a line continued with ``\\``: the comment would end the command)."""
    if path.suffix.lower() in NO_COMMENTS or not 0 < finding.line <= len(lines):
        return None
    text = lines[finding.line - 1]
    if text.rstrip().endswith("\\"):
        return None
    found = _INLINE_IGNORE.search(text)
    edit = _append_ignore(text, finding) if found is None else _extend_ignore(found, finding)
    if edit is None:
        return None
    start, end, new_text = edit
    where = types.Range(
        types.Position(finding.line - 1, start), types.Position(finding.line - 1, end)
    )
    return types.CodeAction(
        title=f"Suppress {finding.rule} ({finding.name}) on this line, with a reason",
        kind=types.CodeActionKind.QuickFix,
        edit=types.WorkspaceEdit(changes={path.as_uri(): [types.TextEdit(where, new_text)]}),
    )


def _extend_ignore(found: re.Match[str], finding: Finding) -> tuple[int, int, str] | None:
    """The rule added to the line's existing ``ignore[...]`` list (none if it names it)."""
    codes = [code.strip() for code in found.group("codes").split(",") if code.strip()]
    if finding.rule in codes or finding.name in codes:
        return None
    end = found.end("codes")
    return end, end, f",{finding.rule}" if codes else finding.rule


def _append_ignore(text: str, finding: Finding) -> tuple[int, int, str]:
    end = len(text.rstrip())
    comment = f"  # trainlint: ignore[{finding.rule}] {REASON_PLACEHOLDER}"
    return end, len(text), comment
