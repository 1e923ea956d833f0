"""YAML and JSON readers that keep the 1-based line and column of every key.

PyYAML's composer gives node marks; tree-sitter-json gives JSON positions while the standard
``json`` module decides validity (its error names the exact line). YAML is only ever loaded with
the safe constructor, and size, depth and node count are bounded so a hostile file cannot
exhaust memory (an alias "billion laughs" expands through the node budget, not the heap).
A value under a tag the safe loader does not know (GitLab's ``!reference``, CloudFormation's
``!Sub``, Ansible's ``!vault``, HyperPyYAML's ``!new:``, ``!!python/...``) is valid YAML of
another tool: it is kept as an opaque ``Tagged`` value, never constructed and never an error.

The package's modules are what the structured formats share: TOML with positions (``toml``),
the flat HfArgumentParser-like walk (``flat``), tables over merged data (``located``), and
OmegaConf interpolation, merging and Hydra defaults lists.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import tree_sitter
import tree_sitter_json
import yaml

from trainlint.errors import SourceError

KeyPath = tuple[str | int, ...]
"""Where a value sits in a parsed document, by its keys and list indices:
``("zero_optimization", "stage")``; a config entry is one too: ``("waivers", 2, "reason")``.
Not a file path (that is ``pathlib.Path``, which no module rebinds)."""

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000

_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})
_TAG_PREFIX = "tag:yaml.org,2002:"
_SCALAR_TAGS = ("null", "bool", "int", "float", "str", "timestamp", "binary")
_SCALAR_CONSTRUCTORS = {
    f"tag:yaml.org,2002:{name}": yaml.constructor.SafeConstructor.yaml_constructors[
        f"tag:yaml.org,2002:{name}"
    ]
    for name in _SCALAR_TAGS
}


@dataclass(frozen=True)
class Tagged:
    """A value under a custom tag, as written (a string, list or mapping of plain values).

    No format reads it as a number or a name, so a setting written through another tool's
    tag (``!ref <batch_size>``) stays unknown rather than being guessed."""

    tag: str
    value: Any

    def __str__(self) -> str:
        return f"{self.tag} {self.value}"


@dataclass
class Tree:
    """A parsed document: plain data plus the (line, column) of each key path."""

    data: Any
    spans: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)

    def span(self, path: KeyPath) -> tuple[int, int]:
        """Position of ``path``, or of its closest located ancestor."""
        while path and path not in self.spans:
            path = path[:-1]
        return self.spans.get(path, (1, 1))

    def items(self) -> Iterator[tuple[KeyPath, Any]]:
        """Every (path, value) pair, depth first, mappings and lists included."""
        yield from _walk((), self.data)


def _walk(path: KeyPath, value: Any) -> Iterator[tuple[KeyPath, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _walk((*path, str(key)), child)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _walk((*path, index), child)


def check_size(text: str) -> None:
    if len(text) > MAX_BYTES:
        raise SourceError(
            f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB ({len(text):,} characters, "
            f"limit {MAX_BYTES:,}); not read"
        )


def load_yaml(text: str) -> list[Tree]:
    """Every document of a YAML stream, with key positions; raises SourceError."""
    check_size(text)
    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        nodes = list(yaml.compose_all(text, Loader=loader_cls))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise SourceError(f"invalid YAML: {_problem(exc)}", line, column) from None
    except yaml.YAMLError as exc:
        raise SourceError(f"invalid YAML: {_problem(exc)}") from None
    return [_YamlBuilder().build(node) for node in nodes if node is not None]


class _YamlBuilder:
    def __init__(self) -> None:
        self.constructor = yaml.constructor.SafeConstructor()
        self.scalars = _SCALAR_CONSTRUCTORS
        self.spans: dict[KeyPath, tuple[int, int]] = {}
        self.budget = MAX_NODES

    def build(self, node: yaml.Node) -> Tree:
        self.spans[()] = (node.start_mark.line + 1, node.start_mark.column + 1)
        return Tree(self.value(node, ()), self.spans)

    def value(self, node: yaml.Node, path: KeyPath) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise SourceError("YAML document has too many nodes (alias expansion?)")
        if len(path) > MAX_DEPTH:
            line, column = node.start_mark.line + 1, node.start_mark.column + 1
            raise SourceError(f"nesting deeper than {MAX_DEPTH} levels", line, column)
        if isinstance(node, yaml.MappingNode):
            value: Any = self.mapping(node, path)
        elif isinstance(node, yaml.SequenceNode):
            value = self.sequence(node, path)
        elif node.tag in self.scalars or not _custom(node):
            return self.scalar(node)
        else:
            value = node.value  # a custom-tagged scalar: its text, never constructed
        return value if node.tag in _PLAIN_TAGS else Tagged(_shown(node.tag), value)

    def scalar(self, node: yaml.Node) -> Any:
        try:
            construct = self.scalars.get(node.tag)  # the safe constructor's own function,
            if construct is not None:  # without construct_object's bookkeeping per scalar
                return construct(self.constructor, node)
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            line, column = node.start_mark.line + 1, node.start_mark.column + 1
            raise SourceError(f"invalid YAML value: {_problem(exc)}", line, column) from None

    def mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, Any]:
        try:
            self.constructor.flatten_mapping(node)
        except yaml.YAMLError as exc:
            raise SourceError(f"invalid YAML merge: {_problem(exc)}") from None
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.value(key_node, path)
            child = (*path, str(key))
            mark = key_node.start_mark  # a repeated key: the last one wins, value and place
            self.spans[child] = (mark.line + 1, mark.column + 1)
            result[str(key)] = self.value(value_node, child)
        return result

    def sequence(self, node: yaml.SequenceNode, path: KeyPath) -> list[Any]:
        items = []
        for index, item in enumerate(node.value):
            child = (*path, index)
            self.spans[child] = (item.start_mark.line + 1, item.start_mark.column + 1)
            items.append(self.value(item, child))
        return items


def _custom(node: yaml.Node) -> bool:
    """A tag of another tool: anything but the YAML core tags the safe loader constructs."""
    return node.tag not in yaml.SafeLoader.yaml_constructors


def _shown(tag: str) -> str:
    """A tag as written: ``!!python/name:x`` rather than ``tag:yaml.org,2002:python/name:x``."""
    return "!!" + tag[len(_TAG_PREFIX) :] if tag.startswith(_TAG_PREFIX) else tag


def _problem(exc: yaml.YAMLError) -> str:
    """PyYAML's own words on one line, without its multi-line "in <unicode string>" context."""
    problem = getattr(exc, "problem", None) or str(exc)
    return " ".join(str(problem).split())


