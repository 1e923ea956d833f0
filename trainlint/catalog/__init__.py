"""The GPU and known-model catalogs (``data/*.json``) and the name matching that reads them.

Two model catalogs: decoder-only language models by their config.json dimensions (``models``),
and vision, diffusion and speech models whose work is counted per sample, an image or an audio
clip (``sample_models``: parameters and forward FLOPs at a stated input size).

Configs spell hardware and models many ways (``NVIDIA-A100-SXM4-80GB``, ``a100_80g``,
``meta-llama/Llama-3.1-8B-Instruct``); matching compares separator-free, lower-cased keys with
vendor and variant words dropped, so each spelling needs no code, at most an alias row.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal, cast

_SEPARATORS = re.compile(r"[\s\-_:/]+")
# "8x H100", "H100:8" (SkyPilot): the count is not part of the name.
_GPU_COUNT = re.compile(r"^(?:\d+\s*[x\u00d7]\s*)?(?P<name>.+?)(?::\d+)?$", re.IGNORECASE)
_GPU_NOISE = frozenset({"nvidia", "tesla", "amd", "instinct", "geforce", "gpu"})
# A count inside a name (Lambda's ``gpu_8x_a100_80gb_sxm4``) is not part of the GPU either.
_GPU_COUNT_WORD = re.compile(r"\d+x")
# Instruct/chat variants share the base model's dimensions. Quantized copies (``-bnb-4bit``,
# ``-AWQ``) stay unknown: they load with their weights already quantized.
_MODEL_NOISE = frozenset({"meta", "instruct", "chat", "hf", "base"})


_GPU_UNITS = (("TB", 2**40), ("GB", 2**30), ("MB", 2**20))
_STORAGE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3))


def gpu_memory(size_bytes: float) -> str:
    """GPU memory as GPU vendors name it, "80 GB" for an H100 80 GB: binary gigabytes, as the
    catalog's nominal capacities are (an 80 GB part reports 81920 MiB in nvidia-smi), so a
    job's use and its GPU's capacity read in the same unit wherever trainlint prints them.
    The builtin rules' ``fmt.gpu_memory`` (policies/builtin/lib/fmt.rego) writes the same."""
    return _in_units(size_bytes, _GPU_UNITS)


def storage(size_bytes: float) -> str:
    """Storage (checkpoints) in decimal units, as storage vendors quote them: "112 GB"; the
    builtin rules' ``fmt.bytes``."""
    return _in_units(size_bytes, _STORAGE_UNITS)


def _in_units(size_bytes: float, units: tuple[tuple[str, float], ...]) -> str:
    for unit, size in units:
        if abs(size_bytes) >= size:
            return f"{approximately(size_bytes / size)} {unit}"
    return f"{size_bytes:,.0f} B"


def approximately(x: float) -> str:
    """About two significant digits, whole numbers from 10 on ("1,240", "61", "1.2", "0.44"),
    rounding halves away from zero: the builtin rules' ``fmt.num``, so both read the same."""
    for least, digits in ((9.95, 0), (0.995, 1), (0.0995, 2), (0.00995, 3)):
        if abs(x) >= least:
            scale = 10**digits
            rounded = math.floor(abs(x) * scale + 0.5) / scale
            return f"{'-' if x < 0 else ''}{rounded:,.{digits}f}"
    return "0"


@dataclass(frozen=True)
class GpuSpec:
    """One accelerator: memory in bytes, dense peak TFLOP/s per format, USD per GPU-hour."""

    name: str
    vendor: str
    memory_bytes: int
    tflops: Mapping[str, float | None] = field(hash=False)
    bf16: bool
    interconnect: str
    spec_source: str
    price_per_hour: float | None
    price_as_of: str | None
    price_source: str
    aliases: tuple[str, ...] = ()

    def peak_flops(self, compute: str) -> float | None:
        """Dense peak FLOP/s for a format (``bf16``, ``fp32``…); None when unsupported."""
        tflops = self.tflops.get(compute)
        return None if tflops is None else tflops * 1e12


@dataclass(frozen=True)
class MoeSpec:
    """Mixture-of-experts layout (config.json): routed experts, experts per token, shared
    experts and the first ``dense_layers`` layers that keep a dense MLP of ``dense_ffn_hidden``
    (DeepSeek's ``first_k_dense_replace``); the routed expert width is the entry's ffn_hidden."""

    experts: int
    top_k: int
    shared: int = 0
    dense_layers: int = 0
    dense_ffn_hidden: int | None = None
    router_bias: bool = False  # DeepSeek-V3's e_score_correction_bias, one per expert


@dataclass(frozen=True)
class MlaSpec:
    """Multi-head latent attention (DeepSeek-V2/V3 config.json); ``q_lora_rank`` None when
    queries are projected directly (V2-Lite)."""

    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None


