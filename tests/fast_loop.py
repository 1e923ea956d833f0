"""What the fast loop (``pytest -m "not slow"``) runs less of than the full run (``pytest``, CI).

Hypothesis budgets: a test states its full budget, ``@settings(max_examples=examples(300))``.
The budget is per 100 of the loaded profile's ``max_examples`` (Hypothesis's default, 100, in
the full run), so the full run keeps every test's own budget and the fast loop, which loads the
"fast" profile (conftest.py), runs a tenth of it. Tests with no budget of their own get the
profile's ``max_examples`` directly.

Engines: ``engines()`` parametrizes a test over every embedded Rego backend; the first
(regorus, the default) runs in the fast loop, the others (regopy, ~0.15 s a check) only in the
full run. tests/engine/test_backends.py compares the backends in the fast loop too.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import settings

from trainlint.engine import available_engines

PER = 100  # Hypothesis's default max_examples: the profile of the full run


def examples(full: int) -> int:
    """``full`` examples in the full run, scaled by the loaded profile (at least one)."""
    profile = settings.get_profile(settings.get_current_profile_name())
    return max(1, full * profile.max_examples // PER)


def engines() -> list[Any]:
    """Every available embedded engine as a ``pytest.param``; all but the first are slow."""
    first, *others = available_engines()
    return [first, *(pytest.param(name, marks=pytest.mark.slow) for name in others)]
