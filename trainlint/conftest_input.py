"""Conftest mode's input: each file parsed as conftest parses it, one input per document.

conftest (``parser/``, ``policy/engine.go``) hands a policy the file's parsed value as
``input``; when that value is a list (a multi-document YAML file, or a file whose top level is
a list) each element is evaluated as an input of its own, under the same file name. So a
``PyTorchJob`` manifest is ``{"apiVersion": ..., "kind": "PyTorchJob", ...}`` and
``input.kind == "PyTorchJob"`` holds, whatever trainlint's formats make of the file.

The files are read by the sources' own structured readers (``load_yaml``, ``load_json``,
``load_toml``: the same size, nesting and alias limits as every other read, and the line and
column of every key), then made plain as conftest's Go parsers make them: a value under
another tool's tag (``!Ref``, ``!reference``) is the value it tags, dates and times are
strings. An empty YAML document is skipped, and so is a template that does not parse (Helm's
``{{ .Values.x }}``): conftest checks rendered output. A result's JSON ``pointer`` lands where
its value is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainlint.errors import SourceError
from trainlint.job import Location
from trainlint.sources.base import Input as SourceInput
from trainlint.sources.base.workloads import template_kind
from trainlint.sources.structured import KeyPath, Tagged, Tree, load_json, load_yaml
from trainlint.sources.structured.toml import load_toml

SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}
_READERS: dict[str, Callable[[str], list[Tree]]] = {
    "yaml": load_yaml,
    "json": lambda text: [load_json(text)],
    "toml": lambda text: [load_toml(text)],
}


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
    parse, but none for a template (Helm, Jinja) that does not: conftest reads what it renders
    to, and the check's own outcome for it already says so."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(exc)) from None
    try:
        return parse_inputs(text, SUFFIXES[path.suffix.lower()], shown)
    except InputError:
        if template_kind(SourceInput(shown, text), parses=False) is not None:
            return []
        raise


def parse_inputs(text: str, kind: str, shown: str) -> list[Input]:
    """``text`` of format ``kind`` (yaml, json, toml) as conftest's inputs."""
    try:
        trees = [tree for tree in _READERS[kind](text) if tree.data is not None]
    except SourceError as exc:
        raise InputError(f"{shown}:{exc.line}:{exc.column}: {exc.message}") from None
    if len(trees) == 1 and isinstance(trees[0].data, list):  # one list: one input per element
        tree = trees[0]
        return [_input(item, tree, (index,), shown, index) for index, item in enumerate(tree.data)]
    return [_input(tree.data, tree, (), shown, index) for index, tree in enumerate(trees)]


def _input(value: Any, tree: Tree, root: KeyPath, shown: str, index: int) -> Input:
    """The value at ``root`` of ``tree``, plain, with the places of its values by pointer."""
    positions = {
        _pointer(path[len(root) :]): span
        for path, span in tree.spans.items()
        if path[: len(root)] == root
    }
    line = tree.span(root)[0]
    return Input(_plain(value), shown, line, index, positions)


def _pointer(path: KeyPath) -> str:
    """A key path as a JSON pointer (``("spec", "replicas")`` -> ``/spec/replicas``)."""
    return "".join(f"/{str(key).replace('~', '~0').replace('/', '~1')}" for key in path)


def _plain(value: Any) -> Any:
    """JSON's values only, as conftest hands them to OPA: a tagged value is what it tags,
    dates and times are strings."""
    return json.loads(json.dumps(value, default=_untagged))


def _untagged(value: Any) -> Any:
    return value.value if isinstance(value, Tagged) else str(value)
