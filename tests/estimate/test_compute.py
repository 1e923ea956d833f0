"""Step time and MFU against llm.c's GPT-2 124M run on 8xH100 (cost-model §4.4, §7)."""

from __future__ import annotations

import pytest

from tests.estimate.jobs import llmc_gpt2, make_job
from trainlint.estimate import EstimateParams, estimate
from trainlint.estimate.compute import (
    exposed_s,
    flops_per_token,
    implied_mfu,
    link_bytes_per_s,
    ring_volume,
    step_time_s,
)
from trainlint.job import Job

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
    # the band of small bf16 runs on one Hopper node (estimate/mfu.py): within 15%
    assert est.step_time_s == pytest.approx(LLMC_STEP_S, rel=0.15)
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


def _two_b_fp32(nodes: int) -> Job:
    """ml-engineering's §9.1 example: 2B params, tf32 (4-byte gradients, 8 GB), global batch 16."""
    return make_job(
        model={"params": 2_000_000_000, "seq_len": 2048},
        resources={"gpu": {"model": "A100-80GB"}, "gpus_per_node": 8, "nodes": nodes},
        training={"global_batch_size": 16, "precision": "tf32", "optimizer": {"name": "adamw"}},
    )


def test_ring_volume_and_zero_stages() -> None:
    """2(n-1)/n per gradient byte; ZeRO-1/2 keep 2Ψ, ZeRO-3 moves 3Ψ (ZeRO paper §7)."""
    assert ring_volume(0, 8) == 1.75
    assert ring_volume(2, 8) == 1.75
    assert ring_volume(3, 8) == pytest.approx(2.625)
    assert ring_volume(0, 1) == 0.0


def test_exposed_comm_is_what_backward_does_not_hide() -> None:
    assert exposed_s(0.64, 0.42, 1.0) == pytest.approx(0.22)
    assert exposed_s(0.05, 0.42, 1.0) == 0.0
    assert exposed_s(0.05, 0.42, 0.0) == 0.05


def test_single_node_allreduce_hides_behind_backward() -> None:
    est = estimate(llmc_gpt2())
    grads = 124_439_808 * 2  # bf16 gradients
    assert est.comm.allreduce_s == pytest.approx(grads * 1.75 / (450e9 * 0.8))
    assert est.comm.exposed_s == 0.0 and est.comm.fraction == 0.0
    assert est.sources["comm.allreduce_s"] == "default"


def test_four_nodes_are_comm_bound() -> None:
    """Across nodes the network carries the ring: 8 GB fp32 grads at 200 Gb/s x 80%."""
    one, four = estimate(_two_b_fp32(1)), estimate(_two_b_fp32(4))
    assert one.comm.exposed_s == 0.0
    assert four.comm.allreduce_s == pytest.approx(8e9 * 2 * 31 / 32 / (25e9 * 0.8))
    assert four.comm.exposed_s is not None and four.comm.exposed_s > 0
    assert four.comm.fraction is not None and four.comm.fraction > 0.5
    assert four.step_time_s is not None and one.step_time_s is not None
    compute = one.step_time_s / 4  # four times the GPUs, the same global batch
    assert four.step_time_s == pytest.approx(compute + four.comm.exposed_s)


def test_comm_parameters() -> None:
    hidden = estimate(_two_b_fp32(4), EstimateParams(network_bytes_per_s=1e13))
    assert hidden.comm.exposed_s == 0.0
    no_overlap = estimate(llmc_gpt2(), EstimateParams(comm_overlap=0.0))
    assert no_overlap.comm.exposed_s == no_overlap.comm.allreduce_s


def test_pcie_gpus_use_pcie_in_a_node() -> None:
    assert link_bytes_per_s("L4", 8, 8, EstimateParams()) == 31e9
    assert link_bytes_per_s("H100-SXM", 8, 8, EstimateParams()) == 450e9
    assert link_bytes_per_s("H100-SXM", 16, 8, EstimateParams()) == 25e9
