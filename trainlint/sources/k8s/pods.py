"""Kubernetes training jobs as groups of identical pods: replicas, GPUs per pod, the training
container's command, args and environment.

Every kind reduces to the same shape: Kubeflow replica specs (``Master``/``Worker``/``Launcher``),
a batch Job's ``parallelism``, a RayJob's head and worker groups, a TrainJob's ``numNodes`` with
the runtime's node template. Total GPUs = the sum over groups of replicas times the GPUs of one
pod (its containers' ``nvidia.com/gpu`` limits, or requests where no limit is written).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainlint.sources.base import Fact
from trainlint.sources.base import normalize as n
from trainlint.sources.k8s.meta import At

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu")
TPU_RESOURCE = "google.com/tpu"  # GKE: TPU chips of the node, counted as its accelerators
# The container an operator runs the training in, by its conventional name.
TRAINING_CONTAINERS = ("pytorch", "tensorflow", "node", "trainer", "mpi", "xgboost", "paddle",
                       "jax", "ray-worker", "ray-head")  # fmt: skip


@dataclass
class Container:
    """The training container's fields, each where it is written (a TrainJob mixes its own
    ``trainer`` fields with the runtime's container, field by field)."""

    command: At | None = None
    args: At | None = None
    env: list[At] = field(default_factory=list)


@dataclass
class Group:
    """Pods of one role: how many, where that is said, GPUs of one pod, the container."""

    replicas: int | None
    replicas_at: At | None
    gpus: tuple[int, At] | None
    container: Container | None
    launcher: bool = False  # an MPI launcher or a Ray head: not a training node


def pod_gpus(pod_spec: At) -> tuple[int, At] | None:
    """GPUs of one pod: its containers' GPU limits (or requests), located at the first."""
    total, first = 0, None
    containers = pod_spec.child("containers")
    for index, _ in enumerate(_list(containers.value)):
        found = resource_gpus(containers.child(index, "resources"))
        if found is not None:
            total += found[0]
            first = first or found[1]
    return (total, first) if first is not None and total > 0 else None


def resource_gpus(resources: At) -> tuple[int, At] | None:
    """``limits``/``requests`` → (GPU count, where); limits win, as Kubernetes requires them."""
    for kind in ("limits", "requests"):
        for name in GPU_RESOURCES:
            place = resources.child(kind, name)
            count = n.to_int(place.value)
            if count is not None and count > 0:
                return count, place
    return None


def container(pod_spec: At) -> Container | None:
    """The training container of a pod: a conventional name, else the first."""
    containers = pod_spec.child("containers")
    items = _list(containers.value)
    if not items:
        return None
    names = [item.get("name") if isinstance(item, dict) else None for item in items]
    index = next((names.index(c) for c in TRAINING_CONTAINERS if c in names), 0)
    return from_container(containers.child(index))


