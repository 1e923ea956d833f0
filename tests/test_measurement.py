"""Reading probe measurements: fingerprint, file location, freshness and broken files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from trainlint.job import Job
from trainlint.lint import CheckOptions, check, load_jobs
from trainlint.measurement import (
    MAX_BYTES,
    attach_measurements,
    changed_fields,
    fingerprint,
    fingerprint_fields,
    measurement_path,
    measurement_root,
)

RUN = """\
#!/bin/bash
#SBATCH --gres=gpu:a100-80gb:8
#SBATCH --time=02:00:00
torchrun --nproc_per_node=8 train.py \\
    --model_name_or_path openai-community/gpt2 \\
    --per_device_train_batch_size 8 --max_seq_length 1024 --bf16 --max_steps 1000
"""


def _job(**training: object) -> Job:
    return Job.model_validate({
        "id": "jobs/run.sh",
        "sources": [],
        "model": {"name": "gpt2", "seq_len": 1024},
        "resources": {"gpu": {"model": "a100_80g"}, "gpus_per_node": 8, "nodes": 2},
        "training": {"micro_batch_size": 8, "precision": "bf16", **training},
    })  # fmt: skip


def _repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "run.sh").write_text(RUN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _write(root: Path, name: str, data: object) -> Path:
    path = root / ".trainlint" / "measurements" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_fingerprint_is_sha256_of_canonical_json() -> None:
    job = _job()
    text = json.dumps(fingerprint_fields(job), sort_keys=True, separators=(",", ":"))
    assert fingerprint(job) == hashlib.sha256(text.encode()).hexdigest()
    assert fingerprint(job) == fingerprint(_job())


def test_fingerprint_covers_performance_fields_only() -> None:
    fields = fingerprint_fields(_job())
    assert fields["/resources/world_size"] == 16  # gpus per node x nodes
    assert fields["/resources/gpu/model"] == "A100-80GB"  # the catalog name, any spelling
    base = fingerprint(_job())
    assert fingerprint(_job(micro_batch_size=16)) != base
    assert fingerprint(_job(activation_checkpointing=True)) != base
    assert fingerprint(_job(precision="fp32")) != base
    assert fingerprint(_job(seed=1234, max_steps=99)) == base  # not performance-relevant


def test_changed_fields_names_pointers() -> None:
    recorded = fingerprint_fields(_job(micro_batch_size=4))
    assert changed_fields(recorded, _job()) == ["/training/micro_batch_size"]
    assert changed_fields(None, _job()) == []


def test_root_is_the_config_folder_else_the_checked_path(tmp_path: Path) -> None:
    sub = tmp_path / "jobs" / "llama"
    sub.mkdir(parents=True)
    (sub / "run.sh").write_text(RUN)
    assert measurement_root(sub) == sub.resolve()
    assert measurement_root(sub / "run.sh") == sub.resolve()
    (tmp_path / ".trainlint.yaml").write_text("{}\n")
    assert measurement_root(sub) == tmp_path.resolve()
    (tmp_path / "jobs" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert measurement_root(sub) == tmp_path.resolve()  # no [tool.trainlint]: not a config


def test_path_is_the_job_id_relative_to_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    job = _job()
    path = measurement_path(job, tmp_path)
    assert path == tmp_path / ".trainlint" / "measurements" / "jobs-run.sh.json"
    weird = job.model_copy(update={"id": "a b/c&d.yaml"})
    assert measurement_path(weird, tmp_path).name == "a-b-c-d.yaml.json"


def test_attach_marks_fresh_and_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path, monkeypatch)
    [job] = load_jobs([Path(".")])
    sizes = {"8": {"tokens_per_s": 1e5, "scaling_efficiency": 0.9, "oom": False}}
    _write(root, "run.sh.json", {"fingerprint": fingerprint(job), "world_sizes": sizes})
    [job] = load_jobs([Path(".")])
    assert job.measurements["fresh"] is True
    assert job.measurements["world_sizes"] == sizes
    assert job.measurements["path"] == ".trainlint/measurements/run.sh.json"
    assert job.provenance["/measurements"].file == ".trainlint/measurements/run.sh.json"
    fields = fingerprint_fields(job) | {"/training/micro_batch_size": 2}
    _write(root, "run.sh.json", {"fingerprint": "0" * 64, "fields": fields, "world_sizes": {}})
    [job] = load_jobs([Path(".")])
    assert job.measurements["fresh"] is False
    assert job.measurements["changed"] == ["/training/micro_batch_size"]


def test_no_file_leaves_measurements_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _repo(tmp_path, monkeypatch)
    [job] = load_jobs([Path(".")])
    assert job.measurements == {}
    assert job.parse_errors == []


@pytest.mark.parametrize(
    ("content", "reason", "line"),
    [
        ('{\n  "fingerprint": "abc",\n  oops\n}', "invalid JSON", 3),
        ("[1, 2]", "must be a JSON object", 1),
        ('{"world_sizes": {}}', "needs a string 'fingerprint'", 1),
        ('{"fingerprint": "a", "world_sizes": [8]}', "'world_sizes' must be an object", 1),
    ],
)
def test_broken_file_is_a_parse_error_at_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, reason: str, line: int
) -> None:
    root = _repo(tmp_path, monkeypatch)
    _write(root, "run.sh.json", content)
    [job] = load_jobs([Path(".")])
    assert job.measurements == {}
    [error] = job.parse_errors
    assert reason in error.message and error.message.startswith("measurement ")
    assert (error.file, error.line) == (".trainlint/measurements/run.sh.json", line)
    assert job.provenance["/parse_errors/0"].line == line


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    job = _job()
    _write(tmp_path, "jobs-run.sh.json", " " * (MAX_BYTES + 1))
    attach_measurements([job], tmp_path)
    assert "larger than" in job.parse_errors[0].message


def test_check_reports_stale_and_broken_measurements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path, monkeypatch)
    _write(root, "run.sh.json", {"fingerprint": "0" * 64, "world_sizes": {}})
    report = check([Path(".")], CheckOptions(select=["TL902", "TL103"]))
    rules = sorted((f.rule, f.file) for f in report.findings)
    assert rules == [
        ("TL103", "run.sh"),
        ("TL902", ".trainlint/measurements/run.sh.json"),
    ]
    _write(root, "run.sh.json", "{not json")
    report = check([Path(".")], CheckOptions(select=["TL901"]))
    assert [(f.rule, f.file, f.line) for f in report.findings] == [
        ("TL901", ".trainlint/measurements/run.sh.json", 1)
    ]
