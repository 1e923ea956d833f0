"""A static reader of bash scripts: commands, assignments and comments with exact positions.

Built on tree-sitter-bash (error-tolerant; keeps arrays, ``[[ ]]``, heredocs, functions). The
script is walked in text order with a variable table (``shell.walk``), so each command's words
are expanded (``shell.words``) with the values in force where it appears; an ``if``/``case``
the script's own values decide runs only its arm (``shell.conditions``), and an array a branch
only appends to keeps its items. Nothing is executed.

``parse_script(text)`` is the entry point; ``parse_inline`` reads a ``bash -c`` string. The
package's other modules read what a script runs: the training launch and its launcher's
options (``launchers``, ``launcher_options``), SLURM options (``slurm``) and launch commands
embedded in YAML (``embedded``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache

import tree_sitter
import tree_sitter_bash

from trainlint.sources.shell.loops import Loop, endless
from trainlint.sources.shell.walk import Assignment, Command, FedScript, Walker, descendants
from trainlint.sources.shell.words import (
    BUDGET_BASE,
    INLINE_BUDGET_BASE,
    UNKNOWN,
    ExpansionBudget,
    Value,
    Variables,
    Word,
    known,
    position,
)
from trainlint.sources.structured import check_size

__all__ = [
    "Assignment", "Command", "Script", "ScriptComment", "Value", "Variables", "Word",
    "parse_inline", "parse_script",
]  # fmt: skip


@dataclass(frozen=True)
class ScriptComment:
    """A ``#`` comment of the script; ``top_level`` when it is a statement of the script itself
    (``#SBATCH``). (Not ``comment.sticky.Comment``, a pull request's comment.)"""

    text: str
    line: int
    column: int
    top_level: bool


@dataclass
class Script:
    """What a script states: its commands in text order, every assignment, every comment."""

    commands: list[Command] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    comments: list[ScriptComment] = field(default_factory=list)
    variables: dict[str, Value] = field(default_factory=dict)
    error: tuple[int, int] | None = None  # first syntax error (line, column), if any
    written: list[str] = field(default_factory=list)  # files it writes (``> x.json``)
    batch_headers: list[ScriptComment] = field(default_factory=list)
    endless_loops: list[Loop] = field(default_factory=list)
    """Loops nothing in them ends (``while true`` without ``break``/``exit``): ``shell.loops``."""
    """The leading comments (``#SBATCH`` headers) of a script it feeds to ``sbatch <<EOF``,
    at their lines in this script."""

    def leading_comments(self) -> list[ScriptComment]:
        """The comments before the first statement: where sbatch reads ``#SBATCH`` lines."""
        lines = [c.line for c in self.commands] + [a.line for a in self.assignments]
        first = min(lines, default=float("inf"))
        return [c for c in self.comments if c.line < first]

    @property
    def exports(self) -> list[Assignment]:
        return [a for a in self.assignments if a.exported]


@cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse_script(
    text: str,
    environ: Mapping[str, str | None] | None = None,
    prefixes: tuple[str, ...] = (),
    budget_base: int = BUDGET_BASE,
    nesting: int = 0,
) -> Script:
    """Read a bash script; ``environ``/``prefixes`` name variables set outside it.

    Expansion may outgrow the text by ``budget_base`` plus ``PER_CHARACTER`` characters per
    character of it (``shell.words.ExpansionBudget``); past that, values are unknown. A script
    fed to sbatch or a shell through a heredoc (``sbatch <<EOF``) is read as well, ``nesting``
    levels deep at most, its commands among the script's at their own lines.
    """
    check_size(text)
    root = _parser().parse(_ascii(text)).root_node
    budget = ExpansionBudget.for_text(text, budget_base)
    walker = Walker(text, Variables({}, environ or {}, prefixes), budget)
    walker.block(root, conditional=False, depth=0)
    script = Script(walker.commands, walker.assignments, list(_comments(root, text)))
    script.variables = {
        name: value if isinstance(value, tuple) else known(value)
        for name, value in walker.vars.table().items()
    }
    script.written = walker.written
    script.endless_loops = [loop for node in descendants(root) if (loop := endless(node, text))]
    if nesting < MAX_FED_NESTING:
        for fed in walker.fed:
            inner = _fed_script(fed, environ or {}, prefixes, nesting + 1)
            script.commands += inner.commands
            script.endless_loops += inner.endless_loops
            if fed.program.rsplit("/", 1)[-1] == "sbatch":
                script.batch_headers += inner.leading_comments()
    script.error = _first_error(root) if root.has_error else None
    return script


def parse_inline(
    word: Word, environ: Mapping[str, str | None] | None = None, prefixes: tuple[str, ...] = ()
) -> list[Command]:
    """The commands of a ``bash -c STRING`` argument, all located at the string itself.

    Its expansion budget is in proportion to the string alone, and a string read once is not
    read again: a script running the same ``bash -c "$X"`` thousands of times must not get a
    script's budget, or a parse, for each one."""
    text = word.text
    if text is None and word.partial is not None:  # ``bash -c "cd $UNSET; torchrun …"``
        text = word.partial.replace(UNKNOWN, _UNKNOWN_TEXT)
    if text is None:
        return []
    known = tuple(sorted((environ or {}).items(), key=lambda item: item[0]))
    commands = _inline_commands(text, known, prefixes)
    return [_relocate(command, word.line, word.column) for command in commands]


@lru_cache(maxsize=64)
def _inline_commands(
    text: str, environ: tuple[tuple[str, str | None], ...], prefixes: tuple[str, ...]
) -> tuple[Command, ...]:
    return tuple(parse_script(text, dict(environ), prefixes, INLINE_BUDGET_BASE).commands)


MAX_FED_NESTING = 4
# Stands for an unknown part of a fed script's text: a variable no script sets, so the fed
# script's reader sees an unknown value there (``shell.words.UNKNOWN`` is not bash text).
_UNKNOWN_TEXT = "${__TRAINLINT_UNKNOWN__}"


def _fed_script(
    fed: FedScript, environ: Mapping[str, str | None], prefixes: tuple[str, ...], nesting: int
) -> Script:
    """A heredoc-fed script, its commands and comments at the lines they have in the outer
    script."""
    text = fed.text.replace(UNKNOWN, _UNKNOWN_TEXT)
    inner = parse_script(text, environ, prefixes, INLINE_BUDGET_BASE, nesting)
    offset = fed.line - 1

    def move(w: Word) -> Word:
        return replace(w, line=w.line + offset)

    def moved(command: Command) -> Command:
        env = tuple(replace(a, line=a.line + offset) for a in command.env)
        args = tuple(map(move, command.args))
        conditional = command.conditional or fed.conditional
        line = command.line + offset
        return replace(command, name=move(command.name), args=args, env=env, line=line,
                       conditional=conditional)  # fmt: skip

    inner.commands = [moved(command) for command in inner.commands]
    inner.comments = [replace(c, line=c.line + offset) for c in inner.comments]
    inner.endless_loops = [
        replace(loop, line=loop.line + offset, end_line=loop.end_line + offset)
        for loop in inner.endless_loops
    ]
    return inner


def _relocate(command: Command, line: int, column: int) -> Command:
    def move(w: Word) -> Word:
        return replace(w, line=line, column=column)

    env = tuple(replace(a, line=line, column=column) for a in command.env)
    args = tuple(move(w) for w in command.args)
    return replace(command, name=move(command.name), args=args, env=env, line=line, column=column)


def _ascii(text: str) -> bytes:
    """The script with every non-ASCII character replaced by one ASCII letter.

    tree-sitter-bash's scanner passes code points to ``isalpha`` (a 256-entry table), which
    reads out of bounds, and can crash, on characters past U+00FF. An ASCII copy cannot
    crash it, parses the same (other characters are word characters to bash too), and makes
    every byte offset a character offset into the original text.
    """
    return _NON_ASCII.sub("Z", text).encode("ascii")


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _comments(root: tree_sitter.Node, text: str) -> Iterator[ScriptComment]:
    for node in descendants(root):
        if node.type == "comment":
            parent = node.parent
            top = parent is not None and parent.type == "program"
            comment = text[node.start_byte : node.end_byte]
            yield ScriptComment(comment, *position(node), top_level=top)


def _first_error(root: tree_sitter.Node) -> tuple[int, int]:
    for node in descendants(root):
        if node.type == "ERROR" or node.is_missing:
            return position(node)
    return 1, 1
