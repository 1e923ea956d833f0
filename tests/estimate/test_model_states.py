"""Model states against DeepSpeed's estimators (current code, cost-model §1.2), FSDP sharding
modes, ZeRO-3's gathered largest layer, LoRA counts and MoE active parameters."""

from __future__ import annotations

import pytest

from tests.estimate.jobs import make_job
from trainlint.estimate import estimate, resolve_model
from trainlint.estimate.inputs import lora_params, resolve
from trainlint.estimate.memory import PerParam, Sharding, model_states
from trainlint.estimate.params import EstimateParams

MIXED_ADAM = PerParam(2, 2, 12)


# DeepSpeed 38327e07f6cd (2025-02-21), GPU lines only, verbatim arithmetic.
def ds_zero2_gpu(total_params: float, total_gpus: int, cpu_offload: bool) -> int:
    """deepspeed/runtime/zero/stage_1_and_2.py::estimate_zero2_model_states_mem_needs."""
    if cpu_offload:
        return int(2 * total_params)
    return int(2 * total_params + int(18 * total_params / total_gpus))


def ds_zero3_gpu(
    total_params: float, largest: float, total_gpus: int, offload: bool, offload_params: bool
) -> int:
    """deepspeed/runtime/zero/stage3.py::estimate_zero3_model_states_mem_needs."""
    largest_layer_memory = 4 * largest
    if offload:
        if offload_params:
            return int(largest_layer_memory)
        return int(largest_layer_memory + int(2 * total_params / total_gpus))
    return int(largest_layer_memory + int(18 * total_params / total_gpus))


POINTS = [(1e9, 8), (7e9, 16), (70e9, 64), (2851e6, 8)]  # t5-3b: DeepSpeed docs' example


@pytest.mark.parametrize(("p", "n"), POINTS)
def test_zero2_against_deepspeed(p: float, n: int) -> None:
    """Offload: equal (2P). No offload: ours is the ZeRO paper's 2P + 14P/N; DeepSpeed's code
    since PR #5099 charges 2P + 18P/N (fp32 gradient partitions): 4P/N more."""
    off = model_states(p, MIXED_ADAM, Sharding(stage=2, dp=n, offload_optimizer=True)).total
    assert off == ds_zero2_gpu(p, n, True)
    ours = model_states(p, MIXED_ADAM, Sharding(stage=2, dp=n)).total
    assert ours == pytest.approx(2 * p + 14 * p / n)
    assert ds_zero2_gpu(p, n, False) - ours == pytest.approx(4 * p / n, abs=1)
    # DeepSpeed's docs (memory.rst) still print the pre-2024 formula, 4P + 16P/N.
    assert 4 * p + 16 * p / n - ours == pytest.approx(2 * p + 2 * p / n)


@pytest.mark.parametrize(("p", "n"), POINTS)
@pytest.mark.parametrize("largest", [32e6, 525e6])
def test_zero3_against_deepspeed(p: float, n: int, largest: float) -> None:
    """Offloads: equal (4·LL + 2P/N, 4·LL). No offload: ours 16P/N + 4·LL, DeepSpeed
    18P/N + 4·LL (it adds a 16-bit parameter copy to the 16 fp32 bytes): 2P/N more."""

    def ours(offload: bool, params: bool) -> float:
        shard = Sharding(stage=3, dp=n, offload_optimizer=offload, offload_params=params)
        return model_states(p, MIXED_ADAM, shard, largest_layer=largest).total

    assert ours(True, True) == ds_zero3_gpu(p, largest, n, True, True)
    assert ours(True, False) == pytest.approx(ds_zero3_gpu(p, largest, n, True, False), abs=1)
    diff = ds_zero3_gpu(p, largest, n, False, False) - ours(False, False)
    assert diff == pytest.approx(2 * p / n, abs=1)


