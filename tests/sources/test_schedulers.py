"""Batch schedulers and launchers on Kubernetes (Volcano Job, JobSet, LeaderWorkerSet, the
legacy MPIJob) and TPUs: exact facts of real manifests (tests/sources/fixtures/schedulers,
MANIFEST.tsv), how heterogeneous pod groups sum, Kueue/Volcano queues as a cost tag, and a
CPU-only job that no GPU rule may call "GPU type unknown"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.helpers import FactRow, rows
from tests.sources.test_kubernetes import read, values
from trainlint.lint import CheckOptions, check

FIXTURES = Path(__file__).parent / "fixtures" / "schedulers"
ACCELERATOR = "/resources/accelerator"
TPU_ACCELERATOR = "/resources/placement/node_labels/cloud.google.com~1gke-tpu-accelerator"
TPU_TOPOLOGY = "/resources/placement/node_labels/cloud.google.com~1gke-tpu-topology"

EXPECTED: dict[str, list[FactRow]] = {
    # An MPI master without GPUs + 2 workers with one each: the master launches, the workers
    # are the nodes; world size is the GPUs of the workers.
    "volcano_mindspore_gpu.yaml": [
        ("/name", "mindspore-gpu", 4, 3),
        ("/resources/nodes", 2, 33, 7),
        ("/resources/gpus_per_node", 1, 47, 19),
        ("/resources/world_size", 2, 47, 19),
        (ACCELERATOR, "gpu", 47, 19),
    ],
    # replicas 2 slices x parallelism 4 pods x 4 TPU chips; Kueue's queue is the cost queue.
    "jobset_v6e_multislice.yaml": [
        ("/name", "v6e-multislice", 4, 3),
        ("/tags/kueue.x_k8s.io~1queue_name", "multislice-queue", 7, 5),
        ("/tags/alpha.jobset.sigs.k8s.io~1exclusive_topology", "cloud.google.com/gke-nodepool",
         10, 5),
        ("/resources/gpu/model", "TPU-v6e", 30, 17),
        ("/resources/gpu/memory_bytes", 32 * 2**30, 30, 17),
        (TPU_ACCELERATOR, "tpu-v6e-slice", 30, 17),
        (TPU_TOPOLOGY, "4x4", 31, 17),
        ("/tags/queue", "multislice-queue", 7, 5),
        ("/resources/nodes", 8, 22, 11),
        ("/resources/gpus_per_node", 4, 104, 23),
        ("/resources/world_size", 32, 104, 23),
        (ACCELERATOR, "tpu", 104, 23),
        ("/launcher/kind", "python", 40, 23),
        ("/launcher/entrypoint", "distributed_train.py", 40, 23),
    ],
    # torchrun --backend=gloo on 4 pods without accelerators: a CPU job.
    "jobset_resnet_cpu.yaml": [
        ("/name", "pytorch", 6, 3),
        ("/resources/nodes", 4, 12, 9),
        (ACCELERATOR, "none", 7, 1),
        ("/env/MASTER_ADDR", "pytorch-workers-0-0.pytorch", 23, 17),
        ("/env/MASTER_PORT", "3389", 25, 17),
        ("/env/PYTHONUNBUFFERED", "0", 28, 17),
        ("/launcher/kind", "torchrun", 33, 17),
        ("/launcher/entrypoint", "resnet.py", 33, 17),
    ],
    # 2 groups x (a leader + 1 worker), 8 GPUs per pod.
    "lws_vllm_gpu.yaml": [
        ("/name", "vllm", 4, 3),
        ("/tags/role", "leader", 13, 11),
        ("/resources/nodes", 4, 6, 3),
        ("/resources/gpus_per_node", 8, 28, 17),
        ("/resources/world_size", 32, 28, 17),
        (ACCELERATOR, "gpu", 28, 17),
        ("/env/HF_TOKEN", "$HF_TOKEN", 19, 17),  # Kubernetes expands $(VAR), not $VAR
    ],
    # KubeRay's multi-host TPU worker group: replicas 1 x numOfHosts 4 pods x 4 v6e chips, a
    # v6e-16 slice (topology 4x4); the head holds no TPU.
    "rayjob_tpu_v6e_16.yaml": [
        ("/name", "v6e-16-job", 4, 3),
        ("/resources/gpu/model", "TPU-v6e", 75, 13),
        ("/resources/gpu/memory_bytes", 32 * 2**30, 75, 13),
        (TPU_ACCELERATOR, "tpu-v6e-slice", 75, 13),
        (TPU_TOPOLOGY, "4x4", 76, 13),
        ("/resources/nodes", 4, 38, 7),
        ("/resources/gpus_per_node", 4, 54, 17),
        ("/resources/world_size", 16, 54, 17),
        (ACCELERATOR, "tpu", 54, 17),
        ("/launcher/kind", "python", 6, 15),
        ("/launcher/entrypoint", "ray-operator/config/samples/tpu/tpu_list_devices.py", 6, 22),
    ],
    # No leaderTemplate: all 3 x 4 pods are of the worker template, 4 v5e chips each.
    "lws_tpu.yaml": [
        ("/name", "leaderworkerset-sample", 10, 3),
        ("/tags/app.kubernetes.io~1name", "leaderworkerset", 5, 5),
        ("/tags/app.kubernetes.io~1instance", "leaderworkerset-sample", 6, 5),
        ("/tags/app.kubernetes.io~1part_of", "lws", 7, 5),
        ("/tags/app.kubernetes.io~1managed_by", "kustomize", 8, 5),
        ("/tags/app.kubernetes.io~1created_by", "lws", 9, 5),
        (TPU_TOPOLOGY, "4x4", 18, 11),
        ("/resources/gpu/model", "TPU-v5e", 19, 11),
        ("/resources/gpu/memory_bytes", 16 * 2**30, 19, 11),
        (TPU_ACCELERATOR, "tpu-v5-lite-podslice", 19, 11),
        ("/resources/nodes", 12, 12, 3),
        ("/resources/gpus_per_node", 4, 25, 15),
        ("/resources/world_size", 48, 25, 15),
        (ACCELERATOR, "tpu", 25, 15),
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_facts_are_exact(name: str) -> None:
    doc = read(name, (FIXTURES / name).read_text())
    assert rows(doc) == EXPECTED[name]
    assert doc.unknown_keys == []


VOLCANO = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: ddp}
spec:
  queue: nlp-research
  maxRetry: 3
  policie:
    - {event: TaskCompleted, action: CompleteJob}
  tasks:
    - name: worker
      replicas: 4
      templat: {}
      template:
        spec:
          containers:
            - name: trainer
              resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_volcano_queue_is_the_cost_queue_and_typos_are_reported() -> None:
    doc = read("vc.yaml", VOLCANO)
    assert values(doc) == {
        "/name": "ddp",
        "/tags/queue": "nlp-research",
        "/resources/nodes": 4,
        "/resources/gpus_per_node": 8,
        "/resources/world_size": 32,
    }
    misses = [(u.key, u.suggestion, u.line) for u in doc.unknown_keys]
    assert misses == [("policie", "policies", 7), ("templat", "template", 12)]


def test_volcano_pod_deadline_is_the_time_limit() -> None:
    """A Volcano Job has no deadline field: its GPU pods' activeDeadlineSeconds bounds it."""
    text = VOLCANO.replace(
        "        spec:\n          containers:",
        "        spec:\n          activeDeadlineSeconds: 7200\n          containers:",
    )
    assert values(read("v.yaml", text))["/resources/time_limit_s"] == 7200.0


