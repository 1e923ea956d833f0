"""Explicit head widths (Qwen3, Gemma 2/3) in LoRA counts and ZeRO-3's largest layer, and MoE
layers that hold every expert. Expected values are written out by hand from config.json."""

from __future__ import annotations

import pytest

from tests.estimate.jobs import make_job
from trainlint.catalog import ModelSpecEntry
from trainlint.estimate import EstimateParams, resolve_model
from trainlint.estimate.inputs import Dims, largest_layer, lora_params, resolve
from trainlint.estimate.ledger import Sourced


def _dims(entry: ModelSpecEntry, vocab: int | None = None) -> Dims:
    """The entry's dims; a vocab of 1 hides the embedding so the layer itself is returned."""

    def sourced(value: int) -> Sourced[int]:
        return Sourced(value, "catalog")

    return Dims(
        layers=sourced(entry.layers),
        hidden=sourced(entry.hidden),
        heads=sourced(entry.heads),
        kv_heads=sourced(entry.kv_heads),
        ffn_hidden=sourced(entry.ffn_hidden),
        vocab=sourced(vocab or entry.vocab),
    )


def _entry(name: str) -> ModelSpecEntry:
    entry = resolve_model(name)
    assert entry is not None
    return entry


def _lora_job(name: str, rank: int, **model: object) -> int | None:
    job = make_job(model={"name": name, "peft": {"method": "lora", "rank": rank}, **model})
    inp = resolve(job, EstimateParams())
    assert inp.trainable is not None
    return inp.trainable.value


# Qwen3-0.6B: h 1024, 16 heads / 8 kv of head_dim 128, 28 layers. r = 16 on q, k, v, o:
# q 1024→2048: 16·3072 = 49,152; k, v 1024→1024: 16·2048 = 32,768 each; o 2048→1024: 49,152.
QWEN3_06B_QKVO_R16 = 28 * (49_152 + 2 * 32_768 + 49_152)  # 4,587,520
# Gemma-3-1B: h 1152, 4 heads / 1 kv of head_dim 256, 26 layers. r = 16:
# q 1152→1024: 16·2176 = 34,816; k, v 1152→256: 16·1408 = 22,528 each; o 1024→1152: 34,816.
GEMMA3_1B_QKVO_R16 = 26 * (34_816 + 2 * 22_528 + 34_816)  # 2,981,888


def test_lora_params_use_head_dim() -> None:
    assert QWEN3_06B_QKVO_R16 == 4_587_520
    got = lora_params(16, 28, 1024, heads=16, kv_heads=8, ffn_hidden=3072, head_dim=128)
    assert got == QWEN3_06B_QKVO_R16
    # without head_dim, K/V would be 1024·8/16 = 512 wide and Q/O 1024: 3,211,264
    assert lora_params(16, 28, 1024, heads=16, kv_heads=8) == 28 * 16 * (2 * 2048 + 2 * 1536)
    gemma = lora_params(16, 26, 1152, heads=4, kv_heads=1, ffn_hidden=6912, head_dim=256)
    assert gemma == GEMMA3_1B_QKVO_R16
    # GPT-2's fused c_attn is h → q + 2·kv
    fused = lora_params(8, 28, 1024, heads=16, kv_heads=8, head_dim=128, targets=["c_attn"])
    assert fused == 28 * 8 * (1024 + 2048 + 2 * 1024)


def test_lora_job_takes_head_dim_from_the_catalog() -> None:
    assert _lora_job("Qwen/Qwen3-0.6B", 16) == QWEN3_06B_QKVO_R16
    assert _lora_job("google/gemma-3-1b-pt", 16) == GEMMA3_1B_QKVO_R16
    # all-linear adds gate, up (1024→3072) and down (3072→1024): 3·16·4096 per layer
    job = make_job(
        model={"name": "Qwen/Qwen3-0.6B",
               "peft": {"method": "lora", "rank": 16, "target_modules": ["all-linear"]}}
    )  # fmt: skip
    inp = resolve(job, EstimateParams())
    assert inp.trainable is not None
    assert inp.trainable.value == QWEN3_06B_QKVO_R16 + 28 * 3 * 16 * 4096


