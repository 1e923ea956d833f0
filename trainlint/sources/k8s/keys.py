"""Documented key sets of the Kubernetes training kinds, for the typo check (TL903).

Only mappings whose schema is small and stable are checked: a document's top level, the job
``spec`` of each kind, Kubeflow ``runPolicy``/``elasticPolicy`` and replica specs, a TrainJob's
``trainer``, and every container. (The API server rejects unknown fields only when strict field
validation is on; otherwise a misspelt ``activeDeadlineSecond`` is silently dropped.)
"""

from __future__ import annotations

from collections.abc import Iterator

from trainlint.job import UnknownKey
from trainlint.sources.base import typos
from trainlint.sources.structured import KeyPath, Tree


def _keys(text: str) -> frozenset[str]:
    return frozenset(text.split())


_RUN_POLICY = "runPolicy"
KNOWN_KEYS: dict[str, frozenset[str]] = {
    "document": _keys("apiVersion kind metadata spec status"),
    "PyTorchJob": _keys("pytorchReplicaSpecs runPolicy elasticPolicy nprocPerNode"),
    "TFJob": _keys("tfReplicaSpecs runPolicy successPolicy enableDynamicWorker"),
    "MPIJob": _keys("mpiReplicaSpecs runPolicy slotsPerWorker cleanPodPolicy mainContainer "
                    "sshAuthMountPath mpiImplementation launcherCreationPolicy "
                    "runLauncherAsWorker"),
    "XGBoostJob": _keys("xgbReplicaSpecs runPolicy"),
    "PaddleJob": _keys("paddleReplicaSpecs runPolicy elasticPolicy"),
    "JAXJob": _keys("jaxReplicaSpecs runPolicy"),
    "MXJob": _keys("mxReplicaSpecs runPolicy jobMode"),
    "TrainJob": _keys("runtimeRef initializer trainer labels annotations podTemplateOverrides "
                      "podSpecOverrides runtimePatches suspend managedBy"),
    "ClusterTrainingRuntime": _keys("mlPolicy podGroupPolicy template"),
    "TrainingRuntime": _keys("mlPolicy podGroupPolicy template"),
    "Job": _keys("parallelism completions activeDeadlineSeconds podFailurePolicy successPolicy "
                 "backoffLimit backoffLimitPerIndex maxFailedIndexes selector manualSelector "
                 "template ttlSecondsAfterFinished completionMode suspend podReplacementPolicy "
                 "managedBy"),
    "RayJob": _keys("entrypoint metadata runtimeEnvYAML jobId shutdownAfterJobFinishes "
                    "ttlSecondsAfterFinished activeDeadlineSeconds rayClusterSpec "
                    "clusterSelector submitterPodTemplate entrypointNumCpus entrypointNumGpus "
                    "entrypointResources suspend submissionMode managedBy submitterConfig "
                    "deletionPolicy deletionStrategy backoffLimit"),
    # Volcano Job (batch.volcano.sh_jobs CRD, volcano-sh/volcano ed72c7c): spec and tasks[].
    "VolcanoJob": _keys("maxRetry minAvailable minSuccess networkTopology plugins policies "
                        "priorityClassName queue runningEstimate schedulerName tasks "
                        "ttlSecondsAfterFinished volumes"),
    "volcano_task": _keys("dependsOn maxRetry minAvailable name partitionPolicy policies "
                          "replicas template topologyPolicy"),
    # JobSet (jobset.x-k8s.io_jobsets CRD, kubernetes-sigs/jobset 08dfbdf).
    "JobSet": _keys("coordinator failurePolicy managedBy network replicatedJobs startupPolicy "
                    "successPolicy suspend ttlSecondsAfterFinished volumeClaimPolicies"),
    "replicated_job": _keys("dependsOn groupName name replicas template"),
    # LeaderWorkerSet (leaderworkerset.x-k8s.io CRD, kubernetes-sigs/lws 060ab4d).
    "LeaderWorkerSet": _keys("leaderWorkerTemplate networkConfig replicas rolloutStrategy "
                             "startupPolicy"),
    "leader_worker": _keys("leaderTemplate persistentVolumeClaimRetentionPolicy restartPolicy "
                           "size subGroupPolicy volumeClaimTemplates workerTemplate"),
    _RUN_POLICY: _keys("cleanPodPolicy ttlSecondsAfterFinished activeDeadlineSeconds "
                       "backoffLimit schedulingPolicy suspend managedBy"),
    "elasticPolicy": _keys("minReplicas maxReplicas rdzvBackend rdzvPort rdzvHost rdzvId "
                           "rdzvConf standalone nProcPerNode maxRestarts metrics"),
    "replica": _keys("replicas template restartPolicy"),
    "trainer": _keys("image command args env numNodes resourcesPerNode numProcPerNode"),
    "container": _keys("name image command args workingDir ports envFrom env resources "
                       "resizePolicy restartPolicy volumeMounts volumeDevices livenessProbe "
                       "readinessProbe startupProbe lifecycle terminationMessagePath "
                       "terminationMessagePolicy imagePullPolicy securityContext stdin "
                       "stdinOnce tty"),
}  # fmt: skip


def known_keys(kind: str, tree: Tree) -> Iterator[tuple[KeyPath, frozenset[str]]]:
    """(path of a mapping, its documented keys) for every checked mapping of a document."""
    yield (), KNOWN_KEYS["document"]
    if kind in KNOWN_KEYS:
        yield ("spec",), KNOWN_KEYS[kind]
    for section in (_RUN_POLICY, "elasticPolicy"):
        yield ("spec", section), KNOWN_KEYS[section]
    if kind == "TrainJob":
        yield ("spec", "trainer"), KNOWN_KEYS["trainer"]
    if kind == "LeaderWorkerSet":
        yield ("spec", "leaderWorkerTemplate"), KNOWN_KEYS["leader_worker"]
    yield from _listed(kind, tree)
    spec = tree.data.get("spec") if isinstance(tree.data, dict) else None
    for key, roles in spec.items() if isinstance(spec, dict) else []:
        if key.endswith("ReplicaSpecs") and isinstance(roles, dict):
            for role in roles:
                yield ("spec", key, str(role)), KNOWN_KEYS["replica"]
    for path, _ in tree.items():
        if len(path) >= 2 and path[-2] in ("containers", "initContainers"):
            yield path, KNOWN_KEYS["container"]


_LISTS = {"VolcanoJob": ("tasks", "volcano_task"), "JobSet": ("replicatedJobs", "replicated_job")}


def _listed(kind: str, tree: Tree) -> Iterator[tuple[KeyPath, frozenset[str]]]:
    """Each item of a Volcano Job's ``tasks`` or a JobSet's ``replicatedJobs``."""
    if kind not in _LISTS:
        return
    field, known = _LISTS[kind]
    spec = tree.data.get("spec") if isinstance(tree.data, dict) else None
    items = spec.get(field) if isinstance(spec, dict) else None
    for index, _ in enumerate(items if isinstance(items, list) else []):
        yield ("spec", field, index), KNOWN_KEYS[known]


def near_misses(kind: str, tree: Tree, fmt: str, file: str) -> list[UnknownKey]:
    """Keys of the checked mappings one or two edits from a documented key."""
    return [
        miss
        for path, known in known_keys(kind, tree)
        for miss in typos.near_misses(tree, known, fmt, file, path)
    ]