@cache
def _json_parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_json.language()))


def load_json(text: str) -> Tree:
    """A JSON document with key positions; raises SourceError at the error's line."""
    check_size(text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise SourceError(f"nesting deeper than {MAX_DEPTH} levels") from None
    columns = Columns(text)
    root = _json_parser().parse(columns.source).root_node
    spans: dict[KeyPath, tuple[int, int]] = {(): (1, 1)}
    for value in root.named_children:
        _json_spans(value, (), columns, spans)
    return Tree(data, spans)


def _json_spans(
    node: tree_sitter.Node, path: KeyPath, columns: Columns, spans: dict[KeyPath, tuple[int, int]]
) -> None:
    source = columns.source
    if len(path) > MAX_DEPTH:
        raise SourceError(f"nesting deeper than {MAX_DEPTH} levels", *columns.point(node))
    if node.type == "object":
        for pair in node.named_children:
            key_node = pair.child_by_field_name("key")
            value_node = pair.child_by_field_name("value")
            if key_node is None or value_node is None:
                continue
            child = (*path, str(json.loads(source[key_node.start_byte : key_node.end_byte])))
            spans[child] = columns.point(key_node)
            _json_spans(value_node, child, columns, spans)
    elif node.type == "array":
        items = [n for n in node.named_children if n.type != "comment"]
        for index, item in enumerate(items):
            child = (*path, index)
            spans[child] = columns.point(item)
            _json_spans(item, child, columns, spans)


class Columns:
    """The UTF-8 bytes of a text that tree-sitter parses, and the 1-based line and character
    column of each of its nodes, found in O(log n).

    tree-sitter counts columns in bytes. Decoding each node's line prefix is quadratic on a
    long line (a 2 MB single-line JSON file has 200k nodes on line 1), so the offsets of the
    UTF-8 continuation bytes are listed once: a node's column is its byte column less the
    continuation bytes before it on its line. An ASCII text has none: byte column = column."""

    def __init__(self, text: str) -> None:
        self.source = text.encode()
        self.continuations: list[int] | None = None
        if not text.isascii():
            self.continuations = [m.start() for m in _CONTINUATION.finditer(self.source)]

    def point(self, node: tree_sitter.Node) -> tuple[int, int]:
        """The node's start as (line, column), both 1-based, the column in code points."""
        row, byte_column = node.start_point
        if self.continuations is None:
            return row + 1, byte_column + 1
        start = node.start_byte
        before = bisect_left(self.continuations, start)
        skipped = before - bisect_left(self.continuations, start - byte_column, hi=before)
        return row + 1, byte_column - skipped + 1


_CONTINUATION = re.compile(rb"[\x80-\xbf]")
