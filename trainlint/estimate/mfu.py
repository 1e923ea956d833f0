"""The MFU band: the model FLOPs utilisation a job plausibly reaches, low, most likely, high.

A stand-in until the published-runs table lands (issue 21 item 3): the pack's single ``mfu``
(0.4, cost-model §4.3-4.4) with the spread that section gives for tuned dense training,
35-45%, widened to 30-50% for untuned jobs.
"""

from __future__ import annotations

from typing import NamedTuple

from trainlint.catalog import GpuSpec
from trainlint.estimate.params import EstimateParams

_SPREAD = 0.25  # ±25% of the point: 0.3-0.5 around 0.4
_DEFAULT_MFU: float = EstimateParams.model_fields["mfu"].default


class Band(NamedTuple):
    low: float
    point: float
    high: float


def mfu_band(
    params: float | None,
    gpu: GpuSpec | None,
    precision: str | None,
    world: int | None,
    sharded: bool,
) -> Band:
    """The MFU band for a job of ``params`` parameters on ``world`` ``gpu``s; this stand-in
    ignores them and spreads the default MFU."""
    point = _DEFAULT_MFU
    return Band(point * (1 - _SPREAD), point, min(1.0, point * (1 + _SPREAD)))
