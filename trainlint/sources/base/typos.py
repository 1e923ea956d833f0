"""Unknown keys that are one or two edits from a known one (TL903).

A framework silently ignores a key it does not know (``save_step: 10`` leaves the default
``save_steps: 500``), so a near-miss is worth a finding; a key far from every known one is
more likely a newer or custom option and is left alone.
"""

from __future__ import annotations

from collections.abc import Collection

from trainlint.job import UnknownKey
from trainlint.sources.structured import KeyPath, Tree

MAX_EDITS = 2
MIN_LENGTH = 5  # short keys are one or two edits from too many others to judge


def near_misses(
    tree: Tree, known: Collection[str], fmt: str, file: str, path: KeyPath = ()
) -> list[UnknownKey]:
    """Keys of the mapping at ``path`` that are not in ``known`` but close to one of them."""
    node = tree.data
    for part in path:
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return []
    if not isinstance(node, dict):
        return []
    found = []
    for key in node:
        suggestion = suggest(str(key), known)
        if suggestion is not None:
            line, column = tree.span((*path, str(key)))
            found.append(UnknownKey(file=file, line=line, column=column, key=str(key),
                                    format=fmt, suggestion=suggestion))  # fmt: skip
    return found


def children(known: Collection[str], path: KeyPath) -> frozenset[str]:
    """The keys directly under ``path`` in a dotted key set (``SOLVER.AMP.ENABLED``)."""
    prefix = ".".join(map(str, path)) + "." if path else ""
    return frozenset(
        key[len(prefix) :] for key in known
        if key.startswith(prefix) and "." not in key[len(prefix) :]
    )  # fmt: skip


def dotted_near_misses(tree: Tree, known: Collection[str], fmt: str, file: str) -> list[UnknownKey]:
    """Near-misses in every section a closed dotted key set (a framework's defaults) knows."""
    found = near_misses(tree, children(known, ()), fmt, file)
    for path, value in tree.items():
        if path and isinstance(value, dict) and ".".join(map(str, path)) in known:
            found += near_misses(tree, children(known, path), fmt, file, path)
    return found


def suggest(key: str, known: Collection[str], min_length: int = MIN_LENGTH) -> str | None:
    """The known key ``key`` was probably meant to be, when it is not itself known.

    ``min_length`` can be lowered for a small closed key set (trainlint's annotations)."""
    if key in known or len(key) < min_length or key.startswith(("_", "x-")):
        return None
    from rapidfuzz import process  # only for unknown keys: most files have none
    from rapidfuzz.distance import DamerauLevenshtein

    match = process.extractOne(
        key, known, scorer=DamerauLevenshtein.distance, score_cutoff=MAX_EDITS
    )
    return None if match is None else str(match[0])
