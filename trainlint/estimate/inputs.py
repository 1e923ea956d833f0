"""Everything the formulas need, resolved once from a Job: the config, the catalogs, defaults.

The hardware is the job's own (its files name the GPU and count), else the org fleet's
(``trainlint.fleet``: the pool the job's placement matches, else the fleet's defaults; source
``fleet``), else unknown.

Resolution order for the model: declared in the config, then the known-model catalog by
``model.name``, then computed from dimensions. Missing inputs with a framework default
(gradient accumulation 1, one node, no recomputation, no ZeRO) take it silently; missing inputs
that need a guess (precision, optimizer, PEFT trainable share) are recorded in ``assumed`` and
make what they drive ``default``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from trainlint.catalog import (
    GpuSpec,
    MlaSpec,
    ModelSpecEntry,
    params_from_dims,
    resolve_gpu,
    resolve_sample_model,
)
from trainlint.catalog import resolve_model as _resolve_model
from trainlint.derive import global_batch, micro_batch, world_size
from trainlint.estimate.ledger import Sourced
from trainlint.estimate.params import EstimateParams, RuleLimits
from trainlint.estimate.precision import (
    ADAM,
    PRECISIONS,
    OptimizerSpec,
    Precision,
    parse_optimizer,
    parse_precision,
)
from trainlint.estimate.samples import SampleWork, sample_work
from trainlint.fleet import FleetHardware, Interconnect, hardware
from trainlint.job import Job, Source

Assumed = dict[str, str | int | float | bool]
_NO_PEFT = frozenset({"", "none", "full", "no"})


@dataclass(frozen=True)
class GpuSetup:
    """The GPUs a configuration runs on; alternatives swap this and nothing else. (What a probe
    ran on is ``probe.result.Hardware``, in the measurement schema.)"""

    gpu: GpuSpec | None
    gpu_bytes: Sourced[float] | None
    world: Sourced[int] | None
    price: Sourced[float] | None
    per_node: Sourced[int] | None = None
    gpu_source: Source = "catalog"  # ``fleet`` when the org fleet named the GPU
    links: Interconnect | None = None  # the fleet pool's NVLink and fabric, when it says


@dataclass(frozen=True)
class Dims:
    layers: Sourced[int] | None = None
    hidden: Sourced[int] | None = None
    heads: Sourced[int] | None = None
    kv_heads: Sourced[int] | None = None
    ffn_hidden: Sourced[int] | None = None
    vocab: Sourced[int] | None = None
    seq_len: Sourced[int] | None = None


@dataclass(frozen=True)
class Inputs:
    params: Sourced[int] | None
    trainable: Sourced[int] | None
    peft: bool
    quantization_bits: int | None
    dims: Dims
    precision: Sourced[Precision]
    optimizer: Sourced[OptimizerSpec]
    zero_stage: int
    model_parallel: int  # tensor x pipeline
    offload_optimizer: bool
    offload_params: bool
    recompute: bool
    micro_batch: Sourced[int] | None
    global_batch: Sourced[int] | None  # sequences per optimizer step, held fixed across hardware
    hw: GpuSetup
    assumed: Mapping[str, str | int | float | bool] = field(default_factory=dict, hash=False)
    tensor: int = 1
    pipeline: int = 1
    sequence_parallel: bool = False
    recompute_mode: str = "none"  # none, selective, full (Korthikanti 2022 Table 2)
    shard_group: int | None = None  # HYBRID_SHARD: shard within this many GPUs (one node)
    largest_layer: int | None = None  # params of the largest module: ZeRO-3 gathers 4 B each
    active_params: Sourced[int] | None = None  # MoE: parameters per token (FLOPs); dense: params
    padded_to_longest: bool = False  # no packing, batches padded to their longest sample
    mfu: float | None = None  # the MFU this evaluation assumes (estimate.ranges varies it)
    sample: SampleWork | None = None  # a vision/diffusion/speech model: work counted per sample

    def data_parallel(self, world: int) -> int:
        """Data-parallel degree: the world divided among tensor and pipeline ranks."""
        return max(1, world // self.model_parallel)


# The largest count, size or duration a real run states: 15T tokens is 1.5e13, a trillion
# parameters 1e12, a year 3.2e7 s. Past it a stated number is absurd, so it is unknown: bounded
# here, at the input, no product of the formulas can reach a float's range (``max_steps:
# 1e308`` became an infinite cost, then JSON no policy engine reads).
MAX_QUANTITY = 10**15


@dataclass(frozen=True)
class Guess:
    """Values taken for inputs the job leaves unknown, one point of ``estimate.ranges``' box:
    None keeps an input as the job states it (or unknown). Each guessed value is ``default``
    and named in ``assumed``, so every number it drives says it rests on a guess."""

    seq_len: int | None = None
    world: int | None = None
    mfu: float | None = None


@dataclass(frozen=True)
class Basis:
    """What the estimates of one configuration are computed from: its resolved inputs, the
    pack's assumptions (``params.estimate``) and the thresholds of the rules whose advice the
    estimates give (``RuleLimits``). The checkpoint, cost and what-if steps all take these."""

    inp: Inputs
    p: EstimateParams
    rules: RuleLimits


def finite(value: float | None) -> float | None:
    """A usable number: finite and not absurd, else unknown (YAML can spell ``.inf``)."""
    if value is None or not math.isfinite(value) or abs(value) > MAX_QUANTITY:
        return None
    return value


def positive(value: float | None) -> int | None:
    """A usable count: positive and not absurd, else unknown (a 0 or -1 in a config means
    "not set")."""
    return int(value) if value is not None and 0 < value <= MAX_QUANTITY else None


def _sourced(value: int | None, source: Source) -> Sourced[int] | None:
    return None if value is None else Sourced(value, source)


def _dims(job: Job, entry: ModelSpecEntry | None, guess: Guess) -> Dims:
    model, declared = job.model, job.model.source or "declared"

    def pick(name: str) -> Sourced[int] | None:
        own = positive(getattr(model, name))
        if own is not None:
            return Sourced(own, declared)
        return None if entry is None else Sourced(int(getattr(entry, name)), "catalog")

    names = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab")
    picked = {name: pick(name) for name in names}
    seq_len = _sourced(positive(model.seq_len), declared)
    if seq_len is None and guess.seq_len is not None:
        seq_len = Sourced(guess.seq_len, "default")
    return Dims(**picked, seq_len=seq_len)


def _params(job: Job, entry: ModelSpecEntry | None, dims: Dims) -> Sourced[int] | None:
    declared = positive(job.model.params)
    if declared is not None:
        return Sourced(declared, job.model.source or "declared")
    if entry is not None:
        return Sourced(entry.params, "catalog")
    if dims.layers and dims.hidden and dims.vocab:
        value = params_from_dims(
            dims.layers.value,
            dims.hidden.value,
            dims.vocab.value,
            ffn_hidden=dims.ffn_hidden.value if dims.ffn_hidden else None,
            heads=dims.heads.value if dims.heads else None,
            kv_heads=dims.kv_heads.value if dims.kv_heads else None,
        )
        return Sourced(value, "estimated")
    return None


def _trainable(
    job: Job,
    params: Sourced[int] | None,
    p: EstimateParams,
    assumed: Assumed,
    lora: Sourced[int] | None,
) -> tuple[Sourced[int] | None, bool]:
    """The trainable parameters and whether the job fine-tunes with PEFT: declared, else all
    of them, else (PEFT) ``lora`` (from the rank and the model's dimensions), else the pack's
    assumed share."""
    peft = (job.model.peft.method or "").strip().lower() not in _NO_PEFT
    declared = positive(job.model.trainable_params)
    if declared is not None:
        if params is not None and declared > params.value:
            declared = params.value
        return Sourced(declared, job.model.source or "declared"), peft
    if params is None:
        return None, peft
    if not peft:
        return params, peft
    if lora is not None:
        return lora, peft
    assumed["model.trainable_params"] = p.peft_trainable_fraction
    return Sourced(max(1, round(params.value * p.peft_trainable_fraction)), "default"), peft


DEFAULT_LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")
_ALL_LINEAR = frozenset({"alllinear", "all", "linear"})


def lora_params(  # noqa: PLR0913 - a formula: the rank and the model's dimensions
    rank: int,
    layers: int,
    hidden: int,
    *,
    heads: int | None = None,
    kv_heads: int | None = None,
    ffn_hidden: int | None = None,
    glu: bool | None = None,
    targets: tuple[str, ...] | list[str] | None = None,
    head_dim: int | None = None,
) -> int | None:
    """LoRA adapter parameters: r·(d_in + d_out) per adapted matrix (Hu et al. 2021, §4),
    summed over the target modules in every layer.

    Targets default to q,k,v,o (PEFT's Llama default is q,v; most recipes adapt all four);
    ``all-linear`` adds the MLP (gate, up, down when gated, else up and down). Q is
    h x (heads·head_dim), O its transpose, K and V h x (kv_heads·head_dim); without
    ``head_dim`` (h/heads) that is h x h and h x (kv_heads·h/heads) under GQA. Hugging Face
    names (``q_proj``, ``gate_proj``; GPT-2's fused ``c_attn`` and ``c_fc``) are understood;
    an unknown target, or an MLP target without ``ffn_hidden``, gives None.
    """
    q, kv = attention_widths(hidden, heads, kv_heads, head_dim)
    ffn = ffn_hidden
    gated = glu if glu is not None else (ffn is not None and ffn != 4 * hidden)
    names = [re.sub(r"[\s\-_]", "", t.lower()) for t in (targets or DEFAULT_LORA_TARGETS)]
    if any(n in _ALL_LINEAR for n in names):
        names = ["q", "k", "v", "o", "up", "down", *(["gate"] if gated else [])]
    shapes: dict[str, tuple[int, int | None]] = {
        "q": (hidden, q),
        "k": (hidden, kv),
        "v": (hidden, kv),
        "o": (q, hidden),
        "cattn": (hidden, q + 2 * kv),
        "gate": (hidden, ffn),
        "up": (hidden, ffn),
        "cfc": (hidden, ffn),
        "down": (ffn or 0, hidden if ffn else None),
    }
    per_layer = 0
    for name in dict.fromkeys(names):
        key = name.removesuffix("proj")
        shape = shapes.get(key)
        if shape is None or shape[1] is None or shape[0] == 0:
            return None
        per_layer += rank * (shape[0] + shape[1])
    return layers * per_layer


def _lora(job: Job, dims: Dims | None, entry: ModelSpecEntry | None) -> Sourced[int] | None:
    """LoRA/QLoRA trainable parameters from the rank, targets and the model's dimensions."""
    peft = job.model.peft
    rank = positive(peft.rank)
    method = (peft.method or "").lower()
    if dims is None or rank is None or "lora" not in method:
        return None
    if dims.layers is None or dims.hidden is None:
        return None
    count = lora_params(
        rank,
        dims.layers.value,
        dims.hidden.value,
        heads=dims.heads.value if dims.heads else None,
        kv_heads=dims.kv_heads.value if dims.kv_heads else None,
        ffn_hidden=dims.ffn_hidden.value if dims.ffn_hidden else None,
        glu=entry.glu if entry is not None else None,
        targets=peft.target_modules,
        head_dim=_head_dim(dims, entry),
    )
    return None if count is None else Sourced(count, "estimated")


def attention_widths(
    hidden: int, heads: int | None, kv_heads: int | None, head_dim: int | None
) -> tuple[int, int]:
    """Widths of the Q (and O) and of the K (and V) projections: heads·head_dim and
    kv_heads·head_dim; without ``head_dim`` (h/heads) h and kv_heads·h/heads, as in
    ``params_from_dims``."""
    if heads and head_dim:
        return heads * head_dim, (kv_heads or heads) * head_dim
    return hidden, hidden * kv_heads // heads if heads and kv_heads else hidden


def _matches(dims: Dims, entry: ModelSpecEntry | None) -> ModelSpecEntry | None:
    """The catalog entry when the job's shape is the entry's, so that the entry's head_dim,
    norms, MoE and MLA apply; None when the config overrides hidden, heads or kv_heads."""
    if entry is None:
        return None
    for name in ("hidden", "heads", "kv_heads"):
        dim = getattr(dims, name)
        if dim is not None and dim.value != getattr(entry, name):
            return None
    return entry


def _head_dim(dims: Dims, entry: ModelSpecEntry | None) -> int | None:
    matched = _matches(dims, entry)
    return None if matched is None else matched.head_dim


def _mla_attention(hidden: int, heads: int, mla: MlaSpec) -> int:
    """DeepSeek's multi-head latent attention: q (or q_a, its norm and q_b), kv_a with the
    shared rope key, the kv latent norm, kv_b and o (config.json ranks)."""
    qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    if mla.q_lora_rank:
        r = mla.q_lora_rank
        q = hidden * r + r + r * heads * qk
    else:
        q = hidden * heads * qk
    kv = hidden * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    kv += mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
    return q + kv + heads * mla.v_head_dim * hidden


def largest_layer(dims: Dims, entry: ModelSpecEntry | None) -> int | None:
    """Parameters of the largest module ZeRO-3 / FSDP full sharding gathers at once, which
    stage 3 holds in 16-bit weights and gradients beside its shards (4 B each, DeepSpeed's
    ``estimate_zero3_model_states_mem_needs``, cost-model §1.2): the larger of the embedding
    (h·v) and one transformer layer, the unit FSDP wraps; None without h and v.

    A layer is counted as ``params_from_dims`` counts one (Q/O of heads·head_dim, K/V of
    kv_heads·head_dim, the catalog's norms, q/k norms and biases) when the job's shape is the
    catalog entry's. An MoE layer holds every routed and shared expert (all are gathered with
    the layer; expert parallelism is not modelled) and the router; DeepSeek's leading dense
    layers are counted too and the larger layer kept; MLA attention uses its own shapes.
    """
    if dims.hidden is None or dims.vocab is None:
        return None
    h, v = dims.hidden.value, dims.vocab.value
    embedding = h * v
    if dims.layers is None:
        return embedding
    matched = _matches(dims, entry)
    heads = dims.heads.value if dims.heads else None
    ffn = dims.ffn_hidden.value if dims.ffn_hidden else None
    norms = matched.norms if matched is not None else 2

    def layer(mlp_width: int | None, glu: bool | None) -> int:
        if matched is not None and matched.mla is not None and heads and mlp_width:
            return _mla_attention(h, heads, matched.mla) + 3 * h * mlp_width + 2 * h
        count = params_from_dims(
            1,
            h,
            0,
            ffn_hidden=mlp_width,
            heads=heads,
            kv_heads=dims.kv_heads.value if dims.kv_heads else None,
            glu=glu,
            head_dim=matched.head_dim if matched is not None else None,
            norms=norms,
            qk_norm=matched.qk_norm if matched is not None else None,
            qkv_bias=matched.qkv_bias if matched is not None else False,
        )
        return count - (h if norms else 0)  # params_from_dims adds the final norm

    glu = entry.glu if entry is not None else None
    moe = matched.moe if matched is not None else None
    if moe is None or ffn is None:
        return max(embedding, layer(ffn, glu))
    sparse = layer(ffn * (moe.experts + moe.shared), True)
    sparse += h * moe.experts + (moe.experts if moe.router_bias else 0)
    dense = layer(moe.dense_ffn_hidden or ffn, True) if moe.dense_layers else 0
    return max(embedding, sparse, dense)


def _active(entry: ModelSpecEntry | None, params: Sourced[int] | None) -> Sourced[int] | None:
    """Parameters used per token: the catalog's active count for MoE, else all of them."""
    catalog = params is not None and params.source == "catalog"
    if entry is not None and entry.active_params and catalog:
        return Sourced(entry.active_params, "catalog")
    return params


def _precision(job: Job, p: EstimateParams, assumed: Assumed) -> Sourced[Precision]:
    """As stated, else the framework's default the job's format states (timm, MMEngine and
    detectron2 train fp32 unless told), else the pack's ``default_precision``."""
    parsed = parse_precision(job.training.precision)
    if parsed is not None:
        return Sourced(parsed, "declared")
    framework = job.defaults.get("/training/precision")
    own = (
        parse_precision(framework.value) if framework and isinstance(framework.value, str) else None
    )
    if own is not None:  # the framework's own default (accelerate's fp32), listed as assumed
        assumed["training.precision"] = own.name
        return Sourced(own, "default")
    fallback = parse_precision(p.default_precision) or PRECISIONS["bf16"]
    assumed["training.precision"] = fallback.name
    return Sourced(fallback, "default")


def _optimizer(job: Job, assumed: Assumed) -> Sourced[OptimizerSpec]:
    opt = job.training.optimizer
    parsed = parse_optimizer(opt.name, opt.family, opt.eight_bit)
    if parsed is not None:
        return Sourced(parsed, "declared")
    assumed["training.optimizer.name"] = ADAM.name
    return Sourced(ADAM, "default")


# FSDP sharding strategies as ZeRO stages (torch.distributed.fsdp.ShardingStrategy).
_FSDP_MODES: tuple[tuple[str, int], ...] = (
    ("hybridshardzero2", 2),
    ("hybrid", 3),
    ("shardgradop", 2),
    ("noshard", 0),
    ("fullshard", 3),
)


def _fsdp_mode(job: Job) -> tuple[int, bool] | None:
    """(ZeRO-like stage, hybrid) for an FSDP strategy; None when the job is not FSDP.

    FULL_SHARD is ZeRO-3-like, SHARD_GRAD_OP ZeRO-2-like, NO_SHARD DDP; HYBRID_SHARD is
    FULL_SHARD within a node and replication across nodes. Plain ``fsdp`` is FULL_SHARD,
    PyTorch's default.
    """
    text = re.sub(r"[\s\-_:]", "", (job.training.parallelism.strategy or "").lower())
    if "fsdp" not in text and "shard" not in text:
        return None
    for key, stage in _FSDP_MODES:
        if key in text:
            return stage, key.startswith("hybrid")
    return 3, False


def _zero_stage(job: Job) -> int:
    """ZeRO stage; FSDP maps its sharding strategy (FULL_SHARD, PyTorch's default, is 3)."""
    par = job.training.parallelism
    if par.zero_stage is not None and 0 <= par.zero_stage <= 3:
        return par.zero_stage
    mode = _fsdp_mode(job)
    return 0 if mode is None else mode[0]


def _recompute_mode(job: Job) -> str:
    """``training.recompute`` (full/selective) wins; activation_checkpointing True is full."""
    stated = (job.training.recompute or "").strip().lower()
    if stated in ("full", "selective", "none"):
        return stated
    return "full" if job.training.activation_checkpointing else "none"


def _shard_group(job: Job, model_parallel: int) -> int | None:
    """HYBRID_SHARD shards over one node's data-parallel ranks; None when not hybrid."""
    mode = _fsdp_mode(job)
    per_node = positive(job.resources.gpus_per_node)
    if mode is None or not mode[1] or per_node is None:
        return None
    return max(1, per_node // model_parallel)


def _world(job: Job, per_node: Sourced[int] | None, guess: Guess) -> Sourced[int] | None:
    """The job's GPU count: its world size as stated or derived (``derive``: what the config
    fixes is ``declared``), else GPUs per node x nodes, one node when the count is unknown: a
    guess derivation refuses (``--nnodes $NNODES``), hence ``estimated``. GPUs per node from
    the fleet count only with the nodes the job states (``fleet``): a job that says neither
    may well run on one GPU."""
    res = job.resources
    world = positive(res.world_size)
    if world is not None:
        return Sourced(world, "declared")
    nodes = positive(res.nodes)
    from_fleet = per_node is not None and per_node.source == "fleet"
    if per_node is None or (from_fleet and nodes is None):
        return None if guess.world is None else Sourced(guess.world, "default")
    return Sourced(world_size(per_node.value, nodes), "fleet" if from_fleet else "estimated")


def _per_node(job: Job, fleet: FleetHardware) -> Sourced[int] | None:
    """GPUs per node: the job's, else its fleet pool's (or the fleet's default count)."""
    stated = positive(job.resources.gpus_per_node)
    if stated is not None:
        return Sourced(stated, "declared")
    return None if fleet.gpus_per_node is None else Sourced(fleet.gpus_per_node, "fleet")


def _gpu_bytes(job: Job, gpu: GpuSpec | None, source: Source) -> Sourced[float] | None:
    """The GPU's memory: as the job states it, else its catalog entry's (named by ``source``)."""
    gpu_field = job.resources.gpu
    if positive(gpu_field.memory_bytes) is not None:
        return Sourced(float(gpu_field.memory_bytes or 0), gpu_field.source or "declared")
    return None if gpu is None else Sourced(float(gpu.memory_bytes), source)


def _hardware(job: Job, p: EstimateParams, guess: Guess) -> GpuSetup:
    """The job's GPUs as its files state them; what they leave out, from the org fleet. A
    GPU the files name but the catalog lacks stays unknown: the fleet's is not the job's."""
    gpu_field = job.resources.gpu
    stated = resolve_gpu(gpu_field.model) if gpu_field.model else None
    fleet = hardware(p.fleet, job.resources.placement, stated)
    fleet_gpu = None if gpu_field.model else fleet.gpu
    gpu_source: Source = "fleet" if fleet_gpu else "catalog"
    gpu = stated or fleet_gpu
    per_node = _per_node(job, fleet)
    price = price_of(gpu, p)
    if gpu is not None and fleet.price is not None:  # the fleet priced this very GPU
        price = Sourced(fleet.price, "fleet")
    return GpuSetup(
        gpu,
        _gpu_bytes(job, gpu, gpu_source),
        _world(job, per_node, guess),
        price,
        per_node,
        gpu_source,
        fleet.interconnect,
    )


def price_of(gpu: GpuSpec | None, p: EstimateParams) -> Sourced[float] | None:
    """USD per GPU-hour: the org fleet's ``prices`` (``fleet``), else the pack's
    ``params.estimate.prices`` override (declared), else the catalog's."""
    if gpu is None:
        return None
    if p.fleet is not None and gpu.name in p.fleet.prices:
        return Sourced(p.fleet.prices[gpu.name], "fleet")
    if gpu.name in p.prices:
        return Sourced(p.prices[gpu.name], "declared")
    return None if gpu.price_per_hour is None else Sourced(gpu.price_per_hour, "catalog")


def _batches(job: Job, dp: int | None) -> tuple[Sourced[int] | None, Sourced[int] | None]:
    """Micro-batch per GPU and global batch in sequences, as stated or derived (``derive``),
    else each solved from the other over ``dp`` replicas (``estimated``): derivation leaves an
    unstated micro-batch unknown, and has no replicas when the world size is a guess."""
    tr = job.training
    micro, accum = positive(tr.micro_batch_size), positive(tr.grad_accum_steps)
    glob = positive(tr.global_batch_size)
    micro_sourced = _sourced(micro, "declared")
    if glob is not None:
        if micro is None and dp:
            micro_sourced = _sourced(micro_batch(glob, accum, dp), "estimated")
        return micro_sourced, Sourced(glob, "declared")
    if micro is None or dp is None:
        return micro_sourced, None
    return micro_sourced, Sourced(global_batch(micro, accum, dp), "estimated")


def _record_guess(job: Job, guess: Guess, hw: GpuSetup, assumed: Assumed) -> None:
    """Name the guessed inputs the job does not state (nor its fleet) in ``assumed``."""
    if guess.seq_len is not None and positive(job.model.seq_len) is None:
        assumed["model.seq_len"] = guess.seq_len
    if guess.world is not None and hw.world is not None and hw.world.source == "default":
        assumed["resources.world_size"] = guess.world


def with_guess(job: Job, inp: Inputs, guess: Guess) -> Inputs:
    """``inp`` (resolved from ``job``) with ``guess`` in place of the inputs the job does not
    state: what ``resolve(job, p, guess)`` gives, without resolving the model again (the
    corners of ``estimate.ranges`` differ only in these)."""
    dims = inp.dims
    if guess.seq_len is not None and positive(job.model.seq_len) is None:
        dims = replace(dims, seq_len=Sourced(guess.seq_len, "default"))
    world = _world(job, inp.hw.per_node, guess)
    dp = max(1, world.value // inp.model_parallel) if world else None
    micro, glob = _batches(job, dp)
    return replace(
        inp,
        dims=dims,
        hw=replace(inp.hw, world=world),
        micro_batch=micro,
        global_batch=glob,
        mfu=guess.mfu,
    )


def _input_size(job: Job, pixels: bool) -> Sourced[float] | None:
    """The job's image side or clip length: stated, else its framework's default (Ultralytics'
    ``imgsz`` 640), else unknown; absurd or non-positive values are unknown."""
    pointer = "/data/image_size" if pixels else "/data/audio_seconds"
    default = job.defaults.get(pointer)
    framework = default.value if default is not None else None
    stated = job.data.image_size if pixels else job.data.audio_seconds
    candidates: tuple[tuple[object, Source], ...] = ((stated, "declared"), (framework, "default"))
    for value, source in candidates:
        usable = finite(value) if isinstance(value, int | float) else None
        if usable is not None and usable > 0 and not isinstance(value, bool):
            return Sourced(usable, source)
    return None


def _sample(job: Job, entry: ModelSpecEntry | None, assumed: Assumed) -> SampleWork | None:
    """The vision, diffusion or speech model the job names, when no language model matches,
    with its training FLOPs per sample at the job's image size or clip length."""
    model = resolve_sample_model(job.model.name) if job.model.name and entry is None else None
    if model is None:
        return None
    return sample_work(model, _input_size(job, model.scaling == "pixels"), assumed)


def resolve(job: Job, p: EstimateParams, guess: Guess | None = None) -> Inputs:
    """Resolve a job's inputs against the catalogs and the parameters; ``guess`` fills the
    inputs the job leaves unknown (``estimate.ranges``)."""
    assumed: Assumed = {}
    guess = guess or Guess()
    entry = _resolve_model(job.model.name) if job.model.name else None
    dims = _dims(job, entry, guess)
    sample = _sample(job, entry, assumed)
    params = _params(job, entry, dims)
    if params is None and sample is not None:
        params = Sourced(sample.model.params, "catalog")
    trainable, peft = _trainable(job, params, p, assumed, _lora(job, dims, entry))
    par = job.training.parallelism
    tensor, pipeline = positive(par.tensor) or 1, positive(par.pipeline) or 1
    model_parallel = tensor * pipeline
    recompute_mode = _recompute_mode(job)
    hw = _hardware(job, p, guess)
    _record_guess(job, guess, hw, assumed)
    dp = max(1, hw.world.value // model_parallel) if hw.world else None
    micro, glob = _batches(job, dp)
    return Inputs(
        params=params,
        trainable=trainable,
        peft=peft,
        quantization_bits=positive(job.model.quantization_bits),
        dims=dims,
        precision=_precision(job, p, assumed),
        optimizer=_optimizer(job, assumed),
        zero_stage=_zero_stage(job),
        model_parallel=model_parallel,
        offload_optimizer=bool(par.offload_optimizer),
        offload_params=bool(par.offload_params),
        recompute=recompute_mode == "full",
        micro_batch=micro,
        global_batch=glob,
        hw=hw,
        assumed=assumed,
        tensor=tensor,
        pipeline=pipeline,
        sequence_parallel=bool(par.sequence_parallel) and tensor > 1,
        recompute_mode=recompute_mode,
        shard_group=_shard_group(job, model_parallel),
        largest_layer=largest_layer(dims, entry),
        active_params=_active(entry, params),
        padded_to_longest=_padded_to_longest(job, p, assumed),
        mfu=guess.mfu,
        sample=sample,
    )


def _padded_to_longest(job: Job, p: EstimateParams, assumed: Assumed) -> bool:
    """Samples neither packed nor padded to the full length: batches run shorter, by the
    assumed ``padded_fill`` (named in ``assumed``). Packing on or unknown: full sequences."""
    tr = job.training
    padded = tr.packing is False and (tr.padding or "").lower() == "longest"
    if padded:
        assumed["sample_fill"] = p.padded_fill
    return padded
