"""OLMo (allenai/OLMo) training configs: one large OmegaConf YAML per run.

``max_duration`` is the run length in three spellings: ``1ep`` (epochs), ``2e12T`` (tokens)
and a plain or underscored integer (steps). Of the three checkpoint series (sharded,
unsharded, ephemeral) the most frequent one sets the checkpoint interval, since it is the one
whose overhead dominates. ``${save_interval}``-style copies within the file are resolved.

Default (``Document.defaults``): ``seed`` 6198 when unset, at the top of the file.
"""

from __future__ import annotations

import re
from typing import Any

from trainlint.job import Location
from trainlint.sources import claimed_by_others
from trainlint.sources.base import Document, Fact, Input, Role, seed_default, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe, facts_from_table
from trainlint.sources.structured import KeyPath, Tree, interpolation

name = "olmo"
role: Role = "config"

_DURATION = re.compile(r"^\s*(?P<number>[0-9][0-9_.e+]*)\s*(?P<unit>ep|T|tok|st)?\s*$")


def _duration(unit: str) -> Any:
    """A converter reading ``max_duration`` when it is in ``unit`` ("ep", "T" or steps "")."""

    def convert(value: Any) -> int | float | None:
        match = _DURATION.match(str(value)) if not isinstance(value, bool) else None
        if match is None:
            return None
        found = {"tok": "T", "st": ""}.get(match["unit"] or "", match["unit"] or "")
        if found != unit:
            return None
        return (
            n.positive_float(match["number"]) if unit == "ep" else n.positive_int(match["number"])
        )

    return convert


def _precision(value: Any) -> str | None:
    """``amp_bf16`` → bf16, ``amp_fp16`` → fp16, ``fp32`` → fp32."""
    text = n.to_str(value)
    return n.precision(text.strip().lower().removeprefix("amp_")) if text else None


def _sharding_stage(value: Any) -> int | None:
    """FSDP sharding in ZeRO terms: what each rank keeps of parameters and optimizer state."""
    stages = {"full_shard": 3, "hybrid_shard": 3, "shard_grad_op": 2,
              "_hybrid_shard_zero2": 2, "no_shard": 0}  # fmt: skip
    text = n.to_str(value)
    return stages.get(text.strip().lower()) if text else None


def _on(value: Any) -> bool | None:
    """``activation_checkpointing: whole_layer`` / ``compile: {mode: ...}`` → on; null → off."""
    if value is None:
        return False
    if isinstance(value, dict):
        return True
    flag = n.to_bool(value)
    return flag if flag is not None else bool(n.to_str(value))


def _always(result: Any) -> Any:
    return lambda value: result


TABLE: dict[KeyPath, list[JobField]] = {
    ("run_name",): [JobField("/name", n.to_str)],
    ("seed",): [JobField("/training/seed", n.to_int)],
    ("model", "d_model"): [JobField("/model/hidden", n.positive_int)],
    ("model", "n_heads"): [JobField("/model/heads", n.positive_int)],
    ("model", "n_kv_heads"): [JobField("/model/kv_heads", n.positive_int)],
    ("model", "n_layers"): [JobField("/model/layers", n.positive_int)],
    ("model", "max_sequence_length"): [JobField("/model/seq_len", n.positive_int)],
    ("model", "vocab_size"): [JobField("/model/vocab", n.positive_int)],
    ("global_train_batch_size",): [JobField("/training/global_batch_size", n.positive_int)],
    ("device_train_microbatch_size",): [JobField("/training/micro_batch_size", n.positive_int)],
    ("max_duration",): [
        JobField("/training/epochs", _duration("ep")),
        JobField("/training/dataset_tokens", _duration("T")),
        JobField("/training/max_steps", _duration("")),
    ],
    ("stop_at",): [JobField("/training/max_steps", n.positive_int)],  # a hard stop wins
    ("precision",): [JobField("/training/precision", _precision)],
    ("distributed_strategy",): [JobField("/training/parallelism/strategy", n.to_str)],
    ("fsdp", "sharding_strategy"): [
        JobField("/training/parallelism/strategy", _always("fsdp")),
        JobField("/training/parallelism/zero_stage", _sharding_stage),
    ],
    ("optimizer", "name"): n.optimizer_fields(),
    ("activation_checkpointing",): [JobField("/training/activation_checkpointing", _on)],
    ("compile",): [JobField("/training/compile", _on)],
    ("save_num_checkpoints_to_keep",): [JobField("/checkpoint/keep_last", n.positive_int)],
    ("console_log_interval",): [JobField("/logging/every_steps", n.positive_int)],
    ("eval_interval",): [JobField("/eval/every_steps", n.positive_int)],
    ("time_limit",): [JobField("/resources/time_limit_s", n.duration_seconds)],
    ("data", "num_workers"): [JobField("/data/num_workers", n.to_int)],
    ("data", "prefetch_factor"): [JobField("/data/prefetch_factor", n.positive_int)],
    ("data", "pin_memory"): [JobField("/data/pin_memory", n.to_bool)],
    ("data", "persistent_workers"): [JobField("/data/persistent_workers", n.to_bool)],
}

