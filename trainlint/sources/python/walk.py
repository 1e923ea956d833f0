"""One pass over a parsed module: the calls, assignments, classes and imports the Python
reader looks at, each call marked when it only runs under an ``if``.

The walk is iterative (an explicit stack), so a deeply nested expression cannot exhaust
Python's recursion limit, and nothing is ever imported or run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Scan:
    imports: dict[str, str] = field(default_factory=dict)  # local name → dotted origin
    calls: list[tuple[ast.Call, bool]] = field(default_factory=list)  # (call, conditional)
    assigns: list[tuple[ast.Assign, bool]] = field(default_factory=list)
    dataclasses: list[ast.ClassDef] = field(default_factory=list)

    def full_name(self, node: ast.AST) -> str:
        """``L.Trainer`` → ``lightning.Trainer`` through the module's imports; a callee that
        is not a dotted name (``f()()``) starts with ``?``."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        head = self.imports.get(node.id, node.id) if isinstance(node, ast.Name) else "?"
        return ".".join([head, *reversed(parts)])


def scan(tree: ast.Module) -> Scan:
    found = Scan()
    for node, conditional in _walk(tree):
        if isinstance(node, ast.Call):
            found.calls.append((node, conditional))
        elif isinstance(node, ast.Assign):
            found.assigns.append((node, conditional))
        elif isinstance(node, ast.ClassDef) and any(map(_is_dataclass, node.decorator_list)):
            found.dataclasses.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.imports.update(_bindings(node))
    return found


def _walk(tree: ast.Module) -> Iterator[tuple[ast.AST, bool]]:
    """Every node in source order, with whether an ``if`` (other than the ``__main__`` guard)
    or a conditional expression encloses it."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, conditional = stack.pop()
        yield node, conditional
        inner = conditional or isinstance(node, ast.IfExp)
        if isinstance(node, ast.If) and not is_main_guard(node.test):
            inner = True
        children = list(ast.iter_child_nodes(node))
        stack.extend((child, inner) for child in reversed(children))


def is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _is_dataclass(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "dataclass"


def _bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """``import lightning as L`` binds L → lightning; ``import a.b`` binds a → a;
    ``from torch.profiler import profile`` binds profile → torch.profiler.profile."""
    if isinstance(node, ast.Import):
        return {
            alias.asname or alias.name.split(".")[0]: alias.name
            if alias.asname
            else alias.name.split(".")[0]
            for alias in node.names
        }
    module = "." * node.level + (node.module or "")
    return {
        alias.asname or alias.name: f"{module}.{alias.name}"
        for alias in node.names
        if alias.name != "*"
    }


def keyword_names(call: ast.Call) -> set[str]:
    return {kw.arg for kw in call.keywords if kw.arg is not None}


def dotted_parts(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None for anything that is no dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]
