"""Ranges instead of silence (issue 21 item 2): an unstated sequence length or GPU count gives a
point estimate at its most likely value and ``estimates.ranges`` over its plausible interval;
rules fire only when their conclusion holds over the whole range."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.estimate.jobs import llmc_gpt2, make_job
from trainlint import cli
from trainlint.estimate import estimate
from trainlint.estimate.inputs import Guess, resolve, with_guess
from trainlint.estimate.ledger import Ledger
from trainlint.estimate.params import EstimateParams, RuleLimits
from trainlint.estimate.ranges import (
    LIKELY_SEQ,
    MAX_PER_NODE,
    POINTERS,
    SHORT_SEQ,
    Box,
    box,
    evaluate,
    mfu_interval,
)
from trainlint.job import Job

# The issue's example: GPT-2 124M saving a 1.7 GB checkpoint every 10 steps on 8xA100, no
# sequence length stated anywhere (nanoGPT's config: micro-batch 12, 5 accumulation steps).
GPT2_EVERY_10_STEPS = """\
#!/bin/bash
#SBATCH --job-name=gpt2
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:8
#SBATCH --constraint=a100-80gb
#SBATCH --comment="team=nlp,project=gpt2"
torchrun --nproc_per_node=8 train.py \\
    --model_name_or_path gpt2 \\
    --per_device_train_batch_size 12 \\
    --gradient_accumulation_steps 5 \\
    --max_steps 600000 \\
    --bf16 \\
    --save_steps 10 \\
    --output_dir out
"""


def full_box(job: Job, p: EstimateParams) -> Box:
    """The job's uncertain inputs with the MFU band that ``estimate`` adds once resolved."""
    inputs = box(job)
    return dataclasses.replace(inputs, mfu=mfu_interval(resolve(job, p, inputs.point()), p))


def _gpt2_without(**training: object) -> dict[str, object]:
    return {"micro_batch_size": 12, "grad_accum_steps": 5, "max_steps": 600_000, **training}


def test_unstated_sequence_length_gives_a_point_and_a_range() -> None:
    job = make_job(
        model={"name": "gpt2"},
        resources={"gpu": {"model": "A100-80GB"}, "world_size": 8},
        training=_gpt2_without(),
    )
    est = estimate(job)
    assert est.assumed["model.seq_len"] == 1024  # GPT-2's context caps the likely 2048
    assert est.step_time_s is not None and est.memory.utilization is not None
    assert est.sources["step_time_s"] == "default"
    low, high = est.ranges["/tokens_per_step"]
    assert (low, high) == (8 * 12 * 5 * SHORT_SEQ, 8 * 12 * 5 * 1024)
    for pointer in ("/step_time_s", "/memory/total_bytes", "/run/usd"):
        low, high = est.ranges[pointer]
        assert low < high, pointer


def test_point_values_lie_inside_their_ranges() -> None:
    job = make_job(
        model={"name": "Llama-3.1-8B"},
        resources={"gpu": {"model": "H100"}, "nodes": 2},
        launcher={"kind": "torchrun"},
        training={"micro_batch_size": 1, "max_steps": 1000, "precision": "bf16"},
        checkpoint={"every_steps": 100},
    )
    est = estimate(job)
    assert est.ranges
    for pointer, (low, high) in est.ranges.items():
        point: Any = est.model_dump()
        for part in pointer.strip("/").split("/"):
            point = point[part]
        assert low <= point <= high, pointer


def test_unstated_gpus_per_node_span_one_to_a_full_node_on_each_node() -> None:
    job = make_job(
        model={"name": "gpt2", "seq_len": 1024},
        resources={"gpu": {"model": "H100"}, "nodes": 2},
        launcher={"kind": "torchrun"},
        training={"micro_batch_size": 8},
    )
    est = estimate(job)
    assert est.ranges["/gpus"] == [2, 2 * MAX_PER_NODE]
    assert est.gpus == 2 * MAX_PER_NODE and est.sources["gpus"] == "default"
    assert est.assumed["resources.world_size"] == 2 * MAX_PER_NODE


def test_a_plain_python_launch_is_most_likely_one_gpu() -> None:
    job = make_job(model={"name": "gpt2", "seq_len": 1024}, launcher={"kind": "python"})
    inputs = full_box(job, EstimateParams())
    assert inputs.world is not None and inputs.world.point == 1
    assert inputs.seq_len is None  # stated: no uncertainty


def test_stated_inputs_leave_only_the_mfu_band() -> None:
    est = estimate(llmc_gpt2(max_steps=1000))
    assert "/memory/total_bytes" not in est.ranges  # memory does not depend on the MFU
    low, high = est.ranges["/step_time_s"]
    assert low < est.step_time_s < high  # type: ignore[operator]
    assert "model.seq_len" not in est.assumed and "resources.world_size" not in est.assumed


def test_a_model_outside_the_catalog_is_bounded_by_a_default_context() -> None:
    job = make_job(model={"params": 1_000_000_000, "layers": 24, "hidden": 2048})
    inputs = full_box(job, EstimateParams())
    assert inputs.seq_len is not None
    assert (inputs.seq_len.low, inputs.seq_len.point) == (SHORT_SEQ, LIKELY_SEQ)