_SAVE_INTERVALS = ("save_interval", "save_interval_unsharded", "save_interval_ephemeral")

# OLMo's TrainConfig and ModelConfig fields: two top-level ones together mark the format.
_DISTINCTIVE = {
    "global_train_batch_size", "device_train_microbatch_size", "max_duration",
    "save_interval_unsharded", "save_num_checkpoints_to_keep", "save_interval_ephemeral",
    "save_num_unsharded_checkpoints_to_keep", "sharded_checkpointer", "eval_subset_num_batches",
    "device_eval_batch_size", "speed_monitor", "max_grad_norm_ratio", "softmax_auxiliary_loss",
}  # fmt: skip
TRAIN_KEYS = frozenset({
    *_DISTINCTIVE, "run_name", "seed", "epoch", "dry_run", "model", "optimizer", "scheduler",
    "data", "restore_dataloader", "fast_forward_batches", "evaluators", "eval_interval",
    "tokenizer", "save_folder", "remote_save_folder", "canceled_check_interval", "save_interval",
    "save_overwrite", "force_save_unsharded", "no_pre_train_checkpoint", "load_path",
    "load_path_sharded_checkpointer", "try_load_latest_save", "reset_optimizer_state",
    "reset_trainer_state", "new_style_checkpoints", "device_train_batch_size",
    "eval_on_load", "device_train_grad_accum", "max_grad_norm", "precision", "wandb",
    "console_log_interval", "gen1_gc_interval", "compile", "distributed_strategy", "fsdp", "ddp",
    "single", "auxiliary_loss_multiplier", "time_limit", "extra_steps_after_cancel",
    "early_stopping_factor", "save_data_indices", "python_profiling", "torch_profiling",
    "stop_at", "stop_after", "activation_checkpointing", "fused_loss", "hf_datasets_cache_dir",
    "module_outputs_save_steps", "save_interval_unsharded",
})  # fmt: skip
MODEL_KEYS = frozenset({
    "d_model", "n_heads", "n_kv_heads", "clip_qkv", "n_layers", "mlp_ratio", "mlp_hidden_size",
    "activation_type", "block_type", "block_group_size", "alibi", "alibi_bias_max", "rope",
    "rope_full_precision", "rope_theta", "flash_attention", "attention_dropout",
    "multi_query_attention", "attention_layer_norm", "residual_dropout", "embedding_dropout",
    "embedding_layer_norm", "layer_norm_type", "layer_norm_with_affine", "layer_norm_eps",
    "attention_layer_norm_with_affine", "max_sequence_length", "include_bias",
    "bias_for_layer_norm", "scale_logits", "vocab_size", "embedding_size", "weight_tying",
    "eos_token_id", "pad_token_id", "init_device", "init_fn", "init_std", "init_cutoff_factor",
    "precision", "scale_emb_init", "emb_init_std", "norm_after",
})  # fmt: skip