def test_jobset_child_job_deadline_is_the_time_limit() -> None:
    text = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
    - name: driver
      template:
        spec:
          activeDeadlineSeconds: 3600
          template: {spec: {containers: [{name: d}]}}
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 2
          activeDeadlineSeconds: 3600
          template:
            spec:
              containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]
"""
    assert values(read("js.yaml", text)) == {
        "/name": "js",
        "/resources/time_limit_s": 3600.0,
        "/resources/nodes": 4,  # the driver holds no GPU: 2 x 2 worker pods
        "/resources/gpus_per_node": 4,
        "/resources/world_size": 16,
    }


def test_legacy_mpijob_single_template() -> None:
    text = """\
apiVersion: kubeflow.org/v1alpha1
kind: MPIJob
metadata: {name: legacy}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: m
          command: [mpirun, -x, NCCL_DEBUG=INFO, -x, PATH, python, train.py]
          resources: {limits: {nvidia.com/gpu: 4}}
"""
    assert values(read("mpi.yaml", text)) == {
        "/name": "legacy",
        "/resources/nodes": 2,
        "/resources/gpus_per_node": 4,
        "/resources/world_size": 8,
        "/env/NCCL_DEBUG": "INFO",  # -x NAME=VALUE sets it in every rank; -x PATH forwards
        "/launcher/kind": "mpirun",
        "/launcher/entrypoint": "train.py",
        "/launcher/command": "mpirun -x NCCL_DEBUG=INFO -x PATH python train.py",
    }


CPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: cpu-train}
spec:
  parallelism: 2
  template:
    spec:
      containers:
        - name: t
          command: [torchrun, --nproc_per_node=4, train.py, --max_steps, "100"]
          resources: {limits: {cpu: "8"}}
"""


