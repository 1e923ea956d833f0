"""torchtune recipe configs: YAML whose objects are ``{_component_: dotted.path, ...kwargs}``.

The model size lives in the builder name (``torchtune.models.llama3_1.lora_llama3_1_70b``), the
GPU count only on the ``tune run --nproc_per_node`` line, and the checkpointer saves once per
epoch unless a recipe asks for steps. ``${...}`` interpolations are unknown.

Default (``Document.defaults``): no ``seed`` (null or unset) draws a random seed each run;
located at the top of the file.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from trainlint.sources.base import Document, Fact, Input, Role, seed_default
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe, lookup
from trainlint.sources.base.typos import near_misses
from trainlint.sources.structured import KeyPath
from trainlint.sources.structured.located import (
    Locate,
    class_name,
    fact,
    is_unknown,
    table_facts,
    tree_locator,
)

name = "torchtune"
role: Role = "config"


def builder(value: Any) -> str | None:
    """``torchtune.models.llama3_1.qlora_llama3_1_70b`` → ``llama3.1-70b`` (the catalog's
    spelling: ``_`` between two version digits is a dot, other ``_`` are dashes)."""
    text = n.to_str(value)
    if not text:
        return None
    tokens = re.sub(r"^q?lora_", "", text.rsplit(".", 1)[-1]).split("_")
    out = tokens[0]
    for previous, token in itertools.pairwise(tokens):
        out += ("." if previous[-1:].isdigit() and token.isdigit() else "-") + token
    return out or None


def _peft(value: Any) -> str | None:
    last = (n.to_str(value) or "").rsplit(".", 1)[-1]
    return "lora" if re.match(r"q?lora_", last) else None


def _qlora_bits(value: Any) -> int | None:
    return 4 if (n.to_str(value) or "").rsplit(".", 1)[-1].startswith("qlora_") else None


# bitsandbytes class names the shared optimizer table spells differently.
_OPTIMIZER_ALIASES = {"pagedadamw": "paged_adamw_32bit", "pagedadamw32bit": "paged_adamw_32bit"}


def _optimizer(convert: Any) -> Any:
    def read(value: Any) -> Any:
        key = class_name(value).lower()
        return convert(_OPTIMIZER_ALIASES.get(key, value))

    return read


def _reporter(value: Any) -> list[str] | None:
    """``torchtune.training.metric_logging.WandBLogger`` → ``["wandb"]``."""
    short = class_name(value).lower().removesuffix("logger")
    return [short] if short else None


def _level(value: Any) -> str | None:
    text = n.to_str(value)
    return text.strip().lower() if text else None


def _fsdp_if_set(value: Any) -> str | None:
    return None if value is None else "fsdp"


def _optimizer_fields() -> list[JobField]:
    """The component path is the name; family and 8-bit come through the shared table."""
    fields = n.optimizer_fields()
    return fields[:1] + [
        JobField(job_field.pointer, _optimizer(job_field.convert)) for job_field in fields[1:]
    ]


# Keys the async GRPO recipe nests under ``training:`` mean what they mean at the top.
_TRAINING: dict[KeyPath, list[JobField]] = {
    ("batch_size",): [JobField("/training/micro_batch_size", n.positive_int)],
    ("gradient_accumulation_steps",): [JobField("/training/grad_accum_steps", n.positive_int)],
    ("epochs",): [JobField("/training/epochs", n.positive_float)],
    ("num_steps",): [JobField("/training/max_steps", n.positive_int)],
    ("optimizer", "_component_"): _optimizer_fields(),
    ("enable_activation_checkpointing",): [
        JobField("/training/activation_checkpointing", n.to_bool)
    ],
    ("compile",): [JobField("/training/compile", n.to_bool)],
    ("seed",): [JobField("/training/seed", n.to_int)],
    ("save_every_n_steps",): [
        JobField("/checkpoint/every_steps", n.positive_int),
        JobField("/checkpoint/strategy", lambda v: "steps" if n.positive_int(v) else None),
    ],
    ("save_every_n_epochs",): [
        JobField("/checkpoint/every_epochs", n.positive_float),
        JobField("/checkpoint/strategy", lambda v: "epoch" if n.positive_float(v) else None),
    ],
}

# A model spelled out with a generic builder (``llama2.llama2`` plus its dimensions).
_MODEL: dict[KeyPath, list[JobField]] = {
    ("_component_",): [
        JobField("/model/name", builder),
        JobField("/model/peft/method", _peft),
        JobField("/model/quantization_bits", _qlora_bits),
    ],
    ("lora_rank",): [JobField("/model/peft/rank", n.positive_int)],
    ("num_layers",): [JobField("/model/layers", n.positive_int)],
    ("embed_dim",): [JobField("/model/hidden", n.positive_int)],
    ("num_heads",): [JobField("/model/heads", n.positive_int)],
    ("num_kv_heads",): [JobField("/model/kv_heads", n.positive_int)],
    ("intermediate_dim",): [JobField("/model/ffn_hidden", n.positive_int)],
    ("vocab_size",): [JobField("/model/vocab", n.positive_int)],
    ("max_seq_len",): [JobField("/model/seq_len", n.positive_int)],
}

TABLE: dict[KeyPath, list[JobField]] = {
    ("name",): [JobField("/name", n.to_str)],
    **{
        (block, *path): fields
        for block in ("policy_model", "model")
        for path, fields in _MODEL.items()
    },
    ("tokenizer", "max_seq_len"): [JobField("/model/seq_len", n.positive_int)],
    ("dtype",): [JobField("/training/precision", n.precision)],
    **_TRAINING,
    **{("training", *path): fields for path, fields in _TRAINING.items()},
    ("keep_last_n_checkpoints",): [JobField("/checkpoint/keep_last", n.positive_int)],
    ("enable_async_checkpointing",): [JobField("/checkpoint/async", n.to_bool)],
    ("log_every_n_steps",): [JobField("/logging/every_steps", n.positive_int)],
    ("log_level",): [JobField("/logging/level", _level)],
    ("metric_logger", "_component_"): [JobField("/logging/reporters", _reporter)],
    ("profiler", "enabled"): [
        JobField("/logging/profiler/enabled", n.to_bool),
        JobField("/logging/profiler/scheduled", n.when_true(True)),  # always wait/warmup/active
    ],
    ("tensor_parallel_dim",): [JobField("/training/parallelism/tensor", n.positive_int)],
    # Only the distributed (FSDP2) recipes read these keys.
    ("data_parallel_shard_dim",): [JobField("/training/parallelism/strategy", _fsdp_if_set)],
    ("fsdp_cpu_offload",): [
        JobField("/training/parallelism/strategy", _fsdp_if_set),
        JobField("/training/parallelism/offload_params", n.to_bool),
        JobField("/training/parallelism/offload_optimizer", n.to_bool),
    ],
    ("fsdp", "cpu_offload"): [
        JobField("/training/parallelism/strategy", _fsdp_if_set),
        JobField("/training/parallelism/offload_params", n.to_bool),
        JobField("/training/parallelism/offload_optimizer", n.to_bool),
    ],
    ("dataloader", "num_workers"): [JobField("/data/num_workers", n.to_int)],
    ("dataloader", "pin_memory"): [JobField("/data/pin_memory", n.to_bool)],
    ("dataloader", "prefetch_factor"): [JobField("/data/prefetch_factor", n.to_int)],
}

KNOWN_KEYS = frozenset({
    "output_dir", "base_model_path", "name", "model", "tokenizer", "checkpointer",
    "resume_from_checkpoint", "save_adapter_weights_only", "dataset", "dataset_val", "datasets",
    "seed", "shuffle", "batch_size", "batch_size_val", "epochs", "max_steps_per_epoch",
    "gradient_accumulation_steps", "optimizer", "optimizer_in_bwd", "lr_scheduler", "loss",
    "clip_grad_norm", "compile", "device", "dtype", "enable_activation_checkpointing",
    "enable_activation_offloading", "ac_mode", "ac_option", "custom_sharded_layers",
    "fsdp_cpu_offload", "fsdp_reshard_after_forward", "fsdp", "tensor_parallel_dim",
    "tensor_parallel_plan", "data_parallel_shard_dim", "data_parallel_replicate_dim",
    "context_parallel_dim", "metric_logger", "log_every_n_steps", "log_peak_memory_stats",
    "log_level", "profiler", "run_val_every_n_steps", "collate_fn", "dataloader", "quantizer",
    "save_every_n_steps", "save_every_n_epochs", "keep_last_n_checkpoints",
    "enable_async_checkpointing", "enable_dcp", "num_steps", "ppo_epochs", "ppo_batch_size",
    "forward_batch_size", "temperature", "top_k", "max_generated_tokens", "kl_coeff", "gamma",
    "lmbda", "whiten_rewards", "min_response_length", "penalise_no_eos", "reward_penalty",
    "stop_token_ids", "policy_model", "reward_and_value_model", "ref_policy_checkpointer",
    "value_checkpointer", "reward_checkpointer", "teacher_model", "teacher_checkpointer",
    "kd_loss", "kd_ratio", "grpo_samples", "orchestration", "inference", "postprocessing",
    "training", "reward_functions", "debug_logging_enabled", "debug_num_samples_per_step",
    "enable_kv_cache", "low_cpu_ram", "memory_efficient_fsdp_wrap", "ref_checkpointer",
    "compile_kwargs", "max_seq_len", "packed", "epochs_per_eval", "eval_every_n_steps",
    "resume_from_checkpoint_dir", "use_dora", "lora_rank", "lora_alpha", "save_last_epoch_only",
})  # fmt: skip


def _components(data: Any, depth: int = 0) -> list[str]:
    """Every ``_component_`` value in the top two levels (lists of components included)."""
    if depth > 2:
        return []
    if isinstance(data, list):
        return [c for item in data for c in _components(item, depth + 1)]
    if not isinstance(data, dict):
        return []
    own = [data["_component_"]] if isinstance(data.get("_component_"), str) else []
    return own + [c for value in data.values() for c in _components(value, depth + 1)]


def recognise(file: Input) -> float:
    """``_component_`` objects are torchtune's; ones naming ``torchtune.*`` settle it."""
    if not file.is_structured or "_component_" not in file.text:
        return 0.0
    components = _components(file.mapping)
    if any(c.startswith("torchtune.") for c in components):
        return 0.95
    return 0.6 if components else 0.0


