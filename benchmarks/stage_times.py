"""Where the wall time of one `trainlint check DIR` goes, stage by stage, as the CLI runs it.

Run:  python benchmarks/stage_times.py DIR [--jobs 2] [--repeat 3]

The stages of ``lint.check`` in order, in one process with the program's collector settings,
with the worker processes ``check`` would use (``--jobs``): importing trainlint, loading the
repo config and the policy, compiling the engine, discovery, parsing (in the workers), assembly,
measurements, estimates, evaluation (in the workers), and the rest of ``check`` (suppressions,
governance rules, findings, sorting), which is timed as the remainder of a whole second check.
Each figure is the fastest of --repeat runs (imports and policy: the first run only, as later
ones reuse what the first loaded). Results are in
docs/benchmarks.md ("Where the time goes").
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from trainlint.config import RepoConfig
    from trainlint.packs import Pack

T = TypeVar("T")


def fastest(action: Callable[[], T], repeat: int) -> tuple[float, T]:
    """(fastest seconds, result of the last run)."""
    times, results = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        results.append(action())
        times.append(time.perf_counter() - start)
    return min(times), results[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (1: none)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    from trainlint import engine as engines
    from trainlint import lint, parallel
    from trainlint.assemble import assemble
    from trainlint.cli import collect_never
    from trainlint.config import find_config
    from trainlint.discover import discover
    from trainlint.estimate import EstimateParams, estimate
    from trainlint.measurement import attach_measurements, measurement_root
    from trainlint.policy import load_policy
    from trainlint.read import Workspace

    imports = time.perf_counter() - start
    collect_never()
    root, repeat, workers = args.root, args.repeat, args.jobs
    rows: list[tuple[str, float]] = [("import trainlint (first run)", imports)]

    def timed(label: str, action: Callable[[], T]) -> T:
        seconds, result = fastest(action, repeat)
        rows.append((label, seconds))
        return result

    def policy() -> tuple[RepoConfig, Pack]:
        config = find_config(root)
        return config, load_policy(config).pack

    seconds, (config, pack) = fastest(policy, 1)  # the builtin pack is read once per process
    rows.append(("repo config + policy (first run)", seconds))
    engine = timed("compile the pack (regorus)", lambda: engines.create_engine("regorus", pack))
    params = EstimateParams.of(pack.data, pack.name)
    found = timed("discover", lambda: discover([root]))

    def parse() -> Workspace:
        space = Workspace(config=config)
        parallel.read_documents(found, space, workers)
        return space

    space = timed(f"parse ({workers} worker{'s' if workers > 1 else ''})", parse)
    jobs = timed("assemble", lambda: assemble(found, space))
    timed("measurements", lambda: attach_measurements(jobs, measurement_root(root)))

    def estimates() -> None:
        for job in jobs:
            job.estimates = estimate(job, params)

    timed("estimates", estimates)
    timed(
        f"evaluate ({workers} worker{'s' if workers > 1 else ''})",
        lambda: parallel.evaluate_jobs(
            parallel.EvaluationSpec("regorus", pack), jobs, workers, engine
        ),
    )
    whole, _ = fastest(lambda: lint.check([root], lint.CheckOptions(workers=workers)), repeat)
    staged = sum(seconds for label, seconds in rows[2:])  # check loads the policy again
    rows.append(("the rest of check (suppressions, findings)", max(0.0, whole - staged)))

    print(f"{len(found)} files, {len(jobs)} jobs, {workers} worker(s), fastest of {repeat}\n")
    print("| stage | s |\n|---|---|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.3f} |")
    print(f"| **check without imports** | **{whole:.3f}** |")


if __name__ == "__main__":
    main()
