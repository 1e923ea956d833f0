"""Static expansion of bash words: variables, defaults, arrays and integer arithmetic.

Nothing is ever run. A word whose value depends on something the script does not state (an
unset variable, ``$(...)``, ``$@``) resolves to ``None``: unknown, never guessed. A string only
part of which is unknown (``OPTS="--seq-length 4096 --data-path $1"``) keeps its known parts,
with ``UNKNOWN`` standing for each unknown one (bash strings cannot hold NUL, so it cannot be
the script's own text): split unquoted, it gives the known words and one unknown word where each
unknown part was. Every value handed out of this module (words, assignments, conditions) is
either fully known or None; ``UNKNOWN`` lives only inside the variable table.

Expansion is bounded before it allocates. Every string it builds is sized from its parts
first: past ``MAX_VALUE`` it is unknown and never joined; arrays past ``MAX_ITEMS`` are unknown
before they are copied. And one script's expansion as a whole may outgrow its own text by no
more than an ``ExpansionBudget``: each string built and each word or value handed out pays for
what it adds to the text it comes from (a shared reference too: every reader after this one
processes it). ``B=$A$A…`` chains, ``echo $A $A …`` splits and self-doubling arrays end as unknown
values, not gigabytes; literal text costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import tree_sitter

from trainlint.sources.shell.arith import evaluate, integer

MAX_VALUE = 100_000
MAX_ITEMS = 10_000
MAX_NESTING = 32
# How far a script's expansion may outgrow its text, in characters: a base plus PER_CHARACTER
# per character of the script. A ``bash -c`` string gets no base (launch scripts re-read the
# same string thousands of times). A word split off a value costs WORD_COST on top of its text.
BUDGET_BASE = 262_144
INLINE_BUDGET_BASE = 0
PER_CHARACTER = 2
WORD_COST = 16
UNKNOWN = "\x00"  # an unknown part of a partly known value (see the module docstring)


@dataclass
class ExpansionBudget:
    """Characters one script's expansion may still add to its text; 0 once overdrawn. (Not
    ``job.Budget``, a job's spending limits.)"""

    left: int

    @classmethod
    def for_text(cls, text: str, base: int = BUDGET_BASE) -> ExpansionBudget:
        return cls(base + PER_CHARACTER * len(text))

    def take(self, cost: int) -> bool:
        """Pay ``cost`` before allocating; a refusal spends what is left, so one overdraft ends
        expansion rather than letting each later attempt build and discard its value."""
        if cost > self.left:
            self.left = 0
            return False
        self.left -= max(cost, 0)
        return True

    def fits(self, size: int, source: int) -> bool:
        """Whether ``size`` characters built from ``source`` characters of text may be built."""
        return size <= MAX_VALUE and size - source <= self.left

    def join(self, parts: Sequence[str], source: int) -> str | None:
        """``"".join(parts)`` of a node spanning ``source`` characters, sized and paid for
        first: None past the cap or the budget, never built."""
        size = sum(len(part) for part in parts)
        if size > MAX_VALUE or not self.take(size - source):
            return None
        return parts[0] if len(parts) == 1 else "".join(parts)

    def hand_out(self, words: Sequence[Word], source: int) -> bool:
        """Pay for the words a node spanning ``source`` characters becomes."""
        size = sum(len(w.text or "") + WORD_COST for w in words) - WORD_COST
        return self.take(size - source)


@dataclass(frozen=True)
class Word:
    """One shell word after expansion: ``text`` is None when its value is unknown."""

    text: str | None
    raw: str
    line: int
    column: int
    partial: str | None = None  # an unknown word's text with ``UNKNOWN`` for what is unknown


# A variable's value: a string, an array of words, or None (set, value unknown).
Value = str | tuple[Word, ...] | None


class _Unset:
    """A tombstone: the variable was unset in this scope."""


_UNSET = _Unset()


