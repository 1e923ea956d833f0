"""The assumptions the estimator runs on, and the rule thresholds its suggestions must meet.

``EstimateParams`` is the one definition of the assumptions and their defaults: the builtin pack
publishes ``published_defaults()`` as ``data.trainlint.params.estimate`` (``packs.load_pack``),
so rules read them there and org packs and repo configs override them like any parameter; the
effective values come back through ``EstimateParams.of``, where an unknown key is an error that
names it. Each default's source is in docs/estimates.md.

``RuleLimits`` holds the thresholds of the rules that judge what the estimator suggests, read
from those rules' own params: a suggestion never trips the rule it answers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trainlint.catalog import resolve_gpu
from trainlint.errors import PolicyError
from trainlint.estimate.precision import parse_precision
from trainlint.fleet import Fleet

GROUP = "estimate"
"""The parameter group of the assumptions: ``data.trainlint.params.estimate``."""

GIB = 2**30
# Bounds on what a pack may assume: past them a formula divides by almost nothing or
# multiplies toward a float's range, and a hostile pack could make every estimate infinite.
MAX_BYTES = 1e15  # a petabyte, or a petabyte per second
MIN_SHARE = 1e-6  # of a link, of the GPU's FLOPs, of the run, of the parameters
MAX_PRICE = 1e6  # USD per GPU-hour


class EstimateParams(BaseModel):
    """Defaults for what no config states; every number they drive is marked ``default``."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    mfu: float | None = Field(default=None, ge=MIN_SHARE, le=1)
    """Utilisation of the executed FLOPs for every job, when an org knows its own; None (the
    default) takes it from published runs like the job (estimate/mfu.py, catalog/data/mfu.json)."""

    collective_latency_us: float = Field(default=50.0, ge=0, le=60e6)
    """Fixed cost of one NCCL collective in microseconds, whatever its size: tens inside a node,
    more across nodes (nccl-tests small-message latency; assumed). ZeRO-3/FSDP pays it per
    layer, three times per micro-batch. In µs because regopy cannot read a JSON number with a
    negative exponent (5e-05) in pack data."""

    restart_s: float = Field(default=600.0, ge=0, le=1e7)
    """Time to detect a failure, reschedule and reload the last checkpoint (R in Young/Daly;
    assumed 10 minutes, Daly 2006's δ = 5 min example doubled for rescheduling)."""

    overhead_bytes: float = Field(default=GIB, ge=0, le=MAX_BYTES)
    """Per-GPU CUDA context, NCCL buffers and allocator slack not in the formulas (assumed)."""

    checkpoint_write_bytes_per_s: float = Field(default=1e9, ge=1, le=MAX_BYTES)
    """Checkpoint write bandwidth per job: BLOOM wrote ~1.2 GB/s per node (§8.2)."""

    checkpoint_stage_bytes_per_s: float = Field(default=10e9, ge=1, le=MAX_BYTES)
    """Device-to-host copy per GPU that an asynchronous save blocks on (§8.2): DCP
    ``async_save`` (torchtitan ``async_mode``, torchtune, NeMo ``async_save``) stages the state
    into CPU memory and writes it in the background (PyTorch "Asynchronous Saving with DCP"
    recipe). ~10 GB/s is a pageable copy over PCIe 4/5 x16 (pinned: 25-50 GB/s); IBM's 7B async
    save blocked 6.3 s against 148.8 s synchronous, Meta/Crusoe's Llama 3 70B staged in 0.78 s."""

    target_checkpoint_overhead: float = Field(default=0.02, ge=MIN_SHARE, lt=1)
    """Share of run time the suggested checkpoint interval aims to spend saving: BLOOM's 2%
    worst case (§8.2). At most TL201's ``max_overhead_fraction`` (``RuleLimits``): the
    suggestion aims below the threshold that flags the job, and follows it down."""

    network_bytes_per_s: float = Field(default=25e9, ge=1, le=MAX_BYTES)
    """Inter-node bandwidth per node: 200 Gb/s, ml-engineering's worked example (§9.1)."""

    link_efficiency: float = Field(default=0.8, ge=MIN_SHARE, le=1)
    """Achievable share of an advertised link speed: ~80% (ml-engineering, §5 and §9.1)."""

    comm_overlap: float = Field(default=1.0, ge=0, le=1)
    """Share of backward compute that hides gradient communication (DDP buckets, §9.1)."""

    padded_fill: float = Field(default=0.5, ge=MIN_SHARE, le=1)
    """Share of the maximum length a batch runs at when samples are neither packed nor padded
    to it (padding to the longest in the batch): packing them instead gave up to 2x training
    throughput on variable-length instruction data (Kundu et al. 2024, arXiv:2407.09105;
    Hugging Face, "Improving Hugging Face Training Efficiency Through Packing with Flash
    Attention 2"). Assumed: the true share depends on the data set's lengths."""

    gpus_per_node: int = Field(default=8, ge=1, le=1_000_000)
    """GPUs per node when a job does not say: 8 on HGX/DGX-class nodes."""

    gpu_mtbf_hours: float = Field(default=50_700.0, ge=1e-3, le=1e12)
    """Mean time between interruptions per GPU: Llama 3 405B, 419 in 54 days on 16,384 (§8.3)."""

    headroom: float = Field(default=0.1, ge=0, lt=1)
    """Share of GPU memory a suggested configuration (a cheaper GPU, TL101; a memory fix,
    TL102) must leave free to count as fitting; it uses at most TL102's ``max_utilization``
    too (``RuleLimits``). Not TL107's ``max_utilization_without_recompute`` (0.8), which is a
    rule's own, stricter bar for advising recomputation off."""

    flash_attention: bool = True
    """Attention kernels keep no a·s² score tensors (FlashAttention / PyTorch SDPA)."""

    default_precision: str = "bf16"
    """Precision assumed when a job states none."""

    peft_trainable_fraction: float = Field(default=0.01, ge=MIN_SHARE, le=1)
    """Trainable share of the parameters under PEFT when the count is not declared."""

    max_alternatives: int = Field(default=3, ge=0, le=1_000)
    """How many cheaper GPU alternatives to keep."""

    max_alternative_slowdown: float = Field(default=1.5, ge=1, le=1_000)
    """An alternative's run may take at most this many times the job's wall-clock."""

    prices: dict[str, float] = Field(default_factory=dict)
    """USD per GPU-hour by catalog GPU name or alias; replaces the catalog price."""

    fleet: Fleet | None = Field(default=None, exclude=True)
    """The org's fleet: the pack's ``data.trainlint.fleet`` (the repo config's over it), not
    a parameter: ``of`` reads it beside ``params.estimate``, and it is not published there."""

    @field_validator("default_precision")
    @classmethod
    def _known_precision(cls, value: str) -> str:
        if parse_precision(value) is None:
            raise ValueError(f"unknown precision {value!r}")
        return value

    @field_validator("prices")
    @classmethod
    def _known_gpus(cls, value: dict[str, float]) -> dict[str, float]:
        canonical: dict[str, float] = {}
        for name, price in value.items():
            gpu = resolve_gpu(name)
            if gpu is None:
                raise ValueError(f"prices: unknown GPU {name!r}")
            if not 0 < price <= MAX_PRICE:
                raise ValueError(
                    f"prices: {name!r} must be a positive USD per GPU-hour up to {MAX_PRICE:,}"
                )
            canonical[gpu.name] = float(price)
        return canonical

    @classmethod
    def of(cls, data: Mapping[str, Any], pack: str) -> EstimateParams:
        """The assumptions a pack's data sets (MFU, write bandwidth, prices...); a PolicyError
        names the pack and every bad key."""
        try:
            params = cls.model_validate(_params(data).get(GROUP, {}))
        except ValidationError as exc:
            raise PolicyError(f"pack {pack!r}: params.{GROUP}: {_detail(exc)}") from None
        try:
            return params.model_copy(update={"fleet": _fleet(data)})
        except ValidationError as exc:
            raise PolicyError(f"pack {pack!r}: fleet: {_detail(exc)}") from None


