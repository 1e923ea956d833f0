"""What the Python reader knows: variable and field names, and the keyword arguments of the
calls it reads, each mapped to the job model (one table per kind of name)."""

from __future__ import annotations

from typing import Any

from trainlint.sources import hf_trainer
from trainlint.sources.base import normalize as n
from trainlint.sources.base.table import JobField


def _init_from(value: Any) -> str | None:
    """nanoGPT ``init_from``: a GPT-2 checkpoint name is the model; scratch/resume say nothing."""
    text = n.to_str(value)
    return text if text and text.startswith("gpt2") else None


def _wandb(value: Any) -> list[str] | None:
    return ["wandb"] if n.to_bool(value) is True else None


_SEQ = [JobField("/model/seq_len", n.positive_int)]
_LAYERS = [JobField("/model/layers", n.positive_int)]
_HEADS = [JobField("/model/heads", n.positive_int)]
_HIDDEN = [JobField("/model/hidden", n.positive_int)]
_STEPS = [JobField("/training/max_steps", n.positive_int)]
_EVAL = [JobField("/eval/every_steps", n.positive_float)]
_LOG = [JobField("/logging/every_steps", n.positive_float)]
_SAVE = [JobField("/checkpoint/every_steps", n.positive_float)]
_EPOCHS = [JobField("/training/epochs", n.positive_float)]

# Module-level variables (nanoGPT config modules, modded-nanogpt hyperparameters) and dataclass
# fields: the spellings training scripts use for the same few quantities.
OWN_NAMES: dict[str, list[JobField]] = {
    "batch_size": [JobField("/training/micro_batch_size", n.positive_int)],
    "micro_batch_size": [JobField("/training/micro_batch_size", n.positive_int)],
    "global_batch_size": [JobField("/training/global_batch_size", n.positive_int)],
    "grad_accum_steps": [JobField("/training/grad_accum_steps", n.positive_int)],
    "block_size": _SEQ, "seq_len": _SEQ, "max_seq_len": _SEQ, "sequence_length": _SEQ,
    "context_length": _SEQ, "train_seq_len": _SEQ,
    "n_layer": _LAYERS, "n_layers": _LAYERS, "num_layers": _LAYERS,
    "n_head": _HEADS, "n_heads": _HEADS, "num_heads": _HEADS,
    "n_kv_head": [JobField("/model/kv_heads", n.positive_int)],
    "n_kv_heads": [JobField("/model/kv_heads", n.positive_int)],
    "n_embd": _HIDDEN, "d_model": _HIDDEN, "hidden_size": _HIDDEN, "model_dim": _HIDDEN,
    "vocab_size": [JobField("/model/vocab", n.positive_int)],
    "max_iters": _STEPS, "num_iterations": _STEPS, "train_steps": _STEPS,
    "eval_interval": _EVAL, "eval_every": _EVAL, "val_loss_every": _EVAL,
    "log_interval": _LOG, "log_every": _LOG,
    "save_every": _SAVE, "save_interval": _SAVE, "checkpoint_every": _SAVE, "ckpt_every": _SAVE,
    "max_epochs": _EPOCHS, "num_epochs": _EPOCHS, "epochs": _EPOCHS,
    "dtype": [JobField("/training/precision", n.precision)],
    "compile": [JobField("/training/compile", n.to_bool)],
    "wandb_log": [JobField("/logging/reporters", _wandb)],
    "init_from": [JobField("/model/name", _init_from)],
    "model_name": [JobField("/model/name", n.to_str)],
    "num_workers": [JobField("/data/num_workers", n.to_int)],
}  # fmt: skip

# The table for names: our own spellings first, then HF TrainingArguments' (reused, not copied).
NAMES: dict[str, list[JobField]] = {**hf_trainer.KEYS, **OWN_NAMES}

# Every global of nanoGPT's train.py (what its configurator lets a config module override):
# a config-module name close to one of these but not equal is a typo nanoGPT ignores silently.
NANOGPT_GLOBALS = frozenset({
    "out_dir", "eval_interval", "log_interval", "eval_iters", "eval_only",
    "always_save_checkpoint", "init_from", "wandb_log", "wandb_project", "wandb_run_name",
    "dataset", "gradient_accumulation_steps", "batch_size", "block_size", "n_layer", "n_head",
    "n_embd", "dropout", "bias", "learning_rate", "max_iters", "weight_decay", "beta1", "beta2",
    "grad_clip", "decay_lr", "warmup_iters", "lr_decay_iters", "min_lr", "backend", "device",
    "dtype", "compile", "start", "num_samples", "max_new_tokens", "temperature", "top_k", "seed",
    "real_data", "profile",
})  # fmt: skip

# nanoGPT train.py's vocabulary without a dataset meta.pkl: GPT-2's 50257 padded to a multiple
# of 64 ("defaulting to vocab_size of GPT-2 to 50304 (50257 rounded up for efficiency)").
NANOGPT_VOCAB = 50304

# Names only a training config uses; generic ones (batch_size, seed) need company to count.
SPECIFIC_NAMES = (NANOGPT_GLOBALS | set(NAMES)) - {
    "batch_size", "seed", "device", "dtype", "dataset", "compile", "epochs", "num_epochs",
    "num_workers", "model_name", "start", "temperature", "top_k", "bias", "profile", "backend",
    "dropout", "learning_rate", "max_length", "report_to", "optim", "fsdp", "deepspeed",
}  # fmt: skip
KNOWN_NAMES = NANOGPT_GLOBALS | set(NAMES) | {"lr", "warmup_steps", "weight_decay", "max_lr"}
# Their presence says the module follows nanoGPT's conventions (see python_code._module_facts).
NANOGPT_MARKERS = frozenset({
    "block_size", "n_layer", "n_embd", "max_iters", "eval_interval", "always_save_checkpoint",
    "init_from", "wandb_log", "eval_iters", "lr_decay_iters",
})  # fmt: skip


