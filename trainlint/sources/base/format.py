"""The format contract: what a format module declares, once, as ``FORMAT = Format(...)``.

The registry (``trainlint.sources``) takes the ``FORMAT`` of every module of the package; the
docs, the repo config, the launch line and command-line overrides use only what is declared
here, so mypy checks every format against one contract and nothing is looked up by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from trainlint.errors import SourceError
from trainlint.job import Location
from trainlint.sources.base import Document, DocumentDefault, Fact, Input, Override, Role
from trainlint.sources.base.table import JobField, Table, facts_for

Reads = Literal["mapping", "text"]
"""``mapping``: the format parses a YAML/JSON mapping, so a file the repo config forces on it
must be one; ``text``: it reads a syntax of its own (bash, Python, TOML, command-line flags)."""

FlagFacts = Callable[[str, Any, Location], list[Fact]]
"""One command-line flag (``--save_steps``), its value (True for a bare flag) and where it is
written → the facts it states; [] for a flag the format does not know."""


def no_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """A format whose framework leaves nothing unset that a rule needs."""
    return []


@dataclass(frozen=True)
class Flags:
    """How a format reads the command-line flags of a program it configures (``train.py
    --save_steps 10``). A launch line asks the registry which formats read the flags of the
    entry point it runs (``sources.flag_readers``) and gives each flag to the first of them
    that knows it."""

    facts: FlagFacts
    entrypoints: re.Pattern[str] | None = None
    """The entry points whose flags the format reads (searched in the entry as written:
    ``espnet2\\.bin\\.\\w+_train``); None for the flags of any program."""
    defaults: Callable[[Sequence[Fact]], list[DocumentDefault]] = no_defaults
    """The framework's defaults for what a launch line stating ``facts`` leaves unset."""
    together: Callable[[Mapping[str, tuple[Any, Location]]], list[Fact]] | None = None
    """Facts that only several flags state together (llm.c's ``-d`` tokens per step over
    ``-t`` tokens per sequence is the global batch): every flag → (value, where)."""
    hydra_overrides: bool = False
    """Its program is a Hydra app: a launch line's ``key=value`` words are its settings too
    (verl's ``trainer.nnodes=2``), read as flags named ``key``."""
    single_dash: bool = False
    """Its program takes ``-x value`` options (one dash, a letter or two, always a value:
    llm.c's ``train_gpt2cu -b 64``) instead of ``--flag [value]``."""
    first_positional: FlagFacts | None = None
    """The facts of the program's first argument when it is no option (timm's
    ``distributed_train.sh 8 --model resnet50``: 8 processes), called with ``""`` as the flag."""
    key_values: bool = False
    """Its program takes ``key=value`` arguments (Ultralytics' ``yolo train epochs=10``): each
    is read as a flag named ``key`` (never as a file, whatever its value names)."""
    arguments: Callable[[Sequence[tuple[str | None, Location]]], list[Fact]] | None = None
    """Reads the program's arguments itself, in order, each as written (None: of unknown value)
    and where: for a program whose trailing words are settings (detectron2's ``train_net.py
    --num-gpus 8 --config-file f.yaml SOLVER.IMS_PER_BATCH 16``)."""
    config_keys: frozenset[str] = frozenset()
    """The flags or ``key=value`` keys naming a config file of the program (Ultralytics'
    ``cfg=``, detectron2's ``--config-file`` of a Python LazyConfig), without dashes:
    followed when the file is in the repository, nothing when not (the tool also searches
    its own package)."""

    def reads_flags_of(self, entrypoint: str | None) -> bool:
        if self.entrypoints is None:
            return True
        return entrypoint is not None and self.entrypoints.search(entrypoint) is not None


Words = Sequence[tuple[str | None, Location]]
"""A program's arguments as ``Flags.arguments`` gets them: each as written (None: of unknown
value) and where."""


def leading_options(
    words: Words, valued: frozenset[str]
) -> tuple[list[tuple[str, str | None, Location]], Words]:
    """The ``--flag [value]`` options before the first positional word (argparse's
    ``REMAINDER`` takes the rest), each as (flag, value, where), and the rest. A flag in
    ``valued`` takes the next word unless written ``--flag=value``; any other is a switch."""
    options: list[tuple[str, str | None, Location]] = []
    index = 0
    while index < len(words):
        text, where = words[index]
        if text is None or not text.startswith("--"):
            break
        flag, eq, attached = text.partition("=")
        value: str | None = attached
        if flag in valued and not eq:
            value = words[index + 1][0] if index + 1 < len(words) else None
            index += 1
        options.append((flag, value, where))
        index += 1
    return options, words[index:]


OverrideFacts = Callable[[str, Any, Location], list[Fact]]
"""A dotted command-line key (``trainer.devices``), its value and where it is written → facts."""


@dataclass(frozen=True, eq=False)
class Format:
    """One input format. ``recognise`` scores a file 0..1 (the best score reads it);
    ``parse`` turns it into a Document. Both may raise SourceError (e.g. through
    ``Input.trees``), which the registry reports as TL901."""

    name: str
    role: Role
    doc: str | None = field(repr=False)
    """The module's docstring: its first paragraph is the format's summary in the docs."""
    examples: tuple[str, ...]
    """File names the format reads, as the docs list them."""
    reads: Reads
    recognise: Callable[[Input], float] = field(repr=False)
    parse: Callable[[Input], Document] = field(repr=False)
    keys: Callable[[], dict[str, list[str]]] = field(repr=False)
    """What the format reads → the job-model pointers it sets (docs/formats.md)."""
    table: Table | None = field(default=None, repr=False)
    """Key path → rules: read for a command-line override by its dotted key, unless
    ``overrides`` reads them."""
    overrides: OverrideFacts | None = field(default=None, repr=False)
    flags: Flags | None = field(default=None, repr=False)
    claims: frozenset[str] = frozenset()
    """Top-level keys no other tool accepts: a file with one is this format's whatever keys it
    shares with others. A format reading keys many tools share (HF TrainingArguments) asks the
    registry for the others' claims and yields to them."""

    def override_facts(self, override: Override) -> list[Fact]:
        """What a command-line override (``--trainer.devices 2``, ``batch_size=8``) means to a
        config of this format: ``overrides`` when declared, else ``table`` by the dotted key."""
        if self.overrides is not None:
            return self.overrides(override.key, override.value, override.location)
        if self.table is None:
            return []
        path = tuple(part.replace("-", "_") for part in override.key.split("."))
        return facts_for(self.table.get(path, []), override.value, override.location)


def no_file(file: Input) -> float:
    """``recognise`` of a format configured only on the command line (Megatron-LM, OpenRLHF,
    llm.c): no file is ever its."""
    return 0.0


def flag_keys(flags: Mapping[str, Sequence[JobField]]) -> dict[str, list[str]]:
    """``keys`` of a format read from its flags: each ``--flag`` → the job-model pointers it
    sets (docs/formats.md)."""
    return {f"--{flag}": [field.pointer for field in fields] for flag, fields in flags.items()}


def flags_only(name: str) -> Callable[[Input], Document]:
    """``parse`` of such a format: asked for a file, it says where its settings live."""

    def parse(file: Input) -> Document:
        raise SourceError(f"{name} has no config file: its settings are a launch line's flags")

    return parse
