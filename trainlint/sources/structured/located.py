"""Tables read against plain data with a locator, so one table serves one file or a merge.

``table.facts_from_table`` locates every key in a single file. Hydra facts come from a merge
of several files, each key located where the winning layer set it, so the formats of this
family (torchtune, litgpt, Lightning, Hydra) read their tables through a ``Locate`` callback.
OmegaConf interpolations (``${...}``) are unknown here, never literal values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Fact
from trainlint.sources.base import normalize as n
from trainlint.sources.base.table import JobField, lookup
from trainlint.sources.structured import KeyPath, Tree

Locate = Callable[[KeyPath], Location]


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be known without running code (an unresolvable interpolation)."""

    text: str

    def __str__(self) -> str:
        return self.text


def is_unknown(value: Any) -> bool:
    """True for an unresolved ``${...}`` string or an ``Unknown`` left by the resolver."""
    return isinstance(value, Unknown) or n.is_interpolation(value)


def tree_locator(tree: Tree, file: str) -> Locate:
    """Locations inside one parsed file (the key's own line, else its closest ancestor's)."""

    def locate(path: KeyPath) -> Location:
        line, column = tree.span(path)
        return Location(file=file, line=line, column=column)

    return locate


def table_facts(
    data: Any, table: Mapping[KeyPath, Iterable[JobField]], locate: Locate
) -> list[Fact]:
    """Facts for every key of ``table`` present in ``data`` with a known, converted value."""
    facts: list[Fact] = []
    for path, fields in table.items():
        found, raw = lookup(data, path)
        if not found or is_unknown(raw):
            continue
        where = locate(path)
        for job_field in fields:
            value = job_field.convert(raw)
            if value is not None:
                facts.append(Fact(job_field.pointer, value, where))
    return facts


def fact(pointer: str, value: Any, where: Location) -> list[Fact]:
    """Zero or one fact: a None value is unknown and states nothing."""
    return [] if value is None else [Fact(pointer, value, where)]


def class_name(value: Any) -> str:
    """``lightning.pytorch.callbacks.ModelCheckpoint`` → ``ModelCheckpoint`` ("" when absent)."""
    if isinstance(value, Mapping):
        value = value.get("class_path", value.get("_target_", value.get("_component_")))
    if not isinstance(value, str) or is_unknown(value):
        return ""
    return value.strip().rsplit(".", 1)[-1]


def mapping_at(data: Any, path: KeyPath) -> dict[str, Any]:
    """The mapping at ``path`` or {} (so callers need no isinstance chains)."""
    found, value = lookup(data, path)
    return value if found and isinstance(value, dict) else {}
