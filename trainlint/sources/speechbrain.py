"""SpeechBrain HyperPyYAML hparams (``python train.py hparams/train.yaml``, ``torchrun
--nproc_per_node 4 train.py hparams/conformer.yaml``): a YAML file whose tags build the
recipe's objects (``!new:``, ``!name:``, ``!apply:``, ``!ref <key>``, ``!include:``,
``!PLACEHOLDER``). The tags are read as opaque values, never constructed; ``!ref <key>`` is
followed only when it names a key holding a plain number or switch.

What the keys mean, read from SpeechBrain's code (speechbrain/core.py ``Brain.__init__``,
speechbrain/utils/run_opts.py ``RunOptions``, speechbrain/utils/epoch_loop.py):

- ``Brain`` takes each ``RunOptions`` field from the command line, else from the hparams,
  else its default: ``precision`` (``fp32`` by default; ``fp16``/``bf16`` autocast),
  the deprecated ``auto_mix_prec`` (fp16) and ``bfloat16_mix_prec`` (bf16),
  ``grad_accumulation_factor`` (batches per optimizer step, default 1),
  ``ckpt_interval_minutes`` (an intra-epoch checkpoint every N minutes, default 0: none).
- Checkpoints are saved through the ``Checkpointer`` the hparams define, by
  ``save_and_keep_only``, whose ``num_to_keep`` is 1 unless the recipe passes an hparam
  (``avg_checkpoints``, ``keep_checkpoints``, ``num_to_keep``): that retention is stated.
- The run's length is the ``EpochCounter`` the recipe hands to ``fit``: its ``limit``
  (``epoch_counter: !new:...EpochCounter {limit: !ref <number_of_epochs>}``), else a
  top-level ``number_of_epochs``.
- The batch is each process's DataLoader's (``train_dataloader_opts``/``dataloader_opts``/
  ``dataloader_options`` ``batch_size``, else the top-level ``batch_size``), and no batch at
  all under ``dynamic_batching: True`` (the sampler fills batches by total length).
  ``num_workers`` is that DataLoader's, ``seed`` the recipe's.

Defaults (``Document.defaults``): ``RunOptions.precision`` fp32 at the top of the file, where a
user adds ``precision: fp16``. A launch line's ``--key value`` after the hparams file overrides
the same key (``--number_of_epochs 2``), as SpeechBrain's ``load_hyperpyyaml`` overrides do.
``!include:`` files are members of the job.
"""

from __future__ import annotations

import re
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Document, DocumentDefault, Fact, Input, Reference, Role, top_of
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe
from trainlint.sources.structured import KeyPath, Tagged, Tree
from trainlint.sources.structured.located import fact, tree_locator

name = "speechbrain"
role: Role = "config"

_TAGS = re.compile(r"!(?:new|name|apply|include|copy):|!ref\s+<|!PLACEHOLDER\b")
_REF = re.compile(r"<([\w.\[\]]+)>")
_PRECISIONS = {"fp32": "fp32", "fp16": "fp16", "bf16": "bf16"}
_LOADERS = (
    "train_dataloader_opts",
    "train_dataloader_options",
    "dataloader_opts",
    "dataloader_options",
    "train_loader_kwargs",
)


# The hparams recipes pass to save_and_keep_only(num_to_keep=...).
_KEEP_KEYS = ("avg_checkpoints", "keep_checkpoints", "num_to_keep")


def recognise(file: Input) -> float:
    """A YAML file whose values use HyperPyYAML's tags: no other tool writes them."""
    if file.suffix not in ("yaml", "yml") or not _TAGS.search(file.text):
        return 0.0
    data = file.mapping
    return 0.9 if any(isinstance(value, Tagged) for value in data.values()) else 0.0


def _precision(value: Any) -> str | None:
    text = n.to_str(value)
    return _PRECISIONS.get(text.strip().lower()) if text else None


def _minutes(value: Any) -> float | None:
    minutes = n.to_float(value)
    return minutes * 60.0 if minutes is not None and minutes > 0 else None


def _epochs(value: Any) -> float | None:
    epochs = n.positive_int(value)
    return None if epochs is None else float(epochs)


TABLE: dict[KeyPath, list[JobField]] = {
    ("number_of_epochs",): [JobField("/training/epochs", _epochs)],
    ("precision",): [JobField("/training/precision", _precision)],
    ("auto_mix_prec",): [JobField("/training/precision", n.when_true("fp16"))],
    ("bfloat16_mix_prec",): [JobField("/training/precision", n.when_true("bf16"))],
    ("grad_accumulation_factor",): [JobField("/training/grad_accum_steps", n.positive_int)],
    ("ckpt_interval_minutes",): [JobField("/checkpoint/every_seconds", _minutes)],
    ("batch_size",): [JobField("/training/micro_batch_size", n.positive_int)],
    ("num_workers",): [JobField("/data/num_workers", n.to_int)],
    ("seed",): [JobField("/training/seed", n.to_int)],
}


def parse(file: Input) -> Document:
    tree = file.trees[0] if file.trees else Tree({})
    data = tree.data if isinstance(tree.data, dict) else {}
    reading = _Reading(data, tree, file.path)
    doc = Document(file.path, name, recognise(file), role)
    doc.facts = reading.facts()
    doc.references = _includes(data, tree, file.path)
    doc.defaults = [DocumentDefault("/training/precision", "fp32", "precision", top_of(file.path))]
    return doc


