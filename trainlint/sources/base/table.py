"""Declarative key → job-model tables for structured formats (DESIGN §1.2).

A format module lists ``Rule(pointer, convert)`` per key path; this module walks a parsed
document and emits a located Fact for every key whose value converts to something known.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Fact
from trainlint.sources.structured import Path, Tree

Converter = Callable[[Any], Any]


@dataclass(frozen=True)
class Rule:
    """Where a key's value goes in the job model, and how it is normalised (None = unknown)."""

    pointer: str
    convert: Converter


Table = Mapping[Path, Iterable[Rule]]


def facts_from_table(tree: Tree, table: Table, file: str) -> list[Fact]:
    """Facts for every key of ``table`` present in ``tree`` with a known value."""
    facts: list[Fact] = []
    for path, rules in table.items():
        found, raw = lookup(tree.data, path)
        if not found:
            continue
        line, column = tree.span(path)
        facts.extend(facts_for(rules, raw, Location(file=file, line=line, column=column)))
    return facts


def facts_for(rules: Iterable[Rule], raw: Any, location: Location) -> list[Fact]:
    """Facts for one raw value (used by command-line flags as well as documents)."""
    facts = []
    for rule in rules:
        value = rule.convert(raw)
        if value is not None:
            facts.append(Fact(rule.pointer, value, location))
    return facts


def lookup(data: Any, path: Path) -> tuple[bool, Any]:
    for part in path:
        if isinstance(data, Mapping) and part in data:
            data = data[part]
        else:
            return False, None
    return True, data


def describe(table: Table, separator: str = ".") -> dict[str, list[str]]:
    """Key path (``zero_optimization.stage``) → the job-model pointers it sets, for the docs."""
    described: dict[str, list[str]] = {}
    for path, rules in table.items():
        key = separator.join(str(part) for part in path) or "(document)"
        described.setdefault(key, []).extend(rule.pointer for rule in rules)
    return described
