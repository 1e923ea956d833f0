"""MMEngine (OpenMMLab) Python configs, read as MMEngine's ``Config.fromfile`` builds them,
through ``ast`` only: nothing is imported or run.

A config is a module of assignments (``train_cfg = dict(by_epoch=True, max_epochs=100)``).
Two ways to inherit (mmengine/config/config.py):

- **``_base_``** (a path or a list of paths relative to the file): each base is read in
  order and merged into one view; the file's own keys are then merged over it, dict into
  dict, a dict with ``_delete_=True`` replacing the base's dict and any other value replacing
  it whole (``Config._merge_a_into_b``). ``_base_.x.y`` and ``{{_base_.x.y}}`` read a base's
  value. A base of an installed package (``mmdet::...``) cannot be read here.
- **``with read_base():``** followed by ``from .._base_.x import *`` (the newer pure-Python
  style): the imported names become the module's names and Python's own rules apply (an
  assignment replaces, ``x.update(...)`` and ``x.merge(...)`` change it).

Values are literals, ``dict(...)`` calls, the module's own names, arithmetic on numbers and
those base references; a class named instead of a string (``type=ResNet``) is a ``Symbol``;
anything else is unknown, and a name assigned inside ``if``/``for``/``try`` is unknown too.
Each key keeps where it was written (the keyword or dict key that won), so a fact points at
the line a user would change.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from trainlint.discover import checked_roots
from trainlint.job import Location
from trainlint.sources.base import consulted
from trainlint.sources.python.literal import UNKNOWN, Positions, literal
from trainlint.sources.python.walk import dotted_parts
from trainlint.sources.structured import MAX_DEPTH, MAX_NODES, KeyPath
from trainlint.sources.structured.hydra_defaults import repository_text

MAX_FILES = 64
"""Config files one view may read (a base of a base...): bounded, so a hostile tree ends."""


@dataclass(frozen=True)
class Symbol:
    """A name a config uses as a value without defining it: a class imported in a pure-Python
    config (``type=ResNet``), ``torch.bfloat16``. Its text, never its value."""

    name: str

    @property
    def last(self) -> str:
        return self.name.rsplit(".", 1)[-1]


def type_name(value: Any) -> str:
    """``'AmpOptimWrapper'``, ``AmpOptimWrapper`` (a class) or ``'mmdet.X'`` → the class name;
    a dict → that of its ``type``."""
    if isinstance(value, dict):
        value = value.get("type")
    if isinstance(value, Symbol):
        return value.last
    return value.rsplit(".", 1)[-1] if isinstance(value, str) else ""


@dataclass
class Located:
    """A value and where each part of it was written, by path relative to the value."""

    data: Any
    where: dict[KeyPath, Location] = field(default_factory=dict)

    def at(self, path: KeyPath) -> Located:
        """The part of the value at ``path`` (UNKNOWN when absent)."""
        node = self.data
        for part in path:
            if not _has(node, part):
                return Located(UNKNOWN)
            node = node[part]
        size = len(path)
        where = {p[size:]: w for p, w in self.where.items() if p[:size] == path}
        return Located(node, where)


@dataclass(frozen=True)
class BaseFile:
    """A base the config names: as written, where, and the file it is (None: not readable
    here, with why)."""

    written: str
    location: Location
    path: Path | None
    unresolved: str | None = None


@dataclass
class View:
    """A config as MMEngine builds it: its keys (merged over its bases), the bases it names
    itself, and whether every base could be read (when not, a key left unset may be set by
    the unread base, so no framework default may stand in for it)."""

    config: Located
    bases: list[BaseFile] = field(default_factory=list)
    complete: bool = True


def read_view(path: Path, text: str, tree: ast.Module) -> View:
    """The view of the config at ``path`` (its text already parsed to ``tree``)."""
    reader = _Reader(checked_roots([path.absolute()]))
    return reader.view(path, text, tree, (path.resolve(),))


_BASE_REF = re.compile(r"\{\{\s*_base_\.([\w.]+)\s*\}\}")


class _Reader:
    """Reads a config and its bases, counting files against ``MAX_FILES``."""

    def __init__(self, roots: tuple[Path, ...]) -> None:
        self.roots = roots
        self.files = 0

    def view(self, path: Path, text: str, tree: ast.Module, stack: tuple[Path, ...]) -> View:
        module = _Module(self, path, Positions(text), stack)
        module.run(tree)
        if module.old_style:
            config = merge(module.base, Located(module.own_keys(), module.own_where()))
        else:
            config = Located(module.own_keys(), module.own_where())
        return View(config, module.bases, module.complete)

    def base_view(self, base: BaseFile, stack: tuple[Path, ...]) -> View | None:
        """A base's own view; None when it cannot be read (outside the repository, a cycle,
        too many files, not Python)."""
        target = base.path
        if target is None or target.resolve() in stack or self.files >= MAX_FILES:
            return None
        self.files += 1
        text = repository_text(target, self.roots)
        if text is None:
            return None
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            return None
        return self.view(target, text, tree, (*stack, target.resolve()))


class _Module:
    """One config module's statements, run over literal values."""

    def __init__(self, reader: _Reader, path: Path, positions: Positions,
                 stack: tuple[Path, ...]) -> None:  # fmt: skip
        self.reader, self.path, self.positions, self.stack = reader, path, positions, stack
        self.names: dict[str, Located] = {}
        self.base = Located({})
        self.bases: list[BaseFile] = []
        self.complete = True
        self.old_style = False

    def own_keys(self) -> dict[str, Any]:
        return {k: v.data for k, v in self.names.items() if _is_key(k, v.data)}

    def own_where(self) -> dict[KeyPath, Location]:
        return {
            (key, *path): where
            for key, value in self.names.items()
            if _is_key(key, value.data)
            for path, where in value.where.items()
        }

    def where(self, node: ast.AST) -> Location:
        line, column = self.positions.of(node)
        return Location(file=self.path.as_posix(), line=line, column=column)

    # Statements --------------------------------------------------------------------------

    def run(self, tree: ast.Module) -> None:
        for statement in tree.body:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            value = self.value(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, self.value(node.value))
        elif isinstance(node, ast.With) and _reads_base(node):
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom):
                    self.import_base(inner)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.method_call(node.value)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                self.names[local] = Located(Symbol(alias.name))
        else:
            for name in _assigned_names(node):
                self.names[name] = Located(UNKNOWN)

    def assign(self, target: ast.expr, value: Located) -> None:
        if isinstance(target, ast.Name):
            if target.id == "_base_":
                self.set_bases(target, value)
                return
            where = dict(value.where)
            where[()] = self.where(target)
            self.names[target.id] = Located(value.data, where)
            return
        chain = _item_chain(target)
        if chain is None or chain[0] not in self.names:
            for name in _names_in(target):
                self.names[name] = Located(UNKNOWN)
            return
        root, *keys = chain
        self.names[root] = _set_in(self.names[root], tuple(keys), value, self.where(target))

    def method_call(self, call: ast.Call) -> None:
        """``x.update(a=1)`` (keys replaced) and ``x.merge(dict(...))`` (merged, as
        MMEngine's ``ConfigDict.merge``); any other call on a name makes it unknown."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return
        name = func.value.id
        if name not in self.names:
            return
        current = self.names[name]
        given = self.call_arguments(call)
        if func.attr == "update" and isinstance(current.data, dict):
            self.names[name] = merge(current, given, deep=False)
        elif func.attr == "merge" and isinstance(current.data, dict):
            self.names[name] = merge(current, given)
        else:
            self.names[name] = Located(UNKNOWN)

    def call_arguments(self, call: ast.Call) -> Located:
        """``f(dict(a=1), b=2)``: the positional dict and the keywords, as one dict."""
        merged = Located({})
        for arg in call.args:
            merged = merge(merged, self.value(arg), deep=False)
        return merge(merged, self.keywords(call.keywords), deep=False)

    # Bases -------------------------------------------------------------------------------

    def set_bases(self, target: ast.expr, value: Located) -> None:
        """``_base_ = 'x.py'`` or a list: read each in order into one view."""
        self.old_style = True
        written = value.data if isinstance(value.data, list) else [value.data]
        for index, item in enumerate(written):
            where = value.where.get((index,) if isinstance(value.data, list) else ())
            location = where or self.where(target)
            if not isinstance(item, str):
                self.complete = False
                continue
            self.add_base(_base_file(item, location, self.path))

    def import_base(self, node: ast.ImportFrom) -> None:
        """``from .._base_.models.resnet50 import *`` inside ``with read_base():``."""
        base = _imported_file(node, self.where(node), self.path)
        view = self.add_base(base)
        if view is None:
            for alias in node.names:
                if alias.name != "*":
                    self.names[alias.asname or alias.name] = Located(UNKNOWN)
            return
        wanted = {alias.name: alias.asname or alias.name for alias in node.names}
        for key in view.config.data:
            if "*" in wanted or key in wanted:
                self.names[wanted.get(key, key)] = view.config.at((key,))

    def add_base(self, base: BaseFile) -> View | None:
        self.bases.append(base)
        view = self.reader.base_view(base, self.stack)
        if view is None:
            self.complete = False
            return None
        self.complete = self.complete and view.complete
        self.base = merge(self.base, view.config)
        return view

    # Values ------------------------------------------------------------------------------

    def value(self, node: ast.AST, depth: int = 0) -> Located:
        """The value of an expression with where its parts are written."""
        if depth > MAX_DEPTH:
            return Located(UNKNOWN)
        if isinstance(node, ast.Dict):
            return self.dict_display(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self.sequence(node, depth)
        if isinstance(node, ast.Name):
            found = self.names.get(node.id)
            return found if found is not None else Located(Symbol(node.id))
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        return self.expression(node, depth)

    def expression(self, node: ast.AST, depth: int) -> Located:
        """Base references, items of known values, arithmetic and literals."""
        if isinstance(node, ast.Set):
            return self.base_reference(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, depth)
        if isinstance(node, ast.BinOp):
            return self.arithmetic(node, depth)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _BASE_REF.fullmatch(node.value.strip())
            if match:
                return self.base.at(tuple(match.group(1).split(".")))
        return Located(literal(node), {(): self.where(node)})

    def sequence(self, node: ast.List | ast.Tuple, depth: int) -> Located:
        items: list[Any] = []
        where: dict[KeyPath, Location] = {(): self.where(node)}
        for index, element in enumerate(node.elts):
            item = self.value(element, depth + 1)
            if len(where) + len(item.where) > MAX_NODES:
                return Located(UNKNOWN)
            items.append(item.data)
            where.update({(index, *p): w for p, w in item.where.items()})
        return Located(items, where)

    def dict_display(self, node: ast.Dict, depth: int) -> Located:
        result = Located({}, {(): self.where(node)})
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:  # ``**other``
                result = merge(result, self.value(value_node, depth + 1), deep=False)
                continue
            key = literal(key_node)
            if not isinstance(key, str):
                return Located(UNKNOWN)
            item = self.value(value_node, depth + 1)
            result = _put(result, key, item, self.where(key_node))
        return result

    def call(self, node: ast.Call, depth: int) -> Located:
        if isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
            return self.keywords(node.keywords, depth, self.where(node))
        return Located(UNKNOWN)

    def keywords(self, keywords: list[ast.keyword], depth: int = 0,
                 at: Location | None = None) -> Located:  # fmt: skip
        result = Located({}, {(): at} if at else {})
        for keyword in keywords:
            item = self.value(keyword.value, depth + 1)
            if keyword.arg is None:
                result = merge(result, item, deep=False)
            else:
                result = _put(result, keyword.arg, item, self.where(keyword))
        return result

    def attribute(self, node: ast.Attribute) -> Located:
        """``_base_.model.backbone`` reads the bases; ``x.y`` a dict's key (the pure-Python
        style's ConfigDict); ``torch.bfloat16`` is a Symbol."""
        chain = dotted_parts(node)
        if chain is None:
            return Located(UNKNOWN)
        root, *rest = chain
        if root == "_base_":
            return self.base.at(tuple(rest))
        found = self.names.get(root)
        if found is not None and not isinstance(found.data, Symbol):
            return found.at(tuple(rest))
        return Located(Symbol(".".join(chain)))

    def base_reference(self, node: ast.Set) -> Located:
        """``{{_base_.x}}``: old-style text substitution, which parses as a set of a set."""
        inner = node.elts[0] if len(node.elts) == 1 else None
        if isinstance(inner, ast.Set) and len(inner.elts) == 1:
            chain = dotted_parts(inner.elts[0])
            if chain and chain[0] == "_base_":
                return self.base.at(tuple(chain[1:]))
        return Located(UNKNOWN)

    def subscript(self, node: ast.Subscript, depth: int) -> Located:
        container = self.value(node.value, depth + 1)
        key = literal(node.slice)
        if isinstance(key, (str, int)) and not isinstance(key, bool):
            return container.at((key,))
        return Located(UNKNOWN)

    def arithmetic(self, node: ast.BinOp, depth: int) -> Located:
        """Numbers only, through ``literal``'s bounded arithmetic."""
        left, right = self.value(node.left, depth + 1).data, self.value(node.right, depth + 1).data
        numbers = all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)
        )
        if not numbers:
            return Located(UNKNOWN)
        folded = ast.BinOp(ast.Constant(left), node.op, ast.Constant(right))
        return Located(literal(folded), {(): self.where(node)})


