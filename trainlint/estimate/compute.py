"""Step time from training FLOPs, the GPUs' dense peak and an assumed MFU, plus the gradient
communication that backward compute does not hide.

FLOPs per token follow PaLM (Chowdhery et al. 2022, Appendix B) as nanoGPT's
``GPT.estimate_mfu`` computes them: 6·N for the weights plus 12·L·h·s for attention scores.
Communication follows the ring all-reduce cost model (cost-model §9.1; nccl-tests busbw) and
the ZeRO paper's volumes (Rajbhandari et al. 2020, §7). The achieved share of the peak comes
from published runs like the job (``mfu.mfu_band``) unless an org sets ``EstimateParams.mfu``.
ZeRO-3/FSDP gathers each layer's parameters per micro-batch and pays a fixed latency per
collective (Zhao et al. 2023, "PyTorch FSDP", §3-4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

from trainlint.catalog import data_file
from trainlint.estimate.inputs import Inputs
from trainlint.estimate.ledger import Ledger, derived
from trainlint.estimate.mfu import Band, Family, mfu_band
from trainlint.estimate.params import EstimateParams
from trainlint.estimate.samples import compute_format
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
    rows = data_file("gpus.json")["gpus"]

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


def pool_bytes_per_s(inp: Inputs, world: int, per_node: int, p: EstimateParams) -> float | None:
    """``link_bytes_per_s`` by pool: NVLink inside a node, the fabric across nodes. The org
    fleet's pool overrides the catalog's NVLink (``GpuSetup.links``, Gb/s per GPU); its fabric
    arrives as ``network_bytes_per_s`` (``estimate._fleet_fabric``)."""
    hw = inp.hw
    nvlink_gbps = hw.links.nvlink_gbps if hw.links else None
    if world <= per_node and nvlink_gbps:
        return nvlink_gbps * 1e9 / 8
    return link_bytes_per_s(hw.gpu.name if hw.gpu else "", world, per_node, p)


def job_band(inp: Inputs) -> Band:
    """The utilisation band of published runs like the job (family, size, GPU, precision,
    layout): a vision, diffusion or speech model's from runs of its family."""
    params = inp.active_params or inp.params
    world = inp.hw.world.value if inp.hw.world else None
    compute = compute_format(inp.precision.value, inp.sample, inp.hw.gpu)
    family: Family = inp.sample.model.family if inp.sample else "language"
    return mfu_band(
        params.value if params else None,
        inp.hw.gpu,
        compute,
        world,
        inp.zero_stage >= 3,
        family=family,
    )


def utilization(inp: Inputs, p: EstimateParams) -> float:
    """The share of peak the job's executed FLOPs reach: the org's ``mfu`` when it sets one,
    else the point of ``job_band``."""
    return p.mfu if p.mfu is not None else job_band(inp).point


