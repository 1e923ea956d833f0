"""PyTorch Lightning configs: LightningCLI YAML (``trainer:``, ``model:``/``data:`` class_path).

``read`` is shared with the Hydra format, whose merged view holds the same ``trainer:`` block
(with ``_target_`` objects instead of ``class_path``), so a Trainer key means one thing in both.
``max_time`` maps to ``/resources/time_limit_s``: Lightning stops the run cleanly when it is
reached, so it bounds the GPU time (though, unlike a scheduler limit, not a hung process).

Default (``Document.defaults``): LightningCLI's ``seed_everything: true`` draws a random
seed each run when no seed is set; located at the top of the file.
"""

from __future__ import annotations

import re
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import Document, Fact, Input, Role, seed_default
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import Converter, JobField, describe, lookup
from trainlint.sources.base.typos import near_misses
from trainlint.sources.structured import KeyPath
from trainlint.sources.structured.located import (
    Locate,
    class_name,
    fact,
    is_unknown,
    mapping_at,
    table_facts,
    tree_locator,
)

name = "lightning"
role: Role = "config"

_REPORTERS = {
    "wandblogger": "wandb", "tensorboardlogger": "tensorboard", "csvlogger": "csv",
    "mlflowlogger": "mlflow", "cometlogger": "comet", "neptunelogger": "neptune",
}  # fmt: skip


def reporters(value: Any) -> list[str] | None:
    """Logger objects (one, a list, or Hydra's ``{name: {_target_: ...}}``) → reporter names;
    ``logger: false`` is none."""
    if value is False:
        return []
    items = value if isinstance(value, list) else [value]
    if isinstance(value, dict) and not class_name(value):
        items = list(value.values())
    names = [_REPORTERS.get(class_name(i).lower(), class_name(i).lower()) for i in items]
    found = [name_.removesuffix("logger") for name_ in names if name_]
    return found or None


def _profiler(value: Any) -> bool | None:
    """``"simple"``, ``"pytorch"`` or a profiler object profile every step; null is off."""
    if value is None or value is False:
        return False
    return True if value is True or isinstance(value, (str, dict)) else None


def _int_only(value: Any) -> int | None:
    """``val_check_interval: 100`` is batches; a float is a fraction of an epoch (not steps)."""
    return n.positive_int(value) if isinstance(value, int) else None


def _when(result: str, convert: Any) -> Any:
    return lambda value: result if convert(value) else None


def _negated(value: Any) -> bool | None:
    flag = n.to_bool(value)
    return None if flag is None else not flag


def _no_when_false(value: Any) -> str | None:
    return "no" if n.to_bool(value) is False else None


TRAINER: dict[KeyPath, list[JobField]] = {
    ("num_nodes",): [JobField("/resources/nodes", n.positive_int)],
    ("precision",): [JobField("/training/precision", n.precision)],
    ("max_steps",): [JobField("/training/max_steps", n.positive_int)],
    ("max_epochs",): [JobField("/training/epochs", n.positive_float)],
    ("max_time",): [JobField("/resources/time_limit_s", n.duration_seconds)],
    ("log_every_n_steps",): [JobField("/logging/every_steps", n.positive_int)],
    ("accumulate_grad_batches",): [JobField("/training/grad_accum_steps", n.positive_int)],
    ("check_val_every_n_epoch",): [JobField("/eval/strategy", _when("epoch", n.positive_int))],
    ("val_check_interval",): [
        JobField("/eval/every_steps", _int_only),
        JobField("/eval/strategy", _when("steps", _int_only)),
    ],
    ("profiler",): [JobField("/logging/profiler/enabled", _profiler)],
    ("detect_anomaly",): [JobField("/logging/anomaly_detection", n.to_bool)],
    ("enable_checkpointing",): [JobField("/checkpoint/strategy", _no_when_false)],
    ("logger",): [JobField("/logging/reporters", reporters)],
}


def _on_class(convert: Converter) -> Converter:
    """LightningCLI's ``optimizer: AdamW`` or ``optimizer: {class_path: torch.optim.AdamW}``."""
    return lambda value: convert(class_name(value) or value)


# Top-level blocks: LightningCLI puts kwargs under init_args, Hydra next to _target_.
_DATA: dict[str, list[JobField]] = {
    "batch_size": [JobField("/training/micro_batch_size", n.positive_int)],
    "num_workers": [JobField("/data/num_workers", n.to_int)],
    "pin_memory": [JobField("/data/pin_memory", n.to_bool)],
    "persistent_workers": [JobField("/data/persistent_workers", n.to_bool)],
}
TOP: dict[KeyPath, list[JobField]] = {
    **{("data", key): fields for key, fields in _DATA.items()},
    **{("data", "init_args", key): fields for key, fields in _DATA.items()},
    ("model", "compile"): [JobField("/training/compile", n.to_bool)],
    ("model", "init_args", "compile"): [JobField("/training/compile", n.to_bool)],
    ("model", "optimizer", "_target_"): n.optimizer_fields(),
    ("optimizer",): [
        JobField(job_field.pointer, _on_class(job_field.convert))
        for job_field in n.optimizer_fields()
    ],
    ("seed",): [JobField("/training/seed", n.to_int)],
    ("seed_everything",): [JobField("/training/seed", n.to_int)],
    ("logger",): [JobField("/logging/reporters", reporters)],
}