def merge(base: Located, top: Located, deep: bool = True) -> Located:
    """``top`` over ``base`` as MMEngine merges a config into its bases: dicts key by key
    (``deep``; only the first level otherwise, as ``dict.update``), ``_delete_=True``
    replacing, any other value replacing whole."""
    if not (isinstance(base.data, dict) and isinstance(top.data, dict)):
        return Located(top.data, dict(top.where))
    result = Located(dict(base.data), dict(base.where))
    if () in top.where:
        result.where.setdefault((), top.where[()])
    for key, value in top.data.items():
        if key == "_delete_":
            continue
        item = top.at((key,))
        replace = not deep or not isinstance(value, dict) or value.get("_delete_") is True
        if not replace and isinstance(base.data.get(key), dict):
            item = merge(base.at((key,)), item)
        result = _put(result, key, _without_delete(item), item.where.get(()))
    return result


def _has(node: Any, part: str | int) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def _without_delete(value: Located) -> Located:
    if isinstance(value.data, dict) and "_delete_" in value.data:
        data = {k: v for k, v in value.data.items() if k != "_delete_"}
        return Located(data, {p: w for p, w in value.where.items() if p[:1] != ("_delete_",)})
    return value


def _put(into: Located, key: str, item: Located, at: Location | None) -> Located:
    """``into`` with ``key`` set to ``item`` (the old value's places dropped). Every key and
    item has a place, so the places count the tree: values share their parts (``a = [b, b]``)
    and a few lines could describe billions of nodes, so past ``MAX_NODES`` it is unknown."""
    if len(into.where) + len(item.where) > MAX_NODES:
        return Located(UNKNOWN)
    data = dict(into.data) if isinstance(into.data, dict) else {}
    data[key] = item.data
    where = {p: w for p, w in into.where.items() if p[:1] != (key,)}
    where.update({(key, *p): w for p, w in item.where.items()})
    if at is not None:
        where[(key,)] = at
    return Located(data, where)


