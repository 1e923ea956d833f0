"""The checked-in JSON Schemas are exactly what the pydantic models generate."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from trainlint.schema import SCHEMAS, render


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_checked_in_schema_matches_the_models(name: str) -> None:
    checked_in = (REPO / "schemas" / name).read_text()
    assert checked_in == render(SCHEMAS[name]), (
        f"schemas/{name} is stale: run python -m trainlint.schema"
    )