TRAINER_KEYS = frozenset({
    "_target_", "defaults", "accelerator", "strategy", "devices", "num_nodes", "precision",
    "logger", "callbacks", "fast_dev_run", "max_epochs", "min_epochs", "max_steps", "min_steps",
    "max_time", "limit_train_batches", "limit_val_batches", "limit_test_batches",
    "limit_predict_batches", "overfit_batches", "val_check_interval", "check_val_every_n_epoch",
    "num_sanity_val_steps", "log_every_n_steps", "enable_checkpointing", "enable_progress_bar",
    "enable_model_summary", "accumulate_grad_batches", "gradient_clip_val",
    "gradient_clip_algorithm", "deterministic", "benchmark", "inference_mode",
    "use_distributed_sampler", "profiler", "detect_anomaly", "barebones", "plugins",
    "sync_batchnorm", "reload_dataloaders_every_n_epochs", "default_root_dir", "model_registry",
    # Lightning 1.x names still found in NeMo-era configs
    "gpus", "tpu_cores", "ipus", "auto_select_gpus", "replace_sampler_ddp", "amp_backend",
    "amp_level", "track_grad_norm", "resume_from_checkpoint", "weights_save_path",
    "flush_logs_every_n_steps", "progress_bar_refresh_rate", "terminate_on_nan",
    "auto_lr_find", "auto_scale_batch_size", "move_metrics_to_cpu", "multiple_trainloader_mode",
    "stochastic_weight_avg", "prepare_data_per_node", "checkpoint_callback", "weights_summary",
})  # fmt: skip


def read(data: Any, locate: Locate, lightning: bool | None = None) -> list[Fact]:
    """Facts of a Lightning config held as plain data (a file or a Hydra merge); a
    ``trainer:`` block is read as Lightning's when ``lightning`` says so, by default when it
    looks like one (``trainer_block``)."""
    if not isinstance(data, dict):
        return []
    lightning = trainer_block(data) if lightning is None else lightning
    trainer = mapping_at(data, ("trainer",)) if lightning else {}
    within = _prefixed(locate, ("trainer",))
    facts = table_facts(data, TOP, locate) + table_facts(trainer, TRAINER, within)
    facts += _devices(trainer, within) + _strategy(trainer, within)
    for path, callback in _checkpoint_callbacks(data):
        facts += model_checkpoint(callback, _prefixed(locate, path))
    return facts


def override_facts(key: str, value: Any, where: Location) -> list[Fact]:
    """LightningCLI ``--trainer.devices 2`` (or Hydra ``trainer.devices=2``): the dotted key
    read as the config it overrides, so devices, strategy and callbacks mean the same."""
    data: Any = value
    for part in reversed(key.split(".")):
        data = {part: data}
    return read(data, lambda path: where, lightning=True)


def _prefixed(locate: Locate, prefix: KeyPath) -> Locate:
    return lambda path: locate((*prefix, *path))


_NOT_GPU = {"cpu", "tpu", "mps", "hpu", "ipu", "xla"}


def _devices(trainer: dict[str, Any], locate: Locate) -> list[Fact]:
    """GPUs per node from ``devices`` (a count, a list or ``"0,1"``) unless on another chip."""
    accelerator = str(trainer.get("accelerator") or "auto").strip().lower()
    raw = trainer.get("devices")
    if accelerator in _NOT_GPU or raw is None or is_unknown(raw):
        return []
    if isinstance(raw, list):
        count: int | None = len(raw)
    elif isinstance(raw, str) and "," in raw:
        count = len([part for part in raw.split(",") if part.strip()])
    else:
        count = n.positive_int(raw)
    return fact("/resources/gpus_per_node", count or None, locate(("devices",)))


def _strategy(trainer: dict[str, Any], locate: Locate) -> list[Fact]:
    """``ddp``/``fsdp``/``deepspeed_stage_3_offload`` or a Strategy object → strategy, stage."""
    raw = trainer.get("strategy")
    if raw is None or is_unknown(raw):
        return []
    args = raw.get("init_args", raw) if isinstance(raw, dict) else {}
    text = (class_name(raw) if isinstance(raw, dict) else str(raw)).lower()
    kind = next((k for k in ("deepspeed", "fsdp", "ddp") if k in text), None)
    where = locate(("strategy",))
    stage = re.search(r"stage_(\d)", text)
    zero = n.to_int(stage.group(1)) if stage else n.to_int(args.get("stage"))
    offload = "offload" in text or n.to_bool(args.get("offload_optimizer")) is True
    facts = fact("/training/parallelism/strategy", kind, where)
    if kind == "deepspeed":
        facts += fact("/training/parallelism/zero_stage", zero, where)
        facts += fact("/training/parallelism/offload_optimizer", offload or None, where)
    return facts


