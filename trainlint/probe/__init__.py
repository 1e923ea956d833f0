"""``trainlint probe``: measure a job's step time, memory and scaling (DESIGN §8).

``probe(job_path, ...)`` loads the job, runs the synthetic worker (trainlint.probe.synthetic)
under ``torchrun --standalone`` at each world size — or, in entrypoint mode, the job's own
launch command through trainlint.probe.entrypoint — and writes the measurement file
(trainlint.probe.result.Measurement) atomically to ``measurement_path(job, root)``.

Decisions:
- world sizes default to 1 and the job's GPU count. On a CUDA machine a size above the GPUs it
  has is an error when asked for explicitly and capped (with a note) when it is the default; on
  CPU every size is capped at the cores (the gloo stand-in for GPUs), with a note.
- model dimensions come from the job or the catalog; a missing one is an error naming it, unless
  an override (``overrides``: layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len,
  micro_batch, grad_accum) supplies it — overrides are recorded in ``workload.overrides``.
- scaling efficiency = tokens/s(n) / (n · tokens/s(1)); without tokens per step (an entrypoint
  run of a script that states no batch), samples per rank-second at n over those at 1, which
  is t(1) / t(n) when the per-rank batch is the same (``scaling``); null without a
  measurement at 1.
- neither importing this package nor probing imports torch in this process: a child process
  asks PyTorch what the machine has (``detect``), and torchrun's workers measure.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from trainlint.config import project_root, run_config
from trainlint.errors import TrainlintError
from trainlint.job import Job
from trainlint.measurement import (
    fingerprint,
    fingerprint_fields,
    measurement_path,
    measurement_root,
)
from trainlint.probe import launch
from trainlint.probe.hooks import step as step
from trainlint.probe.result import Measurement, Workload
from trainlint.workdir import at_root

__all__ = ["ProbeError", "probe", "select_job", "workload"]

OPTIMIZERS = {"adamw": "adamw", "adam": "adamw", "sgd": "sgd", "adafactor": "adafactor"}
OVERRIDABLE = (
    "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len", "micro_batch",
    "grad_accum",
)  # fmt: skip


class ProbeError(TrainlintError):
    """The probe cannot run (no torch, too few GPUs, unknown dimensions) or its run failed."""


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def select_job(jobs: Sequence[Job], job_path: Path) -> Job:
    """The job whose entry file is ``job_path``, or the only job."""
    target = job_path.resolve()
    for job in jobs:
        if Path(job.id).resolve() == target:
            return job
    if len(jobs) == 1:
        return jobs[0]
    if not jobs:
        raise ProbeError(f"no training job found under {job_path}")
    ids = ", ".join(job.id for job in jobs)
    raise ProbeError(f"{job_path} holds {len(jobs)} jobs ({ids}): name one entry file")


def workload(job: Job, overrides: dict[str, int] | None = None) -> tuple[Workload, list[str]]:
    """What synthetic mode runs for ``job``, and notes on what differs from the job."""
    from trainlint.estimate.inputs import resolve
    from trainlint.estimate.params import EstimateParams

    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    inp = resolve(job, EstimateParams())
    d = inp.dims
    found: dict[str, int | None] = {
        "layers": d.layers.value if d.layers else None,
        "hidden": d.hidden.value if d.hidden else None,
        "heads": d.heads.value if d.heads else None,
        "kv_heads": d.kv_heads.value if d.kv_heads else None,
        "ffn_hidden": d.ffn_hidden.value if d.ffn_hidden else None,
        "vocab": d.vocab.value if d.vocab else None,
        "seq_len": d.seq_len.value if d.seq_len else None,
        "micro_batch": inp.micro_batch.value if inp.micro_batch else None,
        "grad_accum": job.training.grad_accum_steps or 1,
    }
    found.update(overrides)
    notes: list[str] = []
    if found["ffn_hidden"] is None and found["hidden"] is not None:
        found["ffn_hidden"] = 4 * found["hidden"]
        notes.append("ffn_hidden unknown: 4 x hidden")
    if found["kv_heads"] is None:
        found["kv_heads"] = found["heads"]
    missing = [k for k in ("layers", "hidden", "heads", "vocab", "seq_len", "micro_batch")
               if found[k] is None]  # fmt: skip
    if missing:
        flags = " ".join(f"--{k.replace('_', '-')} N" for k in missing)
        raise ProbeError(
            f"model dimensions unknown for {job.id}: {', '.join(missing)}; declare them "
            f"(model name in the catalog, config.json, or a `# trainlint:` annotation) or "
            f"pass {flags} to probe a stand-in"
        )
    dims = {k: int(v) for k, v in found.items() if v is not None}
    if dims["hidden"] % dims["heads"] or dims["heads"] % dims["kv_heads"]:
        raise ProbeError(
            f"hidden {dims['hidden']}, heads {dims['heads']} and kv_heads {dims['kv_heads']} "
            "do not divide evenly"
        )
    family = (inp.optimizer.value.name or "adamw").lower()
    optimizer = OPTIMIZERS.get(family)
    if optimizer is None:
        optimizer = "adamw"
        notes.append(f"optimizer {family!r} has no synthetic stand-in: ran AdamW")
    precision = inp.precision.value.compute
    if precision not in ("bf16", "fp16", "fp32"):
        notes.append(f"precision {precision!r} ran as bf16 autocast on GPU")
        precision = "bf16"
    strategy = (job.training.parallelism.strategy or "ddp").lower()
    stage = job.training.parallelism.zero_stage or 0
    parallelism = "fsdp" if strategy == "fsdp" or stage >= 3 else "ddp"
    if strategy == "deepspeed" and stage < 3:
        notes.append(f"deepspeed ZeRO-{stage} ran as DDP")
    ckpt = bool(inp.recompute or job.training.activation_checkpointing)
    if overrides:
        notes.append(
            "stand-in dimensions: "
            + ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
            + " (the figures are not the job's)"
        )
    work = Workload(
        layers=dims["layers"],
        hidden=dims["hidden"],
        heads=dims["heads"],
        kv_heads=dims["kv_heads"],
        ffn_hidden=dims["ffn_hidden"],
        vocab=dims["vocab"],
        seq_len=dims["seq_len"],
        micro_batch=dims["micro_batch"],
        grad_accum=dims["grad_accum"],
        precision=precision,
        optimizer=optimizer,
        activation_checkpointing=ckpt,
        parallelism=parallelism,  # type: ignore[arg-type]
        overrides=overrides,
    )
    return work, notes


def job_world_size(job: Job) -> int:
    res = job.resources
    if res.world_size:
        return res.world_size
    if res.gpus_per_node:
        return res.gpus_per_node * (res.nodes or 1)
    return 1


_DETECT = """
import json, torch
from trainlint.probe.synthetic import hardware
cuda = torch.cuda.is_available()
print(json.dumps({
    "cuda": cuda,
    "gpus": torch.cuda.device_count() if cuda else 0,
    "nccl": bool(cuda and torch.distributed.is_nccl_available()),
    "cpu": hardware(torch.device("cpu")),
    "gpu": hardware(torch.device("cuda", 0)) if cuda else None,
}))
"""


def detect(timeout_s: float = 120.0) -> dict[str, Any]:
    """What PyTorch sees on this machine, asked in a child process: the probe's own process
    never imports torch (some native extensions, regopy's among them, abort a later
    ``import torch`` in the same process)."""
    if importlib.util.find_spec("torch") is None:
        raise ProbeError("the probe needs PyTorch: install trainlint[probe]")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _DETECT],
            capture_output=True, text=True, timeout=timeout_s, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ProbeError(f"PyTorch did not start within {timeout_s:.0f} s") from None
    if done.returncode != 0:
        raise ProbeError(f"PyTorch failed to start:\n{done.stderr[-3000:]}")
    info: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return info


def _machine(device: str, info: dict[str, Any]) -> tuple[str, int]:
    """The device to run on and how many ranks it holds (GPUs, or CPU cores)."""
    cuda = bool(info["cuda"])
    if device == "cuda" and not cuda:
        raise ProbeError("--device cuda: CUDA is not available to this PyTorch")
    if device == "cuda" or (device == "auto" and cuda):
        if not info["nccl"]:
            raise ProbeError("this PyTorch has no NCCL: install a CUDA build of torch")
        return "cuda", int(info["gpus"])
    return "cpu", max(1, os.cpu_count() or 1)


def plan_sizes(
    requested: Sequence[int] | None, job_size: int, device: str, available: int
) -> tuple[list[int], list[str]]:
    """The world sizes to run, capped at what the machine holds, and why any were capped."""
    notes: list[str] = []
    sizes = sorted(set(requested or [1, job_size]))
    if any(n < 1 for n in sizes):
        raise ProbeError("world sizes must be positive")
    too_big = [n for n in sizes if n > available]
    if too_big and device == "cuda" and requested:
        raise ProbeError(
            f"world size {max(too_big)} needs {max(too_big)} GPUs; this machine has {available}"
        )
    if too_big:
        what = "GPUs" if device == "cuda" else "CPU cores (gloo processes stand in for GPUs)"
        notes.append(
            f"world size {', '.join(map(str, too_big))} capped at {available}: "
            f"this machine has {available} {what}"
        )
        sizes = sorted({min(n, available) for n in sizes})
    return sizes, notes


def run_synthetic(
    work: Workload, world: int, length: launch.RunLength, *, device: str, scratch: Path
) -> dict[str, Any]:
    """One torchrun of the synthetic worker; the per-world-size result dict."""
    cfg = {
        **work.model_dump(exclude={"overrides", "activation_checkpointing"}),
        "ckpt": work.activation_checkpointing,
        "device": device,
        "warmup": length.warmup,
        "steps": length.steps,
        "checkpoint": True,
    }
    config = scratch / f"config-{world}.json"
    config.write_text(json.dumps(cfg))
    out = scratch / f"result-{world}.json"
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone",
        "--nproc_per_node", str(world), "-m", "trainlint.probe.synthetic",
        "--config", str(config), "--out", str(out),
    ]  # fmt: skip
    env = {"PYTHONUNBUFFERED": "1"}
    if device == "cpu":
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // world))
    timeout_s = length.timeout_s
    done = launch.run(command, log=scratch / f"log-{world}.txt", timeout_s=timeout_s, env=env)
    if list(scratch.glob(f"result-{world}.json.rank*.oom")):
        return {"oom": True, "seconds": done.seconds}
    if done.timed_out:
        raise ProbeError(
            f"world size {world}: timed out after {timeout_s:.0f} s\n{done.tail(3000)}"
        )
    if not done.ok or not out.is_file():
        raise ProbeError(
            f"world size {world}: the worker failed (exit {done.returncode})\n{done.tail(3000)}"
        )
    result: dict[str, Any] = json.loads(out.read_text())
    result["seconds"] = done.seconds
    return result


def scaling(sizes: dict[str, dict[str, Any]]) -> None:
    """Fill ``scaling_efficiency`` and ``scaling_basis`` in place: throughput(n) /
    (n · throughput(1)), throughput in tokens/s where both sizes know their tokens per step
    (``tokens``), else in samples per rank-second from the samples per step each rank took
    (``samples``) — which, when the per-rank batch is the same at both sizes, is t(1) / t(n),
    the step times alone (``step_time``). A probe that counts no tokens still measures."""
    one = sizes.get("1", {})
    for key, entry in sizes.items():
        basis, efficiency = _efficiency(one, entry, int(key))
        entry["scaling_efficiency"], entry["scaling_basis"] = efficiency, basis


def _efficiency(
    one: dict[str, Any], entry: dict[str, Any], n: int
) -> tuple[str | None, float | None]:
    base, rate = _positive(one.get("tokens_per_s")), _positive(entry.get("tokens_per_s"))
    if base and rate:
        return "tokens", rate / (n * base)
    t1, tn = _positive(_median(one)), _positive(_median(entry))
    s1, sn = _positive(one.get("samples_per_step")), _positive(entry.get("samples_per_step"))
    if not (t1 and tn and s1 and sn):
        return None, None
    if s1 == sn:
        return "step_time", t1 / tn
    return "samples", (sn / tn) / (s1 / t1)


def _median(entry: dict[str, Any]) -> Any:
    step = entry.get("step_time_s")
    return step.get("median") if isinstance(step, dict) else None


def _positive(value: Any) -> float | None:
    """``value`` as a float when it is a positive number, else None."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return float(value) if ok else None


