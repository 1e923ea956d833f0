"""Kubernetes training manifests: Kubeflow PyTorchJob/TFJob/MPIJob, TrainJob and its
training runtimes, batch/v1 Job, RayJob, Volcano Job, JobSet and LeaderWorkerSet, in one- or
multi-document YAML.

Recognised by ``apiVersion`` + ``kind`` in any document of the file. Facts come from the
training-job documents: replicas times ``nvidia.com/gpu`` (or ``google.com/tpu``) limits (GPUs,
nodes, world size; a group of pods without them beside groups with them, such as a Volcano MPI
master, is the launcher and counts for neither), GPU or TPU product and spot node selectors,
``activeDeadlineSeconds``, labels and annotations (cost tags), the training container's
environment, and its ``command``/``args`` read as a launch line. A
TrainJob's ``runtimeRef`` names a (Cluster)TrainingRuntime: when that runtime is a document of
the same file, it fills what the TrainJob leaves out. A runtime in another file is only named,
not located (a reference by name, not by path), so nothing is assumed from it.

A LeaderWorkerSet (a replicated, long-running group of pods, made for inference) is a job only
when its command is a training launch. A job whose pods all state their resources and none
requests a GPU or TPU is a CPU job
(``/resources/accelerator`` "none"): no GPU rule applies to it. A Volcano ``queue`` and Kueue's
``kueue.x-k8s.io/queue-name`` label name the queue the job is charged to: ``/tags/queue``, a
cost tag an org can require (missing_cost_tags ``required_tags``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from trainlint.sources import launch_script
from trainlint.sources.base import Document, Fact, Input, Override, Reference, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe, facts_from_table
from trainlint.sources.k8s import kinds, meta, pods
from trainlint.sources.k8s.keys import near_misses
from trainlint.sources.k8s.meta import At
from trainlint.sources.shell import Assignment, Word, embedded
from trainlint.sources.structured import KeyPath, Tree

name = "kubernetes"
role: Role = "entrypoint"

JOB_KINDS: dict[str, frozenset[str]] = {
    "kubeflow.org": frozenset(
        {"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"}
    ),
    "trainer.kubeflow.org": frozenset({"TrainJob"}),
    "batch": frozenset({"Job"}),
    "ray.io": frozenset({"RayJob"}),
    "batch.volcano.sh": frozenset({"Job"}),
    "jobset.x-k8s.io": frozenset({"JobSet"}),
    "leaderworkerset.x-k8s.io": frozenset({"LeaderWorkerSet"}),
}
VOLCANO_JOB = "VolcanoJob"  # a Volcano Job, told apart from batch/v1's Job
RUNTIME_KINDS = frozenset({"ClusterTrainingRuntime", "TrainingRuntime"})

TABLE: dict[KeyPath, list[JobField]] = {
    ("kind",): [JobField("/resources/scheduler", lambda kind: "kubernetes" if kind else None)],
    ("metadata", "name"): [JobField("/name", n.to_str)],
    ("spec", "activeDeadlineSeconds"): [JobField("/resources/time_limit_s", n.positive_float)],
    ("spec", "runPolicy", "activeDeadlineSeconds"): [
        JobField("/resources/time_limit_s", n.positive_float)
    ],
}

Found = tuple[list[Fact], list[Reference]]


def kind_of(data: Any) -> str | None:
    """The training kind of a document (``PyTorchJob``, ``TrainJob``, a runtime, ...)."""
    if not isinstance(data, dict):
        return None
    api, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str):
        return None
    group = api.rpartition("/")[0] if "/" in api else ""
    if kind in JOB_KINDS.get(group, ()):
        return VOLCANO_JOB if group == "batch.volcano.sh" else kind
    return kind if group == "trainer.kubeflow.org" and kind in RUNTIME_KINDS else None


def recognise(file: Input) -> float:
    """0.95 when a document is a training job or runtime by apiVersion and kind; a plain
    batch Job is any workload, so a little less."""
    if not file.is_structured or "apiVersion" not in file.text:
        return 0.0
    kinds = {kind_of(tree.data) for tree in file.trees} - {None}
    if not kinds:
        return 0.0
    return 0.9 if kinds == {"Job"} else 0.95


def parse(file: Input) -> Document:
    doc = Document(file.path, name, recognise(file), role)
    typed = [(kind_of(tree.data), tree) for tree in file.trees]
    runtimes = {_name(tree): tree for kind, tree in typed if kind in RUNTIME_KINDS}
    jobs = [(kind, tree) for kind, tree in typed if kind is not None and kind not in RUNTIME_KINDS]
    # One file is one job here: with several workloads, the first one (mixing their GPUs and
    # limits would describe no real run); a runtime alone when the file holds only runtimes.
    chosen = jobs[:1] or [(kind, tree) for kind, tree in typed if kind in RUNTIME_KINDS][:1]
    for job_kind, tree in chosen:
        read = _document(str(job_kind), tree, runtimes, file)
        doc.facts += read.facts
        doc.references += read.references
        doc.overrides += read.overrides
        doc.program = read.program
        if job_kind == "LeaderWorkerSet" and not any(f.pointer == _KIND for f in read.facts):
            doc.purpose = _LWS_SERVICE
    for kind, tree in typed:
        if kind is not None:
            doc.unknown_keys += near_misses(kind, tree, name, file.path)
    return doc


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    gpus = [
        "/resources/nodes",
        "/resources/gpus_per_node",
        "/resources/world_size",
        "/resources/accelerator",
    ]
    return describe(TABLE) | {
        "spec.<kind>ReplicaSpecs.<role>.replicas, containers[].resources.limits[nvidia.com/gpu]":
            gpus,
        "spec.elasticPolicy.maxReplicas": ["/resources/nodes", "/resources/world_size"],
        "spec.parallelism (batch/v1 Job)": gpus,
        "spec.rayClusterSpec.workerGroupSpecs[].replicas (RayJob)": gpus,
        "spec.trainer.numNodes / resourcesPerNode (TrainJob; runtime mlPolicy.numNodes)":
            gpus,
        "spec.tasks[].replicas x template (Volcano Job)": gpus,
        "spec.replicatedJobs[].replicas x template.spec.parallelism (JobSet)": gpus,
        "spec.replicatedJobs[].template.spec.activeDeadlineSeconds (JobSet), "
        "spec.tasks[].template.spec.activeDeadlineSeconds (Volcano Job)": [
            "/resources/time_limit_s"],
        "spec.replicas x leaderWorkerTemplate.size (LeaderWorkerSet)": gpus,
        "spec.replicas, spec.template (MPIJob v1alpha1)": gpus,
        "containers[].resources.limits[google.com/tpu]": gpus,
        "nodeSelector: cloud.google.com/gke-tpu-accelerator": ["/resources/gpu/model"],
        "spec.queue (Volcano Job), metadata.labels[kueue.x-k8s.io/queue-name]": ["/tags/queue"],
        "nodeSelector / required nodeAffinity: nvidia.com/gpu.product, "
        "cloud.google.com/gke-accelerator, ...": ["/resources/gpu/model"],
        "nodeSelector: cloud.google.com/gke-spot, karpenter.sh/capacity-type, ...": [
            "/resources/spot"],
        "nodeSelector / required nodeAffinity (one value): every label": [
            "/resources/placement/node_labels/<key>"],
        "metadata.labels / metadata.annotations (job and pod templates)": ["/tags/<key>"],
        "containers[].env[] (name/value)": ["/env/NAME"],
        "containers[].command + args, RayJob spec.entrypoint": [
            "/launcher/kind", "/launcher/entrypoint", "/launcher/command", "(reference)"],
    }  # fmt: skip


def _name(tree: Tree) -> str | None:
    metadata = tree.data.get("metadata") if isinstance(tree.data, dict) else None
    value = metadata.get("name") if isinstance(metadata, dict) else None
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class _Read:
    """What one training document states: facts, the files it names, the overrides its
    command passes, and the Python script it runs (read when it is in the repository)."""

    facts: list[Fact]
    references: list[Reference]
    overrides: list[Override]
    program: Reference | None


def _document(kind: str, tree: Tree, runtimes: dict[str | None, Tree], file: Input) -> _Read:
    """Facts of one training document; a TrainJob's runtime (same file) fills the gaps."""
    root = At(tree, ())
    spec = root.child("spec")
    runtime: Tree | None = None
    if kind == "TrainJob":
        runtime = runtimes.get(spec.child("runtimeRef", "name").text)
        groups, container = _trainjob(spec, runtime)
    elif kind in RUNTIME_KINDS:
        groups, container = _trainjob(None, tree)
    else:
        groups, container = _groups(kind, spec), None
    max_nodes = spec.child("elasticPolicy", "maxReplicas")
    facts = _own(tree, file.path) + _scheduling(kind, spec, file.path)
    facts += pods.resource_facts(groups, file.path, max_nodes if max_nodes.value else None)
    every_pod_stated = kind != "TrainJob" and kind not in RUNTIME_KINDS
    facts += pods.accelerator_facts(groups, spec, file.path, every_pod_stated)
    container = container or _command_container(groups)
    overrides: list[Override] = []
    program: Reference | None = None
    if kind == "RayJob" and isinstance(spec.child("entrypoint").value, str):
        launch, references = _entrypoint(spec, file)
        overrides = _entrypoint_overrides(spec, file)
        entry = spec.child("entrypoint")
        program = embedded.script_program(str(entry.value), file.path, _origin(entry, file))
    else:
        launch, references = _launch(container, file.path) if container else ([], [])
        overrides = _overrides(container, file.path) if container else []
        program = _program(container, file.path) if container else None
    declared = {fact.pointer for fact in facts}  # the allocation beats a process count
    if kind != "TrainJob" and kind not in RUNTIME_KINDS and not any(g.gpus for g in groups):
        declared |= _COUNTS  # pods that request no GPU get none: a process count is CPUs
    launch = [fact for fact in launch if fact.pointer not in declared]
    facts += (meta.env_facts(container.env, file.path) if container else []) + launch
    if runtime is not None and runtime is not tree:
        declared = {fact.pointer for fact in facts}
        facts = [f for f in _own(runtime, file.path) if f.pointer not in declared] + facts
    references = [r for r in references if not r.path.startswith("/")]
    program = program if program is not None and not program.path.startswith("/") else None
    return _Read(facts, references, overrides, program)


