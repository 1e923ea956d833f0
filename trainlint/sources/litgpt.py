"""litgpt ``config_hub`` YAML (jsonargparse): ``litgpt pretrain|finetune* --config x.yaml``.

The model is a catalog name (``model_name``), a checkpoint folder named after the Hub id
(``checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3.1-8B``) or inline dimensions
(``model_config``); batch sizes, length and intervals live under ``train:`` and ``eval:``.

Default (``Document.defaults``): ``seed`` 1337 when unset, at the top of the file.

On more than one device litgpt picks the strategy itself, with no setting to change it
(litgpt 26857050, ``pretrain.py`` and ``finetune/*.py``): ``pretrain`` shards with FSDP
``HYBRID_SHARD`` (FULL_SHARD within a node, replicas across nodes); ``finetune`` (full,
adapter) with FSDP FULL_SHARD and ``finetune_lora`` with FSDP2 ``fully_shard``, both
recomputing each transformer ``Block`` (``activation_checkpointing_policy={Block}``). So a
config whose ``devices`` is not one device states that strategy, located at ``devices`` (at
the top of the file for a pretrain config that leaves ``devices`` to its default, ``auto``).
A config is a pretrain one when it names ``model_name`` or ``initial_checkpoint_dir``, a
finetune one when it names ``checkpoint_dir``.
"""

from __future__ import annotations

from typing import Any

from trainlint.sources.base import Document, Fact, Input, Role, seed_default, top_of
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import Converter, JobField, describe
from trainlint.sources.base.typos import near_misses
from trainlint.sources.structured import KeyPath
from trainlint.sources.structured.located import Locate, fact, mapping_at, table_facts, tree_locator

name = "litgpt"
role: Role = "config"


def _checkpoint_model(value: Any) -> str | None:
    """``checkpoints/meta-llama/Meta-Llama-3.1-8B`` → ``meta-llama/Meta-Llama-3.1-8B``."""
    text = (n.to_str(value) or "").strip().rstrip("/")
    parts = [part for part in text.split("/") if part and part != "."]
    return "/".join(parts[-2:]) if parts else None


def _quantization_bits(value: Any) -> int | None:
    """``bnb.nf4``, ``bnb.nf4-dq``, ``bnb.fp4`` → 4; ``bnb.int8``/``bnb.int8-training`` → 8."""
    text = (n.to_str(value) or "").lower()
    return 4 if "4" in text else 8 if "int8" in text else None


def _lora(value: Any) -> str | None:
    return "lora" if n.positive_int(value) else None


def _always(result: Any) -> Any:
    return lambda value: result if n.positive_int(value) else None


def _reporter(value: Any) -> list[str] | None:
    text = n.to_str(value)
    return [text.strip().lower()] if text and text.strip() else None


def _on_class_path(convert: Converter) -> Converter:
    """``optimizer: AdamW`` or ``optimizer: {class_path: torch.optim.AdamW, init_args: ...}``."""
    return lambda value: convert(value.get("class_path") if isinstance(value, dict) else value)


_OPTIMIZER = [
    JobField(job_field.pointer, _on_class_path(job_field.convert))
    for job_field in n.optimizer_fields()
]

TABLE: dict[KeyPath, list[JobField]] = {
    ("checkpoint_dir",): [JobField("/model/name", _checkpoint_model)],
    ("model_name",): [JobField("/model/name", n.to_str)],
    ("model_config", "n_layer"): [JobField("/model/layers", n.positive_int)],
    ("model_config", "n_embd"): [JobField("/model/hidden", n.positive_int)],
    ("model_config", "n_head"): [JobField("/model/heads", n.positive_int)],
    ("model_config", "n_query_groups"): [JobField("/model/kv_heads", n.positive_int)],
    ("model_config", "intermediate_size"): [JobField("/model/ffn_hidden", n.positive_int)],
    ("model_config", "vocab_size"): [JobField("/model/vocab", n.positive_int)],
    ("model_config", "padded_vocab_size"): [JobField("/model/vocab", n.positive_int)],
    ("model_config", "block_size"): [JobField("/model/seq_len", n.positive_int)],
    ("devices",): [JobField("/resources/gpus_per_node", n.positive_int)],
    ("num_nodes",): [JobField("/resources/nodes", n.positive_int)],
    ("precision",): [JobField("/training/precision", n.precision)],
    ("quantize",): [JobField("/model/quantization_bits", _quantization_bits)],
    ("lora_r",): [
        JobField("/model/peft/method", _lora),
        JobField("/model/peft/rank", n.positive_int),
    ],
    ("train", "global_batch_size"): [JobField("/training/global_batch_size", n.positive_int)],
    ("train", "micro_batch_size"): [JobField("/training/micro_batch_size", n.positive_int)],
    ("train", "max_seq_length"): [JobField("/model/seq_len", n.positive_int)],
    ("train", "epochs"): [JobField("/training/epochs", n.positive_float)],
    ("train", "max_tokens"): [JobField("/training/dataset_tokens", n.positive_int)],
    ("train", "max_steps"): [JobField("/training/max_steps", n.positive_int)],
    ("train", "save_interval"): [
        JobField("/checkpoint/every_steps", n.positive_int),
        JobField("/checkpoint/strategy", _always("steps")),
    ],
    ("train", "log_interval"): [JobField("/logging/every_steps", n.positive_int)],
    ("eval", "interval"): [
        JobField("/eval/every_steps", n.positive_int),
        JobField("/eval/strategy", _always("steps")),
    ],
    ("optimizer",): _OPTIMIZER,
    ("logger_name",): [JobField("/logging/reporters", _reporter)],
    ("seed",): [JobField("/training/seed", n.to_int)],
    ("data", "init_args", "num_workers"): [JobField("/data/num_workers", n.to_int)],
}