@dataclass
class Variables:
    """The variable table at one point of the script, plus what the environment provides.

    ``environ`` names are set outside the script (None: set, value unknown); names starting
    with one of ``prefixes`` are set to unknown values (e.g. ``SLURM_`` inside an allocation).
    A ``copy`` for a branch is an empty overlay on its parent (``values`` holds only what the
    branch changes), so a script of many variables and many branches stays linear.
    """

    values: dict[str, Value | _Unset] = field(default_factory=dict)
    environ: Mapping[str, str | None] = field(default_factory=dict)
    prefixes: tuple[str, ...] = ()
    parent: Variables | None = None

    def get(self, name: str) -> tuple[bool, Value]:
        """(is_set, value) for ``name``."""
        table: Variables | None = self
        while table is not None:
            if name in table.values:
                value = table.values[name]
                if isinstance(value, _Unset):
                    break
                return True, value
            table = table.parent
        if name in self.environ:
            return True, self.environ[name]
        if name.startswith(self.prefixes):
            return True, None
        return False, None

    def assign(self, name: str, value: Value) -> None:
        self.values[name] = value

    def unset(self, name: str) -> None:
        """``unset NAME``: gone from the script's table (the environment's value stays)."""
        self.values[name] = _UNSET

    def copy(self) -> Variables:
        """A scope for a branch: reads fall through to this table, writes stay in the copy."""
        return Variables({}, self.environ, self.prefixes, self)

    def changed(self) -> set[str]:
        """The names this scope set or unset to something other than its parent's value."""
        parent = self.parent
        if parent is None:
            return set(self.values)
        return {n for n, v in self.values.items() if _state(v) != _state_of(parent, n)}

    def table(self) -> dict[str, Value]:
        """Every variable the script set, as a plain dict (the top-level scope)."""
        below = self.parent.table() if self.parent is not None else {}
        for name, value in self.values.items():
            if isinstance(value, _Unset):
                below.pop(name, None)
            else:
                below[name] = value
        return below


def _state(value: Value | _Unset) -> tuple[bool, Value]:
    return (False, None) if isinstance(value, _Unset) else (True, value)


def _state_of(table: Variables, name: str) -> tuple[bool, Value]:
    """Whether the script's own tables (not the environment) set ``name``, and to what."""
    current: Variables | None = table
    while current is not None:
        if name in current.values:
            return _state(current.values[name])
        current = current.parent
    return False, None


