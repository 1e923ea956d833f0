"""In-process probe hooks for entrypoint mode (DESIGN §8): count and time a job's own steps.

``bootstrap/sitecustomize.py`` loads this module when ``TRAINLINT_PROBE_DIR`` is set and calls
``install()``; ``trainlint.probe.step()`` is this module's ``step`` (a no-op when not probing).
Nothing here imports torch at module level, and ``install`` only watches for the job's own
``import torch``: the hooks go in once torch has finished importing.

Why an import hook: a ``sys.meta_path`` finder wraps the loader of the top-level ``torch``
module, and its ``exec_module`` registers the hooks right after ``torch/__init__`` has run —
so ``torch.optim`` and ``torch.utils.data`` are complete, nothing is imported early (a job that
never imports torch pays nothing), and it works however torch is reached (``import torch``,
``from torch import nn``, a framework importing it). Wrapping ``torch.optim.Optimizer`` on first
import would see the class half-initialised, and subclasses defined before the wrap would miss
it; the global ``register_optimizer_step_post_hook`` sees every ``torch.optim.Optimizer``.

Step sources, highest first: ``TRAINLINT_PROBE_STEP_REGEX`` (when set, only matching log lines
count), ``step()`` calls (once the loop calls it, optimizer hooks are ignored), the global
optimizer step post-hook. The regex is matched in each rank on the lines it writes to
``sys.stdout``/``sys.stderr`` (the parent cannot timestamp lines or stop a rank): precision is
the logging interval — with a group capturing the step number (``r"step (\\d+)"``) an interval
over k steps counts as k steps of equal length; a rank that never prints a matching line is
not stopped by it (its peers' exit ends it).

A step boundary is a tick (after ``cuda.synchronize()`` when CUDA is initialised). Measured
steps are ticks ``warmup + 1 .. warmup + steps`` timed from tick ``warmup`` (``warmup`` is at
least 1: the first step carries start-up and has no earlier boundary). Data wait is the time
spent in DataLoader iterators' ``__next__`` between those ticks. Samples per step are counted
during the warm-up steps (none of them is timed): the leading dimension of the first tensor
given to each outermost ``nn.Module`` call (positional, then keyword arguments; a module called
while none is running: the model, or its DDP/FSDP wrapper), summed over the steps up to tick
``warmup - 1`` (tick 1 when ``warmup`` is 1); the global module hooks that count them are then
removed, so the timed steps run without them (and a ``torch.compile`` recompile their removal
causes falls in the last warm-up step). This tells whether the per-rank batch is the same at
each world size (``probe.scaling``). After the last measured tick the rank writes
``<TRAINLINT_PROBE_DIR>/rank<RANK>.json`` and stops: flush, destroy the process group if
initialised, ``os._exit(0)``. Every rank runs the same steps, so all ranks stop after
the same step and none waits in a collective for a peer that left. ``os._exit`` rather than
``sys.exit``: a ``SystemExit`` raised inside an optimizer hook unwinds through the user's loop,
where ``except BaseException``/``finally`` blocks and ``atexit`` handlers would save
checkpoints, run evaluation, upload logs or join DataLoader workers — slow, side-effecting and
able to hang; the probe has already written what it needs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from importlib.abc import Loader
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

ENV_DIR = "TRAINLINT_PROBE_DIR"
ENV_WARMUP = "TRAINLINT_PROBE_WARMUP"
ENV_STEPS = "TRAINLINT_PROBE_STEPS"
ENV_REGEX = "TRAINLINT_PROBE_STEP_REGEX"
_PRIORITY = {"optimizer": 0, "api": 1, "log": 2}


class _State:
    def __init__(self, out: Path, warmup: int, steps: int, regex: str | None) -> None:
        self.out, self.warmup, self.steps = out, max(1, warmup), max(1, steps)
        self.regex = re.compile(regex) if regex else None
        self.source: str | None = "log" if regex else None
        self.count = 0
        self.last: float | None = None
        self.start: tuple[float, float] | None = None  # (time, data wait) at tick ``warmup``
        self.times: list[float] = []
        self.data_wait = 0.0
        self.torch: Any = None
        self.samples = 0  # leading dims given to outermost module calls, up to the start
        self.depth = 0  # module calls in progress
        self.samples_per_step: float | None = None
        self.counting: list[Any] = []  # the global module hooks' handles while they count

    def tick(self, source: str, number: int | None = None) -> None:
        if self.source is not None and _PRIORITY[source] < _PRIORITY[self.source]:
            return
        if source != self.source:  # a stronger source takes over: start counting again
            self.source, self.count, self.last, self.start, self.times = source, 0, None, None, []
        now = self._now()
        advance = 1 if number is None or self.last is None else max(1, number - self.count)
        if number is not None and self.last is None:
            self.count = number - 1
        if self.last is not None and self.start is not None:
            self.times += [(now - self.last) / advance] * advance
        self.count += advance
        self.last = now
        if self.counting and self.count >= max(1, self.warmup - 1):
            self.stop_counting()  # a step before the timed ones: a recompile lands untimed
        if self.start is None and self.count >= self.warmup:
            self.start = (now, self.data_wait)
        if len(self.times) >= self.steps:
            self.finish(now)

    def stop_counting(self) -> None:
        """Samples per warm-up step, then the counting hooks go: the timed steps run bare."""
        for handle in self.counting:
            handle.remove()
        if self.counting and self.samples > 0:
            self.samples_per_step = self.samples / self.count
        self.counting = []

    def _now(self) -> float:
        cuda = getattr(self.torch, "cuda", None)
        if cuda is not None and cuda.is_initialized():
            cuda.synchronize()
        return time.perf_counter()

    def finish(self, now: float) -> None:
        start, wait = self.start or (now, self.data_wait)
        self.write(
            {
                "step_times_s": self.times,
                "measured_s": now - start,
                "data_wait_s": self.data_wait - wait,
                "samples_per_step": self.samples_per_step,
                "oom": False,
            }
        )
        _stop(self.torch)

    def write(self, body: dict[str, Any]) -> None:
        rank = int(os.environ.get("RANK", "0"))
        result = {
            "rank": rank,
            "local_rank": int(os.environ.get("LOCAL_RANK", "0")),
            "world_size": int(os.environ.get("WORLD_SIZE", "1")),
            "source": self.source,
            "warmup": self.warmup,
            "steps": len(body.get("step_times_s", [])),
            **body,
            "memory": _memory(self.torch),
        }
        path = self.out / f"rank{rank}.json"
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps(result), encoding="utf-8")
        os.replace(partial, path)


_state: _State | None = None


def step() -> None:
    """Mark the end of one training step. For loops whose optimizer is not a
    ``torch.optim.Optimizer`` (or that step several optimizers per iteration): call it once
    per step. A no-op unless ``trainlint probe --mode entrypoint`` runs the job."""
    if _state is not None:
        _state.tick("api")


def install() -> bool:
    """Start probing this process if ``TRAINLINT_PROBE_DIR`` is set; returns whether it did."""
    global _state
    out = os.environ.get(ENV_DIR)
    if not out or _state is not None:
        return _state is not None
    warmup = int(os.environ.get(ENV_WARMUP, "3"))
    steps = int(os.environ.get(ENV_STEPS, "10"))
    _state = _State(Path(out), warmup, steps, os.environ.get(ENV_REGEX) or None)
    if _state.regex is not None:
        sys.stdout = _LineTap(sys.stdout, _state)
        sys.stderr = _LineTap(sys.stderr, _state)
    sys.excepthook = _oom_hook(sys.excepthook)
    if "torch" in sys.modules:
        _on_torch(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _TorchFinder())
    return True


def _on_torch(torch: ModuleType) -> None:
    """Register the global optimizer hook and time DataLoader iterators' ``__next__``."""
    if _state is None or _state.torch is not None:
        return
    _state.torch = torch
    import torch.optim.optimizer as optimizer
    import torch.utils.data.dataloader as dataloader

    state = _state
    optimizer.register_optimizer_step_post_hook(lambda *_: state.tick("optimizer"))
    base = getattr(dataloader, "_BaseDataLoaderIter", None)
    if base is not None:  # patch the iterator class: no proxy object the loop could notice
        original = base.__next__

        def timed_next(self: Any) -> Any:
            began = time.perf_counter()
            try:
                return original(self)
            finally:
                state.data_wait += time.perf_counter() - began

        base.__next__ = timed_next
    _count_samples(torch, state)


