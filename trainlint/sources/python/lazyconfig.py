"""detectron2 LazyConfig Python files read as a flat view (``train.max_iter`` → value, where),
through ``ast`` only: nothing is imported or run.

A LazyConfig is a module whose globals are the config: ``train = dict(max_iter=90000,
checkpointer=dict(period=5000))``, ``dataloader.train = L(build_loader)(total_batch_size=16)``,
``train.max_iter = 1000``. ``LazyConfig.load`` runs it with relative imports of other config
files resolved (``from ..common.train import train``): the names imported are those files'
globals, and later assignments change them. Here each relative import of a file in the
repository is read the same way (bounded depth, never out of the repository), its view rebased
on the name it is bound to, then this file's assignments applied in order. A value that is no
literal is ``UNKNOWN``; a call's keywords (``dict(...)``, ``L(f)(...)``) are its keys.
"""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainlint.discover import checked_roots, inside
from trainlint.job import Location
from trainlint.sources.base import consulted
from trainlint.sources.python.literal import UNKNOWN, Positions, literal
from trainlint.sources.python.walk import dotted_parts
from trainlint.sources.structured.hydra_defaults import repository_text

MAX_DEPTH = 8  # nested imports of config files
MAX_FILES = 64

View = dict[str, tuple[Any, Location]]


@dataclass
class Imported:
    """A config file a LazyConfig imports, as written and where."""

    module: str
    path: Path
    location: Location


@dataclass
class Reading:
    view: View = field(default_factory=dict)
    imports: list[Imported] = field(default_factory=list)  # of the file read, not its bases


@dataclass
class _Budget:
    files: int = 0


def parse_module(text: str) -> ast.Module:
    """The module's syntax tree; raises SyntaxError or ValueError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def read(path: str, tree: ast.Module, text: str) -> Reading:
    """The flat view of the LazyConfig ``path`` (already parsed as ``tree``) with its bases."""
    roots = checked_roots([Path(path).absolute()])
    reader = _Reader(roots, _Budget())
    reading = Reading()
    reader.apply(Path(path), tree, Positions(text), reading, (Path(path).resolve(),))
    return reading


@dataclass
class _Reader:
    roots: tuple[Path, ...]
    budget: _Budget

    def apply(
        self, path: Path, tree: ast.Module, positions: Positions, reading: Reading,
        stack: tuple[Path, ...],
    ) -> None:  # fmt: skip
        at = _located(path, positions)
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.level > 0:
                self._import(path, stmt, positions, reading, stack)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    name = dotted(target)
                    if name is not None:
                        assign(reading.view, name, stmt.value, at)
            elif isinstance(stmt, ast.AugAssign):
                augment(reading.view, stmt, at)
            else:
                for name, node in changed(stmt):
                    forget(reading.view, name, at(node))

    def _import(
        self, path: Path, stmt: ast.ImportFrom, positions: Positions, reading: Reading,
        stack: tuple[Path, ...],
    ) -> None:  # fmt: skip
        target = module_file(path, stmt.level, stmt.module or "")
        where = _located(path, positions)(stmt)
        if target is None:
            return
        if len(stack) == 1:
            written = "." * stmt.level + (stmt.module or "")
            reading.imports.append(Imported(written, target, where))
        base = self._base(target, stack)
        for alias in stmt.names:
            bound = alias.asname or alias.name
            for key in [k for k in reading.view if k == bound or k.startswith(bound + ".")]:
                del reading.view[key]
            for key, value in base.items():
                if key == alias.name or key.startswith(alias.name + "."):
                    reading.view[bound + key[len(alias.name) :]] = value

    def _base(self, target: Path, stack: tuple[Path, ...]) -> View:
        """The view of an imported config file; empty when it cannot be read here."""
        real = target.resolve()
        if len(stack) > MAX_DEPTH or real in stack or self.budget.files >= MAX_FILES:
            return {}
        if not any(inside(real, root) for root in self.roots):
            return {}
        self.budget.files += 1
        text = repository_text(target, self.roots)
        if text is None:
            return {}
        try:
            tree = parse_module(text)
        except (SyntaxError, ValueError):
            return {}
        base = Reading()
        self.apply(target, tree, Positions(text), base, (*stack, real))
        return base.view


def _located(path: Path, positions: Positions) -> Any:
    def at(node: ast.AST) -> Location:
        line, column = positions.of(node)
        return Location(file=path.as_posix(), line=line, column=column)

    return at


def module_file(path: Path, level: int, module: str) -> Path | None:
    """``from ..common.train import`` in configs/X/y.py → configs/common/train.py (or a
    package's ``__init__.py``); None when no such file exists."""
    folder = path.parent
    for _ in range(level - 1):
        folder = folder.parent
    parts = [part for part in module.split(".") if part]
    if not parts:
        return None
    candidates = [
        folder.joinpath(*parts).with_suffix(".py"),
        folder.joinpath(*parts, "__init__.py"),
    ]
    return next((c for c in candidates if consulted.is_file(c)), None)


def dotted(node: ast.expr) -> str | None:
    """``train.checkpointer.period`` → its dotted name; None for anything else."""
    parts = dotted_parts(node)
    return None if parts is None else ".".join(parts)


def assign(view: View, name: str, value: ast.expr, at: Any) -> None:
    """``name = value``: every key under ``name`` replaced by what ``value`` states."""
    for key in [k for k in view if k == name or k.startswith(name + ".")]:
        del view[key]
    for key, node, stated in _entries(name, value):
        view[key] = (stated, at(node))


_OPERATORS: dict[type[ast.operator], Any] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b if b else UNKNOWN,
}  # fmt: skip