@dataclass(frozen=True)
class ModelSpecEntry:
    """A known decoder-only model: its config.json dimensions and exact parameter count.

    ``head_dim`` is the config's explicit head width (None: hidden/heads); ``norms`` the
    hidden-size norm vectors per layer (2 pre-norm, 4 for Gemma 2/3's sandwich norms, 0 for
    OLMo's non-parametric LayerNorm); ``qk_norm`` "head" for per-head q/k RMSNorms (Qwen3,
    Gemma 3), "full" for norms over the whole q/k projections (OLMo 2); ``qkv_bias`` Qwen2's
    q/k/v biases. ``moe``/``mla`` hold what params_from_dims does not model.
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    tied_embeddings: bool
    glu: bool
    params: int
    aliases: tuple[str, ...] = ()
    active_params: int | None = None  # MoE: parameters used per token; None when dense
    source: str = ""  # where the dimensions and counts come from
    head_dim: int | None = None
    norms: int = 2
    qk_norm: str | None = None
    qkv_bias: bool = False
    moe: MoeSpec | None = None
    mla: MlaSpec | None = None


SampleFamily = Literal["convnet", "transformer", "unet"]
Scaling = Literal["pixels", "seconds", "fixed"]
_FAMILIES: tuple[str, ...] = ("convnet", "transformer", "unet")
_SCALINGS: tuple[str, ...] = ("pixels", "seconds", "fixed")


@dataclass(frozen=True)
class SampleModel:
    """A vision, diffusion or speech model: its parameters and the FLOPs of one forward pass of
    one sample at the reference input (``image_size`` pixels of the square side, or
    ``audio_seconds``), and how the count follows the job's input (``scaling``): ``pixels`` as
    (side / image_size) ** ``size_exponent``, ``seconds`` in proportion, ``fixed`` not at all
    (Whisper pads every clip to 30 s). ``family`` picks the utilisation band."""

    name: str
    family: SampleFamily
    params: int
    forward_flops: float
    scaling: Scaling
    image_size: int | None = None
    audio_seconds: float | None = None
    size_exponent: float = 2.0
    aliases: tuple[str, ...] = ()
    source: str = ""

    def forward_flops_at(self, image_size: float | None, audio_seconds: float | None) -> float:
        """Forward FLOPs of one sample at the job's input; the reference input's when the job
        does not state it (or states the other kind)."""
        if self.scaling == "pixels" and image_size and self.image_size:
            scale: float = (image_size / self.image_size) ** self.size_exponent
            return self.forward_flops * scale
        if self.scaling == "seconds" and audio_seconds and self.audio_seconds:
            return self.forward_flops * audio_seconds / self.audio_seconds
        return self.forward_flops


@cache
def data_file(name: str) -> Any:
    """``data/<name>`` parsed, once a run (``models.json`` holds two catalogs; the estimates
    read ``gpus.json`` and ``mfu.json`` too): shared, never modified."""
    data = resources.files("trainlint.catalog") / "data" / name
    return json.loads(data.read_text(encoding="utf-8"))


def _gpu(row: Mapping[str, Any]) -> GpuSpec:
    tflops = {str(k): None if v is None else float(v) for k, v in row["tflops"].items()}
    price = row["price_per_hour"]
    return GpuSpec(
        name=str(row["name"]),
        vendor=str(row["vendor"]),
        memory_bytes=int(row["memory_bytes"]),
        tflops=tflops,
        bf16=bool(row["bf16"]),
        interconnect=str(row["interconnect"]),
        spec_source=str(row["spec_source"]),
        price_per_hour=None if price is None else float(price),
        price_as_of=row["price_as_of"],
        price_source=str(row["price_source"]),
        aliases=tuple(str(a) for a in row["aliases"]),
    )


def _opt_int(row: Mapping[str, Any], key: str) -> int | None:
    value = row.get(key)
    return None if value is None else int(value)


def _moe(row: Mapping[str, Any] | None) -> MoeSpec | None:
    if row is None:
        return None
    return MoeSpec(
        experts=int(row["experts"]),
        top_k=int(row["top_k"]),
        shared=int(row.get("shared", 0)),
        dense_layers=int(row.get("dense_layers", 0)),
        dense_ffn_hidden=_opt_int(row, "dense_ffn_hidden"),
        router_bias=bool(row.get("router_bias", False)),
    )


def _mla(row: Mapping[str, Any] | None) -> MlaSpec | None:
    if row is None:
        return None
    return MlaSpec(
        kv_lora_rank=int(row["kv_lora_rank"]),
        qk_nope_head_dim=int(row["qk_nope_head_dim"]),
        qk_rope_head_dim=int(row["qk_rope_head_dim"]),
        v_head_dim=int(row["v_head_dim"]),
        q_lora_rank=_opt_int(row, "q_lora_rank"),
    )


def _model(row: Mapping[str, Any]) -> ModelSpecEntry:
    ints = {k: int(row[k]) for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden")}
    qk_norm = row.get("qk_norm")
    if qk_norm not in (None, "head", "full"):
        raise ValueError(f"{row['name']}: qk_norm must be 'head' or 'full', not {qk_norm!r}")
    return ModelSpecEntry(
        name=str(row["name"]),
        **ints,
        vocab=int(row["vocab"]),
        tied_embeddings=bool(row["tied_embeddings"]),
        glu=bool(row["glu"]),
        params=int(row["params"]),
        aliases=tuple(str(a) for a in row["aliases"]),
        active_params=_opt_int(row, "active_params"),
        source=str(row.get("source", "")),
        head_dim=_opt_int(row, "head_dim"),
        norms=int(row.get("norms", 2)),
        qk_norm=qk_norm,
        qkv_bias=bool(row.get("qkv_bias", False)),
        moe=_moe(row.get("moe")),
        mla=_mla(row.get("mla")),
    )


def _sample_model(row: Mapping[str, Any]) -> SampleModel:
    family, scaling = str(row["family"]), str(row["scaling"])
    if family not in _FAMILIES or scaling not in _SCALINGS:
        raise ValueError(f"{row['name']}: unknown family {family!r} or scaling {scaling!r}")
    reference = row.get("image_size") if scaling == "pixels" else row.get("audio_seconds")
    if scaling != "fixed" and not reference:
        raise ValueError(f"{row['name']}: {scaling} scaling needs its reference input")
    audio = row.get("audio_seconds")
    return SampleModel(
        name=str(row["name"]),
        family=cast(SampleFamily, family),
        params=int(row["params"]),
        forward_flops=float(row["forward_flops"]),
        scaling=cast(Scaling, scaling),
        image_size=_opt_int(row, "image_size"),
        audio_seconds=None if audio is None else float(audio),
        size_exponent=float(row.get("size_exponent", 2.0)),
        aliases=tuple(str(a) for a in row["aliases"]),
        source=str(row["source"]),
    )


@cache
def gpus() -> tuple[GpuSpec, ...]:
    """Every GPU in the catalog, in catalog order (oldest first)."""
    return tuple(_gpu(row) for row in data_file("gpus.json")["gpus"])


@cache
def models() -> tuple[ModelSpecEntry, ...]:
    """Every known model in the catalog."""
    return tuple(_model(row) for row in data_file("models.json")["models"])


@cache
def sample_models() -> tuple[SampleModel, ...]:
    """Every vision, diffusion and speech model in the catalog."""
    return tuple(_sample_model(row) for row in data_file("models.json")["sample_models"])


def _key(text: str, noise: frozenset[str]) -> str:
    tokens = _SEPARATORS.split(text.strip().lower())
    return "".join(t for t in tokens if t and t not in noise)


def _gpu_key(text: str) -> str:
    tokens = _SEPARATORS.split(text.strip().lower())
    return _key(" ".join(t for t in tokens if not _GPU_COUNT_WORD.fullmatch(t)), _GPU_NOISE)


def _index(
    entries: Iterable[GpuSpec | ModelSpecEntry | SampleModel], key: Callable[[str], str]
) -> dict[str, Any]:
    index: dict[str, Any] = {}
    for entry in entries:
        for spelling in (entry.name, *entry.aliases):
            index.setdefault(key(spelling), entry)
    return index


def _model_key(text: str) -> str:
    return _key(text, _MODEL_NOISE)


@cache
def _gpu_index() -> dict[str, GpuSpec]:
    return _index(gpus(), _gpu_key)


@cache
def _model_index() -> dict[str, ModelSpecEntry]:
    return _index(models(), _model_key)


def _sample_key(text: str) -> str:
    """Separators dropped, case folded, no word dropped: ``base`` and ``large`` name sizes here
    (``vit_base_patch16_224``, ``wav2vec2-base``)."""
    return _key(text, frozenset())


@cache
def _sample_index() -> dict[str, SampleModel]:
    return _index(sample_models(), _sample_key)


# Weight and config files name the model they hold: ``yolov8n.pt``, ``sd_xl_base_1.0.safetensors``.
_FILE_SUFFIX = re.compile(r"\.(?:pt|pth|ckpt|safetensors|bin|yaml|yml|py|onnx)$", re.IGNORECASE)


def _spellings(part: str) -> tuple[str, ...]:
    """A path component as written, without a weight or config file's suffix, and without a
    timm pretrained tag (``resnet50.a1_in1k``: what follows the first dot)."""
    bare = _FILE_SUFFIX.sub("", part)
    return (part, bare, bare.split(".", 1)[0])


def resolve_sample_model(name: str) -> SampleModel | None:
    """The vision, diffusion or speech model a name means (a torchvision or timm name, a Hub
    id, a weight file, a detectron2 or mmdet config); None when unknown.

    Tries the whole name (a Hub id as the catalog lists it: ``google/vit-base-patch16-224``),
    then each path component from the last, as written, then without a file suffix, then
    without a timm pretrained tag; case and separators ignored."""
    index = _sample_index()
    for part in (name, *reversed(re.split(r"[/\\]+", name.strip()))):
        for spelling in _spellings(part):
            key = _sample_key(spelling)
            if key and key in index:
                return index[key]
    return None


def resolve_gpu(name: str) -> GpuSpec | None:
    """The catalog GPU a config means; None when unknown.

    Case-insensitive; ``-``, ``_``, ``:``, ``/`` and spaces are ignored, as are vendor words
    (NVIDIA, Tesla, AMD, Instinct) and a count (``H100:8``, ``8x H100``, ``gpu_8x_h100_sxm5``).
    Bare ``A100`` is the 40GB part (SkyPilot, GCP ``nvidia-tesla-a100`` and AWS p4d all mean
    it), bare ``V100`` the 16GB one, bare ``H100`` the SXM one.
    """
    match = _GPU_COUNT.match(name.strip())
    if match is None:
        return None
    return _gpu_index().get(_gpu_key(match["name"]))


def resolve_model(name: str) -> ModelSpecEntry | None:
    """The known model a Hub id or a path names; None when unknown.

    Tries each path component from the last (``checkpoints/meta-llama/Meta-Llama-3.1-8B``),
    case-insensitively, ignoring separators and the words meta/instruct/chat/hf/base.
    """
    index = _model_index()
    for part in reversed(re.split(r"[/\\]+", name.strip())):
        key = _model_key(part)
        if key in index:
            return index[key]
    return None


def params_from_dims(  # noqa: PLR0913 - a transformer's dimensions, one per config key
    layers: int,
    hidden: int,
    vocab: int,
    ffn_hidden: int | None = None,
    heads: int | None = None,
    kv_heads: int | None = None,
    tied: bool = True,
    glu: bool | None = None,
    *,
    head_dim: int | None = None,
    norms: int = 2,
    qk_norm: str | None = None,
    qkv_bias: bool = False,
) -> int:
    """Parameters of a dense decoder-only transformer from its dimensions.

    Per layer: Q and O projections h·(heads·head_dim) each, K and V h·(kv_heads·head_dim)
    each (GQA; head_dim defaults to h/heads, so 2h² + 2h·(kv_heads·h/heads)), the MLP 3·h·ffn
    when gated (SwiGLU/GeGLU) or 2·h·ffn (GELU), ``norms`` norm vectors of h (2; Gemma 2/3
    have 4; 0 for a non-parametric LayerNorm, which also drops the final norm). Optional:
    ``qk_norm="head"`` adds per-head q/k norms (2·head_dim: Qwen3, Gemma 3), ``"full"`` norms
    over the whole q and k projections (OLMo 2); ``qkv_bias`` the q/k/v biases (Qwen2).
    ``glu=None`` decides by width: a 4h MLP is GELU (GPT-2, OPT, Falcon), any other width
    gated (Llama, Mistral, Qwen). Without ffn_hidden the MLP is Kaplan's 8h² (12·L·h² per
    model with MHA). Other biases and learned position embeddings are left out (<1% for
    GPT-2 124M); MoE experts and MLA attention are not modelled (the catalog lists them).
    """
    if heads and head_dim:
        q_width = heads * head_dim
        kv_width = (kv_heads or heads) * head_dim
    else:
        q_width = hidden
        kv_width = hidden * kv_heads // heads if heads and kv_heads else hidden
    attention = 2 * hidden * q_width + 2 * hidden * kv_width
    if qkv_bias:
        attention += q_width + 2 * kv_width
    if qk_norm == "head":
        attention += 2 * (head_dim or (hidden // heads if heads else hidden))
    elif qk_norm == "full":
        attention += q_width + kv_width
    if ffn_hidden is None:
        mlp = 8 * hidden * hidden
    else:
        gated = glu if glu is not None else ffn_hidden != 4 * hidden
        mlp = (3 if gated else 2) * hidden * ffn_hidden
    per_layer = attention + mlp + norms * hidden
    embeddings = vocab * hidden * (1 if tied else 2)
    final_norm = hidden if norms else 0
    return layers * per_layer + embeddings + final_norm
