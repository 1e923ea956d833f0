"""Checkpoint size, overhead, retention and the suggested interval (cost-model §8)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.estimate.jobs import llmc_gpt2, make_job
from trainlint.estimate import EstimateParams, estimate
from trainlint.estimate.checkpoint import (
    async_blocking_s,
    checkpoint_bytes,
    daly_interval_s,
    interval_steps,
    job_mtbf_s,
    overhead_fraction,
    suggested_interval,
)


@pytest.mark.parametrize(
    ("training", "checkpoint", "bytes_per_param"),
    [
        ({"precision": "bf16", "optimizer": {"name": "adamw"}}, {}, 14),  # 2 + 4 + 4 + 4
        ({"precision": "fp32", "optimizer": {"name": "adamw"}}, {}, 12),  # weights + m + v
        ({"precision": "bf16"}, {"save_optimizer": False}, 2),
        ({"precision": "fp32"}, {"save_optimizer": False}, 4),
    ],
)
def test_checkpoint_bytes_per_parameter(
    training: dict[str, Any], checkpoint: dict[str, Any], bytes_per_param: int
) -> None:
    job = make_job(model={"params": 1_000_000_000}, training=training, checkpoint=checkpoint)
    assert estimate(job).checkpoint.size_bytes == 1e9 * bytes_per_param


def test_bloom_checkpoint_is_about_2_3_tb() -> None:
    """cost-model §8.1: BLOOM-176B's 2.3 TB checkpoint is consistent with 14 B/param."""
    size = checkpoint_bytes(176e9, 176e9, 2, 12, save_optimizer=True)
    assert size / 2**40 == pytest.approx(2.24, abs=0.01)


def test_lora_checkpoints_hold_only_adapters() -> None:
    job = make_job(
        model={"params": 8_000_000_000, "trainable_params": 20_000_000, "peft": {"method": "lora"}},
        training={"precision": "bf16", "optimizer": {"name": "adamw"}},
    )
    assert estimate(job).checkpoint.size_bytes == 20e6 * 14


def test_overhead_fraction_formula() -> None:
    assert overhead_fraction(save_s=10, every_steps=100, step_s=1.0) == 10 / 110


@pytest.mark.parametrize(
    ("every", "total", "expected"),
    [(500, 10_000, 500), (500, None, 500), (0.05, 1000, 50), (0.05, 1001, 51), (0.05, None, None),
     (0, 1000, None), (-1, 1000, None), (1e-9, 10, 1)],
)  # fmt: skip
def test_interval_steps(every: float, total: int | None, expected: int | None) -> None:
    assert interval_steps(every, total) == expected


@given(
    save_s=st.floats(0.01, 1e4),
    step_s=st.floats(1e-3, 1e3),
    target=st.floats(0.001, 0.5),
)
def test_suggested_interval_is_the_smallest_within_target(
    save_s: float, step_s: float, target: float
) -> None:
    every = suggested_interval(save_s, step_s, target)
    assert overhead_fraction(save_s, every, step_s) <= target
    if every > 1:
        assert overhead_fraction(save_s, every - 1, step_s) > target * (1 - 1e-9)


def test_suggested_interval_terminates_when_steps_are_negligible() -> None:
    every = suggested_interval(save_s=1e4, step_s=1e-20, target=0.02)
    assert every > 10**23


def _job(**checkpoint: Any) -> Any:
    return llmc_gpt2(max_steps=10_000).model_copy(
        update={"checkpoint": make_job(checkpoint=checkpoint).checkpoint}
    )


def test_job_checkpoint_cost() -> None:
    est = estimate(_job(strategy="steps", every_steps=100, keep_last=3))
    ck = est.checkpoint
    size = 124_439_808 * 14
    save_s = size / 1e9
    step_s = est.step_time_s
    assert step_s is not None and est.price_per_gpu_hour == 3.5
    assert (ck.size_bytes, ck.save_s, ck.every_steps, ck.saves) == (size, save_s, 100, 100)
    assert ck.overhead_fraction == pytest.approx(save_s / (100 * step_s + save_s))
    assert ck.overhead_gpu_hours == pytest.approx(100 * save_s * 8 / 3600)
    assert ck.overhead_usd == pytest.approx(100 * save_s * 8 / 3600 * 3.5)
    assert (ck.kept, ck.storage_bytes) == (3, 3 * size)
    suggested = ck.suggested_every_steps
    by_target = math.ceil(save_s * 0.98 / (0.02 * step_s))
    daly = daly_interval_s(save_s, job_mtbf_s(50_700, 8))
    assert ck.optimal_every_steps == math.ceil(daly / step_s)
    # capped at the run's 10,000 steps: past the end the advice is "save at the end"
    assert suggested == min(max(by_target, ck.optimal_every_steps), 10_000)
    assert suggested is not None and overhead_fraction(save_s, suggested, step_s) <= 0.02


