"""Loops that never end by themselves: ``while true``, ``while :``, ``until false``,
``while [ 1 ]``, ``while (( 1 ))``, ``for ((;;))`` with no ``break``/``exit``/``return``
anywhere in the body.

A launch inside one is an uncapped resume loop: a run that crashes deterministically is
relaunched until the allocation ends. Read from the syntax tree, never run.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter

from trainlint.sources.shell.walk import descendants

_ALWAYS = {"while": {"true", ":"}, "until": {"false"}}
_LEAVES = frozenset({"break", "exit", "return"})


@dataclass(frozen=True)
class Loop:
    """An endless loop spanning lines ``line``..``end_line`` (1-based), at ``column``."""

    line: int
    column: int
    end_line: int

    def holds(self, line: int) -> bool:
        return self.line < line <= self.end_line or line == self.line


def endless(node: tree_sitter.Node, text: str) -> Loop | None:
    """``node`` as a Loop when its condition never ends it and its body never leaves it."""
    if not (_always_true(node, text) and not _leaves(node, text)):
        return None
    return Loop(node.start_point[0] + 1, node.start_point[1] + 1, node.end_point[0] + 1)


def _always_true(node: tree_sitter.Node, text: str) -> bool:
    """``while true`` / ``while :`` / ``until false`` / ``while [ 1 ]`` / ``for ((;;))``
    (no condition)."""
    if node.type == "c_style_for_statement":
        return node.child_by_field_name("condition") is None
    if node.type != "while_statement" or not node.children:
        return False
    keyword = node.children[0].type
    condition = node.child_by_field_name("condition")
    if condition is None or condition.named_child_count != 1:
        return False
    written = text[condition.start_byte : condition.end_byte].strip()
    if condition.type == "command":
        return written.removeprefix("/bin/").removeprefix("/usr/bin/") in _ALWAYS.get(
            keyword, set()
        )
    return keyword == "while" and _constant_test(condition, written)


def _constant_test(condition: tree_sitter.Node, written: str) -> bool:
    """``[ 1 ]``, ``[[ true ]]`` (a non-empty literal is true) and ``(( 1 ))`` (a non-zero
    number): a test of constants, not of anything the loop changes."""
    only = condition.named_children[0]
    if condition.type == "test_command":
        return only.type in ("number", "word") and not written.startswith("[ -")
    if condition.type == "compound_statement" and written.startswith("(("):
        return only.type == "number" and _text_number(written) not in (None, 0)
    return False


def _text_number(written: str) -> int | None:
    digits = written.strip("() ")
    return int(digits) if digits.isdigit() else None


def _leaves(node: tree_sitter.Node, text: str) -> bool:
    """Whether a ``break``, ``exit`` or ``return`` appears anywhere in the loop's body."""
    body = node.child_by_field_name("body")
    if body is None:
        return True  # nothing to read: never claim it endless
    for child in descendants(body):
        if child.type == "command_name" and text[child.start_byte : child.end_byte] in _LEAVES:
            return True
    return False
