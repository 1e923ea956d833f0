"""DeepSpeed JSON: batch sizes, ZeRO stage and offload, precision, logging and profilers.

``"auto"`` values convert to unknown, so the trainer config of the same job fills them
(HF Trainer resolves them the same way at run time). A config with no precision block enabled
(``fp16``, ``bf16``/``bfloat16``, ``amp``, ``torch_autocast`` all off or absent, none
``"auto"``) trains fp32, as DeepSpeed does; a trainer's own precision outranks it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Document, Fact, Input, Role, top_of
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe
from trainlint.sources.keys.deepspeed import TOP_LEVEL, ZERO
from trainlint.sources.keys.kohya import MARKS as KOHYA_MARKS
from trainlint.sources.structured import KeyPath, flat

name = "deepspeed"
role: Role = "deepspeed"


def _offloaded(value: Any) -> bool | None:
    device = n.to_str(value)
    return None if device is None else device.lower() in {"cpu", "nvme"}


def _always(result: Any) -> Any:
    return lambda value: result


def _stage(value: Any) -> int | None:
    stage = n.to_int(value)
    return stage if stage is not None and 0 <= stage <= 3 else None


TABLE: dict[KeyPath, list[JobField]] = {
    (): [JobField("/training/parallelism/strategy", _always("deepspeed"))],
    ("train_micro_batch_size_per_gpu",): [JobField("/training/micro_batch_size", n.positive_int)],
    ("gradient_accumulation_steps",): [JobField("/training/grad_accum_steps", n.positive_int)],
    ("train_batch_size",): [JobField("/training/global_batch_size", n.positive_int)],
    ("zero_optimization", "stage"): [JobField("/training/parallelism/zero_stage", _stage)],
    ("zero_optimization", "offload_optimizer", "device"): [
        JobField("/training/parallelism/offload_optimizer", _offloaded)
    ],
    ("zero_optimization", "offload_param", "device"): [
        JobField("/training/parallelism/offload_params", _offloaded)
    ],
    ("fp16", "enabled"): [JobField("/training/precision", n.when_true("fp16"))],
    ("bf16", "enabled"): [JobField("/training/precision", n.when_true("bf16"))],
    ("bfloat16", "enabled"): [JobField("/training/precision", n.when_true("bf16"))],  # an alias
    ("optimizer", "type"): n.optimizer_fields(),
    ("steps_per_print",): [JobField("/logging/every_steps", n.positive_int)],
    ("flops_profiler", "enabled"): [
        JobField("/logging/profiler/enabled", n.to_bool),
        JobField("/logging/profiler/scheduled", n.when_true(True)),  # profiles one step only
    ],
    ("wall_clock_breakdown",): [
        JobField("/logging/profiler/enabled", n.when_true(True)),
        JobField("/logging/profiler/scheduled", n.when_true(False)),  # times every step
    ],
}

# DeepSpeedExamples' bing_bert model + schedule JSON travels with its DeepSpeed configs and is
# read by the same scripts: its model dimensions are facts; it sets no DeepSpeed option.
BERT_TABLE: dict[KeyPath, list[JobField]] = {
    ("name",): [JobField("/name", n.to_str)],
    ("bert_model_config", "hidden_size"): [JobField("/model/hidden", n.positive_int)],
    ("bert_model_config", "num_hidden_layers"): [JobField("/model/layers", n.positive_int)],
    ("bert_model_config", "num_attention_heads"): [JobField("/model/heads", n.positive_int)],
    ("bert_model_config", "intermediate_size"): [JobField("/model/ffn_hidden", n.positive_int)],
    ("bert_model_config", "vocab_size_or_config_json_file"): [
        JobField("/model/vocab", n.positive_int)
    ],
}

KNOWN_KEYS = TOP_LEVEL
ZERO_KEYS = ZERO

_DISTINCTIVE = {
    "zero_optimization",
    "train_micro_batch_size_per_gpu",
    "zero_allow_untested_optimizer",
}
_LIKELY = {"train_batch_size", "steps_per_print", "wall_clock_breakdown", "flops_profiler",
           "gradient_clipping", "fp16", "bf16", "optimizer", "scheduler"}  # fmt: skip


# sd-scripts option names (kohya_ss GUI presets save them as JSON) DeepSpeed never writes.
_KOHYA = frozenset(KOHYA_MARKS - _LIKELY - {"gradient_accumulation_steps"})
# DeepSpeed writes these as blocks ({"type": ..., "params": ...}); a name is another tool's.
_BLOCKS_ONLY = ("optimizer", "scheduler")


def recognise(file: Input) -> float:
    """ZeRO or per-GPU micro-batch keys are DeepSpeed's own; otherwise two of its usual keys,
    more surely when ``fp16``/``bf16``/``optimizer`` are blocks, as only DeepSpeed writes them.
    ``optimizer``/``scheduler`` given as a name are no DeepSpeed key, and a file with three of
    sd-scripts' option names (a kohya_ss GUI preset: ``"optimizer": "AdamW"``,
    ``"mixed_precision"``, ``"network_dim"``) is not DeepSpeed's."""
    if file.suffix != "json":
        return 0.0
    data = file.mapping
    if set(data) & _DISTINCTIVE:
        return 0.95
    if _is_bert_schedule(data):
        return 0.6
    likely = {key for key in set(data) & _LIKELY
              if key not in _BLOCKS_ONLY or isinstance(data[key], dict)}  # fmt: skip
    if len(likely) < 2 or len(set(data) & _KOHYA) >= 3:
        return 0.0
    blocks = [
        key for key in ("fp16", "bf16", "optimizer", "scheduler") if isinstance(data.get(key), dict)
    ]
    return 0.8 if blocks else 0.6


