"""What a file no format reads is (sources/base/workloads.py) and what a launch is for
(sources/base/purpose.py): templates, trainlint's own output, other tools' broken files, GPU
workloads of tools trainlint does not read, and evaluation or serving launches."""

from __future__ import annotations

import pytest

from trainlint.sources import read_document
from trainlint.sources.base import Document, Input, Skipped
from trainlint.sources.base.purpose import purpose, trainish


def outcome(name: str, text: str) -> Document | Skipped:
    return read_document(Input(name, text))


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("templates/job.yaml", "{{- if .Values.train }}\nkind: Job\n{{- end }}\n", "Helm"),
        ("templates/svc.yaml", "metadata:\n  name: {{ .Release.Name }}\n", "Helm"),  # parses
        ("{{cookiecutter.name}}/c.yaml", "name: {{ cookiecutter.project }\n", "cookiecutter"),
        ("playbook.yml", "- hosts: all\n  {% for h in hosts %}\n", "Jinja"),
    ],
)
def test_templates_are_skipped_with_their_kind(name: str, text: str, kind: str) -> None:
    doc = outcome(name, text)
    assert isinstance(doc, Skipped) and doc.reason.startswith(kind)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("site.yml", "- hosts: all\n  tasks:\n    - debug: {msg: \"{{ item }}\"}\n"),
        ("sft.yaml", "per_device_train_batch_size: 2\nmax_steps: 9\n"
                     "chat_template: \"{%- if tools %}{{- '<|im_start|>' }}{%- endif %}\"\n"),
    ],
)  # fmt: skip
def test_placeholders_inside_valid_yaml_are_values_not_templates(name: str, text: str) -> None:
    doc = outcome(name, text)
    assert not (isinstance(doc, Skipped) and "template" in doc.reason)


def test_a_template_requesting_gpus_is_a_workload_unless_it_serves() -> None:
    job = "kind: Job\nspec:\n  x: {{ .Values.x }}\n  limits:\n    nvidia.com/gpu: {{ .Values.g }}\n"
    doc = outcome("chart/templates/job.yaml", job)
    assert isinstance(doc, Skipped) and doc.workload is not None
    assert (doc.workload.location.line, doc.workload.kind) == (
        5,
        "Helm (Go) template requesting GPUs",
    )
    served = outcome("chart/templates/deploy.yaml", job.replace("kind: Job", "kind: Deployment"))
    assert isinstance(served, Skipped) and served.workload is None


def test_gpu_resources_are_keys_not_words_in_a_string() -> None:
    case = "cases:\n  - files:\n      job.yaml: |\n        nvidia.com/gpu: 8\n"
    assert outcome("cases.yaml", case) == Skipped(
        "cases.yaml", "YAML with no training settings trainlint reads"
    )


FLAVOR = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: hami}\n"
GPU_POD = """\
apiVersion: {api}
kind: {kind}
metadata: {{name: gpu-burn}}
spec:
  template:
    spec:
      containers:
        - name: main
          resources:
            limits:
              nvidia.com/gpu: "2"
"""


def test_the_kubernetes_object_named_is_the_one_that_requests_gpus() -> None:
    """kueue's sample-hami.yaml: a ResourceFlavor, then the object asking for the GPUs. TL907
    named the ResourceFlavor, at a line of the other document."""
    ray = outcome("x.yaml", f"{FLAVOR}---\n{GPU_POD.format(api='ray.io/v1', kind='RayCluster')}")
    assert isinstance(ray, Skipped) and ray.workload is not None
    assert ray.workload.kind == "Kubernetes RayCluster (ray.io/v1)"
    assert (ray.workload.location.line, ray.workload.evidence) == (15, "nvidia.com/gpu: 2")
    assert ray.reason == "Kubernetes RayCluster (ray.io/v1): not a kind trainlint reads"


def test_a_deployment_requesting_gpus_beside_other_objects_is_a_service() -> None:
    """The same file's Deployment (apps/v1) runs gpu-burn as a service: no training run."""
    served = outcome("x.yaml", f"{FLAVOR}---\n{GPU_POD.format(api='apps/v1', kind='Deployment')}")
    reason = "Kubernetes Deployment (apps/v1): a service, not a training run"
    assert served == Skipped("x.yaml", reason)


def test_a_detectron2_config_its_format_does_not_recognise_says_so() -> None:
    doc = outcome("config.yaml", "SOLVER:\n  IMS_PER_BATCH: 16\n")
    assert isinstance(doc, Skipped)
    assert doc.reason == (
        "yacs config (detectron2-style SOLVER section): "
        "not a config the detectron2 format recognises"
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "SOLVER:\n  IMS_PER_BATCH: 16\n  MAX_ITER: 90000\n",
            "yacs config (detectron2-style SOLVER section)",
        ),
        # an SSL config of another tool (``model`` is no DINOv2 section: dinov2 reads its own)
        ("train:\n  batch_size_per_gpu: 64\nstudent:\n  arch: vit_large\nmodel:\n  depth: 12\n",
         "DINOv2 / SSL training config"),
        ("trainer_config:\n  max_epochs: 10\n  batch_size: 216\n",
         "training config of a program trainlint does not read"),
    ],
)  # fmt: skip
def test_training_configs_of_other_tools_are_workloads_not_understood(text: str, kind: str) -> None:
    doc = outcome("config.yaml", text)
    assert isinstance(doc, Skipped) and doc.workload is not None and doc.workload.kind == kind


def test_bases_other_configs_inherit_are_no_workloads() -> None:
    text = "SOLVER:\n  IMS_PER_BATCH: 16\n"
    assert outcome("configs/Base-RCNN-FPN.yaml", text).workload is None
    base = "train_cfg = dict(by_epoch=True, max_epochs=100)\n"
    assert outcome("configs/_base_/schedules/s.py", base).workload is None
    read = outcome("configs/resnet/r50.py", base)  # a run: the mmengine format reads it
    assert isinstance(read, Document) and read.format == "mmengine" and read.workload is None


def test_trainlints_own_reports_are_recognised() -> None:
    report = '{"version": 1, "findings": [], "jobs": [], "errors": []}'
    sarif = '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "trainlint"}}}]}'
    for name, text in (("report.json", report), ("trainlint.sarif", sarif)):
        doc = outcome(name, text)
        assert isinstance(doc, Skipped) and "own output" in doc.reason


@pytest.mark.parametrize(
    ("names", "flags", "expected"),
    [
        (["eval.py"], [], "evaluation"),
        (["llava.eval.model_vqa_loader"], [], "evaluation"),
        (["tools/train_net.py"], [], None),
        (["tools/train_net.py"], ["--eval-only"], "evaluation"),
        (["verl.trainer.main_generation"], [], "generation"),
        (["verl.trainer.main_ppo"], [], None),
        (["vllm", "serve"], [], "serving"),
        (["trl", "vllm-serve"], [], "serving"),
        (["ray", "start"], [], "cluster setup"),
        (["scripts/merge_lora_weights.py"], [], "checkpoint conversion"),
        (["submit_benchmarks.py"], [], "job submission"),
        (["main.py"], [], None),
    ],
)
def test_what_a_launch_is_for(names: list[str], flags: list[str], expected: str | None) -> None:
    assert purpose(names, flags) == expected


def test_training_names_are_read_from_the_last_part() -> None:
    assert trainish("openrlhf.cli.train_sft") and trainish("fairseq-train")
    assert not trainish("verl.trainer.main_generation")
