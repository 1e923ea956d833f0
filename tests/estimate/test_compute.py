"""Step time and MFU against llm.c's GPT-2 124M run on 8xH100 (cost-model §4.4, §7)."""

from __future__ import annotations

import pytest

from tests.estimate.jobs import llmc_gpt2, make_job
from trainlint.estimate import EstimateParams, estimate
from trainlint.estimate.compute import flops_per_token, implied_mfu, step_time_s

GPT2_PARAMS = 124_439_808
LLMC_TOKENS = 524_288  # 8 GPUs x 64 x 1024
LLMC_STEP_S = 0.140  # llm.c baseline: 140 ms x 19,560 steps (modded-nanogpt README)
H100_BF16 = 989e12


def _gpt2_flops() -> float:
    return flops_per_token(GPT2_PARAMS, layers=12, hidden=768, seq_len=1024)


def test_flops_per_token_is_palm_appendix_b() -> None:
    assert _gpt2_flops() == 6 * GPT2_PARAMS + 12 * 12 * 768 * 1024
    assert flops_per_token(GPT2_PARAMS) == 6 * GPT2_PARAMS  # attention term needs L, h, s


def test_llmc_implies_about_40_percent_mfu() -> None:
    """cost-model §4.4: '40% by PaLM formula on 8xH100 for GPT-2 124M in llm.c'."""
    mfu = implied_mfu(LLMC_TOKENS, _gpt2_flops(), 8, H100_BF16, LLMC_STEP_S)
    assert mfu == pytest.approx(0.407, abs=0.005)
    assert step_time_s(LLMC_TOKENS, _gpt2_flops(), 8, H100_BF16, mfu) == pytest.approx(LLMC_STEP_S)


def test_llmc_step_time_from_the_job() -> None:
    est = estimate(llmc_gpt2())
    assert est.tokens_per_step == LLMC_TOKENS
    assert est.flops_per_token == _gpt2_flops()
    assert est.step_time_s == pytest.approx(LLMC_STEP_S, rel=0.03)  # at the default MFU 0.4
    assert est.sources["step_time_s"] == "default"
    mfu = 0.407
    tuned = estimate(llmc_gpt2(), EstimateParams(mfu=mfu))
    assert tuned.step_time_s == pytest.approx(LLMC_STEP_S, rel=0.01)


def test_global_batch_uses_data_parallel_ranks() -> None:
    tp2 = llmc_gpt2(parallelism={"tensor": 2})
    assert estimate(tp2).tokens_per_step == LLMC_TOKENS // 2


def test_declared_global_batch_wins_and_gives_micro_batch() -> None:
    job = llmc_gpt2(micro_batch_size=None, global_batch_size=512)
    est = estimate(job)
    assert est.tokens_per_step == 512 * 1024
    assert est.memory.activations_bytes is not None  # micro-batch 512 / 8 = 64 was derived


def test_recompute_costs_a_third_more() -> None:
    plain = estimate(llmc_gpt2()).step_time_s
    recomputed = estimate(llmc_gpt2(activation_checkpointing=True)).step_time_s
    assert plain is not None and recomputed is not None
    assert recomputed == pytest.approx(plain * 4 / 3)


@pytest.mark.parametrize(("precision", "peak_tflops"), [("fp32", 67), ("tf32", 494.5)])
def test_fp32_runs_at_the_fp32_peak(precision: str, peak_tflops: float) -> None:
    """PyTorch leaves TF32 matmuls off by default: fp32 training gets the fp32 peak."""
    bf16 = estimate(llmc_gpt2()).step_time_s
    other = estimate(llmc_gpt2(precision=precision)).step_time_s
    assert bf16 is not None and other is not None
    assert other == pytest.approx(bf16 * 989 / peak_tflops)


def test_bf16_on_v100_has_no_step_time() -> None:
    job = llmc_gpt2()
    job = job.model_copy(update={"resources": job.resources.model_copy(
        update={"gpu": job.resources.gpu.model_copy(update={"model": "V100"})})})  # fmt: skip
    est = estimate(job)
    assert est.step_time_s is None
    assert "catalog.V100-16GB.tflops.bf16" in est.unknown


def test_world_size_from_nodes() -> None:
    job = make_job(resources={"gpus_per_node": 8, "nodes": 4})
    est = estimate(job)
    assert est.gpus == 32
    assert est.sources["gpus"] == "estimated"
