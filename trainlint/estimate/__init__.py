"""Estimates: what a training job will cost, from its config and the catalogs (DESIGN §4).

``estimate(job)`` is pure: it returns a new ``Estimates`` and leaves the job untouched. Each
number carries its source in ``Estimates.sources``; inputs that left a number unknown are named
in ``Estimates.unknown`` and guessed inputs in ``Estimates.assumed``. Formulas and sources are in
docs/estimates.md.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from trainlint.catalog import (
    GpuSpec,
    ModelSpecEntry,
    gpus,
    models,
    params_from_dims,
    resolve_gpu,
    resolve_model,
)
from trainlint.derive import model_parallel
from trainlint.estimate.checkpoint import job_checkpoint, job_mtbf_s
from trainlint.estimate.compute import job_compute
from trainlint.estimate.cost import Restarts, alternatives, job_run, run_steps
from trainlint.estimate.inputs import MAX_QUANTITY, Basis, Inputs, finite, resolve
from trainlint.estimate.ledger import Ledger
from trainlint.estimate.memory import job_memory
from trainlint.estimate.params import EstimateParams, RuleLimits
from trainlint.estimate.whatif import (
    memory_fixes,
    mixed_precision,
    recompute_cost,
    without_recompute,
)
from trainlint.job import CheckpointCost, Estimates, Job

__all__ = [
    "EstimateParams",
    "GpuSpec",
    "ModelSpecEntry",
    "RuleLimits",
    "estimate",
    "gpus",
    "models",
    "params_from_dims",
    "resolve_gpu",
    "resolve_model",
]


def _record_inputs(inp: Inputs, led: Ledger) -> None:
    """Sources of the values copied straight from the resolved inputs."""
    for key, known in (("params", inp.params), ("trainable_params", inp.trainable)):
        if known is None:
            led.missing("model.params")
        else:
            led.put(key, known.value, known.source)
    if inp.hw.gpu is not None:
        led.put("gpu", inp.hw.gpu.name, inp.hw.gpu_source)
    if inp.hw.world is not None:
        led.put("gpus", inp.hw.world.value, inp.hw.world.source)
    if inp.hw.price is not None:
        led.put("price_per_gpu_hour", inp.hw.price.value, inp.hw.price.source)
    elif inp.hw.gpu is not None:
        led.missing("price_per_gpu_hour")


def _fleet_fabric(inp: Inputs, p: EstimateParams) -> EstimateParams:
    """The assumptions with the network across nodes the job's fleet pool states (Gb/s as
    vendors quote it, in bytes per second), in place of the default."""
    links = inp.hw.links
    if links is None or links.fabric_gbps is None:
        return p
    return p.model_copy(update={"network_bytes_per_s": links.fabric_gbps * 1e9 / 8})


def measured_step_time(job: Job, world: int | None) -> float | None:
    """The median step time a fresh probe measured at the job's world size, or None.

    A measurement run with stand-in dimensions (``workload.overrides``), one that ran out of
    memory, or a stale one (its fingerprint no longer matches: ``fresh`` false) gives None.
    """
    m: dict[str, Any] = job.measurements
    if world is None or m.get("fresh") is not True:
        return None
    workload = m.get("workload")
    if isinstance(workload, dict) and workload.get("overrides"):
        return None
    sizes = m.get("world_sizes")
    entry = sizes.get(str(world)) if isinstance(sizes, dict) else None
    if not isinstance(entry, dict) or entry.get("oom") is True:
        return None
    step = entry.get("step_time_s")
    median = step.get("median") if isinstance(step, dict) else None
    if isinstance(median, bool) or not isinstance(median, int | float) or median <= 0:
        return None
    return finite(float(median)) if median <= MAX_QUANTITY else None


def _restarts(
    inp: Inputs, p: EstimateParams, ckpt: CheckpointCost, step_s: float | None
) -> Restarts | None:
    """The failure allowance's inputs: the job's MTBF and the checkpoint interval it keeps."""
    world = inp.hw.world
    if world is None:
        return None
    every = ckpt.every_steps
    interval = every * step_s if every and step_s else None
    mtbf = job_mtbf_s(p.gpu_mtbf_hours, world.value)
    return Restarts(mtbf, p.restart_s, interval, ckpt.save_s)


def _impossible_layout(job: Job) -> bool:
    world = job.resources.world_size
    return world is not None and world > 0 and world % model_parallel(job) != 0


def estimate(
    job: Job, params: EstimateParams | None = None, limits: RuleLimits | None = None
) -> Estimates:
    """Memory per GPU, step time, checkpoint cost, run cost and cheaper GPUs for ``job``;
    what it suggests (an interval, a GPU, a fix) meets the rules' thresholds in ``limits``.

    A layout that cannot start (tensor x pipeline x context parallel sizes that do not divide
    the GPUs launched, TL108) is not estimated: dividing its memory by ranks that do not exist
    would invent a fit."""
    if _impossible_layout(job):
        return Estimates(unknown=["parallel layout (tensor x pipeline x context does not divide "
                                  "the world size)"])  # fmt: skip
    p, rules = params or EstimateParams(), limits or RuleLimits()
    inp = resolve(job, p)
    p = _fleet_fabric(inp, p)
    led = Ledger()
    _record_inputs(inp, led)
    memory = job_memory(inp, p, led)
    per_node = inp.hw.per_node.value if inp.hw.per_node else None
    compute = job_compute(inp, p, led, per_node)
    measured = measured_step_time(job, inp.hw.world.value if inp.hw.world else None)
    if measured is not None:  # a fresh probe at this world size replaces the estimate
        step = led.put("step_time_s", measured, "measured")
        compute = dataclasses.replace(compute, step_time_s=step)
    steps = run_steps(job.training, inp, compute.tokens_per_step, led)
    basis = Basis(inp, p, rules)
    checkpoint = job_checkpoint(job.checkpoint, basis, led, steps, compute.step_time_s)
    saving_s = (checkpoint.saves or 0) * (checkpoint.save_s or 0.0)
    run = job_run(
        inp,
        steps,
        compute.step_time_s,
        saving_s,
        led,
        _restarts(inp, p, checkpoint, compute.step_time_s),
    )
    options = alternatives(
        basis, steps.value if steps else None, saving_s, per_node, job.resources.time_limit_s
    )
    if options:
        led.put("alternatives", options, "default")
    fixes = memory_fixes(inp, p, rules, memory)
    if fixes:
        led.put("memory_fixes", fixes, "default")
    memory = without_recompute(inp, p, led, memory)
    n_steps = steps.value if steps else None
    recompute = recompute_cost(basis, led, n_steps, compute.step_time_s, per_node)
    mixed = mixed_precision(basis, led, n_steps, compute.step_time_s, per_node)
    return Estimates(
        gpu=inp.hw.gpu.name if inp.hw.gpu else None,
        gpus=inp.hw.world.value if inp.hw.world else None,
        params=inp.params.value if inp.params else None,
        trainable_params=inp.trainable.value if inp.trainable else None,
        memory=memory,
        step_time_s=compute.step_time_s,
        comm=compute.comm,
        tokens_per_step=compute.tokens_per_step,
        flops_per_token=compute.flops_per_token,
        price_per_gpu_hour=inp.hw.price.value if inp.hw.price else None,
        run=run,
        checkpoint=checkpoint,
        alternatives=options,
        memory_fixes=fixes,
        recompute=recompute,
        mixed_precision=mixed,
        sources=dict(led.sources),
        unknown=list(led.unknown),
        assumed=dict(inp.assumed),
    )
