"""Source registry: every module in this folder with ``recognise`` and ``parse`` is a format.

Adding a format is adding one module here (plus its tests); nothing else lists them.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import cast

from trainlint.errors import SourceError
from trainlint.job import ParseError
from trainlint.sources import annotation
from trainlint.sources.base import Document, Fact, Input, Override, Source
from trainlint.sources.redact import redact_fact
from trainlint.sources.table import facts_for

_HELPERS = {
    "annotation", "typos", "base", "structured", "table", "normalize", "redact",
    "shell", "shell_words", "shell_walk", "shell_arith", "slurm", "launchers", "launcher_options",
}  # fmt: skip


@cache
def all_sources() -> tuple[Source, ...]:
    """The format modules of this package, in name order (deterministic tie-breaking)."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in _HELPERS or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "recognise") and hasattr(module, "parse"):
            found.append(cast(Source, module))
    return tuple(found)


def read_document(file: Input, forced: str | None = None) -> Document | None:
    """The best-recognised format's reading of ``file`` (or the ``forced`` format's, when the
    repo config names one for it); None when no format claims it.

    A file that cannot be parsed yields a Document holding its ParseError, never an exception.
    """
    try:
        by_name = {source.name: source for source in all_sources()}
        if forced is not None:
            source = by_name[forced]
            if (file.is_structured or _reads_yaml_or_json(source)) and not file.mapping:
                raise SourceError(f"not a {forced} config: the document is empty or not a mapping")
            return finish(source.parse(file), file)
        scored = [(source.recognise(file), index) for index, source in enumerate(all_sources())]
        confidence, best = max(scored, default=(0.0, -1))
        if confidence <= 0:
            return None
        return finish(all_sources()[best].parse(file), file)
    except SourceError as exc:
        return broken(file.path, exc.message, exc.line, exc.column)


def _reads_yaml_or_json(source: Source) -> bool:
    """A format whose example files are all YAML/JSON parses a mapping (a shell script or a
    TOML file forced onto it by the repo config is no such document)."""
    examples = getattr(source, "EXAMPLES", ())
    return bool(examples) and all(Input(name, "").is_structured for name in examples)


def finish(doc: Document, file: Input) -> Document:
    """Add the file's trainlint annotations (they win within the file) and redact secrets."""
    facts, errors = annotation.from_comments(file.text, file.path)
    if file.suffix == "json":
        facts, errors = [], []  # JSON has no comments
    if file.is_structured and file.trees:
        block_facts, block_errors = annotation.from_block(file.trees[0], file.path)
        facts, errors = facts + block_facts, errors + block_errors
    doc.facts = [redact_fact(fact) for fact in [*doc.facts, *facts]]
    doc.errors += errors
    return doc


def broken(path: str, message: str, line: int = 1, column: int = 1) -> Document:
    """A Document for a file that could not be read or parsed (reported as TL901)."""
    error = ParseError(file=path, line=line, column=column, message=message)
    return Document(path, "unknown", 0.0, "unknown", errors=[error])


def override_facts(fmt: str, override: Override) -> list[Fact]:
    """What a command-line override means to a config of format ``fmt``: the format's own
    ``override_facts`` if it has one, else its ``TABLE`` looked up by the dotted key."""
    module = next((s for s in all_sources() if s.name == fmt), None)
    if module is None:
        return []
    custom = getattr(module, "override_facts", None)
    if callable(custom):
        return list(custom(override.key, override.value, override.location))
    table = getattr(module, "TABLE", None)
    if not isinstance(table, dict):
        return []
    path = tuple(part.replace("-", "_") for part in override.key.split("."))
    return facts_for(table.get(path, []), override.value, override.location)
