"""nanotron training YAML (``torchrun --nproc_per_node 8 run_train.py --config-file
config_tiny_llama.yaml``): the sections of nanotron's ``Config`` dataclass (general,
parallelism, model, tokens, checkpoints, logging, optimizer, data_stages...).

What the keys mean, read from nanotron's ``src/nanotron/config/config.py``,
``parallelism_config.py`` and ``trainer.py``:

- ``parallelism.dp x tp x pp`` must equal the world size (``ParallelContext`` refuses
  another); ``tp`` and ``pp`` are the tensor and pipeline sizes, ``expert_parallel_size`` the
  expert size.
- ``tokens.micro_batch_size`` is per data-parallel replica, ``batch_accumulation_per_replica``
  the accumulation; the global batch (``micro x accumulation x dp``) is left to derivation
  from the GPUs launched, whose count ``dp`` must match: ``dp`` itself is not read, so a
  launch of another size shows as such rather than being hidden by the config.
  ``sequence_length`` is the tokens of a sample, ``train_steps`` the run.
- ``checkpoints.checkpoint_interval`` saves every n steps (every checkpoint is kept);
  ``logging.iteration_step_info_interval`` logs every n steps (1 when unset).
- ``model.dtype`` (bfloat16 when unset) is the training precision; ``model.model_config``
  holds the architecture in Hugging Face names (``hidden_size``, ``num_hidden_layers``...).
- ``tokens.val_check_interval`` is not read: nanotron's trainer runs no validation loop.
- ``optimizer.zero_stage`` (0 or 1) shards optimizer state over the data-parallel ranks.
- nanotron builds its Config with dacite, which refuses a key a dataclass lacks: a near-miss
  of a known section is a typo (TL903).

Defaults (``Document.defaults``): ``general.seed`` 42 (``DEFAULT_SEED``) and a step log every
iteration (``LoggingArgs.iteration_step_info_interval`` 1).
"""

from __future__ import annotations

from typing import Any

from trainlint.sources.base import Document, DocumentDefault, Fact, Input, Role, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe
from trainlint.sources.structured import KeyPath, Tree, flat
from trainlint.sources.structured.located import Locate, fact, mapping_at, table_facts, tree_locator

name = "nanotron"
role: Role = "config"


def _stage(value: Any) -> int | None:
    stage = n.to_int(value)
    return stage if stage in (0, 1, 2, 3) else None


def _dtype(value: Any) -> str | None:
    """``bfloat16`` → bf16 (with ``accumulate_grad_in_fp32``, fp32 gradients as in AMP)."""
    return n.precision(value)


TABLE: dict[KeyPath, list[JobField]] = {
    ("general", "run"): [JobField("/name", n.to_str)],
    ("general", "seed"): [JobField("/training/seed", n.to_int)],
    ("parallelism", "tp"): [JobField("/training/parallelism/tensor", n.positive_int)],
    ("parallelism", "pp"): [JobField("/training/parallelism/pipeline", n.positive_int)],
    ("parallelism", "expert_parallel_size"): [
        JobField("/training/parallelism/expert", n.positive_int)
    ],
    ("tokens", "micro_batch_size"): [JobField("/training/micro_batch_size", n.positive_int)],
    ("tokens", "batch_accumulation_per_replica"): [
        JobField("/training/grad_accum_steps", n.positive_int)
    ],
    ("tokens", "sequence_length"): [JobField("/model/seq_len", n.positive_int)],
    ("tokens", "train_steps"): [JobField("/training/max_steps", n.positive_int)],
    ("checkpoints", "checkpoint_interval"): [JobField("/checkpoint/every_steps", n.positive_int)],
    ("logging", "iteration_step_info_interval"): [JobField("/logging/every_steps", n.positive_int)],
    ("model", "dtype"): [JobField("/training/precision", _dtype)],
    ("model", "model_config", "hidden_size"): [JobField("/model/hidden", n.positive_int)],
    ("model", "model_config", "d_model"): [JobField("/model/hidden", n.positive_int)],  # Mamba
    ("model", "model_config", "num_hidden_layers"): [JobField("/model/layers", n.positive_int)],
    ("model", "model_config", "num_attention_heads"): [JobField("/model/heads", n.positive_int)],
    ("model", "model_config", "num_key_value_heads"): [JobField("/model/kv_heads", n.positive_int)],
    ("model", "model_config", "intermediate_size"): [JobField("/model/ffn_hidden", n.positive_int)],
    ("model", "model_config", "vocab_size"): [JobField("/model/vocab", n.positive_int)],
    ("optimizer", "zero_stage"): [JobField("/training/parallelism/zero_stage", _stage)],
    ("optimizer", "optimizer_factory", "name"): n.optimizer_fields(),
}

