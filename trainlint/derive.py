"""Facts a job implies but no file states (DESIGN §1.3): world size, global batch, accumulation,
total steps, GPU memory.

Derived once, here, when the job is assembled, and never from a guess: each derived pointer is
listed in ``job.derived`` and located where its inputs were. The estimator reads the derived job;
where it has to guess what derivation refuses (one node when the node count is stated unknown),
it uses the formulas below, so the relation between the numbers is written once.
"""

from __future__ import annotations

from pathlib import Path

from trainlint.job import Job, Location


def derive(job: Job) -> None:
    """Fill fields implied by other stated facts (world size, global batch, accumulation,
    total steps, GPU memory), never from a guess: each derived pointer is listed in
    ``job.derived`` and located where its inputs were."""
    _derive_gpus(job)
    _derive_batch(job)
    train = job.training
    if train.total_steps is None and train.max_steps:
        train.total_steps = train.max_steps
        _copy(job.provenance, "/training/max_steps", "/training/total_steps")
    if job.name is None:
        job.name = Path(job.id).stem
    _gpu_memory(job)


def world_size(gpus_per_node: int, nodes: int | None) -> int:
    """GPUs per node x nodes; one node when no node count is known."""
    return gpus_per_node * (nodes or 1)


def model_parallel(job: Job) -> int:
    """GPUs one model replica spans: tensor x pipeline x context parallel sizes."""
    par = job.training.parallelism
    return (par.tensor or 1) * (par.pipeline or 1) * (par.context or 1)


def global_batch(micro: int, accum: int | None, replicas: int) -> int:
    """Sequences per optimizer step: micro x accumulation (1 when unstated) x replicas."""
    return micro * (accum or 1) * replicas


def micro_batch(glob: int, accum: int | None, replicas: int) -> int | None:
    """The micro-batch ``global_batch`` solves for, when the split is even. Derivation leaves
    an unstated micro-batch unknown (accumulation may be unstated too); the estimator takes
    this, marked estimated."""
    split = (accum or 1) * replicas
    return glob // split if glob % split == 0 else None


def _derive_gpus(job: Job) -> None:
    """World size from GPUs per node x nodes (one node when no file names a node count; a
    count stated as unknown, ``--nnodes $NNODES``, leaves it unknown), and GPUs per node back
    from world size / nodes when the split is even."""
    res, prov = job.resources, job.provenance
    nodes_unknown = res.nodes is None and "/resources/nodes" in prov
    if res.gpus_per_node is not None and res.world_size is None and not nodes_unknown:
        res.world_size = world_size(res.gpus_per_node, res.nodes)
        _derived(job, "/resources/gpus_per_node", "/resources/world_size")
    even = bool(res.world_size and res.nodes and res.world_size % res.nodes == 0)
    if res.world_size and res.nodes and res.gpus_per_node is None and even:
        res.gpus_per_node = res.world_size // res.nodes
        _derived(job, "/resources/world_size", "/resources/gpus_per_node")


def _derive_batch(job: Job) -> None:
    """global = micro x accumulation x data-parallel replicas (world / model parallel), read
    in whichever direction the job leaves open (DeepSpeed states global, Megatron derives
    accumulation). The world size comes from the batch only with accumulation stated, and
    nothing is derived from a layout that cannot run (TL108 says so)."""
    res, train = job.resources, job.training
    spans = model_parallel(job)
    if res.world_size is not None and res.world_size % spans != 0:
        return
    micro, accum, glob = train.micro_batch_size, train.grad_accum_steps, train.global_batch_size
    if res.world_size is None and glob and micro and accum and glob % (micro * accum) == 0:
        res.world_size = glob // (micro * accum) * spans
        _derived(job, "/training/global_batch_size", "/resources/world_size")
    replicas = res.world_size // spans if res.world_size else None
    if glob is None and micro and replicas:
        train.global_batch_size = global_batch(micro, accum, replicas)
        _derived(job, "/training/micro_batch_size", "/training/global_batch_size")
    if accum is None and glob and micro and replicas and glob % (micro * replicas) == 0:
        train.grad_accum_steps = glob // (micro * replicas)  # Megatron/NeMo derive it
        _derived(job, "/training/global_batch_size", "/training/grad_accum_steps")


def _derived(job: Job, source: str, target: str) -> None:
    job.derived.append(target)
    _copy(job.provenance, source, target)


def _gpu_memory(job: Job) -> None:
    from trainlint.catalog import resolve_gpu

    gpu = job.resources.gpu
    spec = resolve_gpu(gpu.model) if gpu.model else None
    if spec is not None:
        gpu.model, gpu.memory_bytes = spec.name, spec.memory_bytes
        gpu.source = gpu.source or "declared"
        _copy(job.provenance, "/resources/gpu/model", "/resources/gpu/memory_bytes")


def _copy(provenance: dict[str, Location], source: str, target: str) -> None:
    if source in provenance and target not in provenance:
        provenance[target] = provenance[source]
