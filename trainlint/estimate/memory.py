"""Memory per GPU: model states sharded by ZeRO stage, activations, and framework overhead.

Model states follow the ZeRO paper (Rajbhandari et al., SC'20, §3.1 and Figure 1); activations
follow Korthikanti et al. 2022 (arXiv:2205.05198, §4.1, Table 2 and Eq. 5's extra terms).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainlint.estimate.activations import Layout, Recompute, per_gpu_bytes
from trainlint.estimate.inputs import Inputs
from trainlint.estimate.ledger import Ledger, derived
from trainlint.estimate.params import EstimateParams
from trainlint.estimate.precision import OptimizerSpec, Precision
from trainlint.job import Memory, Source


@dataclass(frozen=True)
class PerParam:
    """Bytes per trainable parameter: weights, gradients, and optimizer (ZeRO's K)."""

    weight: float
    grad: float
    optimizer: float

    @classmethod
    def of(cls, precision: Precision, optimizer: OptimizerSpec) -> PerParam:
        """Mixed-precision Adam gives (2, 2, 12) = 16; fp32 Adam (4, 4, 8) = 16, no master."""
        w = float(precision.weight_bytes)
        return cls(w, w, optimizer.k(precision))


@dataclass(frozen=True)
class Sharding:
    """How model states are split: ZeRO stage over ``dp`` ranks, and tensor x pipeline."""

    stage: int = 0
    dp: int = 1
    model_parallel: int = 1
    offload_optimizer: bool = False
    offload_params: bool = False


@dataclass(frozen=True)
class ModelStates:
    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


def model_states(  # noqa: PLR0913 - a formula, in its own variables
    trainable: float,
    per_param: PerParam,
    sharding: Sharding | None = None,
    frozen: float = 0.0,
    frozen_bytes: float = 2.0,
    largest_layer: float = 0.0,
) -> ModelStates:
    """Per-GPU model-state bytes, ZeRO Figure 1: stage 1 shards the optimizer (2Ψ+2Ψ+KΨ/Nd),
    stage 2 also gradients (2Ψ+(2+K)Ψ/Nd), stage 3 also weights ((2+2+K)Ψ/Nd).

    Frozen parameters (PEFT base weights) cost only their storage, ``frozen_bytes`` each.
    Optimizer offload moves the optimizer and, from stage 2, the gradient partitions to the
    CPU (ZeRO-Offload; DeepSpeed's estimator charges 2Ψ on the GPU for ZeRO-2 + offload);
    parameter offload (stage 3) moves the weights.

    Stage 3 also holds the largest gathered module, 16-bit weights and gradients: DeepSpeed's
    ``largest_layer_memory = 4 * largest_layer_params`` (``stage3.py``,
    ``estimate_zero3_model_states_mem_needs``, cost-model §1.2), kept with either offload.
    ``largest_layer`` is in parameters, already divided by the tensor-parallel size.
    """
    s = sharding or Sharding()
    t, f = trainable / s.model_parallel, frozen / s.model_parallel
    weights = t * per_param.weight + f * frozen_bytes
    grads = t * per_param.grad
    opt = t * per_param.optimizer
    opt = opt / s.dp if s.stage >= 1 else opt
    grads = grads / s.dp if s.stage >= 2 else grads
    weights = weights / s.dp if s.stage >= 3 else weights
    if s.offload_optimizer and s.stage >= 1:
        opt = 0.0
        grads = 0.0 if s.stage >= 2 else grads
    if s.offload_params and s.stage >= 3:
        weights = 0.0
    if s.stage >= 3 and largest_layer > 0:
        weights += largest_layer * per_param.weight
        grads += largest_layer * per_param.grad
    return ModelStates(weights, grads, opt)


def activation_bytes(  # noqa: PLR0913 - a formula, in its own variables
    seq_len: int,
    micro_batch: int,
    hidden: int,
    layers: int,
    *,
    heads: int | None = None,
    vocab: int | None = None,
    flash: bool = True,
    recompute: bool = False,
) -> float | None:
    """Activation bytes for one micro-batch without model parallelism, 16-bit activations
    (see ``activations.per_gpu_bytes`` for tensor, sequence and pipeline parallelism).

    Per layer s·b·h·(34 + 5·a·s/h) (Korthikanti Eq. 1); flash attention keeps no a·s² score
    tensors, dropping 5·a·s/h; full recomputation keeps only each layer's input, 2·s·b·h.
    Outside the layers (Eq. 5, p = 1): embedding dropout s·b·h, final norm and output
    projection 4·s·b·h, fp32 logits 4·s·b·v when the vocabulary is known.
    None when the attention term is needed and ``heads`` is unknown.
    """
    return per_gpu_bytes(
        seq_len,
        micro_batch,
        hidden,
        layers,
        heads,
        vocab,
        recompute="full" if recompute else "none",
        flash=flash,
    )


def _states(inp: Inputs, led: Ledger) -> ModelStates | None:
    if inp.params is None or inp.trainable is None:
        led.missing("model.params")
        return None
    world = inp.hw.world.value if inp.hw.world else None
    if world is None and inp.zero_stage > 0:
        led.missing("resources.world_size")
        return None
    dp = inp.data_parallel(world or 1)
    if inp.shard_group is not None:
        dp = min(dp, inp.shard_group)
    sharding = Sharding(
        stage=inp.zero_stage,
        dp=dp,
        model_parallel=inp.model_parallel,
        offload_optimizer=inp.offload_optimizer,
        offload_params=inp.offload_params,
    )
    bits = inp.quantization_bits
    frozen_bytes = bits / 8 if bits else float(inp.precision.value.weight_bytes)
    return model_states(
        float(inp.trainable.value),
        PerParam.of(inp.precision.value, inp.optimizer.value),
        sharding,
        frozen=float(inp.params.value - inp.trainable.value),
        frozen_bytes=frozen_bytes,
        largest_layer=(inp.largest_layer or 0) / inp.tensor,
    )


def _activations(inp: Inputs, p: EstimateParams, led: Ledger) -> float | None:
    if inp.sample is not None:  # no source gives per-sample activations for these models yet
        led.missing(f"catalog.{inp.sample.model.name}.activation_bytes")
        return None
    d = inp.dims
    need = {
        "model.seq_len": d.seq_len,
        "training.micro_batch_size": inp.micro_batch,
        "model.hidden": d.hidden,
        "model.layers": d.layers,
    }
    if not (p.flash_attention or inp.recompute_mode in ("full", "selective")):
        need["model.heads"] = d.heads
    missing = [name for name, value in need.items() if value is None]
    if missing or not (d.seq_len and inp.micro_batch and d.hidden and d.layers):
        led.missing(*missing)
        return None
    mode: Recompute = "full" if inp.recompute_mode == "full" else "none"
    if inp.recompute_mode == "selective":
        mode = "selective"
    return per_gpu_bytes(
        d.seq_len.value,
        inp.micro_batch.value,
        d.hidden.value,
        d.layers.value,
        d.heads.value if d.heads else None,
        d.vocab.value if d.vocab else None,
        layout=Layout(inp.tensor, inp.sequence_parallel, inp.pipeline),
        recompute=mode,
        flash=p.flash_attention,
    )


def _gpu_bytes(inp: Inputs, led: Ledger) -> float | None:
    gpu = inp.hw.gpu_bytes
    if gpu is None:
        led.missing("resources.gpu.model")
        return None
    return led.put("memory.gpu_bytes", gpu.value, gpu.source)


def _states_source(inp: Inputs) -> Source:
    sources = [inp.precision.source, inp.optimizer.source]
    sources += [f.source for f in (inp.params, inp.trainable) if f is not None]
    return derived(*sources)


def job_memory(inp: Inputs, p: EstimateParams, led: Ledger) -> Memory:
    """Memory per GPU for the job on ``inp.hw``; total and utilisation need every part."""
    gpu = _gpu_bytes(inp, led)
    states = _states(inp, led)
    acts = led.put("memory.activations_bytes", _activations(inp, p, led), "default")
    overhead = led.put("memory.overhead_bytes", p.overhead_bytes, "default")
    mem = Memory(activations_bytes=acts, overhead_bytes=overhead, gpu_bytes=gpu)
    if states is None:
        return mem
    src = _states_source(inp)
    parts = {
        "weights_bytes": states.weights,
        "gradients_bytes": states.gradients,
        "optimizer_bytes": states.optimizer,
    }
    for key, value in parts.items():
        led.put(f"memory.{key}", value, src)
    total = None if acts is None else states.total + acts + p.overhead_bytes
    util = None if total is None or not gpu else total / gpu
    led.put("memory.total_bytes", total, "default")
    led.put("memory.utilization", util, "default")
    return mem.model_copy(update={**parts, "total_bytes": total, "utilization": util})
