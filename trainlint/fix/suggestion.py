"""A fix as GitHub's ``suggestion`` block: the new text of the whole lines the fix touches,
to replace lines ``first``..``last`` of the file (an empty block deletes them). A fix that
spans several files, or whose lines the reader cannot see, has none."""

from __future__ import annotations

from dataclasses import dataclass

from trainlint.findings import Fix
from trainlint.fix.text import SourceText, apply_edits


@dataclass(frozen=True)
class Suggestion:
    path: str
    first: int
    last: int
    text: str
    """The replacement of lines ``first``..``last``, without a final newline; "" deletes."""


def suggestion(fix: Fix, source: SourceText) -> Suggestion | None:
    """The lines ``fix`` changes in ``source``, after the fix."""
    if any(edit.path != source.path for edit in fix.edits) or not fix.edits:
        return None
    ranges = [_lines(edit.start_line, edit.end_line, edit.end_column) for edit in fix.edits]
    first, last = min(r[0] for r in ranges), max(r[1] for r in ranges)
    if last > len(source.lines):
        return None
    before = "".join(source.lines[: first - 1])
    after_end = "".join(source.lines[last:])
    fixed = apply_edits(source, fix.edits)
    if not (fixed.startswith(before) and fixed.endswith(after_end)):
        return None
    middle = fixed[len(before) : len(fixed) - len(after_end)]
    return Suggestion(source.path, first, last, middle.rstrip("\r\n"))


def _lines(start_line: int, end_line: int, end_column: int) -> tuple[int, int]:
    """The whole lines an edit touches. An end at column 1 stops before that line; an
    insertion at the start of a line is shown with the line above it (the first line
    when there is none)."""
    last = end_line - 1 if end_column == 1 else end_line
    if last < start_line:  # an insertion at a line's start
        line = max(start_line - 1, 1)
        return line, line
    return start_line, last