def _program(container: pods.Container, file: str) -> Reference | None:
    """The script ``command`` + ``args`` run (``args`` alone: the image's entrypoint, unknown)."""
    if container.command is None:
        return None
    return embedded.command_program(_words(container.command) + _words(container.args), file)


_KIND = "/launcher/kind"
# LeaderWorkerSet replicates pod groups as a long-running service (its rollout strategy, its
# restarts): made for multi-host inference. Only a training launch makes one a training run.
_LWS_SERVICE = "a LeaderWorkerSet with no training launch: a replicated service, not a run"
_COUNTS = frozenset({"/resources/world_size", "/resources/gpus_per_node", "/resources/nodes"})
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def _scheduling(kind: str, spec: At, file: str) -> list[Fact]:
    """The queue the job is charged to (Volcano ``spec.queue``, Kueue's queue-name label) as
    ``/tags/queue``; a JobSet's child-Job deadline, or the pods' deadline of a Volcano Job
    (which has none of its own), as its time limit."""
    facts = []
    queue = spec.child("queue") if kind == VOLCANO_JOB else None
    for where in ("labels", "annotations"):  # Kueue's label; its annotation before v0.6
        if queue is None or queue.text is None:
            queue = At(spec.tree, ("metadata", where, QUEUE_LABEL))
    if queue is not None and queue.text is not None:
        facts.append(Fact("/tags/queue", queue.text, queue.location(file)))
    deadline = kinds.jobset_deadline(spec) if kind == "JobSet" else None
    deadline = kinds.volcano_deadline(spec) if kind == VOLCANO_JOB else deadline
    seconds = n.positive_float(deadline.value) if deadline is not None else None
    if deadline is not None and seconds is not None:
        facts.append(Fact("/resources/time_limit_s", seconds, deadline.location(file)))
    return facts


