"""Pod groups of the batch schedulers' and launchers' kinds: Volcano Job, JobSet,
LeaderWorkerSet and the legacy single-template MPIJob.

Each reduces to ``pods.Group``s (replicas x one pod template) so that GPUs, nodes and world size
are summed the one way ``pods.resource_facts`` sums them: over the groups whose pods request an
accelerator, the others (a Volcano MPI master, a JobSet driver) hold none and run the launch.
"""

from __future__ import annotations

from trainlint.sources.base import normalize as n
from trainlint.sources.k8s import pods
from trainlint.sources.k8s.meta import At


def volcano_groups(spec: At) -> list[pods.Group]:
    """``spec.tasks[]``: each task's ``replicas`` pods of its ``template`` (Volcano's default
    replicas is 0, but a task written without it is a mistake the webhook rejects: one pod).
    A task without accelerators beside tasks with them is the launcher (an MPI master)."""
    tasks = spec.child("tasks")
    groups = [
        pods.pod_group(tasks.child(index), tasks.child(index, "replicas"))
        for index, _ in enumerate(_items(tasks))
    ]
    return _mark_launchers(groups)


def jobset_groups(spec: At) -> list[pods.Group]:
    """``replicatedJobs[]``: ``replicas`` (default 1) child Jobs, each ``parallelism``
    (default 1) pods of ``template.spec.template``."""
    jobs = spec.child("replicatedJobs")
    groups = []
    for index, _ in enumerate(_items(jobs)):
        place = jobs.child(index)
        job_spec = place.child("template", "spec")
        copies, per_job = place.child("replicas"), job_spec.child("parallelism")
        group = pods.pod_group(job_spec, per_job)
        count = _product(copies.value, per_job.value)
        written = per_job if per_job.value is not None else copies
        group.replicas = count
        group.replicas_at = written if written.value is not None else None
        groups.append(group)
    return _mark_launchers(groups)


def jobset_deadline(spec: At) -> At | None:
    """The child Jobs' ``activeDeadlineSeconds`` when every replicated job that states one
    states the same (each child Job's attempt is bounded by it)."""
    jobs = spec.child("replicatedJobs")
    places = [jobs.child(i, "template", "spec", "activeDeadlineSeconds")
              for i, _ in enumerate(_items(jobs))]  # fmt: skip
    return _agreed(places)


def volcano_deadline(spec: At) -> At | None:
    """A Volcano Job has no deadline of its own: its pods' ``activeDeadlineSeconds`` bounds
    them, when every task that holds accelerators states the same one."""
    tasks = spec.child("tasks")
    held = [i for i, _ in enumerate(_items(tasks)) if _holds_accelerators(tasks.child(i))]
    places = [tasks.child(i, "template", "spec", "activeDeadlineSeconds") for i in held]
    return _agreed(places) if places and all(p.value is not None for p in places) else None


def _holds_accelerators(task: At) -> bool:
    return pods.pod_gpus(task.child("template", "spec")) is not None


def _agreed(places: list[At]) -> At | None:
    stated = [place for place in places if place.value is not None]
    return stated[0] if stated and len({str(p.value) for p in stated}) == 1 else None


def lws_groups(spec: At) -> list[pods.Group]:
    """``replicas`` (default 1) groups of ``leaderWorkerTemplate.size`` (default 1) pods: one
    leader (``leaderTemplate``, else the worker template) and size - 1 workers."""
    template = spec.child("leaderWorkerTemplate")
    groups_at, size_at = spec.child("replicas"), template.child("size")
    copies = n.to_int(groups_at.value) if groups_at.value is not None else 1
    size = n.to_int(size_at.value) if size_at.value is not None else 1
    if copies is None or size is None:
        return []
    worker = template.child("workerTemplate")
    leader = template.child("leaderTemplate") if template.child("leaderTemplate").value else worker
    leaders = pods.spec_group(leader.child("spec"), groups_at)
    leaders.replicas = copies
    workers = pods.spec_group(worker.child("spec"), size_at)
    workers.replicas = copies * (size - 1)
    return [leaders, workers] if size > 1 else [leaders]


def legacy_mpi_group(spec: At) -> list[pods.Group]:
    """MPIJob v1alpha1's single template: ``spec.replicas`` worker pods of ``spec.template``."""
    return [pods.pod_group(spec, spec.child("replicas"))]


def _mark_launchers(groups: list[pods.Group]) -> list[pods.Group]:
    if any(g.gpus for g in groups):
        for group in groups:
            group.launcher = group.gpus is None
    return groups


def _product(copies: object, per_job: object) -> int | None:
    left = n.to_int(copies) if copies is not None else 1
    right = n.to_int(per_job) if per_job is not None else 1
    return None if left is None or right is None else left * right


def _items(place: At) -> list[object]:
    return place.value if isinstance(place.value, list) else []
