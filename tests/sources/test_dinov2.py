"""DINOv2: train configs merged over ssl_default_config.yaml with each value at its own place,
the code's fixed checkpointer, typos against the default config's keys, and the submitit and
torchrun launch lines with their ``key=value`` overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from tests.sources.helpers import (
    fixture_repository,
    job_values,
    mappings,
    near_misses,
    parse_never_raises,
)
from trainlint.assemble import assemble
from trainlint.job import Job
from trainlint.lint import CheckOptions, check
from trainlint.sources import dinov2, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures" / "dinov2"
VITL14 = "dinov2/configs/train/vitl14.yaml"
SHORT = "dinov2/configs/train/vitl16_short.yaml"


def repository(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    """A git work tree holding the dinov2 fixtures and ``extra`` files."""
    return fixture_repository(FIXTURES, tmp_path, extra)


def read(path: Path) -> Document:
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document), doc
    return doc


def jobs_of(root: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> dict[str, Job]:
    """The jobs of the named files (every file when none is named), checked from ``root``."""
    monkeypatch.chdir(root)
    files = [Path(name) for name in names] or sorted(
        p.relative_to(root) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
    )
    return {job.id: job for job in assemble(files)}


def test_train_config_is_merged_over_the_default_config_each_value_where_it_is_written() -> None:
    doc = read(FIXTURES / VITL14)
    assert doc.format == "dinov2"
    found = {
        f.pointer: (f.value, f.location.file.rsplit("/", 1)[-1], f.location.line) for f in doc.facts
    }
    assert found == {
        "/training/micro_batch_size": (32, "vitl14.yaml", 8),
        "/training/grad_accum_steps": (1, "vitl14.yaml", 8),
        "/training/max_steps": (500 * 1250, "vitl14.yaml", 20),  # epochs here, length there
        "/checkpoint/strategy": ("steps", "ssl_default_config.yaml", 68),
        "/checkpoint/every_steps": (3 * 1250, "ssl_default_config.yaml", 68),
        "/checkpoint/keep_last": (3, "ssl_default_config.yaml", 68),
        "/data/num_workers": (10, "ssl_default_config.yaml", 67),
        "/eval/every_steps": (12500, "ssl_default_config.yaml", 118),
        "/eval/strategy": ("steps", "ssl_default_config.yaml", 118),
        "/training/precision": ("fp16", "ssl_default_config.yaml", 28),
        "/data/image_size": (224, "ssl_default_config.yaml", 115),
        "/model/name": ("ViT-L/14", "vitl14.yaml", 12),
    }
    assert [(r.path, r.role) for r in doc.references] == [("../ssl_default_config.yaml", "member")]
    assert {d.pointer: d.value for d in doc.defaults} == {
        "/training/seed": 0,  # the code seeds 0 + rank whatever train.seed says
        "/logging/every_steps": 10,
    }


def test_jobs_are_the_train_configs_not_the_default_or_an_eval_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = jobs_of(repository(tmp_path), monkeypatch)
    assert sorted(jobs) == [VITL14, SHORT]
    assert [s.path for s in jobs[SHORT].sources] == [
        SHORT, "dinov2/configs/ssl_default_config.yaml",
    ]  # fmt: skip
    assert job_values(jobs[SHORT]).items() >= {
        "/model/name": "ViT-L/16", "/training/max_steps": 125000, "/training/micro_batch_size": 64,
    }.items()  # fmt: skip


def test_precision_follows_the_student_backbones_param_dtype(tmp_path: Path) -> None:
    root = repository(tmp_path)
    config = root / "dinov2/configs/train/bf16.yaml"
    config.write_text(
        "compute_precision:\n  student:\n    backbone:\n      mixed_precision:\n"
        "        param_dtype: fp32\ntrain:\n  batch_size_per_gpu: 8\n"
        "evaluation:\n  eval_period_iterations: 0\n"
    )
    found = {f.pointer: f.value for f in read(config).facts}
    assert found["/training/precision"] == "fp32"
    assert found["/eval/strategy"] == "no"


def test_a_near_miss_of_a_default_key_is_a_typo(tmp_path: Path) -> None:
    root = repository(tmp_path)
    config = root / "dinov2/configs/train/typo.yaml"
    config.write_text("train:\n  batch_size_per_gp: 8\noptim:\n  epoch: 10\nstudent:\n  x: 1\n")
    assert near_misses(read(config)) == [
        ("batch_size_per_gp", "batch_size_per_gpu", 2), ("epoch", "epochs", 4),
    ]  # fmt: skip


def test_submitit_line_layout_defaults_and_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        "#!/bin/bash\npython dinov2/run/train/train.py --nodes 4 --partition learnfair "
        f"--config-file {SHORT} --output-dir out train.batch_size_per_gpu=32 optim.epochs=10\n"
    )
    root = repository(tmp_path, {"train.sh": script})
    job = jobs_of(root, monkeypatch, "train.sh")["train.sh"]
    values = job_values(job)
    assert (
        values.items()
        >= {
            "/resources/nodes": 4,
            "/resources/placement/partition": "learnfair",
            "/training/micro_batch_size": 32,  # the line beats the config's 64
            "/data/image_size": 224,
        }.items()
    )
    assert job.training.max_steps is None  # optim.epochs=10 over an epoch length the line lacks
    defaults = {pointer: d.value for pointer, d in job.defaults.items()}
    assert defaults["/resources/gpus_per_node"] == 8
    assert defaults["/resources/time_limit_s"] == 2800 * 60


def test_timeout_is_minutes_and_torchrun_gets_no_submitit_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "slurm.sh": f"#!/bin/bash\npython dinov2/run/train/train.py --ngpus 4 --timeout 120 "
        f"--config-file {SHORT}\n",
        "local.sh": f"#!/bin/bash\ntorchrun --nproc_per_node 2 dinov2/train/train.py "
        f"--config-file {SHORT} --output-dir out\n",
    }
    jobs = jobs_of(repository(tmp_path, files), monkeypatch, "slurm.sh", "local.sh")
    assert jobs["slurm.sh"].resources.time_limit_s == 7200
    assert jobs["slurm.sh"].resources.gpus_per_node == 4
    assert jobs["local.sh"].resources.gpus_per_node == 2
    assert "/resources/time_limit_s" not in jobs["local.sh"].defaults
    assert jobs["local.sh"].training.model_dump()["micro_batch_size"] == 64


def test_fp32_param_dtype_on_a_named_gpu_is_told_to_train_in_mixed_precision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = "dinov2/configs/train/fp32.yaml"
    files = {
        config: "compute_precision:\n  student:\n    backbone:\n      mixed_precision:\n"
        "        param_dtype: fp32\ntrain:\n  batch_size_per_gpu: 32\n",
        "train.sh": "#!/bin/bash\n# trainlint: gpu=A100-80GB gpus=8\n"
        f"python dinov2/run/train/train.py --nodes 2 --config-file {config} --output-dir o\n",
    }
    monkeypatch.chdir(repository(tmp_path, files))
    report = check([Path("train.sh")], CheckOptions())
    fired = {(f.rule, f.file) for f in report.findings}
    assert ("TL105", config) in fired
    assert not {rule for rule, _ in fired} & {"TL403", "TL502", "TL201"}  # submitit's timeout


@given(mappings(["train", "optim", "student", "crops", "compute_precision", "evaluation"]))
def test_parse_never_raises(data: dict[str, object]) -> None:
    parse_never_raises(dinov2, data)
