"""Checkpoint size, save time, overhead share, retention, the interval that meets a target and
the Young/Daly interval that minimises expected lost work.

A resumable mixed-precision Adam checkpoint is 14 bytes per parameter: 16-bit weights (2),
fp32 master (4), Adam m and v (4 + 4); gradients are not saved (cost-model §8.1).

``save_s`` is the time the training loop stops per save. A synchronous save stops it for the
whole write. An asynchronous one (``checkpoint.async``: DCP ``async_save``, torchtitan
``async_mode``, NeMo/torchtune async saves) stops it only while each GPU copies its share of the
state into CPU memory; the write runs in the background, and a save that finds the previous
write still running waits for it (torchtitan and DCP keep one save in flight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from trainlint.estimate.inputs import MAX_QUANTITY, Basis, Inputs, finite
from trainlint.estimate.ledger import Ledger, Sourced, derived
from trainlint.estimate.params import EstimateParams
from trainlint.job import Checkpoint, CheckpointCost, Job, Source

_NO_CHECKPOINTS = frozenset({"no", "none", "off", "false", "never"})
# When a run saves: a framework's defaults for these count only if the job states none of them
# (a stated interval with a default strategy of another framework would mix two trainers).
_WHEN = ("strategy", "every_steps", "every_seconds", "every_epochs")


def with_defaults(job: Job) -> tuple[Checkpoint, frozenset[str]]:
    """The job's checkpoint settings, with its framework's documented defaults
    (``Job.defaults``: detectron2's ``SOLVER.CHECKPOINT_PERIOD`` 5000, Ultralytics' ``save_period``
    and last/best files) for what no file states, and the fields so filled. A default is what
    the framework runs, not a guess: it drives the estimate, sourced ``default``."""
    ck = job.checkpoint
    stated = ck.model_dump(by_alias=False)
    unstated_when = all(stated[name] is None for name in _WHEN)
    fill: dict[str, object] = {}
    for name in (*_WHEN, "keep_last"):
        default = job.defaults.get(f"/checkpoint/{name}")
        if default is None or default.value is None or stated[name] is not None:
            continue
        if name == "keep_last" or unstated_when:
            fill[name] = default.value
    if not fill:
        return ck, frozenset()
    filled = Checkpoint.model_validate({**stated, **fill})
    return filled, frozenset(fill)


def checkpoint_bytes(
    saved_params: float, trainable: float, weight_bytes: float, k: float, save_optimizer: bool
) -> float:
    """Bytes on disk: saved weights, plus optimizer state (ZeRO's K: master + moments)."""
    return saved_params * weight_bytes + (trainable * k if save_optimizer else 0.0)


def interval_steps(every_steps: float, total_steps: int | None) -> int | None:
    """Steps between saves; below 1 it is a share of the run (HF ``save_steps``: ceil)."""
    if every_steps <= 0:
        return None
    if every_steps < 1:
        return None if total_steps is None else max(1, math.ceil(every_steps * total_steps))
    return int(every_steps)


def overhead_fraction(save_s: float, every_steps: int, step_s: float) -> float:
    """Share of wall time spent saving: save / (interval · step + save)."""
    return save_s / (every_steps * step_s + save_s)


def suggested_interval(save_s: float, step_s: float, target: float) -> int:
    """Smallest interval whose overhead is at most ``target``: ceil(save·(1-t) / (t·step))."""
    every = max(1, math.ceil(save_s * (1 - target) / (target * step_s)))
    for _ in range(3):  # float rounding at the boundary; bounded, as huge intervals absorb +1
        if overhead_fraction(save_s, every, step_s) <= target:
            break
        every += 1
    return every


def daly_interval_s(save_s: float, mtbf_s: float) -> float:
    """Compute time between saves that minimises expected waste (Daly 2006, higher order).

    τ = sqrt(2δM)·[1 + (1/3)·sqrt(δ/(2M)) + (1/9)·(δ/(2M))] - δ for δ < 2M, else τ = M;
    its first term is Young's (1974) sqrt(2δM). δ = save time, M = the job's MTBF (§8.3).
    """
    if save_s >= 2 * mtbf_s:
        return mtbf_s
    ratio = save_s / (2 * mtbf_s)
    return math.sqrt(2 * save_s * mtbf_s) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - save_s


def job_mtbf_s(gpu_mtbf_hours: float, gpus: int) -> float:
    """The job's mean time between failures: the per-GPU figure over the GPU count (§8.3)."""
    return gpu_mtbf_hours * 3600.0 / max(1, gpus)


def async_blocking_s(stage_s: float, write_s: float, interval_s: float | None) -> float:
    """Stall per asynchronous save: the staging copy, plus the wait for the previous save's
    background write when it outlasts the interval (``interval_s`` unknown: staging only)."""
    wait = 0.0 if interval_s is None else max(0.0, write_s - interval_s)
    return stage_s + wait


@dataclass(frozen=True)
class _Size:
    bytes: float
    save_s: float  # the stall per save: the write, or the staging copy when asynchronous
    source: Source
    write_s: float = 0.0
    stage_s: float | None = None  # asynchronous saves: the device-to-host copy per GPU


@dataclass(frozen=True)
class _Plan:
    every: int | None = None
    saves: int | None = None
    total: int | None = None  # the run's steps: the suggested interval's cap


def _size(ck: Checkpoint, inp: Inputs, p: EstimateParams, led: Ledger) -> _Size | None:
    if inp.params is None or inp.trainable is None:
        led.missing("model.params")
        return None
    prec, opt = inp.precision, inp.optimizer
    save_opt = ck.save_optimizer is not False  # trainers save optimizer state unless told not to
    saved = inp.trainable.value if inp.peft else inp.params.value  # PEFT saves adapters only
    k = opt.value.k(prec.value)
    size = checkpoint_bytes(saved, inp.trainable.value, prec.value.weight_bytes, k, save_opt)
    sources = [prec.source, inp.params.source, inp.trainable.source]
    src = derived(*sources, *([opt.source] if save_opt else []))
    led.put("checkpoint.size_bytes", size, src)
    write_s = size / p.checkpoint_write_bytes_per_s
    if ck.async_ is not True:
        return _Size(size, write_s, src, write_s)
    led.put("checkpoint.async", True, "declared")
    stage_s = _staged_bytes(inp, saved, k, save_opt) / p.checkpoint_stage_bytes_per_s
    return _Size(size, stage_s, src, write_s, stage_s)


def _staged_bytes(inp: Inputs, saved: float, k: float, save_opt: bool) -> float:
    """Bytes one GPU copies to host memory: its shard of the saved weights and optimizer state
    (ZeRO/FSDP shard them over the data-parallel group, tensor x pipeline always); optimizer
    state offloaded to the CPU is already there. Unknown world size: unsharded, an upper bound."""
    world = inp.hw.world.value if inp.hw.world else None
    dp = 1 if world is None else inp.data_parallel(world)
    if inp.shard_group is not None:
        dp = min(dp, inp.shard_group)
    weights = saved * inp.precision.value.weight_bytes / inp.model_parallel
    optimizer = inp.trainable.value * k / inp.model_parallel if save_opt and inp.trainable else 0.0
    if inp.zero_stage >= 1:
        optimizer = 0.0 if inp.offload_optimizer else optimizer / dp
    if inp.zero_stage >= 3:
        weights = 0.0 if inp.offload_params else weights / dp
    return weights + optimizer


def _stall(size: _Size, plan: _Plan, step_s: float | None, led: Ledger) -> _Size:
    """The time the loop stops per save, recorded as ``checkpoint.save_s``."""
    if size.stage_s is not None:
        interval = None if plan.every is None or step_s is None else plan.every * step_s
        size = replace(size, save_s=async_blocking_s(size.stage_s, size.write_s, interval))
    led.put("checkpoint.save_s", size.save_s, "default")
    return size


def _plan(
    ck: Checkpoint, steps: Sourced[int] | None, led: Ledger, defaulted: frozenset[str]
) -> _Plan:
    """Interval and number of saves; only step-based checkpointing has both (``defaulted``:
    the fields a framework's default filled, sourced ``default``)."""
    strategy = (ck.strategy or "steps").strip().lower()
    if strategy in _NO_CHECKPOINTS:
        led.put("checkpoint.saves", 0, "declared")
        return _Plan(saves=0)
    every_steps = finite(ck.every_steps)
    if strategy != "steps" or every_steps is None or every_steps <= 0:
        return _Plan()
    every = interval_steps(every_steps, steps.value if steps else None)
    if every is None or steps is None:
        led.missing("training.max_steps")
    if every is None:
        return _Plan()
    src: Source = "declared" if every_steps >= 1 or steps is None else derived(steps.source)
    if "every_steps" in defaulted:
        src = "default"
    led.put("checkpoint.every_steps", every, src)
    if steps is None:
        return _Plan(every)
    saves = steps.value // every
    led.put("checkpoint.saves", saves, derived(src, steps.source))
    return _Plan(every, saves)


def _kept(ck: Checkpoint, saves: int | None, led: Ledger, defaulted: frozenset[str]) -> int | None:
    keep = ck.keep_last
    if keep is None or keep < 0 or keep > MAX_QUANTITY:  # no limit: every save stays
        return led.put("checkpoint.kept", saves, "estimated")
    kept = keep if saves is None else min(keep, saves)
    return led.put("checkpoint.kept", kept, "default" if "keep_last" in defaulted else "declared")


def _time_costs(
    size: _Size, plan: _Plan, basis: Basis, led: Ledger, step_s: float | None
) -> dict[str, float | int | None]:
    """Overhead share, suggested interval, and the GPU time and money saves cost.

    The suggestion meets the target overhead, which never exceeds TL201's threshold
    (``RuleLimits.checkpoint_overhead``), and is capped at the run's length: past it, the
    advice is "save at the end" (a run short against the cluster's MTBF gains nothing from
    periodic saves)."""
    inp, p, rules, total = basis.inp, basis.p, basis.rules, plan.total
    out: dict[str, float | int | None] = {}
    world = inp.hw.world
    if step_s is not None:
        # asynchronous: the stall is the staging copy alone once the write fits the interval
        stall = size.save_s if size.stage_s is None else size.stage_s
        suggested = suggested_interval(stall, step_s, rules.checkpoint_overhead(p))
        if size.stage_s is not None:
            suggested = max(suggested, math.ceil(size.write_s / step_s))
        if world is not None:
            tau = daly_interval_s(stall, job_mtbf_s(p.gpu_mtbf_hours, world.value))
            optimal = max(1, math.ceil(tau / step_s))
            out["optimal_every_steps"] = led.put(
                "checkpoint.optimal_every_steps", optimal, "default"
            )
            suggested = max(suggested, optimal)
        if total is not None:
            suggested = min(suggested, max(1, total))
        out["suggested_every_steps"] = led.put(
            "checkpoint.suggested_every_steps", suggested, "default"
        )
        if plan.every is not None:
            share = overhead_fraction(size.save_s, plan.every, step_s)
            out["overhead_fraction"] = led.put("checkpoint.overhead_fraction", share, "default")
    if plan.saves == 0:
        out["overhead_fraction"] = led.put("checkpoint.overhead_fraction", 0.0, "declared")
    price = inp.hw.price
    if plan.saves is None or world is None:
        return out
    gpu_h = plan.saves * size.save_s * world.value / 3600.0
    out["overhead_gpu_hours"] = led.put("checkpoint.overhead_gpu_hours", gpu_h, "default")
    if price is not None:
        out["overhead_usd"] = led.put("checkpoint.overhead_usd", gpu_h * price.value, "default")
    return out


def job_checkpoint(
    job: Job, basis: Basis, led: Ledger, steps: Sourced[int] | None, step_s: float | None
) -> CheckpointCost:
    """The job's checkpoint cost, its framework's defaults counting for what it leaves unset
    (``with_defaults``); fields stay None where an input is missing."""
    ck, defaulted = with_defaults(job)
    found = _size(ck, basis.inp, basis.p, led)
    plan = _plan(ck, steps, led, defaulted)
    plan = replace(plan, total=steps.value if steps is not None else None)
    kept = _kept(ck, plan.saves, led, defaulted)
    cost = CheckpointCost(every_steps=plan.every, saves=plan.saves, kept=kept)
    if found is None:
        return cost
    size = _stall(found, plan, step_s, led)
    storage = None if kept is None else kept * size.bytes
    led.put("checkpoint.storage_bytes", storage, size.source)
    update = {"size_bytes": size.bytes, "save_s": size.save_s, "storage_bytes": storage}
    times = _time_costs(size, plan, basis, led, step_s)
    return cost.model_copy(update={**update, **times})
