"""Activations against Korthikanti et al. 2022 Table 2 and Eq. 5 (cost-model §2)."""

from __future__ import annotations

import pytest

from tests.estimate.jobs import make_job
from trainlint.estimate import estimate
from trainlint.estimate.activations import Layout, Recompute, layer_bytes, per_gpu_bytes

MIB, GIB = 2**20, 2**30
S, B, H, A, T, L, P = 2048, 1, 12288, 96, 8, 96, 8  # GPT-3 175B, Korthikanti Table 3


@pytest.mark.parametrize(
    ("tensor", "sp", "recompute", "mib"),
    [
        (1, False, "none", 2736),  # sbh(34 + 5as/h), 5as/h = 80
        (T, False, "none", 552),  # sbh(10 + 24/t + 5as/(ht))
        (T, True, "none", 342),  # (sbh/t)(34 + 5as/h)
        (T, False, "selective", 312),  # sbh(10 + 24/t)
        (T, True, "selective", 102),  # 34 sbh / t
        (T, True, "full", 48),  # 2 sbh
    ],
)
def test_table_2_per_layer_gpt3(tensor: int, sp: bool, recompute: Recompute, mib: int) -> None:
    got = layer_bytes(S, B, H, A, layout=Layout(tensor, sp), recompute=recompute)
    assert got == mib * MIB


@pytest.mark.parametrize(
    ("recompute", "gib"), [("none", 32.06), ("selective", 9.56)]
)  # fmt: skip
def test_first_stage_holds_all_layers(recompute: Recompute, gib: float) -> None:
    """Eq. 5: 1F1B's first stage keeps p micro-batches x L/p layers = L layers' worth."""
    lay = Layout(T, True, P)
    one = layer_bytes(S, B, H, A, layout=lay, recompute=recompute)
    total = per_gpu_bytes(S, B, H, L, A, 51200, layout=lay, recompute=recompute)
    assert one is not None and total is not None
    assert round(L * one / GIB, 2) == gib
    # plus the embedding dropout of p micro-batches, s·b·h·p/t (the first stage is the peak)
    assert total == L * one + S * B * H * P / T


def test_flash_attention_drops_the_score_term() -> None:
    assert layer_bytes(S, B, H, None, flash=True) == 34 * S * B * H
    assert layer_bytes(S, B, H, None) is None
    assert layer_bytes(S, B, H, None, recompute="selective") == 34 * S * B * H


def test_logits_are_fp32_and_vocab_parallel() -> None:
    """4·s·b·v/t for the cross-entropy; without pipelining it sits on the one stage."""
    v = 128256
    base = per_gpu_bytes(S, B, H, 0, A, None, layout=Layout(T, True))
    with_logits = per_gpu_bytes(S, B, H, 0, A, v, layout=Layout(T, True))
    assert base is not None and with_logits is not None
    assert with_logits - base == 4 * S * B * v / T


def test_last_stage_wins_when_logits_dominate() -> None:
    """Small model, huge vocabulary, deep pipeline: the last stage's logits are the peak."""
    lay = Layout(1, False, 4)
    total = per_gpu_bytes(4096, 1, 2048, 4, None, 256000, layout=lay, flash=True)
    sbh = 4096 * 2048
    assert total == 1 * 34 * sbh + 4 * sbh + 4 * 4096 * 256000


def _job(**par: object) -> dict[str, object]:
    return {
        "model": {"name": "meta-llama/Llama-3.1-70B", "seq_len": 4096},
        "resources": {"gpu": {"model": "H100"}, "gpus_per_node": 8, "nodes": 2},
        "training": {"micro_batch_size": 1, "precision": "bf16", **par},
    }


def test_job_reads_tensor_sequence_and_recompute() -> None:
    plain = estimate(make_job(**_job())).memory.activations_bytes
    tp = _job(parallelism={"tensor": 8, "sequence_parallel": True}, recompute="selective")
    sharded = estimate(make_job(**tp)).memory.activations_bytes
    full = estimate(make_job(**_job(activation_checkpointing=True))).memory.activations_bytes
    assert plain is not None and sharded is not None and full is not None
    sbh = 4096 * 8192
    assert sharded == 80 * 34 * sbh / 8 + 5 * sbh / 8 + 4 * 4096 * 128256 / 8
    assert full == 80 * 2 * sbh + 5 * sbh + 4 * 4096 * 128256
    assert sharded < plain and full < plain