def _checkpoint_callbacks(data: dict[str, Any]) -> list[tuple[KeyPath, dict[str, Any]]]:
    """ModelCheckpoint objects in ``trainer.callbacks`` (a list) or Hydra's ``callbacks``
    (one object, or a mapping of named ones), with the path of their keyword arguments."""
    found: list[tuple[KeyPath, dict[str, Any]]] = []
    for base in (("trainer", "callbacks"), ("callbacks",)):
        _, block = lookup(data, base)
        candidates: list[tuple[KeyPath, Any]] = []
        if isinstance(block, list):
            candidates = [((*base, index), item) for index, item in enumerate(block)]
        elif isinstance(block, dict):
            named = [((*base, str(key)), item) for key, item in block.items()]
            candidates = [(base, block)] if class_name(block) else named
        for path, item in candidates:
            if not isinstance(item, dict) or class_name(item) != "ModelCheckpoint":
                continue
            args = item.get("init_args")
            found.append(((*path, "init_args"), args) if isinstance(args, dict) else (path, item))
    return found


CHECKPOINT: dict[KeyPath, list[JobField]] = {
    ("every_n_train_steps",): [
        JobField("/checkpoint/every_steps", n.positive_int),
        JobField("/checkpoint/strategy", _when("steps", n.positive_int)),
    ],
    ("every_n_epochs",): [
        JobField("/checkpoint/every_epochs", n.positive_float),
        JobField("/checkpoint/strategy", _when("epoch", n.positive_float)),
    ],
    ("train_time_interval",): [JobField("/checkpoint/every_seconds", n.duration_seconds)],
    ("save_top_k",): [JobField("/checkpoint/keep_last", n.positive_int)],  # -1 keeps all
    ("save_weights_only",): [JobField("/checkpoint/save_optimizer", _negated)],
}


def model_checkpoint(args: dict[str, Any], locate: Locate) -> list[Fact]:
    """A ModelCheckpoint, with Lightning's defaults: no interval saves after every epoch,
    ``save_top_k`` absent keeps 1, 0 saves nothing, -1 keeps every checkpoint."""
    facts = table_facts(args, CHECKPOINT, locate)
    intervals = ("every_n_train_steps", "every_n_epochs", "train_time_interval")
    if all(args.get(key) is None for key in intervals):
        facts += fact("/checkpoint/every_epochs", 1.0, locate(()))
        facts += fact("/checkpoint/strategy", "epoch", locate(()))
    if "save_top_k" not in args:
        facts += fact("/checkpoint/keep_last", 1, locate(()))
    elif n.to_int(args["save_top_k"]) == 0:
        facts += fact("/checkpoint/strategy", "no", locate(("save_top_k",)))
    return facts


def trainer_block(data: Any) -> bool:
    """A top-level ``trainer:`` block that is Lightning's: Lightning-like on its own
    (``lightning_trainer``), or beside LightningCLI's ``seed_everything``."""
    trainer = data.get("trainer") if isinstance(data, dict) else None
    cli = isinstance(trainer, dict) and "seed_everything" in data
    return cli or lightning_trainer(trainer)


def lightning_trainer(trainer: Any) -> bool:
    """A ``trainer`` mapping of Lightning Trainer kwargs: its ``_target_``/``class_path`` names
    Lightning, or it holds two of the Trainer's keywords. Other programs have ``trainer:``
    blocks too (verl's ``device``, ``nnodes``), and one shared word proves nothing."""
    if not isinstance(trainer, dict):
        return False
    target = str(trainer.get("_target_") or trainer.get("class_path") or "")
    if "lightning" in target.lower():
        return True
    return len(TRAINER_KEYS & set(trainer) - {"_target_", "class_path"}) >= 2


def recognise(file: Input) -> float:
    """A ``trainer:`` block of Trainer kwargs; LightningCLI's class_path objects make it sure.
    NeMo configs (``exp_manager``) hold the same block and belong to their own format."""
    if not file.is_structured or not trainer_block(file.mapping):
        return 0.0
    data = file.mapping
    if "exp_manager" in data:
        return 0.3
    cli = "seed_everything" in data or "class_path" in file.text
    return 0.8 if cli else 0.6


def parse(file: Input) -> Document:
    tree = file.trees[0]
    doc = Document(file.path, name, recognise(file), role)
    doc.facts = read(tree.data, tree_locator(tree, file.path))
    doc.unknown_keys = near_misses(tree, TRAINER_KEYS, name, file.path, ("trainer",))
    # LightningCLI's seed_everything: true draws a random seed each run
    doc.defaults = [seed_default(None, "seed_everything", file.path)]
    return doc


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    described = describe(TOP) | {f"trainer.{k}": v for k, v in describe(TRAINER).items()}
    described["trainer.devices"] = ["/resources/gpus_per_node"]
    described["trainer.strategy"] = ["/training/parallelism/strategy",
                                     "/training/parallelism/zero_stage",
                                     "/training/parallelism/offload_optimizer"]  # fmt: skip
    for key, pointers in describe(CHECKPOINT).items():
        described[f"ModelCheckpoint.{key}"] = pointers
    return described


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("config.yaml", "fit.yaml", "trainer.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    overrides=override_facts,
)
