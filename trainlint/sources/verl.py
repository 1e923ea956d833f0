"""verl's Hydra configs (``verl/trainer/config/ppo_trainer.yaml``, ``ppo_megatron_trainer.yaml``)
and the ``key=value`` overrides of its trainers (``python3 -m verl.trainer.main_ppo
trainer.n_gpus_per_node=8 ...``, ``torchrun -m verl.trainer.fsdp_sft_trainer ...``).

The config is composed as Hydra composes it (the ``hydra`` format's machinery: defaults list,
``group@package`` entries, ``_self_``), and the merged view is read with verl's keys; the
command-line overrides then win key by key, ``+key=`` adds one and ``~key`` deletes one (its
facts become unknown). What the keys mean, from verl's trainers (``RayPPOTrainer.fit`` and
``FSDPSFTTrainer.fit``):

- ``trainer.n_gpus_per_node`` x ``trainer.nnodes`` is the Ray resource pool the actor, the
  rollout and the reference model share: the GPUs the job holds.
- ``trainer.save_freq`` / ``trainer.test_freq`` count training steps; a value of 0 or less
  never saves (``save_freq > 0`` guards every save) and never validates.
- ``ppo_micro_batch_size_per_gpu`` is the actor's micro-batch on one GPU. ``data.train_batch_size``
  and ``ppo_mini_batch_size`` count prompts, each answered ``rollout.n`` times, so neither is
  the job's global batch of samples: they are not read as one.
- The actor's Megatron ``tensor_model_parallel_size`` / ``pipeline_model_parallel_size`` are
  the training layout (the rollout engine's own tensor parallelism is inference).
"""

from __future__ import annotations

import re
from typing import Any

from trainlint.job import Location
from trainlint.sources import hydra
from trainlint.sources.base import Document, Fact, Input, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format
from trainlint.sources.base.table import JobField, describe, facts_for
from trainlint.sources.structured import KeyPath
from trainlint.sources.structured.located import Locate, table_facts

name = "verl"
role: Role = "config"


def _steps_or_never(pointer: str, never: str) -> list[JobField]:
    """A step interval where 0 or less turns the feature off."""
    return [
        JobField(pointer, n.positive_int),
        JobField(pointer.rsplit("/", 1)[0] + "/strategy", _never(never)),
    ]


def _never(result: str) -> Any:
    def convert(value: Any) -> str | None:
        number = n.to_int(value)
        if number is None:
            return None
        return result if number > 0 else "no"

    return convert


_ACTOR = ("actor_rollout_ref", "actor")
TABLE: dict[KeyPath, list[JobField]] = {
    ("trainer", "n_gpus_per_node"): [JobField("/resources/gpus_per_node", n.positive_int)],
    ("trainer", "nnodes"): [JobField("/resources/nodes", n.positive_int)],
    ("trainer", "total_epochs"): [JobField("/training/epochs", n.positive_float)],
    ("trainer", "total_training_steps"): [JobField("/training/max_steps", n.positive_int)],
    ("trainer", "save_freq"): _steps_or_never("/checkpoint/every_steps", "steps"),
    ("trainer", "test_freq"): _steps_or_never("/eval/every_steps", "steps"),
    ("trainer", "max_actor_ckpt_to_keep"): [JobField("/checkpoint/keep_last", n.positive_int)],
    ("actor_rollout_ref", "model", "path"): [JobField("/model/name", n.to_str)],
    ("actor_rollout_ref", "model", "enable_gradient_checkpointing"): [
        JobField("/training/activation_checkpointing", n.to_bool)
    ],
    ("actor_rollout_ref", "model", "lora_rank"): [JobField("/model/peft/rank", n.positive_int)],
    (*_ACTOR, "ppo_micro_batch_size_per_gpu"): [
        JobField("/training/micro_batch_size", n.positive_int)
    ],
    (*_ACTOR, "megatron", "tensor_model_parallel_size"): [
        JobField("/training/parallelism/tensor", n.positive_int)
    ],
    (*_ACTOR, "megatron", "pipeline_model_parallel_size"): [
        JobField("/training/parallelism/pipeline", n.positive_int)
    ],
    (*_ACTOR, "megatron", "context_parallel_size"): [
        JobField("/training/parallelism/context", n.positive_int)
    ],
    (*_ACTOR, "fsdp_config", "param_offload"): [
        JobField("/training/parallelism/offload_params", n.to_bool)
    ],
    (*_ACTOR, "fsdp_config", "optimizer_offload"): [
        JobField("/training/parallelism/offload_optimizer", n.to_bool)
    ],
    (*_ACTOR, "megatron", "param_offload"): [
        JobField("/training/parallelism/offload_params", n.to_bool)
    ],
    (*_ACTOR, "megatron", "optimizer_offload"): [
        JobField("/training/parallelism/offload_optimizer", n.to_bool)
    ],
    # verl.trainer.fsdp_sft_trainer
    ("data", "micro_batch_size_per_gpu"): [JobField("/training/micro_batch_size", n.positive_int)],
    ("data", "max_length"): [JobField("/model/seq_len", n.positive_int)],
    ("model", "partial_pretrain"): [JobField("/model/name", n.to_str)],
    ("model", "lora_rank"): [JobField("/model/peft/rank", n.positive_int)],
    ("model", "enable_gradient_checkpointing"): [
        JobField("/training/activation_checkpointing", n.to_bool)
    ],
}

ENTRYPOINTS = re.compile(r"\bverl[./]trainer[./]\w+")


def recognise(file: Input) -> float:
    """A primary verl config: the ``actor_rollout_ref`` block (or a defaults entry packaged
    into it) no other Hydra app has."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    data = file.mapping
    if "actor_rollout_ref" in data:
        return 0.95
    defaults = data.get("defaults")
    if isinstance(defaults, list) and any("@actor_rollout_ref" in str(e) for e in defaults):
        return 0.95
    return 0.0


def read(data: Any, locate: Locate) -> list[Fact]:
    """Facts of a (merged) verl config held as plain data."""
    return table_facts(data, TABLE, locate) if isinstance(data, dict) else []


def parse(file: Input) -> Document:
    """The file as Hydra composes it, read with verl's keys."""
    view = hydra.composed(file)
    doc = hydra.document(file, view, name, recognise(file))
    doc.facts = read(view.merged, view.locate())
    return doc


def override_facts(key: str, value: Any, where: Location) -> list[Fact]:
    """A Hydra override ``trainer.save_freq=20`` (``+key=`` adds the key: the same facts);
    ``~key`` deletes the key, so what it stated becomes unknown."""
    deleted = key.startswith("~")
    path = tuple(key.lstrip("~+").split("."))
    fields = TABLE.get(path, [])
    if deleted:
        return [Fact(field.pointer, None, where) for field in fields]
    return facts_for(fields, value, where)


def flag_facts(flag: str, value: Any, where: Location) -> list[Fact]:
    """verl reads no ``--flags``: a launch line's ``key=value`` overrides arrive here as
    ``key`` (the trainer's config may not be in the repository)."""
    return override_facts(flag, value, where) if not flag.startswith("-") else []


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return {"defaults": ["(reference)"], **describe(TABLE)}


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("verl/trainer/config/ppo_trainer.yaml", "ppo_megatron_trainer.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    overrides=override_facts,
    flags=Flags(facts=flag_facts, entrypoints=ENTRYPOINTS, hydra_overrides=True),
)