def test_a_cpu_only_job_is_never_told_gpu_type_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pods without a GPU or TPU request: no unknown-hardware (TL404), no GPU cost tags."""
    (tmp_path / "job.yaml").write_text(CPU_JOB)
    monkeypatch.chdir(tmp_path)
    report = check([Path("job.yaml")], CheckOptions())
    (job,) = report.jobs
    assert job.resources.accelerator == "none"
    assert {f.rule for f in report.findings} & {"TL401", "TL404"} == set()


def test_a_tpu_job_is_priced_from_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TPU v6e chips are the job's accelerators: type and count known, so no TL404; the
    catalog's on-demand chip-hour price, never a GPU as a cheaper alternative."""
    (tmp_path / "js.yaml").write_text((FIXTURES / "jobset_v6e_multislice.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    report = check([Path("js.yaml")], CheckOptions())
    (job,) = report.jobs
    assert (job.resources.gpu.model, job.resources.world_size) == ("TPU-v6e", 32)
    assert job.estimates.price_per_gpu_hour == 2.70
    assert all(alt.gpu.startswith("TPU-") for alt in job.estimates.alternatives)
    assert "TL404" not in {f.rule for f in report.findings}


def test_a_shell_command_substitution_is_not_a_kubernetes_variable() -> None:
    """``$(head -n1 hosts)`` in a ``sh -c`` script is the shell's; only ``$(NAME)`` is the
    container variable Kubernetes expands (tests/fresh monorepo's Volcano Job)."""
    text = VOLCANO.replace(
        "            - name: trainer\n",
        "            - name: trainer\n              command: [sh, -c, 'M=$(head -n1 /etc/h)\n"
        "                torchrun --nproc_per_node=8 --master_addr=$M train.py']\n",
    )
    facts = values(read("vc.yaml", text))
    assert (facts["/launcher/kind"], facts["/launcher/entrypoint"]) == ("torchrun", "train.py")


def test_a_leaderworkerset_is_a_run_only_when_it_launches_training() -> None:
    """LWS serves: vLLM's example (a serving command) and the TPU sample (nginx, no command)
    are services; the same set running torchrun is a training run."""
    for name in ("lws_vllm_gpu.yaml", "lws_tpu.yaml"):
        doc = read(name, (FIXTURES / name).read_text())
        assert doc.purpose is not None and "service" in doc.purpose, name
    text = (
        (FIXTURES / "lws_tpu.yaml")
        .read_text()
        .replace(
            "        - name: nginx\n",
            "        - name: train\n          command: [torchrun, --nproc_per_node=4, train.py]\n",
        )
    )
    assert read("lws.yaml", text).purpose is None