# nanotron's Config sections (src/nanotron/config/config.py; metrics_logging and
# experiment_logger in later releases).
KNOWN_KEYS = flat.words(
    """
general parallelism model tokenizer checkpoints logging tokens optimizer data_stages profiler
lighteval s3_upload metrics_logging experiment_logger
"""
)


def recognise(file: Input) -> float:
    """A ``parallelism`` block with ``dp``/``tp``/``pp`` beside a ``tokens`` or ``general``
    section."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    data = file.mapping
    parallel = data.get("parallelism")
    sizes = isinstance(parallel, dict) and {"dp", "tp", "pp"} <= set(parallel)
    return 0.95 if sizes and {"tokens", "general"} & set(data) else 0.0


def parse(file: Input) -> Document:
    tree = flat.plain(file.trees[0] if file.trees else Tree({}))
    data = tree.data if isinstance(tree.data, dict) else {}
    locate = tree_locator(tree, file.path)
    doc = Document(file.path, name, recognise(file), role)
    doc.facts = table_facts(data, TABLE, locate) + _derived(data, locate)
    doc.unknown_keys = typos.near_misses(tree, KNOWN_KEYS, name, file.path)
    doc.defaults = _defaults(locate)
    return doc


def _derived(data: dict[str, Any], locate: Locate) -> list[Fact]:
    return [*_workers(data, locate), *_checkpoint(data, locate)]


def _workers(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """The first data stage's ``num_loading_workers`` (the stage training starts with). A
    stage with ``dataset: null`` trains on nanotron's dummy generator, made on the GPU: its
    loader has no worker to starve, so the count says nothing."""
    stages = data.get("data_stages")
    if not isinstance(stages, list) or not stages or not isinstance(stages[0], dict):
        return []
    loader = stages[0].get("data")
    if not isinstance(loader, dict) or "num_loading_workers" not in loader:
        return []
    if loader.get("dataset", "") is None:
        return []
    where = locate(("data_stages", 0, "data", "num_loading_workers"))
    return fact("/data/num_workers", n.to_int(loader["num_loading_workers"]), where)


def _checkpoint(data: dict[str, Any], locate: Locate) -> list[Fact]:
    every = n.positive_int(mapping_at(data, ("checkpoints",)).get("checkpoint_interval"))
    return fact(
        "/checkpoint/strategy",
        "steps" if every else None,
        locate(("checkpoints", "checkpoint_interval")),
    )


def _defaults(locate: Locate) -> list[DocumentDefault]:
    """nanotron's DEFAULT_SEED and its step log every iteration."""
    return [
        DocumentDefault("/training/seed", 42, "general.seed", locate(("general",))),
        DocumentDefault("/logging/every_steps", 1, "logging.iteration_step_info_interval",
                        locate(("logging",))),
    ]  # fmt: skip


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "data_stages[0].data.num_loading_workers": ["/data/num_workers"],
        "checkpoints.checkpoint_interval": ["/checkpoint/strategy"],
    }


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("examples/config_tiny_llama.yaml", "examples/mamba/config_mamba.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
