"""The format registry: every module of this package is one format, declared by its ``FORMAT``.

Adding a format is adding one module here (with its tests and fixtures); nothing else lists
formats. Discovery is checked: a module of this package without ``FORMAT = Format(...)`` is an
error, so what the readers share lives in sub-packages (``base``: the document model and the
``Format`` contract; ``structured``, ``shell``, ``python``: the readers of YAML/JSON/TOML, bash
and Python; ``keys``, ``k8s``: key lists and Kubernetes pieces). Formats are consulted in module
name order, which breaks ties.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import replace
from functools import cache
from types import ModuleType

from trainlint.errors import SourceError
from trainlint.job import ParseError
from trainlint.sources.base import (
    RUN_SETTINGS,
    Document,
    Fact,
    Input,
    Override,
    Skipped,
    annotation,
    workloads,
)
from trainlint.sources.base.format import Flags, Format
from trainlint.sources.base.redact import redact_fact, redact_text


@cache
def all_sources() -> tuple[Format, ...]:
    """The formats of this package, one per module, in module name order (deterministic
    tie-breaking)."""
    modules = sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
    found = [
        registered(importlib.import_module(f"{__name__}.{info.name}"))
        for info in modules
        if not info.ispkg
    ]
    names = [fmt.name for fmt in found]
    if len(set(names)) != len(names):
        raise TypeError(f"two formats of trainlint.sources share a name: {sorted(names)}")
    return tuple(found)


def registered(module: ModuleType) -> Format:
    """The format a module of this package declares; a module declaring none is a helper in
    the wrong place (helpers live in the sub-packages)."""
    declared = vars(module).get("FORMAT")
    if not isinstance(declared, Format):
        raise TypeError(
            f"{module.__name__} declares no FORMAT = Format(...): trainlint/sources/ holds "
            "formats only, shared code belongs in a sub-package"
        )
    return declared


def flag_readers(entrypoint: str | None) -> tuple[Flags, ...]:
    """How the formats that read the flags of ``entrypoint`` (the script or module a launch
    line runs; None when unknown) read them: the formats that name the entry point, alone (a
    flag their program does not know means something else there, or nothing: ESPnet's
    ``--save_strategy`` is not the Trainer's); else those reading any program's flags, in
    module name order."""
    readers = [fmt.flags for fmt in all_sources() if fmt.flags is not None]
    reading = [flags for flags in readers if flags.reads_flags_of(entrypoint)]
    named = [flags for flags in reading if flags.entrypoints is not None]
    return tuple(named or reading)


@cache
def claimed_by_others(name: str) -> frozenset[str]:
    """The top-level keys other formats claim as theirs alone (``Format.claims``)."""
    return frozenset(key for fmt in all_sources() if fmt.name != name for key in fmt.claims)


def read_document(file: Input, forced: str | None = None) -> Document | Skipped:
    """The best-recognised format's reading of ``file`` (or the ``forced`` format's, when the
    repo config names one for it), or why no format reads it (``Skipped``).

    Only a file trainlint owns can be broken (TL901): one a format recognises, one the repo
    config assigns a format, or one whose text shows training keys. Any other file that is not
    valid in its syntax — another tool's YAML, a template, JSON with comments — is skipped, its
    error kept for a job that references it. A file that looks like a GPU workload of another
    tool is skipped with the ``UnsupportedWorkload`` TL907 reports.
    """
    own = workloads.own_output(file)
    if own is not None:
        return Skipped(file.path, own)
    if forced is not None:
        return _read_forced(file, forced)
    try:
        invalid = _syntax_error(file)
        template = workloads.template_kind(file, parses=invalid is None)
        if template is not None:
            return replace(workloads.skipped_template(file, template), error=invalid)
        scored = [(source.recognise(file), index) for index, source in enumerate(all_sources())]
    except SourceError as exc:
        return _unreadable(file, exc)
    confidence, best = max(scored, default=(0.0, -1))
    if confidence <= 0:
        return workloads.classify(file)
    try:
        return finish(all_sources()[best].parse(file), file)
    except SourceError as exc:
        if confidence >= OWNED:
            return broken(file.path, exc.message, exc.line, exc.column)
        return _unreadable(file, exc)


FORCED = 1.0
"""The confidence of a format the repo config assigns: a training file by the user's word."""
OWNED = 0.5
"""A format this sure of a file owns its errors (a shell script with no launch is not ours)."""


