"""Run length, GPU-hours and dollars, and the cheaper catalog GPUs the job would fit on.

cost = (steps · step time + checkpoint saves) · GPUs · price per GPU-hour (cost-model §4.4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from trainlint.catalog import GpuSpec, gpus
from trainlint.estimate.compute import job_compute
from trainlint.estimate.inputs import Basis, GpuSetup, Inputs, finite, positive, price_of
from trainlint.estimate.ledger import Ledger, Sourced, derived
from trainlint.estimate.memory import job_memory
from trainlint.estimate.params import EstimateParams
from trainlint.job import Alternative, Run, Training

_CHEAPER = 1 - 1e-9  # "cheaper" means cheaper beyond float noise


def run_steps(
    tr: Training, inp: Inputs, tokens_per_step: int | None, led: Ledger
) -> Sourced[int] | None:
    """Optimizer steps in the run: max_steps, else epochs x steps per epoch, else one pass over
    a token budget (``dataset_tokens`` without epochs: pre-training's "train on D tokens").

    Steps per epoch are ceil(samples / global batch), or ceil(tokens / tokens per step) when
    only the dataset's token count is known.
    """
    for declared in (positive(tr.max_steps), positive(tr.total_steps)):
        if declared is not None:
            return _record(led, Sourced(declared, "declared"))
    epochs = finite(tr.epochs)
    epochs = epochs if epochs is not None and epochs > 0 else None
    per_epoch = _steps_per_epoch(tr, inp, tokens_per_step)
    budget = positive(tr.dataset_tokens)
    if epochs is None and budget is not None and tokens_per_step:
        return _record(led, Sourced(max(1, math.ceil(budget / tokens_per_step)), "estimated"))
    if epochs is None or per_epoch is None:
        led.missing("training.max_steps")
        if epochs is not None:
            led.missing("training.dataset_samples")
        return None
    total = epochs * per_epoch.value
    if not math.isfinite(total):  # an absurd epoch count: no usable run length
        led.missing("training.epochs")
        return None
    return _record(led, Sourced(max(1, math.ceil(total)), per_epoch.source))


def _record(led: Ledger, steps: Sourced[int]) -> Sourced[int]:
    led.put("run.steps", steps.value, steps.source)
    return steps


def _steps_per_epoch(tr: Training, inp: Inputs, tokens_per_step: int | None) -> Sourced[int] | None:
    samples, tokens = positive(tr.dataset_samples), positive(tr.dataset_tokens)
    glob = inp.global_batch
    if samples is not None and glob is not None:
        return Sourced(math.ceil(samples / glob.value), derived(glob.source))
    if tokens is not None and tokens_per_step:
        return Sourced(math.ceil(tokens / tokens_per_step), "estimated")
    return None


def run_hours(steps: int, step_s: float, checkpoint_s: float = 0.0) -> float:
    """Wall-clock hours: training steps plus blocking checkpoint saves."""
    return (steps * step_s + checkpoint_s) / 3600.0


@dataclass(frozen=True)
class Restarts:
    """What a failure costs the run: the job's mean time between failures, the time to restart
    from a checkpoint, and the checkpoint interval and save time (None where unknown)."""

    mtbf_s: float
    restart_s: float
    interval_s: float | None = None
    save_s: float | None = None


def failure_s(run_s: float, r: Restarts) -> float:
    """Seconds failures add to a run of ``run_s``: expected failures (run_s / MTBF) times the
    restart and the work lost since the last checkpoint, half an interval on average
    (Young 1974; Daly 2006 Eq. 2's first-order form, T_s/M·(R + (τ + δ)/2)). Without a known
    interval only the restart is counted, a lower bound."""
    lost = ((r.interval_s or 0.0) + (r.save_s or 0.0)) / 2 if r.interval_s else 0.0
    return run_s / r.mtbf_s * (r.restart_s + lost)


def job_run(  # noqa: PLR0913 - the orchestrator's inputs, restarts optional
    inp: Inputs,
    steps: Sourced[int] | None,
    step_s: float | None,
    checkpoint_s: float,
    led: Ledger,
    restarts: Restarts | None = None,
) -> Run:
    """Hours, GPU-hours and USD of the whole run, with the failure allowance of ``restarts``;
    each None where an input is missing."""
    world, price = inp.hw.world, inp.hw.price
    if steps is None or step_s is None or world is None:
        return Run(steps=steps.value if steps else None)
    hours = run_hours(steps.value, step_s, checkpoint_s)
    if restarts is not None:
        hours += failure_s(hours * 3600.0, restarts) / 3600.0
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
    inp: Inputs, p: EstimateParams, steps: int | None, checkpoint_s: float, per_node: int | None
) -> _Priced | None:
    world, price = inp.hw.world, inp.hw.price
    step_s = job_compute(inp, p, Ledger(), per_node).step_time_s
    if world is None or price is None or step_s is None:
        return None
    if steps is None:
        return _Priced(step_s, step_s * world.value * price.value / 3600.0, None, None)
    gpu_hours = run_hours(steps, step_s, checkpoint_s) * world.value
    return _Priced(step_s, gpu_hours * price.value, gpu_hours * price.value, gpu_hours)


def _on(inp: Inputs, gpu: GpuSpec, p: EstimateParams, world: Sourced[int] | None) -> Inputs:
    """The same job on ``world`` x ``gpu``: micro-batch, global batch and steps are unchanged;
    fewer GPUs accumulate more micro-batches per step."""
    memory = Sourced(float(gpu.memory_bytes), "catalog")
    return replace(inp, hw=GpuSetup(gpu, memory, world, price_of(gpu, p)))


def _total_on(inp: Inputs, p: EstimateParams, n: int) -> float | None:
    """Memory per GPU of the job on ``n`` GPUs of any kind: weights, gradients, optimizer
    states and activations depend on the count (sharding), never on the GPU model."""
    return job_memory(
        replace(inp, hw=replace(inp.hw, world=Sourced(n, "estimated"))), p, Ledger()
    ).total_bytes


def _counts(inp: Inputs) -> list[int]:
    """The job's GPU count, then halvings that keep whole micro-batches per step."""
    world, micro, glob = inp.hw.world, inp.micro_batch, inp.global_batch
    if world is None:
        return []
    counts, n, mp = [world.value], world.value // 2, inp.model_parallel
    while micro is not None and glob is not None and n >= mp:
        if n % mp or glob.value % (micro.value * (n // mp)):
            break
        counts.append(n)
        n //= 2
    return counts


def _candidate(
    basis: Basis,
    steps: int | None,
    checkpoint_s: float,
    per_node: int | None,
    total: float | None,
) -> tuple[_Priced, Alternative] | None:
    """``basis.inp`` priced as an alternative, if its ``total`` memory per GPU fits with
    headroom (``RuleLimits.memory_utilization``)."""
    inp, p, rules = basis.inp, basis.p, basis.rules
    gpu, world = inp.hw.gpu, inp.hw.world
    if gpu is None or world is None or total is None:
        return None
    if total > gpu.memory_bytes * rules.memory_utilization(p):
        return None
    priced = _price(inp, p, steps, checkpoint_s, per_node)
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


@dataclass(frozen=True)
class Deadline:
    """How long an alternative's run may take: ``max_hours`` the job's own limit (SLURM
    ``--time``, Kubernetes ``activeDeadlineSeconds``…; None: none stated), ``max_step_s`` the
    job's step time x ``max_alternative_slowdown`` (the wall-clock bound when steps are
    unknown, and the same bound per step when they are)."""

    max_step_s: float
    max_hours: float | None

    def allows(self, priced: _Priced, steps: int | None, checkpoint_s: float) -> bool:
        if priced.step_s > self.max_step_s:
            return False
        if self.max_hours is None or steps is None:
            return True
        return run_hours(steps, priced.step_s, checkpoint_s) <= self.max_hours


def alternatives(
    basis: Basis,
    steps: int | None,
    checkpoint_s: float = 0.0,
    gpus_per_node: int | None = None,
    time_limit_s: float | None = None,
) -> list[Alternative]:
    """Catalog GPUs, at the job's GPU count or fewer, that fit with headroom, cost less and
    finish in time, cheapest first. GPUs without the job's precision (bf16 on V100/T4) or
    without a price are skipped.

    In time: within ``max_alternative_slowdown`` (1.5x) of the job's wall-clock and within its
    ``time_limit_s``; one card for nine days is no alternative to sixteen for five hours,
    however few dollars it saves.

    Compute time ∝ 1/GPUs leaves a run's cost independent of the count; fewer GPUs pay off
    when exposed communication (a small model over many GPUs or across nodes) shrinks with
    them. Counts halve down to the model-parallel size while the global batch still splits
    into whole micro-batches; fewer GPUs keep the micro-batch and accumulate more.
    """
    inp, p = basis.inp, basis.p
    current = _price(inp, p, steps, checkpoint_s, gpus_per_node)
    if current is None or p.max_alternatives == 0:
        return []
    own = inp.hw.gpu.name if inp.hw.gpu else None
    limit = time_limit_s / 3600.0 if time_limit_s is not None and time_limit_s > 0 else None
    deadline = Deadline(current.step_s * p.max_alternative_slowdown, limit)
    found: list[tuple[_Priced, Alternative]] = []
    counts = _counts(inp)
    totals = {n: _total_on(inp, p, n) for n in counts}  # memory per GPU does not depend on it
    for gpu in gpus():
        if inp.hw.gpu is not None and _tpu(gpu) != _tpu(inp.hw.gpu):
            continue  # a TPU job is no CUDA job: XLA code does not move to a GPU, nor back
        best: tuple[_Priced, Alternative] | None = None  # one row per GPU: its cheapest count
        for n in counts:
            if gpu.name == own and n == counts[0]:
                continue
            world = Sourced(n, "estimated")
            other = _on(inp, gpu, p, world)
            on = replace(basis, inp=other)
            candidate = _candidate(on, steps, checkpoint_s, gpus_per_node, totals[n])
            if candidate is None or candidate[0].rank >= current.rank * _CHEAPER:
                continue
            if not deadline.allows(candidate[0], steps, checkpoint_s):
                continue
            if best is None or candidate[0].rank < best[0].rank:
                best = candidate
        if best is not None:
            found.append(best)
    found.sort(key=lambda pair: pair[0].rank)
    return [alt for _, alt in found[: p.max_alternatives]]


def _tpu(gpu: GpuSpec) -> bool:
    return gpu.vendor == "google"
