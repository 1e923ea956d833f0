"""Hydra defaults lists, resolved from the files of the repository (never by running Hydra).

A config at group ``G`` names others in ``defaults:``: ``- trainer: default`` is
``<root>/G/trainer/default.yaml``, ``- default`` is ``<root>/G/default.yaml``, ``- /x: y`` is
absolute, ``override /trainer: gpu`` swaps another entry's choice, ``optional`` tolerates a
missing file, ``null`` selects nothing and ``_self_`` places the config's own keys (last when
absent, as in Hydra >= 1.1). Files are found in folder form (``configs/trainer/gpu.yaml``) or
flattened with ``__`` (``configs__trainer__gpu.yaml``, as the shared corpus stores them).
A file met again while it is being expanded (a cycle) is skipped, and the number of files is
bounded, so composition always ends. A group file is read only when its real path lies in the
repository (``discover.checked_roots``): a symlink out of it is never followed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainlint.discover import checked_roots, inside, open_regular
from trainlint.errors import SourceError
from trainlint.sources.base import consulted
from trainlint.sources.structured import MAX_BYTES, KeyPath, Tree, load_yaml
from trainlint.sources.structured.omegaconf import Layer, layer, merge

MAX_FILES = 128
_NAME = re.compile(r"[\w\-.]+")
_HEADER = re.compile(r"#\s*@package\s+(\S+)")


@dataclass(frozen=True)
class Root:
    """Where group paths start: a folder, plus the ``a__b__`` prefix of flattened names."""

    folder: Path
    prefix: tuple[str, ...]
    flat: bool

    def find(self, group: tuple[str, ...], option: str) -> Path | None:
        parts = [*self.prefix, *group, option]
        names = ["__".join(parts)] if self.flat else [os.path.join(*parts)]
        for name in names:
            for suffix in (".yaml", ".yml"):
                candidate = self.folder / (name + suffix)
                if consulted.is_file(candidate):
                    return candidate
        return None

    def written(self, group: tuple[str, ...], option: str, referrer: Path) -> str:
        """The path of a group file relative to the referrer's folder (for a Reference)."""
        target = self.find(group, option)
        if target is None:
            parts = [*self.prefix, *group, option]
            name = "__".join(parts) if self.flat else os.path.join(*parts)
            target = self.folder / (name + ".yaml")
        return Path(os.path.relpath(target, referrer.parent)).as_posix()


@dataclass(frozen=True)
class Entry:
    """One defaults-list item, with its index in the list (for its line)."""

    index: int
    group: tuple[str, ...] | None  # None: _self_
    options: tuple[str, ...] = ()
    package: str | None = None
    optional: bool = False
    override: bool = False
    bare: bool = False  # ``- default``: a config of the same group
    relative: bool = False  # ``- trainer: gpu`` rather than ``- /trainer: gpu``


