"""Utilisation from published runs, ZeRO-3 gathers, bandwidth by pool (issue 21 item 3)."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources

import pytest

from tests.estimate.jobs import llmc_gpt2, on_gpus
from trainlint.catalog import resolve_gpu
from trainlint.estimate import EstimateParams, estimate
from trainlint.estimate.compute import job_band, job_compute, step_time_s
from trainlint.estimate.inputs import resolve
from trainlint.estimate.ledger import Ledger
from trainlint.estimate.mfu import Band, mfu_band, runs
from trainlint.estimate.params import published_defaults
from trainlint.fleet import Interconnect
from trainlint.job import Gpu, Job, Resources

H100, A100 = resolve_gpu("H100"), resolve_gpu("A100-80GB")


def test_every_run_in_the_table_cites_a_source() -> None:
    data = json.loads(
        (resources.files("trainlint.catalog") / "data" / "mfu.json").read_text(encoding="utf-8")
    )
    cited = set(data["sources"])
    assert {row["source"] for row in data["runs"]} <= cited
    assert all("http" in text for text in data["sources"].values())
    assert len(runs()) >= 50


def test_the_band_depends_on_size_gpu_and_precision() -> None:
    """One 0.4 for every job was the friction: a small model on one Hopper node, a 70B on
    A100s and an fp8 run reach different shares of their peak."""
    small = mfu_band(124e6, H100, "bf16", 8, sharded=False)
    large = mfu_band(70e9, A100, "bf16", 64, sharded=True)
    fp8 = mfu_band(8e9, H100, "fp8", 8, sharded=True)
    assert len({small.point, large.point, fp8.point}) == 3
    assert fp8.point < small.point < large.point  # fp8 is of a peak twice as high
    for band in (small, large, fp8):
        assert 0 < band.low < band.point <= band.high <= 1


def test_unknown_inputs_widen_to_the_whole_precision() -> None:
    known = mfu_band(7e9, A100, "bf16", 8, sharded=True)
    unknown = mfu_band(None, None, "bf16", None, sharded=True)
    assert unknown.low <= known.low and unknown.high >= known.high
    assert mfu_band(None, None, None, None, sharded=False) == Band(*mfu_band(
        None, None, "bf16", None, sharded=False
    ))  # fmt: skip


def test_step_time_uses_the_band_point() -> None:
    job = llmc_gpt2()
    inp = resolve(job, EstimateParams())
    band = job_band(inp)
    est = estimate(job)
    assert est.tokens_per_step and est.flops_per_token and est.step_time_s
    compute = step_time_s(est.tokens_per_step, est.flops_per_token, 8, 989e12, band.point)
    assert est.step_time_s == pytest.approx(compute + (est.comm.exposed_s or 0.0))


def test_an_org_mfu_overrides_the_table() -> None:
    assert published_defaults()["mfu"] is None  # the builtin pack publishes "from the table"
    est = estimate(llmc_gpt2(), EstimateParams(mfu=0.5))
    assert est.tokens_per_step and est.flops_per_token and est.step_time_s
    compute = step_time_s(est.tokens_per_step, est.flops_per_token, 8, 989e12, 0.5)
    assert est.step_time_s == pytest.approx(compute + (est.comm.exposed_s or 0.0))


def _fsdp_8b(accum: int) -> Job:
    fsdp = {"strategy": "fsdp", "zero_stage": 3}
    llama = {"name": "Llama-3-8B", "seq_len": 4096}
    return on_gpus(llama, "H100", 16, micro_batch_size=1, grad_accum_steps=accum, parallelism=fsdp)


def test_zero3_gathers_each_micro_batch_with_latency() -> None:
    """ZeRO-3/FSDP all-gathers the weights per micro-batch (forward and backward) and
    reduce-scatters per micro-batch: 4 micro-batches move 4x the bytes and pay 4x the
    per-layer latency of one."""
    p = EstimateParams()
    one, four = estimate(_fsdp_8b(1), p), estimate(_fsdp_8b(4), p)
    assert one.comm.allreduce_s and four.comm.allreduce_s
    latency = 3 * 32 * p.collective_latency_us * 1e-6  # 32 layers, 3 collectives each
    bytes_s = one.comm.allreduce_s - latency
    assert bytes_s == pytest.approx(8.03e9 * 2 * 3 * 15 / 16 / (25e9 * 0.8), rel=0.01)
    assert four.comm.allreduce_s == pytest.approx(4 * one.comm.allreduce_s)


def test_bandwidth_by_pool_overrides_the_defaults() -> None:
    """An org's pool (the fleet's interconnect) sets NVLink inside a node and the fabric across
    nodes; without it the catalog link and ``network_bytes_per_s`` apply."""
    p = EstimateParams()
    one_node = resolve(_fsdp_8b(1).model_copy(update={"resources": Resources(
        gpu=Gpu(model="H100"), world_size=8, gpus_per_node=8
    )}), p)  # fmt: skip
    catalog = job_compute(one_node, p, Ledger()).comm.allreduce_s
    pool = Interconnect.model_validate({"nvlink-gbps": 1800.0})  # 225 GB/s: half of 450
    slower = dataclasses.replace(one_node, hw=dataclasses.replace(one_node.hw, links=pool))
    halved = job_compute(slower, p, Ledger()).comm.allreduce_s
    assert catalog and halved
    latency = 3 * 32 * p.collective_latency_us * 1e-6
    assert halved - latency == pytest.approx(2 * (catalog - latency))
    across = resolve(_fsdp_8b(1), p)  # 16 GPUs: two nodes, the fabric
    fabric = job_compute(across, p, Ledger()).comm.allreduce_s
    faster = job_compute(across, p.model_copy(update={"network_bytes_per_s": 50e9}), Ledger())
    assert fabric and faster.comm.allreduce_s
    assert faster.comm.allreduce_s - latency == pytest.approx((fabric - latency) / 2)


def _sft(**training: object) -> Job:
    llama = {"name": "Llama-3-8B", "seq_len": 4096}
    return on_gpus(llama, "H100", 8, micro_batch_size=4, max_steps=1000, **training)


def test_padding_to_the_longest_sample_shortens_steps() -> None:
    """LLaVA-style SFT without packing, padded per batch: each step runs on the assumed
    ``padded_fill`` of the maximum length, and the assumption is named."""
    full = estimate(_sft())
    packed = estimate(_sft(packing=True, padding="longest"))
    padded = estimate(_sft(packing=False, padding="longest"))
    fixed = estimate(_sft(packing=False, padding="max_length"))
    assert full.tokens_per_step == packed.tokens_per_step == fixed.tokens_per_step == 32 * 4096
    assert padded.tokens_per_step == 16 * 4096  # padded_fill 0.5
    assert padded.assumed["sample_fill"] == 0.5 and "sample_fill" not in full.assumed
    assert padded.sources["tokens_per_step"] == "default"
    assert full.step_time_s and padded.step_time_s and padded.step_time_s < full.step_time_s
    assert padded.memory.total_bytes == full.memory.total_bytes  # the longest batch still fits


def _seven_b_on_four_nodes(strategy: str) -> Job:
    llama = {"name": "Llama-2-7B", "seq_len": 4096}
    return on_gpus(llama, "H100", 32, micro_batch_size=1, parallelism={"strategy": strategy})


def test_hybrid_shard_gathers_over_nvlink_and_reduces_shards_across_nodes() -> None:
    """litgpt's default HYBRID_SHARD: the per-layer gathers stay on one node's NVLink; only
    each GPU's 1/8 shard of the gradients crosses the fabric (FULL_SHARD gathers across it)."""
    p = EstimateParams()
    hybrid = estimate(_seven_b_on_four_nodes("HYBRID_SHARD"), p).comm.allreduce_s
    full = estimate(_seven_b_on_four_nodes("FULL_SHARD"), p).comm.allreduce_s
    assert hybrid and full and hybrid < full / 3
    grad = 6_738_415_616 * 2
    gather = grad * 3 * 7 / 8 / (450e9 * 0.8)
    reduce = grad / 8 * 2 * 3 / 4 / (25e9 * 0.8)
    latency = 3 * 32 * p.collective_latency_us * 1e-6
    assert hybrid == pytest.approx(gather + reduce + latency, rel=1e-6)
