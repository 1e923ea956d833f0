"""DINOv2 self-supervised training configs (``dinov2/configs/train/vitl16_short.yaml``), each
merged over the package's ``dinov2/configs/ssl_default_config.yaml``, and the command lines
of ``dinov2/run/train/train.py`` (submitit: ``--nodes 4 --config-file F train.key=value``)
and ``dinov2/train/train.py`` (under ``torchrun``).

What the keys mean, read from dinov2's code (commit b8931f7: ``dinov2/utils/config.py``,
``dinov2/train/train.py``, ``dinov2/run/submit.py``):

- A train config names no base: ``get_cfg_from_args`` merges it over the default config, then
  the command line's ``key=value`` words (``OmegaConf.from_cli``). The default config is
  therefore a member of every train job, found beside the train configs' folder. The merge
  is not in struct mode, so a key the default config lacks is silently ignored: a near-miss
  of one of its keys is a typo (TL903).
- ``train.batch_size_per_gpu`` is each GPU's batch; every iteration steps the optimizer (no
  accumulation). ``train.num_workers`` feeds the data loader.
- ``optim.epochs`` x ``train.OFFICIAL_EPOCH_LENGTH`` is the number of iterations
  (``max_iter``); an "epoch" is ``OFFICIAL_EPOCH_LENGTH`` iterations, not a pass over the data.
- Checkpoints: ``PeriodicCheckpointer(period=3 * OFFICIAL_EPOCH_LENGTH, max_to_keep=3)`` is
  written in the code, so every job saves every 3 epochs and keeps 3; ``train.saveckp_freq``
  is read nowhere.
- ``evaluation.eval_period_iterations`` saves the teacher for evaluation every that many
  iterations; 0 never.
- ``compute_precision.student.backbone.mixed_precision.param_dtype`` (``fp16``, ``bf16``,
  ``fp32``) is the FSDP compute dtype of the network that trains.
- ``student.arch`` and ``student.patch_size`` name the model as the DINOv2 paper does
  (``vit_large`` with patch 14 is ViT-L/14); ``crops.global_crops_size`` is the image side.
- The seed is always 0 (+ the rank): ``default_setup`` reads ``args.seed``, which no flag
  sets; ``train.seed`` is read nowhere. Logging is every 10 iterations (``log_every``).
- ``run/train/train.py``: ``--nodes``/``--nnodes`` (default 1), ``--ngpus``/``--gpus``/
  ``--gpus-per-node`` (default 8), ``--timeout`` (minutes, default 2800), ``--partition`` of
  the SLURM job submitit submits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainlint.discover import checked_roots
from trainlint.errors import SourceError
from trainlint.job import Location, UnknownKey
from trainlint.sources.base import (
    Document,
    DocumentDefault,
    Fact,
    Input,
    Reference,
    Role,
    consulted,
    top_of,
)
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format, leading_options
from trainlint.sources.base.table import JobField, describe, facts_for, lookup, stated
from trainlint.sources.base.typos import children, dotted_near_misses
from trainlint.sources.structured import KeyPath, Tree, flat
from trainlint.sources.structured.hydra_defaults import load
from trainlint.sources.structured.omegaconf import Layer, layer, merge

name = "dinov2"
role: Role = "config"

DEFAULT_CONFIG = "ssl_default_config.yaml"
CHECKPOINT_EPOCHS = 3  # dinov2/train/train.py: PeriodicCheckpointer(period=3 * ...)
CHECKPOINTS_KEPT = 3  # ... max_to_keep=3
LOG_EVERY = 10  # metric_logger.log_every(data_loader, 10, ...)
SEED = 0  # dinov2/utils/config.py: getattr(args, "seed", 0), no --seed flag

_PRECISIONS = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32"}
_PRECISION_KEY = ("compute_precision", "student", "backbone", "mixed_precision", "param_dtype")
# dinov2/models/vision_transformer.py's constructors, named as the DINOv2 paper names them.
_ARCHS = {"vit_small": "ViT-S", "vit_base": "ViT-B", "vit_large": "ViT-L", "vit_giant2": "ViT-g"}


def _eval_strategy(value: Any) -> str | None:
    number = n.to_int(value)
    return None if number is None else "steps" if number > 0 else "no"


def _no_accumulation(value: Any) -> int | None:
    return 1 if n.positive_int(value) else None


TABLE: dict[KeyPath, list[JobField]] = {
    ("train", "batch_size_per_gpu"): [
        JobField("/training/micro_batch_size", n.positive_int),
        JobField("/training/grad_accum_steps", _no_accumulation),
    ],
    ("train", "num_workers"): [JobField("/data/num_workers", n.to_int)],
    ("evaluation", "eval_period_iterations"): [
        JobField("/eval/every_steps", n.positive_int),
        JobField("/eval/strategy", _eval_strategy),
    ],
    _PRECISION_KEY: [JobField("/training/precision", lambda v: _PRECISIONS.get(str(v)))],
    ("crops", "global_crops_size"): [JobField("/data/image_size", n.positive_int)],
}
_EPOCHS = ("optim", "epochs")
_EPOCH_LENGTH = ("train", "OFFICIAL_EPOCH_LENGTH")
_ARCH, _PATCH = ("student", "arch"), ("student", "patch_size")

# Every key of ssl_default_config.yaml (commit b8931f7), with the parents they imply.
KNOWN_KEYS = flat.words(
    """
