"""What every format produces and is built on: a Document of located facts and references.

A format turns one file into facts ``(pointer, value, location)`` where ``pointer`` is a JSON
pointer into the job model, and the framework defaults the file leaves unset. Formats never
judge; they only say what a file sets and where. The package's modules are what every format
shares: the contract (``format``), key tables (``table``) and value normalisers
(``normalize``), secret redaction, typo hints, trainlint's own annotations, and what a launch
or a file no format reads is for (``purpose``, ``workloads``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import PurePosixPath
from typing import Any, Literal

from trainlint.job import Location, ParseError, UnknownKey
from trainlint.sources.structured import Tree, load_json, load_yaml

Role = Literal["entrypoint", "config", "deepspeed", "unknown", "member"]

# Precedence when two documents of one job set the same pointer (higher wins): a command-line
# flag beats the config it overrides, which beats a DeepSpeed JSON (whose "auto" values defer to
# the trainer anyway).
PRECEDENCE: dict[Role, int] = {
    "entrypoint": 3, "config": 2, "deepspeed": 1, "unknown": 0, "member": 0,
}  # fmt: skip


# Facts that only a training run states: how long it runs, its batch, how often it saves,
# evaluates or logs (a file with none of them is no training config on its own).
RUN_SETTINGS = frozenset({
    "/training/max_steps", "/training/epochs", "/training/total_steps",
    "/training/micro_batch_size", "/training/global_batch_size", "/checkpoint/every_steps",
    "/checkpoint/every_epochs", "/checkpoint/every_seconds", "/eval/every_steps",
    "/logging/every_steps",
})  # fmt: skip


def pointer(*parts: str | int) -> str:
    """A JSON pointer (RFC 6901) from raw parts: ``pointer("tags", "a/b")`` → ``/tags/a~1b``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True)
class Fact:
    pointer: str
    value: Any
    location: Location


@dataclass(frozen=True)
class DocumentDefault:
    """A framework's default for a key one document leaves unset: the value the run then uses
    (None: a value the framework picks each run, such as a random seed) or the pointer whose
    value it takes (``same_as``), the key a user would set to change it, and where that key
    would go. Never a stated fact: it makes no file a job and no estimate declared. The job
    keeps one per pointer, apart from its facts, as a ``job.Default`` (``Job.defaults``; that
    published shape has the format and no pointer, so the two are not one class)."""

    pointer: str
    value: str | int | float | bool | list[str] | None
    key: str
    location: Location
    same_as: str | None = None


def top_of(path: str) -> Location:
    """Where a key a file leaves unset would go, for a default with no better place."""
    return Location(file=path, line=1, column=1)


def seed_default(value: int | None, key: str, file: str) -> DocumentDefault:
    """The framework's seed for a file that sets none (None: it draws a random seed each
    run), located at the top of the file, where a user adds ``key``."""
    return DocumentDefault("/training/seed", value, key, top_of(file))


@dataclass(frozen=True)
class Reference:
    """Another file this one points at, e.g. ``--deepspeed ds.json`` (path as written).

    ``anchor`` is the file the path is relative to when that is not the referring file: a
    Hydra app's script (``--config-path`` is relative to it). When the anchor is not in the
    repository, or the source knows the file cannot be looked for here (``unresolved``: the
    script writes it, the shell finds it on PATH, a variable of unknown value names its
    folder), the reference is unresolved, never missing.

    ``own_run`` marks a config this one is built over that is a run of its own (an MMEngine
    config inheriting another outside ``_base_/``): its files are sources of this job, so a
    change to them touches it, yet this job does not swallow it: it roots its own job when it
    shows training."""

    path: str
    location: Location
    role: Role = "config"
    anchor: str | None = None
    unresolved: str | None = None  # why no one can look for it here, as its source knows
    in_app_config: bool = False  # relative to the anchor app's @hydra.main(config_path=...)
    app_config_name: bool = False  # the config_name of that @hydra.main: no --config-name
    optional: bool = False  # read when present, nothing when absent (a launch's entry script)
    own_run: bool = False  # a base that is a run of its own: a member here, still its own job


@dataclass(frozen=True)
class Override:
    """A command-line setting for the referenced configs to read in their own terms
    (``--trainer.devices 2``, ``batch_size=8``): the entry script does not know their format."""

    key: str
    value: str | bool
    location: Location


