"""Memory per GPU against the ZeRO paper, DeepSpeed's estimators and Korthikanti et al."""

from __future__ import annotations

import pytest

from tests.estimate.jobs import GB, make_job
from trainlint.estimate import estimate
from trainlint.estimate.memory import PerParam, Sharding, activation_bytes, model_states
from trainlint.estimate.precision import ADAM, parse_optimizer, parse_precision

MIXED_ADAM = PerParam(2, 2, 12)


@pytest.mark.parametrize(
    ("stage", "figure_gb"),
    [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)],
)
def test_zero_figure_1(stage: int, figure_gb: float) -> None:
    """ZeRO Figure 1: Psi = 7.5B, Nd = 64, K = 12, to the figure's precision."""
    states = model_states(7.5e9, MIXED_ADAM, Sharding(stage=stage, dp=64))
    assert round(states.total / GB, 1) == figure_gb


def test_gpt2_xl_model_states_are_24_gb() -> None:
    """ZeRO §3.1: GPT-2 1.5B needs at least 24 GB for model states, 3 GB of fp16 weights."""
    states = model_states(1.5e9, MIXED_ADAM)
    assert states.total == 24 * GB
    assert states.weights == 3 * GB


@pytest.mark.parametrize(
    ("precision", "optimizer", "per_param"),
    [
        ("bf16", "adamw", (2, 2, 12)),  # ZeRO: 2 + 2 + K, K = 4 master + 4 m + 4 v
        ("fp16", "adam", (2, 2, 12)),
        ("fp32", "adamw", (4, 4, 8)),  # no master copy: the weights are already fp32
        ("bf16-true", "adamw", (2, 2, 4)),  # pure bf16: states in bf16, no master
        ("bf16", "adamw_bnb_8bit", (2, 2, 6)),  # 8-bit moments + fp32 master
        ("bf16", "sgd", (2, 2, 8)),  # momentum buffer + master
        ("bf16", "adafactor", (2, 2, 4)),  # factored second moment ~ 0
    ],
)
def test_bytes_per_parameter(
    precision: str, optimizer: str, per_param: tuple[float, float, float]
) -> None:
    prec, opt = parse_precision(precision), parse_optimizer(optimizer)
    assert prec is not None and opt is not None
    got = PerParam.of(prec, opt)
    assert (got.weight, got.grad, got.optimizer) == per_param


@pytest.mark.parametrize(
    ("spelling", "name"),
    [("bf16-mixed", "bf16"), ("16-mixed", "fp16"), ("32-true", "fp32"), ("BF16", "bf16"),
     ("bf16-true", "bf16-true"), ("tf32", "tf32"), ("fp8", "fp8")],
)  # fmt: skip
def test_precision_spellings(spelling: str, name: str) -> None:
    prec = parse_precision(spelling)
    assert prec is not None and prec.name == name


def test_unknown_precision_and_optimizer_are_none() -> None:
    assert parse_precision("int3") is None
    assert parse_precision(None) is None
    assert parse_optimizer("sophia") is None


def test_offload_matches_deepspeed_estimators() -> None:
    """DeepSpeed (cost-model §1.2): ZeRO-2 + optimizer offload keeps 2P on the GPU; ZeRO-3
    keeps 2P/N with optimizer offload and nothing with parameter offload (largest layer aside)."""
    p, n = 1e9, 8
    zero2 = model_states(p, MIXED_ADAM, Sharding(stage=2, dp=n, offload_optimizer=True))
    assert zero2.total == 2 * p
    zero3 = model_states(p, MIXED_ADAM, Sharding(stage=3, dp=n, offload_optimizer=True))
    assert zero3.total == 2 * p / n
    both = Sharding(stage=3, dp=n, offload_optimizer=True, offload_params=True)
    assert model_states(p, MIXED_ADAM, both).total == 0


def test_offload_needs_zero() -> None:
    assert model_states(1e9, MIXED_ADAM, Sharding(stage=0, offload_optimizer=True)).total == 16e9


def test_model_parallel_splits_the_states() -> None:
    full = model_states(8e9, MIXED_ADAM).total
    assert model_states(8e9, MIXED_ADAM, Sharding(model_parallel=4)).total == full / 4


def test_frozen_weights_cost_only_their_storage() -> None:
    """QLoRA: a 4-bit frozen base is 0.5 B/param; adapters carry the full 16 B/param."""
    states = model_states(1e7, MIXED_ADAM, frozen=7e9, frozen_bytes=0.5)
    assert states.weights == 1e7 * 2 + 7e9 * 0.5
    assert states.gradients == 1e7 * 2
    assert states.optimizer == 1e7 * 12


GPT3 = {"seq_len": 2048, "micro_batch": 1, "hidden": 12288, "heads": 96}  # Korthikanti Table 3


