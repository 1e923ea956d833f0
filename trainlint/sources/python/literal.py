"""Literal values of Python syntax nodes, read without running anything.

Only constants, lists, tuples and dicts of constants, and arithmetic on numbers
(``5 * 8``, ``2**10``, ``-1``) are values; a name, a call, an f-string or anything else is
unknown. Arithmetic is bounded in depth and magnitude, so ``10**10**10`` or a string repeated
a billion times is never computed: numbers only, never strings.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Any

from trainlint.sources.structured import MAX_DEPTH, KeyPath, Tree

UNKNOWN: Any = object()  # the value of a node that is not a literal
MAX_NESTING = 32
MAX_MAGNITUDE = 10**30
MAX_EXPONENT = 128
MAX_ITEMS = 10_000

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}  # fmt: skip
_NEWLINE = re.compile(r"\r\n|\r|\n")


def literal(node: ast.AST | None, depth: int = 0) -> Any:
    """The value ``node`` states literally, or UNKNOWN."""
    if node is None or depth > MAX_NESTING:
        return UNKNOWN
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (bool, str)):
            return value
        return _bounded(value)  # huge ints and complex numbers are unknown
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [literal(item, depth + 1) for item in node.elts[:MAX_ITEMS]]
        ok = len(node.elts) <= MAX_ITEMS and all(item is not UNKNOWN for item in items)
        return items if ok else UNKNOWN
    if isinstance(node, ast.Dict):
        return _dict(node, depth)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = literal(node.operand, depth + 1)
        if not _is_number(value):
            return UNKNOWN
        return _bounded(-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _arithmetic(node, depth)
    return UNKNOWN


def _dict(node: ast.Dict, depth: int) -> Any:
    if len(node.keys) > MAX_ITEMS:
        return UNKNOWN
    result: dict[str, Any] = {}
    for key_node, value_node in zip(node.keys, node.values, strict=True):
        key, value = literal(key_node, depth + 1), literal(value_node, depth + 1)
        if not isinstance(key, str):
            return UNKNOWN  # ``**other`` or a computed key: the dict as a whole is unknown
        if value is not UNKNOWN:
            result[key] = value
    return result


def _arithmetic(node: ast.BinOp, depth: int) -> Any:
    left, right = literal(node.left, depth + 1), literal(node.right, depth + 1)
    if not (_is_number(left) and _is_number(right)):
        return UNKNOWN
    if isinstance(node.op, ast.Pow) and (abs(right) > MAX_EXPONENT or abs(left) > MAX_MAGNITUDE):
        return UNKNOWN
    try:
        return _bounded(_BINARY[type(node.op)](left, right))
    except (ArithmeticError, ValueError):
        return UNKNOWN  # division by zero, float overflow


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bounded(value: Any) -> Any:
    if not _is_number(value):
        return UNKNOWN  # e.g. a complex result of (-8) ** 0.5
    if isinstance(value, float) and not math.isfinite(value):
        return UNKNOWN
    return value if abs(value) <= MAX_MAGNITUDE else UNKNOWN


class Positions:
    """1-based (line, column) of nodes; ast gives UTF-8 byte columns, users count characters."""

    def __init__(self, text: str) -> None:
        self.lines = _NEWLINE.split(text)

    def of(self, node: ast.AST) -> tuple[int, int]:
        line = max(1, getattr(node, "lineno", 1))
        offset = max(0, getattr(node, "col_offset", 0))
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        prefix = text.encode("utf-8", "surrogatepass")[:offset]
        return line, len(prefix.decode("utf-8", "replace")) + 1


def dict_tree(node: ast.Dict, root: tuple[int, int], positions: Positions) -> Tree:
    """A structured Tree of a dict literal, each key at its own position, so the tables written
    for JSON (DeepSpeed's) read it unchanged; values that are not literals are left out."""
    spans: dict[KeyPath, tuple[int, int]] = {(): root}
    data = _tree_value(node, (), positions, spans)
    return Tree(data if isinstance(data, dict) else {}, spans)


def _tree_value(
    node: ast.AST, path: KeyPath, positions: Positions, spans: dict[KeyPath, tuple[int, int]]
) -> Any:
    if len(path) > MAX_DEPTH:
        return UNKNOWN
    if isinstance(node, ast.Dict):
        result: dict[str, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            key = literal(key_node)
            if not isinstance(key, str) or key_node is None:
                continue
            child = (*path, key)
            value = _tree_value(value_node, child, positions, spans)
            if value is not UNKNOWN:
                spans[child] = positions.of(key_node)
                result[key] = value
        return result
    return literal(node)