MODEL MODEL.WEIGHTS compute_precision compute_precision.grad_scaler compute_precision.teacher
compute_precision.teacher.backbone compute_precision.teacher.backbone.sharding_strategy
compute_precision.teacher.backbone.mixed_precision
compute_precision.teacher.backbone.mixed_precision.param_dtype
compute_precision.teacher.backbone.mixed_precision.reduce_dtype
compute_precision.teacher.backbone.mixed_precision.buffer_dtype
compute_precision.teacher.dino_head compute_precision.teacher.dino_head.sharding_strategy
compute_precision.teacher.dino_head.mixed_precision
compute_precision.teacher.dino_head.mixed_precision.param_dtype
compute_precision.teacher.dino_head.mixed_precision.reduce_dtype
compute_precision.teacher.dino_head.mixed_precision.buffer_dtype
compute_precision.teacher.ibot_head compute_precision.teacher.ibot_head.sharding_strategy
compute_precision.teacher.ibot_head.mixed_precision
compute_precision.teacher.ibot_head.mixed_precision.param_dtype
compute_precision.teacher.ibot_head.mixed_precision.reduce_dtype
compute_precision.teacher.ibot_head.mixed_precision.buffer_dtype compute_precision.student
compute_precision.student.backbone compute_precision.student.backbone.sharding_strategy
compute_precision.student.backbone.mixed_precision
compute_precision.student.backbone.mixed_precision.param_dtype
compute_precision.student.backbone.mixed_precision.reduce_dtype
compute_precision.student.backbone.mixed_precision.buffer_dtype
compute_precision.student.dino_head compute_precision.student.dino_head.sharding_strategy
compute_precision.student.dino_head.mixed_precision
compute_precision.student.dino_head.mixed_precision.param_dtype
compute_precision.student.dino_head.mixed_precision.reduce_dtype
compute_precision.student.dino_head.mixed_precision.buffer_dtype
compute_precision.student.ibot_head compute_precision.student.ibot_head.sharding_strategy
compute_precision.student.ibot_head.mixed_precision
compute_precision.student.ibot_head.mixed_precision.param_dtype
compute_precision.student.ibot_head.mixed_precision.reduce_dtype
compute_precision.student.ibot_head.mixed_precision.buffer_dtype dino dino.loss_weight
dino.head_n_prototypes dino.head_bottleneck_dim dino.head_nlayers dino.head_hidden_dim
dino.koleo_loss_weight ibot ibot.loss_weight ibot.mask_sample_probability
ibot.mask_ratio_min_max ibot.separate_head ibot.head_n_prototypes ibot.head_bottleneck_dim
ibot.head_nlayers ibot.head_hidden_dim train train.batch_size_per_gpu train.dataset_path
train.output_dir train.saveckp_freq train.seed train.num_workers train.OFFICIAL_EPOCH_LENGTH
train.cache_dataset train.centering student student.arch student.patch_size
student.drop_path_rate student.layerscale student.drop_path_uniform student.pretrained_weights
student.ffn_layer student.block_chunks student.qkv_bias student.proj_bias student.ffn_bias
student.num_register_tokens student.interpolate_antialias student.interpolate_offset teacher
teacher.momentum_teacher teacher.final_momentum_teacher teacher.warmup_teacher_temp
teacher.teacher_temp teacher.warmup_teacher_temp_epochs optim optim.epochs optim.weight_decay
optim.weight_decay_end optim.base_lr optim.lr optim.warmup_epochs optim.min_lr optim.clip_grad
optim.freeze_last_layer_epochs optim.scaling_rule optim.patch_embed_lr_mult
optim.layerwise_decay optim.adamw_beta1 optim.adamw_beta2 crops crops.global_crops_scale
crops.local_crops_number crops.local_crops_scale crops.global_crops_size crops.local_crops_size
evaluation evaluation.eval_period_iterations
"""
)


_TOP_KEYS = children(KNOWN_KEYS, ())
# Sections only DINOv2's config has; a train config states one of them or train's own keys.
_MARKS = frozenset({"compute_precision", "ibot", "dino", "crops"})
_TRAIN_MARKS = frozenset({"batch_size_per_gpu", "OFFICIAL_EPOCH_LENGTH", "saveckp_freq"})


# --- recognition ---------------------------------------------------------------------------


def default_config(path: Path) -> Path | None:
    """The default config a train config at ``path`` is merged over: ``ssl_default_config.yaml``
    in this folder's parent (``configs/train/x.yaml``) or this folder; None when absent."""
    for folder in (path.parent.parent, path.parent):
        candidate = folder / DEFAULT_CONFIG
        try:
            if consulted.is_file(candidate) and candidate.resolve() != path.resolve():
                return candidate
        except (OSError, ValueError):
            continue
    return None


