"""LLaMA-Factory training YAML (``llamafactory-cli train cfg.yaml``): TrainingArguments plus its
own model, data and fine-tuning keys, the Megatron-Core mode, the v1 schema (``model``,
``dist_config``, ``train_dataset``) and the v1 dataset files those name.

The HF keys are read through hf_trainer's table, so ``save_steps`` means the same in both.
LLaMA-Factory turns gradient checkpointing on unless ``disable_gradient_checkpointing`` is set;
only a stated value is a fact. ``finetuning_type: full`` is no PEFT (no fact).

Defaults (``Document.defaults``): TrainingArguments' ``seed`` 42 at the top of the file, and
its eval defaults beside the eval keys (see hf_trainer).
"""

from __future__ import annotations

from typing import Any

from trainlint.sources import hf_trainer
from trainlint.sources.base import Document, Input, Role, seed_default
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe
from trainlint.sources.keys.llama_factory import KEYS, MEGATRON
from trainlint.sources.structured import KeyPath, flat

name = "llama-factory"
role: Role = "config"

KNOWN_KEYS = hf_trainer.KNOWN_KEYS | KEYS | MEGATRON

_PEFT = {"lora": "lora", "oft": "oft", "freeze": "freeze"}
# v1 ``dist_config.name`` → strategy (FSDP2 and its "turbo" variant are FSDP).
_DIST = {"fsdp": "fsdp", "fsdp2": "fsdp", "fsdpturbo": "fsdp", "deepspeed": "deepspeed"}


def _peft(value: Any) -> str | None:
    return _PEFT.get((n.to_str(value) or "").strip().lower())


def _dist(value: Any) -> str | None:
    return _DIST.get((n.to_str(value) or "").strip().lower())


def _not(value: Any) -> bool | None:
    flag = n.to_bool(value)
    return None if flag is None else not flag


def _flash_attn(value: Any) -> str | None:
    """``flash_attn: fa2``/``fa3`` forces the flash-attn kernel; ``auto`` picks the best one
    installed (its own fallback), ``sdpa``/``disabled`` use PyTorch's (no feature)."""
    text = (n.to_str(value) or "").strip().lower()
    return "kernel" if text.startswith("fa") else None


def _quantization_bits(value: Any) -> int | None:
    bits = n.positive_int(value)
    return bits if bits in (2, 3, 4, 5, 6, 8) else None


TABLE: dict[KeyPath, list[JobField]] = {
    **hf_trainer.table(),
    ("fp8",): [
        JobField("/training/precision", n.when_true("fp8")),
        JobField("/features/fp8", n.when_true("precision")),
    ],
    ("pure_bf16",): [JobField("/training/precision", n.when_true("bf16"))],
    ("finetuning_type",): [JobField("/model/peft/method", _peft)],
    ("lora_rank",): [JobField("/model/peft/rank", n.positive_int)],
    ("cutoff_len",): [JobField("/model/seq_len", n.positive_int)],
    ("quantization_bit",): [JobField("/model/quantization_bits", _quantization_bits)],
    ("disable_gradient_checkpointing",): [JobField("/training/activation_checkpointing", _not)],
    ("ray_num_workers",): [JobField("/resources/world_size", n.positive_int)],
    ("flash_attn",): [JobField("/features/flash-attn", _flash_attn)],
    ("enable_liger_kernel",): [JobField("/features/liger", n.when_true("kernel"))],
    ("use_unsloth",): [JobField("/features/unsloth", n.when_true("kernel"))],
    ("use_unsloth_gc",): [JobField("/features/unsloth", n.when_true("kernel"))],
    ("tensor_model_parallel_size",): [JobField("/training/parallelism/tensor", n.positive_int)],
    ("pipeline_model_parallel_size",): [JobField("/training/parallelism/pipeline", n.positive_int)],
    ("context_parallel_size",): [JobField("/training/parallelism/context", n.positive_int)],
    ("expert_model_parallel_size",): [JobField("/training/parallelism/expert", n.positive_int)],
    # v1 schema
    ("model",): [JobField("/model/name", n.to_str)],
    ("micro_batch_size",): [JobField("/training/micro_batch_size", n.positive_int)],
    ("dist_config", "name"): [JobField("/training/parallelism/strategy", _dist)],
}
REFERENCES: dict[KeyPath, Role] = {
    ("deepspeed",): "deepspeed",
    ("dist_config", "config_file"): "deepspeed",
    ("train_dataset",): "config",
    ("eval_dataset",): "config",
}
_DATA_SUFFIXES = (".yaml", ".yml", ".json")

_MARKS = ("stage", "finetuning_type", "cutoff_len", "template", "quantization_bit", "lora_rank")
_V1_MARKS = ("dist_config", "train_dataset", "model_class", "kernel_config", "micro_batch_size")


def recognise(file: Input) -> float:
    """``stage``/``finetuning_type``/``cutoff_len``/``template`` are LLaMA-Factory's own; the v1
    schema has ``model`` with ``dist_config``/``train_dataset``; a v1 dataset file maps names to
    ``{path, source|converter}``."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    data = file.mapping
    marks = flat.keys_of(data, _MARKS)
    if marks >= 2 or (marks and "model_name_or_path" in data):
        return 0.95
    if "model" in data and flat.keys_of(data, _V1_MARKS) >= 2:
        return 0.95
    return 0.7 if _is_dataset_file(data) else 0.0


def _is_dataset_file(data: dict[str, Any]) -> bool:
    entries = list(data.values())
    return bool(entries) and all(
        isinstance(entry, dict) and "path" in entry and ("converter" in entry or "source" in entry)
        for entry in entries
    )


def parse(file: Input) -> Document:
    if _is_dataset_file(file.mapping):
        return Document(
            file.path, name, recognise(file), role, defaults=[seed_default(42, "seed", file.path)]
        )
    doc = flat.document(file, name, role, recognise(file), TABLE, {(): KNOWN_KEYS})
    doc.defaults = [seed_default(42, "seed", file.path), *hf_trainer.eval_defaults(doc.facts)]
    tree = flat.plain(file.trees[0])
    dist_config = tree.data.get("dist_config") if isinstance(tree.data, dict) else None
    dist = _dist(dist_config.get("name")) if isinstance(dist_config, dict) else None
    wanted = dict(REFERENCES)
    if dist is not None and dist != "deepspeed":  # an FSDP ``config_file`` is not DeepSpeed's
        wanted[("dist_config", "config_file")] = "config"
    doc.references = [
        ref
        for ref in flat.references(tree, wanted, file.path)
        if ref.role == "deepspeed" or ref.path.lower().endswith(_DATA_SUFFIXES)  # not a Hub id
    ]
    return doc


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {".".join(map(str, path)): ["(reference)"] for path in REFERENCES}


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("examples/train_lora/llama3_lora_sft.yaml", "qwen3_full_sft.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
    claims=frozenset({"stage", "finetuning_type", "cutoff_len", "template"}),
)