def published_defaults() -> dict[str, Any]:
    """The defaults as pack data: what the builtin pack publishes under ``params.estimate``."""
    return EstimateParams().model_dump()


@dataclass(frozen=True)
class RuleLimits:
    """Thresholds of the rules that judge the estimator's suggestions, from their own params,
    so an org that changes one gets suggestions that meet it. Without a pack, the physical
    limits: any checkpoint overhead below the whole run, the GPU's whole memory."""

    max_checkpoint_overhead: float = 1.0
    """TL201 checkpoint_too_frequent.max_overhead_fraction."""

    max_memory_utilization: float = 1.0
    """TL102 does_not_fit.max_utilization: above it a job does not fit."""

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> RuleLimits:
        """The limits a pack's data (``data.trainlint.params``) sets; a threshold that is not
        a finite number (null, from a pack) leaves the physical limit."""
        params = _params(data)
        found = {name: _threshold(params, *where) for name, where in _RULE_PARAMS.items()}
        return cls(**{name: value for name, value in found.items() if value is not None})

    def checkpoint_overhead(self, p: EstimateParams) -> float:
        """The overhead the suggested interval aims for: the assumed target, never above
        TL201's threshold, and above zero (some interval meets it)."""
        return max(MIN_SHARE, min(p.target_checkpoint_overhead, self.max_checkpoint_overhead))

    def memory_utilization(self, p: EstimateParams) -> float:
        """The share of GPU memory a suggested configuration may use: all but the headroom,
        never above TL102's threshold."""
        return min(1 - p.headroom, self.max_memory_utilization)


_RULE_PARAMS = {
    "max_checkpoint_overhead": ("checkpoint_too_frequent", "max_overhead_fraction"),
    "max_memory_utilization": ("does_not_fit", "max_utilization"),
}
"""Where each limit is set: the rule's parameter group and key in ``data.trainlint.params``."""


def _detail(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


def _fleet(data: Mapping[str, Any]) -> Fleet | None:
    """The pack's ``data.trainlint.fleet``, validated; None where it has none."""
    trainlint = data.get("trainlint")
    fleet = trainlint.get("fleet") if isinstance(trainlint, Mapping) else None
    return Fleet.model_validate(fleet) if isinstance(fleet, Mapping) and fleet else None


def _params(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data.trainlint.params``; empty where a pack has none."""
    trainlint = data.get("trainlint")
    params = trainlint.get("params") if isinstance(trainlint, Mapping) else None
    return params if isinstance(params, Mapping) else {}


def _threshold(params: Mapping[str, Any], group: str, key: str) -> float | None:
    values = params.get(group)
    value = values.get(key) if isinstance(values, Mapping) else None
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) else None
