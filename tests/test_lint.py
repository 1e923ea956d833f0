"""The check pipeline as a library: estimate assumptions come from the pack's data."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from trainlint.errors import PolicyError
from trainlint.lint import load_jobs
from trainlint.packs import Pack, load_builtin_pack


def with_estimate(pack: Pack, **overrides: object) -> Pack:
    data = {"trainlint": {"params": {**pack.data["trainlint"]["params"], "estimate": overrides}}}
    return dataclasses.replace(pack, data=data)


def test_pack_data_drives_the_estimates() -> None:
    pack = with_estimate(load_builtin_pack(), mfu=0.4)
    job = next(j for j in load_jobs([EXAMPLES / "llama3-sft"], pack) if j.estimates.step_time_s)
    slower = load_jobs([EXAMPLES / "llama3-sft"], with_estimate(pack, mfu=0.2))
    faster_step = job.estimates.step_time_s or 0
    assert slower[0].estimates.step_time_s == pytest.approx(2 * faster_step)


def test_invalid_estimate_params_are_a_policy_error() -> None:
    with pytest.raises(PolicyError, match=r"params\.estimate: mfu"):
        load_jobs([Path(EXAMPLES)], with_estimate(load_builtin_pack(), mfu=7))