def micro_batches(inp: Inputs, world: int) -> int:
    """Forward-backward passes per optimizer step on each data-parallel rank (at least one)."""
    glob, micro = inp.global_batch, inp.micro_batch
    if glob is None or micro is None:
        return 1
    return max(1, glob.value // (micro.value * inp.data_parallel(world)))


def gathers_per_step(inp: Inputs, world: int) -> tuple[int, int]:
    """ZeRO-3/FSDP traffic repeats per micro-batch: (passes over the sharded weights, per-layer
    collectives). Each pass all-gathers every layer for the forward and again for the backward
    and reduce-scatters its gradients: 3 collectives per layer (FSDP paper §3.2; ZeRO §7)."""
    if inp.zero_stage < 3 or inp.data_parallel(world) <= 1:
        return 1, 0
    passes = micro_batches(inp, world)
    layers = inp.dims.layers.value if inp.dims.layers else 1
    return passes, passes * 3 * layers


@dataclass(frozen=True)
class Compute:
    """FLOPs per unit of work and units per step (tokens, or samples for a per-sample model:
    ``per_sample``), step time and its communication."""

    flops_per_token: float | None = None
    tokens_per_step: int | None = None
    step_time_s: float | None = None
    comm: Comm = field(default_factory=Comm)
    per_sample: bool = False


def _flops(inp: Inputs, led: Ledger) -> float | None:
    """Training FLOPs per unit of work: per token for a language model, per sample (image,
    clip) for a vision, diffusion or speech model (``samples.sample_work``)."""
    if inp.sample is not None:
        per_sample = inp.sample.flops_per_sample
        return led.put("flops_per_sample", per_sample.value, per_sample.source)
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


def _tokens(inp: Inputs, p: EstimateParams, led: Ledger) -> int | None:
    """Tokens per optimizer step: sequences x length, times the assumed ``padded_fill`` when
    batches are padded only to their longest sample (no packing)."""
    if inp.sample is not None:
        return _samples(inp, led)
    seq, glob = inp.dims.seq_len, inp.global_batch
    if seq is None:
        led.missing("model.seq_len")
    if glob is None and inp.micro_batch is None:
        led.missing("training.micro_batch_size")
    if glob is None and inp.hw.world is None:
        led.missing("resources.world_size")
    if seq is None or glob is None:
        return None
    if inp.padded_to_longest:
        tokens = max(1, round(glob.value * seq.value * p.padded_fill))
        return led.put("tokens_per_step", tokens, "default")
    return led.put("tokens_per_step", glob.value * seq.value, derived(glob.source, seq.source))


def _samples(inp: Inputs, led: Ledger) -> int | None:
    """Samples (images, clips) per optimizer step: the global batch."""
    glob = inp.global_batch
    if glob is None:
        if inp.micro_batch is None:
            led.missing("training.micro_batch_size")
        if inp.hw.world is None:
            led.missing("resources.world_size")
        return None
    return led.put("samples_per_step", glob.value, glob.source)


def _peak(inp: Inputs, led: Ledger) -> float | None:
    gpu = inp.hw.gpu
    fmt = compute_format(inp.precision.value, inp.sample, gpu)
    if gpu is None:
        led.missing("resources.gpu.model")
        return None
    peak = gpu.peak_flops(fmt)
    if peak is None:
        led.missing(f"catalog.{gpu.name}.tflops.{fmt}")
    return peak


@dataclass(frozen=True)
class _Traffic:
    """What one GPU synchronises per step: its gradient (= parameter) bytes, on which GPUs."""

    grad_bytes: float
    world: int
    per_node: int


def _hybrid_s(inp: Inputs, p: EstimateParams, t: _Traffic, group: int) -> float | None:
    """HYBRID_SHARD: ZeRO-3 gathers inside the shard group (one node, NVLink), then each shard's
    gradients all-reduced across the replicas over the fabric, per micro-batch (FSDP paper
    §3.2.3, "hybrid sharding")."""
    inside = pool_bytes_per_s(inp, min(t.per_node, t.world), t.per_node, p)
    across = pool_bytes_per_s(inp, t.world, t.per_node, p)
    if inside is None or across is None:
        return None
    passes, _ = gathers_per_step(inp, t.world)
    replicas = inp.data_parallel(t.world) // group
    gather = comm_time_s(t.grad_bytes, ring_volume(3, group) * passes, inside * p.link_efficiency)
    shard_bytes = t.grad_bytes / group * passes
    reduce = comm_time_s(shard_bytes, ring_volume(0, replicas), across * p.link_efficiency)
    return gather + reduce


def sync_s(inp: Inputs, p: EstimateParams, t: _Traffic) -> float | None:
    """Seconds of gradient and parameter traffic per step, latency included; None if a link is
    unknown. ZeRO-3 repeats its gathers per micro-batch (``gathers_per_step``)."""
    passes, collectives = gathers_per_step(inp, t.world)
    latency = collectives * p.collective_latency_us * 1e-6
    n, group = inp.data_parallel(t.world), inp.shard_group
    if inp.zero_stage >= 3 and group is not None and 1 < group < n:
        hybrid = _hybrid_s(inp, p, t, group)
        return None if hybrid is None else hybrid + latency
    link = pool_bytes_per_s(inp, t.world, t.per_node, p)
    if link is None:
        return None
    volume = ring_volume(inp.zero_stage, n) * passes
    return comm_time_s(t.grad_bytes, volume, link * p.link_efficiency) + latency


def _comm(
    inp: Inputs, p: EstimateParams, led: Ledger, per_node: int | None, compute_s: float
) -> Comm | None:
    """Gradient sync per step and the part of it that stays exposed; None if a link is unknown."""
    gpu, world, trainable = inp.hw.gpu, inp.hw.world, inp.trainable
    if gpu is None or world is None or trainable is None:
        return None
    grad_bytes = trainable.value / inp.model_parallel * inp.precision.value.weight_bytes
    comm = sync_s(inp, p, _Traffic(grad_bytes, world.value, per_node or p.gpus_per_node))
    if comm is None:
        led.missing(f"catalog.{gpu.name}.nvlink_bytes_per_s")
        return None
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

    Step time is the compute time at the job's utilisation plus the exposed communication.
    """
    fpt, tokens, peak = _flops(inp, led), _tokens(inp, p, led), _peak(inp, led)
    world, per_sample = inp.hw.world, inp.sample is not None
    if world is None:
        led.missing("resources.world_size")
    if fpt is None or tokens is None or peak is None or world is None:
        return Compute(fpt, tokens, per_sample=per_sample)
    mfu = inp.mfu if inp.mfu is not None else utilization(inp, p)  # estimate.ranges varies it
    compute_s = step_time_s(tokens, fpt, world.value, peak, mfu, inp.recompute)
    comm = _comm(inp, p, led, gpus_per_node, compute_s)
    step = compute_s + ((comm.exposed_s or 0.0) if comm else 0.0)
    if not math.isfinite(step):
        return Compute(fpt, tokens, per_sample=per_sample)
    step_s = led.put("step_time_s", step, "default")
    return Compute(fpt, tokens, step_s, comm or Comm(), per_sample)
