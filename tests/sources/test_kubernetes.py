"""The kubernetes format: exact facts (with lines and columns) of PyTorchJob, TrainJob with its
runtime in the same file, RayJob and batch Job manifests; recognition by apiVersion + kind;
typos; and robustness on random manifest-like documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS
from tests.fast_loop import examples
from tests.sources.helpers import FactRow, RefRow, refs, rows
from trainlint.errors import SourceError
from trainlint.sources import finish, kubernetes, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures" / "kubernetes"


def read(name: str, text: str) -> Document:
    file = Input(name, text)
    return finish(kubernetes.parse(file), file)


def values(doc: Document) -> dict[str, Any]:
    """The facts but the scheduler and the accelerator kind, which every manifest states."""
    shown = {f.pointer: f.value for f in doc.facts}
    return {k: v for k, v in shown.items() if k not in ("/resources/scheduler", ACCELERATOR)}


ACCELERATOR = "/resources/accelerator"


H100_PRODUCT, A100_PRODUCT = "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"
GKE_ACCELERATOR = "/resources/placement/node_labels/cloud.google.com~1gke-accelerator"

EXPECTED: dict[str, tuple[list[FactRow], list[RefRow]]] = {
    "batch_job.yaml": (
        [
            ("/name", "single-node", 4, 3),
            ("/resources/spot", False, 11, 9),  # karpenter.sh/capacity-type: on-demand
            # every required node label, for the org fleet's pools
            ("/resources/placement/node_labels/karpenter.sh~1capacity-type", "on-demand", 11, 9),
            ("/resources/nodes", 1, 6, 3),
            ("/resources/gpus_per_node", 2, 22, 15),
            ("/resources/world_size", 2, 22, 15),
            ("/resources/accelerator", "gpu", 22, 15),
            # bash -c SCRIPT: the launch inside the script, located at the script argument
            ("/launcher/kind", "accelerate", 17, 15),
            ("/launcher/entrypoint", "train.py", 17, 15),
        ],
        # /etc/train/cfg.yaml is a path inside the container image: not a file of this repo
        [("configs/fsdp.yaml", "config", 17, 15)],
    ),
    "pytorchjob_gpu.yaml": (
        [
            ("/name", "llama-sft", 4, 3),
            ("/resources/time_limit_s", 86400.0, 12, 5),
            ("/tags/team", "nlp", 6, 5),
            ("/tags/cost_center", "research-42", 7, 5),
            ("/tags/kueue.x_k8s.io~1queue_name", "gpu-queue", 9, 5),
            ("/tags/project", "llama", 49, 13),
            ("/resources/gpu/model", "H100-SXM", 20, 13),
            ("/resources/gpu/memory_bytes", 85899345920, 20, 13),
            ("/resources/placement/node_labels/nvidia.com~1gpu.product", H100_PRODUCT, 20, 13),
            ("/tags/queue", "gpu-queue", 9, 5),  # the queue the job is charged to
            ("/resources/nodes", 4, 16, 7),  # Master 1 + Worker 3
            ("/resources/gpus_per_node", 8, 43, 19),
            ("/resources/world_size", 32, 43, 19),
            ("/resources/accelerator", "gpu", 43, 19),
            ("/env/NCCL_DEBUG", "INFO", 25, 19),
            ("/env/HF_TOKEN", "<redacted>", 27, 19),  # POD_IP is valueFrom: unknown
            ("/launcher/kind", "torchrun", 33, 25),
            ("/launcher/entrypoint", "train.py", 35, 19),
            ("/training/micro_batch_size", 4, 36, 19),
            ("/checkpoint/every_steps", 500.0, 37, 19),
            ("/training/parallelism/strategy", "deepspeed", 39, 19),
        ],
        [("configs/ds_zero3.json", "deepspeed", 39, 19)],
    ),
    "rayjob.yaml": (
        [
            ("/name", "ray-train", 4, 3),
            ("/resources/time_limit_s", 7200.0, 7, 3),
            ("/resources/gpu/model", "A100-80GB", 29, 27),  # required node affinity
            ("/resources/gpu/memory_bytes", 85899345920, 29, 27),
            ("/resources/placement/node_labels/nvidia.com~1gpu.product", A100_PRODUCT, 29, 27),
            ("/resources/nodes", 2, 18, 9),  # the GPU workers; the head has no GPU
            ("/resources/gpus_per_node", 4, 37, 21),
            ("/resources/world_size", 8, 37, 21),
            ("/resources/accelerator", "gpu", 37, 21),
            ("/launcher/kind", "python", 6, 15),
            ("/launcher/entrypoint", "/home/ray/train.py", 6, 22),
            ("/training/epochs", 3.0, 6, 41),
        ],
        [],
    ),
    "trainjob_runtime.yaml": (
        [
            # from the runtime of the same file, for what the TrainJob leaves out
            ("/tags/trainer.kubeflow.org~1framework", "torch", 13, 5),
            ("/name", "finetune", 54, 3),
            ("/tags/kueue.x_k8s.io~1queue_name", "training-queue", 56, 5),
            ("/tags/cost_center", "research", 69, 15),  # runtimePatches pod labels
            ("/resources/gpu/model", "A100-40GB", 78, 27),
            ("/resources/gpu/memory_bytes", 42949672960, 78, 27),
            (GKE_ACCELERATOR, "nvidia-tesla-a100", 78, 27),
            ("/resources/spot", True, 79, 27),
            ("/resources/placement/node_labels/cloud.google.com~1gke-spot", "true", 79, 27),
            ("/tags/queue", "training-queue", 56, 5),
            ("/resources/nodes", 2, 61, 5),  # trainer.numNodes beats mlPolicy.numNodes
            ("/resources/gpus_per_node", 4, 49, 27),  # the runtime's node container
            ("/resources/world_size", 8, 49, 27),
            ("/resources/accelerator", "gpu", 49, 27),
            ("/env/OMP_NUM_THREADS", "4", 45, 27),
            ("/launcher/kind", "torchrun", 42, 27),  # runtime command + the TrainJob's args
            ("/launcher/entrypoint", "/workspace/train.py", 43, 27),
            ("/training/max_steps", 1000, 62, 12),
        ],
        [],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_facts_and_references_are_exact(name: str) -> None:
    doc = read(name, (FIXTURES / name).read_text())
    facts, references = EXPECTED[name]
    assert rows(doc) == facts
    assert refs(doc) == references
    assert doc.role == "entrypoint" and doc.format == "kubernetes"


def test_unknown_keys_near_a_documented_one_are_reported() -> None:
    doc = read("job.yaml", (FIXTURES / "batch_job.yaml").read_text())
    found = [(u.key, u.suggestion, u.line, u.column) for u in doc.unknown_keys]
    assert found == [
        ("activeDeadlineSecond", "activeDeadlineSeconds", 7, 3),
        ("volumeMount", "volumeMounts", 24, 11),
    ]


def test_the_other_fixtures_have_no_near_misses() -> None:
    for name in ("pytorchjob_gpu.yaml", "trainjob_runtime.yaml", "rayjob.yaml"):
        assert read(name, (FIXTURES / name).read_text()).unknown_keys == [], name


@pytest.mark.parametrize(
    ("api", "kind", "score"),
    [
        ("kubeflow.org/v1", "PyTorchJob", 0.95),
        ("kubeflow.org/v1", "TFJob", 0.95),
        ("kubeflow.org/v2beta1", "MPIJob", 0.95),
        ("trainer.kubeflow.org/v1alpha1", "TrainJob", 0.95),
        ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", 0.95),
        ("ray.io/v1", "RayJob", 0.95),
        ("batch/v1", "Job", 0.9),
        ("batch.volcano.sh/v1alpha1", "Job", 0.95),
        ("jobset.x-k8s.io/v1alpha2", "JobSet", 0.95),
        ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", 0.95),
        ("batch.volcano.sh/v1alpha1", "Queue", 0.0),
        ("scheduling.volcano.sh/v1beta1", "Job", 0.0),
        ("apps/v1", "Deployment", 0.0),
        ("v1", "ConfigMap", 0.0),
        ("v1", "Job", 0.0),  # a Job in the core group does not exist
        ("example.com/v1", "PyTorchJob", 0.0),
        ("ray.io/v1", "RayCluster", 0.0),
    ],
)
def test_recognised_by_api_version_and_kind(api: str, kind: str, score: float) -> None:
    text = f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: x\n"
    assert kubernetes.recognise(Input("m.yaml", text)) == score


def test_a_training_document_after_other_documents_is_recognised_and_read() -> None:
    text = (
        "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 4\n"
        "  template:\n    spec:\n      containers:\n        - name: t\n"
        "          resources: {limits: {nvidia.com/gpu: 8}}\n"
    )
    doc = read_document(Input("all.yaml", text))
    assert isinstance(doc, Document) and doc.format == "kubernetes"
    assert values(doc) == {
        "/name": "j",
        "/resources/nodes": 4,
        "/resources/gpus_per_node": 8,
        "/resources/world_size": 32,
    }


def test_non_manifests_are_not_claimed() -> None:
    assert kubernetes.recognise(Input("c.yaml", "model_name_or_path: x\nsave_steps: 10\n")) == 0
    assert kubernetes.recognise(Input("c.sh", "apiVersion=1\n")) == 0
    assert kubernetes.recognise(Input("c.yaml", "apiVersion: batch/v1\n")) == 0


def test_runtime_in_another_file_is_not_assumed() -> None:
    text = (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 3\n"
    )
    assert values(read("t.yaml", text)) == {"/name": "t", "/resources/nodes": 3}


def test_trainjob_resources_per_node_beat_the_runtime() -> None:
    text = (
        (FIXTURES / "trainjob_runtime.yaml")
        .read_text()
        .replace(
            '    args: ["--max_steps", "1000"]',
            '    args: ["--max_steps", "1000"]\n    resourcesPerNode:\n'
            "      requests: {nvidia.com/gpu: 1}\n      limits: {nvidia.com/gpu: 2}",
        )
    )
    doc = read("t.yaml", text)
    assert values(doc)["/resources/gpus_per_node"] == 2
    assert values(doc)["/resources/world_size"] == 4


def test_elastic_jobs_count_up_to_max_replicas() -> None:
    text = (
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: e}\nspec:\n"
        "  elasticPolicy: {minReplicas: 1, maxReplicas: 6}\n  pytorchReplicaSpecs:\n"
        "    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
        "            - name: pytorch\n              resources: {limits: {nvidia.com/gpu: 4}}\n"
    )
    doc = read("e.yaml", text)
    assert values(doc)["/resources/nodes"] == 6
    assert values(doc)["/resources/world_size"] == 24
    assert [f.location.line for f in doc.facts if f.pointer == "/resources/nodes"] == [5]


def test_mixed_gpu_counts_give_a_world_size_but_no_per_node_count() -> None:
    text = (
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: m}\nspec:\n"
        "  pytorchReplicaSpecs:\n"
        "    Master:\n      template: {spec: {containers: "
        "[{name: pytorch, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n"
        "    Worker:\n      replicas: 2\n      template: {spec: {containers: "
        "[{name: pytorch, resources: {limits: {nvidia.com/gpu: 4}}}]}}\n"
    )
    found = values(read("m.yaml", text))
    assert found["/resources/world_size"] == 9
    assert found["/resources/nodes"] == 3  # Master's replicas default to 1
    assert "/resources/gpus_per_node" not in found


def test_kubernetes_variable_references_are_unknown_words() -> None:
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: t\n"
        '          command: ["torchrun", "--nproc_per_node=$(GPUS)", "train.py", '
        '"--save_steps=$(STEPS)", "--logging_steps=10"]\n'
    )
    found = values(read("v.yaml", text))
    assert found["/launcher/kind"] == "torchrun"
    assert found["/logging/every_steps"] == 10.0
    assert "/resources/gpus_per_node" not in found and "/checkpoint/every_steps" not in found


def test_gke_accelerator_selector_and_ambiguous_affinity() -> None:
    base = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: g}\nspec:\n  template:\n    spec:\n"
    gke = base + "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
    assert values(read("g.yaml", gke))["/resources/gpu/model"] == "L4"
    either = base + (
        "      affinity:\n        nodeAffinity:\n"
        "          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n              - matchExpressions:\n"
        "                  - {key: nvidia.com/gpu.product, operator: In,"
        " values: [NVIDIA-A100-SXM4-80GB, NVIDIA-H100-80GB-HBM3]}\n"
    )
    assert "/resources/gpu/model" not in values(read("g.yaml", either))


def test_job_without_gpus_counts_pods_but_states_no_gpus() -> None:
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: c}\nspec:\n  template:\n    spec:\n"
        "      containers: [{name: t, command: [python, train.py], args: [--seed, '7']}]\n"
    )
    assert values(read("c.yaml", text)) == {
        "/name": "c",
        "/launcher/kind": "python",
        "/launcher/entrypoint": "train.py",
        "/launcher/command": "python train.py --seed 7",
        "/training/seed": 7,
    }  # no parallelism written: the one pod is the default, not a stated node count


def test_secrets_never_reach_references_or_commands() -> None:
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: t\n"
        "          command: [python, train.py, --hub_token, hf_abcdefghijklmnopqrstuvwxyz1234]\n"
    )
    assert "hf_abcdefghijklmnopqrstuvwxyz1234" not in repr(read("s.yaml", text))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
@pytest.mark.parametrize("source", ["kubeflow-trainer", "kubeflow-training-operator"])
def test_corpus_manifests_have_no_near_misses(source: str) -> None:
    for path in sorted((CORPUS / source).iterdir()):
        doc = read(path.name, path.read_text())
        assert doc.unknown_keys == [], path.name


_KEYS = st.sampled_from([
    "apiVersion", "kind", "metadata", "spec", "labels", "annotations", "name", "replicas",
    "template", "containers", "command", "args", "env", "value", "valueFrom", "resources",
    "limits", "requests", "nvidia.com/gpu", "nodeSelector", "affinity", "nodeAffinity",
    "pytorchReplicaSpecs", "Master", "Worker", "trainer", "numNodes", "resourcesPerNode",
    "runtimeRef", "mlPolicy", "replicatedJobs", "rayClusterSpec", "workerGroupSpecs",
    "headGroupSpec", "entrypoint", "parallelism", "activeDeadlineSeconds", "runPolicy",
    "elasticPolicy", "maxReplicas", "matchExpressions", "operator", "values",
])  # fmt: skip
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True),
    st.text(max_size=20), st.sampled_from([
        "kubeflow.org/v1", "trainer.kubeflow.org/v1alpha1", "batch/v1", "ray.io/v1", "PyTorchJob",
        "TrainJob", "Job", "RayJob", "ClusterTrainingRuntime", "torchrun train.py", "In", "8",
        "$(X)", "NVIDIA-H100-80GB-HBM3", "bash -c 'torchrun x.py'",
    ]),
)  # fmt: skip
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.dictionaries(_KEYS, _VALUES, max_size=6), min_size=1, max_size=3),
    st.sampled_from(
        ["PyTorchJob", "TrainJob", "ClusterTrainingRuntime", "Job", "RayJob", "MPIJob"]
    ),
)
def test_random_manifests_never_raise(documents: list[dict[str, Any]], kind: str) -> None:
    api = {"TrainJob": "trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime":
           "trainer.kubeflow.org/v1alpha1", "Job": "batch/v1", "RayJob": "ray.io/v1"}  # fmt: skip
    documents[0] |= {"apiVersion": api.get(kind, "kubeflow.org/v1"), "kind": kind}
    text = yaml.safe_dump_all(documents)
    file = Input("random.yaml", text)
    try:
        assert kubernetes.recognise(file) > 0
        finish(kubernetes.parse(file), file)
    except SourceError:
        pass


def test_a_file_with_several_workloads_reads_the_first_only() -> None:
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: first}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: c\n          image: x\n"
        "          resources: {limits: {nvidia.com/gpu: 2}}\n"
        "---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: second}\nspec:\n"
        "  activeDeadlineSeconds: 60\n  template:\n    spec:\n      containers:\n"
        "        - name: c\n          image: x\n"
        "          resources: {limits: {nvidia.com/gpu: 8}}\n"
    )
    doc = read_document(Input("jobs.yaml", text))
    assert isinstance(doc, Document)
    facts = {f.pointer: f.value for f in doc.facts}
    assert facts["/name"] == "first" and facts["/resources/gpus_per_node"] == 2
    assert "/resources/time_limit_s" not in facts


def test_container_overrides_reach_the_config_they_name(tmp_path: Path) -> None:
    from trainlint.assemble import assemble
    from trainlint.discover import discover
    from trainlint.read import Workspace

    (tmp_path / "fit.yaml").write_text("seed_everything: 1\ntrainer:\n  devices: 4\n")
    (tmp_path / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: fit}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: trainer\n          image: x\n"
        "          command: [python, main.py, fit, --config, fit.yaml]\n"
        "          args: [--trainer.max_steps, '77']\n"
    )
    job = next(j for j in assemble(discover([tmp_path]), Workspace(root=tmp_path))
               if j.id.endswith("job.yaml"))  # fmt: skip
    assert job.training.max_steps == 77
    assert job.provenance["/training/max_steps"].file.endswith("job.yaml")
