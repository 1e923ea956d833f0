"""The normalization tables: one spelling per meaning in the job model."""

from __future__ import annotations

import pytest

from trainlint.sources.base import normalize as n
from trainlint.sources.shell.slurm import time_seconds


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3-00:00:00", 259_200), ("72:00:00", 259_200), ("01:59:00", 7_140), ("2-12", 216_000),
        ("1-00:30", 88_200), ("05:30", 330), ("00:12:00:00", 43_200), ({"hours": 2}, 7_200),
        ({"days": 1, "minutes": 30}, 88_200), ("90m", 5_400), ("2h", 7_200), ("1d", 86_400),
        (3_600, 3_600), ("0", None), ("soon", None), (None, None), ({"weeks": 1}, None),
    ],
)  # fmt: skip
def test_durations(value: object, seconds: float | None) -> None:
    assert n.duration_seconds(value) == seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30", 1_800), ("4:00:00", 14_400), ("3-00:00:00", 259_200), ("0", None), ("x", None)],
)
def test_slurm_time_bare_numbers_are_minutes(text: str, seconds: float | None) -> None:
    assert time_seconds(text) == seconds


@pytest.mark.parametrize(
    ("name", "family", "eight_bit", "experimental"),
    [
        ("adamw_torch_fused", "adamw", False, False),
        ("torch.optim.AdamW", "adamw", False, False),
        ("paged_adamw_8bit", "adamw", True, False),
        ("bitsandbytes.optim.PagedAdamW8bit", "adamw", True, False),
        ("adafactor", "adafactor", False, False),
        ("Lion", "lion", False, True),
        ("muon", "muon", False, True),
        ("OneBitAdam", "adamw", False, True),
        ("sgd", "sgd", False, False),
    ],
)
def test_optimizers(name: str, family: str, eight_bit: bool, experimental: bool) -> None:
    assert n.optimizer_family(name) == family
    assert n.optimizer_eight_bit(name) is eight_bit
    assert n.optimizer_experimental(name) is experimental


def test_unknown_optimizer_is_unknown() -> None:
    assert n.optimizer_family("my_custom_opt") is None


@pytest.mark.parametrize(
    ("spelling", "precision"),
    [("bf16", "bf16"), ("bf16-mixed", "bf16"), ("16-mixed", "fp16"), ("32-true", "fp32"),
     ("float16", "fp16"), ("auto", None), ("fp8", "fp8")],
)  # fmt: skip
def test_precisions(spelling: str, precision: str | None) -> None:
    assert n.precision(spelling) == precision
