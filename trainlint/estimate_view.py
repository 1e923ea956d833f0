"""What ``trainlint estimate`` shows: a job's estimates as display rows, and as a JSON document.

Pure (no click/rich): the CLI renders the rows as a rich table on a terminal and as the plain
text of :func:`render_text` elsewhere. Rows come from iterating the ``Estimates`` model, so a
field added there (a new section such as ``comm``, or a new number) shows up without edits
here; its unit is read from its name (``*_bytes``, ``*_s``, ``usd``, ``*fraction``...).
Every row carries the source of its number, the key into ``Estimates.sources``: a number the
formulas computed reads ``estimated`` (the assumptions it rests on are listed under "Assumed"),
one a file states ``declared``, a probe's ``measured``, a catalog or fleet figure as such, and
``default`` only for a number that is itself an assumed default. Where ``Estimates`` has
``ranges`` (``{JSON pointer: [low, high]}``) a number shows its range beside it. GPU memory is
written as GPU vendors name it (``catalog.gpu_memory``: "80 GB" for an H100 80 GB), storage in
decimal units (``catalog.storage``), as the findings write them. Inputs left unknown come last,
each with how to declare it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from trainlint.catalog import gpu_memory, storage
from trainlint.job import Alternative, Estimates, Job
from trainlint.sources.base.annotation import _SCALARS as ANNOTATION_TARGETS

UNKNOWN = "unknown"
NO_SOURCE = "-"
TIMES = "\N{MULTIPLICATION SIGN}"  # counts as TL101 writes them


class JobEstimates(BaseModel):
    """One job's estimates: its id (the file that launches it) and the ``Estimates`` block."""

    id: str
    estimates: Estimates


class EstimateReport(BaseModel):
    """The ``trainlint estimate --format json`` document (schemas/estimate.schema.json)."""

    jobs: list[JobEstimates] = Field(default_factory=list)


@dataclass(frozen=True)
class Row:
    """One displayed number: its section, label, human value and source."""

    section: str
    label: str
    value: str
    source: str


@dataclass(frozen=True)
class JobView:
    """Everything shown for one job."""

    id: str
    rows: list[Row]
    unknown: list[tuple[str, str]]  # (input name, how to declare it)


def report(jobs: Iterable[Job]) -> EstimateReport:
    return EstimateReport(jobs=[JobEstimates(id=job.id, estimates=job.estimates) for job in jobs])


def document(jobs: Iterable[Job]) -> dict[str, Any]:
    """The JSON document: ``{"jobs": [{"id", "estimates": {...}}]}``."""
    return report(jobs).model_dump(mode="json", by_alias=True)


# Section titles and labels for the fields known today; any other field gets a title or label
# made from its name, so new fields still show.
SECTIONS = {
    "memory": "Memory per GPU",
    "run": "Run",
    "per_1000_steps": "Per 1,000 steps",
    "checkpoint": "Checkpoint",
    "comm": "Communication",
    "alternatives": "Cheaper alternatives",
}
TOP_SECTIONS = {
    "step_time_s": "Step",
    "tokens_per_step": "Step",
    "flops_per_token": "Step",
    "samples_per_step": "Step",
    "flops_per_sample": "Step",
}
# A model's work is counted per token or per sample (images, audio clips): the other pair of
# fields does not apply and is not shown.
PER_SAMPLE = frozenset({"samples_per_step", "flops_per_sample"})
PER_TOKEN = frozenset({"tokens_per_step", "flops_per_token"})
OPTIONAL = {"comm"}  # sections left out while every value in them is unknown
LABELS = {
    "gpu": "GPU",
    "gpus": "GPUs",
    "params": "parameters",
    "trainable_params": "trainable parameters",
    "step_time_s": "step time",
    "tokens_per_step": "tokens per step",
    "flops_per_token": "FLOPs per token",
    "samples_per_step": "samples per step",
    "flops_per_sample": "FLOPs per sample",
    "price_per_gpu_hour": "price per GPU-hour",
    "memory.gpu_bytes": "GPU memory",
    "memory.total_bytes": "total",
    "run.hours": "time",
    "run.usd": "cost",
    "run.gpu_hours": "GPU-hours",
    "per_1000_steps.hours": "time",
    "per_1000_steps.gpu_hours": "GPU-hours",
    "per_1000_steps.usd": "cost",
    "checkpoint.size_bytes": "size",
    "checkpoint.save_s": "save time",
    "checkpoint.every_steps": "every (steps)",
    "checkpoint.overhead_fraction": "overhead",
    "checkpoint.overhead_gpu_hours": "overhead GPU-hours",
    "checkpoint.overhead_usd": "overhead cost",
    "checkpoint.storage_bytes": "storage",
    "checkpoint.suggested_every_steps": "suggested every (steps)",
    "comm.allreduce_s": "all-reduce time",
    "comm.fraction": "share of step",
}
SKIPPED = {"sources", "unknown", "assumed", "ranges"}
GPU_MEMORY = ("memory.", "memory_fixes", "alternatives")  # keys whose bytes are GPU memory
COMPUTED = "estimated"
# Numbers that are an assumed default themselves, not computed from one.
DEFAULT_VALUES = frozenset({"memory.overhead_bytes"})
DASH = "\N{EN DASH}"
_UNIT_SUFFIXES = ("_bytes", "_s")

