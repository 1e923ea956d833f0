"""docs/estimates.md stays in step with the code it documents."""

from __future__ import annotations

import inspect

import pytest

from tests.conftest import REPO
from trainlint.catalog import params_from_dims
from trainlint.estimate import EstimateParams, GpuSpec, gpus
from trainlint.job import Memory, MixedPrecisionCost, RecomputeCost

DOC = (REPO / "docs" / "estimates.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(EstimateParams.model_fields))
def test_every_parameter_is_documented(name: str) -> None:
    assert f"| `{name}` |" in DOC


@pytest.mark.parametrize("gpu", gpus(), ids=lambda g: g.name)
def test_every_gpu_and_its_price_are_documented(gpu: GpuSpec) -> None:
    row = next((line for line in DOC.splitlines() if line.startswith(f"| {gpu.name} |")), None)
    assert row is not None
    price = gpu.price_per_hour
    assert (f"| {price:g}" in row) if price is not None else "| — |" in row


def test_params_from_dims_signature_is_documented() -> None:
    """The "Parameters from dimensions" section names every argument of params_from_dims."""
    section = DOC.split("## Parameters from dimensions", 1)[1].split("\n## ", 1)[0]
    for name in inspect.signature(params_from_dims).parameters:
        assert name in section.split("```", 1)[0], name


@pytest.mark.parametrize(
    "field",
    [
        *(f"memory.{f}" for f in Memory.model_fields if "without_recompute" in f),
        *(f for f in RecomputeCost.model_fields if f != "mode"),
        *(f for f in MixedPrecisionCost.model_fields),
        "memory_fixes",
        "zero3",
        "zero3+recompute",
        "micro_batch",
    ],
)
def test_what_if_estimates_are_documented(field: str) -> None:
    section = DOC.split("## What-if estimates", 1)[1].split("\n## ", 1)[0]
    assert field in section