def _fsdp(strategy: str) -> float | None:
    job = make_job(
        model={"name": "meta-llama/Llama-3.1-8B", "seq_len": 2048},
        resources={"gpu": {"model": "H100"}, "gpus_per_node": 8, "nodes": 4},
        training={
            "micro_batch_size": 1,
            "precision": "bf16",
            "parallelism": {"strategy": strategy},
        },
    )
    mem = estimate(job).memory
    assert mem.weights_bytes is not None and mem.gradients_bytes is not None
    assert mem.optimizer_bytes is not None
    return mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes


def test_fsdp_sharding_modes() -> None:
    """FULL_SHARD over 32 GPUs, HYBRID_SHARD over one node (8), SHARD_GRAD_OP ZeRO-2-like."""
    entry = resolve_model("Llama-3.1-8B")
    assert entry is not None
    p, ll = entry.params, entry.hidden * entry.vocab  # the embedding is the largest module
    assert _fsdp("FULL_SHARD") == pytest.approx(16 * p / 32 + 4 * ll)
    assert _fsdp("fsdp") == _fsdp("FULL_SHARD")
    assert _fsdp("fsdp:HYBRID_SHARD") == pytest.approx(16 * p / 8 + 4 * ll)
    assert _fsdp("SHARD_GRAD_OP") == pytest.approx(2 * p + 14 * p / 32)
    assert _fsdp("fsdp NO_SHARD") == pytest.approx(16 * p)


def test_lora_counts_from_rank_and_targets() -> None:
    """Llama-3.1-8B, r = 16: q,o 16·(4096+4096), k,v 16·(4096+1024) (GQA) per layer."""
    qkvo = 32 * 16 * (2 * 8192 + 2 * 5120)
    assert lora_params(16, 32, 4096, heads=32, kv_heads=8, ffn_hidden=14336) == qkvo
    mlp = 32 * 16 * 3 * (4096 + 14336)
    all_lin = lora_params(
        16, 32, 4096, heads=32, kv_heads=8, ffn_hidden=14336, targets=["all-linear"]
    )
    assert all_lin == qkvo + mlp
    assert lora_params(8, 32, 4096, targets=["q_proj", "v_proj"]) == 32 * 8 * 2 * 8192
    assert lora_params(8, 32, 4096, targets=["lm_head_weird"]) is None
    # the well-known 4,194,304 for Llama-2-7B (MHA), r = 8, q and v
    assert lora_params(8, 32, 4096, heads=32, kv_heads=32, targets=["q_proj", "v_proj"]) == 4194304


def test_qlora_job_uses_counted_adapters_and_4bit_base() -> None:
    job = make_job(
        model={"name": "meta-llama/Llama-3.1-8B", "seq_len": 2048, "quantization_bits": 4,
               "peft": {"method": "qlora", "rank": 16}},
        resources={"gpu": {"model": "A10G"}, "gpus_per_node": 1},
        training={"micro_batch_size": 1, "precision": "bf16"},
    )  # fmt: skip
    inp = resolve(job, EstimateParams())
    assert inp.trainable is not None and inp.params is not None
    lora = 32 * 16 * (2 * 8192 + 2 * 5120)
    assert (inp.trainable.value, inp.trainable.source) == (lora, "estimated")
    mem = estimate(job).memory
    assert mem.weights_bytes == pytest.approx(2 * lora + 0.5 * (inp.params.value - lora))
    assert mem.optimizer_bytes == 12 * lora


def test_moe_memory_uses_total_flops_use_active() -> None:
    entry = resolve_model("mistralai/Mixtral-8x7B-v0.1")
    assert entry is not None and entry.active_params is not None
    inp = resolve(make_job(model={"name": "Mixtral-8x7B"}), EstimateParams())
    assert inp.params is not None and inp.active_params is not None
    assert inp.params.value == entry.params
    assert inp.active_params.value == entry.active_params < entry.params
    dense = resolve(make_job(model={"name": "gpt2"}), EstimateParams())
    assert dense.active_params == dense.params