@pytest.mark.parametrize(
    ("flash", "recompute", "per_layer"),
    [
        (False, False, 2_868_903_936),  # sbh (34 + 5as/h) = 114 sbh, cost-model §2 worked numbers
        (True, False, 34 * 25_165_824),  # flash attention drops the 5as/h term
        (False, True, 50_331_648),  # full recomputation: 2 sbh
    ],
)
def test_activation_bytes_per_layer(flash: bool, recompute: bool, per_layer: int) -> None:
    def total(layers: int) -> float | None:
        s, b, h, a = GPT3.values()
        return activation_bytes(s, b, h, layers, heads=a, flash=flash, recompute=recompute)

    one, two = total(1), total(2)
    assert one is not None and two is not None
    assert two - one == per_layer


def test_activation_extra_terms_include_fp32_logits() -> None:
    """Korthikanti Eq. 5 (p = 1): 5 sbh outside the layers plus 4 sbv for fp32 logits."""
    s, b, h, v = 1024, 2, 768, 50257
    assert activation_bytes(s, b, h, 0, vocab=v) == 5 * s * b * h + 4 * s * b * v


def test_attention_term_needs_heads_without_flash() -> None:
    assert activation_bytes(1024, 1, 768, 12, flash=False) is None


def test_job_memory_total_and_utilization() -> None:
    job = make_job(
        model={"name": "Qwen/Qwen2.5-7B", "seq_len": 4096},
        resources={"gpu": {"model": "A100-80GB"}, "world_size": 8},
        training={"micro_batch_size": 1, "precision": "bf16", "optimizer": {"name": "adamw"},
                  "parallelism": {"strategy": "deepspeed", "zero_stage": 3},
                  "activation_checkpointing": True},
    )  # fmt: skip
    mem = estimate(job).memory
    parts = [mem.weights_bytes, mem.gradients_bytes, mem.optimizer_bytes, mem.activations_bytes]
    assert None not in parts and mem.overhead_bytes == 2**30
    assert mem.optimizer_bytes == pytest.approx(7_615_616_512 * 12 / 8)
    assert mem.total_bytes == pytest.approx(sum(p or 0 for p in parts) + 2**30)
    assert mem.gpu_bytes == 80 * 2**30
    assert mem.utilization == pytest.approx((mem.total_bytes or 0) / mem.gpu_bytes)


def test_fsdp_without_a_stage_is_full_shard() -> None:
    base = {"model": {"params": 8_000_000_000}, "resources": {"world_size": 8}}
    fsdp = estimate(make_job(**base, training={"parallelism": {"strategy": "fsdp"}}))
    zero3 = estimate(make_job(**base, training={"parallelism": {"zero_stage": 3}}))
    assert fsdp.memory.optimizer_bytes == zero3.memory.optimizer_bytes == 8e9 * 12 / 8


def test_missing_activation_inputs_leave_total_unknown() -> None:
    est = estimate(make_job(model={"name": "gpt2"}, resources={"gpu": {"model": "T4"}}))
    assert est.memory.weights_bytes == pytest.approx(124_439_808 * 2)
    assert est.memory.activations_bytes is None
    assert est.memory.total_bytes is None and est.memory.utilization is None
    assert "training.micro_batch_size" in est.unknown
    assert est.assumed["model.seq_len"] == 1024  # GPT-2's context: a guess, named as one


def test_peft_uses_declared_trainable_params_and_quantized_base() -> None:
    job = make_job(
        model={"name": "meta-llama/Meta-Llama-3-8B", "peft": {"method": "lora", "rank": 16},
               "trainable_params": 40_000_000, "quantization_bits": 4},
        training={"precision": "bf16", "optimizer": {"name": "paged_adamw_8bit"}},
    )  # fmt: skip
    est = estimate(job)
    frozen = 8_030_261_248 - 40_000_000
    assert est.trainable_params == 40_000_000
    assert est.memory.weights_bytes == pytest.approx(40e6 * 2 + frozen * 0.5)
    assert est.memory.optimizer_bytes == pytest.approx(40e6 * (4 + 2))


def test_peft_without_a_count_assumes_a_fraction() -> None:
    est = estimate(make_job(model={"params": 1_000_000_000, "peft": {"method": "lora"}}))
    assert est.trainable_params == 10_000_000
    assert est.sources["trainable_params"] == "default"
    assert est.assumed["model.trainable_params"] == 0.01


def test_default_precision_and_optimizer_are_recorded() -> None:
    est = estimate(make_job(model={"params": 1_000_000}))
    guessed = {"training.precision": "bf16", "training.optimizer.name": ADAM.name}
    assert guessed.items() <= est.assumed.items()
    assert est.sources["memory.optimizer_bytes"] == "default"
    declared = estimate(
        make_job(model={"params": 1_000_000},
                 training={"precision": "fp32", "optimizer": {"name": "adamw"}})
    )  # fmt: skip
    assert not guessed.keys() & declared.assumed.keys()
    assert declared.sources["memory.optimizer_bytes"] == "estimated"
