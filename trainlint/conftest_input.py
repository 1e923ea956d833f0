"""Conftest mode's input: each file parsed as conftest parses it, one input per document.

conftest (``parser/``, ``policy/engine.go``) hands a policy the file's parsed value as
``input``; when that value is a list (a multi-document YAML file, or a file whose top level is
a list) each element is evaluated as an input of its own, under the same file name. So a
``PyTorchJob`` manifest is ``{"apiVersion": ..., "kind": "PyTorchJob", ...}`` and
``input.kind == "PyTorchJob"`` holds, whatever trainlint's formats make of the file.

Formats, by suffix: YAML (``.yaml``, ``.yml``; an empty document is skipped; tags of other
tools, ``!Ref`` or ``!reference``, read as their plain value, as Go's YAML does), JSON and
TOML. Dates and times become strings, as they do when conftest hands Go values to OPA. Each
input keeps the line where its document starts, and in YAML the line and column of every
value, so a result's JSON ``pointer`` lands where the value is written.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trainlint.job import Location

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}
MAX_BYTES = 8 * 1024 * 1024
"""A larger file is no configuration; it is reported, not parsed."""


class InputError(ValueError):
    """A file conftest mode cannot parse (conftest fails on it too)."""


@dataclass(frozen=True)
class Input:
    """One document of a file: conftest's ``input``, where it starts, where its values are."""

    value: Any
    file: str
    line: int
    index: int  # the document's place in its file: part of a finding's identity
    positions: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False)

    def locate(self, pointer: str | None) -> Location:
        """The line and column of ``pointer`` (or its nearest parent), else the document's."""
        probe = pointer or ""
        while probe:
            if probe in self.positions:
                line, column = self.positions[probe]
                return Location(file=self.file, line=line, column=column)
            probe = probe.rsplit("/", 1)[0]
        return Location(file=self.file, line=self.line, column=1)


def is_input(path: Path) -> bool:
    return path.suffix.lower() in SUFFIXES


def read_inputs(path: Path, shown: str) -> list[Input]:
    """The inputs of one file (``shown``: its name in findings); InputError when it does not
    parse."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"over {MAX_BYTES // 1024**2} MiB")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(exc)) from None
    return parse_inputs(text, SUFFIXES[path.suffix.lower()], shown)


def parse_inputs(text: str, kind: str, shown: str) -> list[Input]:
    """``text`` of format ``kind`` (yaml, json, toml) as conftest's inputs."""
    parsers: dict[str, Callable[[str, str], list[Input]]] = {
        "yaml": _yaml_inputs, "json": _json_inputs, "toml": _toml_inputs,
    }  # fmt: skip
    return parsers[kind](text, shown)


def _json_inputs(text: str, shown: str) -> list[Input]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"not JSON: {exc}") from None
    return _split(value, shown)


def _toml_inputs(text: str, shown: str) -> list[Input]:
    try:
        value = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise InputError(f"not TOML: {exc}") from None
    return _split(_plain(value), shown)


def _split(value: Any, shown: str) -> list[Input]:
    """A top-level list is one input per element, as conftest evaluates it."""
    values = value if isinstance(value, list) else [value]
    return [Input(item, shown, 1, index) for index, item in enumerate(values)]


def _yaml_inputs(text: str, shown: str) -> list[Input]:
    try:
        nodes = _yaml_documents(text)
    except (yaml.YAMLError, RecursionError) as exc:
        raise InputError(f"not YAML: {' '.join(str(exc).split())}") from None
    if len(nodes) == 1 and isinstance(nodes[0], yaml.SequenceNode):
        nodes = list(nodes[0].value)  # one document that is a list: one input per element
    inputs = []
    for index, node in enumerate(nodes):
        value = _plain(_Loader.construct(node))
        positions: dict[str, tuple[int, int]] = {}
        _positions(node, "", positions)
        inputs.append(Input(value, shown, node.start_mark.line + 1, index, positions))
    return inputs


def _yaml_documents(text: str) -> list[yaml.Node]:
    """The root node of each non-empty document."""
    loader = _Loader(text)
    try:
        documents = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None and not _is_null(node):
                documents.append(node)
        return documents
    finally:
        loader.dispose()


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _positions(node: yaml.Node, pointer: str, into: dict[str, tuple[int, int]]) -> None:
    """Line and column (1-based) of every value below ``node``, by JSON pointer."""
    into[pointer] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for key, child in node.value:
            if isinstance(key, yaml.ScalarNode):
                below = f"{pointer}/{str(key.value).replace('~', '~0').replace('/', '~1')}"
                _positions(child, below, into)
                into[below] = (key.start_mark.line + 1, key.start_mark.column + 1)  # the key's
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            _positions(child, f"{pointer}/{index}", into)


def _plain(value: Any) -> Any:
    """JSON's values only: dates and times as strings, as conftest hands them to OPA."""
    return json.loads(json.dumps(value, default=str))


class _Loader(yaml.SafeLoader):
    """The safe loader; a tag of another tool reads as the plain value it tags."""

    @classmethod
    def construct(cls, node: yaml.Node) -> Any:
        loader = cls("")
        try:
            return loader.construct_document(node)
        finally:
            loader.dispose()


def _untagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_Loader.add_multi_constructor("!", _untagged)
