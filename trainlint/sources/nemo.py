"""NVIDIA NeMo 1.x Hydra YAML: Lightning ``trainer``, NeMo ``exp_manager`` and a Megatron ``model``.

The trainer block is Lightning's Trainer, checkpointing and loggers live in ``exp_manager``, and
Megatron LLM configs size the model and its parallelism under ``model``. ``${model.x}`` and
``${.x}`` copies of a value of the same file are resolved; any other ``${...}`` is unknown.

Default (``Document.defaults``): ``model.seed`` 1234 (Megatron's) when unset, at the top
of the file.
"""

from __future__ import annotations

from typing import Any

from trainlint.job import Location, UnknownKey
from trainlint.sources.base import Document, Fact, Input, Role, seed_default, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe, facts_from_table
from trainlint.sources.megatron import tokenizer_vocab
from trainlint.sources.structured import KeyPath, Tree, interpolation

name = "nemo"
role: Role = "config"


def _steps(value: Any) -> int | None:
    """Lightning's ``val_check_interval``: an int counts batches, a float is a fraction of an
    epoch (not a step count), so only ints are read."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _set(value: Any) -> bool | None:
    """``activations_checkpoint_granularity: selective`` → on; null → unknown (the default)."""
    text = n.to_str(value)
    return True if text and text.strip().lower() not in {"none", "null", ""} else None


def _granularity(value: Any) -> str | None:
    """Megatron's recompute granularity: ``selective`` recomputes only the attention core
    (Korthikanti et al. 2022), ``full`` whole layers."""
    text = (n.to_str(value) or "").strip().lower()
    return text if text in {"full", "selective"} else None


def _strategy(value: Any) -> str | None:
    text = n.to_str(value)
    return text.strip().lower() if text and text.strip().lower() != "auto" else None


def _peft(value: Any) -> str | None:
    text = n.to_str(value)
    return text.strip().lower() if text and text.strip().lower() not in {"none", ""} else None


def _no_checkpoints(value: Any) -> str | None:
    return "no" if n.to_bool(value) is False else None


_CKPT = ("exp_manager", "checkpoint_callback_params")

TABLE: dict[KeyPath, list[JobField]] = {
    ("name",): [JobField("/name", n.to_str)],
    ("trainer", "devices"): [JobField("/resources/gpus_per_node", n.positive_int)],
    ("trainer", "num_nodes"): [JobField("/resources/nodes", n.positive_int)],
    ("trainer", "precision"): [JobField("/training/precision", n.precision)],
    ("trainer", "max_steps"): [JobField("/training/max_steps", n.positive_int)],
    ("trainer", "max_epochs"): [JobField("/training/epochs", n.positive_float)],
    ("trainer", "max_time"): [JobField("/resources/time_limit_s", n.duration_seconds)],
    ("trainer", "log_every_n_steps"): [JobField("/logging/every_steps", n.positive_int)],
    ("trainer", "val_check_interval"): [JobField("/eval/every_steps", _steps)],
    ("trainer", "accumulate_grad_batches"): [
        JobField("/training/grad_accum_steps", n.positive_int)
    ],
    ("trainer", "strategy"): [JobField("/training/parallelism/strategy", _strategy)],
    ("exp_manager", "max_time_per_run"): [JobField("/resources/time_limit_s", n.duration_seconds)],
    ("exp_manager", "create_checkpoint_callback"): [
        JobField("/checkpoint/strategy", _no_checkpoints)
    ],
    (*_CKPT, "every_n_train_steps"): [JobField("/checkpoint/every_steps", n.positive_int)],
    (*_CKPT, "every_n_epochs"): [JobField("/checkpoint/every_epochs", n.positive_int)],
    (*_CKPT, "train_time_interval"): [JobField("/checkpoint/every_seconds", n.duration_seconds)],
    (*_CKPT, "save_top_k"): [JobField("/checkpoint/keep_last", n.positive_int)],
    (*_CKPT, "async_save"): [JobField("/checkpoint/async", n.to_bool)],
    ("model", "micro_batch_size"): [JobField("/training/micro_batch_size", n.positive_int)],
    ("model", "train_ds", "batch_size"): [JobField("/training/micro_batch_size", n.positive_int)],
    ("model", "global_batch_size"): [JobField("/training/global_batch_size", n.positive_int)],
    ("model", "tensor_model_parallel_size"): [
        JobField("/training/parallelism/tensor", n.positive_int)
    ],
    ("model", "pipeline_model_parallel_size"): [
        JobField("/training/parallelism/pipeline", n.positive_int)
    ],
    ("model", "context_parallel_size"): [JobField("/training/parallelism/context", n.positive_int)],
    ("model", "expert_model_parallel_size"): [
        JobField("/training/parallelism/expert", n.positive_int)
    ],
    ("model", "fsdp"): [JobField("/training/parallelism/strategy", n.when_true("fsdp"))],
    ("model", "encoder_seq_length"): [JobField("/model/seq_len", n.positive_int)],
    ("model", "seq_length"): [JobField("/model/seq_len", n.positive_int)],
    ("model", "num_layers"): [JobField("/model/layers", n.positive_int)],
    ("model", "hidden_size"): [JobField("/model/hidden", n.positive_int)],
    ("model", "ffn_hidden_size"): [JobField("/model/ffn_hidden", n.positive_int)],
    ("model", "num_attention_heads"): [JobField("/model/heads", n.positive_int)],
    ("model", "num_query_groups"): [JobField("/model/kv_heads", n.positive_int)],
    ("model", "tokenizer", "type"): [JobField("/model/vocab", tokenizer_vocab)],
    ("model", "vocab_size"): [JobField("/model/vocab", n.positive_int)],
    ("model", "fp8"): [JobField("/training/precision", n.when_true("fp8"))],
    ("model", "activations_checkpoint_granularity"): [
        JobField("/training/activation_checkpointing", _set),
        JobField("/training/recompute", _granularity),
    ],
    ("model", "sequence_parallel"): [
        JobField("/training/parallelism/sequence_parallel", n.to_bool)
    ],
    ("model", "activations_checkpoint_method"): [
        JobField("/training/activation_checkpointing", _set)
    ],
    ("model", "optim", "name"): n.optimizer_fields(),
    ("model", "seed"): [JobField("/training/seed", n.to_int)],
    ("model", "data", "num_workers"): [JobField("/data/num_workers", n.to_int)],
    ("model", "train_ds", "num_workers"): [JobField("/data/num_workers", n.to_int)],
    ("model", "peft", "peft_scheme"): [JobField("/model/peft/method", _peft)],
}

_LOGGERS = {
    "create_tensorboard_logger": "tensorboard", "create_wandb_logger": "wandb",
    "create_mlflow_logger": "mlflow", "create_neptune_logger": "neptune",
    "create_dllogger_logger": "dllogger", "create_clearml_logger": "clearml",
}  # fmt: skip

# Userbuffer (tensor-parallel communication overlap) configs pulled in by ``defaults:``.
_UB_KEYS = {
    "qkv_dgrad", "qkv_wgrad", "fc1_dgrad", "fc1_wgrad", "qkv_fprop", "proj_dgrad",
    "fc1_fprop", "fc2_dgrad", "proj_fprop", "fc2_fprop",
}  # fmt: skip
_MEGATRON_MODEL = {"micro_batch_size", "global_batch_size", "tensor_model_parallel_size"}

TRAINER_KEYS = frozenset({
    "accelerator", "strategy", "devices", "num_nodes", "precision", "logger", "callbacks",
    "fast_dev_run", "max_epochs", "min_epochs", "max_steps", "min_steps", "max_time",
    "limit_train_batches", "limit_val_batches", "limit_test_batches", "limit_predict_batches",
    "overfit_batches", "val_check_interval", "check_val_every_n_epoch", "num_sanity_val_steps",
    "log_every_n_steps", "enable_checkpointing", "enable_progress_bar", "enable_model_summary",
    "accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm", "deterministic",
    "benchmark", "inference_mode", "use_distributed_sampler", "profiler", "detect_anomaly",
    "barebones", "plugins", "sync_batchnorm", "reload_dataloaders_every_n_epochs",
    "default_root_dir", "gpus", "replace_sampler_ddp", "amp_backend", "amp_level",
    "resume_from_checkpoint", "track_grad_norm", "weights_summary", "progress_bar_refresh_rate",
    "flush_logs_every_n_steps", "terminate_on_nan", "checkpoint_callback", "num_processes",
})  # fmt: skip
EXP_MANAGER_KEYS = frozenset({
    "explicit_log_dir", "exp_dir", "name", "version", "use_datetime_version", "resume_if_exists",
    "resume_past_end", "resume_ignore_no_checkpoint", "resume_from_checkpoint",
    "summary_writer_kwargs", "wandb_logger_kwargs", "mlflow_logger_kwargs",
    "dllogger_logger_kwargs", "clearml_logger_kwargs", "neptune_logger_kwargs",
    "create_checkpoint_callback", "checkpoint_callback_params", "create_early_stopping_callback",
    "early_stopping_callback_params", "create_preemption_callback", "files_to_copy",
    "log_step_timing", "log_delta_step_timing", "step_timing_kwargs", "log_local_rank_0_only",
    "log_global_rank_0_only", "disable_validation_on_resume", "ema", "max_time_per_run",
    "seconds_to_sleep", "create_straggler_detection_callback", "straggler_detection_params",
    "create_fault_tolerance_callback", "fault_tolerance", "log_tflops_per_sec_per_gpu",
    "create_ipl_epoch_stopper_callback", "ipl_epoch_stopper_callback_params", *_LOGGERS,
})  # fmt: skip
CHECKPOINT_KEYS = frozenset({
    "filepath", "dirpath", "filename", "monitor", "verbose", "save_last", "save_top_k",
    "save_weights_only", "mode", "auto_insert_metric_name", "every_n_epochs",
    "every_n_train_steps", "train_time_interval", "prefix", "postfix", "save_best_model",
    "always_save_nemo", "save_nemo_on_train_end", "model_parallel_size",
    "save_on_train_epoch_end", "async_save", "save_last_n_optim_states",
    "enable_version_counter",
})  # fmt: skip


def recognise(file: Input) -> float:
    """``exp_manager`` is NeMo's own; a Megatron ``model`` beside a ``trainer`` is nearly as
    sure; a tp-overlap userbuffer config is recognised by its GEMM names."""
    if not file.is_structured:
        return 0.0
    data = file.mapping
    if isinstance(data.get("exp_manager"), dict) and isinstance(data.get("trainer"), dict):
        return 0.96
    model = data.get("model")
    if isinstance(data.get("trainer"), dict) and isinstance(model, dict):
        return 0.9 if len(_MEGATRON_MODEL & set(model)) >= 2 else 0.0
    return 0.9 if len(_UB_KEYS & set(data)) >= 3 else 0.0


def parse(file: Input) -> Document:
    written = file.trees[0] if file.trees else Tree({})
    tree = interpolation.resolved(written)
    doc = Document(file.path, name, recognise(file), role)
    doc.facts = _megatron_accumulation(facts_from_table(tree, TABLE, file.path), tree)
    doc.facts += _reporters(tree, file.path)
    doc.unknown_keys = _near_misses(written, file.path)
    # NeMo's seed (Megatron's)
    doc.defaults = [seed_default(1234, "model.seed", file.path)]
    return doc


def _megatron_accumulation(facts: list[Fact], tree: Tree) -> list[Fact]:
    """Megatron models derive accumulation from global / (micro x data-parallel) and NeMo's
    configs pin ``trainer.accumulate_grad_batches: 1`` ("do not modify"): with both batch
    sizes stated, that 1 is not the job's accumulation, so it is dropped (assembly derives)."""
    model = tree.data.get("model") if isinstance(tree.data, dict) else None
    stated = isinstance(model, dict) and {"micro_batch_size", "global_batch_size"} <= set(model)
    if not stated:
        return facts
    return [fact for fact in facts if fact.pointer != "/training/grad_accum_steps"]