class _Reading:
    """The hparams' facts, each at the key whose value it is (a ``!ref``'s target)."""

    def __init__(self, data: dict[str, Any], tree: Tree, path: str) -> None:
        self.data, self.locate = data, tree_locator(tree, path)

    def resolve(self, value: Any, at: KeyPath, depth: int = 0) -> tuple[Any, KeyPath]:
        """A ``!ref <key>`` naming a top-level key of a plain value → that value and key;
        any other tagged value (arithmetic, an object) is unknown."""
        if not isinstance(value, Tagged):
            return value, at
        match = _REF.fullmatch(str(value.value).strip()) if value.tag == "!ref" else None
        target = match.group(1) if match else None
        if target is None or target not in self.data or depth > 8:
            return None, at
        return self.resolve(self.data[target], (target,), depth + 1)

    def value(self, path: KeyPath) -> tuple[Any, KeyPath]:
        node: Any = self.data
        for part in path:
            node = node.value if isinstance(node, Tagged) else node
            if not isinstance(node, dict) or part not in node:
                return None, path
            node = node[part]
        return self.resolve(node, path)

    def read(self, key: str, path: KeyPath) -> list[Fact]:
        """The facts of ``TABLE[(key,)]`` for the value at ``path``."""
        value, at = self.value(path)
        where = self.locate(at)
        return [f for rule in TABLE[(key,)] for f in fact(rule.pointer, rule.convert(value), where)]

    def facts(self) -> list[Fact]:
        found = self.precision()
        for key in ("grad_accumulation_factor", "ckpt_interval_minutes", "seed"):
            found += self.read(key, (key,))
        return found + self.epochs() + self.loader() + self.retention()

    def retention(self) -> list[Fact]:
        """Checkpoints kept: recipes save through ``Checkpointer.save_and_keep_only``, which
        keeps ``num_to_keep=1`` unless the recipe passes an hparam (``avg_checkpoints``,
        ``keep_checkpoints``, ``num_to_keep``); ``Brain``'s intra-epoch saves keep 1. Stated
        for a file defining a Checkpointer, so the storage estimate never takes every save
        as kept."""
        checkpointers = [
            key for key, value in self.data.items()
            if isinstance(value, Tagged) and "Checkpointer" in value.tag
        ]  # fmt: skip
        checkpointer = checkpointers[0] if checkpointers else None
        if checkpointer is None:
            return []
        for key in _KEEP_KEYS:
            kept, at = self.value((key,))
            if n.positive_int(kept) is not None:
                return fact("/checkpoint/keep_last", n.positive_int(kept), self.locate(at))
        return fact("/checkpoint/keep_last", 1, self.locate((checkpointer,)))

    def precision(self) -> list[Fact]:
        """``Brain.__init__``: a true ``bfloat16_mix_prec`` wins, then ``auto_mix_prec``,
        then ``precision``."""
        for key in ("bfloat16_mix_prec", "auto_mix_prec", "precision"):
            found = self.read(key, (key,))
            if found:
                return found
        return []

    def epochs(self) -> list[Fact]:
        counter = self.data.get("epoch_counter")
        if isinstance(counter, Tagged) and "EpochCounter" in counter.tag:
            limit = self.read("number_of_epochs", ("epoch_counter", "limit"))
            if limit:
                return limit
        return self.read("number_of_epochs", ("number_of_epochs",))

    def loader(self) -> list[Fact]:
        """The training DataLoader's batch (none under dynamic batching) and workers."""
        options = next((key for key in _LOADERS if isinstance(self.data.get(key), dict)), None)
        found: list[Fact] = []
        if options is not None:
            found += self.read("num_workers", (options, "num_workers"))
        if not _has(found, "/data/num_workers"):
            found += self.read("num_workers", ("num_workers",))
        if n.to_bool(self.resolve(self.data.get("dynamic_batching"), ())[0]):
            return found
        if options is not None:
            found += self.read("batch_size", (options, "batch_size"))
        if not _has(found, "/training/micro_batch_size"):
            found += self.read("batch_size", ("batch_size",))
        return found


def _has(facts: list[Fact], pointer: str) -> bool:
    return any(f.pointer == pointer for f in facts)


def _includes(data: dict[str, Any], tree: Tree, path: str) -> list[Reference]:
    """``!include:models/x.yaml`` values: the included file, relative to this one."""
    locate = tree_locator(tree, path)
    found = []
    for key, value in data.items():
        if isinstance(value, Tagged) and value.tag.startswith("!include:"):
            target = value.tag.removeprefix("!include:").strip()
            if target:
                found.append(Reference(target, locate((key,)), "member"))
    return found


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    described = describe(TABLE)
    described["epoch_counter (EpochCounter limit), else number_of_epochs"] = described.pop(
        "number_of_epochs"
    )
    described["batch_size of train_dataloader_opts / dataloader_opts, else batch_size "
              "(not under dynamic_batching)"] = described.pop("batch_size")  # fmt: skip
    described["!ref <key> to a plain value"] = ["(the key's value)"]
    described["!include:file.yaml"] = ["(reference)"]
    described["a Checkpointer (num_to_keep 1, or avg_checkpoints / keep_checkpoints)"] = [
        "/checkpoint/keep_last"
    ]
    return described


def override_facts(key: str, value: Any, location: Location) -> list[Fact]:
    """``python train.py hparams/x.yaml --number_of_epochs 2 --precision fp16``."""
    rules = TABLE.get((key.replace("-", "_"),), [])
    return [f for rule in rules for f in fact(rule.pointer, rule.convert(value), location)]


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("hparams/train.yaml", "recipes/LibriSpeech/ASR/transformer/hparams/conformer.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    overrides=override_facts,
)
