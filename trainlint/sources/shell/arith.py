"""Bash integer arithmetic (``$((GPUS * NODES))``) over known values, never by ``eval``.

Only what launch scripts use: ``+ - * / % **``, unary minus, parentheses. Anything else, an
unknown variable, division by zero or a value past 64 bits is unknown (None).
"""

from __future__ import annotations

from collections.abc import Callable

import tree_sitter

MAX_NESTING = 32
_LIMIT = 2**63
_MAX_DIGITS = 64  # leading zeros and spaces included: no 64-bit number needs more


def evaluate(
    node: tree_sitter.Node,
    raw: Callable[[tree_sitter.Node], str],
    variable: Callable[[str], int | None],
    expansion: Callable[[tree_sitter.Node], int | None],
    depth: int = 0,
) -> int | None:
    """The value of an arithmetic expression node; ``variable``/``expansion`` read values."""
    if depth > MAX_NESTING:
        return None
    kind = node.type

    def sub(child: tree_sitter.Node) -> int | None:
        return evaluate(child, raw, variable, expansion, depth + 1)

    if kind == "number":
        return integer(raw(node))
    if kind == "variable_name":  # the grammar reads "-7%3" as a variable named "-7"
        literal = integer(raw(node))
        return literal if literal is not None else variable(raw(node))
    if kind in ("simple_expansion", "expansion"):
        return expansion(node)
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return sub(node.named_children[0])
    if kind == "unary_expression" and node.child_count == 2:
        operand, sign = sub(node.children[1]), node.children[0].type
        if operand is None or sign not in ("-", "+"):
            return None
        return -operand if sign == "-" else operand
    if kind == "binary_expression" and node.child_count == 3:
        return _binary(node.children[1].type, sub(node.children[0]), sub(node.children[2]))
    return None


def integer(text: str | None) -> int | None:
    """A decimal or ``0x`` hexadecimal integer; None for anything else (a text longer than
    any 64-bit number is written is not converted at all)."""
    if text is None or len(text) > _MAX_DIGITS:
        return None
    text = text.strip()
    try:
        value = int(text, 16) if text.lower().startswith("0x") else int(text, 10)
    except ValueError:
        return None
    return value if abs(value) < _LIMIT else None


def _binary(op: str, left: int | None, right: int | None) -> int | None:
    if left is None or right is None:
        return None
    if op in ("/", "%") and right == 0:
        return None
    if op == "/":
        quotient = abs(left) // abs(right)
        result = quotient if (left >= 0) == (right >= 0) else -quotient
    elif op == "%":
        remainder = abs(left) % abs(right)
        result = remainder if left >= 0 else -remainder
    elif op == "**":
        if not 0 <= right <= 64 or (abs(left).bit_length() - 1) * right > 64:
            return None  # past 64 bits: refused before the power is computed
        result = left**right
    elif op in ("+", "-", "*"):
        result = left + right if op == "+" else left - right if op == "-" else left * right
    else:
        return None
    return result if abs(result) < _LIMIT else None
