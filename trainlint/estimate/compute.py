"""Step time from training FLOPs, the GPUs' dense peak and an assumed MFU.

FLOPs per token follow PaLM (Chowdhery et al. 2022, Appendix B) as nanoGPT's
``GPT.estimate_mfu`` computes them: 6·N for the weights plus 12·L·h·s for attention scores.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainlint.estimate.inputs import Inputs
from trainlint.estimate.ledger import Ledger, derived
from trainlint.estimate.params import EstimateParams

RECOMPUTE_FACTOR = 4.0 / 3.0
"""Full activation recomputation runs the forward twice: 8·N instead of 6·N (cost-model §4.2)."""


def flops_per_token(
    params: float, layers: int | None = None, hidden: int | None = None, seq_len: int | None = None
) -> float:
    """Model FLOPs per trained token, 6·N + 12·L·h·s; the attention term needs L, h and s."""
    attention = 12.0 * layers * hidden * seq_len if layers and hidden and seq_len else 0.0
    return 6.0 * params + attention


def step_time_s(
    tokens_per_step: float,
    flops_per_token: float,
    world_size: int,
    peak_flops: float,
    mfu: float,
    recompute: bool = False,
) -> float:
    """Seconds per optimizer step: the step's FLOPs over the cluster's achieved FLOP/s.

    With recomputation the executed work is 4/3 of the model FLOPs and ``mfu`` applies to it.
    """
    work = tokens_per_step * flops_per_token * (RECOMPUTE_FACTOR if recompute else 1.0)
    return work / (world_size * peak_flops * mfu)


def implied_mfu(
    tokens_per_step: float,
    flops_per_token: float,
    world_size: int,
    peak_flops: float,
    step_s: float,
    recompute: bool = False,
) -> float:
    """The MFU a measured step time implies: ``step_time_s`` solved for ``mfu``."""
    at_full_utilization = step_time_s(
        tokens_per_step, flops_per_token, world_size, peak_flops, 1.0, recompute
    )
    return at_full_utilization / step_s


@dataclass(frozen=True)
class Compute:
    flops_per_token: float | None = None
    tokens_per_step: int | None = None
    step_time_s: float | None = None


def _flops(inp: Inputs, led: Ledger) -> float | None:
    if inp.params is None:
        led.missing("model.params")
        return None
    d = inp.dims
    value = flops_per_token(
        inp.params.value,
        d.layers.value if d.layers else None,
        d.hidden.value if d.hidden else None,
        d.seq_len.value if d.seq_len else None,
    )
    return led.put("flops_per_token", value, derived(inp.params.source))


def _tokens(inp: Inputs, led: Ledger) -> int | None:
    seq, glob = inp.dims.seq_len, inp.global_batch
    if seq is None:
        led.missing("model.seq_len")
    if glob is None and inp.micro_batch is None:
        led.missing("training.micro_batch_size")
    if glob is None and inp.hw.world is None:
        led.missing("resources.world_size")
    if seq is None or glob is None:
        return None
    return led.put("tokens_per_step", glob.value * seq.value, derived(glob.source, seq.source))


def _peak(inp: Inputs, led: Ledger) -> float | None:
    gpu, fmt = inp.hw.gpu, inp.precision.value.compute
    if gpu is None:
        led.missing("resources.gpu.model")
        return None
    peak = gpu.peak_flops(fmt)
    if peak is None:
        led.missing(f"catalog.{gpu.name}.tflops.{fmt}")
    return peak


def job_compute(inp: Inputs, p: EstimateParams, led: Ledger) -> Compute:
    """FLOPs per token, tokens per step and step time for the job on ``inp.hw``."""
    fpt, tokens, peak = _flops(inp, led), _tokens(inp, led), _peak(inp, led)
    world = inp.hw.world
    if world is None:
        led.missing("resources.world_size")
    if fpt is None or tokens is None or peak is None or world is None:
        return Compute(fpt, tokens)
    step = step_time_s(tokens, fpt, world.value, peak, p.mfu, inp.recompute)
    return Compute(fpt, tokens, led.put("step_time_s", step, "default"))
