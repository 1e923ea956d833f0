"""The normalized job model (DESIGN §3): one training run, whatever files described it.

Units are SI (bytes, seconds, counts) and money is USD. Every field but ``id`` and ``sources``
is optional: unknown stays ``None`` so a rule that needs it stays silent instead of guessing.
``provenance`` maps a JSON pointer into this model to the file, line and column that set it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Source = Literal["declared", "catalog", "estimated", "measured", "default", "fleet"]
"""Where a value comes from; ``fleet`` is the org's fleet (``trainlint.fleet``): what the
platform team states about its GPUs, which no job file does."""


class Model(BaseModel):
    """Base for every job-model class: unknown keys are errors, so facts cannot go astray."""

    model_config = ConfigDict(extra="forbid")


class Location(Model):
    """Where a fact was set: 1-based line and column of the key or flag."""

    file: str
    line: int = Field(ge=1)
    column: int = Field(ge=1)

    def __reduce__(self) -> tuple[Any, tuple[str, int, int]]:
        """Pickled as its three values (a cached document holds ~16 per file): a third
        smaller and ~25% faster to write than pydantic's state, and rebuilt by validation."""
        return _location, (self.file, self.line, self.column)


def _location(file: str, line: int, column: int) -> Location:
    return Location.model_validate({"file": file, "line": line, "column": column})


class SourceFile(Model):
    path: str
    format: str
    role: Literal["entrypoint", "config", "deepspeed", "unknown", "member"] = "config"


class Launcher(Model):
    kind: str | None = None  # torchrun, deepspeed, accelerate, python, srun, mpirun
    entrypoint: str | None = None
    command: str | None = None
    # "uncapped": the launch sits in a loop nothing ends (``while true`` without break/exit)
    restart_loop: str | None = None


class Gpu(Model):
    model: str | None = None
    memory_bytes: int | None = None
    source: Source | None = None


class Placement(Model):
    """Where the job asks its scheduler to run it, as the job's files write it: what the
    org fleet's pools match (``trainlint.fleet``) to know a GPU the files do not name."""

    partition: str | None = None  # SLURM --partition
    constraint: str | None = None  # SLURM --constraint (a feature expression)
    account: str | None = None  # SLURM --account
    qos: str | None = None  # SLURM --qos
    node_labels: dict[str, str] = Field(default_factory=dict)  # Kubernetes nodeSelector, affinity
    instance_type: str | None = None  # SkyPilot instance_type, Kubernetes instance-type label
    accelerator: str | None = None  # SkyPilot resources.accelerators, as written
    cloud: str | None = None  # SkyPilot resources.cloud
    region: str | None = None  # SkyPilot resources.region


class Resources(Model):
    gpu: Gpu = Field(default_factory=Gpu)
    # The kind of accelerator the job's pods or workers request: "gpu", "tpu", or "none" when
    # the files state every pod's resources and none asks for one (a CPU job: no GPU rule
    # applies). None: not stated, as for any job whose files do not say.
    accelerator: Literal["gpu", "tpu", "none"] | None = None
    gpus_per_node: int | None = None
    nodes: int | None = None
    world_size: int | None = None
    spot: bool | None = None
    time_limit_s: float | None = None
    # What schedules the job and can bound its wall-clock time: slurm, kubernetes,
    # axolotl-cloud (None: it runs where it is started).
    scheduler: str | None = None
    # The object the scheduler runs, where its fields differ by kind: the Kubernetes kind
    # (Job, PyTorchJob, TrainJob, RayJob, JobSet, VolcanoJob, LeaderWorkerSet).
    scheduler_kind: str | None = None
    placement: Placement = Field(default_factory=Placement)


class Peft(Model):
    method: str | None = None
    rank: int | None = None
    target_modules: list[str] | None = None  # LoRA targets; "all-linear" for every linear


class ModelSpec(Model):
    name: str | None = None
    params: int | None = None
    trainable_params: int | None = None
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    ffn_hidden: int | None = None
    vocab: int | None = None
    seq_len: int | None = None
    peft: Peft = Field(default_factory=Peft)
    quantization_bits: int | None = None
    source: Source | None = None


class Optimizer(Model):
    name: str | None = None
    family: str | None = None
    eight_bit: bool | None = None
    experimental: bool | None = None


