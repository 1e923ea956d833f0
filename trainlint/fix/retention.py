"""A checkpoint retention limit added where the format has a key for it (unbounded-checkpoints):
Hugging Face's ``save_total_limit``, on a line of its own after ``save_steps`` in the same
spelling: ``save_total_limit: N`` in YAML, ``"save_total_limit": N,`` in JSON (only where
``save_steps`` is followed by a comma, so the object stays valid), ``--save_total_limit N \\``
on a continued command line. N is the rule's ``suggested_keep_last``."""

from __future__ import annotations

import re

from trainlint.findings import Fix, TextEdit
from trainlint.fix.site import Site
from trainlint.fix.text import SourceText

HF_KEY = "save_total_limit"
_SHAPES = (  # (the save_steps line, the line to add: indent, then the key and value)
    (re.compile(r"^(?P<indent>[ \t]*)save_steps:[ \t]*[\w.]+[ \t]*(?:#.*)?$"), "{key}: {n}"),
    (re.compile(r'^(?P<indent>[ \t]*)"save_steps":[ \t]*[\w.]+,[ \t]*$'), '"{key}": {n},'),
    (re.compile(r"^(?P<indent>[ \t]*)--save[_-]steps[ =][\w.]+[ \t]+\\$"), "--{key} {n} \\"),
)


def retention_limit(site: Site) -> Fix | None:
    """TL202: ``save_total_limit`` after the ``save_steps`` line (safe, by the rule's
    suggested count) when no line of the job's files names it already."""
    keep = site.params.get("suggested_keep_last")
    at = site.stated_at("/checkpoint/every_steps")
    source = site.source(site.finding.file) if at is not None else None
    if not isinstance(keep, int) or isinstance(keep, bool) or at is None or source is None:
        return None
    if _named_anywhere(site):
        return None
    edit = _added_line(source, at.line, keep)
    return Fix(f"Keep the last {keep} checkpoints", True, (edit,)) if edit else None


def _added_line(source: SourceText, line: int, keep: int) -> TextEdit | None:
    text = source.line(line)
    for pattern, template in _SHAPES:
        match = pattern.match(text)
        if match:
            added = match.group("indent") + template.format(key=HF_KEY, n=keep)
            return source.insert_after(line, added)
    return None


def _named_anywhere(site: Site) -> bool:
    """A limit already written somewhere (in a variable, another file): do not add another."""
    pattern = re.compile(r"save[_-]total[_-]limit")
    for path in site.other_files():
        source = site.source(path)
        if source is None or pattern.search(source.text):
            return True
    return False