def _read_forced(file: Input, forced: str) -> Document:
    """The repo config says what the file is (certain: confidence 1, a job of its own): any
    error in it is a TL901."""
    source = {source.name: source for source in all_sources()}[forced]
    try:
        if (file.is_structured or source.reads == "mapping") and not file.mapping:
            raise SourceError(f"not a {forced} config: the document is empty or not a mapping")
        doc = source.parse(file)
        doc.confidence = FORCED
        return finish(doc, file)
    except SourceError as exc:
        return broken(file.path, exc.message, exc.line, exc.column)


def _syntax_error(file: Input) -> ParseError | None:
    """A structured file's YAML/JSON error, if any (parsed once; the result is cached)."""
    if not file.is_structured:
        return None
    try:
        file.trees  # noqa: B018 - parses and caches
    except SourceError as exc:
        return ParseError(file=file.path, line=exc.line, column=exc.column, message=exc.message)
    return None


def _unreadable(file: Input, exc: SourceError) -> Document | Skipped:
    """A file that is not valid in its syntax: TL901 when it is a training file (a Python or
    shell reader only raises for a file that looks like training code), else skipped with its
    error kept for a job that references it."""
    error = ParseError(file=file.path, line=exc.line, column=exc.column, message=exc.message)
    if file.suffix == "py" or workloads.looks_like_training(file):
        return broken(file.path, exc.message, exc.line, exc.column)
    reason = f"not a training config, and not valid in its syntax ({exc.message}, line {exc.line})"
    return Skipped(file.path, reason, error=error)


CERTAIN = 0.8
"""Recognition at least this sure may call a key a typo (TL903): a format read on a weaker
guess would call another tool's keys typos of its own (dinov2's ``optim`` block is not HF's)."""


def finish(doc: Document, file: Input) -> Document:
    """Add the file's trainlint annotations (they win within the file), redact secrets, keep
    the typo findings only of a format recognised with certainty, and the framework defaults
    only of keys the file leaves unset."""
    if doc.confidence < CERTAIN:
        doc.unknown_keys = []
    facts, errors = annotation.from_comments(file.text, file.path)
    if file.suffix == "json":
        facts, errors = [], []  # JSON has no comments
    if file.is_structured and file.trees:
        block_facts, block_errors = annotation.from_block(file.trees[0], file.path)
        facts, errors = facts + block_facts, errors + block_errors
    doc.facts = [redact_fact(fact) for fact in [*doc.facts, *facts]]
    doc.purpose = redact_text(doc.purpose) if doc.purpose else doc.purpose  # names the entry
    doc.errors += errors
    stated = {fact.pointer for fact in doc.facts}
    doc.defaults = [default for default in doc.defaults if default.pointer not in stated]
    if doc.workload is None and RUN_SETTINGS.isdisjoint(fact.pointer for fact in doc.facts):
        doc.workload = workloads.training_config(file) or workloads.gpu_request(
            file, f"{doc.format} file requesting GPUs for a workload trainlint cannot read"
        )  # read, yet not understood: reported when the file joins no job
    return doc


def broken(path: str, message: str, line: int = 1, column: int = 1) -> Document:
    """A Document for a file that could not be read or parsed (reported as TL901)."""
    error = ParseError(file=path, line=line, column=column, message=message)
    return Document(path, "unknown", 0.0, "unknown", errors=[error])


def override_facts(fmt: str, override: Override) -> list[Fact]:
    """What a command-line override means to a config of format ``fmt`` (none for a name no
    format has: an unreadable file's ``unknown``)."""
    found = next((source for source in all_sources() if source.name == fmt), None)
    return [] if found is None else found.override_facts(override)
