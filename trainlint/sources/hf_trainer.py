"""Hugging Face ``TrainingArguments`` as YAML or JSON (also TRL and alignment-handbook recipes).

The same table reads the flags of any program a launch line runs (``--save_steps 10``,
``Format.flags``), so a key means one thing whether it is written in a file or on a launch
line. Many tools share these keys: a file with a key another format claims (axolotl's
``base_model``, LLaMA-Factory's ``stage``) is that format's, whatever HF keys it also has.

Defaults the Trainer uses for keys a file leaves unset (``Document.defaults``): ``seed`` 42 and
``dataloader_num_workers`` 0, located at the top of the file where a user adds the key; and,
on a file or a launch line, ``eval_strategy`` ``no`` beside an ``eval_steps`` (no evaluation
by steps without ``eval_strategy: steps``) and ``eval_steps`` = ``logging_steps`` beside an
``eval_strategy``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trainlint.job import Location
from trainlint.sources import claimed_by_others
from trainlint.sources.base import Document, DocumentDefault, Fact, Input, Reference, Role, top_of
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format
from trainlint.sources.base.table import JobField, describe, facts_for
from trainlint.sources.keys.hf_trainer import KNOWN_KEYS as KNOWN_KEYS
from trainlint.sources.structured import KeyPath, Tree, flat

name = "hf-trainer"
role: Role = "config"


def _strategy(value: Any) -> str | None:
    text = n.to_str(value)
    return text.strip().lower() if text else None


def _peft(value: Any) -> str | None:
    return "lora" if n.to_bool(value) else None


def _not(value: Any) -> bool | None:
    flag = n.to_bool(value)
    return None if flag is None else not flag


def _strategy_if_set(kind: str) -> Any:
    return lambda value: kind if value not in (None, False, "", [], {}) else None


def flash_attn(value: Any) -> str | None:
    """``flash_attention_2``/``_3`` or a hub kernel (``kernels-community/flash-attn3``) is the
    flash-attn kernel; ``sdpa``/``eager``/``flex_attention`` are PyTorch's own (no feature)."""
    text = (n.to_str(value) or "").lower()
    return "kernel" if "flash" in text and "flex" not in text else None


KEYS: dict[str, list[JobField]] = {
    "per_device_train_batch_size": [JobField("/training/micro_batch_size", n.positive_int)],
    "gradient_accumulation_steps": [JobField("/training/grad_accum_steps", n.positive_int)],
    "max_steps": [JobField("/training/max_steps", n.positive_int)],
    "num_train_epochs": [JobField("/training/epochs", n.positive_float)],
    "bf16": [JobField("/training/precision", n.when_true("bf16"))],
    "fp16": [JobField("/training/precision", n.when_true("fp16"))],
    "optim": n.optimizer_fields(),
    "gradient_checkpointing": [JobField("/training/activation_checkpointing", n.to_bool)],
    "torch_compile": [JobField("/training/compile", n.to_bool)],
    "attn_implementation": [JobField("/features/flash-attn", flash_attn)],
    "use_liger_kernel": [JobField("/features/liger", n.when_true("kernel"))],
    "seed": [JobField("/training/seed", n.to_int)],
    "deepspeed": [JobField("/training/parallelism/strategy", _strategy_if_set("deepspeed"))],
    "fsdp": [JobField("/training/parallelism/strategy", _strategy_if_set("fsdp"))],
    "save_strategy": [JobField("/checkpoint/strategy", _strategy)],
    "save_steps": [JobField("/checkpoint/every_steps", n.positive_float)],
    "save_total_limit": [JobField("/checkpoint/keep_last", n.positive_int)],
    "save_only_model": [JobField("/checkpoint/save_optimizer", _not)],
    "eval_strategy": [JobField("/eval/strategy", _strategy)],
    "evaluation_strategy": [JobField("/eval/strategy", _strategy)],
    "eval_steps": [JobField("/eval/every_steps", n.positive_float)],
    "logging_steps": [JobField("/logging/every_steps", n.positive_float)],
    "logging_strategy": [JobField("/logging/strategy", _strategy)],
    "log_level": [JobField("/logging/level", _strategy)],
    "report_to": [JobField("/logging/reporters", n.string_list)],
    "dataloader_num_workers": [JobField("/data/num_workers", n.to_int)],
    "dataloader_pin_memory": [JobField("/data/pin_memory", n.to_bool)],
    "dataloader_prefetch_factor": [JobField("/data/prefetch_factor", n.to_int)],
    "dataloader_persistent_workers": [JobField("/data/persistent_workers", n.to_bool)],
    "model_name_or_path": [JobField("/model/name", n.to_str)],
    "max_seq_length": [JobField("/model/seq_len", n.positive_int)],
    "max_length": [JobField("/model/seq_len", n.positive_int)],
    "model_max_length": [JobField("/model/seq_len", n.positive_int)],
    "use_peft": [JobField("/model/peft/method", _peft)],
    "lora_r": [JobField("/model/peft/rank", n.positive_int)],
    "load_in_4bit": [JobField("/model/quantization_bits", n.when_true(4))],
    "load_in_8bit": [JobField("/model/quantization_bits", n.when_true(8))],
    "run_name": [JobField("/name", n.to_str)],
}

