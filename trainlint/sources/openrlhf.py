"""OpenRLHF command-line flags (``deepspeed --module openrlhf.cli.train_sft --train.batch_size
256 ...``, ``ray job submit -- python3 -m openrlhf.cli.train_ppo_ray --actor.num_gpus_per_node
8 ...``).

OpenRLHF has no config file: each trainer (``openrlhf/cli/train_sft.py``, ``train_rm.py``,
``train_dpo.py``, ``train_ppo_ray.py``) is an argparse program. Since its dotted hierarchy
(``--train.micro_batch_size``, ``--ds.zero_stage``, ``--ckpt.save_steps``; commit ed62d0e2)
and before it (``--micro_train_batch_size``, ``--zero_stage``, ``--save_steps``,
``--pretrain``, ``--actor_num_gpus_per_node``) the flags mean, from those parsers:

- ``train.micro_batch_size`` is the batch on one GPU ("batch size per GPU"),
  ``train.batch_size`` the global batch ("Global training batch size").
- ``ds.param_dtype`` is the training precision (bf16 or fp16); older releases had ``--bf16``.
- ``ckpt.save_steps`` / ``eval.steps`` / ``logger.logging_steps`` count optimizer steps; -1
  (the default) saves only the final model and never evaluates: no interval is stated.
- ``ckpt.save_hf`` (``save_hf_ckpt`` before) writes the weights in Hugging Face format at every
  checkpoint, on top of the DeepSpeed checkpoint.
- ``actor.num_gpus_per_node`` x ``actor.num_nodes`` is the actor's placement on the Ray
  cluster: with ``--train.colocate_all`` every model shares those GPUs, so they are the job's.
  The models placed apart (reference, reward, critic, vLLM engines) take GPUs of their own,
  which a scheduler's allocation states better: what a ``#SBATCH`` header states wins over
  a program's flags (``launch_script.launch_facts``).

Only the entry points ``openrlhf.cli.train_*`` have their flags read here.
"""

from __future__ import annotations

import re
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Fact, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format, flag_keys, flags_only, no_file
from trainlint.sources.base.table import JobField, facts_for
from trainlint.sources.hf_trainer import flash_attn

name = "openrlhf"
role: Role = "entrypoint"


def _dtype(value: Any) -> str | None:
    text = n.to_str(value)
    return text if text in ("bf16", "fp16") else None


_MICRO = [JobField("/training/micro_batch_size", n.positive_int)]
_GLOBAL = [JobField("/training/global_batch_size", n.positive_int)]
_EPOCHS = [JobField("/training/epochs", n.positive_float)]
_ZERO = [JobField("/training/parallelism/zero_stage", n.to_int)]
_SAVE = [JobField("/checkpoint/every_steps", n.positive_int)]
_KEEP = [JobField("/checkpoint/keep_last", n.positive_int)]
_EXPORT_HF = [JobField("/checkpoint/export_hf", n.to_bool)]
_LOG = [JobField("/logging/every_steps", n.positive_int)]
_EVAL = [JobField("/eval/every_steps", n.positive_int)]
_RECOMPUTE = [JobField("/training/activation_checkpointing", n.to_bool)]
_MODEL = [JobField("/model/name", n.to_str)]
_SEQ = [JobField("/model/seq_len", n.positive_int)]
_OFFLOAD = [JobField("/training/parallelism/offload_optimizer", n.to_bool)]
_ATTENTION = [JobField("/features/flash-attn", flash_attn)]
_GPUS = [JobField("/resources/gpus_per_node", n.positive_int)]
_NODES = [JobField("/resources/nodes", n.positive_int)]
_LORA = [JobField("/model/peft/rank", n.positive_int)]
_SEED = [JobField("/training/seed", n.to_int)]

DOTTED: dict[str, list[JobField]] = {
    "train.micro_batch_size": _MICRO,
    "train.batch_size": _GLOBAL,
    "train.max_epochs": _EPOCHS,
    "train.seed": _SEED,
    "ds.zero_stage": _ZERO,
    "ds.param_dtype": [JobField("/training/precision", _dtype)],
    "ds.adam_offload": _OFFLOAD,
    "ds.attn_implementation": _ATTENTION,
    "ds.tensor_parallel_size": [JobField("/training/parallelism/tensor", n.positive_int)],
    "ds.lora.rank": _LORA,
    "ckpt.save_steps": _SAVE,
    "ckpt.max_num": _KEEP,
    "ckpt.save_hf": _EXPORT_HF,
    "logger.logging_steps": _LOG,
    "eval.steps": _EVAL,
    "data.max_len": _SEQ,
    "model.model_name_or_path": _MODEL,
    "actor.model_name_or_path": _MODEL,
    "model.gradient_checkpointing_enable": _RECOMPUTE,
    "actor.gradient_checkpointing_enable": _RECOMPUTE,
    "actor.num_gpus_per_node": _GPUS,
    "actor.num_nodes": _NODES,
}
PLAIN: dict[str, list[JobField]] = {
    "micro_train_batch_size": _MICRO,
    "train_batch_size": _GLOBAL,
    "max_epochs": _EPOCHS,
    "seed": _SEED,
    "zero_stage": _ZERO,
    "param_dtype": [JobField("/training/precision", _dtype)],
    "bf16": [JobField("/training/precision", n.when_true("bf16"))],
    "adam_offload": _OFFLOAD,
    "attn_implementation": _ATTENTION,
    "flash_attn": [JobField("/features/flash-attn", n.when_true("kernel"))],
    "lora_rank": _LORA,
    "save_steps": _SAVE,
    "max_ckpt_num": _KEEP,
    "save_hf_ckpt": _EXPORT_HF,
    "save_hf": _EXPORT_HF,
    "logging_steps": _LOG,
    "eval_steps": _EVAL,
    "max_len": _SEQ,
    "pretrain": _MODEL,
    "gradient_checkpointing": _RECOMPUTE,
    "actor_num_gpus_per_node": _GPUS,
    "actor_num_nodes": _NODES,
}
FLAGS = {**DOTTED, **PLAIN}

ENTRYPOINTS = re.compile(r"\bopenrlhf[./]cli[./]train_\w+")


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """Facts for one flag of an OpenRLHF trainer; [] for a flag it does not know."""
    return facts_for(FLAGS.get(flag.lstrip("-"), []), value, location)


recognise = no_file  # configured on the command line only
parse = flags_only(name)


def keys() -> dict[str, list[str]]:
    """Every flag this format reads → the job-model pointers it sets (docs/formats.md)."""
    return flag_keys(FLAGS)


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("python3 -m openrlhf.cli.train_ppo_ray --train.batch_size 128 ... (a launch line)",),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(cli_facts, entrypoints=ENTRYPOINTS),
)