def _set_in(root: Located, keys: KeyPath, value: Located, at: Location) -> Located:
    """``root`` with the value at ``keys`` replaced (``x['a']['b'] = 1``, ``x.a.b = 1``)."""
    if not keys:
        return value
    head, rest = keys[0], keys[1:]
    if not isinstance(root.data, dict) or not isinstance(head, str):
        return Located(UNKNOWN)
    child = root.at((head,)) if head in root.data else Located({})
    return _put(root, head, _set_in(child, rest, value, at), at if not rest else None)


def _is_key(name: str, value: Any) -> bool:
    """A config key: a module name not starting with ``_`` that is no imported module."""
    return not name.startswith("_") and not isinstance(value, Symbol)


def _reads_base(node: ast.With) -> bool:
    """``with read_base():`` (the pure-Python style's import of its bases)."""
    for item in node.items:
        call = item.context_expr
        if isinstance(call, ast.Call):
            func = call.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "read_base":
                return True
    return False


def _assigned_names(node: ast.AST) -> set[str]:
    """Every name a compound statement may assign (its value is then unknown)."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            found.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(child.name)
    return found


def _names_in(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _item_chain(node: ast.AST) -> tuple[str, ...] | None:
    """``x['a'].b`` as ``("x", "a", "b")``: an assignment target into a config dict."""
    parts: list[str] = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        else:
            key = literal(node.slice)
            if not isinstance(key, str):
                return None
            parts.append(key)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return None
    return (node.id, *reversed(parts))


PACKAGE_BASE = "a base config of an installed package ({package}::), not in this repository"


def _base_file(written: str, location: Location, referrer: Path) -> BaseFile:
    """``_base_`` entry → the file (relative to the referring config)."""
    if "::" in written:
        package = written.split("::", 1)[0]
        return BaseFile(written, location, None, PACKAGE_BASE.format(package=package))
    if not written.endswith(".py"):
        return BaseFile(written, location, None, "a base config that is not Python")
    return BaseFile(written, location, Path(os.path.normpath(referrer.parent / written)))


def _imported_file(node: ast.ImportFrom, location: Location, referrer: Path) -> BaseFile:
    """``from .._base_.models.resnet50 import *`` → ``../_base_/models/resnet50.py``; an
    absolute import (``from mmdet.configs...``) is a package's."""
    module = node.module or ""
    if node.level == 0:
        package = module.split(".", 1)[0]
        return BaseFile(module, location, None, PACKAGE_BASE.format(package=package))
    up = "../" * (node.level - 1)
    written = str(PurePosixPath(up + module.replace(".", "/") + ".py"))
    if not consulted.is_file(referrer.parent / written):
        package = str(PurePosixPath(up + module.replace(".", "/") + "/__init__.py"))
        written = package if consulted.is_file(referrer.parent / package) else written
    return BaseFile(written, location, Path(os.path.normpath(referrer.parent / written)))