# Keys whose string value names another file of the same job.
REFERENCE_KEYS: dict[str, Role] = {"deepspeed": "deepspeed"}

# Keys only TrainingArguments (and recipes built on it) use: one of them marks the format;
# generic keys (output_dir, learning_rate, ...) add confidence but never claim a file alone.
_DISTINCTIVE = {
    "per_device_train_batch_size", "save_steps", "logging_steps", "save_strategy",
    "eval_strategy", "evaluation_strategy", "save_total_limit", "lr_scheduler_type",
    "warmup_ratio", "optim", "logging_strategy", "per_device_eval_batch_size",
}  # fmt: skip
_GENERIC = {"output_dir", "learning_rate", "num_train_epochs", "gradient_accumulation_steps"}
# Never 1.0: a format with its own marks (axolotl, LLaMA-Factory score 0.95) wins over the
# HF keys it shares, and ties go to the later module name, which hf_trainer often is.
_MAX = 0.9


# TrainingArguments' own names: with one of them the file is HF's for certain (its typos count).
_UNMISTAKABLE = frozenset({
    "per_device_train_batch_size", "per_device_eval_batch_size", "save_total_limit",
    "eval_strategy", "evaluation_strategy", "logging_strategy", "save_strategy",
    "lr_scheduler_type",
})  # fmt: skip

# Keys of what a run writes (checkpoint-*/trainer_state.json), not of what configures one.
_ARTIFACT = frozenset({"log_history", "global_step", "best_model_checkpoint"})


def recognise(file: Input) -> float:
    if not file.is_structured:
        return 0.0
    data = file.mapping
    keys = {key for key in data if not isinstance(data[key], (dict, list))}  # HF args are
    distinctive, generic = len(_DISTINCTIVE & keys), len(_GENERIC & keys)  # flat values
    if distinctive == 0 or keys & _ARTIFACT:
        return 0.0
    score = min(_MAX, 0.5 + 0.1 * (distinctive + generic))
    if keys & _UNMISTAKABLE:
        score = max(score, 0.8)
    return min(score, 0.3) if keys & claimed_by_others(name) else score


def table() -> dict[KeyPath, list[JobField]]:
    return {(key,): fields for key, fields in KEYS.items()}


def parse(file: Input) -> Document:
    doc = flat.document(file, name, role, recognise(file), table(), {(): KNOWN_KEYS})
    tree = flat.plain(file.trees[0])
    refs: dict[KeyPath, Role] = {(key,): ref_role for key, ref_role in REFERENCE_KEYS.items()}
    doc.references = flat.references(tree, refs, file.path)
    doc.facts += fp32_facts(tree, file.path)
    doc.defaults = [*defaults(file.path), *eval_defaults(doc.facts)]
    return doc


def defaults(file: str) -> list[DocumentDefault]:
    """The Trainer's seed and data loader workers when the file sets none."""
    return [
        DocumentDefault("/training/seed", 42, "seed", top_of(file)),
        DocumentDefault("/data/num_workers", 0, "dataloader_num_workers", top_of(file)),
    ]


def eval_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """TrainingArguments evaluates every ``eval_steps`` only with ``eval_strategy: steps``
    (default ``no``), and ``eval_steps`` defaults to ``logging_steps``: each default is
    located at the eval key stated beside it."""
    stated = {fact.pointer: fact.location for fact in facts}
    found = []
    if "/eval/every_steps" in stated:
        found.append(
            DocumentDefault("/eval/strategy", "no", "eval_strategy", stated["/eval/every_steps"])
        )
    if "/eval/strategy" in stated:
        where = stated["/eval/strategy"]
        found.append(
            DocumentDefault("/eval/every_steps", None, "eval_steps", where, "/logging/every_steps")
        )
    return found


def fp32_facts(tree: Tree, file: str) -> list[Fact]:
    """``bf16: false`` and ``fp16: false`` both written: the Trainer trains in fp32 (its
    default, declared here), located at the later of the two. Not with ``tf32: true`` (TF32
    tensor-core matmuls are not fp32 speed), and never inferred from the keys' absence."""
    data = tree.data if isinstance(tree.data, dict) else {}
    flags = [n.to_bool(data.get(key)) for key in ("bf16", "fp16")]
    if flags != [False, False] or n.to_bool(data.get("tf32")) is True:
        return []
    where = max((flat.location(tree, (key,), file) for key in ("bf16", "fp16")),
                key=lambda at: (at.line, at.column))  # fmt: skip
    return [Fact("/training/precision", "fp32", where)]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return (
        describe({(key,): fields for key, fields in KEYS.items()})
        | {key: ["(reference)"] for key in REFERENCE_KEYS}
        | {"bf16: false and fp16: false (without tf32: true)": ["/training/precision (fp32)"]}
    )


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """Facts for one command-line flag after the training script, e.g. ``--save_steps 10``."""
    return facts_for(KEYS.get(n.flag_key(flag), []), value, location)


def cli_reference(flag: str, value: Any, location: Location) -> Reference | None:
    role_ = REFERENCE_KEYS.get(n.flag_key(flag))
    if role_ is None or not isinstance(value, str) or not value.strip():
        return None
    return Reference(value.strip(), location, role_)


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("config_full.yaml", "sft.yaml", "training_args.json"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(cli_facts, defaults=eval_defaults),
)