def _count_samples(torch: Any, state: _State) -> None:
    """Global forward hooks that add the batch size of each outermost module call to
    ``state.samples`` until ``state.stop_counting``."""
    from torch.nn.modules import module

    def before(*_: Any) -> None:
        state.depth += 1

    def after(_: Any, args: Any, kwargs: Any, output: Any) -> None:
        state.depth = max(0, state.depth - 1)
        if state.depth == 0:  # the outermost call returned: its inputs are the batch
            state.samples += _batch_size(torch, [*args, kwargs])

    state.counting = [
        module.register_module_forward_pre_hook(before),
        module.register_module_forward_hook(after, with_kwargs=True, always_call=True),
    ]


def _batch_size(torch: Any, args: Any) -> int:
    """The leading dimension of the first tensor in a module call's positional arguments
    (nested in lists, tuples or dicts), 0 when there is none."""
    pending = list(args)
    while pending:
        item = pending.pop(0)
        if isinstance(item, torch.Tensor):
            return int(item.shape[0]) if item.dim() > 0 else 0
        if isinstance(item, (list, tuple)):
            pending[:0] = list(item)
        elif isinstance(item, dict):
            pending[:0] = list(item.values())
    return 0


class _TorchFinder:
    """A ``sys.meta_path`` finder that only wraps the loader of the top-level ``torch``."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if isinstance(spec, ModuleSpec) and spec.loader is not None:
                spec.loader = _TorchLoader(spec.loader)
                return spec
        return None


class _TorchLoader(Loader):
    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _on_torch(module)


class _LineTap:
    """A text stream that passes writes through and ticks on each complete matching line."""

    def __init__(self, stream: Any, state: _State) -> None:
        self._stream, self._state, self._pending = stream, state, ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def write(self, text: str) -> int:
        written: int = self._stream.write(text)
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            match = self._state.regex.search(line) if self._state.regex else None
            if match is not None:
                self._stream.flush()
                digits = next((g for g in match.groups() if g and g.isdigit()), None)
                self._state.tick("log", int(digits) if digits else None)
        return written


def _oom_hook(previous: Any) -> Any:
    def hook(kind: type[BaseException], error: BaseException, trace: Any) -> None:
        if _state is not None and (
            kind.__name__ == "OutOfMemoryError" or "out of memory" in str(error).lower()
        ):
            _state.write({"oom": True, "step_times_s": []})
        previous(kind, error, trace)

    return hook


def _memory(torch: Any) -> dict[str, int | None]:
    """The rank's peak memory: allocator peaks on CUDA, the process's peak RSS always."""
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    found: dict[str, int | None] = {
        "rss_bytes": rss if sys.platform == "darwin" else rss * 1024,
        "allocated_bytes": None,
        "reserved_bytes": None,
    }
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_initialized():
        found["allocated_bytes"] = int(cuda.max_memory_allocated())
        found["reserved_bytes"] = int(cuda.max_memory_reserved())
    return found


def _stop(torch: Any) -> None:
    """End this rank now (see the module docstring for why ``os._exit``)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    dist = getattr(torch, "distributed", None)
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    except Exception:
        pass
    os._exit(0)
