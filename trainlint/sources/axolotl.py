"""Axolotl training YAML (``axolotl train config.yml``), and its ``--cloud`` YAML (Modal, Baseten).

Checkpoints: ``saves_per_epoch: N`` makes axolotl save every ``1 / (N * num_epochs)`` of the run,
that is every ``1/N`` epoch, so it is stated as ``/checkpoint/every_epochs = 1/N``. ``bf16: auto``
picks bf16 only on hardware that has it, so it is unknown; ``tf32`` sets the matmul mode of
fp32 training, not a training precision, and is not read. FSDP sharding is stated as the ZeRO
stage it shards like (see the accelerate format: FULL_SHARD = 3, SHARD_GRAD_OP = 2). FSDP keys
are read with and without their ``fsdp_`` prefix, as axolotl accepts both.

Default (``Document.defaults``): ``seed`` 42, TrainingArguments', at the top of the file.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from trainlint.catalog import resolve_gpu
from trainlint.sources import hf_trainer
from trainlint.sources.accelerate_config import sharding_stage
from trainlint.sources.base import Document, Fact, Input, Role, seed_default
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, Table, describe
from trainlint.sources.keys.axolotl import CLOUD, KEYS
from trainlint.sources.structured import KeyPath, Tree, flat

name = "axolotl"
role: Role = "config"

KNOWN_KEYS = KEYS
CLOUD_KEYS = CLOUD


def _set(result: Any) -> Any:
    return lambda value: result if value not in (None, False, "", [], {}) else None


def _per_epoch(value: Any) -> float | None:
    count = n.positive_float(value)
    return 1.0 / count if count else None


def _lower(value: Any) -> str | None:
    text = n.to_str(value)
    return text.strip().lower() if text and text.strip() else None


def _fsdp_list(value: Any) -> list[str]:
    items = value.split() if isinstance(value, str) else value if isinstance(value, list) else []
    return [str(item).strip().lower() for item in items]


def _fsdp_stage(value: Any) -> int | None:
    """HF-style ``fsdp: [full_shard, auto_wrap]`` → the ZeRO stage its sharding matches."""
    stages = [sharding_stage(item) for item in _fsdp_list(value)]
    return next((stage for stage in stages if stage is not None), None)


def _fsdp_offload(value: Any) -> bool | None:
    return True if "offload" in _fsdp_list(value) else None


def _gpu(value: Any) -> str | None:
    text = n.to_str(value)
    spec = resolve_gpu(text) if text else None
    return spec.name if spec else None


def _plugin(word: str, kind: str) -> Any:
    """``plugins: [axolotl.integrations.liger.LigerPlugin]`` → the feature the plugin loads."""

    def convert(value: Any) -> str | None:
        return kind if any(word in item.lower() for item in n.string_list(value) or []) else None

    return convert


# Kernel switches (TL501): each names the experimental kernel it loads; the model's own
# attention (``sdp_attention``, ``flex_attention``, ``attn_implementation: sdpa``) is none.
_FLASH = [JobField("/features/flash-attn", n.when_true("kernel"))]
_LIGER = [JobField("/features/liger", n.when_true("kernel"))]
FEATURES: dict[KeyPath, list[JobField]] = {
    ("plugins",): [JobField("/features/liger", _plugin("liger", "kernel"))],  # a liger_* key wins
    # ``sdp_attention: true`` next to ``flash_attention: true`` states the alternative: axolotl
    # picks flash-attn first; flipping the flag off runs PyTorch's SDPA with the same config.
    ("sdp_attention",): [JobField("/fallbacks/flash-attn", n.when_true("sdp_attention"))],
    ("flash_attention",): _FLASH,
    ("flash_attn_cross_entropy",): _FLASH,
    ("flash_attn_rms_norm",): _FLASH,
    ("flash_attn_fuse_mlp",): _FLASH,
    ("attn_implementation",): [JobField("/features/flash-attn", hf_trainer.flash_attn)],
    **{(key,): _LIGER for key in (
        "liger_rope", "liger_rms_norm", "liger_glu_activation", "liger_swiglu",
        "liger_layer_norm", "liger_cross_entropy", "liger_fused_linear_cross_entropy")},
}  # fmt: skip


def _fsdp_fields(key: str, fields: list[JobField]) -> dict[KeyPath, list[JobField]]:
    return {("fsdp_config", key): fields, ("fsdp_config", f"fsdp_{key}"): fields}


_STAGE = [JobField("/training/parallelism/zero_stage", sharding_stage)]
TABLE: dict[KeyPath, list[JobField]] = {
    ("base_model",): [JobField("/model/name", n.to_str)],
    ("sequence_len",): [JobField("/model/seq_len", n.positive_int)],
    ("micro_batch_size",): [JobField("/training/micro_batch_size", n.positive_int)],
    ("gradient_accumulation_steps",): [JobField("/training/grad_accum_steps", n.positive_int)],
    ("num_epochs",): [JobField("/training/epochs", n.positive_float)],
    ("max_steps",): [JobField("/training/max_steps", n.positive_int)],
    ("bf16",): [JobField("/training/precision", n.when_true("bf16"))],
    ("fp16",): [JobField("/training/precision", n.when_true("fp16"))],
    ("fp8",): [
        JobField("/training/precision", n.when_true("fp8")),
        JobField("/features/fp8", n.when_true("precision")),
    ],
    ("load_in_8bit",): [JobField("/model/quantization_bits", n.when_true(8))],
    ("load_in_4bit",): [JobField("/model/quantization_bits", n.when_true(4))],
    ("adapter",): [JobField("/model/peft/method", _lower)],
    ("lora_r",): [JobField("/model/peft/rank", n.positive_int)],
    ("optimizer",): n.optimizer_fields(),
    ("gradient_checkpointing",): [JobField("/training/activation_checkpointing", n.to_bool)],
    ("torch_compile",): [JobField("/training/compile", n.to_bool)],
    ("seed",): [JobField("/training/seed", n.to_int)],
    ("saves_per_epoch",): [JobField("/checkpoint/every_epochs", _per_epoch)],
    ("save_strategy",): [JobField("/checkpoint/strategy", _lower)],
    ("save_steps",): [JobField("/checkpoint/every_steps", n.positive_float)],
    ("save_total_limit",): [JobField("/checkpoint/keep_last", n.positive_int)],
    ("save_only_model",): [JobField("/checkpoint/save_optimizer", lambda v: _negate(n.to_bool(v)))],
    ("eval_strategy",): [JobField("/eval/strategy", _lower)],
    ("eval_steps",): [JobField("/eval/every_steps", n.positive_float)],
    ("logging_steps",): [JobField("/logging/every_steps", n.positive_float)],
    ("wandb_name",): [JobField("/name", n.to_str)],
    ("dataloader_num_workers",): [JobField("/data/num_workers", n.to_int)],
    ("dataloader_pin_memory",): [JobField("/data/pin_memory", n.to_bool)],
    ("dataloader_prefetch_factor",): [JobField("/data/prefetch_factor", n.to_int)],
    ("deepspeed",): [JobField("/training/parallelism/strategy", _set("deepspeed"))],
    ("fsdp_version",): [JobField("/training/parallelism/strategy", _set("fsdp"))],
    ("fsdp_config",): [JobField("/training/parallelism/strategy", _set("fsdp"))],
    ("fsdp",): [
        JobField("/training/parallelism/strategy", _set("fsdp")),
        JobField("/training/parallelism/zero_stage", _fsdp_stage),
        JobField("/training/parallelism/offload_params", _fsdp_offload),
    ],
    **_fsdp_fields("sharding_strategy", _STAGE),
    **_fsdp_fields("reshard_after_forward", _STAGE),
    **_fsdp_fields("offload_params", [JobField("/training/parallelism/offload_params", n.to_bool)]),
    **_fsdp_fields(
        "activation_checkpointing", [JobField("/training/activation_checkpointing", n.to_bool)]
    ),
    ("tensor_parallel_size",): [JobField("/training/parallelism/tensor", n.positive_int)],
    ("ray_num_workers",): [JobField("/resources/world_size", n.positive_int)],
    **FEATURES,
}
CLOUD_TABLE: dict[KeyPath, list[JobField]] = {
    ("gpu",): [JobField("/resources/gpu/model", _gpu)],
    ("gpu_count",): [
        JobField("/resources/gpus_per_node", n.positive_int),
        JobField("/resources/scheduler", lambda v: "axolotl-cloud" if n.positive_int(v) else None),
    ],
    ("node_count",): [JobField("/resources/nodes", n.positive_int)],
    ("timeout",): [JobField("/resources/time_limit_s", n.duration_seconds)],
}
REFERENCES: dict[KeyPath, Role] = {("deepspeed",): "deepspeed"}

# Experiment trackers: the key that turns each on (a set project, or a ``use_`` flag).
_REPORTERS = {
    "wandb_project": "wandb", "use_wandb": "wandb", "use_tensorboard": "tensorboard",
    "use_swanlab": "swanlab", "mlflow_tracking_uri": "mlflow", "use_mlflow": "mlflow",
    "comet_project_name": "comet", "use_comet": "comet", "trackio_project_name": "trackio",
}  # fmt: skip


def _negate(flag: bool | None) -> bool | None:
    return None if flag is None else not flag


# Keys that only axolotl writes; with ``base_model`` one of them makes the file certain.
_MARKS = ("micro_batch_size", "sequence_len", "adapter", "datasets", "pretraining_dataset",
          "num_epochs", "saves_per_epoch", "evals_per_epoch", "sample_packing")  # fmt: skip


def recognise(file: Input) -> float:
    """``base_model`` with an axolotl-only key (HF's is ``model_name_or_path``); a cloud YAML
    by ``gpu`` + ``gpu_count`` with a provider, project, secrets or volumes."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    data = file.mapping
    marks = flat.keys_of(data, _MARKS)
    if "base_model" in data and marks:
        return 0.95
    if marks >= 3:
        return 0.8
    if _is_cloud(data):
        return 0.85
    return 0.0


def _is_cloud(data: dict[str, Any]) -> bool:
    context = ("provider", "project_name", "secrets", "volumes", "timeout", "node_count")
    return "gpu" in data and "gpu_count" in data and flat.keys_of(data, context) > 0


def parse(file: Input) -> Document:
    seed = seed_default(42, "seed", file.path)  # TrainingArguments', which axolotl passes on
    if _is_cloud(file.mapping) and "base_model" not in file.mapping:
        cloud = flat.document(file, name, role, recognise(file), CLOUD_TABLE, {(): CLOUD_KEYS})
        cloud.defaults = [seed]
        return cloud
    known: dict[KeyPath, Collection[str]] = {(): KNOWN_KEYS | CLOUD_KEYS}
    doc = flat.document(file, name, role, recognise(file), TABLE, known)
    doc.defaults = [seed]
    tree = flat.plain(file.trees[0])
    doc.references = flat.references(tree, REFERENCES, file.path)
    doc.facts += _reporters(tree, file.path)
    return doc


def _reporters(tree: Tree, file: str) -> list[Fact]:
    """One ``/logging/reporters`` fact listing every tracker the file turns on, located at the
    first key that does; ``use_wandb: false`` turns W&B off whatever the project says."""
    data = tree.data if isinstance(tree.data, dict) else {}
    found: dict[str, str] = {}
    for key, reporter in _REPORTERS.items():
        value = data.get(key)
        on = n.to_bool(value) if key.startswith("use_") else bool(n.to_str(value))
        if on and reporter not in found.values():
            found[key] = reporter
    if n.to_bool(data.get("use_wandb")) is False:
        found = {key: reporter for key, reporter in found.items() if reporter != "wandb"}
    if not found:
        return []
    first = min(found, key=lambda key: tree.span((key,)))
    return [Fact("/logging/reporters", list(found.values()), flat.location(tree, (first,), file))]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    table: Table = {**TABLE, **CLOUD_TABLE}
    reporters = {key: ["/logging/reporters"] for key in _REPORTERS}
    return describe(table) | reporters | {"deepspeed": ["/training/parallelism/strategy",
                                                        "(reference)"]}  # fmt: skip


# Keys only axolotl accepts: a file with one is axolotl's, whatever HF keys it shares.
CLAIMS = frozenset({
    "base_model", "micro_batch_size", "sequence_len", "adapter", "datasets", "saves_per_epoch",
})  # fmt: skip

FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("examples/llama-3/lora-8b.yml", "qlora.yml", "cloud.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
    claims=CLAIMS,
)