KNOWN_KEYS = frozenset({
    "model_name", "model_config", "out_dir", "precision", "initial_checkpoint_dir", "resume",
    "data", "train", "eval", "optimizer", "devices", "num_nodes", "tokenizer_dir", "logger_name",
    "seed", "checkpoint_dir", "quantize", "lora_r", "lora_alpha", "lora_dropout", "lora_query",
    "lora_key", "lora_value", "lora_projection", "lora_mlp", "lora_head", "adapter_path",
    "access_token", "compiler", "executors", "strategy", "log", "accelerator",
})  # fmt: skip
TRAIN_KEYS = frozenset({
    "save_interval", "log_interval", "global_batch_size", "micro_batch_size", "lr_warmup_steps",
    "lr_warmup_fraction", "epochs", "max_tokens", "max_steps", "max_seq_length",
    "tie_embeddings", "max_norm", "min_lr", "learning_rate", "weight_decay", "beta1", "beta2",
})  # fmt: skip
EVAL_KEYS = frozenset({
    "interval", "max_new_tokens", "max_iters", "initial_validation", "final_validation",
    "evaluate_example",
})  # fmt: skip

_TRAIN_MARKS = {"global_batch_size", "micro_batch_size", "save_interval", "log_interval",
                "max_tokens", "lr_warmup_steps"}  # fmt: skip
_TOP_MARKS = {"model_name", "checkpoint_dir", "out_dir", "model_config", "logger_name",
              "tokenizer_dir", "initial_checkpoint_dir"}  # fmt: skip


def recognise(file: Input) -> float:
    """A ``train:`` block of litgpt's TrainArgs; surer with its top-level model/out keys."""
    if not file.is_structured:
        return 0.0
    data = file.mapping
    train = data.get("train")
    marks = len(_TRAIN_MARKS & set(train)) if isinstance(train, dict) else 0
    top = len(_TOP_MARKS & set(data))
    if marks and top:
        return 0.9
    return 0.7 if marks >= 2 else 0.0


def parse(file: Input) -> Document:
    tree = file.trees[0]
    locate = tree_locator(tree, file.path)
    doc = Document(file.path, name, recognise(file), role)
    doc.facts = table_facts(tree.data, TABLE, locate) + _grad_accum(tree.data, locate)
    doc.facts += _strategy(tree.data, locate, file.path)
    doc.unknown_keys = near_misses(tree, KNOWN_KEYS, name, file.path)
    doc.unknown_keys += near_misses(tree, TRAIN_KEYS, name, file.path, ("train",))
    doc.unknown_keys += near_misses(tree, EVAL_KEYS, name, file.path, ("eval",))
    # LitGPT's seed
    doc.defaults = [seed_default(1337, "seed", file.path)]
    return doc


def _grad_accum(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """litgpt accumulates ``global / (micro * devices * nodes)`` steps when devices is a number."""
    train = mapping_at(data, ("train",))
    total = n.positive_int(train.get("global_batch_size"))
    micro = n.positive_int(train.get("micro_batch_size"))
    devices = n.positive_int(data.get("devices"))
    nodes = n.positive_int(data.get("num_nodes", 1))
    if not (total and micro and devices and nodes) or total % (micro * devices * nodes):
        return []
    steps = total // (micro * devices * nodes)
    return fact("/training/grad_accum_steps", steps, locate(("train", "global_batch_size")))


def _command(data: dict[str, Any]) -> str | None:
    """``pretrain`` or ``finetune``, from the keys only that command's setup takes."""
    if "checkpoint_dir" in data:
        return "finetune"
    if "model_name" in data or "initial_checkpoint_dir" in data:
        return "pretrain"
    return None


def _several_devices(data: dict[str, Any], command: str) -> bool | None:
    """Whether the run spans more than one device: True for ``auto``/-1 (every GPU there is:
    sharding over one rank changes nothing), None when the count is a variable."""
    devices = data.get("devices", "auto" if command == "pretrain" else 1)
    nodes = n.positive_int(data.get("num_nodes", 1))
    if n.to_str(devices) in {"auto", "-1"}:
        return True
    count = n.positive_int(devices)
    if count is None or nodes is None:
        return None
    return count * nodes > 1


def _strategy(data: dict[str, Any], locate: Locate, path: str) -> list[Fact]:
    """The FSDP strategy (and, for finetuning, per-block recompute) litgpt uses on several
    devices; nothing on one device or an unknown count."""
    command = _command(data)
    if command is None or n.to_str(data.get("quantize")):  # litgpt refuses to quantize on several
        return []
    if not _several_devices(data, command):
        return []
    where = locate(("devices",)) if "devices" in data else top_of(path)
    sharded = Fact("/training/parallelism/zero_stage", 3, where)  # FULL_SHARD's, per shard group
    if command == "pretrain":
        return [Fact("/training/parallelism/strategy", "fsdp:hybrid_shard", where), sharded]
    return [
        Fact("/training/parallelism/strategy", "fsdp", where),
        sharded,
        Fact("/training/activation_checkpointing", True, where),
    ]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    described = describe(TABLE)
    described["train.global_batch_size"].append("/training/grad_accum_steps")
    described["devices"] += [
        "/training/parallelism/strategy",
        "/training/parallelism/zero_stage",
        "/training/activation_checkpointing",
    ]
    return described


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("config_hub/pretrain/tinyllama.yaml", "config_hub/finetune/llama-3.1-8b/lora.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
