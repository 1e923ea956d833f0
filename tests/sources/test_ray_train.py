"""The ray-train format: ScalingConfig, CheckpointConfig and RunConfig of Ray Train scripts read
with ``ast`` (stand-ins of ray-project/kuberay's samples in tests/sources/fixtures/ray_train), the
generic Python reading of the same file kept, and a RayJob's entrypoint script followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.helpers import FactRow, rows
from trainlint.lint import CheckOptions, check
from trainlint.sources import finish, ray_train, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures" / "ray_train"
ACCELERATOR = "/resources/accelerator"


def read(name: str, text: str) -> Document:
    file = Input(name, text)
    return finish(ray_train.parse(file), file)


EXPECTED: dict[str, list[FactRow]] = {
    # num_workers from $NUM_WORKERS: unknown to the script, so no world size.
    "resnet_finetune.py": [
        (ACCELERATOR, "gpu", 18, 34),
        ("/checkpoint/keep_last", 3, 21, 42),
        ("/name", "finetune-resnet", 23, 9),
    ],
    "text_classifier.py": [
        ("/name", "ptl-sent-classification", 15, 9),
        ("/checkpoint/keep_last", 2, 17, 13),
        (ACCELERATOR, "gpu", 23, 51),
        ("/resources/world_size", 1, 23, 36),
    ],
    # use_gpu=use_gpu and resources_per_worker={"CPU": cpus_per_worker}: nothing is literal.
    "fashion_mnist_cpu.py": [],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_facts_are_exact(name: str) -> None:
    doc = read_document(Input(name, (FIXTURES / name).read_text()))
    assert isinstance(doc, Document) and doc.format == "ray-train"
    assert rows(doc) == EXPECTED[name]


SCRIPT = """\
import ray.train
from ray.train import ScalingConfig
from ray.train.torch import TorchTrainer

trainer = TorchTrainer(train_func, scaling_config=ScalingConfig({scaling}))
trainer.fit()
"""


@pytest.mark.parametrize(
    ("scaling", "expected"),
    [
        ("num_workers=4, use_gpu=True", {ACCELERATOR: "gpu", "/resources/world_size": 4}),
        ('num_workers=4, use_gpu=True, resources_per_worker={"GPU": 2}',
         {ACCELERATOR: "gpu", "/resources/world_size": 8}),
        ('num_workers=2, resources_per_worker={"GPU": 1}',
         {ACCELERATOR: "gpu", "/resources/world_size": 2}),
        ('num_workers=8, use_gpu=True, resources_per_worker={"GPU": 0.5}',
         {ACCELERATOR: "gpu"}),  # two workers share a GPU: no whole count
        ('num_workers=2, use_tpu=True, resources_per_worker={"TPU": 4}',
         {ACCELERATOR: "tpu", "/resources/world_size": 8}),
        ("num_workers=4, use_gpu=False", {ACCELERATOR: "none"}),
        ("num_workers=4", {ACCELERATOR: "none"}),  # Ray's default: use_gpu=False
        ("num_workers=args.workers, use_gpu=True", {ACCELERATOR: "gpu"}),
        ("num_workers=4, use_gpu=args.gpu", {}),
        ("num_workers=4, use_gpu=True, resources_per_worker=resources", {}),
    ],
)  # fmt: skip
def test_scaling_config(scaling: str, expected: dict[str, object]) -> None:
    doc = read("train.py", SCRIPT.format(scaling=scaling))
    assert {f.pointer: f.value for f in doc.facts} == expected


def test_a_scaling_config_under_an_if_is_not_the_run() -> None:
    text = SCRIPT.replace("trainer = ", "if big:\n    trainer = ").format(
        scaling="num_workers=64, use_gpu=True"
    )
    assert read("train.py", text).facts == []


@pytest.mark.parametrize(
    "text",
    [
        "from ray.train import ScalingConfig\n",  # imports, calls nothing
        "scaling = ScalingConfig(num_workers=4)\n",  # another library's ScalingConfig
        "from ray import tune\ntune.run(f, config=RunConfig(name='x'))\n",
    ],
)
def test_not_claimed_without_ray_train_and_a_call(text: str) -> None:
    assert ray_train.recognise(Input("train.py", text)) == 0.0


def test_the_generic_python_reading_of_the_file_is_kept() -> None:
    text = SCRIPT.format(scaling="num_workers=2, use_gpu=True") + (
        'import os\nos.environ["NCCL_DEBUG"] = "INFO"\n'
        "args = TrainingArguments(output_dir='o', save_steps=500, bf16=True)\n"
    )
    facts = {f.pointer: f.value for f in read("train.py", text).facts}
    assert facts["/env/NCCL_DEBUG"] == "INFO"
    assert facts["/checkpoint/every_steps"] == 500
    assert facts["/resources/world_size"] == 2


def test_a_standalone_script_roots_a_job_and_a_cpu_one_is_not_told_gpu_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gpu.py").write_text(SCRIPT.format(scaling="num_workers=4, use_gpu=True"))
    (tmp_path / "cpu.py").write_text(SCRIPT.format(scaling="num_workers=4, use_gpu=False"))
    monkeypatch.chdir(tmp_path)
    report = check([Path(".")], CheckOptions())
    jobs = {job.id: job for job in report.jobs}
    assert jobs["gpu.py"].resources.world_size == 4
    assert jobs["cpu.py"].resources.accelerator == "none"
    untagged = {f.job for f in report.findings if f.rule == "TL401"}
    assert untagged == {"gpu.py"}  # GPU spend without cost tags; the CPU job spends none
    assert not any(f.rule == "TL404" for f in report.findings if f.job == "cpu.py")


def test_a_rayjob_reads_the_script_its_entrypoint_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "train.py").write_text((FIXTURES / "resnet_finetune.py").read_text())
    (tmp_path / "rayjob.yaml").write_text(
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {generateName: ft-}\n"
        "spec:\n  entrypoint: python train.py\n  rayClusterSpec:\n"
        "    headGroupSpec: {template: {spec: {containers: [{name: head}]}}}\n"
        "    workerGroupSpecs:\n      - replicas: 4\n        template:\n          spec:\n"
        "            containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
    )
    monkeypatch.chdir(tmp_path)
    (job,) = check([Path("rayjob.yaml")], CheckOptions()).jobs
    assert [s.path for s in job.sources] == ["rayjob.yaml", "train.py"]
    assert (job.name, job.checkpoint.keep_last, job.resources.world_size) == (
        "finetune-resnet", 3, 4)  # fmt: skip
