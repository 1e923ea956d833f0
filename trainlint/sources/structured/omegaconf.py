"""The small part of OmegaConf that Hydra composition needs, with no code run and no resolver.

``merge`` follows OmegaConf's rule (mappings merge key by key, anything else is replaced) and
keeps, for every key path, the location of the layer that set it last. ``resolve`` replaces
``${a.b}``, ``${.sibling}`` and string templates (``${a}/logs``) by values of the same
config; resolvers (``${oc.env:X}``, ``${eval:...}``, ``${now:...}``), missing keys and cycles
become ``Unknown``. Each key path is resolved once (memoised), so neither a cycle nor a
doubling chain of templates can loop or blow up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import normalize as n
from trainlint.sources.base.table import lookup
from trainlint.sources.structured import KeyPath, Tree
from trainlint.sources.structured.located import Unknown

MAX_TEXT = 10_000  # a template longer than this is unknown rather than built
MAX_DEPTH = 32  # interpolation chain length
_KEY_PATH = re.compile(r"(?P<dots>\.*)(?P<path>[A-Za-z_][\w\-]*(?:\.[\w\-]+)*)?")


@dataclass
class Layer:
    """One config's contribution (or a merge of several): data and each key path's location."""

    data: dict[str, Any] = field(default_factory=dict)
    where: dict[KeyPath, Location] = field(default_factory=dict)


def layer(tree: Tree, file: str, package: KeyPath, drop: frozenset[str] = frozenset()) -> Layer:
    """A file's mapping placed at ``package`` (``trainer`` for trainer/gpu.yaml), minus ``drop``."""
    own = tree.data if isinstance(tree.data, dict) else {}
    data: dict[str, Any] = {k: v for k, v in own.items() if k not in drop}
    where = {
        (*package, *path): Location(file=file, line=line, column=column)
        for path, (line, column) in tree.spans.items()
        if path and str(path[0]) not in drop
    }
    for depth in range(len(package) + 1):
        where.setdefault(package[:depth], Location(file=file, line=1, column=1))
    for part in reversed(package):
        data = {str(part): data}
    return Layer(data, where)


def merge(base: Layer, top: Layer) -> Layer:
    """``top`` merged over ``base`` (neither is modified)."""
    result = Layer(dict(base.data), dict(base.where))
    _merge_into(result, top, ())
    return result


def _merge_into(result: Layer, top: Layer, prefix: KeyPath) -> None:
    _, target = lookup(result.data, prefix)
    source = lookup(top.data, prefix)[1]
    assert isinstance(target, dict) and isinstance(source, dict)
    for key, value in source.items():
        path = (*prefix, key)
        if path in top.where:
            result.where[path] = top.where[path]
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            target[key] = dict(target[key])
            _merge_into(result, top, path)
            continue
        if isinstance(target.get(key), (dict, list)):  # drop the replaced subtree's places
            for stale in [p for p in result.where if p[: len(path)] == path and p != path]:
                del result.where[stale]
        target[key] = value
        if isinstance(value, (dict, list)):
            result.where.update({p: w for p, w in top.where.items() if p[: len(path)] == path})


def resolve(data: Any) -> Any:
    """``data`` with every interpolation replaced by its value or by ``Unknown``."""
    return _Resolver(data).node(data, ())


class _Resolver:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.memo: dict[KeyPath, Any] = {}
        self.active: list[KeyPath] = []

    def node(self, value: Any, path: KeyPath) -> Any:
        if isinstance(value, dict):
            return {key: self.at((*path, key), child) for key, child in value.items()}
        if isinstance(value, list):
            return [self.at((*path, index), child) for index, child in enumerate(value)]
        if isinstance(value, str) and n.is_interpolation(value):
            return self.text(value, path)
        return value

    def at(self, path: KeyPath, value: Any) -> Any:
        """The resolved value at ``path``, computed once; a path met again while it is being
        resolved is a cycle, hence unknown."""
        if path in self.memo:
            return self.memo[path]
        if path in self.active or len(self.active) > MAX_DEPTH:
            return Unknown(str(value))
        self.active.append(path)
        try:
            self.memo[path] = self.node(value, path)
        finally:
            self.active.pop()
        return self.memo[path]

    def text(self, text: str, path: KeyPath) -> Any:
        pieces = split_template(text)
        if pieces is None:
            return Unknown(text)
        if len(pieces) == 1 and pieces[0][0] == "ref":
            return self.reference(pieces[0][1], path)
        out = []
        for kind, piece in pieces:
            value = self.reference(piece, path) if kind == "ref" else piece
            if isinstance(value, (Unknown, dict, list)):
                return Unknown(text)
            out.append(str(value))
            if sum(len(part) for part in out) > MAX_TEXT:
                return Unknown(text)
        return "".join(out)

    def reference(self, inner: str, path: KeyPath) -> Any:
        """``a.b`` from the root, ``.b`` from the mapping holding the key, ``..b`` one up."""
        match = _KEY_PATH.fullmatch(inner.strip())
        if match is None or not match.group("path"):
            return Unknown("${" + inner + "}")  # a resolver call (name:args) or odd syntax
        dots = len(match.group("dots"))
        base = path[: len(path) - dots] if dots else ()
        target = (*base, *match.group("path").split("."))
        found, value = lookup(self.root, target)
        if not found:
            return Unknown("${" + inner + "}")
        return self.at(target, value)


def split_template(text: str) -> list[tuple[str, str]] | None:
    """``a${x}b`` → [("text","a"), ("ref","x"), ("text","b")]; nested ``${`` inside a reference
    (``${eval:'${a}*2'}``) stays inside it; None when the braces do not balance."""
    pieces: list[tuple[str, str]] = []
    index, start = 0, 0
    while index < len(text):
        if text.startswith("${", index):
            if index > start:
                pieces.append(("text", text[start:index]))
            end = _closing(text, index + 2)
            if end < 0:
                return None
            pieces.append(("ref", text[index + 2 : end]))
            index = start = end + 1
        else:
            index += 1
    if start < len(text):
        pieces.append(("text", text[start:]))
    return pieces


def _closing(text: str, index: int) -> int:
    depth = 1
    while index < len(text):
        if text.startswith("${", index):
            depth, index = depth + 1, index + 2
            continue
        if text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1
