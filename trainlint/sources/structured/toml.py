"""TOML with key positions: tomllib decides validity and values, tree-sitter-toml gives places.

The same split as JSON in ``structured``: the parser that knows the language's rules (the
standard ``tomllib``, ``tomli`` on Python 3.10) says whether the file is valid and what it
holds; tree-sitter gives the 1-based line and column of every key, table header and array
item, so TOML configs are located like YAML and JSON ones. A file tomllib rejects is parsed
again with tomlkit, whose error names the line and column where tomllib often says only "at
end of document"; tomlkit is ~15x slower, so valid files never reach it (issue 9).
"""

from __future__ import annotations

import json
import sys
from functools import cache
from typing import Any

import tree_sitter
import tree_sitter_toml

from trainlint.errors import SourceError
from trainlint.sources.structured import MAX_DEPTH, Columns, KeyPath, Tree, check_size

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Spans = dict[KeyPath, tuple[int, int]]
_KEYS = frozenset({"bare_key", "quoted_key", "dotted_key"})


@cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_toml.language()))


def load_toml(text: str) -> Tree:
    """A TOML document as plain data with key positions; raises SourceError when invalid."""
    check_size(text)
    try:
        data = tomllib.loads(text)
    except (RecursionError, ValueError):
        data = _data_or_located_error(text)
    columns = Columns(text)
    builder = _SpanBuilder(columns)
    builder.document(_parser().parse(columns.source).root_node)
    return Tree(data, builder.spans)


def _data_or_located_error(text: str) -> dict[str, Any]:
    """tomlkit's reading of a file tomllib rejected: its SourceError names the line and
    column; should tomlkit accept the file after all, its values are used."""
    import tomlkit
    import tomlkit.exceptions

    try:
        return dict(tomlkit.parse(text).unwrap())
    except tomlkit.exceptions.ParseError as exc:
        message = str(exc).split(" at line ")[0]
        raise SourceError(f"invalid TOML: {message}", exc.line, exc.col) from None
    except (RecursionError, ValueError) as exc:
        raise SourceError(f"invalid TOML: {exc}") from None


class _SpanBuilder:
    def __init__(self, columns: Columns) -> None:
        self.columns = columns
        self.source = columns.source
        self.spans: Spans = {(): (1, 1)}
        self.arrays: dict[KeyPath, int] = {}  # [[x]] tables seen so far → how many elements

    def document(self, root: tree_sitter.Node) -> None:
        for node in root.named_children:
            if node.type == "pair":
                self.pair(node, ())
            elif node.type in {"table", "table_array_element"}:
                self.table(node)

    def table(self, node: tree_sitter.Node) -> None:
        header = next((c for c in node.named_children if c.type in _KEYS), None)
        if header is None:
            return
        parts = self.key_parts(header)
        element = node.type == "table_array_element"
        path: KeyPath = ()
        for index, (name_, part) in enumerate(parts):
            path = (*path, name_)
            self.spans.setdefault(path, self.columns.point(part))
            new_element = element and index == len(parts) - 1
            if path in self.arrays and not new_element:
                path = (*path, self.arrays[path] - 1)  # inside the latest [[...]] element
        if element:
            count = self.arrays.get(path, 0)
            self.arrays[path] = count + 1
            path = (*path, count)
            self.spans[path] = self.columns.point(header)
        for child in node.named_children:
            if child.type == "pair":
                self.pair(child, path)

    def pair(self, node: tree_sitter.Node, base: KeyPath) -> None:
        children = [c for c in node.named_children if c.type != "comment"]
        if len(children) < 2:
            return
        path = base
        for name_, part in self.key_parts(children[0]):
            path = (*path, name_)
            self.spans.setdefault(path, self.columns.point(part))
        self.value(children[1], path)

    def value(self, node: tree_sitter.Node, path: KeyPath) -> None:
        if len(path) > MAX_DEPTH:
            raise SourceError(f"nesting deeper than {MAX_DEPTH} levels", *self.columns.point(node))
        if node.type == "inline_table":
            for child in node.named_children:
                if child.type == "pair":
                    self.pair(child, path)
        elif node.type == "array":
            items = [c for c in node.named_children if c.type != "comment"]
            for index, item in enumerate(items):
                item_path = (*path, index)
                self.spans[item_path] = self.columns.point(item)
                self.value(item, item_path)

    def key_parts(self, node: tree_sitter.Node) -> list[tuple[str, tree_sitter.Node]]:
        """``a."b c".d`` → [("a", node), ("b c", node), ("d", node)]."""
        if node.type == "dotted_key":
            return [part for child in node.named_children for part in self.key_parts(child)]
        raw = self.source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
        return [(_unquote(raw) if node.type == "quoted_key" else raw, node)]


def _unquote(raw: str) -> str:
    if raw.startswith("'"):
        return raw[1:-1]
    try:
        text: Any = json.loads(raw)
    except ValueError:
        return raw[1:-1]
    return text if isinstance(text, str) else raw[1:-1]
