"""The measurement file ``trainlint probe`` writes (``schemas/measurement.schema.json``).

The rules read the keys trainlint.measurement documents (``fingerprint``, ``fields``,
``world_sizes.<n>.{step_time_s, tokens_per_s, peak_memory_bytes, scaling_efficiency, oom}``,
``data_wait_fraction``); the rest is the record of how, where and on what the probe measured.
Nothing here imports torch.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MEASUREMENT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class StepTime(_Model):
    """Seconds per optimizer step over the measured steps (after warmup)."""

    median: float
    p10: float
    p90: float
    cv: float = Field(description="coefficient of variation: standard deviation / mean")


class RankMemory(_Model):
    """One rank's peak: allocated and reserved by the CUDA caching allocator on GPU; the
    process's peak resident set size (RSS) on CPU, where ``allocated``/``reserved`` are null."""

    rank: int
    allocated_bytes: int | None = None
    reserved_bytes: int | None = None
    rss_bytes: int | None = None


class CheckpointSave(_Model):
    """One timed save of the model and optimizer state (rank 0's ``torch.save``, or the
    sharded state of every rank under FSDP) to a temporary directory."""

    size_bytes: int
    save_s: float
    path_kind: Literal["temporary"] = "temporary"


class WorldSizeResult(_Model):
    """What the probe measured at one world size; on ``oom`` the figures are null."""

    step_time_s: StepTime | None = None
    tokens_per_s: float | None = Field(None, description="whole job: every rank together")
    peak_memory_bytes: int | None = Field(None, description="the largest rank's peak")
    peak_memory: list[RankMemory] = Field(default_factory=list)
    scaling_efficiency: float | None = Field(
        None, description="throughput(n) / (n * throughput(1)); null without n = 1 measured"
    )
    scaling_basis: Literal["tokens", "samples", "step_time"] | None = Field(
        None,
        description="what the efficiency compares: tokens/s; samples per rank-second; or "
        "step_time, t(1) / t(n), where the per-rank batch was the same at both sizes",
    )
    samples_per_step: float | None = Field(
        None,
        description="samples one rank took per step: counted at the model's forward "
        "(entrypoint mode), else the job's micro-batch x accumulation",
    )
    oom: bool = False
    checkpoint: CheckpointSave | None = None
    data_wait_fraction: float | None = None
    steps: int | None = None
    warmup: int | None = None
    seconds: float | None = Field(None, description="wall time of the whole torchrun")
    error: str | None = None


class Hardware(_Model):
    """Where the probe ran: ``gpu`` is the CUDA device name, or "cpu"."""

    gpu: str
    count: int = Field(description="devices (GPUs; CPU cores on CPU) on the probing machine")
    memory_bytes: int | None = None
    driver: str | None = None
    cuda: str | None = None
    torch: str | None = None
    cpu_cores: int | None = None
    device: Literal["cuda", "cpu"] = "cpu"


class Workload(_Model):
    """What synthetic mode actually ran: the job's figures unless ``overrides`` names some."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int | None = None
    ffn_hidden: int
    vocab: int
    seq_len: int
    micro_batch: int
    grad_accum: int
    precision: str = Field(description="autocast dtype actually used: bf16, fp16 or fp32")
    optimizer: str
    activation_checkpointing: bool
    parallelism: Literal["ddp", "fsdp"]
    overrides: dict[str, int] = Field(default_factory=dict)


class Measurement(_Model):
    """``.trainlint/measurements/<job>.json``."""

    version: int = MEASUREMENT_VERSION
    fingerprint: str
    fields: dict[str, Any] = Field(default_factory=dict)
    measured_at: str
    trainlint_version: str
    mode: Literal["synthetic", "entrypoint"]
    job: str
    hardware: Hardware | None = None
    workload: Workload | None = None
    data_wait_fraction: float | None = None
    world_sizes: dict[str, WorldSizeResult]
    notes: list[str] = Field(default_factory=list)
