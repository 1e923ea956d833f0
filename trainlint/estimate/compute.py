"""Step time from training FLOPs, the GPUs' dense peak and an assumed MFU, plus the gradient
communication that backward compute does not hide.

FLOPs per token follow PaLM (Chowdhery et al. 2022, Appendix B) as nanoGPT's
``GPT.estimate_mfu`` computes them: 6·N for the weights plus 12·L·h·s for attention scores.
Communication follows the ring all-reduce cost model (cost-model §9.1; nccl-tests busbw) and
the ZeRO paper's volumes (Rajbhandari et al. 2020, §7).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from trainlint.estimate.inputs import Inputs
from trainlint.estimate.ledger import Ledger, derived
from trainlint.estimate.params import EstimateParams
from trainlint.job import Comm

RECOMPUTE_FACTOR = 4.0 / 3.0
"""Full activation recomputation runs the forward twice: 8·N instead of 6·N (cost-model §4.2)."""


def flops_per_token(
    params: float, layers: int | None = None, hidden: int | None = None, seq_len: int | None = None
) -> float:
    """Model FLOPs per trained token, 6·N + 12·L·h·s; the attention term needs L, h and s."""
    attention = 12.0 * layers * hidden * seq_len if layers and hidden and seq_len else 0.0
    return 6.0 * params + attention


def step_time_s(  # noqa: PLR0913 - a formula, in its own variables
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


def implied_mfu(  # noqa: PLR0913 - a formula, in its own variables
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


def model_flops_per_iteration(
    batch: float, layers: int, hidden: int, seq_len: int, vocab: int
) -> float:
    """Korthikanti et al. 2022, Appendix A Eq. 7: 72·B·L·s·h²·(1 + s/(6h) + v/(12hL))."""
    h, s, lay = float(hidden), float(seq_len), float(layers)
    return 72.0 * batch * lay * s * h * h * (1 + s / (6 * h) + vocab / (12 * h * lay))


def ring_volume(stage: int, n: int) -> float:
    """Bytes each GPU sends per step, per gradient byte, for ``n`` data-parallel ranks.

    Ring all-reduce sends 2(n-1)/n·S (nccl-tests busbw). ZeRO-1/2 replace it by a
    reduce-scatter of gradients and an all-gather of parameters, the same 2Ψ; ZeRO-3 all-gathers
    parameters for the forward and again for the backward, 3Ψ (ZeRO paper §7).
    """
    if n <= 1:
        return 0.0
    return (3.0 if stage >= 3 else 2.0) * (n - 1) / n


def comm_time_s(grad_bytes: float, volume: float, bytes_per_s: float) -> float:
    """Seconds to move ``volume``·``grad_bytes`` bytes per GPU at ``bytes_per_s``."""
    return grad_bytes * volume / bytes_per_s


def exposed_s(comm_s: float, hidden_behind_s: float, overlap: float) -> float:
    """Communication not overlapped: max(0, comm - overlap · compute it runs under)."""
    return max(0.0, comm_s - overlap * hidden_behind_s)


def overlap_share(stage: int, recompute: bool) -> float:
    """Share of the step's compute that gradient traffic can run under.

    DDP all-reduces each bucket as backward produces it (Li et al. 2020; cost-model §9.1):
    backward is 4N of the 6N FLOPs, 6N of 8N with recomputation. ZeRO-3 prefetches parameters
    during the forward too, so its traffic can hide under the whole step.
    """
    if stage >= 3:
        return 1.0
    return 0.75 if recompute else 2.0 / 3.0


@cache
def _links() -> dict[str, tuple[float | None, float | None]]:
    data = resources.files("trainlint.catalog") / "data" / "gpus.json"
    rows = json.loads(data.read_text(encoding="utf-8"))["gpus"]

    def num(value: object) -> float | None:
        return None if value is None else float(str(value))

    return {
        str(r["name"]): (num(r.get("nvlink_bytes_per_s")), num(r.get("pcie_bytes_per_s")))
        for r in rows
    }


def link_bytes_per_s(gpu: str, world: int, per_node: int, p: EstimateParams) -> float | None:
    """Advertised bandwidth of the slowest hop: NVLink (else PCIe) in a node, else the network."""
    if world > per_node:
        return p.network_bytes_per_s
    nvlink, pcie = _links().get(gpu, (None, None))
    return nvlink if nvlink is not None else pcie


@dataclass(frozen=True)
class Compute:
    flops_per_token: float | None = None
    tokens_per_step: int | None = None
    step_time_s: float | None = None
    comm: Comm = field(default_factory=Comm)


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


def _comm(
    inp: Inputs, p: EstimateParams, led: Ledger, per_node: int | None, compute_s: float
) -> Comm | None:
    """Gradient sync per step and the part of it that stays exposed; None if a link is unknown."""
    gpu, world, trainable = inp.hw.gpu, inp.hw.world, inp.trainable
    if gpu is None or world is None or trainable is None:
        return None
    n = inp.data_parallel(world.value)
    grad_bytes = trainable.value / inp.model_parallel * inp.precision.value.weight_bytes
    link = link_bytes_per_s(gpu.name, world.value, per_node or p.gpus_per_node, p)
    if link is None:
        led.missing(f"catalog.{gpu.name}.nvlink_bytes_per_s")
        return None
    volume = ring_volume(inp.zero_stage, n)
    comm = comm_time_s(grad_bytes, volume, link * p.link_efficiency)
    window = compute_s * overlap_share(inp.zero_stage, inp.recompute)
    exposed = exposed_s(comm, window, p.comm_overlap)
    led.put("comm.allreduce_s", comm, "default")
    led.put("comm.exposed_s", exposed, "default")
    fraction = led.put("comm.fraction", exposed / (compute_s + exposed), "default")
    return Comm(allreduce_s=comm, exposed_s=exposed, fraction=fraction)


def job_compute(
    inp: Inputs, p: EstimateParams, led: Ledger, gpus_per_node: int | None = None
) -> Compute:
    """FLOPs per token, tokens per step and step time for the job on ``inp.hw``.

    Step time is the compute time at the assumed MFU plus the exposed gradient communication.
    """
    fpt, tokens, peak = _flops(inp, led), _tokens(inp, led), _peak(inp, led)
    world = inp.hw.world
    if world is None:
        led.missing("resources.world_size")
    if fpt is None or tokens is None or peak is None or world is None:
        return Compute(fpt, tokens)
    mfu = inp.mfu if inp.mfu is not None else p.mfu  # estimate.ranges varies it over its band
    compute_s = step_time_s(tokens, fpt, world.value, peak, mfu, inp.recompute)
    comm = _comm(inp, p, led, gpus_per_node, compute_s)
    step = compute_s + ((comm.exposed_s or 0.0) if comm else 0.0)
    if not math.isfinite(step):
        return Compute(fpt, tokens)
    return Compute(fpt, tokens, led.put("step_time_s", step, "default"), comm or Comm())