def recognise(file: Input) -> float:
    """0.95 for a config of only the default config's sections with a ``train`` or ``optim``
    section (an evaluation's model descriptor states neither) and either a DINOv2 mark (one
    of its own sections, ``train.batch_size_per_gpu``) or the default config beside it."""
    if file.suffix not in ("yaml", "yml"):
        return 0.0
    data = file.mapping
    keys = {str(key) for key in data}
    if not keys or not keys <= _TOP_KEYS or not keys & {"train", "optim"}:
        return 0.0
    train = data.get("train")
    train_keys = {str(key) for key in train} if isinstance(train, dict) else set()
    if keys & _MARKS or train_keys & _TRAIN_MARKS:
        return 0.95
    return 0.95 if default_config(Path(file.path)) is not None else 0.0


# --- the config ----------------------------------------------------------------------------


def parse(file: Input) -> Document:
    doc = Document(file.path, name, recognise(file), role)
    tree = file.trees[0] if file.trees else Tree({})
    if not isinstance(tree.data, dict):
        raise SourceError("a DINOv2 config is a mapping of keys", *tree.span(()))
    path = Path(file.path)
    own = layer(tree, file.path, ())
    base = None if path.name == DEFAULT_CONFIG else default_config(path)
    merged = merge(_base_layer(base, path), own) if base is not None else own
    doc.facts = config_facts(merged)
    doc.unknown_keys = _typos(tree, file.path)
    doc.defaults = _defaults(top_of(file.path))
    if base is not None:
        target = DEFAULT_CONFIG if base.parent == path.parent else f"../{DEFAULT_CONFIG}"
        doc.references = [Reference(target, top_of(file.path), "member")]
    return doc


def _base_layer(base: Path, path: Path) -> Layer:
    loaded = load(base, checked_roots([path.absolute()]))
    if loaded is None:
        return Layer()
    return layer(loaded[0], base.as_posix(), ())


def _get(data: Any, path: KeyPath) -> Any:
    return lookup(data, path)[1]


def config_facts(merged: Layer) -> list[Fact]:
    """The facts of a config merged over the default one."""
    facts: list[Fact] = []
    for path, fields in TABLE.items():
        value = _get(merged.data, path)
        if path in merged.where and value is not None:
            facts += facts_for(fields, value, merged.where[path])
    return facts + _iterations(merged) + _model(merged)


def _iterations(merged: Layer) -> list[Fact]:
    """``max_iter`` = epochs x epoch length, and the checkpoint the code saves every 3 epochs
    (located at the epoch length, the key that sets its period)."""
    length = n.positive_int(_get(merged.data, _EPOCH_LENGTH))
    if length is None or _EPOCH_LENGTH not in merged.where:
        return []
    at_length = merged.where[_EPOCH_LENGTH]
    facts = [
        Fact("/checkpoint/strategy", "steps", at_length),
        Fact("/checkpoint/every_steps", CHECKPOINT_EPOCHS * length, at_length),
        Fact("/checkpoint/keep_last", CHECKPOINTS_KEPT, at_length),
    ]
    epochs = n.positive_int(_get(merged.data, _EPOCHS))
    if epochs is not None and _EPOCHS in merged.where:
        facts.append(Fact("/training/max_steps", epochs * length, merged.where[_EPOCHS]))
    return facts


def model_name(arch: Any, patch: Any) -> str | None:
    """``ViT-L/14`` for ``vit_large`` with patch 14; None for an architecture dinov2 lacks."""
    family = _ARCHS.get(str(arch))
    size = n.positive_int(patch)
    return None if family is None or size is None else f"{family}/{size}"


def _model(merged: Layer) -> list[Fact]:
    named = model_name(_get(merged.data, _ARCH), _get(merged.data, _PATCH))
    if named is None or _ARCH not in merged.where:
        return []
    return [Fact("/model/name", named, merged.where[_ARCH])]


def _typos(tree: Tree, file: str) -> list[UnknownKey]:
    """Near-misses of the default config's keys, in each of its sections."""
    return dotted_near_misses(tree, KNOWN_KEYS, name, file)


