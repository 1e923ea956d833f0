"""Published figures the estimator reproduces, one table: figure, source, our value, tolerance.

Each row computes our value with the estimator's own functions; ``rel`` is the relative
tolerance (the published figure's rounding, or the stated simplification).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.estimate.jobs import GB, llmc_gpt2
from trainlint.estimate import EstimateParams, estimate
from trainlint.estimate.checkpoint import daly_interval_s
from trainlint.estimate.compute import (
    comm_time_s,
    flops_per_token,
    implied_mfu,
    model_flops_per_iteration,
    step_time_s,
)
from trainlint.estimate.memory import PerParam, Sharding, activation_bytes, model_states

MIXED_ADAM = PerParam(2, 2, 12)  # ZeRO §3.1: 2 + 2 + K, K = 12
A100, H100 = 312e12, 989e12  # dense bf16 peaks, cost-model §5
MIB = 2**20


@dataclass(frozen=True)
class Figure:
    name: str
    source: str
    published: float
    ours: Callable[[], float | None]
    rel: float


def _zero(stage: int) -> float:
    return model_states(7.5e9, MIXED_ADAM, Sharding(stage=stage, dp=64)).total / GB


def _gpt3_layer(flash: bool, recompute: bool) -> float:
    def total(layers: int) -> float:
        value = activation_bytes(2048, 1, 12288, layers, heads=96, flash=flash, recompute=recompute)
        assert value is not None
        return value

    return (total(2) - total(1)) / MIB


# Korthikanti et al. 2022, Table 3 (s = 2048, v = 51200, A100) and Table 5 (SP + selective).
_TABLE5 = {  # name: (heads, hidden, layers, GPUs, global batch, seconds, MFU)
    "22B": (64, 6144, 48, 8, 4, 1.10, 0.415),
    "175B": (96, 12288, 96, 64, 64, 13.75, 0.514),
    "530B": (128, 20480, 105, 280, 280, 37.83, 0.560),
    "1T": (160, 25600, 128, 512, 512, 71.49, 0.563),
}


def _table5_fpt(name: str) -> tuple[float, float]:
    _, h, layers, _, batch, _, _ = _TABLE5[name]
    params = 12 * layers * h * h + 51200 * h  # GPT layers + embeddings
    return batch * 2048, flops_per_token(params, layers, h, 2048)


def _table5_time(name: str) -> float:
    tokens, fpt = _table5_fpt(name)
    return step_time_s(tokens, fpt, _TABLE5[name][3], A100, _TABLE5[name][6])


def _table5_mfu(name: str) -> float:
    tokens, fpt = _table5_fpt(name)
    return implied_mfu(tokens, fpt, _TABLE5[name][3], A100, _TABLE5[name][5])


def _llmc_step() -> float | None:
    return estimate(llmc_gpt2(), EstimateParams(mfu=0.407)).step_time_s


def _llmc_minutes() -> float | None:
    hours = estimate(llmc_gpt2(max_steps=19_560), EstimateParams(mfu=0.407)).run.hours
    return None if hours is None else hours * 60


GPT2 = flops_per_token(124_439_808, 12, 768, 1024)
_2B = flops_per_token(2e9)  # ml-engineering's example counts 6N (x 4/3 for recomputation)

FIGURES = [
    Figure("ZeRO DP, 7.5B on 64 GPUs (GB)", "ZeRO Fig. 1", 120, lambda: _zero(0), 0.001),
    Figure("ZeRO-1 (GB)", "ZeRO Fig. 1", 31.4, lambda: _zero(1), 0.002),
    Figure("ZeRO-2 (GB)", "ZeRO Fig. 1", 16.6, lambda: _zero(2), 0.003),
    Figure("ZeRO-3 (GB)", "ZeRO Fig. 1", 1.9, lambda: _zero(3), 0.02),
    Figure(
        "GPT-2 1.5B model states (GB)",
        "ZeRO §3.1",
        24,
        lambda: model_states(1.5e9, MIXED_ADAM).total / GB,
        1e-9,
    ),
    Figure(
        "GPT-3 layer, no recompute (MiB)",
        "Korthikanti Table 2 / Eq. 1",
        2736,
        lambda: _gpt3_layer(False, False),
        1e-9,
    ),
    Figure(
        "GPT-3 layer, full recompute (MiB)",
        "Korthikanti Table 2",
        48,
        lambda: _gpt3_layer(False, True),
        1e-9,
    ),
    *(
        Figure(f"{n} iteration time at its MFU (s)", "Korthikanti Table 5", t[5], fn, 0.005)
        for n, t in _TABLE5.items()
        for fn in [lambda n=n: _table5_time(n)]
    ),
    *(
        Figure(f"{n} MFU from its iteration time", "Korthikanti Table 5", t[6], fn, 0.005)
        for n, t in _TABLE5.items()
        for fn in [lambda n=n: _table5_mfu(n)]
    ),
    Figure(
        "Daly interval, M = 24 h, δ = 5 min (min)",
        "Daly 2006 Fig. 3",
        117,
        lambda: daly_interval_s(300, 24 * 3600) / 60,
        0.005,
    ),
    Figure(
        "Daly interval, M = 6 h (min)",
        "Daly 2006 Fig. 4",
        57,
        lambda: daly_interval_s(300, 6 * 3600) / 60,
        0.006,
    ),
    Figure(
        "Daly interval, M = 15 min (min)",
        "Daly 2006 Fig. 5",
        9.1,
        lambda: daly_interval_s(300, 900) / 60,
        0.005,
    ),
    Figure(
        "llm.c GPT-2 124M MFU, 140 ms/step on 8xH100",
        "cost-model §4.4, §7",
        0.40,
        lambda: implied_mfu(524_288, GPT2, 8, H100, 0.140),
        0.02,
    ),
    Figure("llm.c GPT-2 124M step (s)", "modded-nanogpt README", 0.140, _llmc_step, 0.005),
    Figure("llm.c GPT-2 124M run (min)", "modded-nanogpt README", 45.6, _llmc_minutes, 0.005),
    Figure(
        "2B fp32 grads all-reduce, A100 NVLink 300 GB/s (s)",
        "ml-engineering network §9.1",
        0.053,
        lambda: comm_time_s(8e9, 2.0, 300e9),
        0.01,
    ),
    Figure(
        "same on H100 NVLink 450 GB/s (s)",
        "ml-engineering network §9.1",
        0.035,
        lambda: comm_time_s(8e9, 2.0, 450e9),
        0.02,
    ),
    Figure(
        "same across 4 nodes at 200 Gb/s (s)",
        "ml-engineering network §9.1",
        0.64,
        lambda: comm_time_s(8e9, 2.0, 25e9),
        1e-9,
    ),
    Figure(
        "2B, seq 2048, batch 16, 8xA100 at 50% MFU (s)",
        "ml-engineering network §9.1",
        0.42,
        lambda: step_time_s(16 * 2048, _2B, 8, A100, 0.5, recompute=True),
        0.002,
    ),
]


@pytest.mark.parametrize("figure", FIGURES, ids=[f.name for f in FIGURES])
def test_published_figure(figure: Figure) -> None:
    ours = figure.ours()
    assert ours is not None, figure.source
    assert ours == pytest.approx(figure.published, rel=figure.rel), figure.source


def test_eq7_is_our_flops_per_token() -> None:
    """Korthikanti Appendix A Eq. 7 equals B·s·(6N + 12·L·h·s) with N = 12·L·h² + v·h."""
    for _, h, layers, _, batch, _, _ in _TABLE5.values():
        tokens, fpt = (
            batch * 2048,
            flops_per_token(12 * layers * h * h + 51200 * h, layers, h, 2048),
        )
        eq7 = model_flops_per_iteration(batch, layers, h, 2048, 51200)
        assert tokens * fpt == pytest.approx(eq7, rel=1e-12)


def test_ml_engineering_four_nodes_are_comm_bound() -> None:
    """0.64 s of all-reduce exceeds the 0.42 s step compute: communication cannot hide."""
    assert comm_time_s(8e9, 2.0, 25e9) > step_time_s(16 * 2048, _2B, 8, A100, 0.5, True)