def _scaling_notes(sizes: dict[str, dict[str, Any]]) -> list[str]:
    """How each size's efficiency was derived where no tokens were counted: stated in the
    measurement, since t(1) / t(n) holds only for the same per-rank batch."""
    one, notes = sizes.get("1", {}), []
    for key, entry in sizes.items():
        basis, efficiency = entry.get("scaling_basis"), entry.get("scaling_efficiency")
        if key == "1" or basis not in ("step_time", "samples") or efficiency is None:
            continue
        t1, tn = _median(one), _median(entry)
        how = (f"t(1) / t({key}) = {t1 * 1000:.3g} ms / {tn * 1000:.3g} ms: the per-rank batch "
               f"({entry['samples_per_step']:g} samples per step) was the same at 1 and {key}"
               if basis == "step_time" else
               f"samples per rank-second at {key} / at 1 ({entry['samples_per_step']:g} and "
               f"{one['samples_per_step']:g} samples per step per rank)")  # fmt: skip
        notes.append(f"scaling efficiency at {key} = {efficiency:.0%}, {how}; no tokens counted")
    return notes


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as output:
            output.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entrypoint_runs(
    job: Job, sizes: list[int], length: launch.RunLength, progress: Progress
) -> dict[str, dict[str, Any]]:
    """Each world size's block from the job's own launch command (entrypoint mode)."""
    from trainlint.probe.entrypoint import run_entrypoint

    results: dict[str, dict[str, Any]] = {}
    for n in sizes:
        progress(f"world size {n}: running the job's entrypoint ...")
        with tempfile.TemporaryDirectory(prefix="trainlint-probe-") as scratch:
            results[str(n)] = dict(run_entrypoint(job, n, length, Path(scratch)))
    return results


