"""The measurement file model, the probe's planning helpers and measured step times in
estimates (none of these need torch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trainlint.estimate import estimate, measured_step_time
from trainlint.lint import load_jobs
from trainlint.measurement import fingerprint, read_measurement
from trainlint.probe import ProbeError, plan_sizes, scaling, select_job, workload, write_atomic
from trainlint.probe.result import Measurement

TINY = """\
# trainlint: gpu=H100 gpus=2
n_layer = 2
n_head = 2
n_embd = 64
block_size = 32
batch_size = 2
gradient_accumulation_steps = 1
max_iters = 1000
dtype = "bfloat16"
init_from = "scratch"
dataset = "openwebtext"
"""


def tiny_job(folder: Path, text: str = TINY) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".trainlint.yaml").write_text("{}\n")
    path = folder / "train.py"
    path.write_text(text)
    return path


def sample(fp: str = "f" * 64) -> dict[str, Any]:
    step = {"median": 0.5, "p10": 0.45, "p90": 0.6, "cv": 0.1}
    return {
        "fingerprint": fp,
        "measured_at": "2026-01-01T00:00:00Z",
        "trainlint_version": "0",
        "mode": "synthetic",
        "job": "train.py",
        "hardware": {"gpu": "cpu", "count": 2, "device": "cpu"},
        "world_sizes": {
            "1": {"step_time_s": step, "tokens_per_s": 100.0, "peak_memory_bytes": 10},
            "2": {"step_time_s": step, "tokens_per_s": 150.0, "peak_memory_bytes": 10},
            "4": {"oom": True},
        },
    }


def test_measurement_validates_and_keeps_the_rules_shape() -> None:
    m = Measurement.model_validate(sample())
    dumped = json.loads(m.model_dump_json())
    assert dumped["world_sizes"]["4"]["oom"] is True
    assert dumped["world_sizes"]["4"]["step_time_s"] is None
    assert dumped["version"] == 1


def test_measurement_rejects_a_bad_mode() -> None:
    with pytest.raises(ValueError):
        Measurement.model_validate({**sample(), "mode": "guess"})


def test_scaling_efficiency() -> None:
    sizes: dict[str, dict[str, Any]] = {
        "1": {"tokens_per_s": 100.0}, "2": {"tokens_per_s": 150.0}, "4": {"oom": True},
    }  # fmt: skip
    scaling(sizes)
    assert sizes["1"]["scaling_efficiency"] == 1.0
    assert sizes["2"]["scaling_efficiency"] == pytest.approx(0.75)
    assert sizes["4"]["scaling_efficiency"] is None
    alone: dict[str, dict[str, Any]] = {"2": {"tokens_per_s": 150.0}}
    scaling(alone)
    assert alone["2"]["scaling_efficiency"] is None


def test_plan_sizes_caps_on_cpu_and_refuses_missing_gpus() -> None:
    sizes, notes = plan_sizes(None, 8, "cpu", 2)
    assert sizes == [1, 2] and "capped at 2" in notes[0]
    assert plan_sizes([1, 2], 8, "cuda", 4) == ([1, 2], [])
    with pytest.raises(ProbeError, match="needs 8 GPUs; this machine has 4"):
        plan_sizes([1, 8], 8, "cuda", 4)
    sizes, notes = plan_sizes(None, 8, "cuda", 4)
    assert sizes == [1, 4] and notes


def test_workload_from_the_job(tmp_path: Path) -> None:
    job = select_job(load_jobs([tiny_job(tmp_path)]), tmp_path / "train.py")
    work, _ = workload(job)
    assert (work.layers, work.hidden, work.heads, work.seq_len, work.micro_batch) == (
        2, 64, 2, 32, 2,
    )  # fmt: skip
    assert work.vocab == 50304 and work.precision == "bf16" and work.optimizer == "adamw"
    assert work.parallelism == "ddp" and not work.overrides


def test_unknown_dimensions_are_refused_by_name(tmp_path: Path) -> None:
    path = tiny_job(tmp_path, TINY.replace("n_layer = 2\n", ""))
    job = select_job(load_jobs([path]), path)
    with pytest.raises(ProbeError, match=r"layers.*--layers N"):
        workload(job)
    work, notes = workload(job, {"layers": 3})
    assert work.layers == 3 and work.overrides == {"layers": 3}
    assert any("stand-in" in note for note in notes)


def test_write_atomic_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a" / "m.json"
    write_atomic(target, json.dumps(sample()))
    assert read_measurement(target)["fingerprint"] == "f" * 64
    assert [p.name for p in target.parent.iterdir()] == ["m.json"]


def test_measured_step_time_replaces_the_estimate(tmp_path: Path) -> None:
    path = tiny_job(tmp_path)
    job = load_jobs([path])[0]
    assert job.estimates.sources["step_time_s"] != "measured"
    job.measurements = {**sample(fingerprint(job)), "fresh": True}
    assert measured_step_time(job, 2) == 0.5
    est = estimate(job)
    assert est.step_time_s == 0.5 and est.sources["step_time_s"] == "measured"
    for stale in (
        {**job.measurements, "fresh": False},
        {**job.measurements, "workload": {"overrides": {"layers": 1}}},
        {**job.measurements, "world_sizes": {"2": {"oom": True}}},
    ):
        job.measurements = stale
        assert measured_step_time(job, 2) is None
        assert estimate(job).sources["step_time_s"] != "measured"