class Parallelism(Model):
    strategy: str | None = None  # ddp, deepspeed, fsdp
    zero_stage: int | None = None
    offload_optimizer: bool | None = None
    offload_params: bool | None = None
    tensor: int | None = None
    pipeline: int | None = None
    context: int | None = None  # context (sequence-dimension) parallel size
    expert: int | None = None  # expert parallel size of a mixture-of-experts model
    sequence_parallel: bool | None = None


class Training(Model):
    micro_batch_size: int | None = None
    grad_accum_steps: int | None = None
    global_batch_size: int | None = None
    max_steps: int | None = None
    epochs: float | None = None
    dataset_samples: int | None = None
    dataset_tokens: int | None = None
    total_steps: int | None = None
    # Samples concatenated into full sequences (TRL ``packing``, axolotl ``sample_packing``,
    # padding-free collators); with ``padding`` "longest" and no packing a batch is only as
    # long as its longest sample, "max_length" pads every sample to the full length.
    packing: bool | None = None
    padding: str | None = None
    precision: str | None = None  # fp32, fp16, bf16, fp8
    optimizer: Optimizer = Field(default_factory=Optimizer)
    activation_checkpointing: bool | None = None
    recompute: str | None = None  # full, selective (Korthikanti 2022); overrides the above
    compile: bool | None = None
    parallelism: Parallelism = Field(default_factory=Parallelism)
    seed: int | None = None


class Checkpoint(Model):
    strategy: str | None = None  # steps, epoch, no
    every_steps: float | None = None  # < 1 means a fraction of total steps (HF semantics)
    every_seconds: float | None = None
    every_epochs: float | None = None
    keep_last: int | None = None
    save_optimizer: bool | None = None
    async_: bool | None = Field(default=None, alias="async")
    # Each save also writes a Hugging Face weight export (OpenRLHF --ckpt.save_hf).
    export_hf: bool | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Eval(Model):
    strategy: str | None = None
    every_steps: float | None = None
    iters: int | None = None  # batches per evaluation (Megatron --eval-iters)


class Profiler(Model):
    enabled: bool | None = None
    scheduled: bool | None = None


class Logging(Model):
    strategy: str | None = None  # steps, epoch, no (HF logging_strategy)
    every_steps: float | None = None
    level: str | None = None
    reporters: list[str] = Field(default_factory=list)
    profiler: Profiler = Field(default_factory=Profiler)
    anomaly_detection: bool | None = None
    # Diagnostics computed on every step, each an extra reduction over all gradients or
    # parameters (Megatron --log-num-zeros-in-grad: num_zeros_in_grad, --log-params-norm:
    # params_norm); one entry per diagnostic so each is located at its own flag.
    per_step_diagnostics: dict[str, bool] = Field(default_factory=dict)


class Data(Model):
    num_workers: int | None = None
    pin_memory: bool | None = None
    prefetch_factor: int | None = None
    persistent_workers: bool | None = None
    # Side of the square training image in pixels (Ultralytics ``imgsz``, diffusers
    # ``--resolution``; detectron2's ``INPUT.MIN_SIZE_TRAIN`` is not square, not read as one).
    image_size: int | None = None
    audio_seconds: float | None = None  # seconds of audio per sample a speech job trains on


class Feature(Model):
    name: str
    kind: str
    experimental: bool = False
    fallback: str | None = None


class ParseError(Model):
    """A file that could not be read or parsed; reported as TL901 at its line."""

    file: str
    line: int = Field(ge=1)
    column: int = Field(ge=1)
    message: str


class UnknownKey(Model):
    """A key the recognised format does not know (TL903): a typo the framework would
    silently ignore, or a key of trainlint's own annotations that does not exist."""

    file: str
    line: int = Field(ge=1)
    column: int = Field(ge=1)
    key: str
    format: str
    suggestion: str | None = None


class MissingReference(Model):
    """A file a job references that does not exist (TL904), located at the reference."""

    file: str
    line: int = Field(ge=1)
    column: int = Field(ge=1)
    path: str


class UnresolvedReference(Model):
    """A file a job names that trainlint cannot look for in the repository (a system path,
    a path under a variable, a Hydra config beside an app that is not in the repository):
    not TL904, since the job's own tool may well find it; ``trainlint show`` lists it."""

    file: str
    line: int = Field(ge=1)
    column: int = Field(ge=1)
    path: str
    reason: str