@dataclass(frozen=True)
class ProgramArgument:
    """A command-line argument an entry script defines (``add_argument("--epochs", …)``), as
    the job reads a launch line's flag for it: the name its table maps (``sources.python.
    arguments``), and for a switch the value a bare flag sets (``store_true``: True)."""

    name: str
    switch: bool | None = None


@dataclass(frozen=True)
class UnsupportedWorkload:
    """A GPU training workload trainlint does not understand (TL907, unsupported-workload):
    what it looks like, and where. Not ``probe.result.Workload``, what a probe ran."""

    kind: str
    location: Location
    evidence: str


Line = tuple[int, str]
"""A line of a file's text and its 1-based number."""


@dataclass(frozen=True)
class Skipped:
    """A candidate file that is no part of any job, and why.

    ``error`` keeps the parse error of a file that is not valid in its syntax: it is nobody's
    problem until a job references the file, and then it is that job's TL901."""

    path: str
    reason: str
    workload: UnsupportedWorkload | None = None
    error: ParseError | None = None
    trainlint_lines: tuple[Line, ...] = ()
    """The lines that mention ``trainlint:`` (``keep_trainlint_lines``)."""


@dataclass
class Document:
    path: str
    format: str
    confidence: float
    role: Role = "config"
    facts: list[Fact] = field(default_factory=list)
    defaults: list[DocumentDefault] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    unknown_keys: list[UnknownKey] = field(default_factory=list)
    overrides: list[Override] = field(default_factory=list)
    program: Reference | None = None
    """The Python script a launch runs (``torchrun main.py``), followed like a reference when
    it is in the repository and ignored when not (``Reference.optional``)."""
    arguments: dict[str, ProgramArgument] = field(default_factory=dict)
    """The command-line flags the file defines as an entry script (spelling without dashes →
    argument): a launch line's flags no format reads are read through them."""
    purpose: str | None = None
    """Why the file is no training run although a format reads it (an evaluation or serving
    launch): it then roots no job (``assemble.trains``)."""
    launches_training: bool = False
    """The format found a launch that certainly trains (a distributed launcher, an entry named
    for training, a training program of another tool): the file roots a job."""
    workload: UnsupportedWorkload | None = None
    """A GPU workload in the file that the format could not read (a launch built in a
    variable): reported as not understood (TL907) when the file roots no job."""
    trainlint_lines: tuple[Line, ...] = ()
    """The lines that mention ``trainlint:``, where an inline ignore can be written
    (``keep_trainlint_lines``)."""
    consulted: tuple[tuple[str, str], ...] = ()
    """The other files reading this one consulted (``consulted``: a base config read, a
    place checked for a script), which its reading depends on as much as on its own text."""


TRAINLINT_MARK = "trainlint:"


def keep_trainlint_lines(read: Document | Skipped, text: str) -> Document | Skipped:
    """``read`` (a file's Document or Skipped) with the lines of its ``text`` that mention
    ``trainlint:``, where an inline ignore can be written. Kept when the file is read, so the
    suppressions never open it again, and a worker process sends back these lines rather than
    the text. JSON has no comments: none."""
    if TRAINLINT_MARK not in text or PurePosixPath(read.path).suffix.lower() == ".json":
        return read
    numbered = enumerate(text.splitlines(), start=1)
    return replace(read, trainlint_lines=tuple(n for n in numbered if TRAINLINT_MARK in n[1]))


@dataclass
class Input:
    """One file as the sources see it; the structured parse is done once and shared."""

    path: str
    text: str

    @property
    def suffix(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name.rsplit(".", 1)[-1].lower() if "." in name else ""

    @property
    def is_structured(self) -> bool:
        return self.suffix in STRUCTURED_SUFFIXES

    @cached_property
    def trees(self) -> list[Tree]:
        """The YAML/JSON documents of the file; raises SourceError when invalid."""
        if self.suffix == "json":
            return [load_json(self.text)]
        return load_yaml(self.text)

    @property
    def mapping(self) -> dict[str, Any]:
        """The first document when it is a mapping (what most config formats are), else {}."""
        data = self.trees[0].data if self.trees else None
        return data if isinstance(data, dict) else {}


STRUCTURED_SUFFIXES = frozenset({"yaml", "yml", "json"})