def from_container(place: At) -> Container:
    item = place.value if isinstance(place.value, dict) else {}
    env = place.child("env")
    return Container(
        command=place.child("command") if "command" in item else None,
        args=place.child("args") if "args" in item else None,
        env=[env.child(i) for i, _ in enumerate(_list(env.value))],
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def replica_groups(spec: At) -> list[Group]:
    """Kubeflow v1 ``<kind>ReplicaSpecs`` (PyTorchJob, TFJob, MPIJob, XGBoost, Paddle, JAX)."""
    groups = []
    data = spec.value if isinstance(spec.value, dict) else {}
    for key, replicas in data.items():
        if not key.endswith("ReplicaSpecs") or not isinstance(replicas, dict):
            continue
        for role_name in replicas:
            place = spec.child(key, role_name)
            groups.append(pod_group(place, place.child("replicas"), role_name == "Launcher"))
    return groups


def pod_group(place: At, count_at: At, launcher: bool = False, default: int = 1) -> Group:
    """A group whose pod template is ``place.template`` and whose size is at ``count_at``."""
    return spec_group(place.child("template", "spec"), count_at, launcher, default)


def spec_group(pod_spec: At, count_at: At, launcher: bool = False, default: int = 1) -> Group:
    """A group of ``pod_spec`` pods whose size is at ``count_at`` (``default`` when unset)."""
    written = count_at.value is not None
    replicas = n.to_int(count_at.value) if written else default
    return Group(replicas, count_at if written else None, pod_gpus(pod_spec),
                 container(pod_spec), launcher)  # fmt: skip


def ray_groups(spec: At) -> list[Group]:
    """RayJob: the head pod plus each worker group's replicas, each replica ``numOfHosts`` pods
    (a multi-host TPU slice; 1 when unset). The head is one pod by definition (it has no
    ``replicas``): its count is stated by ``headGroupSpec`` itself."""
    cluster = spec.child("rayClusterSpec")
    head = cluster.child("headGroupSpec")
    groups = [_one_pod(head)] if head.value else []
    workers = cluster.child("workerGroupSpecs")
    for index, _ in enumerate(_list(workers.value)):
        place = workers.child(index)
        group = pod_group(place, place.child("replicas"))
        hosts = place.child("numOfHosts")  # a multi-host TPU slice: pods per replica
        per_replica = n.positive_int(hosts.value) if hosts.value is not None else 1
        if group.replicas is not None:
            group.replicas = group.replicas * per_replica if per_replica else None
        groups.append(group)
    return groups


def _one_pod(place: At) -> Group:
    pod_spec = place.child("template", "spec")
    return Group(1, place, pod_gpus(pod_spec), container(pod_spec), launcher=True)


def resource_facts(groups: list[Group], file: str, max_nodes: At | None = None) -> list[Fact]:
    """Nodes, GPUs per node and world size of the pod groups (elastic: up to maxReplicas)."""
    gpu_groups = [g for g in groups if g.gpus is not None]
    counted = gpu_groups or [g for g in groups if not g.launcher]
    if not counted:
        return []
    facts: list[Fact] = []
    nodes = _sum([g.replicas for g in counted])
    nodes_at = next((g.replicas_at for g in counted if g.replicas_at is not None), None)
    elastic = n.positive_int(max_nodes.value) if max_nodes is not None else None
    if elastic is not None and max_nodes is not None:
        nodes, nodes_at = elastic, max_nodes
    if nodes is not None and nodes_at is not None:
        facts.append(Fact("/resources/nodes", nodes, nodes_at.location(file)))
    if not gpu_groups:
        return facts
    per_pod = {g.gpus[0] for g in gpu_groups if g.gpus is not None}
    first = gpu_groups[0].gpus
    if first is None:
        return facts
    where = first[1].location(file)
    if len(per_pod) == 1:
        facts.append(Fact("/resources/gpus_per_node", first[0], where))
    world = _sum([g.replicas * g.gpus[0] if g.replicas is not None and g.gpus else None
                  for g in gpu_groups])  # fmt: skip
    if elastic is not None:
        world = elastic * first[0] if len(per_pod) == 1 else None
    if world is not None:
        facts.append(Fact("/resources/world_size", world, where))
    return facts


def accelerator_facts(groups: list[Group], spec: At, file: str, complete: bool) -> list[Fact]:
    """``/resources/accelerator``: "tpu" or "gpu" at the first accelerator request; "none" at
    ``spec`` when every pod's template is in the file (``complete``) and none requests one."""
    requests = [g.gpus[1] for g in groups if g.gpus is not None]
    if requests:
        kind = "tpu" if any(place.path[-1] == TPU_RESOURCE for place in requests) else "gpu"
        return [Fact("/resources/accelerator", kind, requests[0].location(file))]
    if complete and groups and all(g.replicas_at is not None or g.container for g in groups):
        return [Fact("/resources/accelerator", "none", spec.location(file))]
    return []


def _sum(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)
