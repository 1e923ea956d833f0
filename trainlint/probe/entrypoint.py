"""Entrypoint mode (DESIGN §8): run the job's own launch command with the probe bootstrap.

Contract (``trainlint.probe.probe`` calls this for ``--mode entrypoint``)::

    run_entrypoint(job, world_size, length, workdir, *, step_regex=None) -> dict

(``length``: a ``launch.RunLength``, the warm-up and measured steps and the time limit)

returns one world size's block, the shape of the measurement file's ``world_sizes["<n>"]``
(trainlint/measurement.py) less ``scaling_efficiency``, which the caller computes across sizes::

    {
      "step_time_s": {"median": 0.41, "p10": 0.40, "p90": 0.43, "cv": 0.02},  # None when oom
      "tokens_per_s": 160000.0,       # micro batch x seq len x accumulation x n / median step;
                                      # None when the job does not say (or oom)
      "peak_memory_bytes": 61e9,      # the largest rank: CUDA max reserved, else peak RSS
      "peak_memory": [{"rank": 0, "allocated_bytes": ..., "reserved_bytes": ...,
                       "rss_bytes": ...}, ...],   # per rank (result.RankMemory)
      "oom": False,
      "data_wait_fraction": 0.04,     # the largest rank's DataLoader wait / measured time
      "samples_per_step": 8.0,        # per rank, counted at the model's forward (hooks.py),
                                      # else micro batch x accumulation the job states; None
      "steps": 10, "warmup": 3,       # measured steps (per rank) and warm-up steps skipped
      "step_source": "optimizer",     # optimizer (global hook) | api (step()) | log (regex)
      "ranks": [{"rank": 0, "memory": {"allocated_bytes", "reserved_bytes", "rss_bytes"},
                 "data_wait_fraction": 0.04, "steps": 10}, ...],
      "command": ["torchrun", "--standalone", "--nproc_per_node", "2", "train.py"],
      "seconds": 12.3,                # wall time of the whole run, start-up included
    }

It raises ``EntrypointError`` (a ``TrainlintError``: one line for the user, then the log tail)
when no command can be derived, the run times out, or it ends without a rank result.

The command is the job's ``launcher.command`` (what sources/launch_script.py and the K8s,
SkyPilot and Ray sources record) — else ``python <launcher.entrypoint>`` for a ``.py``
entrypoint — split with ``shlex`` and run as argv, never through a shell. ``$VAR``s are
expanded from the job's recorded ``env`` and this environment; leading ``VAR=value`` words
become environment. An ``srun``/``mpirun`` prefix is dropped (the probe runs on this machine,
not through the scheduler). ``torchrun`` (or ``python -m torch.distributed.run``) gets
``--nproc_per_node <world_size>`` and ``--nnodes 1`` (``--standalone`` unless it names a
rendezvous); ``deepspeed --num_gpus`` and ``accelerate launch --num_processes`` likewise; a
plain ``python script.py`` at a world size above 1 runs under torchrun; bare ``python`` and
``torchrun`` use this interpreter (``sys.executable``). It runs in the folder
of the file that holds the command (``cwd`` overrides), via ``launch.run`` with the timeout,
so no process outlives it. Only ``trainlint probe --mode entrypoint`` calls this: the linter
never executes a job.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from trainlint.errors import TrainlintError
from trainlint.job import Job
from trainlint.probe.launch import RunLength, run

BOOTSTRAP = Path(__file__).resolve().parent / "bootstrap"
_REDACTED = "<redacted>"
_VAR = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)")
_PREFIXES = {"srun", "mpirun", "mpiexec"}
_PROGRAMS = {"torchrun", "python", "python3", "deepspeed", "accelerate"}
_WORLD_FLAGS = {
    "torchrun": ("--nproc_per_node", "--nproc-per-node"),
    "deepspeed": ("--num_gpus", "--num-gpus"),
    "accelerate": ("--num_processes", "--num-processes"),
}


class EntrypointError(TrainlintError):
    """The job's own command cannot be derived or did not produce a measurement."""


