"""docs/estimates.md stays in step with the code it documents."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from trainlint.estimate import EstimateParams, GpuSpec, gpus

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