def test_declared_shape_that_differs_from_the_catalog_drops_head_dim() -> None:
    """A config that overrides heads describes another model: h/heads is used."""
    got = _lora_job("Qwen/Qwen3-0.6B", 16, heads=8, kv_heads=8)
    assert got == 28 * 4 * 16 * 2048  # q, k, v, o all 1024 x 1024


def test_dense_layer_counts_head_dim_and_norms() -> None:
    """Qwen3-0.6B layer: q, o 2·1024·2048 + k, v 2·1024·1024 + q/k norms 2·128 + SwiGLU
    3·1024·3072 + 2 norms of 1024 = 15,730,944, so 28 layers + tied embedding + final norm
    give the catalog's 596,049,920; the embedding (155,582,464) is the largest module."""
    entry = _entry("Qwen3-0.6B")
    layer = 4_194_304 + 2_097_152 + 256 + 9_437_184 + 2_048
    assert largest_layer(_dims(entry, vocab=1), entry) == layer == 15_730_944
    assert 28 * layer + 151_936 * 1024 + 1024 == entry.params
    assert largest_layer(_dims(entry), entry) == 151_936 * 1024


def test_gemma3_layer_has_sandwich_norms() -> None:
    """Gemma-3-1B: q, o 2·1152·1024 + k, v 2·1152·256 + q/k norms 2·256 + GeGLU 3·1152·6912
    + 4 norms of 1152 = 26,842,112; 26 of them + embedding + final norm = 999,885,952."""
    entry = _entry("gemma-3-1b")
    layer = 2_359_296 + 589_824 + 512 + 23_887_872 + 4_608
    assert largest_layer(_dims(entry, vocab=1), entry) == layer == 26_842_112
    assert 26 * layer + 262_144 * 1152 + 1152 == entry.params


@pytest.mark.parametrize(
    ("name", "layer"),
    [
        # Mixtral 8x7B: attention 2·4096² + 2·4096·1024 = 41,943,040, router 4096·8 = 32,768,
        # 8 experts 8·3·4096·14336 = 1,409,286,144, norms 8,192
        ("Mixtral-8x7B-v0.1", 41_943_040 + 32_768 + 1_409_286_144 + 8_192),
        # Qwen3-30B-A3B: q, o 2·2048·4096 + k, v 2·2048·512 + q/k norms 256, router 2048·128,
        # 128 experts 128·3·2048·768, norms 4,096
        ("Qwen3-30B-A3B", 16_777_216 + 2_097_152 + 256 + 262_144 + 603_979_776 + 4_096),
    ],
)
def test_moe_layer_holds_every_expert(name: str, layer: int) -> None:
    entry = _entry(name)
    got = largest_layer(_dims(entry), entry)
    assert got == layer  # larger than the embedding
    assert entry.layers * layer + entry.hidden * entry.vocab * 2 + entry.hidden == entry.params


def test_deepseek_v3_layer_is_mla_with_every_expert() -> None:
    """DeepSeek-V3 MLA (h 7168, 128 heads, q rank 1536, kv rank 512, nope 128, rope 64, v 128):
    q_a 7168·1536 + norm 1536 + q_b 1536·128·192, kv_a 7168·576 + norm 512, kv_b 512·128·256,
    o 128·128·7168 = 187,107,328. MoE layer: + router 7168·256 + bias 256 + (256 + 1 shared)
    experts of 3·7168·2048 + 2 norms; dense layer: + 3·7168·18432 + 2 norms."""
    entry = _entry("DeepSeek-V3")
    mla = 11_010_048 + 1_536 + 37_748_736 + 4_128_768 + 512 + 16_777_216 + 117_440_512
    assert mla == 187_107_328
    sparse = mla + 1_835_008 + 256 + 257 * 44_040_192 + 14_336
    dense = mla + 396_361_728 + 14_336
    assert largest_layer(_dims(entry), entry) == sparse == 11_507_286_272
    assert 3 * dense + 58 * sparse + 2 * 7168 * 129_280 + 7168 == entry.params


def test_zero3_memory_gathers_the_whole_moe_layer() -> None:
    job = make_job(
        model={"name": "mistralai/Mixtral-8x7B-v0.1"},
        resources={"gpu": {"model": "H100"}, "gpus_per_node": 8},
        training={"parallelism": {"zero_stage": 3}, "precision": "bf16"},
    )
    inp = resolve(job, EstimateParams())
    assert inp.largest_layer == 1_451_270_144
