"""The walk behind ``shell.parse_script``: statements in text order with a variable table.

Assignments inside an if/case/loop/function make the variable unknown afterwards (the branch
may or may not have run); subshells and pipeline stages do not leak assignments; commands
inside ``$(...)`` and heredoc bodies are not commands of the script.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

from trainlint.errors import SourceError
from trainlint.sources.shell.conditions import case_arm, if_arm
from trainlint.sources.shell.words import (
    MAX_ITEMS,
    Expander,
    ExpansionBudget,
    Value,
    Variables,
    Word,
    capped,
    known,
    position,
)

MAX_DEPTH = 100
_CONTINUATION = re.compile(r"\\\r?\n")


@dataclass(frozen=True)
class Assignment:
    """``NAME=value`` (plain, exported, or a command prefix); value None when unknown."""

    name: str
    value: str | None
    line: int
    column: int
    exported: bool
    conditional: bool


@dataclass(frozen=True)
class Command:
    """A simple command after expansion; ``env`` holds its prefix assignments."""

    name: Word
    args: tuple[Word, ...]
    env: tuple[Assignment, ...]
    line: int
    column: int
    text: str
    conditional: bool

    @property
    def words(self) -> tuple[Word, ...]:
        return (self.name, *self.args)


@dataclass(frozen=True)
class FedScript:
    """A script fed to ``program`` (sbatch, bash) through a heredoc starting at ``line``."""

    text: str
    line: int
    program: str
    conditional: bool


_FED_PROGRAMS = frozenset({"sbatch", "bash", "sh"})
_ARMS = {"elif_clause", "else_clause", "case_item"}
_BRANCHES = {
    "if_statement", "case_statement", "while_statement", "for_statement",
    "c_style_for_statement", "function_definition",
}  # fmt: skip
_CONDITIONAL = {"if_statement", "case_statement", "while_statement"}
_ISOLATED = {"subshell", "pipeline"}
_SKIPPED = {
    "comment", "heredoc_body", "heredoc_redirect", "file_redirect", "herestring_redirect",
    "command_substitution", "process_substitution",
}  # fmt: skip
_ARITH_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "++", "--", "<<=", ">>=", "&=", "|=", "^="}
_VARIABLE_READERS = {"read", "mapfile", "readarray", "getopts", "let", "printf"}


class Walker:
    def __init__(
        self, text: str, variables: Variables, budget: ExpansionBudget | None = None
    ) -> None:
        self.text = text
        self.vars = variables
        self.budget = budget if budget is not None else ExpansionBudget.for_text(text)
        self.exported: set[str] = set()
        self.commands: list[Command] = []
        self.assignments: list[Assignment] = []
        self.written: list[str] = []  # files the script writes (``> ds_config.json``)
        self.fed: list[FedScript] = []  # scripts fed to a shell or sbatch through a heredoc

    def raw(self, node: tree_sitter.Node) -> str:
        return self.text[node.start_byte : node.end_byte]

    def block(self, node: tree_sitter.Node, conditional: bool, depth: int) -> None:
        for child in node.named_children:
            self.statement(child, conditional, depth + 1)

    def statement(self, node: tree_sitter.Node, conditional: bool, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise SourceError(f"nesting deeper than {MAX_DEPTH} levels", *position(node))
        kind = node.type
        if kind == "command":
            self.command(node, conditional)
        elif kind == "variable_assignment":
            self.assign(node, False, conditional)
        elif kind == "declaration_command":
            self.declare(node, conditional)
        elif kind == "unset_command":
            self.unset(node, conditional)
        elif kind in _BRANCHES:
            self.branch(node, conditional, depth)
        elif kind in _ISOLATED:
            self.isolated(node.named_children, conditional, depth)
        elif kind == "list":
            self.chain(node, conditional, depth)
        elif kind in ("binary_expression", "unary_expression", "postfix_expression"):
            self.arithmetic_effects(node)
        elif kind in ("file_redirect", "redirected_statement"):
            self.redirection(node, conditional, depth)
        elif kind not in _SKIPPED:
            self.block(node, conditional, depth)

    def expander(self) -> Expander:
        return Expander(self.text, self.vars, self.budget)

    def scoped(
        self, nodes: list[tree_sitter.Node], conditional: bool, depth: int
    ) -> dict[str, Value]:
        """Walk ``nodes`` in a scope over the variables (an overlay, not a copy of the
        table: linear in what the branch changes); the names they changed, with the values
        they left (None for one they unset)."""
        before = self.vars
        self.vars = before.copy()
        for node in nodes:
            self.statement(node, conditional, depth + 1)
        changed = {name: self.vars.get(name)[1] for name in self.vars.changed()}
        self.vars = before
        return changed

    def branch(self, node: tree_sitter.Node, conditional: bool, depth: int) -> None:
        """if/case/loops/functions: any variable set inside is unknown afterwards, but for an
        array the branch only appended to (``A+=(…)``): its items before the branch stay,
        followed by one unknown item. An if/case the script's own values decide
        (``shell.conditions``) runs its one arm as straight-line code.

        Commands inside if/case/while are conditional; for-loop and function bodies inherit.
        """
        if self.decided(node, conditional, depth):
            return
        loop_variable = (
            node.child_by_field_name("variable") if node.type == "for_statement" else None
        )
        if loop_variable is not None:
            self.vars.assign(self.raw(loop_variable), None)
        conditional = conditional or node.type in _CONDITIONAL
        children = node.named_children
        scopes = [self.scoped([c for c in children if c.type not in _ARMS], conditional, depth)]
        scopes += [
            self.scoped(arm.named_children, conditional, depth)
            for arm in children
            if arm.type in _ARMS
        ]
        unknown = Word(None, self.raw(node).split(None, 1)[0], *position(node))
        for name in set().union(*scopes):
            before = self.vars.get(name)[1]
            after = [scope.get(name, before) for scope in scopes]
            self.vars.assign(name, _extended(before, after, unknown))

    def decided(self, node: tree_sitter.Node, conditional: bool, depth: int) -> bool:
        """Walk the one arm of an if/case the script decides; whether it did."""
        if node.type == "if_statement":
            arm = if_arm(node, self.expander())
        elif node.type == "case_statement":
            arm = case_arm(node, self.expander())
        else:
            return False
        if arm is None:
            return False
        for child in arm:
            self.statement(child, conditional, depth + 1)
        return True

    def isolated(self, nodes: list[tree_sitter.Node], conditional: bool, depth: int) -> None:
        """Subshells and pipeline stages: commands count, assignments do not leak."""
        before = self.vars
        for node in nodes:
            self.vars = before.copy()
            self.statement(node, conditional, depth + 1)
        self.vars = before

    def chain(self, node: tree_sitter.Node, conditional: bool, depth: int) -> None:
        """``a && b || c``: only the first part always runs."""
        if not node.named_children:
            return
        first, *rest = node.named_children
        self.statement(first, conditional, depth + 1)
        for name in self.scoped(rest, True, depth):
            self.vars.assign(name, None)

    def command(self, node: tree_sitter.Node, conditional: bool) -> None:
        expander = self.expander()
        env: list[Assignment] = []
        words: list[Word] = []
        for index, child in enumerate(node.children):
            role = node.field_name_for_child(index)
            if child.type == "variable_assignment" and role is None:
                env.append(self.assignment(child, True, conditional))
            elif role == "name" and child.named_children:
                words.extend(expander.words(child.named_children[0]))
            elif role == "argument":
                words.extend(expander.words(child))
        if not words:
            return
        line, column = position(node)
        text = " ".join(_CONTINUATION.sub(" ", self.raw(node)).split())
        name, *args = words
        self.reader_effects(name, args)
        self.commands.append(
            Command(name, tuple(args), tuple(env), line, column, text, conditional)
        )

    def redirect(self, node: tree_sitter.Node) -> None:
        """``> file`` / ``>> file``: the script writes that file (a config it generates)."""
        operator = next((c.type for c in node.children if not c.is_named), "")
        target = node.child_by_field_name("destination")
        if ">" in operator and "&" not in operator and target is not None:
            words = self.expander().words(target)
            self.written += [w.text for w in words if w.text]

    def assignment(self, node: tree_sitter.Node, exported: bool, conditional: bool) -> Assignment:
        """Evaluate ``NAME=value`` (without storing it) as an Assignment record."""
        name_node = node.child_by_field_name("name")
        name = self.raw(name_node) if name_node is not None else self.raw(node).split("=")[0]
        line, column = position(node)
        value = self.value(node)
        return Assignment(name, _text(value), line, column, exported, conditional)

    def value(self, node: tree_sitter.Node) -> Value:
        """An assignment's value, paid for out of the script's budget (a value shared with
        another variable costs its length too: every reader after this one processes it)."""
        value_node = node.child_by_field_name("value")
        expander = self.expander()
        if value_node is None:
            return ""
        if value_node.type != "array":
            text = capped(expander.partial(value_node, 0))
            source = value_node.end_byte - value_node.start_byte
            return text if text is None or self.budget.take(len(text) - source) else None
        items: list[Word] = []
        for child in value_node.named_children:
            items += expander.words(child)
            if len(items) > MAX_ITEMS:
                return None
        return tuple(items)

    def assign(self, node: tree_sitter.Node, exported: bool, conditional: bool) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        if name_node.type == "subscript":  # A[i]=x: the array is no longer fully known
            base = name_node.child_by_field_name("name")
            if base is not None:
                self.vars.assign(self.raw(base), None)
            return
        name = self.raw(name_node)
        value = self.value(node)
        if any(child.type == "+=" for child in node.children):
            value = _append(self.vars.get(name)[1], value, self.budget)
        self.vars.assign(name, value)
        exported = exported or name in self.exported
        if exported:
            self.exported.add(name)
        line, column = position(node)
        self.assignments.append(Assignment(name, _text(value), line, column, exported, conditional))

    def declare(self, node: tree_sitter.Node, conditional: bool) -> None:
        keyword = node.children[0].type if node.children else ""
        options = [self.raw(c) for c in node.named_children if c.type == "word"]
        exported = keyword == "export" or any(
            o.startswith("-") and "x" in o and "n" not in o for o in options
        )
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child, exported, conditional)
            elif child.type == "variable_name" and exported:
                self.export_existing(child, conditional)

    def export_existing(self, node: tree_sitter.Node, conditional: bool) -> None:
        """``export NAME``: recorded with the value it has, paid for like any value handed
        out (``export A`` 20,000 times must not repeat a large A 20,000 times for free)."""
        name = self.raw(node)
        self.exported.add(name)
        is_set, value = self.vars.get(name)
        if is_set:
            line, column = position(node)
            text = _text(value)
            if text is not None and not self.budget.take(len(text) - len(name)):
                text = None
            record = Assignment(name, text, line, column, True, conditional)
            self.assignments.append(record)

    def unset(self, node: tree_sitter.Node, conditional: bool) -> None:
        """``unset X``: X is gone; an exported X leaves the environment, recorded as an
        exported assignment without a value so later readers of ``exports`` see it go."""
        for child in node.named_children:
            name = self.raw(child)
            self.vars.unset(name)
            if self.vars.get(name)[0]:
                self.vars.assign(name, "")
            if name in self.exported:
                line, column = position(child)
                self.assignments.append(Assignment(name, None, line, column, True, conditional))

    def redirection(self, node: tree_sitter.Node, conditional: bool, depth: int) -> None:
        """``> file`` (a file the script writes), or a statement with redirections (its
        heredoc may fill a variable: ``heredoc_read``)."""
        if node.type == "file_redirect":
            self.redirect(node)
            return
        self.block(node, conditional, depth)
        self.heredoc_read(node)
        self.heredoc_script(node, conditional)

    def heredoc_read(self, node: tree_sitter.Node) -> None:
        """``read -r -d '' CMD <<EOF … EOF``: CMD holds the heredoc (a command built to be run
        later with ``$CMD`` or ``eval``), read, never run; without ``-d ''`` its first line."""
        body = node.child_by_field_name("body")
        heredoc = next((c for c in node.named_children if c.type == "heredoc_redirect"), None)
        if body is None or heredoc is None or body.type != "command":
            return
        words = [self.raw(c) for c in body.named_children]
        if not words or words[0] != "read" or not words[-1].isidentifier():
            return
        value = self.heredoc_value(heredoc)
        if value is None:
            return
        whole = any(a == "-d" and b in ("''", '""') for a, b in itertools.pairwise(words))
        text = value if whole else value.split("\n", 1)[0]
        self.vars.assign(words[-1], text.strip())

    def heredoc_script(self, node: tree_sitter.Node, conditional: bool) -> None:
        """``sbatch <<EOF … EOF`` / ``bash <<EOF``: a script inside the script, kept (as bash
        would feed it, expanded unless the delimiter is quoted) for ``parse_script`` to read."""
        body = node.child_by_field_name("body")
        heredoc = next((c for c in node.named_children if c.type == "heredoc_redirect"), None)
        if body is None or heredoc is None or body.type != "command":
            return
        words = [self.raw(c) for c in body.named_children]
        if not words or words[0].rsplit("/", 1)[-1] not in _FED_PROGRAMS:
            return
        if any(not w.startswith("-") for w in words[1:]):
            return  # ``bash run.sh <<EOF``: the heredoc is the script's input, not a script
        content = next((c for c in heredoc.named_children if c.type == "heredoc_body"), None)
        text = self.heredoc_value(heredoc)
        if content is not None and text is not None:
            line = position(content)[0]
            self.fed.append(FedScript(text, line, words[0], conditional))

    def heredoc_value(self, node: tree_sitter.Node) -> str | None:
        """The text a ``heredoc_redirect`` feeds its command (see ``Expander.heredoc``)."""
        body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
        start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
        if body is None:
            return ""
        quoted = start is not None and any(q in self.raw(start) for q in "'\"\\")
        return self.raw(body) if quoted else self.expander().heredoc(body)

    def reader_effects(self, name: Word, args: list[Word]) -> None:
        """``read X``, ``mapfile A``, ``let X=..``, ``printf -v X``: X becomes unknown."""
        if name.text not in _VARIABLE_READERS:
            return
        for arg in args:
            text = arg.text or ""
            target = text.split("=", 1)[0].rstrip("+-*/%")
            if target.isidentifier():
                self.vars.assign(target, None)
        if name.text in ("mapfile", "readarray"):
            self.vars.assign("MAPFILE", None)

    def arithmetic_effects(self, node: tree_sitter.Node) -> None:
        """``((N = N * 2))`` / ``((i++))``: assigned variables become unknown."""
        for child in descendants(node):
            if child.type != "variable_name":
                continue
            sibling = child.next_sibling or child.prev_sibling
            if sibling is not None and sibling.type in _ARITH_ASSIGN:
                self.vars.assign(self.raw(child), None)


def _extended(before: Value, after: list[Value], unknown: Word) -> Value:
    """A variable after a branch whose arms left it as ``after``: an array every arm kept as
    a prefix keeps those items, plus ``unknown`` for what some arm may have appended."""
    if not isinstance(before, tuple) or len(before) >= MAX_ITEMS:
        return None
    if not all(isinstance(a, tuple) and a[: len(before)] == before for a in after):
        return None
    grown = any(isinstance(a, tuple) and len(a) > len(before) for a in after)
    return (*before, unknown) if grown else before


def _text(value: Value) -> str | None:
    """A value as an assignment records it: a known string, else None."""
    return None if isinstance(value, tuple) else known(value)


def _append(old: Value, new: Value, budget: ExpansionBudget) -> Value:
    """``X+=value`` / ``A+=(items)``, sized before the copy (``A+=("${A[@]}")`` doubles)."""
    if isinstance(new, tuple):
        if isinstance(old, tuple):
            if len(old) + len(new) > MAX_ITEMS or not budget.hand_out(old, 0):
                return None
            return (*old, *new)
        return None if old is None else new
    if isinstance(old, tuple) or old is None or new is None:
        return None
    return budget.join([old, new], 0)


def descendants(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """Every node under ``node`` in document order, without recursion."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))
