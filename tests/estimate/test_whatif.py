"""The counterfactual estimates: without recomputation, fixes that fit, and mixed precision."""

from __future__ import annotations

import pytest

from tests.estimate.jobs import llmc_gpt2, make_job
from trainlint.estimate import estimate
from trainlint.job import Default, Job


def _llama_one_gpu(**training: object) -> Job:
    return make_job(
        model={"name": "meta-llama/Meta-Llama-3-8B", "seq_len": 2048},
        resources={"gpu": {"model": "A100-80GB"}, "world_size": 1},
        training={"micro_batch_size": 4, "precision": "bf16", "max_steps": 100, **training},
    )


def test_full_recompute_costs_a_quarter_of_a_compute_bound_step() -> None:
    job = llmc_gpt2(activation_checkpointing=True, max_steps=1000)
    est = estimate(job)
    rc = est.recompute
    assert rc.mode == "full"
    assert rc.overhead_fraction == pytest.approx(0.25, abs=0.01)
    assert est.step_time_s is not None and rc.step_time_without_s is not None
    assert rc.step_time_without_s == pytest.approx(est.step_time_s * 0.75, rel=0.02)
    # GPU-hours of the extra forward: steps x overhead x GPUs.
    overhead_s = est.step_time_s - rc.step_time_without_s
    assert rc.overhead_gpu_hours == pytest.approx(1000 * overhead_s * 8 / 3600)
    assert rc.overhead_gpu_hours is not None and est.price_per_gpu_hour is not None
    assert rc.overhead_usd == pytest.approx(rc.overhead_gpu_hours * est.price_per_gpu_hour)
    assert est.sources["recompute.overhead_gpu_hours"] == "default"


def test_memory_without_recompute_holds_every_layers_activations() -> None:
    est = estimate(llmc_gpt2(activation_checkpointing=True))
    mem = est.memory
    assert mem.total_bytes is not None and mem.total_without_recompute_bytes is not None
    assert mem.total_without_recompute_bytes > mem.total_bytes
    plain = estimate(llmc_gpt2()).memory
    assert mem.total_without_recompute_bytes == pytest.approx(plain.total_bytes)
    assert mem.utilization_without_recompute == pytest.approx(plain.utilization)
    assert "memory.total_without_recompute_bytes" in est.sources


def test_no_recompute_no_counterfactual() -> None:
    est = estimate(llmc_gpt2())
    assert est.recompute.mode is None and est.recompute.overhead_fraction is None
    assert est.memory.total_without_recompute_bytes is None
    selective = estimate(llmc_gpt2(recompute="selective"))
    assert selective.recompute.mode is None


def test_fixes_for_a_job_that_does_not_fit_each_fit_alone() -> None:
    # Llama 3 8B on 8 x A100-80GB, DDP: 128 GB of model states per GPU.
    job = _llama_one_gpu()
    job.resources.world_size = 8
    est = estimate(job)
    assert est.memory.utilization is not None and est.memory.utilization > 1
    changes = [fix.change for fix in est.memory_fixes]
    assert changes[0] == "zero3" and est.memory.gpu_bytes is not None
    for fix in est.memory_fixes:
        assert fix.utilization <= 0.9  # the alternatives' headroom
        assert fix.total_bytes == pytest.approx(fix.utilization * est.memory.gpu_bytes)


def test_micro_batch_fix_is_the_largest_that_fits() -> None:
    job = make_job(
        model={"name": "Qwen/Qwen2.5-0.5B", "seq_len": 4096},
        resources={"gpu": {"model": "L4"}, "world_size": 1},
        training={"micro_batch_size": 32, "precision": "bf16"},
    )
    est = estimate(job)
    micro = [f for f in est.memory_fixes if f.change == "micro_batch"]
    assert micro and micro[0].micro_batch_size is not None
    size = micro[0].micro_batch_size
    assert 1 <= size < 32
    bigger = job.model_copy(deep=True)
    bigger.training.micro_batch_size = size * 2
    assert (estimate(bigger).memory.utilization or 0) > 0.9


def test_nothing_fits_one_gpu_gives_no_fix() -> None:
    est = estimate(_llama_one_gpu())
    assert est.memory.utilization is not None and est.memory.utilization > 1
    assert [f.change for f in est.memory_fixes if f.change != "micro_batch"] == []


def test_a_job_that_fits_needs_no_fixes() -> None:
    assert estimate(llmc_gpt2()).memory_fixes == []


def test_declared_fp32_is_re_estimated_at_bf16_peak() -> None:
    est = estimate(llmc_gpt2(precision="fp32", max_steps=1000))
    mp = est.mixed_precision
    assert mp.precision == "bf16"
    assert mp.peak_ratio == pytest.approx(989 / 67)
    assert est.step_time_s is not None and mp.step_time_s is not None
    assert mp.speedup == pytest.approx(est.step_time_s / mp.step_time_s)
    assert mp.speedup is not None and mp.speedup > 10
    saved = 1000 * (est.step_time_s - mp.step_time_s) * 8 / 3600
    assert mp.saved_gpu_hours == pytest.approx(saved)
    assert est.sources["mixed_precision.peak_ratio"] == "catalog"


def test_fp16_where_the_gpu_has_no_bf16() -> None:
    job = llmc_gpt2(precision="fp32")
    job.resources.gpu.model = "V100-32GB"
    mp = estimate(job).mixed_precision
    assert mp.precision == "fp16"
    assert mp.peak_ratio == pytest.approx(125 / 15.7)


@pytest.mark.parametrize("precision", [None, "bf16", "fp16", "tf32"])
def test_only_declared_fp32_gets_a_mixed_precision_estimate(precision: str | None) -> None:
    mp = estimate(llmc_gpt2(precision=precision)).mixed_precision
    assert mp.precision is None and mp.speedup is None


def _with_precision_default(value: str) -> Job:
    job = llmc_gpt2(precision=None, max_steps=1000)  # no file states it
    job.defaults["/training/precision"] = Default(
        value=value, format="diffusers", key="mixed_precision", file="run.sh", line=3, column=2
    )
    return job


def test_a_framework_s_fp32_default_is_re_estimated_as_declared_fp32_is() -> None:
    """accelerate's ``mixed_precision: no`` under a diffusers script: fp32, not a guess."""
    est = estimate(_with_precision_default("fp32"))
    assert est.mixed_precision.precision == "bf16"
    assert est.mixed_precision.peak_ratio == pytest.approx(989 / 67)
    assert "training.precision" not in est.assumed


def test_a_framework_s_bf16_default_needs_no_mixed_precision_estimate() -> None:
    est = estimate(_with_precision_default("bf16"))
    assert est.mixed_precision.precision is None