def run_entrypoint(
    job: Job,
    world_size: int,
    length: RunLength,
    workdir: Path,
    *,
    step_regex: str | None = None,
) -> dict[str, Any]:
    """Run the job at ``world_size`` until ``length``'s warm-up and measured steps, and
    measure them; the job's own folder is the working directory."""
    warmup, steps, timeout_s = length.warmup, length.steps, length.timeout_s
    argv, env = command_for(job, world_size)
    ranks_dir = Path(workdir) / f"entrypoint-w{world_size}"
    shutil.rmtree(ranks_dir, ignore_errors=True)
    ranks_dir.mkdir(parents=True)
    python_path = [str(BOOTSTRAP), env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))]
    env |= {
        "PYTHONPATH": os.pathsep.join(p for p in python_path if p),
        "PYTHONUNBUFFERED": "1",
        "TRAINLINT_PROBE_DIR": str(ranks_dir),
        "TRAINLINT_PROBE_WARMUP": str(warmup),
        "TRAINLINT_PROBE_STEPS": str(steps),
    }
    if step_regex:
        env["TRAINLINT_PROBE_STEP_REGEX"] = step_regex
    done = run(argv, log=ranks_dir / "run.log", timeout_s=timeout_s, env=env, cwd=_folder(job))
    results = _rank_results(ranks_dir)
    if not results:
        why = f"exited with code {done.returncode}"
        if done.timed_out:
            why = f"timed out after {timeout_s:g} s"
        raise EntrypointError(
            f"entrypoint probe of {job.id} at world size {world_size} {why} before "
            f"{warmup} + {steps} steps finished ({shlex.join(argv)}); steps are counted by a "
            "torch.optim optimizer, trainlint.probe.step() or TRAINLINT_PROBE_STEP_REGEX.\n"
            + done.tail(4000)
        )
    block = summarize(results, job, world_size)
    return block | {"command": argv, "seconds": round(done.seconds, 3)}


