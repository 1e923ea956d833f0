"""Both cores for big runs: parse files and evaluate jobs in worker processes (issue 9).

A check has two stages that cost time per item and share nothing between items: reading
(parsing) each discovered file, and evaluating each assembled job's input with the Rego
engine. Between them, assembly needs every document at once, so it stays in the parent:
the workers only fill the workspace's document cache, which assembly then reads.

Workers are forked (POSIX ``fork``): they inherit the imported modules, the pack and the
jobs, so nothing but file paths, job indices and results crosses a pipe. Where ``fork`` is
not available (Windows, and macOS where it is unsafe) a run stays in one process; so does a
small run (below ``THRESHOLD`` files or jobs, a pool costs more than it saves) and a remote
engine (OPA: the server does the work, and one connection keeps requests in order).

Results come back in submission order (``Executor.map``) and the caller sorts the findings,
so the output is byte-identical to a one-process run.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from trainlint.errors import PolicyError

if TYPE_CHECKING:
    from trainlint.conftest_compat import ConftestPlan
    from trainlint.engine import Engine, Findings
    from trainlint.findings import Finding
    from trainlint.job import Job
    from trainlint.packs import Pack
    from trainlint.read import Workspace

T = TypeVar("T")
R = TypeVar("R")

THRESHOLD = 200
"""Files (parse stage) or jobs (evaluation stage) from which a run uses worker processes."""

MAX_WORKERS = 2
"""Default ceiling: a pre-commit hook should not take every core of a big machine."""


def worker_count(items: int, setting: int | None = None) -> int:
    """How many processes a stage of ``items`` uses: ``setting`` (``--jobs``) when given,
    else 1 below ``THRESHOLD`` and ``min(MAX_WORKERS, cores)`` above; never more than the
    items, and 1 where workers cannot be forked."""
    if setting is None:
        wanted = min(MAX_WORKERS, os.cpu_count() or 1) if items >= THRESHOLD else 1
    else:
        wanted = setting
    wanted = max(1, min(wanted, items))
    if wanted == 1:
        return 1  # a small run never imports multiprocessing (~10 ms of a one-file check)
    import multiprocessing

    return wanted if "fork" in multiprocessing.get_all_start_methods() else 1


def _map(
    workers: int,
    initializer: Callable[..., None],
    state: object,
    function: Callable[[T], R],
    items: Sequence[T],
) -> list[R]:
    """``function`` over ``items`` in forked workers set up by ``initializer(state)``, results
    in ``items`` order. Workers ignore Ctrl-C: the parent takes it, drops the work not yet
    started and re-raises, so an interrupted run still exits 130 without worker tracebacks."""
    import multiprocessing  # both imports cost a small run time
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_ignoring_interrupts, initargs=(initializer, state)
    )
    try:
        results = list(pool.map(function, items, chunksize=_chunksize(len(items), workers)))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results


def _ignoring_interrupts(initializer: Callable[[Any], None], state: object) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    initializer(state)


def _chunksize(items: int, workers: int) -> int:
    """Few round trips, yet small enough chunks that one slow item does not idle a core."""
    return max(1, items // (workers * 8))


# Parse stage -------------------------------------------------------------------------------

_forced: dict[Path, str | None] = {}


def _init_reader(forced: dict[Path, str | None]) -> None:
    global _forced
    _forced = forced


def _read(path: Path) -> Any:
    from trainlint.read import read_file

    return read_file(path, _forced[path])


def read_documents(paths: Sequence[Path], space: Workspace, workers: int) -> None:
    """Parse ``paths`` in ``workers`` processes into ``space.documents`` (the cache that
    ``Workspace.load`` fills on first use), exactly as ``space.load`` would have."""
    from trainlint.discover import resolved

    pending: dict[Path, Path] = {}  # resolved key → the path as discovered (first one wins)
    for path in paths:
        key = resolved(path)
        if key not in space.documents and key not in space.overlay and key not in space.stubs:
            # (a buffer, or a document the cache holds: ``space.load`` reads it)
            pending.setdefault(key, path)
    if workers <= 1 or not pending:
        return
    from trainlint.sources import all_sources

    all_sources()  # the format modules, imported once before the fork rather than per worker
    targets = list(pending.values())
    forced = {path: space.config.forced_format(path) for path in targets}
    documents = _map(workers, _init_reader, forced, _read, targets)
    for key, document in zip(pending, documents, strict=True):
        space.documents[key] = document


# Evaluation stage --------------------------------------------------------------------------


@dataclass
class Evaluation:
    """One job's outcome: the rule packages' raw findings and its conftest findings, or the
    PolicyError message that stopped it."""

    results: Findings = field(default_factory=dict)
    conftest: list[Finding] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class EvaluationSpec:
    """What evaluates a job wherever it runs: a worker compiles its own engine from the
    engine's name and the pack; the conftest namespaces chosen run too."""

    engine_name: str
    pack: Pack
    namespaces: Sequence[str] = ()
    all_namespaces: bool = False


@dataclass
class _Evaluator:
    spec: EvaluationSpec
    jobs: Sequence[Job]
    engine: Engine | None = None
    conftest: ConftestPlan | None = None

    def __call__(self, index: int) -> Evaluation:
        from trainlint.conftest_compat import ConftestPlan
        from trainlint.engine import create_engine

        spec = self.spec
        if self.engine is None:
            self.engine = create_engine(spec.engine_name, spec.pack)
        if self.conftest is None:
            self.conftest = ConftestPlan.of(spec.pack, spec.namespaces, spec.all_namespaces)
        job = self.jobs[index]
        try:
            results = self.engine.evaluate(job.as_input())
            conftest = self.conftest.findings(self.engine, job)
        except PolicyError as exc:
            return Evaluation(error=str(exc))
        return Evaluation(results, conftest)


_evaluator: _Evaluator | None = None


def _init_evaluator(evaluator: _Evaluator) -> None:
    """Compile the engine once per worker (a forked copy of a compiled engine is not
    something the Rego libraries promise to support)."""
    global _evaluator
    _evaluator = evaluator
    from trainlint.engine import create_engine

    evaluator.engine = create_engine(evaluator.spec.engine_name, evaluator.spec.pack)


def _evaluate(index: int) -> Evaluation:
    assert _evaluator is not None, "worker not initialised"
    return _evaluator(index)


def evaluate_jobs(
    spec: EvaluationSpec, jobs: Sequence[Job], workers: int, engine: Engine | None = None
) -> list[Evaluation]:
    """Every job's evaluation, in ``jobs`` order: here (with ``engine`` when given, compiled
    once) when ``workers`` is 1, else in ``workers`` forked processes that each compile their
    own."""
    evaluator = _Evaluator(spec, jobs, engine)
    if workers <= 1:
        return [evaluator(index) for index in range(len(jobs))]
    evaluator.engine = None  # each worker compiles its own
    return _map(workers, _init_evaluator, evaluator, _evaluate, range(len(jobs)))
