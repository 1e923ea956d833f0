"""A file's text addressed as findings address it: 1-based lines and columns. Fixes edit
this text by span and never re-dump a parsed tree, so comments, quoting, key order and
indentation stay as written."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from trainlint.findings import TextEdit


@dataclass(frozen=True)
class SourceText:
    """One file's text, newlines as they are (``\\r\\n`` kept)."""

    path: str
    text: str

    @cached_property
    def lines(self) -> list[str]:
        """Each line with its line ending."""
        return self.text.splitlines(keepends=True)

    def line(self, number: int) -> str:
        """Line ``number`` (1-based) without its ending; "" past the end."""
        if not 1 <= number <= len(self.lines):
            return ""
        return self.lines[number - 1].rstrip("\r\n")

    def offset(self, line: int, column: int) -> int:
        """The character offset of (``line``, ``column``); the line after the last is the end."""
        before = sum(len(text) for text in self.lines[: line - 1])
        return min(before + column - 1, len(self.text))

    def replace(self, line: int, start: int, end: int, new_text: str) -> TextEdit:
        """Replace columns [``start``, ``end``) of one line."""
        return TextEdit(self.path, line, start, line, end, new_text)

    def delete_line(self, line: int) -> TextEdit:
        """Remove line ``line`` with its ending."""
        return TextEdit(self.path, line, 1, line + 1, 1, "")

    def insert_after(self, line: int, new_line: str) -> TextEdit:
        """Insert ``new_line`` as a line of its own after ``line``, ending as the file's do."""
        current = self.lines[line - 1] if 1 <= line <= len(self.lines) else ""
        ending = current[len(current.rstrip("\r\n")) :] or self.newline
        prefix = "" if current.endswith(("\n", "\r")) else self.newline
        if prefix:  # the last line had no ending: end it first, the new line keeps none
            return TextEdit(self.path, line, len(current) + 1, line, len(current) + 1,
                            prefix + new_line)  # fmt: skip
        return TextEdit(self.path, line + 1, 1, line + 1, 1, new_line + ending)

    @property
    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"


def span(source: SourceText, edit: TextEdit) -> tuple[int, int]:
    """The character range [start, end) an edit replaces."""
    start = source.offset(edit.start_line, edit.start_column)
    return start, max(start, source.offset(edit.end_line, edit.end_column))


def apply_edits(source: SourceText, edits: Iterable[TextEdit]) -> str:
    """The text with non-overlapping ``edits`` applied (last first, so offsets hold)."""
    text = source.text
    for start, end, new_text in sorted(
        ((*span(source, edit), edit.new_text) for edit in edits), reverse=True
    ):
        text = text[:start] + new_text + text[end:]
    return text


def read_source(file: Path, path: str) -> SourceText | None:
    """``file``'s text as ``path`` (root-relative), newlines kept; None when it cannot be read
    or is not UTF-8: no fix edits what it could not read."""
    try:
        with file.open(encoding="utf-8", newline="") as handle:
            return SourceText(path, handle.read())
    except (OSError, UnicodeDecodeError):
        return None
