"""Static expansion of bash words: variables, defaults, arrays and integer arithmetic.

Nothing is ever run. A word whose value depends on something the script does not state (an
unset variable, ``$(...)``, ``$@``) resolves to ``None``: unknown, never guessed. Values and
arrays are size-capped so self-doubling assignments cannot exhaust memory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import tree_sitter

from trainlint.sources.shell_arith import evaluate, integer

MAX_VALUE = 100_000
MAX_ITEMS = 10_000
MAX_NESTING = 32


@dataclass(frozen=True)
class Word:
    """One shell word after expansion: ``text`` is None when its value is unknown."""

    text: str | None
    raw: str
    line: int
    column: int


# A variable's value: a string, an array of words, or None (set, value unknown).
Value = str | tuple[Word, ...] | None


@dataclass
class Variables:
    """The variable table at one point of the script, plus what the environment provides.

    ``environ`` names are set outside the script (None: set, value unknown); names starting
    with one of ``prefixes`` are set to unknown values (e.g. ``SLURM_`` inside an allocation).
    """

    values: dict[str, Value] = field(default_factory=dict)
    environ: Mapping[str, str | None] = field(default_factory=dict)
    prefixes: tuple[str, ...] = ()

    def get(self, name: str) -> tuple[bool, Value]:
        """(is_set, value) for ``name``."""
        if name in self.values:
            return True, self.values[name]
        if name in self.environ:
            return True, self.environ[name]
        if name.startswith(self.prefixes):
            return True, None
        return False, None

    def copy(self) -> Variables:
        return Variables(dict(self.values), self.environ, self.prefixes)


def scalar(value: Value) -> str | None:
    """A value in string context: an array gives its first element (as bash does)."""
    if isinstance(value, tuple):
        return value[0].text if value else ""
    return value


def position(node: tree_sitter.Node) -> tuple[int, int]:
    """1-based line and column of a node. The parsed source is ASCII (see ``shell``), so
    tree-sitter's byte column is the character column of the original text."""
    row, column = node.start_point
    return row + 1, column + 1


def capped(text: str | None) -> str | None:
    return None if text is None or len(text) > MAX_VALUE else text


