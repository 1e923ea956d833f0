"""Run length, GPU-hours and dollars, and the cheaper catalog GPUs the job would fit on.

cost = (steps · step time + checkpoint saves) · GPUs · price per GPU-hour (cost-model §4.4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from trainlint.estimate.catalog import GpuSpec, gpus
from trainlint.estimate.compute import job_compute
from trainlint.estimate.inputs import Hardware, Inputs, finite, positive, price_of
from trainlint.estimate.ledger import Fact, Ledger, derived
from trainlint.estimate.memory import job_memory
from trainlint.estimate.params import EstimateParams
from trainlint.job import Alternative, Run, Training

_CHEAPER = 1 - 1e-9  # "cheaper" means cheaper beyond float noise


def run_steps(
    tr: Training, inp: Inputs, tokens_per_step: int | None, led: Ledger
) -> Fact[int] | None:
    """Optimizer steps in the run: max_steps, else epochs x steps per epoch.

    Steps per epoch are ceil(samples / global batch), or ceil(tokens / tokens per step) when
    only the dataset's token count is known.
    """
    for declared in (positive(tr.max_steps), positive(tr.total_steps)):
        if declared is not None:
            return _record(led, Fact(declared, "declared"))
    epochs = finite(tr.epochs)
    epochs = epochs if epochs is not None and epochs > 0 else None
    per_epoch = _steps_per_epoch(tr, inp, tokens_per_step)
    if epochs is None or per_epoch is None:
        led.missing("training.max_steps")
        if epochs is not None:
            led.missing("training.dataset_samples")
        return None
    return _record(led, Fact(max(1, math.ceil(epochs * per_epoch.value)), per_epoch.source))


def _record(led: Ledger, steps: Fact[int]) -> Fact[int]:
    led.put("run.steps", steps.value, steps.source)
    return steps


def _steps_per_epoch(tr: Training, inp: Inputs, tokens_per_step: int | None) -> Fact[int] | None:
    samples, tokens = positive(tr.dataset_samples), positive(tr.dataset_tokens)
    glob = inp.global_batch
    if samples is not None and glob is not None:
        return Fact(math.ceil(samples / glob.value), derived(glob.source))
    if tokens is not None and tokens_per_step:
        return Fact(math.ceil(tokens / tokens_per_step), "estimated")
    return None


def run_hours(steps: int, step_s: float, checkpoint_s: float = 0.0) -> float:
    """Wall-clock hours: training steps plus blocking checkpoint saves."""
    return (steps * step_s + checkpoint_s) / 3600.0


def job_run(
    inp: Inputs, steps: Fact[int] | None, step_s: float | None, checkpoint_s: float, led: Ledger
) -> Run:
    """Hours, GPU-hours and USD of the whole run; each None where an input is missing."""
    world, price = inp.hw.world, inp.hw.price
    if steps is None or step_s is None or world is None:
        return Run(steps=steps.value if steps else None)
    hours = run_hours(steps.value, step_s, checkpoint_s)
    gpu_hours = hours * world.value
    usd = None if price is None else gpu_hours * price.value
    if price is None:
        led.missing("price_per_gpu_hour")
    for key, value in (("hours", hours), ("gpu_hours", gpu_hours), ("usd", usd)):
        led.put(f"run.{key}", value, "default")
    return Run(steps=steps.value, hours=hours, gpu_hours=gpu_hours, usd=usd)


@dataclass(frozen=True)
class _Priced:
    """One configuration's price: ``rank`` is run USD when steps are known, else USD/step."""

    step_s: float
    rank: float
    usd: float | None
    gpu_hours: float | None


def _price(
    inp: Inputs, p: EstimateParams, steps: int | None, checkpoint_s: float
) -> _Priced | None:
    world, price = inp.hw.world, inp.hw.price
    step_s = job_compute(inp, p, Ledger()).step_time_s
    if world is None or price is None or step_s is None:
        return None
    if steps is None:
        return _Priced(step_s, step_s * world.value * price.value / 3600.0, None, None)
    gpu_hours = run_hours(steps, step_s, checkpoint_s) * world.value
    return _Priced(step_s, gpu_hours * price.value, gpu_hours * price.value, gpu_hours)


def _on(inp: Inputs, gpu: GpuSpec, p: EstimateParams) -> Inputs:
    """The same job on ``gpu`` at the same count: batch sizes and steps are unchanged."""
    memory = Fact(float(gpu.memory_bytes), "catalog")
    return replace(inp, hw=Hardware(gpu, memory, inp.hw.world, price_of(gpu, p)))


def _candidate(
    inp: Inputs, p: EstimateParams, steps: int | None, checkpoint_s: float
) -> tuple[_Priced, Alternative] | None:
    gpu, world = inp.hw.gpu, inp.hw.world
    total = job_memory(inp, p, Ledger()).total_bytes
    if gpu is None or world is None or total is None:
        return None
    if total > gpu.memory_bytes * (1 - p.headroom):
        return None
    priced = _price(inp, p, steps, checkpoint_s)
    if priced is None or inp.hw.price is None:
        return None
    alt = Alternative(
        gpu=gpu.name,
        gpus=world.value,
        memory_bytes=gpu.memory_bytes,
        memory_utilization=total / gpu.memory_bytes,
        usd=priced.usd,
        gpu_hours=priced.gpu_hours,
        step_time_s=priced.step_s,
        price_per_gpu_hour=inp.hw.price.value,
    )
    return priced, alt


def alternatives(
    inp: Inputs, p: EstimateParams, steps: int | None, checkpoint_s: float = 0.0
) -> list[Alternative]:
    """Catalog GPUs, at the job's GPU count, that fit with headroom and cost less, cheapest
    first. GPUs without the job's precision (bf16 on V100/T4) or without a price are skipped.

    Fewer GPUs are not offered: with step time ∝ 1/GPUs the run's cost does not depend on the
    count, so only a communication model can make fewer GPUs cheaper.
    """
    current = _price(inp, p, steps, checkpoint_s)
    if current is None or p.max_alternatives == 0:
        return []
    own = inp.hw.gpu.name if inp.hw.gpu else None
    found: list[tuple[_Priced, Alternative]] = []
    for gpu in gpus():
        if gpu.name == own:
            continue
        candidate = _candidate(_on(inp, gpu, p), p, steps, checkpoint_s)
        if candidate is not None and candidate[0].rank < current.rank * _CHEAPER:
            found.append(candidate)
    found.sort(key=lambda pair: pair[0].rank)
    return [alt for _, alt in found[: p.max_alternatives]]