# How to declare a missing input: the annotation key that sets it, else where it comes from.
DECLARE = {
    ".".join(target.strip("/").split("/")): f"x-trainlint: {key}"
    for key, (target, _) in ANNOTATION_TARGETS.items()
} | {
    "resources.world_size": "x-trainlint: gpus, nodes (or the launcher's flags)",
    "price_per_gpu_hour": "pack data: params.estimate.prices",
    "model.seq_len": "the training config (max_seq_length)",
    "training.max_steps": "the training config (max_steps), or x-trainlint: dataset_samples",
    "training.micro_batch_size": "the training config (per_device_train_batch_size)",
}
DECLARE_OTHER = "the training config, or a model the catalog knows"


@dataclass(frozen=True)
class _Context:
    """What every row of one job reads besides its own value."""

    sources: Mapping[str, str]
    ranges: Mapping[str, Sequence[float]]


def _ranges(est: Estimates) -> Mapping[str, Sequence[float]]:
    """``Estimates.ranges`` where the estimator gives it (``{pointer: [low, high]}``), else
    none."""
    ranges = getattr(est, "ranges", None)
    return ranges if isinstance(ranges, Mapping) else {}


def view(job: Job) -> JobView:
    """Rows for one job, in the order of the ``Estimates`` fields."""
    est = job.estimates
    ctx = _Context(est.sources, _ranges(est))
    sections: dict[str, list[Row]] = {}  # in order of first appearance
    other_unit = PER_TOKEN if est.samples_per_step or est.flops_per_sample else PER_SAMPLE
    for name in type(est).model_fields:
        if name in SKIPPED or name in other_unit:
            continue
        value = getattr(est, name)
        if isinstance(value, BaseModel):
            shown = _section(name, value, ctx)
        elif isinstance(value, list):
            shown = _alternatives(name, value, ctx.sources)
        else:
            shown = [_row(TOP_SECTIONS.get(name, "Job"), name, value, ctx)]
        for row in shown:
            sections.setdefault(row.section, []).append(row)
    rows = [row for section in sections.values() for row in section]
    rows += [
        Row("Assumed", name, str(value), "default") for name, value in sorted(est.assumed.items())
    ]
    unknown = [(name, DECLARE.get(name, _declare_other(name))) for name in est.unknown]
    return JobView(id=job.id, rows=rows, unknown=unknown)


def _declare_other(name: str) -> str:
    return "the GPU catalog or pack data" if name.startswith("catalog.") else DECLARE_OTHER


def _section(name: str, model: BaseModel, ctx: _Context) -> list[Row]:
    title = SECTIONS.get(name, _title(name))
    rows = [
        _row(title, f"{name}.{field}", getattr(model, field), ctx)
        for field in type(model).model_fields
    ]
    if all(row.value == UNKNOWN for row in rows):
        return [] if name in OPTIONAL else [Row(title, "(all)", UNKNOWN, NO_SOURCE)]
    return rows


