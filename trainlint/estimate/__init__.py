"""Estimates: what a training job will cost, from its config and the catalogs (DESIGN §4).

``estimate(job)`` is pure: it returns a new ``Estimates`` and leaves the job untouched. Each
number carries its source in ``Estimates.sources``; inputs that left a number unknown are named
in ``Estimates.unknown`` and guessed inputs in ``Estimates.assumed``. Formulas and sources are in
docs/estimates.md.
"""

from __future__ import annotations

import dataclasses

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
from trainlint.estimate.cost import alternatives
from trainlint.estimate.inputs import Basis
from trainlint.estimate.ledger import Ledger
from trainlint.estimate.params import EstimateParams, RuleLimits
from trainlint.estimate.ranges import box, evaluate, measured_step_time, mfu_interval, spread
from trainlint.estimate.whatif import memory_fixes, mixed_precision, recompute_cost
from trainlint.fleet import hardware
from trainlint.job import Estimates, Job

__all__ = [
    "EstimateParams",
    "GpuSpec",
    "ModelSpecEntry",
    "RuleLimits",
    "estimate",
    "gpus",
    "measured_step_time",
    "models",
    "params_from_dims",
    "resolve_gpu",
    "resolve_model",
]


def _fleet_fabric(job: Job, p: EstimateParams) -> EstimateParams:
    """The assumptions with the network across nodes the job's fleet pool states (Gb/s as
    vendors quote it, in bytes per second), in place of the default."""
    model = job.resources.gpu.model
    stated = resolve_gpu(model) if model else None
    links = hardware(p.fleet, job.resources.placement, stated).interconnect
    if links is None or links.fabric_gbps is None:
        return p
    return p.model_copy(update={"network_bytes_per_s": links.fabric_gbps * 1e9 / 8})


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
    rules = limits or RuleLimits()
    p = _fleet_fabric(job, params or EstimateParams())
    inputs = box(job)
    led = Ledger()
    core = evaluate(job, p, rules, inputs.point(), led)
    inp, compute, steps, memory = core.inp, core.compute, core.steps, core.memory
    guessed_world = inp.hw.world is not None and inp.hw.world.source == "default"
    inputs = dataclasses.replace(
        inputs, mfu=mfu_interval(inp, p), world=inputs.world if guessed_world else None
    )
    ranges = spread(job, (p, rules), inputs, core)
    basis = Basis(inp, p, rules)
    per_node = inp.hw.per_node.value if inp.hw.per_node else None
    saving_s = (core.checkpoint.saves or 0) * (core.checkpoint.save_s or 0.0)
    options = alternatives(
        basis, steps.value if steps else None, saving_s, per_node, job.resources.time_limit_s
    )
    if options:
        led.put("alternatives", options, "default")
    fixes = memory_fixes(inp, p, rules, memory)
    if fixes:
        led.put("memory_fixes", fixes, "default")
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
        tokens_per_step=None if compute.per_sample else compute.tokens_per_step,
        flops_per_token=None if compute.per_sample else compute.flops_per_token,
        samples_per_step=compute.tokens_per_step if compute.per_sample else None,
        flops_per_sample=compute.flops_per_token if compute.per_sample else None,
        price_per_gpu_hour=inp.hw.price.value if inp.hw.price else None,
        run=core.run,
        per_1000_steps=core.per_1000_steps,
        checkpoint=core.checkpoint,
        alternatives=options,
        memory_fixes=fixes,
        recompute=recompute,
        mixed_precision=mixed,
        sources=dict(led.sources),
        unknown=list(led.unknown),
        assumed=dict(inp.assumed),
        ranges=ranges,
    )
