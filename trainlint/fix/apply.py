"""Writing fixes: per file, the chosen fixes applied together, overlapping ones dropped (the
first in file order is kept, as ruff does; the next ``--fix`` pass can take the rest)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from trainlint.findings import Finding, Fix
from trainlint.fix.text import SourceText, apply_edits, read_source, span
from trainlint.writing import replace_file


@dataclass(frozen=True)
class FileFix:
    """One file's text before and after its fixes, and how many findings they fix."""

    path: str
    before: str
    after: str
    fixed: int

    def diff(self) -> str:
        """The change as a unified diff (``a/PATH``, ``b/PATH``, as git shows it)."""
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
            f"a/{self.path}", f"b/{self.path}",
        )  # fmt: skip
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def chosen(findings: Iterable[Finding], unsafe: bool) -> list[Fix]:
    """The fixes to apply: of the findings that count (not suppressed), safe ones, and the
    unsafe ones too with ``unsafe``; each fix once (two findings may share one)."""
    fixes: list[Fix] = []
    for finding in findings:
        fix = finding.fix
        if fix is None or finding.suppression is not None or not (fix.safe or unsafe):
            continue
        if fix not in fixes:
            fixes.append(fix)
    return fixes


def plan(root: Path, fixes: Iterable[Fix]) -> list[FileFix]:
    """Each edited file's new text, in path order; a fix whose edits span several files is
    applied only where every file takes it, and one overlapping an earlier fix is dropped."""
    by_path = _group(fixes)
    results = []
    for path in sorted(by_path):
        source = read_source(root / path, path)
        if source is None:
            continue
        kept = _without_overlaps(source, by_path[path])
        after = apply_edits(source, [edit for fix in kept for edit in fix.edits])
        if after != source.text:
            results.append(FileFix(path, source.text, after, len(kept)))
    return results


def write(root: Path, files: Iterable[FileFix]) -> None:
    """Replace each file whole (``writing.replace_file``), never half-written; a symlinked
    file is written through to its target, as an editor would."""
    for file in files:
        replace_file((root / file.path).resolve(), file.after)


def _group(fixes: Iterable[Fix]) -> dict[str, list[Fix]]:
    """Fixes by the one file they edit (a fix over several files is not applied)."""
    by_path: dict[str, list[Fix]] = {}
    for fix in fixes:
        paths = {edit.path for edit in fix.edits}
        if len(paths) == 1:
            by_path.setdefault(paths.pop(), []).append(fix)
    return by_path


def _without_overlaps(source: SourceText, fixes: list[Fix]) -> list[Fix]:
    """The fixes in the order of their first edit, each kept unless one of its edits touches
    an edit already kept (two insertions at one place count as touching)."""
    taken: list[tuple[int, int]] = []
    kept = []
    for fix in sorted(fixes, key=lambda f: min(span(source, e) for e in f.edits)):
        spans = [span(source, edit) for edit in fix.edits]
        if not any(_touch(a, b) for a in spans for b in taken):
            taken += spans
            kept.append(fix)
    return kept


def _touch(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] < b[1] and b[0] < a[1]:
        return True
    empty = a[0] == a[1] or b[0] == b[1]
    return empty and a[0] <= b[1] and b[0] <= a[1]
