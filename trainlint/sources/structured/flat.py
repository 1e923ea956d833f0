"""What the flat, HfArgumentParser-like YAML formats share (HF Trainer, axolotl, LLaMA-Factory,
accelerate): one table walk, file references, near-miss keys, and ``${...}`` left unknown.

None of these formats interpolates, but configs copied from Hydra/OmegaConf projects carry
``${...}`` text; it is never a literal value, so such strings are blanked before any converter
sees them (``${oc.env:MODEL}`` must not become a model name).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Document, Input, Reference, Role, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.table import Table, facts_from_table, lookup
from trainlint.sources.structured import KeyPath, Tree


def plain(tree: Tree) -> Tree:
    """A copy of ``tree`` whose ``${...}`` strings are None (unknown), spans kept."""
    return Tree(_blank(tree.data), tree.spans)


def _blank(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _blank(child) for key, child in value.items()}
    if isinstance(value, list):
        return [_blank(child) for child in value]
    return None if n.is_interpolation(value) else value


def location(tree: Tree, path: KeyPath, file: str) -> Location:
    line, column = tree.span(path)
    return Location(file=file, line=line, column=column)


def references(tree: Tree, keys: Mapping[KeyPath, Role], file: str) -> list[Reference]:
    """A Reference for each key of ``keys`` whose value is a non-empty path string."""
    found = []
    for path, ref_role in keys.items():
        present, value = lookup(tree.data, path)
        if present and isinstance(value, str) and value.strip():
            found.append(Reference(value.strip(), location(tree, path, file), ref_role))
    return found


def document(  # noqa: PLR0913 - the header of a Document and what to read
    file: Input,
    fmt: str,
    role: Role,
    confidence: float,
    table: Table,
    known: Mapping[KeyPath, Collection[str]],
) -> Document:
    """The facts of ``table`` and the near-miss keys of each mapping in ``known`` (path → keys)."""
    tree = plain(file.trees[0])
    doc = Document(file.path, fmt, confidence, role)
    doc.facts = facts_from_table(tree, table, file.path)
    for path, keys in known.items():
        doc.unknown_keys += typos.near_misses(tree, keys, fmt, file.path, path)
    return doc


def keys_of(mapping: Mapping[str, Any], candidates: Iterable[str]) -> int:
    """How many of ``candidates`` are keys of ``mapping`` (recognition scores)."""
    return sum(1 for key in candidates if key in mapping)


def words(text: str) -> frozenset[str]:
    """A key set written as whitespace-separated names (the generated key lists)."""
    return frozenset(text.split())