class Expander:
    """Expands tree-sitter-bash word nodes of one text against a variable table.

    ``text`` is the original script; node byte offsets index it as characters because the
    tree was parsed from an ASCII copy of it (one character for one).
    """

    def __init__(self, text: str, variables: Variables) -> None:
        self.text = text
        self.vars = variables

    def raw(self, node: tree_sitter.Node) -> str:
        return self.text[node.start_byte : node.end_byte]

    def words(self, node: tree_sitter.Node) -> list[Word]:
        """The words one argument node becomes: arrays spread, unquoted values split."""
        line, column = position(node)
        raw = self.raw(node)
        elements = self._array_elements(node)
        if elements is not None:
            return list(elements)
        text = capped(self.resolve(node, 0))
        if text is None or not _splits(node):
            return [Word(text, raw, line, column)]
        return [Word(part, raw, line, column) for part in text.split()]

    def _array_elements(self, node: tree_sitter.Node) -> tuple[Word, ...] | None:
        """``"${A[@]}"`` (one word per element) or unquoted ``${A[@]}`` (elements split)."""
        quoted = node.type == "string" and node.named_child_count == 1
        inner = node.named_children[0] if quoted else node
        subscript = _all_subscript(inner)
        if subscript is None or (quoted and subscript[1] == "*"):
            return None  # "${A[*]}" is one word, joined
        _, value = self.vars.get(self.raw(subscript[0]))
        if value is None or isinstance(value, str):
            return None
        if quoted:
            return value
        return tuple(Word(p, w.raw, w.line, w.column) for w in value for p in _split(w.text))

    def resolve(self, node: tree_sitter.Node, depth: int) -> str | None:
        """The string value of a word node, or None when it cannot be known statically."""
        if depth > MAX_NESTING:
            return None
        kind = node.type
        if kind in ("word", "number", "extglob_pattern"):
            return _unescape(self.raw(node))
        if kind == "raw_string":
            return self.raw(node)[1:-1]
        if kind == "ansi_c_string":
            inner = self.raw(node)[2:-1]
            return None if "\\" in inner else inner
        if kind in ("string", "translated_string"):
            return self._string(node, depth)
        if kind == "concatenation":
            return self._join(node, depth)
        if kind == "string_content":
            return _unescape_quoted(self.raw(node))
        if kind in ("simple_expansion", "expansion"):
            return self.parameter(node, depth)
        if kind == "arithmetic_expansion":
            result = self.arithmetic(node.named_children[0], depth) if node.named_children else None
            return None if result is None else str(result)
        return None

    def _join(self, node: tree_sitter.Node, depth: int) -> str | None:
        parts = []
        for child in node.named_children:
            text = self.resolve(child, depth + 1)
            if text is None:
                return None
            parts.append(text)
        return capped("".join(parts))

    def _string(self, node: tree_sitter.Node, depth: int) -> str | None:
        """A double-quoted string: its parts plus any literal text tree-sitter leaves between
        them (``"$A $B"`` keeps the space, which the grammar folds into the ``$`` token)."""
        quotes = [c for c in node.children if not c.is_named]
        start = quotes[0].end_byte if quotes else node.start_byte
        parts: list[str] = []
        for child in node.named_children:
            gap = self.text[start : child.start_byte]
            raw = self.raw(child)
            text = self.resolve(child, depth + 1)
            if text is None:
                return None
            leading = (
                raw[: len(raw) - len(raw.lstrip())] if child.type.endswith("expansion") else ""
            )
            parts.append(_unescape_quoted(gap) + leading + text)
            start = child.end_byte
        closed = len(quotes) > 1 and self.text[node.end_byte - 1 : node.end_byte] == '"'
        end = node.end_byte - 1 if closed else node.end_byte
        parts.append(_unescape_quoted(self.text[start:end]))
        return capped("".join(parts))

    def parameter(self, node: tree_sitter.Node, depth: int) -> str | None:
        """``$X``, ``${X}``, ``${X:-d}``, ``${X-d}``, ``${X:=d}``, ``${X:+a}``, ``${#X}``,
        ``${A[i]}``; other operators (``%``, ``/``, substrings) are unknown."""
        children = node.children
        names = [c for c in children if c.type in _NAME_NODES]
        if len(names) != 1:
            return None
        name_node = names[0]
        is_set, value = self._lookup(name_node)
        after = children[children.index(name_node) + 1 :]
        before = children[: children.index(name_node)]
        if any(c.type == "#" for c in before):
            index = name_node.child_by_field_name("index")
            if index is not None and index.text in (b"@", b"*"):
                is_set, value = self.vars.get(self.raw(name_node.children[0]))
            return self._length(value) if is_set else None
        op = after[0].type if after and not after[0].is_named else "}"
        if op in ("}", "") or node.type == "simple_expansion":
            return scalar(value) if is_set else None
        operand = [c for c in after[1:] if c.is_named]
        return self._operator(op, name_node, is_set, scalar(value), operand, depth)

    def _operator(
        self,
        op: str,
        name_node: tree_sitter.Node,
        is_set: bool,
        value: str | None,
        operand: list[tree_sitter.Node],
        depth: int,
    ) -> str | None:
        empty = is_set and value == ""
        use_default = not is_set or (op.startswith(":") and empty)
        if op in (":-", "-", ":=", "="):
            if not use_default:
                return value
            default = self._operand(operand, depth)
            if op in (":=", "=") and name_node.type == "variable_name":
                self.vars.values[self.raw(name_node)] = default
            return default
        if op in (":+", "+"):
            if is_set and value is None:
                return None
            return "" if use_default else self._operand(operand, depth)
        if op in (":?", "?"):
            return None if use_default else value
        return None

    def _operand(self, operand: list[tree_sitter.Node], depth: int) -> str | None:
        parts = [self.resolve(child, depth + 1) for child in operand]
        return None if any(p is None for p in parts) else "".join(p or "" for p in parts)

    def _lookup(self, name_node: tree_sitter.Node) -> tuple[bool, Value]:
        if name_node.type == "special_variable_name":
            return True, None
        if name_node.type == "variable_name":
            return self.vars.get(self.raw(name_node))
        base = name_node.child_by_field_name("name")
        index = name_node.child_by_field_name("index")
        if base is None or index is None:
            return True, None
        is_set, value = self.vars.get(self.raw(base))
        return is_set, _element(value, self.raw(index))

    @staticmethod
    def _length(value: Value) -> str | None:
        if isinstance(value, tuple):
            return str(len(value))
        return None if value is None else str(len(value))

    def arithmetic(self, node: tree_sitter.Node, depth: int) -> int | None:
        """Integer arithmetic over known values (``$((A*B))``); None when anything is unknown."""

        def variable(name: str) -> int | None:
            is_set, value = self.vars.get(name)
            return integer(scalar(value)) if is_set else None

        def expansion(child: tree_sitter.Node) -> int | None:
            return integer(self.parameter(child, depth + 1))

        return evaluate(node, self.raw, variable, expansion)


_NAME_NODES = ("variable_name", "special_variable_name", "subscript")


def _all_subscript(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str] | None:
    """The array-name node and ``@``/``*`` of ``${A[@]}`` / ``${A[*]}``, else None."""
    if node.type != "expansion" or node.named_child_count != 1:
        return None
    sub = node.named_children[0]
    if sub.type != "subscript" or [c.type for c in node.children] != ["${", "subscript", "}"]:
        return None
    base, index = sub.child_by_field_name("name"), sub.child_by_field_name("index")
    if base is None or index is None or index.text not in (b"@", b"*"):
        return None
    return base, "@" if index.text == b"@" else "*"


def _element(value: Value, index: str) -> Value:
    if index in ("@", "*"):
        if isinstance(value, tuple):
            texts = [w.text for w in value]
            return None if any(t is None for t in texts) else " ".join(t or "" for t in texts)
        return value
    offset = integer(index)
    if offset is None:
        return None
    if isinstance(value, tuple):
        return value[offset].text if 0 <= offset < len(value) else ""
    return value if offset == 0 else ""


def _splits(node: tree_sitter.Node) -> bool:
    """Whether an unquoted expansion in this word makes bash split its value into fields."""
    if node.type in ("simple_expansion", "expansion", "command_substitution"):
        return True
    if node.type == "concatenation":
        return any(_splits(child) for child in node.named_children)
    return False


def _split(text: str | None) -> list[str | None]:
    return [None] if text is None else list(text.split())


_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_QUOTED_ESCAPE = re.compile(r"\\([\"\\$`\n])")


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _unescape_quoted(text: str) -> str:
    return _QUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)