def test_at_most_eight_corners_in_four_groups() -> None:
    job = make_job(model={"name": "gpt2"}, resources={"nodes": 1}, launcher={"kind": "torchrun"})
    groups = list(full_box(job, EstimateParams()).corners())
    assert len(groups) == 4  # sequence length x world size; each resolves the inputs once
    assert sum(len(mfus) for _, mfus in groups) == 8


def test_issue_example_fires_tl201_from_files(tmp_path: Path) -> None:
    (tmp_path / "train.sh").write_text(GPT2_EVERY_10_STEPS)
    result = CliRunner().invoke(cli.main, ["check", str(tmp_path / "train.sh")])
    lines = [line for line in result.output.splitlines() if " TL201 " in line]
    assert len(lines) == 1, result.output
    assert "checkpoint every 10 steps" in lines[0] and "1.7 GB" in lines[0]
    assert "is ~25\u201363% of the run (estimated)" in lines[0]  # a range: any sequence length


def test_a_corner_from_the_point_inputs_is_the_corner_resolved_afresh() -> None:
    job = make_job(
        model={"name": "Llama-3.1-8B"},
        resources={"gpu": {"model": "H100"}, "nodes": 2},
        launcher={"kind": "torchrun"},
        training={"micro_batch_size": 2, "grad_accum_steps": 4},
    )
    p = EstimateParams()
    inputs = full_box(job, p)
    point = resolve(job, p, inputs.point())
    for guess, _ in inputs.corners():
        fresh = dataclasses.replace(resolve(job, p, guess), assumed=point.assumed)
        assert with_guess(job, point, guess) == fresh, guess


def test_unknown_run_length_still_prices_a_thousand_steps() -> None:
    job = make_job(
        model={"name": "gpt2"},
        resources={"gpu": {"model": "A100-80GB"}, "world_size": 8},
        training={"micro_batch_size": 12, "grad_accum_steps": 5},  # no max_steps, no dataset
        checkpoint={"every_steps": 500},
    )
    est = estimate(job)
    assert est.run.usd is None and "training.max_steps" in est.unknown
    per = est.per_1000_steps
    assert per.hours is not None and per.usd is not None
    saves_s = 2 * (est.checkpoint.save_s or 0)  # steps 500 and 1,000
    assert per.hours * 3600 == pytest.approx(1000 * est.step_time_s + saves_s)  # type: ignore[operator]
    assert per.usd == pytest.approx(per.hours * 8 * (est.price_per_gpu_hour or 0))
    low, high = est.ranges["/per_1000_steps/usd"]
    assert low < per.usd < high
    assert est.sources["per_1000_steps.usd"] == "default"


RANGES_DOC = (REPO / "docs" / "estimates.md").read_text(encoding="utf-8").split("## Ranges", 1)[1]


@pytest.mark.parametrize("pointer", POINTERS)
def test_every_ranged_pointer_is_documented(pointer: str) -> None:
    section = RANGES_DOC.split("\n## ", 1)[0]
    name = pointer.rsplit("/", 1)[0] + "/{" if pointer.startswith("/per_1000_steps") else pointer
    assert f"`{pointer}`" in section or f"`{name}" in section, pointer


MODELS = ["gpt2", "Llama-3.1-8B", "Qwen2.5-0.5B", "Pythia-1B", "Mixtral-8x7B-v0.1"]


@settings(max_examples=60, deadline=None)
@given(
    model=st.sampled_from(MODELS),
    nodes=st.none() | st.integers(1, 4),
    micro=st.integers(1, 16),
    zero=st.sampled_from([0, 3]),
    every=st.none() | st.integers(1, 2000),
    where=st.tuples(*[st.floats(0, 1)] * 3),
)
def test_the_corners_bound_every_point_inside_the_box(  # noqa: PLR0913 - hypothesis strategies
    model: str,
    nodes: int | None,
    micro: int,
    zero: int,
    every: int | None,
    where: tuple[float, float, float],
) -> None:
    """The estimates are monotone in each uncertain input, so any sequence length, GPU count
    and MFU inside the box gives numbers inside the ranges its corners span."""
    job = make_job(
        model={"name": model},
        resources={"gpu": {"model": "H100"}, "nodes": nodes},
        launcher={"kind": "torchrun"},
        training={"micro_batch_size": micro, "max_steps": 5000},
        checkpoint={"every_steps": every},
    )
    job.training.parallelism.zero_stage = zero
    p = EstimateParams()
    inputs = full_box(job, p)
    assert inputs.seq_len and inputs.world and inputs.mfu
    seq, world, mfu = (
        axis.low + w * (axis.high - axis.low)
        for axis, w in zip((inputs.seq_len, inputs.world, inputs.mfu), where, strict=True)
    )
    inside = Guess(seq_len=round(seq), world=round(world), mfu=mfu)
    values = evaluate(job, p, RuleLimits(), inside, Ledger()).values()
    est = estimate(job)
    for pointer, (low, high) in est.ranges.items():
        if pointer in values:
            assert low * (1 - 1e-9) <= values[pointer] <= high * (1 + 1e-9), pointer


def test_a_guessed_world_spans_at_least_one_model_replica() -> None:
    job = make_job(
        model={"name": "Llama-3.1-70B", "seq_len": 4096},
        launcher={"kind": "torchrun"},
        training={"parallelism": {"tensor": 4, "pipeline": 4}},
    )
    inputs = full_box(job, EstimateParams())
    assert inputs.world is not None
    assert (inputs.world.low, inputs.world.point, inputs.world.high) == (16, 16, 16)
