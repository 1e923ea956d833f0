"""Probe measurements: where they live, whether they still describe the job, and loading them.

``trainlint probe`` (DESIGN §8) writes one file per job to
``<root>/.trainlint/measurements/<job slug>.json``, where ``root`` is the folder of the closest
repo config (``.trainlint.yaml``, ``pyproject.toml`` with ``[tool.trainlint]``...), else the
checked path (its folder for a file), and the slug is the job id (its entry file) relative to
``root`` with every character outside ``[A-Za-z0-9._-]`` replaced by ``-``
(``examples/llama3-sft/train.slurm`` → ``examples-llama3-sft-train.slurm.json``).

The shape the rules read (the probe may write more; unknown keys are kept)::

    {
      "version": 1,
      "fingerprint": "<sha256 hex of the job's performance-relevant fields, see fingerprint>",
      "fields": {"/training/micro_batch_size": 8, ...},  # fingerprint_fields(job), optional
      "measured_at": "2026-01-31T12:00:00Z",
      "hardware": {"gpu": "H100-SXM", "count": 8, ...},          # informative
      "data_wait_fraction": 0.04,          # share of step time waiting on the DataLoader
      "world_sizes": {
        "<n>": {
          "step_time_s": {"median": 0.41, "p10": 0.40, "p90": 0.43, "cv": 0.02},
          "tokens_per_s": 160000.0,        # whole job, all ranks
          "peak_memory_bytes": 61000000000, # the largest rank's peak
          "scaling_efficiency": 0.93,      # throughput(n) / (n · throughput(1)); 1.0 at n = 1
          "scaling_basis": "tokens",       # or "samples" per rank-second, or "step_time":
                                           # t(1) / t(n) for the same per-rank batch
          "oom": false                     # true: the step ran out of memory (other keys null)
        }
      }
    }

``attach_measurements`` stores the file in ``job.measurements`` with three keys added: ``path``
(as the user sees it), ``fresh`` (the file's fingerprint equals the job's now) and ``changed``
(for a stale file that carries ``fields``: the pointers whose values differ, else empty). An
unreadable, oversized or invalid file is a TL901 parse error on the job, located at the file;
``job.measurements`` then stays empty.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainlint.catalog import resolve_gpu
from trainlint.config import find_config
from trainlint.discover import resolved
from trainlint.job import Job, Location, ParseError
from trainlint.read import display

MEASUREMENTS_DIR = Path(".trainlint") / "measurements"
MAX_BYTES = 4 * 1024 * 1024
FINGERPRINT_VERSION = 1
_MODEL_FIELDS = (
    "name", "params", "trainable_params", "layers", "hidden", "heads", "kv_heads",
    "ffn_hidden", "vocab", "seq_len", "quantization_bits",
)  # fmt: skip
_PARALLELISM_FIELDS = (
    "strategy", "zero_stage", "offload_optimizer", "offload_params", "tensor", "pipeline",
    "sequence_parallel",
)  # fmt: skip


def fingerprint_fields(job: Job) -> dict[str, Any]:
    """The job facts a measurement depends on, keyed by JSON pointer into the job: model
    dimensions, micro-batch, sequence length, precision, optimizer, parallelism,
    recomputation, world size and GPU model (the catalog name when the catalog knows it)."""
    model, training, res = job.model, job.training, job.resources
    world = res.world_size
    if world is None and res.gpus_per_node is not None:
        world = res.gpus_per_node * (res.nodes or 1)
    gpu = resolve_gpu(res.gpu.model) if res.gpu.model else None
    fields: dict[str, Any] = {"/v": FINGERPRINT_VERSION}
    for name in _MODEL_FIELDS:
        fields[f"/model/{name}"] = getattr(model, name)
    for name in ("method", "rank", "target_modules"):
        fields[f"/model/peft/{name}"] = getattr(model.peft, name)
    fields["/training/micro_batch_size"] = training.micro_batch_size
    fields["/training/precision"] = training.precision
    for name in ("name", "family", "eight_bit"):
        fields[f"/training/optimizer/{name}"] = getattr(training.optimizer, name)
    for name in _PARALLELISM_FIELDS:
        fields[f"/training/parallelism/{name}"] = getattr(training.parallelism, name)
    fields["/training/activation_checkpointing"] = training.activation_checkpointing
    fields["/training/recompute"] = training.recompute
    fields["/resources/world_size"] = world
    fields["/resources/gpu/model"] = gpu.name if gpu else (res.gpu.model or None)
    return fields


def changed_fields(measured: object, job: Job) -> list[str]:
    """Pointers whose value differs between the probe's ``fields`` and the job now."""
    if not isinstance(measured, dict):
        return []
    now = fingerprint_fields(job)
    return sorted(p for p in {*measured, *now} if p != "/v" and measured.get(p) != now.get(p))


def fingerprint(job: Job) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of ``fingerprint_fields``."""
    text = json.dumps(fingerprint_fields(job), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def measurement_root(path: Path) -> Path:
    """The folder of the closest repo config at or above ``path``, else ``path``'s folder."""
    config = find_config(path)
    if config.root.is_absolute():  # found a file; the defaults' root is the relative "."
        return config.root
    return path.resolve() if path.is_dir() else path.absolute().parent.resolve()


def job_slug(job: Job, root: Path) -> str:
    """The job id relative to ``root``, as a file name."""
    entry = resolved(Path(job.id))
    try:
        name = entry.relative_to(resolved(root)).as_posix()
    except ValueError:
        name = job.id
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "job"


def measurement_path(job: Job, root: Path) -> Path:
    """Where the probe writes, and the linter reads, the job's measurement."""
    return root / MEASUREMENTS_DIR / f"{job_slug(job, root)}.json"


def read_measurement(path: Path) -> dict[str, Any]:
    """The measurement file as a mapping; ValueError with a reason when it is not one."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ValueError(f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("a measurement must be a JSON object")
    if not isinstance(data.get("fingerprint"), str):
        raise ValueError("a measurement needs a string 'fingerprint'")
    if not isinstance(data.get("world_sizes", {}), dict):
        raise ValueError("'world_sizes' must be an object keyed by world size")
    return data


def _parse_error(job: Job, path: Path, reason: str) -> None:
    shown = display(path)
    line, column = 1, 1
    match = re.search(r"line (\d+) column (\d+)", reason)
    if match:
        line, column = int(match.group(1)), int(match.group(2))
    error = ParseError(file=shown, line=line, column=column, message=f"measurement {reason}")
    job.parse_errors.append(error)
    pointer = f"/parse_errors/{len(job.parse_errors) - 1}"
    job.provenance[pointer] = Location(file=shown, line=line, column=column)


def attach_measurements(jobs: Iterable[Job], root: Path) -> None:
    """Load each job's measurement file, if there is one, into ``job.measurements``."""
    if not (root / MEASUREMENTS_DIR).is_dir():
        return  # nothing was ever probed here: no per-job lookups
    for job in jobs:
        path = measurement_path(job, root)
        if not path.is_file():
            continue
        try:
            data = read_measurement(path)
        except ValueError as exc:
            _parse_error(job, path, str(exc))
            continue
        shown = display(path)
        fresh = data["fingerprint"] == fingerprint(job)
        changed = [] if fresh else changed_fields(data.get("fields"), job)
        job.measurements = {**data, "path": shown, "fresh": fresh, "changed": changed}
        job.provenance["/measurements"] = Location(file=shown, line=1, column=1)