def _reporters(tree: Tree, file: str) -> list[Fact]:
    manager = tree.data.get("exp_manager") if isinstance(tree.data, dict) else None
    if not isinstance(manager, dict):
        return []
    found = [(r, k) for k, r in _LOGGERS.items() if k in manager and n.to_bool(manager[k])]
    if not any(key in manager for key in _LOGGERS):
        return []
    first = min(tree.span(("exp_manager", key)) for key in _LOGGERS if key in manager)
    where = Location(file=file, line=first[0], column=first[1])
    return [Fact("/logging/reporters", [reporter for reporter, _ in found], where)]


def _near_misses(tree: Tree, file: str) -> list[UnknownKey]:
    """Typos in the blocks whose keys are fixed: trainer, exp_manager, checkpoint params."""
    return [
        *typos.near_misses(tree, TRAINER_KEYS, name, file, ("trainer",)),
        *typos.near_misses(tree, EXP_MANAGER_KEYS, name, file, ("exp_manager",)),
        *typos.near_misses(tree, CHECKPOINT_KEYS, name, file, _CKPT),
    ]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "exp_manager.create_<tensorboard|wandb|mlflow|neptune|...>_logger": ["/logging/reporters"]
    }


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("megatron_gpt_config.yaml", "megatron_llama_config.yaml", "conformer_ctc_bpe.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
