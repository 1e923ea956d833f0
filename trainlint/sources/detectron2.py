"""detectron2 training configs: yacs YAML (``configs/COCO-Detection/*.yaml``, composed over
their ``_BASE_``), LazyConfig Python (``configs/new_baselines/*.py``, with the config files they
import from ``..common``), and the command lines of ``tools/train_net.py`` (``--num-gpus 8
--num-machines 2 --config-file F SOLVER.IMS_PER_BATCH 16``) and ``lazyconfig_train_net.py``
(``train.max_iter=1000``).

What the keys mean, read from detectron2's code (``detectron2/config/defaults.py``,
``detectron2/engine/defaults.py`` ``DefaultTrainer``, ``tools/lazyconfig_train_net.py``):

- ``_BASE_`` names the config this one is merged over (``CfgNode.load_yaml_with_base``:
  mappings merge key by key, the file's own values win), relative to the file. yacs refuses
  any key ``defaults.py`` does not declare, so a near-miss of a known key is a typo (TL903).
- ``SOLVER.IMS_PER_BATCH`` is the batch of all GPUs together (``build_detection_train_loader``
  divides it by the world size); there is no gradient accumulation. With
  ``SOLVER.REFERENCE_WORLD_SIZE`` set, ``DefaultTrainer.auto_scale_workers`` rescales it to the
  world size at run time: then it is not known from the file.
- ``SOLVER.MAX_ITER`` counts optimizer steps. ``SOLVER.CHECKPOINT_PERIOD`` saves every that many
  steps (``PeriodicCheckpointer`` without ``max_to_keep``: every checkpoint is kept).
  ``TEST.EVAL_PERIOD`` evaluates every that many steps; 0 only after training.
- ``SOLVER.AMP.ENABLED: true`` trains with ``AMPTrainer`` (float16 autocast and a GradScaler),
  else ``SimpleTrainer`` in float32.
- The model's name is built as the model zoo names its configs: ``MODEL.META_ARCHITECTURE``
  (``GeneralizedRCNN`` with ``MODEL.MASK_ON`` is ``mask_rcnn``, without ``faster_rcnn``;
  ``RetinaNet`` ``retinanet``), the ResNet depth and the backbone (FPN, C4, DC5):
  ``mask_rcnn_R_50_FPN``. ``MODEL.WEIGHTS`` is the initial checkpoint.
- LazyConfig: ``train.max_iter``, ``train.checkpointer.period`` / ``max_to_keep``,
  ``train.eval_period``, ``train.log_period``, ``train.amp.enabled``, ``train.seed`` and
  ``dataloader.train.total_batch_size`` / ``num_workers`` (what ``lazyconfig_train_net.do_train``
  reads).
- ``--num-gpus`` is the GPUs of one machine, ``--num-machines`` the machines (``launch``).

Defaults (``Document.defaults``), from ``defaults.py`` for yacs: ``MAX_ITER`` 40000,
``IMS_PER_BATCH`` 16, ``CHECKPOINT_PERIOD`` 5000, ``EVAL_PERIOD`` 0, ``AMP.ENABLED`` false (fp32),
``DATALOADER.NUM_WORKERS`` 4, ``SEED`` -1 (a random seed each run); a LazyConfig trains fp32
unless ``train.amp.enabled``; a ``train_net.py`` line without ``--num-gpus`` uses one GPU.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
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
    seed_default,
    top_of,
)
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format, leading_options
from trainlint.sources.base.table import JobField, describe, facts_for, lookup, stated
from trainlint.sources.base.typos import children, dotted_near_misses
from trainlint.sources.python import lazyconfig
from trainlint.sources.structured import MAX_BYTES, KeyPath, Tree, check_size, flat
from trainlint.sources.structured.hydra_defaults import load
from trainlint.sources.structured.omegaconf import Layer, layer, merge

name = "detectron2"
role: Role = "config"

MAX_BASES = 16


def _steps_or_never(pointer: str) -> list[JobField]:
    """A step interval where 0 turns the periodic action off."""
    strategy = pointer.rsplit("/", 1)[0] + "/strategy"

    def never(value: Any) -> str | None:
        number = n.to_int(value)
        return None if number is None else "steps" if number > 0 else "no"

    return [JobField(pointer, n.positive_int), JobField(strategy, never)]


def _precision(value: Any) -> str | None:
    amp = n.to_bool(value)
    return None if amp is None else "fp16" if amp else "fp32"


def _seed(value: Any) -> int | None:
    """A negative seed draws a random one each run."""
    seed = n.to_int(value)
    return seed if seed is not None and seed >= 0 else None


# yacs keys → the job fields they set (SOLVER.IMS_PER_BATCH and the model name are read apart).
TABLE: dict[KeyPath, list[JobField]] = {
    ("SOLVER", "MAX_ITER"): [JobField("/training/max_steps", n.positive_int)],
    ("SOLVER", "CHECKPOINT_PERIOD"): _steps_or_never("/checkpoint/every_steps"),
    ("TEST", "EVAL_PERIOD"): _steps_or_never("/eval/every_steps"),
    ("SOLVER", "AMP", "ENABLED"): [JobField("/training/precision", _precision)],
    ("DATALOADER", "NUM_WORKERS"): [JobField("/data/num_workers", n.to_int)],
    ("SEED",): [JobField("/training/seed", _seed)],
}
# LazyConfig keys (dotted, as ``lazyconfig_train_net.py`` reads them and overrides name them).
LAZY_TABLE: dict[str, list[JobField]] = {
    "train.max_iter": [JobField("/training/max_steps", n.positive_int)],
    "train.checkpointer.period": _steps_or_never("/checkpoint/every_steps"),
    "train.checkpointer.max_to_keep": [JobField("/checkpoint/keep_last", n.positive_int)],
    "train.eval_period": _steps_or_never("/eval/every_steps"),
    "train.log_period": [JobField("/logging/every_steps", n.positive_int)],
    "train.amp.enabled": [JobField("/training/precision", _precision)],
    "train.seed": [JobField("/training/seed", _seed)],
    "dataloader.train.total_batch_size": [
        JobField("/training/global_batch_size", n.positive_int),
        JobField("/training/grad_accum_steps", lambda v: 1 if n.positive_int(v) else None),
    ],
    "dataloader.train.num_workers": [JobField("/data/num_workers", n.to_int)],
}

# Every key of detectron2/config/defaults.py (commit 02b5c4e), with the parents they imply.
KNOWN_KEYS = flat.words(
    """
