"""Edits of one stated value at its key or flag: ``logging_steps: 1`` → ``10`` in YAML,
``"logging_steps": 1`` in JSON, ``logging_steps = 1`` in TOML or Python, ``--logging_steps 1``
or ``--logging_steps=1`` on a command line. Only a literal that reads as the job's value is
edited: a variable, an expression or a templated value is left alone, and so is a key that
another line of the job's files also sets (an override whose winner is not certain)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainlint.findings import TextEdit
from trainlint.fix.site import Site
from trainlint.fix.text import SourceText
from trainlint.job import Location

_KEY_VALUE = re.compile(
    r"""(?P<key>--?[\w.-]+|["']?[\w.-]+["']?)\s*(?:[:=]\s*|\s+)"""
    r"""(?P<quote>["']?)(?P<value>[\w.+-]+)(?P=quote)(?=\s|[,;)}\]#]|$)"""
)


@dataclass(frozen=True)
class Literal:
    """A key's literal value on one line: the key as written, the value's columns."""

    line: int
    key: str
    start: int
    end: int
    text: str


def literal_at(source: SourceText, at: Location) -> Literal | None:
    """The ``key: value``, ``key = value`` or ``--flag value`` that starts at ``at``."""
    line = source.line(at.line)
    match = _KEY_VALUE.match(line, at.column - 1)
    if match is None:
        return None
    key = match.group("key").strip("\"'").lstrip("-").rsplit(".", 1)[-1]
    start, end = match.start("value") + 1, match.end("value") + 1
    return Literal(at.line, key, start, end, match.group("value"))


def reads_as(text: str, value: object) -> bool:
    """Whether a literal states ``value``: ``true``/``True`` a true boolean, a decimal number
    an equal number."""
    if isinstance(value, bool):
        return text.lower() == str(value).lower()
    if isinstance(value, int | float):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    return False


def boolean_text(new: bool, like: str) -> str:
    """``new`` spelled as the literal it replaces is (``True``, ``true``, ``TRUE``)."""
    word = str(new).lower()
    if like.isupper():
        return word.upper()
    return word.capitalize() if like[:1].isupper() else word


def _key_pattern(key: str) -> re.Pattern[str]:
    """The key in any spelling a parser accepts for it (``save_steps``, ``save-steps``)."""
    parts = (re.escape(part) for part in re.split(r"[-_]", key))
    return re.compile(r"(?<![\w-])" + "[-_]".join(parts) + r"(?![\w-])")


STRUCTURED = (".yaml", ".yml", ".json", ".toml")
"""Files whose keys are nested: the same name on another line of one is another key
(DeepSpeed's many ``enabled``), not a second assignment as in a script."""


def set_elsewhere(site: Site, literal: Literal) -> bool:
    """Whether another line of the job's files names the key (any line of another file, or
    of the same script): then which line wins (an override, a variable) is not certain from
    the text alone."""
    pattern = _key_pattern(literal.key)
    for path in site.other_files():
        source = site.source(path)
        if source is None:
            return True
        same = path == site.finding.file
        if same and path.endswith(STRUCTURED):
            continue
        if any(pattern.search(line) for n, line in enumerate(source.lines, start=1)
               if not (same and n == literal.line)):  # fmt: skip
            return True
    return False


_BARE_FLAG = re.compile(r"--[\w-]+(?=[ \t]*(?:\\?[ \t]*$|--|#))")


def remove_flag(site: Site, pointer: str) -> TextEdit | None:
    """The edit that removes a switch given as a bare flag (``--log-params-norm``) where the
    finding locates it: its whole line when the flag is alone on a continued line, else the
    flag and the blanks beside it, the indentation kept. A flag followed by a value is not a
    bare switch."""
    at = site.stated_at(pointer)
    source = site.source(site.finding.file) if at is not None else None
    if at is None or source is None:
        return None
    line = source.line(at.line)
    match = _BARE_FLAG.match(line, at.column - 1)
    if match is None:
        return None
    before, rest = line[: at.column - 1], line[match.end() :]
    if before.strip():  # after another word: the flag and the blanks before it
        return source.replace(at.line, len(before.rstrip(" \t")) + 1, match.end() + 1, "")
    if rest.strip() == "\\":  # alone on a continued line
        return source.delete_line(at.line)
    end = match.end() + len(rest) - len(rest.lstrip(" \t")) if rest.strip() else match.end()
    return source.replace(at.line, at.column, end + 1, "")  # first word: the blanks after it


def replace_value(site: Site, pointer: str, value: object, new_text: str) -> TextEdit | None:
    """The edit that states ``new_text`` where the finding's file states ``pointer`` as the
    literal ``value``; None when the text there is anything else, or ambiguous."""
    at = site.stated_at(pointer)
    source = site.source(site.finding.file) if at is not None else None
    if at is None or source is None:
        return None
    literal = literal_at(source, at)
    if literal is None or not reads_as(literal.text, value) or set_elsewhere(site, literal):
        return None
    return source.replace(literal.line, literal.start, literal.end, new_text)