def test_suggestion_below_the_run_length_is_not_capped() -> None:
    long_run = llmc_gpt2(max_steps=10_000_000).model_copy(
        update={"checkpoint": make_job(checkpoint={"every_steps": 100}).checkpoint}
    )
    ck = estimate(long_run).checkpoint
    assert ck.suggested_every_steps == ck.optimal_every_steps  # Daly dominates, below the end


def test_fraction_of_total_steps() -> None:
    ck = estimate(_job(every_steps=0.05)).checkpoint
    assert (ck.every_steps, ck.saves, ck.kept) == (500, 20, 20)  # no limit keeps every save


def test_fraction_without_total_steps_is_unknown() -> None:
    est = estimate(llmc_gpt2().model_copy(update={"checkpoint": _job(every_steps=0.05).checkpoint}))
    assert est.checkpoint.every_steps is None
    assert "training.max_steps" in est.unknown


def test_no_checkpoints() -> None:
    ck = estimate(_job(strategy="no", every_steps=100)).checkpoint
    assert (ck.saves, ck.kept, ck.storage_bytes, ck.overhead_fraction) == (0, 0, 0.0, 0.0)


def test_epoch_strategy_has_no_step_interval() -> None:
    ck = estimate(_job(strategy="epoch", every_steps=100)).checkpoint
    assert ck.every_steps is None and ck.saves is None and ck.size_bytes is not None


def test_write_bandwidth_and_target_are_parameters() -> None:
    params = EstimateParams(checkpoint_write_bytes_per_s=4e9, target_checkpoint_overhead=0.05)
    fast = estimate(_job(every_steps=100), params).checkpoint
    slow = estimate(_job(every_steps=100)).checkpoint
    assert (fast.optimal_every_steps or 0) < (slow.optimal_every_steps or 0)
    assert fast.save_s == pytest.approx((slow.save_s or 0) / 4)
    assert (fast.suggested_every_steps or 0) <= (slow.suggested_every_steps or 0)


@pytest.mark.parametrize(("mtbf_hours", "minutes"), [(24, 117), (6, 57), (0.25, 9.1)])
def test_daly_figures(mtbf_hours: float, minutes: float) -> None:
    """Daly 2006 Figs. 3-5, δ = 5 min: 117, 57 and 9.1 minutes."""
    assert daly_interval_s(300, mtbf_hours * 3600) / 60 == pytest.approx(minutes, rel=0.006)


def test_daly_beyond_twice_the_mtbf_is_the_mtbf() -> None:
    assert daly_interval_s(1000, 400) == 400
    young = math.sqrt(2 * 1 * 1e6)  # δ << M: Young's first-order interval
    assert daly_interval_s(1, 1e6) == pytest.approx(young, rel=1e-3)


def test_mtbf_scales_with_gpus() -> None:
    """Llama 3: ~50,700 GPU-hours per interruption, one every ~3.1 h on 16,384 GPUs (§8.3)."""
    assert job_mtbf_s(50_700, 16_384) / 3600 == pytest.approx(3.09, rel=0.01)


def test_a_large_cluster_checkpoints_more_often() -> None:
    small = estimate(_job(every_steps=100)).checkpoint.optimal_every_steps
    big = estimate(_job(every_steps=100), EstimateParams(gpu_mtbf_hours=10)).checkpoint
    assert small is not None and big.optimal_every_steps is not None
    assert big.optimal_every_steps < small


def test_async_blocking_is_staging_plus_the_wait_for_an_unfinished_write() -> None:
    assert async_blocking_s(stage_s=1.0, write_s=50.0, interval_s=100.0) == 1.0
    assert async_blocking_s(stage_s=1.0, write_s=150.0, interval_s=100.0) == 51.0
    assert async_blocking_s(stage_s=1.0, write_s=150.0, interval_s=None) == 1.0


def _llama_8b(**checkpoint: Any) -> Any:
    """torchtitan's Llama 3 8B on 8 H100s, FSDP over all of them, 1,000 steps."""
    return make_job(
        model={"name": "llama3-8b", "seq_len": 8192},
        resources={"gpu": {"model": "H100"}, "gpus_per_node": 8},
        training={"micro_batch_size": 1, "max_steps": 1000, "precision": "bf16",
                  "parallelism": {"strategy": "fsdp"}},
        checkpoint={"strategy": "steps", **checkpoint},
    )  # fmt: skip