def _defaults(where: Location) -> list[DocumentDefault]:
    """What the code fixes: seed 0 (+ the rank) and logging every 10 iterations."""
    return [
        DocumentDefault("/training/seed", SEED, "seed (fixed in dinov2/utils/config.py)", where),
        DocumentDefault("/logging/every_steps", LOG_EVERY, "log_every (fixed in train.py)", where),
    ]


# --- the command lines ---------------------------------------------------------------------


def _minutes(value: Any) -> float | None:
    minutes = n.positive_int(value)
    return None if minutes is None else float(minutes * 60)


_LAUNCH: dict[str, list[JobField]] = {
    "--nodes": [JobField("/resources/nodes", n.positive_int)],
    "--ngpus": [JobField("/resources/gpus_per_node", n.positive_int)],
    "--timeout": [JobField("/resources/time_limit_s", _minutes)],
    "--partition": [JobField("/resources/placement/partition", n.to_str)],
}
_SUBMITIT_POINTERS = frozenset(f.pointer for fields in _LAUNCH.values() for f in fields)
_ALIASES = {"--nnodes": "--nodes", "--gpus": "--ngpus", "--gpus-per-node": "--ngpus"}
_VALUED = frozenset({*_LAUNCH, *_ALIASES, "--config-file", "--output-dir", "--output_dir",
                     "--eval", "--comment", "--exclude"})  # fmt: skip
ENTRYPOINTS = re.compile(
    r"(?:^|/)dinov2/(?:run/)?train/train\.py$|^dinov2\.(?:run\.)?train\.train$"
)
# Overrides that change what a config fact was computed from: unknown from the line alone.
_RECOMPUTED: dict[str, tuple[str, ...]] = {
    "optim.epochs": ("/training/max_steps",),
    "train.OFFICIAL_EPOCH_LENGTH": ("/training/max_steps", "/checkpoint/every_steps"),
    "student.arch": ("/model/name",),
    "student.patch_size": ("/model/name",),
}


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """One submitit flag (what ``cli_defaults`` is given; the line is read by ``arguments``)."""
    fields = _LAUNCH.get(_ALIASES.get(flag, flag))
    return [] if fields is None or value is True else stated(fields, value, location)


def arguments(words: Sequence[tuple[str | None, Location]]) -> list[Fact]:
    """``--nodes 4 --config-file F --output-dir D [key=value]...``: the SLURM job's layout,
    then the ``key=value`` words (argparse's ``REMAINDER`` after the first positional word),
    which win over the config's values."""
    options, rest = leading_options(words, _VALUED)
    facts = [f for flag, value, where in options for f in cli_facts(flag, value, where)]
    return facts + [f for text, where in rest if text for f in _option(text, where)]


def _option(text: str, where: Location) -> list[Fact]:
    """One ``key=value`` override as ``OmegaConf.from_cli`` reads it."""
    key, eq, raw = text.partition("=")
    if not eq:
        return []
    if key in _RECOMPUTED:
        return [Fact(pointer, None, where) for pointer in _RECOMPUTED[key]]
    fields = TABLE.get(tuple(key.split(".")))
    return [] if fields is None else stated(fields, n.command_line_literal(raw), where)


def cli_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """The submitit launcher's defaults (8 GPUs on 1 node for 2800 minutes), for a line with
    one of its flags: ``dinov2/train/train.py`` has none, so a torchrun line gets none."""
    submitit = [fact for fact in facts if fact.pointer in _SUBMITIT_POINTERS]
    if not submitit:
        return []
    where = submitit[0].location
    return [
        DocumentDefault("/resources/gpus_per_node", 8, "--ngpus", where),
        DocumentDefault("/resources/nodes", 1, "--nodes", where),
        DocumentDefault("/resources/time_limit_s", 2800.0 * 60, "--timeout", where),
    ]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "optim.epochs x train.OFFICIAL_EPOCH_LENGTH": ["/training/max_steps"],
        "train.OFFICIAL_EPOCH_LENGTH (x 3: the code's checkpoint period, 3 kept)": [
            "/checkpoint/strategy", "/checkpoint/every_steps", "/checkpoint/keep_last",
        ],
        "student.arch, student.patch_size": ["/model/name"],
        f"{DEFAULT_CONFIG} (merged under every train config)": ["(reference)"],
        "run/train/train.py --nodes, --ngpus, --timeout, --partition": [
            f.pointer for fields in _LAUNCH.values() for f in fields
        ],
        "train.py --config-file F": ["(reference)"],
        "train.py key=value": ["(the config keys above)"],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=(
        "dinov2/configs/ssl_default_config.yaml",
        "dinov2/configs/train/vitl16_short.yaml",
        "python dinov2/run/train/train.py --nodes 4 --config-file F",
    ),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(
        cli_facts,
        entrypoints=ENTRYPOINTS,
        defaults=cli_defaults,
        arguments=arguments,
        config_keys=frozenset({"config_file"}),
    ),
)