def _own(tree: Tree, file: str) -> list[Fact]:
    places = list(meta.training_places(tree))
    return (
        facts_from_table(tree, TABLE, file)
        + meta.tag_facts(places, file)
        + (meta.selector_facts(places, file))
    )


def _groups(kind: str, spec: At) -> list[pods.Group]:
    if kind == "Job":
        return [pods.pod_group(spec, spec.child("parallelism"))]
    if kind == "RayJob":
        return pods.ray_groups(spec)
    if kind == VOLCANO_JOB:
        return kinds.volcano_groups(spec)
    if kind == "JobSet":
        return kinds.jobset_groups(spec)
    if kind == "LeaderWorkerSet":
        return kinds.lws_groups(spec)
    if kind == "MPIJob" and "template" in (spec.value if isinstance(spec.value, dict) else {}):
        return kinds.legacy_mpi_group(spec)
    return pods.replica_groups(spec)


def _command_container(groups: list[pods.Group]) -> pods.Container | None:
    """The container that launches: an MPI launcher's first, then the first that has one."""
    ordered = [g for g in groups if g.launcher] + [g for g in groups if not g.launcher]
    for group in ordered:
        if group.container and (group.container.command or group.container.args):
            return group.container
    return next((g.container for g in ordered if g.container is not None), None)


