"""MMEngine / OpenMMLab 2.x Python configs (mmpretrain, mmdetection, mmsegmentation, ...):
``python tools/train.py configs/resnet/resnet50_8xb32_in1k.py``, read through ``ast`` with its
``_base_`` files merged as MMEngine merges them (``sources.python.mmconfig``), never imported.

What the keys mean, read from MMEngine's code (mmengine/runner/runner.py, loops.py,
hooks/checkpoint_hook.py, hooks/logger_hook.py, optim/optimizer/*.py) and mmpretrain's
``tools/train.py``:

- ``train_cfg``: ``by_epoch=True`` or ``type='EpochBasedTrainLoop'`` trains ``max_epochs``
  passes; ``by_epoch=False`` or ``IterBasedTrainLoop`` trains ``max_iters`` iterations and
  validates every ``val_interval`` iterations (default 1000) (``Runner.build_train_loop``).
  Another loop type is a project's own: its keys are not read.
- An iteration is one optimizer step unless ``optim_wrapper.accumulative_counts`` is N: the
  wrapper steps every N iterations, so steps, intervals and logging are iterations / N.
- ``train_dataloader.batch_size`` is each GPU's batch (a DataLoader per rank);
  ``num_workers``, ``persistent_workers``, ``pin_memory`` are the DataLoader's. Unset, the
  DataLoader's ``num_workers`` is 0 (a default).
- ``optim_wrapper.type``: ``AmpOptimWrapper`` autocasts to ``dtype`` (float16 unless
  ``bfloat16``); ``OptimWrapper`` (what the constructor sets when the type is left out:
  ``DefaultOptimWrapperConstructor``) trains fp32, stated where the type is written and a
  default where it is not. ``DeepSpeedStrategy``'s ``fp16``/``bf16`` blocks decide under
  DeepSpeed; ``strategy`` (FlexibleRunner) ``DeepSpeedStrategy``/``FSDPStrategy`` and
  ``model_wrapper_cfg`` ``MMFullyShardedDataParallel`` set the parallelism.
- ``default_hooks``: the Runner's defaults are ``checkpoint=CheckpointHook(interval=1)`` and
  ``logger=LoggerHook()`` (``Runner.register_default_hooks``); a hook the config writes
  replaces the default whole, with the class's own defaults (``CheckpointHook``: interval -1,
  no periodic save; ``by_epoch=True``; ``max_keep_ckpts=-1``, every save kept. ``LoggerHook``:
  interval 10 iterations); ``checkpoint=None`` removes it. An epoch checkpoint is read only
  under an epoch loop (an iteration loop never ends an epoch).
- ``randomness.seed`` (None: a random seed each run), ``log_level``, the model's
  ``backbone.type`` with ``depth``/``arch`` (``ResNet-50``) and the training pipeline's
  square crop (``RandomResizedCrop scale=224``) as the image size.
- ``auto_scale_lr.base_batch_size`` is the batch the learning rate was tuned for, not this
  run's: it states no fact.

OpenMMLab 1.x configs (mmcv's ``Config``: mmdetection 2.x, mmsegmentation 0.x) are read as
the MMEngine keys their runner keys mean (``sources.python.mmcv_legacy``), with no Runner
default hooks: mmcv registers a checkpoint or logger hook only when its config is given.

When a base cannot be read (a package's ``mmdet::`` base, a file outside the repository) a
key it may set is unknown, so no framework default stands in for it. A config under a
``_base_/`` folder is a piece other configs inherit, never a run of its own. Command-line
overrides of ``tools/train.py``: ``--amp`` (AmpOptimWrapper) and ``--cfg-options k=v``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

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
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import facts_for
from trainlint.sources.base.typos import suggest
from trainlint.sources.python import mmcv_legacy
from trainlint.sources.python.literal import UNKNOWN
from trainlint.sources.python.mmconfig import BaseFile, Located, Symbol, View, read_view, type_name
from trainlint.sources.structured import KeyPath, check_size
from trainlint.sources.structured.located import fact

name = "mmengine"
role: Role = "config"

_INHERITS = re.compile(r"^(?:_base_\s*=|with\s+read_base\(\)\s*:)", re.MULTILINE)
_TOP_DICTS = re.compile(
    r"^(?:train_cfg|optim_wrapper|train_dataloader|default_hooks|runner_type|checkpoint_config)"
    r"\s*=\s*dict\(|^runner\s*=\s*dict\(\s*type\s*=\s*['\"](?:Epoch|Iter)BasedRunner['\"]",
    re.MULTILINE,
)
_BASE_FOLDER = re.compile(r"(?:^|/)_base_/")


def recognise(file: Input) -> float:
    """0.95 for a Python module that inherits ``_base_`` configs (or ``read_base()``), 0.85
    for one assigning MMEngine's (or mmcv 1.x's) top-level dicts (``train_cfg = dict(...)``)."""
    if file.suffix != "py":
        return 0.0
    if _INHERITS.search(file.text):
        return 0.95
    # Below a Python reading of a Trainer call (0.9): a script may name a dict train_cfg.
    return 0.85 if _TOP_DICTS.search(file.text) else 0.0


def parse(file: Input) -> Document:
    check_size(file.text)
    try:
        tree = ast.parse(file.text)
    except (SyntaxError, ValueError, RecursionError) as exc:
        line = getattr(exc, "lineno", None) or 1
        raise SourceError(f"Python syntax error: {getattr(exc, 'msg', exc)}", line, 1) from exc
    view = read_view(Path(file.path), file.text, tree)
    doc = Document(file.path, name, recognise(file), role)
    doc.references = [_base_reference(base) for base in view.bases]
    doc.unknown_keys = _typos(view.config, file.path)
    if _BASE_FOLDER.search(file.path):
        doc.purpose = "an MMEngine base config other configs inherit (not a run of its own)"
        return doc
    legacy = mmcv_legacy.is_legacy(view.config.data)
    if legacy:
        view = View(mmcv_legacy.translate(view.config), view.bases, view.complete)
    if view.complete and not _trains(view.config.data):
        doc.purpose = "an MMEngine config without train_cfg: evaluation or inference, not a run"
        return doc
    reading = _Reading(view, runner_defaults=not legacy)
    doc.facts = reading.facts()
    doc.defaults = reading.defaults(file.path)
    return doc


def _trains(data: Any) -> bool:
    """``Runner.train`` needs a train loop: a config whose view (every base read) has no
    ``train_cfg`` (zero-shot CLIP, captioning evaluation) is no training run."""
    train = data.get("train_cfg") if isinstance(data, dict) else None
    return train is UNKNOWN or (isinstance(train, dict) and bool(train))


def _base_reference(base: BaseFile) -> Reference:
    return Reference(base.written, base.location, "member", unresolved=base.unresolved,
                     own_run=not _piece(base))  # fmt: skip


def _piece(base: BaseFile) -> bool:
    """Whether a base is only a piece of the jobs inheriting it: a ``_base_/`` fragment, or a
    file that cannot be read (its TL904). A readable config elsewhere (``_base_ = ['./vit-
    large-p16_8xb128-coslr-50e_in1k.py']``) is a run of its own: a member of this job (its
    values, and its bases', are in this view, so a change to them touches it) that still
    roots its own job rather than being swallowed into this one."""
    if base.path is None or not consulted.is_file(base.path):
        return True
    return bool(_BASE_FOLDER.search(base.path.as_posix()))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Reading:
    """The facts of one merged view."""

    def __init__(self, view: View, runner_defaults: bool = True) -> None:
        self.view = view
        self.runner_defaults = runner_defaults and view.complete
        self.config = view.config
        data = view.config.data
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}

    def where(self, *path: str | int) -> Location:
        """Where ``path`` (or its closest written ancestor) is set."""
        key: KeyPath = tuple(path)
        while key and key not in self.config.where:
            key = key[:-1]
        return self.config.where.get(key) or Location(file="<unknown>", line=1, column=1)

    def get(self, *path: str) -> Any:
        return self.config.at(tuple(path)).data

    def has(self, *path: str) -> bool:
        return self.get(*path) is not UNKNOWN

    def facts(self) -> list[Fact]:
        return [
            *self.run_length(),
            *self.batch(),
            *self.precision(),
            *self.parallelism(),
            *self.checkpoints(),
            *self.logging(),
            *self.model(),
            *self.image_size(),
            *self.seed(),
        ]

    # The loop and its steps --------------------------------------------------------------

    def loop(self) -> str | None:
        """``epoch`` or ``iter`` for MMEngine's own loops; None for another."""
        train = self.get("train_cfg")
        if not isinstance(train, dict):
            return None
        kind = type_name(train)
        if kind:
            return {"EpochBasedTrainLoop": "epoch", "IterBasedTrainLoop": "iter"}.get(kind)
        by_epoch = train.get("by_epoch")
        return None if not isinstance(by_epoch, bool) else ("epoch" if by_epoch else "iter")

    def accumulation(self) -> int | None:
        """Iterations per optimizer step: ``accumulative_counts``, else 1 when no unread base
        could set it."""
        wrapper = self.get("optim_wrapper")
        stated = _int(wrapper.get("accumulative_counts")) if isinstance(wrapper, dict) else None
        if stated is not None:
            return stated if stated > 0 else None
        return 1 if self.view.complete else None

    def steps(self, iterations: Any) -> float | None:
        """Iterations as optimizer steps (None when the accumulation is unknown)."""
        count, accum = _int(iterations), self.accumulation()
        if count is None or accum is None:
            return None
        return count / accum

    def run_length(self) -> list[Fact]:
        loop = self.loop()
        if loop == "epoch":
            epochs = _int(self.get("train_cfg", "max_epochs"))
            where = self.where("train_cfg", "max_epochs")
            return fact("/training/epochs", float(epochs) if epochs else None, where)
        if loop != "iter":
            return []
        steps = self.steps(self.get("train_cfg", "max_iters"))
        found = fact("/training/max_steps", int(steps) if steps else None,
                     self.where("train_cfg", "max_iters"))  # fmt: skip
        interval = self.get("train_cfg", "val_interval")
        if interval is UNKNOWN and self.runner_defaults:
            interval = 1000  # IterBasedTrainLoop's val_interval
        every = self.steps(interval)
        where = self.where("train_cfg", "val_interval")
        return (
            found
            + fact("/eval/every_steps", every, where)
            + (fact("/eval/strategy", "steps", where) if every else [])
        )

    def batch(self) -> list[Fact]:
        loader = ("train_dataloader",)
        found = fact("/training/micro_batch_size",
                     n.positive_int(_int(self.get(*loader, "batch_size"))),
                     self.where(*loader, "batch_size"))  # fmt: skip
        found += fact("/data/num_workers", _int(self.get(*loader, "num_workers")),
                      self.where(*loader, "num_workers"))  # fmt: skip
        for key in ("persistent_workers", "pin_memory"):
            value = self.get(*loader, key)
            if isinstance(value, bool):
                found += fact(f"/data/{key}", value, self.where(*loader, key))
        accum = _int(self.get("optim_wrapper", "accumulative_counts"))
        found += fact("/training/grad_accum_steps", accum if accum and accum > 0 else None,
                      self.where("optim_wrapper", "accumulative_counts"))  # fmt: skip
        optimizer = self.get("optim_wrapper", "optimizer")
        if isinstance(optimizer, dict) and type_name(optimizer):
            where = self.where("optim_wrapper", "optimizer", "type")
            found += facts_for(n.optimizer_fields(), type_name(optimizer), where)
        return found

    # Precision and parallelism -----------------------------------------------------------

    def precision(self) -> list[Fact]:
        wrapper = self.get("optim_wrapper")
        if not isinstance(wrapper, dict) or "type" not in wrapper:
            return []
        kind, where = type_name(wrapper), self.where("optim_wrapper", "type")
        if kind == "AmpOptimWrapper":
            dtype = wrapper.get("dtype")
            text = dtype.last if isinstance(dtype, Symbol) else dtype
            return fact("/training/precision", "bf16" if text == "bfloat16" else "fp16", where)
        if kind == "DeepSpeedOptimWrapper":
            return self.deepspeed_precision()
        if kind == "OptimWrapper" and not self.fsdp_mixed():
            return fact("/training/precision", "fp32", where)
        return []

    def strategy(self) -> str:
        return type_name(self.get("strategy"))

    def fsdp_mixed(self) -> bool:
        """FSDP's own ``mixed_precision`` casts without an AMP wrapper."""
        strategy = self.get("strategy")
        return isinstance(strategy, dict) and strategy.get("mixed_precision") not in (None, UNKNOWN)

    def deepspeed_precision(self) -> list[Fact]:
        strategy = self.get("strategy")
        if self.strategy() != "DeepSpeedStrategy" or not isinstance(strategy, dict):
            return []
        for key, precision in (("bf16", "bf16"), ("fp16", "fp16")):
            block = strategy.get(key)
            if isinstance(block, dict) and block.get("enabled") is True:
                return fact("/training/precision", precision, self.where("strategy", key))
        return []

    def parallelism(self) -> list[Fact]:
        kind = self.strategy()
        wrapper = type_name(self.get("model_wrapper_cfg"))
        found: list[Fact] = []
        if kind == "DeepSpeedStrategy":
            found += fact("/training/parallelism/strategy", "deepspeed", self.where("strategy"))
            stage = _int(self.get("strategy", "zero_optimization", "stage"))
            found += fact("/training/parallelism/zero_stage", stage,
                          self.where("strategy", "zero_optimization", "stage"))  # fmt: skip
        elif kind == "FSDPStrategy":
            found += fact("/training/parallelism/strategy", "fsdp", self.where("strategy"))
        elif wrapper == "MMFullyShardedDataParallel":
            found += fact("/training/parallelism/strategy", "fsdp",
                          self.where("model_wrapper_cfg"))  # fmt: skip
        return found

    # Hooks -------------------------------------------------------------------------------

    def hook(self, key: str) -> dict[str, Any] | None:
        """The hook the run registers under ``default_hooks[key]``: the config's, else the
        Runner's default (only when every base was read); None when removed or unknown."""
        hooks = self.get("default_hooks")
        if isinstance(hooks, dict) and key in hooks:
            written = hooks[key]
            return written if isinstance(written, dict) else None
        if not self.runner_defaults or (hooks is not UNKNOWN and not isinstance(hooks, dict)):
            return None
        defaults: dict[str, dict[str, Any]] = {
            "checkpoint": {"type": "CheckpointHook", "interval": 1},
            "logger": {"type": "LoggerHook"},
        }
        return defaults.get(key)

    def unset(self, hook: dict[str, Any], key: str, default: Any) -> Any:
        """A hook's keyword, or its class default when no unread base could set it."""
        return hook.get(key, default if self.view.complete else UNKNOWN)

    def checkpoints(self) -> list[Fact]:
        hooks = self.get("default_hooks")
        if isinstance(hooks, dict) and "checkpoint" in hooks and hooks["checkpoint"] is None:
            return fact("/checkpoint/strategy", "no", self.where("default_hooks", "checkpoint"))
        hook = self.hook("checkpoint")
        if hook is None or type_name(hook) != "CheckpointHook":
            return []
        path = ("default_hooks", "checkpoint")
        where = self.where(*path, "interval")
        interval, by_epoch = self.unset(hook, "interval", -1), self.unset(hook, "by_epoch", True)
        found = fact("/checkpoint/keep_last", _kept(hook.get("max_keep_ckpts", -1)),
                     self.where(*path, "max_keep_ckpts"))  # fmt: skip
        if not isinstance(interval, int) or not isinstance(by_epoch, bool):
            return found
        if interval <= 0:
            return found + fact("/checkpoint/strategy", "no", where)
        if by_epoch and self.loop() == "epoch":
            return (
                found
                + fact("/checkpoint/every_epochs", float(interval), where)
                + fact("/checkpoint/strategy", "epoch", where)
            )
        every = self.steps(interval) if not by_epoch else None
        return (
            found
            + fact("/checkpoint/every_steps", every, where)
            + (fact("/checkpoint/strategy", "steps", where) if every else [])
        )

    def logging(self) -> list[Fact]:
        hook = self.hook("logger")
        if hook is None or type_name(hook) != "LoggerHook":
            found: list[Fact] = []
        else:
            where = self.where("default_hooks", "logger", "interval")
            every = self.steps(self.unset(hook, "interval", 10))
            found = fact("/logging/every_steps", every, where)
        level = self.get("log_level")
        if isinstance(level, str) and level.strip():
            found += fact("/logging/level", level.strip().lower(), self.where("log_level"))
        return found

    # The model, its images and the seed --------------------------------------------------

    def model(self) -> list[Fact]:
        model = self.get("model")
        if not isinstance(model, dict):
            return []
        backbone = model.get("backbone")
        named = _backbone_name(backbone) if isinstance(backbone, dict) else ""
        kind = type_name(model)
        if named and kind not in ("", "ImageClassifier"):
            named = f"{kind} ({named})"
        where = self.where("model", "backbone", "type") if named else self.where("model", "type")
        return fact("/model/name", named or None, where)

    def image_size(self) -> list[Fact]:
        """The square side of the training pipeline's last fixed crop or resize."""
        dataset: KeyPath = ("train_dataloader", "dataset")
        for _ in range(3):  # RepeatDataset / ClassBalancedDataset wrap the dataset
            if isinstance(self.config.at((*dataset, "pipeline")).data, list):
                break
            dataset = (*dataset, "dataset")
        pipeline = self.config.at((*dataset, "pipeline"))
        if not isinstance(pipeline.data, list):
            return []
        size: tuple[int | None, Location | None] = (None, None)
        for index, step in enumerate(pipeline.data):
            if not isinstance(step, dict):
                continue
            changed = _resizes(step)
            if changed is not False:
                key = "crop_size" if "crop_size" in step else "scale"
                size = (changed, pipeline.where.get((index, key)))
        side, where = size
        return fact("/data/image_size", side, where) if where is not None else []

    def seed(self) -> list[Fact]:
        seed = _int(self.get("randomness", "seed"))
        return fact("/training/seed", seed, self.where("randomness", "seed"))

    # Defaults ----------------------------------------------------------------------------

    def defaults(self, file: str) -> list[DocumentDefault]:
        """fp32 for a wrapper written without a type, a random seed, 0 loader workers: only
        where no unread base could set them."""
        found: list[DocumentDefault] = []
        wrapper = self.get("optim_wrapper")
        if isinstance(wrapper, dict) and "type" not in wrapper and not self.strategy():
            where = self.own(file, "optim_wrapper")
            found.append(
                DocumentDefault("/training/precision", "fp32", "optim_wrapper.type", where)
            )
        if not self.view.complete:
            return found
        if _int(self.get("randomness", "seed")) is None:
            where = self.own(file, "randomness")
            found.append(DocumentDefault("/training/seed", None, "randomness.seed", where))
        loader = self.get("train_dataloader")
        if isinstance(loader, dict) and "num_workers" not in loader:
            where = self.own(file, "train_dataloader")
            found.append(DocumentDefault("/data/num_workers", 0, "train_dataloader.num_workers",
                                         where))  # fmt: skip
        return found

    def own(self, file: str, key: str) -> Location:
        """Where a user sets ``key`` for this config: at the key when this file writes it,
        else at the top of this file (a shared base is every config's, so the fix is an
        override here)."""
        where = self.where(key)
        return where if where.file == Path(file).as_posix() else top_of(file)


def _kept(value: Any) -> int | None:
    """``max_keep_ckpts``: a positive count; -1 (every save kept) states no limit."""
    count = _int(value)
    return count if count is not None and count > 0 else None


def _backbone_name(backbone: dict[str, Any]) -> str:
    """``ResNet`` with ``depth=50`` → ``ResNet-50``; ``VisionTransformer`` ``arch='b'`` →
    ``VisionTransformer-b``."""
    kind = type_name(backbone)
    if not kind:
        return ""
    depth, arch = _int(backbone.get("depth")), backbone.get("arch")
    if depth is not None:
        return f"{kind}-{depth}"
    if isinstance(arch, str) and arch:
        return f"{kind}-{arch}"
    return kind


_CROPS = frozenset({"RandomResizedCrop", "CenterCrop", "RandomCrop", "EfficientNetRandomCrop",
                    "EfficientNetCenterCrop"})  # fmt: skip


def _resizes(step: dict[str, Any]) -> int | bool | None:
    """The square side a pipeline step leaves images at, None when it leaves them at a size
    that is not one fixed square, False when it does not resize."""
    kind = type_name(step)
    if kind in _CROPS:
        return _square(step.get("crop_size", step.get("scale")))
    if kind in ("Resize", "RandomResize", "ResizeEdge", "RandomChoiceResize"):
        if kind != "Resize" or step.get("keep_ratio") is True:
            return None
        return _square(step.get("scale"))
    return False


def _square(value: Any) -> int | None:
    if _int(value) is not None:
        return _int(value)
    if isinstance(value, list) and len(value) == 2 and _int(value[0]) and value[0] == value[1]:
        return _int(value[0])
    return None


# Keys of MMEngine's train loops (loops.py) and LoggerHook: their __init__ take no others.
_LOOP_KEYS = {
    "EpochBasedTrainLoop": frozenset(
        {"type", "by_epoch", "max_epochs", "val_begin", "val_interval", "dynamic_intervals"}
    ),
    "IterBasedTrainLoop": frozenset(
        {"type", "by_epoch", "max_iters", "val_begin", "val_interval", "dynamic_intervals"}
    ),
}
_LOGGER_KEYS = frozenset({
    "type", "interval", "ignore_last", "interval_exp_name", "out_dir", "out_suffix",
    "keep_local", "file_client_args", "log_metric_by_epoch", "backend_args",
})  # fmt: skip


def _typos(config: Located, file: str) -> list[UnknownKey]:
    """Near-misses in ``train_cfg`` of MMEngine's own loops and in the LoggerHook, where this
    file writes them (a loop or hook given an unknown keyword fails at start-up)."""
    found: list[UnknownKey] = []
    train = config.at(("train_cfg",)).data
    loop = _LOOP_KEYS.get(type_name(train) or ("EpochBasedTrainLoop" if _by_epoch(train) else ""))
    if isinstance(train, dict) and type_name(train) == "" and _by_epoch(train) is False:
        loop = _LOOP_KEYS["IterBasedTrainLoop"]
    checks = [(("train_cfg",), loop), (("default_hooks", "logger"), _LOGGER_KEYS)]
    for path, known in checks:
        block = config.at(path)
        if known is None or not isinstance(block.data, dict):
            continue
        if type_name(block.data) not in ("", "LoggerHook", *_LOOP_KEYS):
            continue
        for key in block.data:
            where = block.where.get((key,))
            suggestion = suggest(str(key), known)
            if suggestion is not None and where is not None and where.file == file:
                found.append(_unknown(key, suggestion, where))
    return found


def _unknown(key: str, suggestion: str, where: Location) -> UnknownKey:
    return UnknownKey(file=where.file, line=where.line, column=where.column, key=key,
                      format=name, suggestion=suggestion)  # fmt: skip


def _by_epoch(train: Any) -> bool | None:
    value = train.get("by_epoch") if isinstance(train, dict) else None
    return value if isinstance(value, bool) else None


# Command-line overrides of tools/train.py -------------------------------------------------

_OVERRIDES: dict[str, tuple[str, Any]] = {
    "train_cfg.max_epochs": ("/training/epochs", lambda v: float(v) if n.positive_int(v) else None),
    "train_dataloader.batch_size": ("/training/micro_batch_size", n.positive_int),
    "train_dataloader.num_workers": ("/data/num_workers", n.to_int),
    "randomness.seed": ("/training/seed", n.to_int),
    "default_hooks.checkpoint.max_keep_ckpts": ("/checkpoint/keep_last",
                                                lambda v: _kept(n.to_int(v))),
    "optim_wrapper.type": ("/training/precision",
                           lambda v: "fp16" if str(v).strip("'\"") == "AmpOptimWrapper" else None),
}  # fmt: skip


def override_facts(key: str, value: Any, location: Location) -> list[Fact]:
    """``--amp`` (tools/train.py sets AmpOptimWrapper: float16) and ``--cfg-options k=v``
    (its first ``k=v`` arrives as the flag's value, the rest as ``k=v`` words)."""
    if key == "amp" and value is True:
        return [Fact("/training/precision", "fp16", location)]
    if key in ("cfg-options", "cfg_options", "options") and isinstance(value, str):
        key, _, value = value.partition("=")
    known = _OVERRIDES.get(key)
    if known is None or value in ("", True):
        return []
    pointer, convert = known
    converted = convert(value)
    return [] if converted is None else [Fact(pointer, converted, location)]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return {
        "_base_ (a path or list), with read_base(): from ._base_.x import *": ["(reference)"],
        "train_cfg.max_epochs (by_epoch=True / EpochBasedTrainLoop)": ["/training/epochs"],
        "train_cfg.max_iters / accumulative_counts (by_epoch=False / IterBasedTrainLoop)": [
            "/training/max_steps"],
        "train_cfg.val_interval (iteration loop)": ["/eval/every_steps", "/eval/strategy"],
        "train_dataloader.batch_size": ["/training/micro_batch_size"],
        "train_dataloader.num_workers / persistent_workers / pin_memory": [
            "/data/num_workers", "/data/persistent_workers", "/data/pin_memory"],
        "optim_wrapper.accumulative_counts": ["/training/grad_accum_steps"],
        "optim_wrapper.optimizer.type": ["/training/optimizer/name", "/training/optimizer/family"],
        "optim_wrapper.type (AmpOptimWrapper dtype, OptimWrapper), strategy fp16/bf16": [
            "/training/precision"],
        "strategy (DeepSpeedStrategy, FSDPStrategy), model_wrapper_cfg": [
            "/training/parallelism/strategy", "/training/parallelism/zero_stage"],
        "default_hooks.checkpoint.interval / by_epoch / max_keep_ckpts (Runner default: "
        "every epoch)": ["/checkpoint/every_epochs", "/checkpoint/every_steps",
                         "/checkpoint/strategy", "/checkpoint/keep_last"],
        "default_hooks.logger.interval (default 10)": ["/logging/every_steps"],
        "log_level": ["/logging/level"],
        "randomness.seed": ["/training/seed"],
        "model.backbone.type + depth/arch": ["/model/name"],
        "train pipeline RandomResizedCrop / CenterCrop / RandomCrop / Resize (square)": [
            "/data/image_size"],
        "tools/train.py --amp, --cfg-options k=v": ["/training/precision", "(as the keys above)"],
        "OpenMMLab 1.x: runner (EpochBasedRunner max_epochs / IterBasedRunner max_iters), "
        "checkpoint_config, log_config.interval, data.samples_per_gpu / workers_per_gpu, fp16 / "
        "Fp16OptimizerHook, GradientCumulativeOptimizerHook cumulative_iters": [
            "(as the MMEngine keys above)"],
    }  # fmt: skip


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("configs/resnet/resnet50_8xb32_in1k.py", "configs/_base_/default_runtime.py"),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    overrides=override_facts,
)