def _synthetic_runs(
    work: Workload, sizes: list[int], length: launch.RunLength, kind: str, progress: Progress
) -> dict[str, dict[str, Any]]:
    """Each world size's block from the synthetic worker on ``kind`` (cpu or cuda)."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="trainlint-probe-") as scratch:
        for n in sizes:
            progress(
                f"world size {n}: {length.warmup} warmup + {length.steps} timed steps on {kind} ..."
            )
            entry = run_synthetic(work, n, length, device=kind, scratch=Path(scratch))
            results[str(n)] = entry
            if entry.get("oom"):
                progress(f"world size {n}: out of memory")
            else:
                progress(
                    f"world size {n}: {entry['step_time_s']['median']:.3f} s/step, "
                    f"{entry['tokens_per_s']:.0f} tokens/s"
                )
    return results


def _cpu_notes(work: Workload) -> list[str]:
    """What a synthetic run on CPU changes from the job."""
    notes = []
    if work.precision != "fp32":
        notes.append(f"CPU: ran fp32 (the job's {work.precision} autocast needs a GPU)")
    if work.parallelism == "fsdp":
        notes.append("CPU: ran DDP over gloo (FSDP is probed on CUDA only)")
    return notes


def _reported_hardware(results: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The first hardware a rank reported; each block keeps only its measurements (the
    hardware, world size, precision and parallelism the worker echoes are dropped)."""
    hardware: dict[str, Any] | None = None
    for entry in results.values():
        found = entry.pop("hardware", None)
        hardware = hardware or found
        for key in ("world_size", "precision", "parallelism"):
            entry.pop(key, None)
    return hardware


