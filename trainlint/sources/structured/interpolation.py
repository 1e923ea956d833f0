"""OmegaConf ``${...}`` values, resolved only when they plainly name another key of the file.

``${model.encoder_seq_length}`` (absolute) and ``${.encoder_seq_length}`` (relative to the
mapping holding the key) are copies of another value of the same document, so they are
resolved. Resolvers (``${oc.env:X}``, ``${multiply:a,b}``), string templates (``run-${x}``)
and references that do not resolve to a plain value stay unknown: the value becomes None, so
no converter ever reads the ``${`` text as a literal. OmegaConf's ``???`` (missing) is unknown too.
"""

from __future__ import annotations

import re
from typing import Any

from trainlint.sources.base import normalize as n
from trainlint.sources.structured import KeyPath, Tree

_REFERENCE = re.compile(r"\$\{(?P<dots>\.*)(?P<path>[A-Za-z_][\w-]*(?:\.[\w-]+)*)\}")
MAX_HOPS = 8
MISSING = "???"  # OmegaConf's mandatory value that was not given


def resolved(tree: Tree) -> Tree:
    """A copy of ``tree`` with plain references replaced by their values (same spans)."""
    return Tree(_resolve_node(tree.data, (), tree.data), tree.spans)


def _resolve_node(value: Any, path: KeyPath, root: Any) -> Any:
    if isinstance(value, dict):
        return {key: _resolve_node(child, (*path, key), root) for key, child in value.items()}
    if isinstance(value, list):
        return [_resolve_node(child, (*path, index), root) for index, child in enumerate(value)]
    return resolve_value(value, path, root)


def resolve_value(value: Any, path: KeyPath, root: Any, hops: int = 0) -> Any:
    """The value a scalar at ``path`` stands for; None when it is an unresolvable ``${}``."""
    if value == MISSING:
        return None
    if not isinstance(value, str) or not n.is_interpolation(value):
        return value
    match = _REFERENCE.fullmatch(value.strip())
    if match is None or hops >= MAX_HOPS:
        return None
    target = _target(match, path)
    if target is None:
        return None
    found, raw = _lookup(root, target)
    if not found or isinstance(raw, (dict, list)):
        return None
    return resolve_value(raw, target, root, hops + 1)


def _target(match: re.Match[str], path: KeyPath) -> KeyPath | None:
    """The absolute key path a reference names: one dot is the holding mapping, each more
    dot one level up."""
    parts: KeyPath = tuple(match["path"].split("."))
    dots = len(match["dots"])
    if dots == 0:
        return parts
    base = path[:-1]  # the mapping that holds the key
    if dots - 1 > len(base):
        return None
    return (*base[: len(base) - (dots - 1)], *parts)


def _lookup(data: Any, path: KeyPath) -> tuple[bool, Any]:
    for part in path:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, str) and part.isdigit():
            index = int(part)
            if index >= len(data):
                return False, None
            data = data[index]
        else:
            return False, None
    return True, data
