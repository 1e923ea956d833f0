"""One home for every default and threshold: the estimator's defaults are published to the
rules from ``EstimateParams``, and its suggestions follow the thresholds of the rules that
judge them (``RuleLimits``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.estimate.jobs import llmc_gpt2, make_job
from trainlint.engine import DEFAULT_ENGINE, create_engine
from trainlint.estimate import EstimateParams, RuleLimits, estimate
from trainlint.job import Job
from trainlint.packs import Pack, load_builtin_pack, load_pack
from trainlint.packs.layering import layer
from trainlint.resources import bundled

ESTIMATE = "data.trainlint.params.estimate"


def org_pack(tmp_path: Path, params: dict[str, object]) -> Pack:
    (tmp_path / "org").mkdir()
    data = {"trainlint": {"params": params}}
    (tmp_path / "org" / "data.json").write_text(json.dumps(data))
    return load_pack(tmp_path / "org")


def test_rules_see_the_estimator_defaults() -> None:
    engine = create_engine(DEFAULT_ENGINE, load_builtin_pack())
    assert engine.query({}, ESTIMATE) == EstimateParams().model_dump()


def test_the_builtin_data_does_not_repeat_them() -> None:
    data = json.loads((bundled("policies") / "builtin" / "data.json").read_text())
    assert "estimate" not in data["trainlint"]["params"]


def test_an_org_pack_overrides_what_the_rules_see(tmp_path: Path) -> None:
    pack = layer([load_builtin_pack(), org_pack(tmp_path, {"estimate": {"gpu_mtbf_hours": 10}})])
    seen = create_engine(DEFAULT_ENGINE, pack[0]).query({}, ESTIMATE)
    assert seen == {**EstimateParams().model_dump(), "gpu_mtbf_hours": 10}


def test_limits_come_from_the_rules_params() -> None:
    assert RuleLimits.of(load_builtin_pack().data) == RuleLimits(0.05, 1.0)
    assert RuleLimits.of({}) == RuleLimits()  # no rules: the physical limits
    unset = {"trainlint": {"params": {"does_not_fit": {"max_utilization": None}}}}
    assert RuleLimits.of(unset).max_memory_utilization == 1.0


@pytest.mark.parametrize(("threshold", "target"), [(0.05, 0.02), (0.01, 0.01), (0.0, 1e-6)])
def test_the_checkpoint_target_never_exceeds_tl201(threshold: float, target: float) -> None:
    limits = RuleLimits(max_checkpoint_overhead=threshold)
    assert limits.checkpoint_overhead(EstimateParams()) == target


def _on_eight_a100s(model: str, seq_len: int) -> Job:
    return make_job(
        model={"name": model, "seq_len": seq_len},
        resources={"gpu": {"model": "A100-80GB"}, "gpus_per_node": 8},
        training={"micro_batch_size": 8, "precision": "bf16", "max_steps": 1000},
    )


def test_memory_fixes_fit_under_a_lower_tl102_threshold() -> None:
    """A 7B full fine-tune over one A100-80GB's memory: sharding and recomputation fix it."""
    job = _on_eight_a100s("Llama-2-7b", 2048)
    fixes = estimate(job).memory_fixes
    assert fixes
    ceiling = max(fix.utilization for fix in fixes) - 0.01
    strict = estimate(job, limits=RuleLimits(max_memory_utilization=ceiling)).memory_fixes
    assert strict != fixes and all(fix.utilization <= ceiling for fix in strict)


def test_cheaper_gpus_fit_under_a_lower_tl102_threshold() -> None:
    job = _on_eight_a100s("gpt2", 1024)
    options = estimate(job).alternatives
    ceiling = max(alt.memory_utilization for alt in options) - 0.01
    strict = estimate(job, limits=RuleLimits(max_memory_utilization=ceiling)).alternatives
    assert [alt for alt in options if alt.memory_utilization <= ceiling] == strict != options


def test_a_job_over_a_lower_tl102_threshold_gets_fixes() -> None:
    job = llmc_gpt2(max_steps=1000)  # ~43% of each H100
    assert estimate(job).memory_fixes == []
    fixes = estimate(job, limits=RuleLimits(max_memory_utilization=0.3)).memory_fixes
    assert fixes and all(fix.utilization <= 0.3 for fix in fixes)