def header_package(text: str) -> str | None:
    """``# @package _global_`` in the comment block at the top of a file."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return None
        match = _HEADER.match(stripped)
        if match:
            return match.group(1)
    return None


def entries(data: Any, group: tuple[str, ...]) -> list[Entry]:
    """The defaults list of a config at ``group``; malformed items are skipped."""
    items = data.get("defaults") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    found = []
    for index, item in enumerate(items):
        if item == "_self_":
            found.append(Entry(index, None))
        elif isinstance(item, str):
            entry = _entry(index, item, None, group, named_only=True)
            found += [entry] if entry else []
        elif isinstance(item, dict) and len(item) == 1:
            key, value = next(iter(item.items()))
            entry = _entry(index, str(key), value, group, named_only=False)
            found += [entry] if entry else []
    return found


def _entry(
    index: int, key: str, value: Any, group: tuple[str, ...], named_only: bool
) -> Entry | None:
    words = key.split()
    flags, spec = set(words[:-1]), words[-1] if words else ""
    spec, _, package = spec.partition("@")
    absolute = spec.startswith("/")
    parts = tuple(p for p in spec.strip("/").split("/") if p)
    if not all(_NAME.fullmatch(p) and p not in {".", ".."} for p in parts):
        return None
    base = () if absolute else group
    if named_only:
        if not parts:
            return None
        return Entry(index, (*base, *parts[:-1]), (parts[-1],), package or None, bare=True,
                     relative=not absolute)  # fmt: skip
    values = value if isinstance(value, list) else [value]
    options = tuple(str(v) for v in values if isinstance(v, (str, int)) and str(v) != "???")
    if not all(_NAME.fullmatch(o) and ".." not in o for o in options):
        return None
    return Entry(index, (*base, *parts), options, package or None,
                 "optional" in flags, "override" in flags, relative=not absolute)  # fmt: skip


@dataclass
class Composition:
    """The merged layer and, per file expanded, the entries it selected (found or not)."""

    merged: Layer = field(default_factory=Layer)
    selected: list[tuple[Entry, str, Path | None]] = field(default_factory=list)
    overrides_found: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    regular: set[tuple[str, ...]] = field(default_factory=set)
    files: int = 0


class Composer:
    """Expands a config's defaults tree into one merged Layer (see the module docstring)."""

    def __init__(self, root: Root, overrides: dict[tuple[str, ...], tuple[str, ...]],
                 promoted: set[tuple[str, ...]]) -> None:  # fmt: skip
        self.root, self.overrides, self.promoted = root, overrides, promoted
        self.result = Composition()
        # The repository: group files stay in it. Absolute, since discover remembers the
        # real path of each path as given, and a relative one means another folder elsewhere.
        self.roots = checked_roots([root.folder.absolute()])

    def expand(self, path: Path, tree: Tree, group: tuple[str, ...], package: KeyPath,
               stack: tuple[Path, ...]) -> None:  # fmt: skip
        own = layer(tree, path.as_posix(), package, frozenset({"defaults"}))
        placed = False
        for entry in entries(tree.data, group):
            if entry.group is None:
                self.result.merged, placed = merge(self.result.merged, own), True
                continue
            self._entry(entry, path, package, stack)
        if not placed:
            self.result.merged = merge(self.result.merged, own)

    def _entry(self, entry: Entry, path: Path, package: KeyPath, stack: tuple[Path, ...]) -> None:
        assert entry.group is not None
        top = len(stack) == 1
        if entry.override and entry.group not in self.promoted:
            self.result.overrides_found[entry.group] = entry.options
            return
        if not entry.override:
            self.result.regular.add(entry.group)
        for option in self.overrides.get(entry.group, entry.options):
            target = self.root.find(entry.group, option)
            if top:
                self.result.selected.append((entry, option, target))
            if target is None or target.resolve() in stack or self.result.files >= MAX_FILES:
                continue
            self.result.files += 1
            loaded = load(target, self.roots)
            if loaded is not None:
                child_tree, child_text = loaded
                child_package = _package(entry, header_package(child_text), package)
                self.expand(target, child_tree, entry.group, child_package,
                            (*stack, target.resolve()))  # fmt: skip


def _package(entry: Entry, header: str | None, parent: KeyPath) -> KeyPath:
    """Entry ``@pkg`` (relative to the parent's package) > file header > the group path."""
    assert entry.group is not None
    if entry.package:
        return _dotted(entry.package, parent, entry.group)
    if header:
        return _dotted(header, (), entry.group)
    return entry.group


def _dotted(package: str, parent: KeyPath, group: tuple[str, ...]) -> KeyPath:
    parts = [p for p in package.split(".") if p]
    if parts[:1] == ["_global_"]:
        return tuple(parts[1:])
    if parts[:1] == ["_group_"]:
        return (*group, *parts[1:])
    if parts[:1] == ["_here_"]:
        return (*parent, *parts[1:])
    return (*parent, *parts)


def config_tree(trees: list[Tree]) -> Tree:
    """A YAML file's config as Hydra loads it: a file without content (only comments, such as
    a ``# @package`` header) is an empty config; one that is not a mapping is an error, since
    Hydra composes mappings only. Raises SourceError."""
    if not trees or trees[0].data is None:
        return Tree({})
    data = trees[0].data
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a single value"
        raise SourceError(f"a Hydra config is a mapping of keys, not {kind}", *trees[0].span(()))
    return trees[0]


def load(path: Path, roots: tuple[Path, ...]) -> tuple[Tree, str] | None:
    """A group file's config and text; None when it leads out of ``roots`` (the repository:
    a group file linked to the runner's files is never read), is unreadable or is invalid
    (that file's own reading reports the error)."""
    text = repository_text(path, roots)
    if text is None:
        return None
    try:
        return config_tree(load_yaml(text)), text
    except SourceError:
        return None


def repository_text(path: Path, roots: tuple[Path, ...]) -> str | None:
    """The text of a file another config pulls in (a Hydra group file, an MMEngine base);
    None when its real path leads out of ``roots`` (the repository), it is no regular file,
    it cannot be read or it is larger than the readers take."""
    consulted.note("text", path)
    real = Path(os.path.realpath(path))
    if not any(inside(real, root) for root in roots):
        return None
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    return None if len(data) > MAX_BYTES else data.decode("utf-8", errors="replace")