def command_for(job: Job, world_size: int) -> tuple[list[str], dict[str, str]]:
    """The argv and extra environment that run ``job`` at ``world_size`` on this machine."""
    text = job.launcher.command
    if not text and (job.launcher.entrypoint or "").endswith(".py"):
        text = f"python {shlex.quote(job.launcher.entrypoint or '')}"
    if not text:
        raise EntrypointError(
            f"{job.id}: no launch command found (launcher.command); entrypoint mode runs the "
            "job's own launch line — point it at the launch script, or use --mode synthetic"
        )
    if _REDACTED in text:
        raise EntrypointError(f"{job.id}: the launch command holds a redacted secret: {text}")
    known = {k: v for k, v in job.env.items() if _REDACTED not in v}
    values = {**os.environ, **known}
    try:
        words = shlex.split(_expand(text.replace("\\\n", " "), values))
    except ValueError as error:
        raise EntrypointError(f"{job.id}: cannot split the launch command: {error}") from None
    env = dict(known)
    while words and re.fullmatch(r"\w+=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    argv = _for_world(_drop_prefix(words, job), world_size)
    unresolved = [w for w in argv if _VAR.search(w)]
    if unresolved:
        raise EntrypointError(f"{job.id}: unset variables in the launch command: {unresolved}")
    return argv, env


def _expand(text: str, values: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        if name in values:
            return values[name]
        return match.group(2) if match.group(2) is not None else match.group(0)

    return _VAR.sub(one, text)


def _drop_prefix(words: list[str], job: Job) -> list[str]:
    if words and Path(words[0]).name in _PREFIXES:
        start = next((i for i, w in enumerate(words) if _program(w)), None)
        if start is None:
            raise EntrypointError(f"{job.id}: no program after {words[0]} in the launch command")
        words = words[start:]
    if not words:
        raise EntrypointError(f"{job.id}: the launch command is empty")
    return words


def _program(word: str) -> bool:
    return Path(word).name in _PROGRAMS or word.endswith(".py")


def _for_world(words: list[str], world_size: int) -> list[str]:
    """Pin the launcher's process count to ``world_size``. A bare ``python``/``torchrun``
    runs with this interpreter (the environment trainlint probe runs in, which has torch and
    the bootstrap's trainlint); an absolute path is kept."""
    name = Path(words[0]).name
    if name in ("python", "python3") and words[1:3] in (
        ["-m", "torch.distributed.run"], ["-m", "torch.distributed.launch"]):  # fmt: skip
        return _world_flag([sys.executable, *words[1:3]], words[3:], "torchrun", world_size)
    if name in ("python", "python3") or words[0].endswith(".py"):
        script = words[1:] if name.startswith("python") else words
        if world_size > 1:
            return _world_flag([sys.executable, "-m", "torch.distributed.run"], script,
                               "torchrun", world_size)  # fmt: skip
        return [_interpreter(words[0]) if name.startswith("python") else sys.executable, *script]
    if words[0] == "torchrun":
        return _world_flag([sys.executable, "-m", "torch.distributed.run"], words[1:], name,
                           world_size)  # fmt: skip
    if name == "accelerate" and words[1:2] == ["launch"]:
        return _world_flag(words[:2], words[2:], name, world_size)
    if name in _WORLD_FLAGS:
        return _world_flag(words[:1], words[1:], name, world_size)
    return words


def _interpreter(python: str) -> str:
    return python if os.sep in python else sys.executable


def _world_flag(head: list[str], rest: list[str], kind: str, world_size: int) -> list[str]:
    """``head`` + the launcher options in ``rest`` (up to the script) with the process count
    set to ``world_size`` (and torchrun pinned to one node on this machine)."""
    script = next((i for i, w in enumerate(rest) if w.endswith(".py") or w in ("-m", "--")),
                  len(rest))  # fmt: skip
    options, tail = list(rest[:script]), rest[script:]
    pinned = {**{flag: str(world_size) for flag in _WORLD_FLAGS[kind]}}
    if kind == "torchrun":
        pinned |= {"--nnodes": "1"}
    for flag, value in pinned.items():
        options = _set_option(options, flag, value)
    if not any(o.split("=")[0] in pinned for o in options):
        options = [_WORLD_FLAGS[kind][0], str(world_size), *options]
    if kind == "torchrun" and not any(
        o.startswith(("--standalone", "--rdzv", "--master")) for o in options
    ):
        options = ["--standalone", *options]
    return [*head, *options, *tail]


def _set_option(options: list[str], flag: str, value: str) -> list[str]:
    out = list(options)
    for i, word in enumerate(out):
        if word == flag and i + 1 < len(out):
            out[i + 1] = value
        elif word.startswith(flag + "="):
            out[i] = f"{flag}={value}"
    return out


def _folder(job: Job) -> Path | None:
    where = job.provenance.get("/launcher/command") or job.provenance.get("/launcher/entrypoint")
    folder = Path(where.file).parent if where is not None else Path(job.id).parent
    return folder if folder.is_dir() else None


def _rank_results(folder: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("rank*.json")):
        try:
            found.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return found


def summarize(results: list[dict[str, Any]], job: Job, world_size: int) -> dict[str, Any]:
    """One world size's block from the ranks' results: the slowest rank per step (DDP steps
    wait for the slowest), the largest rank's memory and data wait."""
    ranks = [_rank_entry(r) for r in results]
    peaks = [p for p in (_peak(r["memory"]) for r in ranks) if p is not None]
    base: dict[str, Any] = {
        "peak_memory_bytes": max(peaks) if peaks else None,
        "peak_memory": [{"rank": r["rank"], **r["memory"]} for r in ranks],
        "warmup": results[0].get("warmup"),
        "step_source": results[0].get("source"),
        "ranks": ranks,
    }
    if any(r.get("oom") for r in results):
        return base | {"step_time_s": None, "tokens_per_s": None, "oom": True,
                       "data_wait_fraction": None, "steps": 0}  # fmt: skip
    timed = [r["step_times_s"] for r in results if r.get("step_times_s")]
    if not timed:
        raise EntrypointError(f"{job.id}: no rank timed a step at world size {world_size}")
    count = min(len(t) for t in timed)
    times = sorted(max(t[i] for t in timed) for i in range(count))
    median = statistics.median(times)
    waits = [r["data_wait_fraction"] for r in ranks if r["data_wait_fraction"] is not None]
    tokens = _tokens_per_step(job, world_size)
    return base | {
        "samples_per_step": _samples_per_step(results, job),
        "step_time_s": {
            "median": median,
            "p10": _quantile(times, 0.1),
            "p90": _quantile(times, 0.9),
            "cv": statistics.pstdev(times) / statistics.fmean(times) if times else None,
        },
        "tokens_per_s": tokens / median if tokens and median > 0 else None,
        "oom": False,
        "data_wait_fraction": max(waits) if waits else None,
        "steps": count,
    }


def _rank_entry(result: dict[str, Any]) -> dict[str, Any]:
    measured = result.get("measured_s") or 0.0
    wait = result.get("data_wait_s")
    fraction = min(1.0, wait / measured) if measured > 0 and wait is not None else None
    return {
        "rank": result.get("rank"),
        "memory": result.get("memory") or {},
        "steps": result.get("steps"),
        "data_wait_fraction": fraction,
    }


def _peak(memory: dict[str, Any]) -> int | None:
    value = memory.get("reserved_bytes") or memory.get("rss_bytes")
    return int(value) if value is not None else None


def _quantile(ordered: list[float], q: float) -> float:
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _samples_per_step(results: list[dict[str, Any]], job: Job) -> float | None:
    """Samples one rank takes per optimizer step: what the ranks counted at their model's
    forward when they agree, else the micro-batch x accumulation the job states (its per-rank
    batch, the same at any world size), else unknown."""
    counted = {r.get("samples_per_step") for r in results}
    if len(counted) == 1 and isinstance(value := counted.pop(), int | float) and value > 0:
        return float(value)
    micro = job.training.micro_batch_size
    return float(micro * (job.training.grad_accum_steps or 1)) if micro else None


def _tokens_per_step(job: Job, world_size: int) -> int | None:
    """Tokens one optimizer step consumes across ``world_size`` ranks, when the job says."""
    micro, seq = job.training.micro_batch_size, job.model.seq_len
    if micro is None or seq is None:
        return None
    return micro * seq * (job.training.grad_accum_steps or 1) * world_size
