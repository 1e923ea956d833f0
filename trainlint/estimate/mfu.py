"""Achieved FLOP/s as a band, from published training runs like the job.

One MFU for every job (0.4) was off by 10-40% against published runs: GPT-2 124M on one node,
a 7B on 8 A100s and Llama 3 405B on 16k H100s reach different shares of their peak. The runs in
``catalog/data/mfu.json`` each cite a paper or a benchmark table; ``mfu_band`` takes its point
from the runs most like the job and its ends from every run on the same hardware and format.
A pure function of its arguments: the table ships with trainlint, and an org's
``EstimateParams.mfu`` replaces the band (compute.py).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal, NamedTuple

from trainlint.catalog import GpuSpec, data_file

MIN_RUNS = 3
"""A filter narrows the runs only while it leaves this many: a band from one run has no spread."""

LOW_SHARE = 0.8
"""The band's low end is this share of the least efficient run on the job's hardware: published
runs were tuned by their authors; an untuned job reaches less (assumed)."""

FALLBACK = 0.4
"""The point when the table has no runs at all (cost-model §4.3-4.4: 35-45% tuned dense)."""

RECOMPUTE_WORK = 4.0 / 3.0
"""Full recomputation executes 4/3 of the model FLOPs (Korthikanti 2022 §4.2)."""

_GENERATIONS = {
    "V100": "volta",
    "T4": "turing",
    "A10G": "ampere",
    "A100": "ampere",
    "L4": "ada",
    "L40S": "ada",
    "H100": "hopper",
    "H200": "hopper",
    "B200": "blackwell",
    "MI300X": "cdna3",
}
"""Catalog names by prefix to architecture generation: runs transfer within one generation."""

_SIZE_DECADES = (1e9, 1e10, 1e11)
"""Size classes: below 1B, 1-10B, 10-100B, 100B and up (the table's runs span 125M to 1T)."""

_ONE_NODE = 8
"""Runs on at most one HGX/DGX node talk over NVLink only; larger ones cross the fabric."""


class Band(NamedTuple):
    """Utilisation of the executed FLOPs: the least, the most likely and the most expected."""

    low: float
    point: float
    high: float


Family = Literal["language", "convnet", "transformer", "unet"]

_FAMILY_RUNS: dict[str, frozenset[str]] = {
    "language": frozenset({"language"}),
    "convnet": frozenset({"convnet"}),
    "transformer": frozenset({"language"}),
    "unet": frozenset({"unet", "convnet"}),
}
"""The runs each model family's band is drawn from. Vision and speech transformers (ViT, Swin,
DiT, Whisper, wav2vec2) spend their FLOPs in the same GEMMs as language models: the language
runs stand in until the table holds their own. A diffusion UNet's own runs are inference
(forward passes, an upper bound for training); it is half convolutions (49% of SD 1.4's UNet
operations: onnx-tool's count), so the convnet runs widen its band downward (assumed)."""


@dataclass(frozen=True)
class Run:
    """One published run: its model family, size, hardware, precision, layout and the
    utilisation reached."""

    params: float
    gpu: str
    precision: str
    gpus: int
    sharded: bool
    utilization: float  # of executed work: MFU, times 4/3 under full recomputation
    source: str
    family: str = "language"


@cache
def runs() -> tuple[Run, ...]:
    """The published runs of ``catalog/data/mfu.json``."""
    rows = data_file("mfu.json")["runs"]
    return tuple(
        Run(
            params=float(r["params"]),
            gpu=str(r["gpu"]),
            precision=str(r["precision"]),
            gpus=int(r["gpus"]),
            sharded=bool(r["sharded"]),
            utilization=float(r["mfu"]) * (RECOMPUTE_WORK if r["full_recompute"] else 1.0),
            source=str(r["source"]),
            family=str(r.get("family", "language")),
        )
        for r in rows
    )


def generation(gpu: str) -> str | None:
    """The architecture generation of a catalog GPU name; None when not in the map."""
    return next((gen for prefix, gen in _GENERATIONS.items() if gpu.startswith(prefix)), None)


def _size_class(params: float) -> int:
    return sum(params >= edge for edge in _SIZE_DECADES)


def _precision_class(precision: str | None, families: frozenset[str]) -> str:
    """fp8 runs are measured against the fp8 peak; every other format runs its GEMMs in 16 bits
    or on the format's own peak (fp32, tf32: assumed like bf16). Convolutions are another
    matter: memory-bound layers (normalisation, activations) weigh more the faster the peak,
    so convnets reach 43-56% of the fp32 peak, 9-14% of TF32's and 13-20% of fp16's (the
    convnet runs of mfu.json): their runs are told apart by format."""
    if precision == "fp8":
        return "fp8"
    if "convnet" in families and precision in ("fp32", "tf32"):
        return precision
    return "16-bit"


@dataclass(frozen=True)
class Lookup:
    """What the table is searched by, in the classes its tests compare (a job's exact size,
    GPU and GPU count matter only through them, so lookups of one class share a band)."""

    precision: str  # _precision_class
    generation: str | None  # of the GPU; None when unknown
    size: int | None  # _size_class of the parameter count; None when unknown
    one_node: bool | None  # at most one node of GPUs; None when the count is unknown
    sharded: bool
    families: frozenset[str] = frozenset({"language"})  # the runs' families (_FAMILY_RUNS)


def _hardware_tests(job: Lookup) -> list[Callable[[Run], bool]]:
    """Tests of the hardware and number format: runs that pass them bound the band."""
    tests: list[Callable[[Run], bool]] = [
        lambda r: _precision_class(r.precision, job.families) == job.precision
    ]
    if job.generation is not None:
        tests.append(lambda r: generation(r.gpu) == job.generation)
    return tests


def _workload_tests(job: Lookup) -> list[Callable[[Run], bool]]:
    """Tests of size and layout, most telling first: runs that pass them give the point."""
    tests: list[Callable[[Run], bool]] = []
    if job.size is not None:
        tests.append(lambda r: _size_class(r.params) == job.size)
    if job.one_node is not None:
        tests.append(lambda r: (r.gpus <= _ONE_NODE) == job.one_node)
    tests.append(lambda r: r.sharded == job.sharded)
    return tests


def _narrow(chosen: Sequence[Run], tests: list[Callable[[Run], bool]]) -> list[Run]:
    """Apply each test in turn while it leaves ``MIN_RUNS``: a band from one run has no spread."""
    for test in tests:
        narrower = [r for r in chosen if test(r)]
        if len(narrower) >= MIN_RUNS:
            chosen = narrower
    return list(chosen)


def peer_runs(job: Lookup) -> list[Run]:
    """Published runs of the job's model families on its GPU generation and number format:
    their spread is what a job on this hardware may reach, whatever its size and layout."""
    family = [r for r in runs() if r.family in job.families]
    return _narrow(family, _hardware_tests(job))


def similar_runs(job: Lookup) -> list[Run]:
    """The peers most like the job in size, scale and sharding."""
    return _narrow(peer_runs(job), _workload_tests(job))


def mfu_band(  # noqa: PLR0913 - the job's traits the table is searched by
    params: float | None,
    gpu: GpuSpec | None,
    precision: str | None,
    world: int | None,
    sharded: bool,
    family: Family = "language",
) -> Band:
    """Utilisation of the executed FLOPs for a job like this: the median of the most similar
    published runs, from ``LOW_SHARE`` of the least to the most efficient run on the same
    hardware and format (the nearest runs agree more closely than jobs do: Llama 2's
    production runs reached less than MosaicML's benchmarks of the same sizes). A vision,
    diffusion or speech model's band comes from its family's runs (``_FAMILY_RUNS``); their
    size classes are a language model's, so only a language model is matched by size."""
    families = _FAMILY_RUNS[family]
    sized = family == "language" and params is not None and params > 0
    return _band(
        Lookup(
            precision=_precision_class(precision, families),
            generation=generation(gpu.name) if gpu else None,
            size=_size_class(params) if sized and params is not None else None,
            one_node=None if world is None else world <= _ONE_NODE,
            sharded=sharded,
            families=families,
        )
    )


@cache
def _band(job: Lookup) -> Band:
    """``mfu_band`` of one lookup class: a few dozen classes, each computed once."""
    peers = [r.utilization for r in peer_runs(job)]
    if not peers:
        return Band(FALLBACK * LOW_SHARE, FALLBACK, FALLBACK)
    point = statistics.median(r.utilization for r in similar_runs(job))
    band = Band(min(peers) * LOW_SHARE, point, max(peers))
    assert all(math.isfinite(v) and 0 < v <= 1 for v in band), band
    return band