class Default(Model):
    """A framework's default for a field no file of the job states, kept apart from the facts
    (it is never stated: it roots no job and no estimate counts it as declared): the value the
    run uses (None: one the framework picks each run, such as a random seed), or the field it
    follows (``same_as``: HF's eval_steps is logging_steps), the format whose framework sets
    it, the key a user would set, and where that key would go."""

    value: str | int | float | bool | list[str] | None = None  # a list: reporters (report_to)
    same_as: str | None = None
    format: str
    key: str
    file: str
    line: int = Field(ge=1)
    column: int = Field(ge=1)


class Budget(Model):
    """Spending limits declared for the job (annotations; packs may set defaults)."""

    usd: float | None = None
    gpu_hours: float | None = None
    runs: int | None = None  # runs planned per month (# trainlint: runs=3); 1 when unset


class Memory(Model):
    """Estimated memory per GPU, in bytes."""

    weights_bytes: float | None = None
    gradients_bytes: float | None = None
    optimizer_bytes: float | None = None
    activations_bytes: float | None = None
    overhead_bytes: float | None = None
    total_bytes: float | None = None
    gpu_bytes: float | None = None
    utilization: float | None = None
    # With activation recomputation switched off; None when the job does not recompute.
    total_without_recompute_bytes: float | None = None
    utilization_without_recompute: float | None = None


class MemoryFix(Model):
    """One change that would make a job that does not fit fit its GPU (TL102), cheapest first:
    ``zero3`` (shard model states), ``recompute`` (full activation checkpointing),
    ``micro_batch`` (a smaller micro-batch, ``micro_batch_size``, the global batch kept by
    accumulating more)."""

    change: str
    total_bytes: float
    utilization: float
    micro_batch_size: int | None = None


class RecomputeCost(Model):
    """What full activation recomputation costs: the step time it adds (a second forward)."""

    mode: str | None = None  # full, selective
    step_time_without_s: float | None = None
    overhead_fraction: float | None = None  # of the step time
    overhead_gpu_hours: float | None = None
    overhead_usd: float | None = None


class MixedPrecisionCost(Model):
    """An fp32 job re-estimated at the GPU's 16-bit tensor-core precision (TL105)."""

    precision: str | None = None  # bf16, else fp16 where the GPU has no bf16
    peak_ratio: float | None = None  # 16-bit over fp32 dense peak FLOP/s (catalog)
    step_time_s: float | None = None
    speedup: float | None = None  # fp32 step time over the 16-bit one
    saved_gpu_hours: float | None = None
    saved_usd: float | None = None


class Run(Model):
    steps: int | None = None
    hours: float | None = None
    gpu_hours: float | None = None
    usd: float | None = None


class PerSteps(Model):
    hours: float | None = None
    gpu_hours: float | None = None
    usd: float | None = None


class CheckpointCost(Model):
    size_bytes: float | None = None
    save_s: float | None = None
    every_steps: int | None = None
    saves: int | None = None
    overhead_fraction: float | None = None
    overhead_gpu_hours: float | None = None
    overhead_usd: float | None = None
    kept: int | None = None
    storage_bytes: float | None = None
    suggested_every_steps: int | None = None
    optimal_every_steps: int | None = None  # Young/Daly interval for the cluster's MTBF


class Alternative(Model):
    """A GPU model and count from the catalog that fits the job, with its cost per run."""

    gpu: str
    gpus: int
    memory_bytes: int | None = None
    memory_utilization: float
    usd: float | None = None
    gpu_hours: float | None = None
    step_time_s: float | None = None
    price_per_gpu_hour: float | None = None


class Comm(Model):
    allreduce_s: float | None = None  # gradient sync per step at achievable bandwidth
    exposed_s: float | None = None  # the part not hidden behind backward compute
    fraction: float | None = None  # exposed_s / step_time_s