def _trainjob(spec: At | None, runtime: Tree | None) -> tuple[list[pods.Group], pods.Container]:
    """A TrainJob's trainer over its runtime's node template, field by field."""
    node_job, launcher_job = _replicated(runtime, "node"), _replicated(runtime, "launcher")
    trainer = spec.child("trainer") if spec is not None else None
    count_at = trainer.child("numNodes") if trainer is not None else None
    if (count_at is None or count_at.value is None) and runtime is not None:
        count_at = At(runtime, ("spec", "mlPolicy", "numNodes"))
    gpus = pods.resource_gpus(trainer.child("resourcesPerNode")) if trainer else None
    if gpus is None and node_job is not None:
        gpus = pods.pod_gpus(node_job)
    replicas = n.to_int(count_at.value) if count_at is not None and count_at.value else 1
    written = count_at if count_at is not None and count_at.value is not None else None
    base = _runtime_container(launcher_job, node_job)
    own = pods.from_container(trainer) if trainer is not None else pods.Container()
    container = pods.Container(own.command or base.command, own.args or base.args,
                               [*base.env, *own.env])  # fmt: skip
    return [pods.Group(replicas, written, gpus, container)], container


def _replicated(runtime: Tree | None, job_name: str) -> At | None:
    """The pod spec of a runtime's replicated job (``node``, ``launcher``)."""
    if runtime is None:
        return None
    jobs = At(runtime, ("spec", "template", "spec", "replicatedJobs"))
    items = jobs.value if isinstance(jobs.value, list) else []
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get("name") == job_name:
            return jobs.child(index, "template", "spec", "template", "spec")
    return None


def _runtime_container(launcher: At | None, node: At | None) -> pods.Container:
    for pod_spec in (launcher, node):
        found = pods.container(pod_spec) if pod_spec is not None else None
        if found is not None and (found.command or found.args):
            return found
    found = pods.container(node) if node is not None else None
    return found or pods.Container()


# ``$(VAR_NAME)``: Kubernetes' own expansion of a container variable in command and args. A
# shell's command substitution (``$(head -n1 hosts)``) is no variable name: the shell runs it.
_K8S_VARIABLE = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)")


def _words(place: At | None) -> list[Word]:
    """A ``command``/``args`` list as shell words at their YAML positions; ``$(VAR)``, which
    Kubernetes expands from the container environment, is an unknown word."""
    if place is None:
        return []
    items = place.value if isinstance(place.value, list) else [place.value]
    words = []
    for index, item in enumerate(items):
        raw = n.to_str(item)
        if raw is None:
            continue
        line, column = place.tree.span((*place.path, index) if isinstance(place.value, list)
                                       else place.path)  # fmt: skip
        words.append(Word(None if _K8S_VARIABLE.search(raw) else raw, raw, line, column))
    return words


def _launch(container: pods.Container, file: str) -> Found:
    """``command`` + ``args`` as a launch; ``args`` alone go to the image's entrypoint, so
    they are only the training script's flags."""
    args = _words(container.args)
    if container.command is None:
        return launch_script.program_facts(args, file)
    env = [_assignment(entry) for entry in container.env]
    words = _words(container.command) + args
    return embedded.command_facts(words, [a for a in env if a is not None], file)


def _overrides(container: pods.Container, file: str) -> list[Override]:
    """``--trainer.devices 2`` or ``batch_size=8`` in the container's arguments."""
    args = _words(container.args)
    if container.command is None:
        return launch_script.program_overrides(args, file)
    return embedded.command_overrides(_words(container.command) + args, file)


def _assignment(entry: At) -> Assignment | None:
    item = entry.value
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    value = n.to_str(item.get("value")) if "valueFrom" not in item else None
    line, column = entry.tree.span(entry.path)
    return Assignment(item["name"], value, line, column, exported=True, conditional=False)


def _entrypoint(spec: At, file: Input) -> Found:
    """A RayJob's ``entrypoint`` is a shell command line run on the head node."""
    entry = spec.child("entrypoint")
    if not isinstance(entry.value, str):
        return [], []
    return embedded.script_facts(entry.value, file.path, _origin(entry, file))


def _entrypoint_overrides(spec: At, file: Input) -> list[Override]:
    """The entrypoint's ``key=value`` overrides (``python -m verl.trainer.main_ppo
    trainer.nnodes=2``), for the config it names to read: they beat that config."""
    entry = spec.child("entrypoint")
    if not isinstance(entry.value, str):
        return []
    return embedded.script_overrides(entry.value, file.path, _origin(entry, file))


def _origin(entry: At, file: Input) -> tuple[int, int]:
    line, column = entry.tree.span(entry.path)
    return embedded.value_origin(file.text, line, column) or (line, column)


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("pytorchjob.yaml", "trainjob.yaml", "job.yaml", "rayjob.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