def _alternatives(name: str, items: Sequence[Any], sources: Mapping[str, str]) -> list[Row]:
    title = SECTIONS.get(name, _title(name))
    source = _shown(name, sources.get(name, NO_SOURCE))
    rows = []
    for item in items:
        if isinstance(item, Alternative):
            of = f" of {gpu_memory(item.memory_bytes)}" if item.memory_bytes else ""
            parts = [f"{_percent(item.memory_utilization)}{of} memory"]
            if item.usd is not None:
                parts.append(f"{_usd(item.usd)} per run")
            if item.gpu_hours is not None:
                parts.append(f"{_number(item.gpu_hours)} GPU-h")
            label = f"{item.gpus}{TIMES} {item.gpu}"
            rows.append(Row(title, label, ", ".join(parts), source))
        else:
            rows.append(Row(title, str(item), "", source))
    return rows or [Row(title, "(none)", "", source)]


def _row(section: str, key: str, value: Any, ctx: _Context) -> Row:
    field = key.rsplit(".", 1)[-1]
    shown = UNKNOWN if value is None else fmt(field, value, key)
    span = ctx.ranges.get("/" + key.replace(".", "/"))
    if value is not None and span is not None and len(span) == 2:
        shown += f" ({fmt(field, span[0], key)} {DASH} {fmt(field, span[1], key)})"
    source = _shown(key, ctx.sources.get(key, NO_SOURCE))
    return Row(section, LABELS.get(key, _label(field)), shown, source)


def _shown(key: str, source: str) -> str:
    """The source a row shows: ``estimated`` for what the formulas computed, which the ledger
    marks ``default`` when it rests on an assumption (those are listed under "Assumed")."""
    return COMPUTED if source == "default" and key not in DEFAULT_VALUES else source


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _label(field: str) -> str:
    for suffix in _UNIT_SUFFIXES:
        if field.endswith(suffix):
            field = field[: -len(suffix)]
            break
    return field.replace("_", " ")


def fmt(field: str, value: Any, key: str = "") -> str:
    """A value in human units, chosen from the field's name (and for bytes, from its ``key``:
    GPU memory or storage)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if field.endswith("_bytes"):
        return gpu_memory(value) if key.startswith(GPU_MEMORY) else storage(value)
    if field.endswith("_s"):
        return _duration(value)
    if field == "hours":
        return _duration(value * 3600)
    if field.endswith("gpu_hours"):
        return f"{_number(value)} GPU-h"
    if field == "usd" or field.endswith("_usd") or field.startswith("price"):
        return _usd(value)
    if field.startswith(("utilization", "fraction")) or field.endswith("_fraction"):
        return _percent(value)
    if field.startswith("flops"):
        return f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return _number(value)


def _duration(seconds: float) -> str:
    if abs(seconds) < 60:
        return f"{_number(seconds)} s"
    if abs(seconds) < 3600:
        return f"{seconds / 60:,.1f} min"
    return f"{seconds / 3600:,.1f} h"


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _percent(value: float) -> str:
    return f"{value:.1%}"


def _number(value: float) -> str:
    """Three significant figures, thousands separated: 0.0564, 2.59, 1,513."""
    if value == 0 or not math.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.0f}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}"


def render_text(jobs: Iterable[Job]) -> str:
    """Plain text: per job its sections, one ``label  value  source`` line per number."""
    blocks = [_render_job(view(job)) for job in jobs]
    return "\n".join(blocks) if blocks else "no training jobs found\n"


def _render_job(job: JobView) -> str:
    label_width = max([len(r.label) for r in job.rows] + [len(n) for n, _ in job.unknown] + [5])
    value_width = max([len(r.value) for r in job.rows] + [5])
    lines = [job.id]
    section = None
    for row in job.rows:
        if row.section != section:
            section = row.section
            lines.append(f"  {section}")
        line = f"    {row.label:<{label_width}}  {row.value:<{value_width}}  {row.source}"
        lines.append(line.rstrip())
    if job.unknown:
        lines.append("  Unknown inputs (declare them to complete the estimate)")
        lines += [f"    {name:<{label_width}}  {how}" for name, how in job.unknown]
    return "\n".join(lines) + "\n"