def parse(file: Input) -> Document:
    tree = file.trees[0]
    locate = tree_locator(tree, file.path)
    doc = Document(file.path, name, recognise(file), role)
    doc.facts = table_facts(tree.data, TABLE, locate)
    doc.facts += _max_steps(tree.data, locate) + _checkpoint_default(tree.data, locate)
    doc.unknown_keys = near_misses(tree, KNOWN_KEYS, name, file.path)
    # no seed: torchtune draws a random one each run
    doc.defaults = [seed_default(None, "seed", file.path)]
    return doc


def _max_steps(data: Any, locate: Locate) -> list[Fact]:
    """``max_steps_per_epoch * epochs`` bounds the run (null means full epochs: unknown)."""
    per_epoch = n.positive_int(data.get("max_steps_per_epoch"))
    epochs = n.positive_int(data.get("epochs"))
    if per_epoch is None or epochs is None:
        return []
    return fact("/training/max_steps", per_epoch * epochs, locate(("max_steps_per_epoch",)))


def _checkpoint_default(data: Any, locate: Locate) -> list[Fact]:
    """A checkpointer with no step or epoch interval saves at the end of every epoch."""
    for prefix in ((), ("training",)):
        found, checkpointer = lookup(data, (*prefix, "checkpointer"))
        if not found or not isinstance(checkpointer, dict):
            continue
        intervals = [lookup(data, (*prefix, key)) for key in _INTERVAL_KEYS]
        if any(ok and value is not None and not is_unknown(value) for ok, value in intervals):
            return []
        where = locate((*prefix, "checkpointer"))
        return fact("/checkpoint/every_epochs", 1.0, where) + fact(
            "/checkpoint/strategy", "epoch", where
        )
    return []


_INTERVAL_KEYS = ("save_every_n_steps", "save_every_n_epochs")


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "max_steps_per_epoch": ["/training/max_steps"],
        "checkpointer": ["/checkpoint/every_epochs", "/checkpoint/strategy"],
    }


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("8B_lora.yaml", "70B_full.yaml", "8B_qlora_single_device.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
