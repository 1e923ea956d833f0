"""Which arm of an ``if`` or ``case`` runs, when the script alone decides it.

Launch scripts pick their flags with a switch they set themselves (``DTYPE="fp8"`` then
``if [[ "$DTYPE" == "fp8" ]]``; ``MODEL_SCALE="800M"`` then ``case "${MODEL_SCALE}" in``). When
every value a condition reads is known, bash takes one arm and only that arm: the walker
(``shell.walk``) then reads that arm as straight-line code. Anything else (a command as the
condition, an unknown variable, a pattern it cannot match for sure) is undecided (None), and the
walker keeps treating every arm as maybe-run. Nothing is run.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import tree_sitter

from trainlint.sources.shell.arith import integer
from trainlint.sources.shell.words import Expander

_ARMS = ("elif_clause", "else_clause")
_GLOB = frozenset("*?[")
_EQUAL = ("=", "==")
_INTEGER = {
    "-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b, "-gt": lambda a, b: a > b, "-ge": lambda a, b: a >= b,
}  # fmt: skip


def if_arm(node: tree_sitter.Node, expander: Expander) -> list[tree_sitter.Node] | None:
    """The statements of the arm an ``if_statement`` runs ([] when none runs), or None when
    the script does not decide it."""
    arms = [_own_arm(node), *(_clause(c) for c in node.named_children if c.type in _ARMS)]
    for conditions, body in arms:
        if conditions is None:  # else
            return body
        decided = decide(conditions[0], expander) if len(conditions) == 1 else None
        if decided is None:
            return None
        if decided:
            return body
    return []


def case_arm(node: tree_sitter.Node, expander: Expander) -> list[tree_sitter.Node] | None:
    """The statements of the ``case_item`` a ``case_statement`` runs ([] when none matches), or
    None when the subject or a pattern before the match is unknown, or the matching item falls
    through (``;&``, ``;;&``)."""
    subject_node = node.child_by_field_name("value")
    subject = expander.resolve(subject_node, 0) if subject_node is not None else None
    if subject is None:
        return None
    for item in (c for c in node.named_children if c.type == "case_item"):
        matched = _item_matches(item, subject, expander)
        if matched is None:
            return None
        if matched:
            if any(c.type in (";&", ";;&") for c in item.children):
                return None
            return _item_body(item)
    return []


def decide(node: tree_sitter.Node, expander: Expander) -> bool | None:
    """The truth of a ``[ … ]`` / ``[[ … ]]`` test over known values; None when unknown."""
    if node.type != "test_command" or node.named_child_count != 1:
        return None
    expression = node.named_children[0]
    double = node.children[0].type == "[["
    if expression.type == "binary_expression":
        return _binary(expression, expander, double)
    if expression.type == "unary_expression":
        return _unary(expression, expander)
    return None


# An arm: its condition statements (None for ``else``) and its body.
_Arm = tuple[list[tree_sitter.Node] | None, list[tree_sitter.Node]]


def _own_arm(node: tree_sitter.Node) -> _Arm:
    conditions: list[tree_sitter.Node] = []
    body: list[tree_sitter.Node] = []
    for index, child in enumerate(node.children):
        if not child.is_named or child.type in _ARMS:
            continue
        role = node.field_name_for_child(index)
        (conditions if role == "condition" else body).append(child)
    return conditions, body


def _clause(node: tree_sitter.Node) -> _Arm:
    """``elif COND; then BODY`` or ``else BODY``."""
    named = node.named_children
    if node.type == "else_clause":
        return None, named
    return named[:1], named[1:]


def _binary(node: tree_sitter.Node, expander: Expander, double: bool) -> bool | None:
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    operator = node.child_by_field_name("operator")
    if left is None or right is None or operator is None:
        return None
    op = expander.raw(operator)
    a, b = expander.resolve(left, 0), expander.resolve(right, 0)
    if a is None or b is None:
        return None
    if op in _INTEGER:
        x, y = integer(a), integer(b)
        return None if x is None or y is None else bool(_INTEGER[op](x, y))
    if op not in (*_EQUAL, "!="):
        return None
    pattern = double and right.type in ("word", "extglob_pattern") and bool(_GLOB & set(b))
    same = fnmatchcase(a, b) if pattern else a == b
    return same if op in _EQUAL else not same


def _unary(node: tree_sitter.Node, expander: Expander) -> bool | None:
    operator, *operands = node.children
    op = expander.raw(operator)
    if op not in ("-n", "-z") or len(operands) != 1:
        return None
    value = expander.resolve(operands[0], 0)
    if value is None:
        return None
    return bool(value) if op == "-n" else not value


def _item_matches(item: tree_sitter.Node, subject: str, expander: Expander) -> bool | None:
    for index, child in enumerate(item.children):
        if item.field_name_for_child(index) != "value":
            continue
        raw = expander.raw(child)
        pattern = raw if child.type == "extglob_pattern" else expander.resolve(child, 0)
        if pattern is None or (child.type == "word" and "\\" in raw):
            return None  # unknown, or an escaped glob character fnmatch would read as a glob
        quoted = child.type in ("string", "raw_string")
        if (subject == pattern) if quoted else fnmatchcase(subject, pattern):
            return True
    return False


def _item_body(item: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [
        child
        for index, child in enumerate(item.children)
        if child.is_named and item.field_name_for_child(index) != "value"
    ]