def recognise(file: Input) -> float:
    """Two OLMo-only training keys, or one with an OLMo ``model`` block (``d_model``...)."""
    if not file.is_structured:
        return 0.0
    data = file.mapping
    if claimed_by_others(name) & set(data):
        return 0.0  # Composer YAML (llm-foundry) shares OLMo's batch and duration keys
    hits = len(_DISTINCTIVE & set(data))
    model = data.get("model")
    olmo_model = isinstance(model, dict) and {"d_model", "n_heads", "n_layers"} <= set(model)
    if hits >= 2 or (hits == 1 and olmo_model):
        return 0.95
    return 0.0


def parse(file: Input) -> Document:
    written = file.trees[0] if file.trees else Tree({})
    tree = interpolation.resolved(written)
    doc = Document(file.path, name, recognise(file), role)
    extra = [*_checkpoint_interval(tree, file.path), *_ffn_hidden(tree, file.path)]
    doc.facts = facts_from_table(tree, TABLE, file.path) + extra + _wandb(tree, file.path)
    doc.unknown_keys = [
        *typos.near_misses(written, TRAIN_KEYS, name, file.path),
        *typos.near_misses(written, MODEL_KEYS, name, file.path, ("model",)),
    ]
    # OLMo's TrainConfig seed
    doc.defaults = [seed_default(6198, "seed", file.path)]
    return doc


def _at(tree: Tree, path: KeyPath, file: str) -> Location:
    line, column = tree.span(path)
    return Location(file=file, line=line, column=column)


def _checkpoint_interval(tree: Tree, file: str) -> list[Fact]:
    """The most frequent of the sharded, unsharded and ephemeral checkpoint series."""
    data = tree.data if isinstance(tree.data, dict) else {}
    intervals = [(n.positive_int(data.get(key)), key) for key in _SAVE_INTERVALS]
    known = [(every, key) for every, key in intervals if every is not None]
    if not known:
        return []
    every, key = min(known)
    return [Fact("/checkpoint/every_steps", every, _at(tree, (key,), file))]


def _ffn_hidden(tree: Tree, file: str) -> list[Fact]:
    """``mlp_hidden_size`` (or ``mlp_ratio`` * ``d_model``) is the fused input projection;
    SwiGLU, OLMo's default, splits it into gate and up, so the feed-forward width is half."""
    model = tree.data.get("model") if isinstance(tree.data, dict) else None
    if not isinstance(model, dict):
        return []
    key = "mlp_hidden_size" if model.get("mlp_hidden_size") is not None else "mlp_ratio"
    size = n.positive_int(model.get(key))
    hidden = n.positive_int(model.get("d_model"))
    if key == "mlp_ratio" and size is not None:
        size = size * hidden if hidden is not None else None
    if size is None:
        return []
    swiglu = str(model.get("activation_type", "swiglu")).lower() == "swiglu"
    width = size // 2 if swiglu else size
    return [Fact("/model/ffn_hidden", width, _at(tree, ("model", key), file))]


def _wandb(tree: Tree, file: str) -> list[Fact]:
    data = tree.data if isinstance(tree.data, dict) else {}
    if not isinstance(data.get("wandb"), dict):
        return []
    return [Fact("/logging/reporters", ["wandb"], _at(tree, ("wandb",), file))]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "save_interval, save_interval_unsharded, save_interval_ephemeral (the most frequent)": [
            "/checkpoint/every_steps"
        ],
        "model.mlp_hidden_size or mlp_ratio * d_model (halved for SwiGLU)": ["/model/ffn_hidden"],
        "wandb": ["/logging/reporters"],
    }


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("configs/official-0724/OLMo-7B.yaml", "configs/official-1124/OLMo2-7B-stage1.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
