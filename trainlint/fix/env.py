"""Removing an environment setting where a launch states it: the line ``export NAME=value``
or ``NAME=value`` of a shell script, ``os.environ["NAME"] = "value"`` of a Python module,
``NAME: value`` of a YAML ``env``/``envs`` mapping, or the ``NAME=value`` prefix (or the one
word of an ``export`` with several) of a longer command. A line is removed only where a
sibling statement remains: an emptied ``then`` block or mapping would change what the file
means."""

from __future__ import annotations

import re

from trainlint.findings import TextEdit
from trainlint.fix.site import Site
from trainlint.fix.text import SourceText
from trainlint.job import Location

_VALUE = r"""(?:"(?P<dq>[^"$`\\]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\s"'$`\\;&|]+))"""
_COMMENT = r"\s*(?:\#.*)?$"
_SHELL_LINE = re.compile(r"^(?P<indent>\s*)(?:export\s+)?{name}=" + _VALUE + _COMMENT)
_PYTHON_LINE = re.compile(
    r"""^(?P<indent>\s*)os\.environ\[(?P<q>["']){name}(?P=q)\]\s*=\s*""" + _VALUE + _COMMENT
)
_YAML_LINE = re.compile(r"^(?P<indent>\s*)['\"]?{name}['\"]?\s*:\s*" + _VALUE + _COMMENT)
_WORD = re.compile(r"(?<![^\s])(?P<word>{name}=" + _VALUE + r")(?P<space>\s+)")


def remove_setting(site: Site, name: str) -> TextEdit | None:
    """The edit that removes ``NAME=value`` where the finding locates it; None when the
    text there is not one of the shapes above or states another value."""
    at = site.stated_at(f"/env/{name}")
    source = site.source(site.finding.file) if at is not None else None
    if at is None or source is None:
        return None
    value = site.job.env.get(name)
    return None if value is None else removal(source, at, name, value)


def removal(source: SourceText, at: Location, name: str, value: str) -> TextEdit | None:
    """The edit that removes ``name=value`` stated at ``at`` in ``source``: its line, or
    its word of a longer command; None for any other shape or value."""
    pattern = re.escape(name)
    for shape in (_SHELL_LINE, _PYTHON_LINE, _YAML_LINE):
        match = re.compile(shape.pattern.replace("{name}", pattern)).match(source.line(at.line))
        if match and _value(match) == value:
            return _remove_line(source, at.line, match.group("indent"))
    return _remove_word(source, at.line, at.column, name, value)


def _value(match: re.Match[str]) -> str | None:
    for group in ("dq", "sq", "bare"):
        if match.group(group) is not None:
            return match.group(group)
    return None


def _remove_line(source: SourceText, line: int, indent: str) -> TextEdit | None:
    """Remove the line when it is not a command's continuation and a statement at its
    indentation stays beside it (always at the top level)."""
    if source.line(line - 1).rstrip().endswith("\\") or source.line(line).endswith("\\"):
        return None
    if indent and not _has_sibling(source, line, indent):
        return None
    return source.delete_line(line)


def _has_sibling(source: SourceText, line: int, indent: str) -> bool:
    """Whether the nearest code line before or after stands at the same indentation: a
    statement of the same block, so the block is not left empty."""
    before = _code_line(source, line, -1)
    after = _code_line(source, line, +1)
    if before is not None and _indent(before) == indent:
        return True
    return after is not None and _indent(after) == indent and not _closes(after)


def _closes(text: str) -> bool:
    return text.strip() in ("fi", "done", "esac", "}", ")")


def _code_line(source: SourceText, line: int, step: int) -> str | None:
    number = line + step
    while 1 <= number <= len(source.lines):
        text = source.line(number)
        if text.strip() and not text.lstrip().startswith("#"):
            return text
        number += step
    return None


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _remove_word(
    source: SourceText, line: int, column: int, name: str, value: str
) -> TextEdit | None:
    """Remove ``NAME=value`` and the space after it at ``column``, when a command or another
    assignment follows on the line (``NCCL_DEBUG=INFO torchrun ...``)."""
    pattern = re.compile(_WORD.pattern.replace("{name}", re.escape(name)))
    match = pattern.match(source.line(line), column - 1)
    if match is None or _value(match) != value:
        return None
    return source.replace(line, column, match.end("space") + 1, "")