def known(text: str | None) -> str | None:
    """``text`` when every part of it is known, else None."""
    return None if text is None or UNKNOWN in text else text


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
    tree was parsed from an ASCII copy of it (one character for one). ``budget`` is the
    script's (shared by every expander of one walk); the default is the text's own.
    """

    def __init__(
        self, text: str, variables: Variables, budget: ExpansionBudget | None = None
    ) -> None:
        self.text = text
        self.vars = variables
        self.budget = budget if budget is not None else ExpansionBudget.for_text(text)

    def raw(self, node: tree_sitter.Node) -> str:
        return self.text[node.start_byte : node.end_byte]

    def words(self, node: tree_sitter.Node) -> list[Word]:
        """The words one argument node becomes: arrays spread, unquoted values split; paid
        for before they are handed out, unknown once the budget is spent."""
        line, column = position(node)
        raw = self.raw(node)
        unknown = [Word(None, raw, line, column)]
        elements = self._array_elements(node)
        if elements is not None:
            return list(elements) if self.budget.hand_out(elements, len(raw)) else unknown
        text = capped(self.partial(node, 0))
        if text is None:
            return unknown
        if not _splits(node):
            if not self.budget.take(len(text) - len(raw)):
                return unknown
            if UNKNOWN in text:  # kept for a reader of its known parts (``bash -c "$CMD"``)
                return [Word(None, raw, line, column, partial=text)]
            return [Word(text, raw, line, column)]
        parts = self._split(text, len(raw))
        if parts is None:
            return unknown
        return [Word(known(part), raw, line, column) for part in parts]

    def _split(self, text: str, source: int) -> list[str] | None:
        """``text.split()`` for a node spanning ``source`` characters, its characters paid for
        before and its words after: one split allocates at most ``MAX_VALUE`` characters."""
        if not self.budget.fits(len(text), source):
            self.budget.take(len(text) - source)
            return None
        parts = text.split()
        return parts if self.budget.take(len(text) + WORD_COST * len(parts) - source) else None

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
        words: list[Word] = []
        for word in value:
            if word.text is None:  # an item the script does not state stays one unknown word
                words.append(word)
                continue
            parts = self._split(word.text, 0)
            if parts is None or len(words) + len(parts) > MAX_ITEMS:
                return (Word(None, word.raw, word.line, word.column),)
            words += (Word(p, word.raw, word.line, word.column) for p in parts)
        return tuple(words)

    def resolve(self, node: tree_sitter.Node, depth: int) -> str | None:
        """The string value of a word node, or None when it cannot be known statically."""
        return known(self.partial(node, depth))

    def partial(self, node: tree_sitter.Node, depth: int) -> str | None:
        """The value of a word node with ``UNKNOWN`` for each unknown part of a string or
        concatenation; None when nothing of it is known."""
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
        if kind == "command_substitution":
            return "." if script_folder(self.raw(node)) else None
        if kind == "arithmetic_expansion":
            result = self.arithmetic(node.named_children[0], depth) if node.named_children else None
            return None if result is None else str(result)
        return None

    def _join(self, node: tree_sitter.Node, depth: int) -> str | None:
        parts: list[str] = []
        size = 0
        for child in node.named_children:
            text = self._part(child, depth + 1)
            size += len(text)
            if not self.budget.fits(size, _span(node)):
                return None  # refused as soon as it is too long: the rest is never resolved
            parts.append(text)
        return self.budget.join(parts, _span(node))

    def _string(self, node: tree_sitter.Node, depth: int) -> str | None:
        """A double-quoted string: its parts plus any literal text tree-sitter leaves between
        them (``"$A $B"`` keeps the space, which the grammar folds into the ``$`` token)."""
        quotes = [c for c in node.children if not c.is_named]
        start = quotes[0].end_byte if quotes else node.start_byte
        parts: list[str] = []
        size = 0
        for child in node.named_children:
            gap = self.text[start : child.start_byte]
            raw = self.raw(child)
            text = self._part(child, depth + 1)
            leading = (
                raw[: len(raw) - len(raw.lstrip())] if child.type.endswith("expansion") else ""
            )
            parts += (_unescape_quoted(gap), leading, text)
            size += len(parts[-3]) + len(leading) + len(text)
            if not self.budget.fits(size, _span(node)):
                return None
            start = child.end_byte
        closed = len(quotes) > 1 and self.text[node.end_byte - 1 : node.end_byte] == '"'
        end = node.end_byte - 1 if closed else node.end_byte
        parts.append(_unescape_quoted(self.text[start:end]))
        return self.budget.join([part for part in parts if part], _span(node))

    def heredoc(self, node: tree_sitter.Node) -> str | None:
        """A ``heredoc_body`` as bash feeds it: expanded like a double-quoted string (its
        unknown parts ``UNKNOWN``); the caller takes the raw text when the delimiter is quoted
        (``<<'EOF'``: nothing is expanded)."""
        parts: list[str] = []
        start = node.start_byte
        for child in node.named_children:
            parts.append(_unescape_quoted(self.text[start : child.start_byte]))
            raw = self.raw(child)
            if child.type == "heredoc_content":
                parts.append(_unescape_quoted(raw))
            else:
                parts += (raw[: len(raw) - len(raw.lstrip())], self._part(child, 1))
            start = child.end_byte
        parts.append(_unescape_quoted(self.text[start : node.end_byte]))
        return self.budget.join([part for part in parts if part] or [""], _span(node))

    def _part(self, node: tree_sitter.Node, depth: int) -> str:
        """One part of a string or concatenation: its value, or ``UNKNOWN``."""
        text = self.partial(node, depth)
        return UNKNOWN if text is None else text

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

    def _operator(  # noqa: PLR0913 - the parts of one ${name<op>word}
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
                self.vars.assign(self.raw(name_node), default)
            return default
        if op in (":+", "+"):
            if is_set and value is None:
                return None
            return "" if use_default else self._operand(operand, depth)
        if op in (":?", "?"):
            return None if use_default else value
        return None

    def _operand(self, operand: list[tree_sitter.Node], depth: int) -> str | None:
        parts: list[str] = []
        for child in operand:
            text = self.partial(child, depth + 1)
            if text is None:
                return None
            parts.append(text)
        return self.budget.join(parts, sum(_span(child) for child in operand)) if parts else ""

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
        return is_set, self._element(value, self.raw(index))

    def _element(self, value: Value, index: str) -> Value:
        """``${A[i]}``; ``${A[@]}`` in a string is its elements joined by spaces (sized
        before it is built)."""
        if index in ("@", "*"):
            if not isinstance(value, tuple):
                return value
            texts = [w.text if w.text is not None else UNKNOWN for w in value]
            return self.budget.join(_spaced(texts), 0)
        offset = integer(index)
        if offset is None:
            return None
        if isinstance(value, tuple):
            return value[offset].text if 0 <= offset < len(value) else ""
        return value if offset == 0 else ""

    @staticmethod
    def _length(value: Value) -> str | None:
        if isinstance(value, tuple):
            return str(len(value))
        return None if value is None or UNKNOWN in value else str(len(value))

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


def _splits(node: tree_sitter.Node) -> bool:
    """Whether an unquoted expansion in this word makes bash split its value into fields."""
    if node.type in ("simple_expansion", "expansion", "command_substitution"):
        return True
    if node.type == "concatenation":
        return any(_splits(child) for child in node.named_children)
    return False


def _span(node: tree_sitter.Node) -> int:
    """How many characters of the script a node spans (what its value may cost nothing to
    repeat)."""
    return node.end_byte - node.start_byte


def _spaced(texts: Sequence[str | None]) -> list[str]:
    """``texts`` with a space between each two, ready for a sized join."""
    spaced: list[str] = []
    for text in texts:
        spaced += (" ", text or "") if spaced else (text or "",)
    return spaced


# The script's own folder, as launch scripts compute it: $(dirname "$0"),
# $(cd -- "$(dirname "${BASH_SOURCE[0]}")" >/dev/null 2>&1; pwd -P), $(realpath $(dirname $0)).
_SELF = r"(?:\$0|\$\{0\}|\$BASH_SOURCE|\$\{BASH_SOURCE(?:\[0\])?\})"
_RESOLVED_SELF = rf"(?:{_SELF}|\$\((?:readlink -f|realpath) {_SELF}\))"
_DIRNAME = rf"(?:\$\(dirname {_RESOLVED_SELF}\)|\$\(realpath \$\(dirname {_SELF}\)\))"
_SCRIPT_FOLDER = re.compile(
    rf"^(?:{_DIRNAME}|\$\(cd {_DIRNAME} ?(?:&&|;) ?pwd(?: -P)?\)|`dirname {_SELF}`)$"
)
_NOISE = re.compile(r"[\"']|(?<=cd) --| (?:[12&]?>{1,2} ?/dev/null|2>&1)")


def script_folder(substitution: str) -> bool:
    """Whether a command substitution is the script's own folder: a path then resolved, as
    bash would, from the folder of the script that is read ("." relative to it)."""
    text = " ".join(_NOISE.sub("", substitution).split())
    text = text.replace("( ", "(").replace(" )", ")")
    return _SCRIPT_FOLDER.match(text) is not None


_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_QUOTED_ESCAPE = re.compile(r"\\([\"\\$`\n])")


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _unescape_quoted(text: str) -> str:
    return _QUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)
