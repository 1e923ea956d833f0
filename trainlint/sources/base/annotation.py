"""trainlint's own annotations, for facts no training format states (one meaning everywhere).

Any YAML/JSON config may carry a top-level ``x-trainlint:`` mapping, and any file with ``#``
comments may carry lines ``# trainlint: gpu=A100-80GB gpus=8 tag.team=nlp``. Keys: ``gpu``,
``gpus`` (per node), ``nodes``, ``params``, ``dataset_tokens``, ``dataset_samples``, ``spot``,
``tag.<name>``, ``fallback.<feature>``, ``budget_usd``, ``budget_gpu_hours``, ``runs`` (runs
planned per month, for team budgets; 1 when unset). A key that is not
one of these, or a value that is not valid for its key, is a TL901 error at its line: an
annotation exists only for trainlint, so a mistake in one is never a framework default.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from trainlint.job import Location, ParseError
from trainlint.sources.base import Fact, pointer
from trainlint.sources.base import normalize as n
from trainlint.sources.structured import Tree

BLOCK_KEY = "x-trainlint"
_COMMENT = re.compile(r"#\s*trainlint:\s*(?P<body>(?!ignore)\S.*)$")


def _gpu(value: Any) -> str | None:
    from trainlint.catalog import resolve_gpu

    spec = resolve_gpu(str(value)) if value is not None else None
    return spec.name if spec is not None else None


_SCALARS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "gpu": ("/resources/gpu/model", _gpu),
    "gpus": ("/resources/gpus_per_node", n.positive_int),
    "nodes": ("/resources/nodes", n.positive_int),
    "params": ("/model/params", n.positive_int),
    "dataset_tokens": ("/training/dataset_tokens", n.positive_int),
    "dataset_samples": ("/training/dataset_samples", n.positive_int),
    "spot": ("/resources/spot", n.to_bool),
    "budget_usd": ("/budget/usd", n.positive_float),
    "budget_gpu_hours": ("/budget/gpu_hours", n.positive_float),
    "runs": ("/budget/runs", n.positive_int),
}
_PREFIXED: dict[str, tuple[str, Callable[[str], str]]] = {
    "tag": ("tags", n.tag_key),
    "fallback": ("fallbacks", str.strip),
}
KEYS = (*_SCALARS, *(f"{prefix}.<name>" for prefix in _PREFIXED))


def fact_for(key: str, value: Any, where: Location) -> Fact | ParseError:
    """The fact one annotation states, or the error that says why it states none."""
    if key in _SCALARS:
        target, convert = _SCALARS[key]
        converted = convert(value)
        if converted is None:
            return _error(where, f"invalid value {value!r} for trainlint annotation {key!r}")
        return Fact(target, converted, where)
    prefix, dot, name = key.partition(".")
    if dot and prefix in _PREFIXED and name.strip():
        field, normalise = _PREFIXED[prefix]
        text = n.to_str(value)
        if text is None:
            return _error(where, f"invalid value {value!r} for trainlint annotation {key!r}")
        return Fact(pointer(field, normalise(name)), text, where)
    hint = _closest(key)
    known = f"did you mean {hint!r}?" if hint else f"known keys: {', '.join(KEYS)}"
    return _error(where, f"unknown trainlint annotation key {key!r}; {known}")


def _error(where: Location, message: str) -> ParseError:
    return ParseError(file=where.file, line=where.line, column=where.column, message=message)


def _closest(key: str) -> str | None:
    from trainlint.sources.base.typos import suggest

    prefix, dot, rest = key.partition(".")
    if dot:
        hint = suggest(prefix, list(_PREFIXED), min_length=3)
        return f"{hint}.{rest}" if hint else None
    return suggest(key, list(_SCALARS), min_length=3)


def from_block(tree: Tree, file: str) -> tuple[list[Fact], list[ParseError]]:
    """Facts of a top-level ``x-trainlint:`` mapping (nested ``tag:``/``fallback:`` too)."""
    block = tree.data.get(BLOCK_KEY) if isinstance(tree.data, dict) else None
    if not isinstance(block, dict):
        return [], []
    items: list[tuple[str, Any, tuple[str, ...]]] = []
    for key, value in block.items():
        path = (BLOCK_KEY, str(key))
        if str(key) in ("tags", "tag", "fallbacks", "fallback") and isinstance(value, dict):
            prefix = str(key).rstrip("s")
            items += [(f"{prefix}.{k}", v, (*path, str(k))) for k, v in value.items()]
        else:
            items.append((str(key), value, path))
    return _split(fact_for(k, v, _at(tree, p, file)) for k, v, p in items)


def from_comments(text: str, file: str) -> tuple[list[Fact], list[ParseError]]:
    """Facts of ``# trainlint: key=value ...`` comment lines (not ``# trainlint: ignore``)."""
    results: list[Fact | ParseError] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _COMMENT.search(line)
        if match is None:
            continue
        for key, value, column in _pairs(match.group("body"), match.start("body")):
            results.append(fact_for(key, value, Location(file=file, line=number, column=column)))
    return _split(results)


def _pairs(body: str, offset: int) -> Iterator[tuple[str, str, int]]:
    """``key=value`` pairs of a comment body with the 1-based column of each key."""
    try:
        words = shlex.split(body, comments=False)
    except ValueError:
        words = body.split()
    cursor = 0
    for word in words:
        key, _, value = word.partition("=")
        found = body.find(key, cursor)
        cursor = max(cursor, found + len(key))
        yield key.strip(), value, offset + max(found, 0) + 1


def _at(tree: Tree, path: tuple[str, ...], file: str) -> Location:
    line, column = tree.span(path)
    return Location(file=file, line=line, column=column)


def _split(
    results: Iterable[Fact | ParseError],
) -> tuple[list[Fact], list[ParseError]]:
    results = list(results)
    facts = [r for r in results if isinstance(r, Fact)]
    errors = [r for r in results if isinstance(r, ParseError)]
    return facts, errors