class Estimates(Model):
    gpu: str | None = None  # the catalog name of the job's GPU
    gpus: int | None = None  # GPUs the job runs on (world size)
    params: int | None = None
    trainable_params: int | None = None
    memory: Memory = Field(default_factory=Memory)
    step_time_s: float | None = None
    comm: Comm = Field(default_factory=Comm)
    tokens_per_step: int | None = None
    flops_per_token: float | None = None
    # Vision, diffusion and speech models count samples (images, clips), not tokens.
    samples_per_step: int | None = None
    flops_per_sample: float | None = None
    price_per_gpu_hour: float | None = None
    run: Run = Field(default_factory=Run)
    per_1000_steps: PerSteps = Field(
        default_factory=PerSteps,
        description=(
            "Hours, GPU-hours and USD of 1,000 optimizer steps, checkpoint saves included: "
            "known from the step time alone, when the run's length (max_steps, or epochs and "
            "the dataset's size) is not."
        ),
    )
    checkpoint: CheckpointCost = Field(default_factory=CheckpointCost)
    alternatives: list[Alternative] = Field(default_factory=list)
    memory_fixes: list[MemoryFix] = Field(default_factory=list)
    recompute: RecomputeCost = Field(default_factory=RecomputeCost)
    mixed_precision: MixedPrecisionCost = Field(default_factory=MixedPrecisionCost)
    sources: dict[str, Source] = Field(default_factory=dict)
    unknown: list[str] = Field(default_factory=list)
    # Inputs the job does not state that were guessed, with the value used (e.g. precision).
    assumed: dict[str, str | int | float | bool] = Field(default_factory=dict)
    ranges: dict[str, Annotated[list[float], Field(min_length=2, max_length=2)]] = Field(
        default_factory=dict,
        description=(
            "Plausible [low, high] of each number that rests on an uncertain input (an unstated "
            "sequence length or GPUs per node, the MFU band), keyed by JSON pointer into these "
            'estimates ("/run/usd", "/memory/utilization"). The point value beside it is the '
            "most likely one and lies between the ends. A number with no uncertainty, or whose "
            "ends are equal, has no entry: its low and high are its point. Rules fire only when "
            "their conclusion holds over the whole range (docs/estimates.md, Ranges)."
        ),
        json_schema_extra={"propertyNames": {"pattern": "^(/[^/]+)+$"}},
    )


class DuplicateJob(Model):
    """Another place (repository and path) in the org database training the same experiment."""

    repo: str
    path: str
    tags: dict[str, str] = Field(default_factory=dict)


class BudgetStatus(Model):
    """A team's or project's monthly budget and its planned spend for the month, before and
    after this job (``check --db``)."""

    group: str  # team, project
    key: str
    month: str  # YYYY-MM
    budget_usd: float | None = None
    budget_gpu_hours: float | None = None
    before_usd: float
    before_gpu_hours: float
    after_usd: float | None = None
    after_gpu_hours: float | None = None


class Platform(Model):
    """What the org's scan database says about the job (filled only by ``check --db``)."""

    duplicates: list[DuplicateJob] = Field(default_factory=list)
    budgets: list[BudgetStatus] = Field(default_factory=list)


class Job(Model):
    id: str
    name: str | None = None
    sources: list[SourceFile]
    launcher: Launcher = Field(default_factory=Launcher)
    resources: Resources = Field(default_factory=Resources)
    model: ModelSpec = Field(default_factory=ModelSpec)
    training: Training = Field(default_factory=Training)
    checkpoint: Checkpoint = Field(default_factory=Checkpoint)
    eval: Eval = Field(default_factory=Eval)
    logging: Logging = Field(default_factory=Logging)
    data: Data = Field(default_factory=Data)
    env: dict[str, str] = Field(default_factory=dict)
    tags: dict[str, str] = Field(default_factory=dict)
    features: list[Feature] = Field(default_factory=list)
    fallbacks: dict[str, str] = Field(default_factory=dict)  # feature → its declared fallback
    budget: Budget = Field(default_factory=Budget)
    parse_errors: list[ParseError] = Field(default_factory=list)
    unknown_keys: list[UnknownKey] = Field(default_factory=list)
    missing_references: list[MissingReference] = Field(default_factory=list)
    unresolved_references: list[UnresolvedReference] = Field(default_factory=list)
    provenance: dict[str, Location] = Field(default_factory=dict)
    # Pointers whose value trainlint computed from other stated facts (world size from GPUs
    # per node and nodes, accumulation from the global batch): located at what they came from.
    derived: list[str] = Field(default_factory=list)
    # Frameworks' defaults for pointers no file states (HF Trainer's dataloader_num_workers 0),
    # for rules to tell a framework's value from a stated one.
    defaults: dict[str, Default] = Field(default_factory=dict)
    estimates: Estimates = Field(default_factory=Estimates)
    measurements: dict[str, Any] = Field(default_factory=dict)
    platform: Platform = Field(default_factory=Platform)

    def as_input(self) -> dict[str, Any]:
        """The job as Rego sees it: plain JSON, field aliases applied."""
        return self.model_dump(mode="json", by_alias=True)
