"""Ranges instead of silence: a plausible interval for each input a job leaves unknown or
uncertain, and the interval of each estimate over them (issue 21 item 2; docs/estimates.md,
"Ranges").

The uncertain inputs are the sequence length (unstated: from a short fine-tuning length up to
the model's context), the world size (GPUs per node unstated: 1 to 8 per node, nodes as stated
or one) and the MFU (always a band unless a probe measured the step time). Each estimate is
monotone in each input, so its extremes lie on the corners of the input box: the estimator
runs once at the most likely point and once per corner (at most 2³ = 8), and
``Estimates.ranges`` keeps ``{pointer: [low, high]}`` for every number whose ends differ.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trainlint.catalog import ModelSpecEntry, resolve_sample_model
from trainlint.catalog import resolve_model as _resolve_model
from trainlint.derive import model_parallel
from trainlint.estimate.checkpoint import job_checkpoint, job_mtbf_s
from trainlint.estimate.compute import Compute, job_band, job_compute
from trainlint.estimate.cost import Restarts, job_run, run_steps
from trainlint.estimate.inputs import (
    MAX_QUANTITY,
    Basis,
    Guess,
    Inputs,
    finite,
    positive,
    resolve,
    with_guess,
)
from trainlint.estimate.ledger import Ledger, Sourced
from trainlint.estimate.memory import job_memory
from trainlint.estimate.mfu import Band
from trainlint.estimate.params import EstimateParams, RuleLimits
from trainlint.estimate.whatif import without_recompute
from trainlint.job import CheckpointCost, Job, Memory, PerSteps, Run

# Context lengths (config.json ``max_position_embeddings``/``n_positions``) by catalog name
# prefix, the more specific first (Llama-3.1 before Llama-3): the longest sequence a job on the
# model plausibly trains on (Qwen2/2.5: the native context of the model cards, without YaRN).
_CONTEXT: tuple[tuple[str, int], ...] = (
    ("GPT-2", 1024),
    ("Pythia", 2048),
    ("OLMo-2", 4096),
    ("OLMo", 2048),
    ("Llama-2", 4096),
    ("Llama-3.1", 131072),
    ("Llama-3.2", 131072),
    ("Llama-3", 8192),
    ("Mistral-7B", 32768),
    ("Mixtral-8x22B", 65536),
    ("Mixtral", 32768),
    ("Qwen3", 40960),
    ("Qwen2", 32768),
    ("Gemma-2", 8192),
    ("Gemma-3-1B", 32768),
    ("Gemma-3", 131072),
    ("Phi-3", 4096),
    ("DeepSeek-LLM", 4096),
    ("DeepSeek-V", 163840),
)
UNKNOWN_CONTEXT = 4096
"""The longest sequence assumed for a model outside the catalog (Llama 2's context)."""
SHORT_SEQ = 512
"""The shortest plausible training sequence: BERT's, and a common short fine-tuning length."""
LIKELY_SEQ = 2048
"""The most likely sequence length when none is stated: axolotl's and litgpt's usual length,
LLaMA's pre-training context; capped at the model's context."""
MAX_PER_NODE = 8
"""The most GPUs one node holds (DGX/HGX, p4d/p5, a3): a launcher that does not say how many
GPUs each node runs starts 1 to 8."""

# Pointers into ``estimates`` that get a range, and how to read each from one evaluation.
POINTERS = (
    "/gpus",
    "/step_time_s",
    "/tokens_per_step",
    "/samples_per_step",
    "/memory/total_bytes",
    "/memory/utilization",
    "/memory/utilization_without_recompute",
    "/comm/fraction",
    "/checkpoint/overhead_fraction",
    "/checkpoint/overhead_gpu_hours",
    "/checkpoint/overhead_usd",
    "/run/hours",
    "/run/gpu_hours",
    "/run/usd",
    "/per_1000_steps/hours",
    "/per_1000_steps/gpu_hours",
    "/per_1000_steps/usd",
)


Interval = Band
"""An input's plausible values: its ends and the most likely one between them (the MFU band's
shape, for every uncertain input)."""

_PATHS = tuple((pointer, pointer.strip("/").split("/")) for pointer in POINTERS)


@dataclass(frozen=True)
class Box:
    """The uncertain inputs of one job; None where the job states the input (or nothing
    bounds it)."""

    seq_len: Interval | None = None
    world: Interval | None = None
    mfu: Interval | None = None

    def point(self) -> Guess:
        """The most likely values: where the point estimates are computed."""
        return Guess(
            seq_len=int(self.seq_len.point) if self.seq_len else None,
            world=int(self.world.point) if self.world else None,
        )

    def corners(self) -> Iterator[tuple[Guess, list[float | None]]]:
        """Every combination of the ends of the uncertain inputs (at most 8), grouped by
        sequence length and world size: the MFU changes only the step time and what follows
        from it, so each group resolves the inputs and sizes the memory once."""
        ends = [
            [None] if axis is None else sorted({axis.low, axis.high})
            for axis in (self.seq_len, self.world)
        ]
        mfus: list[float | None] = [None] if self.mfu is None else [self.mfu.low, self.mfu.high]
        for seq, world in itertools.product(*ends):
            guess = Guess(
                seq_len=None if seq is None else int(seq),
                world=None if world is None else int(world),
            )
            yield guess, mfus


@dataclass(frozen=True)
class Core:
    """The numbers one evaluation of the job gives: what the point estimate reports and the
    corners bound."""

    inp: Inputs
    memory: Memory
    compute: Compute
    steps: Sourced[int] | None
    checkpoint: CheckpointCost
    run: Run
    per_1000_steps: PerSteps

    def values(self) -> dict[str, float]:
        """The ranged numbers of this evaluation, by pointer; unknown ones left out."""
        per_sample = self.compute.per_sample
        roots: dict[str, Any] = {
            "gpus": self.inp.hw.world.value if self.inp.hw.world else None,
            "step_time_s": self.compute.step_time_s,
            "tokens_per_step": None if per_sample else self.compute.tokens_per_step,
            "samples_per_step": self.compute.tokens_per_step if per_sample else None,
            "memory": self.memory,
            "comm": self.compute.comm,
            "checkpoint": self.checkpoint,
            "run": self.run,
            "per_1000_steps": self.per_1000_steps,
        }
        found: dict[str, float] = {}
        for pointer, (root, *fields) in _PATHS:
            node = roots[root]
            for name in fields:
                node = getattr(node, name, None)
            if isinstance(node, int | float) and not isinstance(node, bool):
                found[pointer] = float(node)
        return found


@dataclass(frozen=True)
class Sized:
    """What one sequence length and world size fix whatever the MFU: the resolved inputs and
    the memory per GPU."""

    inp: Inputs
    memory: Memory


def record_inputs(inp: Inputs, led: Ledger) -> None:
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


def size(job: Job, p: EstimateParams, inp: Inputs, led: Ledger) -> Sized:
    """The memory per GPU of ``job`` on the resolved inputs ``inp``."""
    return Sized(inp, without_recompute(inp, p, led, job_memory(inp, p, led)))


def timed(
    job: Job, basis: tuple[EstimateParams, RuleLimits], sized: Sized, mfu: float | None, led: Ledger
) -> Core:
    """Step time, checkpoint cost and run cost of ``sized`` at ``mfu`` (None: the pack's)."""
    p, rules = basis
    inp = sized.inp if mfu is None else dataclasses.replace(sized.inp, mfu=mfu)
    per_node = inp.hw.per_node.value if inp.hw.per_node else None
    compute = job_compute(inp, p, led, per_node)
    measured = measured_step_time(job, inp.hw.world.value if inp.hw.world else None)
    if measured is not None:  # a fresh probe at this world size replaces the estimate
        step = led.put("step_time_s", measured, "measured")
        compute = dataclasses.replace(compute, step_time_s=step)
    steps = run_steps(job.training, inp, compute.tokens_per_step, led)
    checkpoint = job_checkpoint(
        job.checkpoint, Basis(inp, p, rules), led, steps, compute.step_time_s
    )
    saving_s = (checkpoint.saves or 0) * (checkpoint.save_s or 0.0)
    restarts = restarts_of(inp, p, checkpoint, compute.step_time_s)
    run = job_run(inp, steps, compute.step_time_s, saving_s, led, restarts)
    thousand = per_thousand_steps(inp, compute.step_time_s, checkpoint, led)
    return Core(inp, sized.memory, compute, steps, checkpoint, run, thousand)


def restarts_of(
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


THOUSAND = Sourced(1000, "declared")


def per_thousand_steps(
    inp: Inputs, step_s: float | None, checkpoint: CheckpointCost, led: Ledger
) -> PerSteps:
    """Hours, GPU-hours and USD of 1,000 steps with the saves they include: what a run of
    unknown length costs per unit of progress."""
    every, save_s = checkpoint.every_steps, checkpoint.save_s or 0.0
    saving_s = (THOUSAND.value // every) * save_s if every else 0.0
    scratch = Ledger()  # job_run writes run.*; these are per_1000_steps.*
    thousand = job_run(inp, THOUSAND, step_s, saving_s, scratch)
    for key in ("hours", "gpu_hours", "usd"):
        source = scratch.sources.get(f"run.{key}")
        if source is not None:
            led.put(f"per_1000_steps.{key}", getattr(thousand, key), source)
    return PerSteps(hours=thousand.hours, gpu_hours=thousand.gpu_hours, usd=thousand.usd)


def evaluate(job: Job, p: EstimateParams, rules: RuleLimits, guess: Guess, led: Ledger) -> Core:
    """Memory, step time, checkpoint cost and run cost of ``job`` with ``guess`` filling its
    unknown inputs; sources and gaps go to ``led``."""
    inp = resolve(job, p, guess)
    record_inputs(inp, led)
    return timed(job, (p, rules), size(job, p, inp, led), guess.mfu, led)


def context_of(entry: ModelSpecEntry | None) -> int:
    """The model's context length, or ``UNKNOWN_CONTEXT`` outside the catalog."""
    if entry is None:
        return UNKNOWN_CONTEXT
    for prefix, context in _CONTEXT:
        if entry.name.startswith(prefix):
            return context
    return UNKNOWN_CONTEXT


def _seq_len(job: Job) -> Interval | None:
    """Unstated sequence length: ``SHORT_SEQ`` up to the model's context, most likely
    ``LIKELY_SEQ`` (each capped at the context)."""
    if positive(job.model.seq_len) is not None:
        return None
    entry = _resolve_model(job.model.name) if job.model.name else None
    if entry is None and job.model.name and resolve_sample_model(job.model.name):
        return None  # an image or audio model has no sequence length
    context = context_of(entry)
    return Interval(min(SHORT_SEQ, context), min(LIKELY_SEQ, context), context)


def _world(job: Job) -> Interval | None:
    """Unstated world size and GPUs per node: 1 to ``MAX_PER_NODE`` GPUs on each stated node
    (one node when unstated); most likely full nodes when the job is launched for several
    processes or nodes, else one GPU (``python train.py``). Never fewer GPUs than one model
    replica spans (tensor x pipeline x context parallel)."""
    res = job.resources
    if positive(res.world_size) is not None or positive(res.gpus_per_node) is not None:
        return None
    nodes = positive(res.nodes) or 1
    kind = (job.launcher.kind or "").lower()
    single = kind in ("", "python") and positive(res.nodes) is None
    replica = positive(model_parallel(job))
    if replica is None:  # an absurd layout bounds nothing
        return None
    low, high = max(nodes, replica), max(nodes * MAX_PER_NODE, replica)
    return Interval(low, low if single else high, high)


def mfu_interval(inp: Inputs, p: EstimateParams) -> Interval:
    """The utilisation band of published runs like the job (``job_band``); an org's ``mfu``
    moves its point, and the ends keep their ratio to it."""
    band = job_band(inp)
    if p.mfu is None:
        return band
    scale = p.mfu / band.point
    return Interval(band.low * scale, p.mfu, min(1.0, band.high * scale))


def box(job: Job) -> Box:
    """The uncertain sequence length and world size of ``job`` (the MFU band needs the
    resolved inputs: ``mfu_interval``)."""
    return Box(seq_len=_seq_len(job), world=_world(job))


def spread(
    job: Job, basis: tuple[EstimateParams, RuleLimits], inputs: Box, point: Core
) -> dict[str, list[float]]:
    """``{pointer: [low, high]}`` over the corners of ``inputs`` and the point, for each number
    known at the point whose ends differ. A number unknown at some corner keeps the point's
    value there (the corner lies outside what the formulas cover).

    Corners are skipped where they cannot move a number: none when the point knows neither
    memory nor step time, and no MFU ends without a step time."""
    seen = {key: [value, value] for key, value in point.values().items()}
    if inputs.world is not None and "/gpus" in seen:
        seen["/gpus"] = [inputs.world.low, inputs.world.high]
    if point.memory.total_bytes is None and point.compute.step_time_s is None:
        return _differing(seen)
    for guess, mfus in inputs.corners():
        if guess == Guess():  # only the MFU is uncertain: the point's inputs and memory hold
            sized = Sized(point.inp, point.memory)
        else:
            sized = size(job, basis[0], with_guess(job, point.inp, guess), Ledger())
        for mfu in mfus if point.compute.step_time_s is not None else [None]:
            for key, value in timed(job, basis, sized, mfu, Ledger()).values().items():
                if key in seen and math.isfinite(value):
                    ends = seen[key]
                    ends[0], ends[1] = min(ends[0], value), max(ends[1], value)
    return _differing(seen)


def _differing(seen: dict[str, list[float]]) -> dict[str, list[float]]:
    return {key: ends for key, ends in seen.items() if ends[0] != ends[1]}