def test_async_save_stalls_only_for_the_per_gpu_staging_copy() -> None:
    """DCP async_save: the loop waits for each GPU's shard to reach host memory, not the write."""
    sync = estimate(_llama_8b(every_steps=200))
    est = estimate(_llama_8b(every_steps=200, **{"async": True}))
    ck, size = est.checkpoint, est.checkpoint.size_bytes
    assert size is not None and size == sync.checkpoint.size_bytes  # the same bytes are written
    assert ck.save_s == pytest.approx(size / 8 / 10e9)  # FSDP: 1/8 of the state per GPU
    assert sync.checkpoint.save_s == pytest.approx(size / 1e9)
    assert (ck.overhead_fraction or 1) < 0.01 < (sync.checkpoint.overhead_fraction or 0)
    assert (est.sources["checkpoint.async"], est.sources["checkpoint.save_s"]) == (
        "declared", "default")  # fmt: skip
    assert "checkpoint.async" not in sync.sources


def test_async_save_waits_when_the_write_outlasts_the_interval() -> None:
    est = estimate(_llama_8b(every_steps=10, **{"async": True}))
    ck, step_s = est.checkpoint, est.step_time_s
    assert ck.size_bytes is not None and ck.save_s is not None and step_s is not None
    write_s, stage_s = ck.size_bytes / 1e9, ck.size_bytes / 8 / 10e9
    assert 10 * step_s < write_s  # a 112 GB write cannot finish in ten 1.3 s steps
    assert ck.save_s == pytest.approx(stage_s + write_s - 10 * step_s)
    assert (ck.overhead_fraction or 0) > 0.5
    # the suggestion leaves the write time to finish in the background
    assert (ck.suggested_every_steps or 0) >= math.ceil(write_s / step_s)


def test_async_staging_without_sharding_copies_the_whole_state() -> None:
    job = _llama_8b(every_steps=200, **{"async": True})
    job = job.model_copy(update={"training": job.training.model_copy(
        update={"parallelism": make_job().training.parallelism})})  # fmt: skip
    ck = estimate(job, EstimateParams(checkpoint_stage_bytes_per_s=20e9)).checkpoint
    assert ck.size_bytes is not None
    assert ck.save_s == pytest.approx(ck.size_bytes / 20e9)


def _default(value: object, key: str, fmt: str = "detectron2") -> dict[str, object]:
    return {"value": value, "format": fmt, "key": key, "file": "train.yaml", "line": 1, "column": 1}


def test_a_framework_default_interval_counts_where_the_job_states_none() -> None:
    """detectron2's SOLVER.CHECKPOINT_PERIOD default (5000) is what the run saves at: 147 saves
    over 737,500 iterations, sourced ``default``; a stated interval wins."""
    defaults = {
        "/checkpoint/every_steps": _default(5000, "SOLVER.CHECKPOINT_PERIOD"),
        "/checkpoint/strategy": _default("steps", "SOLVER.CHECKPOINT_PERIOD"),
    }
    job = make_job(
        model={"params": 700_000_000},
        resources={"gpu": {"model": "A100-80GB"}, "gpus_per_node": 8},
        training={"max_steps": 737_500, "global_batch_size": 16},
        defaults=defaults,
    )
    est = estimate(job)
    assert (est.checkpoint.every_steps, est.checkpoint.saves) == (5000, 147)
    assert est.sources["checkpoint.every_steps"] == "default"
    every_100 = job.checkpoint.model_copy(update={"every_steps": 100})
    stated = job.model_copy(update={"checkpoint": every_100})
    assert estimate(stated).checkpoint.every_steps == 100
    assert estimate(stated).sources["checkpoint.every_steps"] == "declared"


def test_a_default_interval_never_mixes_with_a_stated_strategy() -> None:
    """A job that states when it saves (by epoch) takes no default step interval."""
    job = make_job(
        model={"params": 700_000_000},
        training={"max_steps": 737_500},
        checkpoint={"strategy": "epoch"},
        defaults={"/checkpoint/every_steps": _default(5000, "SOLVER.CHECKPOINT_PERIOD")},
    )
    assert estimate(job).checkpoint.every_steps is None


def test_a_framework_default_retention_limits_the_kept_saves() -> None:
    job = make_job(
        model={"params": 700_000_000},
        training={"max_steps": 10_000},
        checkpoint={"every_steps": 100},
        defaults={"/checkpoint/keep_last": _default(2, "save_period", "ultralytics")},
    )
    est = estimate(job)
    assert est.checkpoint.kept == 2
    assert est.sources["checkpoint.kept"] == "default"