def _is_bert_schedule(data: dict[str, Any]) -> bool:
    model = data.get("bert_model_config")
    return isinstance(model, dict) and "hidden_size" in model and "mixed_seq_training" in data


# The blocks that make DeepSpeed train in lower precision; with none enabled it trains fp32.
_LOW_PRECISION = ("fp16", "bf16", "bfloat16", "amp", "torch_autocast")


def _fp32(file: Input) -> list[Fact]:
    """fp32 when no precision block is enabled or left to the trainer (``"auto"``): DeepSpeed
    keeps fp32 weights and compute unless fp16/bf16/amp/torch_autocast says otherwise. A
    trainer's own precision (HF ``bf16: true``, which fills ``"auto"`` or an absent block)
    outranks this file when the job is assembled. Located at the first disabled block, else
    at the top of the file."""
    data = file.mapping
    blocks = {key: data[key] for key in _LOW_PRECISION if key in data}
    for block in blocks.values():
        # DeepSpeed reads a block without "enabled" as off
        enabled = block.get("enabled", False) if isinstance(block, dict) else None
        if n.to_bool(enabled) is not False:  # on, "auto" or a variable
            return []
    where = _located(file, next(iter(blocks), None))
    return [Fact("/training/precision", "fp32", where)]


def _located(file: Input, block: str | None) -> Location:
    if block is None:
        return top_of(file.path)
    line, column = file.trees[0].span((block, "enabled"))
    return Location(file=file.path, line=line, column=column)


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    described = describe(TABLE) | describe(BERT_TABLE)
    described["fp16, bf16, amp, torch_autocast all off or absent (fp32)"] = ["/training/precision"]
    return described


def parse(file: Input) -> Document:
    """DeepSpeed's facts, and keys one or two edits from a real one at the top level and in
    ``zero_optimization`` (DeepSpeed ignores unknown keys, so ``zero_optimisation`` silently
    trains without ZeRO)."""
    if _is_bert_schedule(file.mapping) and not set(file.mapping) & _DISTINCTIVE:
        return flat.document(file, name, "config", recognise(file), BERT_TABLE, {})
    known: dict[KeyPath, Collection[str]] = {(): KNOWN_KEYS, ("zero_optimization",): ZERO_KEYS}
    doc = flat.document(file, name, role, recognise(file), TABLE, known)
    doc.facts += _fp32(file)
    return doc


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("ds_config.json", "zero3.json", "ds_z2_offload.json"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
