"""The same job with one thing changed: the estimates the performance rules compare against.

- **Without recomputation** (TL107): memory per GPU with full activation recomputation off, and
  the step time the second forward pass adds: full recomputation executes 8·N instead of 6·N
  FLOPs per token (``compute.RECOMPUTE_FACTOR`` = 4/3, cost-model §4.2), so about a quarter of
  each compute-bound step. Selective recomputation only re-runs the attention scores, which
  the estimator already treats as free (flash attention keeps none), so it gets no entry.
- **Fixes for a job that does not fit** (TL102): ZeRO-3 / FSDP full sharding, full
  recomputation, and the largest smaller micro-batch, each kept only when it alone fits with
  the alternatives' headroom; ZeRO-3 with recomputation when neither fits alone.
- **Mixed precision** (TL105): a job declared fp32 re-estimated at the GPU's 16-bit tensor-core
  peak (bf16, else fp16): the step time at the same MFU, and the GPU-hours and dollars saved.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from trainlint.estimate.compute import job_compute
from trainlint.estimate.inputs import Basis, Inputs
from trainlint.estimate.ledger import Ledger, Sourced
from trainlint.estimate.memory import job_memory
from trainlint.estimate.params import EstimateParams, RuleLimits
from trainlint.estimate.precision import PRECISIONS
from trainlint.job import Memory, MemoryFix, MixedPrecisionCost, RecomputeCost

_Cost = TypeVar("_Cost", RecomputeCost, MixedPrecisionCost)


def _no_recompute(inp: Inputs) -> Inputs:
    return replace(inp, recompute=False, recompute_mode="none")


def _run_share(inp: Inputs, steps: int | None, seconds_per_step: float) -> tuple[float, float]:
    """GPU-hours and USD of ``seconds_per_step`` over the run; NaN where unknown."""
    world, price = inp.hw.world, inp.hw.price
    if steps is None or world is None:
        return float("nan"), float("nan")
    gpu_hours = steps * seconds_per_step * world.value / 3600.0
    usd = gpu_hours * price.value if price is not None else float("nan")
    return gpu_hours, usd


def _known(value: float) -> float | None:
    return None if value != value else value  # NaN → unknown


def without_recompute(inp: Inputs, p: EstimateParams, led: Ledger, memory: Memory) -> Memory:
    """``memory`` with the total and utilisation it would have without full recomputation."""
    if inp.recompute_mode != "full":
        return memory
    other = job_memory(_no_recompute(inp), p, Ledger())
    total = led.put("memory.total_without_recompute_bytes", other.total_bytes, "default")
    util = led.put("memory.utilization_without_recompute", other.utilization, "default")
    return memory.model_copy(
        update={"total_without_recompute_bytes": total, "utilization_without_recompute": util}
    )


def recompute_cost(
    basis: Basis, led: Ledger, steps: int | None, step_s: float | None, per_node: int | None
) -> RecomputeCost:
    """The step time full recomputation adds and its share of the run (GPU-hours, USD)."""
    inp, p = basis.inp, basis.p
    if inp.recompute_mode != "full":
        return RecomputeCost()
    cost = RecomputeCost(mode="full")
    without = job_compute(_no_recompute(inp), p, Ledger(), per_node).step_time_s
    if step_s is None or without is None or step_s <= 0:
        return cost
    overhead_s = max(0.0, step_s - without)
    gpu_hours, usd = _run_share(inp, steps, overhead_s)
    values = {
        "step_time_without_s": without,
        "overhead_fraction": overhead_s / step_s,
        "overhead_gpu_hours": _known(gpu_hours),
        "overhead_usd": _known(usd),
    }
    return _recorded(cost, "recompute", values, led)


def _fix(
    inp: Inputs, p: EstimateParams, fits: float, change: str, gpu_bytes: float
) -> MemoryFix | None:
    total = job_memory(inp, p, Ledger()).total_bytes
    if total is None or total > gpu_bytes * fits:
        return None
    micro = inp.micro_batch.value if change == "micro_batch" and inp.micro_batch else None
    return MemoryFix(
        change=change, total_bytes=total, utilization=total / gpu_bytes, micro_batch_size=micro
    )


def memory_fixes(
    inp: Inputs, p: EstimateParams, rules: RuleLimits, memory: Memory
) -> list[MemoryFix]:
    """Changes that make a job that does not fit (above TL102's threshold, by default the
    GPU's memory) fit with headroom, cheapest first (see module doc)."""
    gpu_bytes, util = memory.gpu_bytes, memory.utilization
    if not gpu_bytes or util is None or util <= rules.max_memory_utilization:
        return []
    fits = rules.memory_utilization(p)
    world = inp.hw.world.value if inp.hw.world else 1
    zero3 = (
        replace(inp, zero_stage=3) if inp.zero_stage < 3 and inp.data_parallel(world) > 1 else None
    )
    full = (
        replace(inp, recompute=True, recompute_mode="full")
        if inp.recompute_mode != "full"
        else None
    )
    fixes = [
        _fix(zero3, p, fits, "zero3", gpu_bytes) if zero3 else None,
        _fix(full, p, fits, "recompute", gpu_bytes) if full else None,
    ]
    micro = inp.micro_batch.value if inp.micro_batch else 1
    size = micro // 2
    while size >= 1:
        smaller = replace(inp, micro_batch=Sourced(size, "estimated"))
        fix = _fix(smaller, p, fits, "micro_batch", gpu_bytes)
        if fix is not None:
            fixes.append(fix)
            break
        size //= 2
    found = [fix for fix in fixes if fix is not None]
    if not found and zero3 is not None and full is not None:
        both = replace(zero3, recompute=True, recompute_mode="full")
        found = [fix for fix in [_fix(both, p, fits, "zero3+recompute", gpu_bytes)] if fix]
    return found


def mixed_precision(
    basis: Basis, led: Ledger, steps: int | None, step_s: float | None, per_node: int | None
) -> MixedPrecisionCost:
    """A fp32 job (declared, or its framework's default: not the estimator's guess, which
    ``assumed`` records) at the GPU's 16-bit peak; empty for any other precision."""
    inp, p = basis.inp, basis.p
    gpu = inp.hw.gpu
    guessed = "training.precision" in inp.assumed
    if gpu is None or guessed or inp.precision.value.name != "fp32":
        return MixedPrecisionCost()
    fp32 = gpu.peak_flops("fp32")
    name = next((n for n in ("bf16", "fp16") if gpu.peak_flops(n)), None)
    if name is None or not fp32:
        return MixedPrecisionCost()
    ratio = led.put("mixed_precision.peak_ratio", (gpu.peak_flops(name) or 0.0) / fp32, "catalog")
    cost = MixedPrecisionCost(precision=name, peak_ratio=ratio)
    other = replace(inp, precision=Sourced(PRECISIONS[name], "default"))
    faster = job_compute(other, p, Ledger(), per_node).step_time_s
    if step_s is None or faster is None or faster <= 0:
        return cost
    gpu_hours, usd = _run_share(inp, steps, max(0.0, step_s - faster))
    values = {
        "step_time_s": faster,
        "speedup": step_s / faster,
        "saved_gpu_hours": _known(gpu_hours),
        "saved_usd": _known(usd),
    }
    return _recorded(cost, "mixed_precision", values, led)


def _recorded(cost: _Cost, prefix: str, values: dict[str, float | None], led: Ledger) -> _Cost:
    """``cost`` with ``values`` set, each recorded in the ledger with a ``default`` source."""
    for key, value in values.items():
        led.put(f"{prefix}.{key}", value, "default")
    return cost.model_copy(update=values)
