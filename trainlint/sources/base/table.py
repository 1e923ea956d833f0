"""Declarative key → job-model tables for structured formats (DESIGN §1.2).

A format module lists the ``JobField(pointer, convert)`` each key path sets; this module walks
a parsed document and emits a located Fact for every key whose value converts to something known.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Fact
from trainlint.sources.structured import KeyPath, Tree

Converter = Callable[[Any], Any]


@dataclass(frozen=True)
class JobField:
    """The job-model field a key's value goes to (its JSON pointer), and how the value is
    normalised (None = unknown). Not a lint rule: it only says where a file's value lands."""

    pointer: str
    convert: Converter


Table = Mapping[KeyPath, Iterable[JobField]]


def facts_from_table(tree: Tree, table: Table, file: str) -> list[Fact]:
    """Facts for every key of ``table`` present in ``tree`` with a known value."""
    facts: list[Fact] = []
    for path, fields in table.items():
        found, raw = lookup(tree.data, path)
        if not found:
            continue
        line, column = tree.span(path)
        facts.extend(facts_for(fields, raw, Location(file=file, line=line, column=column)))
    return facts


def facts_for(fields: Iterable[JobField], raw: Any, location: Location) -> list[Fact]:
    """Facts for one raw value (used by command-line flags as well as documents)."""
    facts = []
    for job_field in fields:
        value = job_field.convert(raw)
        if value is not None:
            facts.append(Fact(job_field.pointer, value, location))
    return facts


def stated(fields: Iterable[JobField], value: Any, where: Location) -> list[Fact]:
    """The fields' facts; each of unknown value when the value is (they block defaults)."""
    if value is None:
        return [Fact(field.pointer, None, where) for field in fields]
    return facts_for(fields, value, where)


def lookup(data: Any, path: KeyPath) -> tuple[bool, Any]:
    for part in path:
        if isinstance(data, Mapping) and part in data:
            data = data[part]
        else:
            return False, None
    return True, data


def describe(table: Table, separator: str = ".") -> dict[str, list[str]]:
    """Key path (``zero_optimization.stage``) → the job-model pointers it sets, for the docs."""
    described: dict[str, list[str]] = {}
    for path, fields in table.items():
        key = separator.join(str(part) for part in path) or "(document)"
        described.setdefault(key, []).extend(job_field.pointer for job_field in fields)
    return described