def probe(  # noqa: PLR0913 - the library face of `trainlint probe`: one keyword per option
    job_path: Path,
    *,
    world_sizes: Sequence[int] | None = None,
    gpus: int | None = None,
    nodes: int | None = None,
    warmup: int = 3,
    steps: int = 10,
    mode: str = "synthetic",
    out: Path | None = None,
    timeout_s: float = 600.0,
    device: str = "auto",
    overrides: dict[str, int] | None = None,
    progress: Progress = _quiet,
) -> tuple[Path, Measurement]:
    """Measure the job at ``job_path`` and write its measurement file; returns (path, it)."""
    from trainlint import __version__
    from trainlint.lint import load_jobs

    if nodes is not None and nodes > 1:
        raise ProbeError(
            "multi-node probing is not supported yet: run `trainlint probe` on one node "
            "(torchrun --standalone)"
        )
    if warmup < 0 or steps < 1:
        raise ProbeError("--warmup must be >= 0 and --steps >= 1")
    length = launch.RunLength(warmup, steps, timeout_s)
    out = Path(os.path.abspath(out)) if out is not None else None
    top = project_root([job_path], run_config([job_path]))  # where job ids are relative to
    with at_root(top, [job_path]) as [local]:
        job = select_job(load_jobs([local]), local)
        job_size = gpus or job_world_size(job)
        info = detect()
        kind, available = _machine(device, info)
        sizes, notes = plan_sizes(world_sizes, job_size, kind, available)
        root = measurement_root(local)
        target = (out / measurement_path(job, root).name) if out else measurement_path(job, root)
        work: Workload | None = None
        if mode == "entrypoint":
            results = _entrypoint_runs(job, sizes, length, progress)
        elif mode == "synthetic":
            work, more = workload(job, overrides)
            notes += more + (_cpu_notes(work) if kind == "cpu" else [])
            results = _synthetic_runs(work, sizes, length, kind, progress)
        else:
            raise ProbeError(f"unknown mode {mode!r}: synthetic or entrypoint")
        hardware = _reported_hardware(results)
        scaling(results)
        notes += _scaling_notes(results)
        if "1" not in results:
            notes.append("no measurement at world size 1: scaling efficiency unknown")
        if work is not None and kind == "cpu":  # what the worker ran on CPU (see synthetic.py)
            work = work.model_copy(update={"precision": "fp32", "parallelism": "ddp"})
        if hardware is None:  # entrypoint mode: the job's ranks do not report it
            hardware = info["gpu"] if kind == "cuda" else info["cpu"]
        waits = [e["data_wait_fraction"] for e in results.values()
                 if isinstance(e.get("data_wait_fraction"), int | float)]  # fmt: skip
        measurement = Measurement.model_validate(
            {
                "fingerprint": fingerprint(job),
                "fields": fingerprint_fields(job),
                "measured_at": _now(),
                "trainlint_version": __version__,
                "mode": mode,
                "job": job.id,
                "hardware": hardware,
                "workload": work.model_dump() if work else None,
                "data_wait_fraction": max(waits) if waits else None,
                "world_sizes": results,
                "notes": notes,
            }
        )
        write_atomic(target, measurement.model_dump_json(indent=2, exclude_none=False) + "\n")
        return target, measurement
