"""OpenMMLab 1.x configs (mmcv's ``Config``: mmdetection 2.x, mmsegmentation 0.x and the many
forks still on them) as the MMEngine keys that mean the same, so one reader serves both.

The file format and ``_base_`` merging are MMEngine's; the keys are mmcv's runner's
(mmcv/runner/base_runner.py ``register_training_hooks``, epoch_based_runner.py,
iter_based_runner.py, hooks/checkpoint.py, hooks/optimizer.py):

- ``runner = dict(type='EpochBasedRunner', max_epochs=12)`` (or the older ``total_epochs``)
  is the epoch loop, ``IterBasedRunner`` with ``max_iters`` the iteration loop;
- ``checkpoint_config`` holds the CheckpointHook's keywords (``interval`` -1, ``by_epoch``
  True, ``max_keep_ckpts`` -1 by default; none registered when it is absent), ``log_config``
  the loggers' ``interval`` (none when absent);
- ``data.samples_per_gpu`` / ``workers_per_gpu`` are each GPU's DataLoader batch and workers,
  ``data.train.pipeline`` its transforms;
- ``fp16 = dict(...)`` or an ``Fp16OptimizerHook`` trains fp16 mixed precision;
  ``GradientCumulativeOptimizerHook(cumulative_iters=N)`` steps every N iterations.
"""

from __future__ import annotations

from typing import Any

from trainlint.sources.python.literal import UNKNOWN
from trainlint.sources.python.mmconfig import Located, type_name
from trainlint.sources.structured import KeyPath

# Top-level keys only OpenMMLab 1.x configs have, and those only 2.x (MMEngine) configs have.
LEGACY_KEYS = frozenset({"runner", "checkpoint_config", "log_config", "optimizer_config",
                         "total_epochs", "fp16"})  # fmt: skip
MMENGINE_KEYS = frozenset({"train_cfg", "optim_wrapper", "train_dataloader", "default_hooks"})


def is_legacy(data: Any) -> bool:
    """An mmcv 1.x config: one of its runner keys and none of MMEngine's."""
    keys = set(data) if isinstance(data, dict) else set()
    return bool(keys & LEGACY_KEYS) and not keys & MMENGINE_KEYS


def _type(value: Any) -> str:
    """The class name of a dict's ``type``; "" for anything that is no dict."""
    return type_name(value) if isinstance(value, dict) else ""


class _Builder:
    """Copies values of the 1.x config to their MMEngine keys, with where they are written."""

    def __init__(self, config: Located) -> None:
        self.config = config
        self.result = Located({}, {})

    def get(self, *path: str | int) -> Any:
        return self.config.at(tuple(path)).data

    def copy(self, to: KeyPath, source: KeyPath) -> None:
        value = self.config.at(source)
        if value.data is UNKNOWN:
            return
        self.put(to, value.data)
        for path, where in value.where.items():
            placed: KeyPath = (*to, *path)
            self.result.where[placed] = where

    def put(self, to: KeyPath, value: Any) -> None:
        node = self.result.data
        for part in to[:-1]:
            node = node.setdefault(part, {})
        node[to[-1]] = value

    def at(self, to: KeyPath, source: KeyPath) -> None:
        """Place ``to`` where ``source`` is written (a key the translation invents)."""
        where = self.config.where.get(source)
        if where is not None:
            self.result.where[to] = where


def translate(config: Located) -> Located:
    """The MMEngine-shaped view of an mmcv 1.x config."""
    build = _Builder(config)
    _loop(build)
    _hooks(build)
    _loader(build)
    _wrapper(build)
    for key in ("model", "randomness", "log_level"):
        build.copy((key,), (key,))
    return build.result


def _loop(build: _Builder) -> None:
    runner, kind = build.get("runner"), _type(build.get("runner"))
    if kind == "IterBasedRunner":
        build.put(("train_cfg",), {"type": "IterBasedTrainLoop"})
        build.copy(("train_cfg", "max_iters"), ("runner", "max_iters"))
    elif kind == "EpochBasedRunner" or (runner is UNKNOWN and build.get("total_epochs")):
        build.put(("train_cfg",), {"type": "EpochBasedTrainLoop"})
        source = ("runner", "max_epochs") if kind else ("total_epochs",)
        build.copy(("train_cfg", "max_epochs"), source)


def _hooks(build: _Builder) -> None:
    """mmcv registers a checkpoint or logger hook only when its config is given (the reader
    applies no Runner defaults to a 1.x config)."""
    build.put(("default_hooks",), {})
    if isinstance(build.get("checkpoint_config"), dict):
        build.put(("default_hooks", "checkpoint"), {"type": "CheckpointHook"})
        for key in build.get("checkpoint_config"):
            build.copy(("default_hooks", "checkpoint", key), ("checkpoint_config", key))
        build.at(("default_hooks", "checkpoint"), ("checkpoint_config",))
    if isinstance(build.get("log_config"), dict):
        build.put(("default_hooks", "logger"), {"type": "LoggerHook"})
        build.copy(("default_hooks", "logger", "interval"), ("log_config", "interval"))
        build.at(("default_hooks", "logger"), ("log_config",))


def _loader(build: _Builder) -> None:
    if not isinstance(build.get("data"), dict):
        return
    build.put(("train_dataloader",), {})
    build.copy(("train_dataloader", "batch_size"), ("data", "samples_per_gpu"))
    build.copy(("train_dataloader", "num_workers"), ("data", "workers_per_gpu"))
    build.copy(("train_dataloader", "dataset"), ("data", "train"))


def _wrapper(build: _Builder) -> None:
    """fp16 mixed precision, accumulation and the optimizer, as an optim_wrapper."""
    hook = build.get("optimizer_config")
    amp = isinstance(build.get("fp16"), dict) or "Fp16" in _type(hook)
    build.put(("optim_wrapper",), {"type": "AmpOptimWrapper"} if amp else {})
    if amp:
        stated = ("fp16",) if isinstance(build.get("fp16"), dict) else ("optimizer_config",)
        build.at(("optim_wrapper", "type"), stated)
    if "GradientCumulative" in _type(hook):
        cumulative = ("optimizer_config", "cumulative_iters")
        build.copy(("optim_wrapper", "accumulative_counts"), cumulative)
    build.copy(("optim_wrapper", "optimizer"), ("optimizer",))