def _devices(value: Any) -> int | None:
    """``devices=8``, ``"8"`` or a list of ids; ``"auto"`` and ``-1`` (all visible) are unknown."""
    if isinstance(value, list):
        return len(value) or None
    return n.positive_int(value)


def _strategy(value: Any) -> str | None:
    text = (n.to_str(value) or "").lower()
    for family in ("deepspeed", "fsdp", "ddp"):
        if text.startswith(family):
            return family
    return None


def _stage(value: Any) -> int | None:
    text = (n.to_str(value) or "").lower()
    stage = text.partition("deepspeed_stage_")[2][:1]
    return int(stage) if stage in {"1", "2", "3"} else None


def _offload(value: Any) -> bool | None:
    return True if str(value).lower().endswith("_offload") else None


def _profiler(value: Any) -> tuple[bool, bool] | None:
    """Lightning ``profiler=``: (enabled, scheduled). "simple"/"advanced" time every step;
    "pytorch" uses Lightning's default schedule (wait 1, warmup 1, active 3)."""
    if value is None:
        return False, False
    text = str(value).lower().removesuffix("profiler")
    if text in {"simple", "advanced", "xla"}:
        return True, False
    return (True, True) if text == "pytorch" else None


LIGHTNING: dict[str, list[JobField]] = {
    "devices": [JobField("/resources/gpus_per_node", _devices)],
    "num_nodes": [JobField("/resources/nodes", n.positive_int)],
    "precision": [JobField("/training/precision", n.precision)],
    "max_steps": _STEPS,
    "max_epochs": _EPOCHS,
    "max_time": [JobField("/resources/time_limit_s", n.duration_seconds)],
    "log_every_n_steps": _LOG,
    "accumulate_grad_batches": [JobField("/training/grad_accum_steps", n.positive_int)],
    "detect_anomaly": [JobField("/logging/anomaly_detection", n.to_bool)],
    "profiler": [
        JobField("/logging/profiler/enabled", lambda v: (_profiler(v) or (None, None))[0]),
        JobField("/logging/profiler/scheduled", lambda v: (_profiler(v) or (None, None))[1]),
    ],
    "strategy": [
        JobField("/training/parallelism/strategy", _strategy),
        JobField("/training/parallelism/zero_stage", _stage),
        JobField("/training/parallelism/offload_optimizer", _offload),
        JobField("/training/parallelism/offload_params", _offload),
    ],
}

# Lightning's strategy and profiler classes, read when written as calls.
STRATEGY_CALLS = {"DeepSpeedStrategy": "deepspeed", "FSDPStrategy": "fsdp", "DDPStrategy": "ddp"}
DEEPSPEED_STRATEGY: dict[str, list[JobField]] = {
    "stage": [JobField("/training/parallelism/zero_stage", n.to_int)],
    "offload_optimizer": [JobField("/training/parallelism/offload_optimizer", n.to_bool)],
    "offload_parameters": [JobField("/training/parallelism/offload_params", n.to_bool)],
}
PROFILER_CALLS = {"SimpleProfiler": False, "AdvancedProfiler": False, "PyTorchProfiler": True}


def _not(value: Any) -> bool | None:
    flag = n.to_bool(value)
    return None if flag is None else not flag


MODEL_CHECKPOINT: dict[str, list[JobField]] = {
    "every_n_train_steps": _SAVE,
    "every_n_epochs": [JobField("/checkpoint/every_epochs", n.positive_float)],
    "save_top_k": [JobField("/checkpoint/keep_last", n.positive_int)],  # -1: keep all
    "save_weights_only": [JobField("/checkpoint/save_optimizer", _not)],
}

# TrainingArguments and the TRL configs built on it: their keywords are hf-trainer keys.
HF_ARGUMENTS = frozenset({
    "TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig",
    "ORPOConfig", "KTOConfig", "CPOConfig", "RewardConfig", "PPOConfig", "RLOOConfig",
})  # fmt: skip
HF_TRAINERS = frozenset({
    "Trainer", "Seq2SeqTrainer", "SFTTrainer", "DPOTrainer", "GRPOTrainer", "ORPOTrainer",
    "KTOTrainer", "CPOTrainer", "RewardTrainer", "PPOTrainer", "RLOOTrainer",
})  # fmt: skip
LIGHTNING_MODULES = ("lightning", "pytorch_lightning", "L.", "pl.")
# Keywords only Lightning's Trainer takes (HF's takes model/args/datasets).
LIGHTNING_ONLY = frozenset(LIGHTNING) | {"accelerator", "callbacks", "logger", "max_time"}
DS_NAMES = ("ds_config", "deepspeed_config", "ds_cfg", "zero_config")
DS_DISTINCTIVE = frozenset({
    "zero_optimization", "train_micro_batch_size_per_gpu", "zero_allow_untested_optimizer",
})  # fmt: skip

# Experimental kernels a training script pulls in (TL501): imported top-level package →
# feature; calls that compile a CUDA/C++ extension when the script runs.
FEATURE_IMPORTS = {
    "flash_attn": "flash-attn", "flash_attn_interface": "flash-attn", "liger_kernel": "liger",
    "unsloth": "unsloth", "transformer_engine": "transformer-engine",
}  # fmt: skip
FEATURE_CALLS = {
    "torch.utils.cpp_extension.load": "custom-cuda",
    "torch.utils.cpp_extension.load_inline": "custom-cuda",
}
# Handlers that make a guarded import optional: the code's own fallback.
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception"})