def augment(view: View, stmt: ast.AugAssign, at: Any) -> None:
    """``train.max_iter *= 2`` (the 200-epoch config over the 100-epoch one): the new value
    when both sides are known integers, else unknown."""
    name = dotted(stmt.target)
    if name is None:
        return
    current = view.get(name, (UNKNOWN, None))[0]
    operand = literal(stmt.value)
    apply = _OPERATORS.get(type(stmt.op))
    numbers = all(isinstance(v, int) and not isinstance(v, bool) for v in (current, operand))
    value = apply(current, operand) if apply is not None and numbers else UNKNOWN
    view[name] = (value, at(stmt))


_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "merge_with",
                       "merge_with_dotlist", "__setitem__", "__delitem__"})  # fmt: skip
_SETTERS = frozenset({"setattr", "delattr", "OmegaConf.update", "OmegaConf.set_struct"})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def changed(stmt: ast.stmt) -> Iterator[tuple[str, ast.AST]]:
    """The config names a statement other than a plain assignment may change: assignments
    under an ``if``/``for``/``with``/``try``, ``del``, ``x.update(...)`` and ``setattr(x, ...)``;
    a function or class definition changes nothing until it is called."""
    if isinstance(stmt, _DEFINITIONS):
        return
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            yield from ((name, node) for t in targets if (name := dotted(t)) is not None)
        elif isinstance(node, ast.Call):
            yield from _mutated(node)


def _mutated(call: ast.Call) -> Iterator[tuple[str, ast.AST]]:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
        name = dotted(func.value)
        if name is not None:
            yield name, call
    if dotted(func) in _SETTERS and call.args and (name := dotted(call.args[0])) is not None:
        yield name, call


def forget(view: View, name: str, where: Location) -> None:
    """``name`` and every key under it: no longer known."""
    for key in [k for k in view if k == name or k.startswith(name + ".")]:
        view[key] = (UNKNOWN, where)


def _entries(name: str, value: ast.expr, depth: int = 0) -> Iterator[tuple[str, ast.AST, Any]]:
    """(dotted key, node, value) of a value: a mapping's items, a config call's keywords."""
    keywords = _config_keywords(value)
    if keywords is not None and depth < 16:
        yield name, value, {}
        for key, node in keywords:
            yield from _entries(f"{name}.{key}", node, depth + 1)
        return
    yield name, value, literal(value)


def _config_keywords(value: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """``dict(a=1)``, ``{"a": 1}``, ``L(f)(a=1)`` and ``OmegaConf.create()``: their keys."""
    if isinstance(value, ast.Dict):
        pairs = zip(value.keys, value.values, strict=True)
        return [
            (k.value, v)
            for k, v in pairs
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    if not isinstance(value, ast.Call):
        return None
    lazy = isinstance(value.func, ast.Call)  # L(f)(...)
    named = isinstance(value.func, ast.Name) and value.func.id == "dict"
    created = isinstance(value.func, ast.Attribute) and value.func.attr == "create"
    if not (lazy or named or created):
        return None
    return [(kw.arg, kw.value) for kw in value.keywords if kw.arg is not None]


def known(value: Any) -> Any:
    """A view's value, None when it is no literal."""
    return None if value is UNKNOWN else value


def relative(path: Path, target: Path) -> str:
    return Path(os.path.relpath(target, path.parent)).as_posix()