_BASE_ CUDNN_BENCHMARK DATALOADER DATALOADER.ASPECT_RATIO_GROUPING
DATALOADER.FILTER_EMPTY_ANNOTATIONS DATALOADER.NUM_WORKERS DATALOADER.REPEAT_SQRT
DATALOADER.REPEAT_THRESHOLD DATALOADER.SAMPLER_TRAIN DATASETS
DATASETS.PRECOMPUTED_PROPOSAL_TOPK_TEST DATASETS.PRECOMPUTED_PROPOSAL_TOPK_TRAIN
DATASETS.PROPOSAL_FILES_TEST DATASETS.PROPOSAL_FILES_TRAIN DATASETS.TEST DATASETS.TRAIN
FLOAT32_PRECISION GLOBAL GLOBAL.HACK INPUT INPUT.CROP INPUT.CROP.ENABLED INPUT.CROP.SIZE
INPUT.CROP.TYPE INPUT.FORMAT INPUT.MASK_FORMAT INPUT.MAX_SIZE_TEST INPUT.MAX_SIZE_TRAIN
INPUT.MIN_SIZE_TEST INPUT.MIN_SIZE_TRAIN INPUT.MIN_SIZE_TRAIN_SAMPLING INPUT.RANDOM_FLIP MODEL
MODEL.ANCHOR_GENERATOR MODEL.ANCHOR_GENERATOR.ANGLES MODEL.ANCHOR_GENERATOR.ASPECT_RATIOS
MODEL.ANCHOR_GENERATOR.NAME MODEL.ANCHOR_GENERATOR.OFFSET MODEL.ANCHOR_GENERATOR.SIZES
MODEL.BACKBONE MODEL.BACKBONE.FREEZE_AT MODEL.BACKBONE.NAME MODEL.DEVICE MODEL.FPN
MODEL.FPN.FUSE_TYPE MODEL.FPN.IN_FEATURES MODEL.FPN.NORM MODEL.FPN.OUT_CHANNELS
MODEL.KEYPOINT_ON MODEL.LOAD_PROPOSALS MODEL.MASK_ON MODEL.META_ARCHITECTURE MODEL.PANOPTIC_FPN
MODEL.PANOPTIC_FPN.COMBINE MODEL.PANOPTIC_FPN.COMBINE.ENABLED
MODEL.PANOPTIC_FPN.COMBINE.INSTANCES_CONFIDENCE_THRESH MODEL.PANOPTIC_FPN.COMBINE.OVERLAP_THRESH
MODEL.PANOPTIC_FPN.COMBINE.STUFF_AREA_LIMIT MODEL.PANOPTIC_FPN.INSTANCE_LOSS_WEIGHT
MODEL.PIXEL_MEAN MODEL.PIXEL_STD MODEL.PROPOSAL_GENERATOR MODEL.PROPOSAL_GENERATOR.MIN_SIZE
MODEL.PROPOSAL_GENERATOR.NAME MODEL.RESNETS MODEL.RESNETS.DEFORM_MODULATED
MODEL.RESNETS.DEFORM_NUM_GROUPS MODEL.RESNETS.DEFORM_ON_PER_STAGE MODEL.RESNETS.DEPTH
MODEL.RESNETS.NORM MODEL.RESNETS.NUM_GROUPS MODEL.RESNETS.OUT_FEATURES
MODEL.RESNETS.RES2_OUT_CHANNELS MODEL.RESNETS.RES5_DILATION MODEL.RESNETS.STEM_OUT_CHANNELS
MODEL.RESNETS.STRIDE_IN_1X1 MODEL.RESNETS.WIDTH_PER_GROUP MODEL.RETINANET
MODEL.RETINANET.BBOX_REG_LOSS_TYPE MODEL.RETINANET.BBOX_REG_WEIGHTS
MODEL.RETINANET.FOCAL_LOSS_ALPHA MODEL.RETINANET.FOCAL_LOSS_GAMMA MODEL.RETINANET.IN_FEATURES
MODEL.RETINANET.IOU_LABELS MODEL.RETINANET.IOU_THRESHOLDS MODEL.RETINANET.NMS_THRESH_TEST
MODEL.RETINANET.NORM MODEL.RETINANET.NUM_CLASSES MODEL.RETINANET.NUM_CONVS
MODEL.RETINANET.PRIOR_PROB MODEL.RETINANET.SCORE_THRESH_TEST MODEL.RETINANET.SMOOTH_L1_LOSS_BETA
MODEL.RETINANET.TOPK_CANDIDATES_TEST MODEL.ROI_BOX_CASCADE_HEAD
MODEL.ROI_BOX_CASCADE_HEAD.BBOX_REG_WEIGHTS MODEL.ROI_BOX_CASCADE_HEAD.IOUS MODEL.ROI_BOX_HEAD
MODEL.ROI_BOX_HEAD.BBOX_REG_LOSS_TYPE MODEL.ROI_BOX_HEAD.BBOX_REG_LOSS_WEIGHT
MODEL.ROI_BOX_HEAD.BBOX_REG_WEIGHTS MODEL.ROI_BOX_HEAD.CLS_AGNOSTIC_BBOX_REG
MODEL.ROI_BOX_HEAD.CONV_DIM MODEL.ROI_BOX_HEAD.FC_DIM
MODEL.ROI_BOX_HEAD.FED_LOSS_FREQ_WEIGHT_POWER MODEL.ROI_BOX_HEAD.FED_LOSS_NUM_CLASSES
MODEL.ROI_BOX_HEAD.NAME MODEL.ROI_BOX_HEAD.NORM MODEL.ROI_BOX_HEAD.NUM_CONV
MODEL.ROI_BOX_HEAD.NUM_FC MODEL.ROI_BOX_HEAD.POOLER_RESOLUTION
MODEL.ROI_BOX_HEAD.POOLER_SAMPLING_RATIO MODEL.ROI_BOX_HEAD.POOLER_TYPE
MODEL.ROI_BOX_HEAD.SMOOTH_L1_BETA MODEL.ROI_BOX_HEAD.TRAIN_ON_PRED_BOXES
MODEL.ROI_BOX_HEAD.USE_FED_LOSS MODEL.ROI_BOX_HEAD.USE_SIGMOID_CE MODEL.ROI_HEADS
MODEL.ROI_HEADS.BATCH_SIZE_PER_IMAGE MODEL.ROI_HEADS.IN_FEATURES MODEL.ROI_HEADS.IOU_LABELS
MODEL.ROI_HEADS.IOU_THRESHOLDS MODEL.ROI_HEADS.NAME MODEL.ROI_HEADS.NMS_THRESH_TEST
MODEL.ROI_HEADS.NUM_CLASSES MODEL.ROI_HEADS.POSITIVE_FRACTION MODEL.ROI_HEADS.PROPOSAL_APPEND_GT
MODEL.ROI_HEADS.SCORE_THRESH_TEST MODEL.ROI_KEYPOINT_HEAD MODEL.ROI_KEYPOINT_HEAD.CONV_DIMS
MODEL.ROI_KEYPOINT_HEAD.LOSS_WEIGHT MODEL.ROI_KEYPOINT_HEAD.MIN_KEYPOINTS_PER_IMAGE
MODEL.ROI_KEYPOINT_HEAD.NAME MODEL.ROI_KEYPOINT_HEAD.NORMALIZE_LOSS_BY_VISIBLE_KEYPOINTS
MODEL.ROI_KEYPOINT_HEAD.NUM_KEYPOINTS MODEL.ROI_KEYPOINT_HEAD.POOLER_RESOLUTION
MODEL.ROI_KEYPOINT_HEAD.POOLER_SAMPLING_RATIO MODEL.ROI_KEYPOINT_HEAD.POOLER_TYPE
MODEL.ROI_MASK_HEAD MODEL.ROI_MASK_HEAD.CLS_AGNOSTIC_MASK MODEL.ROI_MASK_HEAD.CONV_DIM
MODEL.ROI_MASK_HEAD.NAME MODEL.ROI_MASK_HEAD.NORM MODEL.ROI_MASK_HEAD.NUM_CONV
MODEL.ROI_MASK_HEAD.POOLER_RESOLUTION MODEL.ROI_MASK_HEAD.POOLER_SAMPLING_RATIO
MODEL.ROI_MASK_HEAD.POOLER_TYPE MODEL.RPN MODEL.RPN.BATCH_SIZE_PER_IMAGE
MODEL.RPN.BBOX_REG_LOSS_TYPE MODEL.RPN.BBOX_REG_LOSS_WEIGHT MODEL.RPN.BBOX_REG_WEIGHTS
MODEL.RPN.BOUNDARY_THRESH MODEL.RPN.CONV_DIMS MODEL.RPN.HEAD_NAME MODEL.RPN.IN_FEATURES
MODEL.RPN.IOU_LABELS MODEL.RPN.IOU_THRESHOLDS MODEL.RPN.LOSS_WEIGHT MODEL.RPN.NMS_THRESH
MODEL.RPN.POSITIVE_FRACTION MODEL.RPN.POST_NMS_TOPK_TEST MODEL.RPN.POST_NMS_TOPK_TRAIN
MODEL.RPN.PRE_NMS_TOPK_TEST MODEL.RPN.PRE_NMS_TOPK_TRAIN MODEL.RPN.SMOOTH_L1_BETA
MODEL.SEM_SEG_HEAD MODEL.SEM_SEG_HEAD.COMMON_STRIDE MODEL.SEM_SEG_HEAD.CONVS_DIM
MODEL.SEM_SEG_HEAD.IGNORE_VALUE MODEL.SEM_SEG_HEAD.IN_FEATURES MODEL.SEM_SEG_HEAD.LOSS_WEIGHT
MODEL.SEM_SEG_HEAD.NAME MODEL.SEM_SEG_HEAD.NORM MODEL.SEM_SEG_HEAD.NUM_CLASSES MODEL.WEIGHTS
OUTPUT_DIR SEED SOLVER SOLVER.AMP SOLVER.AMP.ENABLED SOLVER.BASE_LR SOLVER.BASE_LR_END
SOLVER.BIAS_LR_FACTOR SOLVER.CHECKPOINT_PERIOD SOLVER.CLIP_GRADIENTS
SOLVER.CLIP_GRADIENTS.CLIP_TYPE SOLVER.CLIP_GRADIENTS.CLIP_VALUE SOLVER.CLIP_GRADIENTS.ENABLED
SOLVER.CLIP_GRADIENTS.NORM_TYPE SOLVER.GAMMA SOLVER.IMS_PER_BATCH SOLVER.LR_SCHEDULER_NAME
SOLVER.MAX_ITER SOLVER.MOMENTUM SOLVER.NESTEROV SOLVER.NUM_DECAYS SOLVER.REFERENCE_WORLD_SIZE
SOLVER.RESCALE_INTERVAL SOLVER.STEPS SOLVER.WARMUP_FACTOR SOLVER.WARMUP_ITERS
SOLVER.WARMUP_METHOD SOLVER.WEIGHT_DECAY SOLVER.WEIGHT_DECAY_BIAS SOLVER.WEIGHT_DECAY_NORM TEST
TEST.AUG TEST.AUG.ENABLED TEST.AUG.FLIP TEST.AUG.MAX_SIZE TEST.AUG.MIN_SIZES
TEST.DETECTIONS_PER_IMAGE TEST.EVAL_PERIOD TEST.EXPECTED_RESULTS TEST.KEYPOINT_OKS_SIGMAS
TEST.PRECISE_BN TEST.PRECISE_BN.ENABLED TEST.PRECISE_BN.NUM_ITER VERSION VIS_PERIOD
"""
)
_TOP = frozenset({"MODEL", "SOLVER", "DATASETS", "INPUT", "DATALOADER", "TEST"})
_SOLVER_MARKS = frozenset({"IMS_PER_BATCH", "MAX_ITER", "BASE_LR", "CHECKPOINT_PERIOD", "STEPS"})
_LAZY_HINT = re.compile(r"^from\s+(?:detectron2\.config\b|\.)", re.MULTILINE)
_LAZY_NAMES = re.compile(r"\b(?:train|dataloader)\b")


def recognise(file: Input) -> float:
    """0.95 for a yacs YAML with ``_BASE_`` or detectron2's sections and solver keys; 0.9 for
    a LazyConfig (imports ``detectron2.config`` or config files relatively) whose view, its
    imports followed, holds a key ``lazyconfig_train_net.py`` reads."""
    if file.suffix == "py":
        text = file.text[:MAX_BYTES]
        if not (_LAZY_HINT.search(text) and _LAZY_NAMES.search(text)):
            return 0.0
        return 0.9 if _lazy_reading(file.path, file.text).view.keys() & LAZY_TABLE.keys() else 0.0
    if file.suffix not in ("yaml", "yml"):
        return 0.0
    data = file.mapping
    keys = {str(key) for key in data}
    solver = data.get("SOLVER")
    solver_keys = set(map(str, solver)) if isinstance(solver, dict) else set()
    if "MAX_EPOCH" in solver_keys:
        return 0.0  # an epoch-based trainer built on detectron2's config (fast-reid)
    if "_BASE_" in keys and keys & _TOP:
        return 0.95  # a project's own sections beside (DensePose's BOOTSTRAP_DATASETS)
    if not keys <= _TOP_KEYS:
        return 0.0  # another yacs tool's sections (SlowFast's TRAIN, DATA_LOADER)
    return 0.95 if len(keys & _TOP) >= 2 and _SOLVER_MARKS & solver_keys else 0.0


def parse(file: Input) -> Document:
    doc = Document(file.path, name, recognise(file), role)
    if file.suffix == "py":
        return _parse_lazy(file, doc)
    tree = file.trees[0] if file.trees else Tree({})
    if not isinstance(tree.data, dict):
        raise SourceError("a detectron2 config is a mapping of keys", *tree.span(()))
    merged = _composed(Path(file.path), tree, ())
    doc.facts = yacs_facts(merged)
    doc.references = _base_references(tree, file.path)
    doc.unknown_keys = _typos(tree, file.path)
    doc.defaults = _yacs_defaults(top_of(file.path))
    return doc


# --- yacs --------------------------------------------------------------------------------


def _bases(data: Mapping[str, Any]) -> list[str]:
    """The ``_BASE_`` path, when it is one a file can have."""
    base = data.get("_BASE_")
    return [base] if isinstance(base, str) and base.strip() and "\x00" not in base else []


def _composed(path: Path, tree: Tree, stack: tuple[Path, ...]) -> Layer:
    """The file merged over its ``_BASE_`` chain (bases read from the repository only)."""
    own = layer(tree, path.as_posix(), (), frozenset({"_BASE_"}))
    data = tree.data if isinstance(tree.data, dict) else {}
    for base in _bases(data):
        target = _base_file(path, base, stack)
        loaded = load(target, checked_roots([path.absolute()])) if target else None
        if target is not None and loaded is not None:
            inherited = _composed(target, loaded[0], (*stack, path.resolve()))
            return merge(inherited, own)
    return own


def _base_file(path: Path, base: str, stack: tuple[Path, ...]) -> Path | None:
    """The file ``_BASE_`` names beside ``path``; None for a URL, an absolute or home path,
    a name no file can have, a cycle, a chain too long, or a file that is not there."""
    if base.startswith(("/", "~")) or "://" in base or len(stack) >= MAX_BASES:
        return None
    target = Path(os.path.normpath(path.parent / base))  # where facts are located: no ``..``
    try:
        return None if target.resolve() in stack or not consulted.is_file(target) else target
    except (OSError, ValueError):
        return None


def _base_references(tree: Tree, file: str) -> list[Reference]:
    """``_BASE_``: a member of the job (this file states the merged values); a URL or an
    absolute path cannot be looked for here. A base that is not a ``Base-*.yaml`` piece is a
    run of its own (Mask2Former's Swin configs over ``maskformer2_R50_bs16_50ep.yaml``): a
    member here that still roots its own job."""
    data = tree.data if isinstance(tree.data, dict) else {}
    line, column = tree.span(("_BASE_",))
    where = Location(file=file, line=line, column=column)
    found = []
    for base in _bases(data):
        unresolved = (
            "outside the repository" if base.startswith(("/", "~")) or "://" in base else None
        )
        run = unresolved is None and not _BASE_PIECE.match(PurePosixPath(base).name)
        found.append(Reference(base, where, "member", unresolved=unresolved, own_run=run))
    return found


_BASE_PIECE = re.compile(r"Base-.*\.ya?ml$")


def _get(data: Any, path: KeyPath) -> Any:
    return lookup(data, path)[1]


def _where(merged: Layer, path: KeyPath) -> Location:
    while path and path not in merged.where:
        path = path[:-1]
    return merged.where.get(path) or Location(file="", line=1, column=1)


def yacs_facts(merged: Layer) -> list[Fact]:
    """The facts of a composed yacs config."""
    facts: list[Fact] = []
    for path, fields in TABLE.items():
        if path in merged.where and _get(merged.data, path) is not None:
            facts += facts_for(fields, _get(merged.data, path), merged.where[path])
    facts += _batch(merged)
    facts += _model(merged)
    return facts


def _batch(merged: Layer) -> list[Fact]:
    """The global batch, unless ``REFERENCE_WORLD_SIZE`` rescales it at run time."""
    path = ("SOLVER", "IMS_PER_BATCH")
    if path not in merged.where:
        return []
    where = merged.where[path]
    if n.to_int(_get(merged.data, ("SOLVER", "REFERENCE_WORLD_SIZE"))) not in (None, 0):
        return [Fact("/training/global_batch_size", None, where)]
    batch = n.positive_int(_get(merged.data, path))
    if batch is None:
        return []
    return [Fact("/training/global_batch_size", batch, where),
            Fact("/training/grad_accum_steps", 1, where)]  # fmt: skip


_ARCHITECTURES = {"RetinaNet": "retinanet", "PanopticFPN": "panoptic_fpn"}
# The backbones of the model zoo: the name's last part (C4 unless RES5_DILATION 2 makes DC5).
_BACKBONES = {
    "build_resnet_backbone": "C4", "build_resnet_fpn_backbone": "FPN",
    "build_retinanet_resnet_fpn_backbone": "FPN",
}  # fmt: skip
# R-CNN heads the model zoo names; a project's own (DensePose's, PointRend's) names none.
_RCNN_HEADS = frozenset({"StandardROIHeads", "Res5ROIHeads", "CascadeROIHeads"})


def model_name(merged: Mapping[str, Any]) -> str | None:
    """``mask_rcnn_R_50_FPN`` as the model zoo names it, from the architecture and its heads,
    the ResNet (or ResNeXt) and the backbone, with defaults.py's values for what the config
    leaves unset; None for a model the zoo does not name that way."""
    found = merged.get("MODEL")
    model: Mapping[str, Any] = found if isinstance(found, dict) else {}
    arch = n.to_str(_get(model, ("META_ARCHITECTURE",)))
    named = n.to_str(_get(model, ("BACKBONE", "NAME"))) or "build_resnet_backbone"
    backbone = _BACKBONES.get(named)
    resnet = _resnet(model)
    head = _rcnn_head(model) if arch == "GeneralizedRCNN" else _ARCHITECTURES.get(arch or "")
    if head is None or backbone is None or resnet is None:
        return None
    if head == "panoptic_fpn":
        return f"{head}_{resnet}"  # the zoo's panoptic_fpn_R_50: FPN is in the name already
    dilation = n.to_int(_get(model, ("RESNETS", "RES5_DILATION"))) or 1
    kind = "DC5" if backbone == "C4" and dilation == 2 else backbone
    return f"{head}_{resnet}_{kind}"


def _resnet(model: Mapping[str, Any]) -> str | None:
    """``R_50``, or ``X_101_32x8d`` for a ResNeXt (NUM_GROUPS x WIDTH_PER_GROUP)."""
    depth = n.positive_int(_get(model, ("RESNETS", "DEPTH")) or 50)
    groups = n.positive_int(_get(model, ("RESNETS", "NUM_GROUPS")) or 1)
    width = n.positive_int(_get(model, ("RESNETS", "WIDTH_PER_GROUP")) or 64)
    if depth is None or groups is None or width is None:
        return None
    return f"R_{depth}" if groups == 1 else f"X_{depth}_{groups}x{width}d"


def _rcnn_head(model: Mapping[str, Any]) -> str | None:
    """``mask_rcnn``, ``faster_rcnn``, ``keypoint_rcnn`` or ``cascade_mask_rcnn``."""
    heads = n.to_str(_get(model, ("ROI_HEADS", "NAME"))) or "Res5ROIHeads"
    if heads not in _RCNN_HEADS:
        return None
    mask = n.to_bool(_get(model, ("MASK_ON",))) is True
    mask_head = n.to_str(_get(model, ("ROI_MASK_HEAD", "NAME"))) or "MaskRCNNConvUpsampleHead"
    if mask and mask_head != "MaskRCNNConvUpsampleHead":
        return None  # PointRend's point head and other projects' masks
    if n.to_bool(_get(model, ("KEYPOINT_ON",))) is True:
        return None if mask else "keypoint_rcnn"
    if heads == "CascadeROIHeads":
        return "cascade_mask_rcnn" if mask else None
    if n.to_bool(_get(model, ("LOAD_PROPOSALS",))) is True:
        return None if mask else "fast_rcnn"  # precomputed proposals: no RPN
    return "mask_rcnn" if mask else "faster_rcnn"


def _model(merged: Layer) -> list[Fact]:
    named = model_name(merged.data)
    if named is None:
        return []
    return [Fact("/model/name", named, _where(merged, ("MODEL", "META_ARCHITECTURE")))]


def _typos(tree: Tree, file: str) -> list[UnknownKey]:
    """Near-misses of defaults.py's keys, in each section yacs knows."""
    return dotted_near_misses(tree, KNOWN_KEYS, name, file)


_TOP_KEYS = children(KNOWN_KEYS, ())


def _yacs_defaults(where: Location) -> list[DocumentDefault]:
    """defaults.py's values for the keys the file leaves unset."""
    return [
        DocumentDefault("/training/max_steps", 40000, "SOLVER.MAX_ITER", where),
        DocumentDefault("/training/global_batch_size", 16, "SOLVER.IMS_PER_BATCH", where),
        DocumentDefault("/checkpoint/every_steps", 5000, "SOLVER.CHECKPOINT_PERIOD", where),
        DocumentDefault("/checkpoint/strategy", "steps", "SOLVER.CHECKPOINT_PERIOD", where),
        DocumentDefault("/eval/strategy", "no", "TEST.EVAL_PERIOD", where),
        DocumentDefault("/training/precision", "fp32", "SOLVER.AMP.ENABLED", where),
        DocumentDefault("/data/num_workers", 4, "DATALOADER.NUM_WORKERS", where),
        seed_default(None, "SEED", where.file),
    ]


# --- LazyConfig ---------------------------------------------------------------------------


def _lazy_reading(path: str, text: str) -> lazyconfig.Reading:
    """The LazyConfig's view; an empty one for a file that is no valid Python. Not cached:
    the view depends on the files it imports, which may change while this one does not."""
    check_size(text)
    try:
        tree = lazyconfig.parse_module(text)
    except (SyntaxError, ValueError):
        return lazyconfig.Reading()
    return lazyconfig.read(path, tree, text)


def _parse_lazy(file: Input, doc: Document) -> Document:
    reading = _lazy_reading(file.path, file.text)
    doc.facts = lazy_facts(reading.view)
    doc.references = [
        Reference(lazyconfig.relative(Path(file.path), imported.path), imported.location, "member")
        for imported in reading.imports
    ]
    where = top_of(file.path)
    doc.defaults = [
        DocumentDefault("/training/precision", "fp32", "train.amp.enabled", where),
        seed_default(None, "train.seed", file.path),
    ]
    return doc


def lazy_facts(view: Mapping[str, tuple[Any, Location]]) -> list[Fact]:
    """The facts of a LazyConfig's flat view; a key stated with no literal value is unknown."""
    facts: list[Fact] = []
    for key, fields in LAZY_TABLE.items():
        if key in view:
            value, where = view[key]
            facts += stated(fields, lazyconfig.known(value), where)
    return facts


# --- the command line ---------------------------------------------------------------------

_SWITCHES = frozenset({"--resume", "--eval-only"})
_VALUED = frozenset(
    {"--num-gpus", "--num-machines", "--machine-rank", "--dist-url", "--config-file"}
)
_LAUNCH: dict[str, list[JobField]] = {
    "--num-gpus": [JobField("/resources/gpus_per_node", n.positive_int)],
    "--num-machines": [JobField("/resources/nodes", n.positive_int)],
}
ENTRYPOINTS = re.compile(r"(?:^|/)(?:plain_|lazyconfig_)?train_net\.py$")


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """Flags are read with the whole line (``arguments``): a switch takes no value there."""
    return []


def arguments(words: Sequence[tuple[str | None, Location]]) -> list[Fact]:
    """``--num-gpus 8 --num-machines 2 --config-file F [KEY VALUE | key=value]...``: the
    launch's layout, then the config options after the first positional word (argparse's
    ``REMAINDER``), which win over the config file's values."""
    options, rest = leading_options(words, _VALUED)
    facts = [f for flag, value, where in options if flag in _LAUNCH
             for f in stated(_LAUNCH[flag], value, where)]  # fmt: skip
    return facts + _options(rest)


def _options(words: Sequence[tuple[str | None, Location]]) -> list[Fact]:
    """yacs ``KEY VALUE`` pairs or LazyConfig ``key=value`` words."""
    first = words[0][0] if words else None
    if first is not None and "=" in first:
        pairs = [(t.partition("=")[0], t.partition("=")[2], w) for t, w in words if t and "=" in t]
        return [f for key, value, where in pairs for f in _option(key, value, where)]
    facts: list[Fact] = []
    for (key, where), (value, _) in zip(words[::2], words[1::2], strict=False):
        if key is not None:
            facts += _option(key, value, where)
    return facts


def _option(key: str, value: str | None, where: Location) -> list[Fact]:
    parsed = None if value is None else n.command_line_literal(value)
    if key in LAZY_TABLE:
        return stated(LAZY_TABLE[key], parsed, where)
    path = tuple(key.split("."))
    if path == ("SOLVER", "IMS_PER_BATCH"):
        fields = [JobField("/training/global_batch_size", n.positive_int)]
        return stated(fields, parsed, where)
    return stated(TABLE[path], parsed, where) if path in TABLE else []


def cli_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """``--num-gpus`` defaults to one GPU, beside the first setting the line states."""
    if not facts:
        return []
    return [DocumentDefault("/resources/gpus_per_node", 1, "--num-gpus", facts[0].location)]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "SOLVER.IMS_PER_BATCH (unless SOLVER.REFERENCE_WORLD_SIZE)": [
            "/training/global_batch_size", "/training/grad_accum_steps",
        ],
        "MODEL.META_ARCHITECTURE, MODEL.MASK_ON, MODEL.RESNETS.DEPTH, MODEL.BACKBONE.NAME": [
            "/model/name"
        ],
        "_BASE_": ["(reference)"],
        **{f"{key} (LazyConfig)": [f.pointer for f in rules] for key, rules in LAZY_TABLE.items()},
        "train_net.py --num-gpus, --num-machines": ["/resources/gpus_per_node", "/resources/nodes"],
        "train_net.py --config-file F": ["(reference)"],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=(
        "configs/COCO-Detection/faster_rcnn_R_50_FPN_3x.yaml",
        "configs/new_baselines/mask_rcnn_R_50_FPN_100ep_LSJ.py",
        "tools/train_net.py --num-gpus 8 --config-file F",
    ),
    reads="text",
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
